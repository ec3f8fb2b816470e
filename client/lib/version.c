/* The library's version (tickplane.h: tp_version). */
#include "tickplane/tickplane.h"
#include "tp_version.h"

const char *tp_version(void)
{
    return TP_VERSION " (commit " TP_COMMIT ")";
}
