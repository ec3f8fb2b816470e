/* tp_format_price: the one way tickplane's tools and strategies print a price9 (tickplane.h). */
#include <inttypes.h>
#include <stdio.h>

#include "tickplane/tickplane.h"

#define PRICE9_DIGITS 9u
#define MIN_DECIMALS  2u

/* Decimals a price9 magnitude needs: 9 minus its fraction's trailing zeros. */
static unsigned decimals_of(uint64_t mag)
{
    uint64_t frac = mag % 1000000000u;
    if (frac == 0)
        return 0;
    unsigned d = PRICE9_DIGITS;
    while (frac % 10u == 0) {
        frac /= 10u;
        d--;
    }
    return d;
}

int tp_format_price(int64_t price9, int64_t tick9, char *out, size_t size)
{
    if (price9 == TP_PRICE_NULL)
        return snprintf(out, size, "-");
    /* Unsigned magnitudes, so that the most negative price9 prints too. */
    uint64_t mag = price9 < 0 ? (uint64_t)0 - (uint64_t)price9 : (uint64_t)price9;
    unsigned d = tick9 > 0 && tick9 != TP_PRICE_NULL ? decimals_of((uint64_t)tick9) : 0;
    if (d < MIN_DECIMALS)
        d = MIN_DECIMALS;
    if (decimals_of(mag) > d)
        d = decimals_of(mag); /* off the tick: never hide digits the price has */
    uint64_t frac = mag % 1000000000u;
    for (unsigned k = d; k < PRICE9_DIGITS; k++)
        frac /= 10u;
    return snprintf(out, size, "%s%" PRIu64 ".%0*" PRIu64, price9 < 0 ? "-" : "", mag / 1000000000u,
                    (int)d, frac);
}
