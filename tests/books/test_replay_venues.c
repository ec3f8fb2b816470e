/*
 * tickplane-replay's venue tables (tools/replay/replay_venue.h): each listed venue is whole and
 * matches the data plane's venue of its name, and a pcap of no --venue is told by its first
 * payload in the stated order (MoldUDP64 is ITCH's, anything else MDP3's, EOBI only by name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "itch50.h"
#include "moldudp64.h"
#include "net_parse.h"
#include "replay_venue.h"
#include "tp_venue.h"

static void test_tables_whole(void **state)
{
    (void)state;
    unsigned n = 0;
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++, n++) {
        const struct replay_venue *r = *v;
        const struct tp_venue_ops *ops = tp_venue_find(r->name);
        assert_non_null(ops);
        /* print_books finds an instrument's table by the registry venue its feed gives it. */
        assert_int_equal(r->registry_venue, ops->registry_venue);
        assert_ptr_equal(replay_venue_of_instrument(ops->registry_venue), r);
        assert_ptr_equal(replay_venue_find(r->name), r);
        assert_non_null(r->open);
        assert_non_null(r->set_sink);
        assert_non_null(r->close);
        assert_non_null(r->packet);
        assert_non_null(r->print_counters);
    }
    assert_int_equal(n, REPLAY_VENUES);
    assert_null(replay_venue_find("fix"));
    /* BinaryFILE is ITCH's format, read through its table. */
    assert_ptr_equal(replay_venue_of_file(), &replay_venue_itch);
}

/* The usage text's list: every table's name, in the list's order. */
static void test_names(void **state)
{
    (void)state;
    char want[128] = "";
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++) {
        if (v != replay_venues)
            strcat(want, "|");
        strcat(want, (*v)->name);
    }
    assert_string_equal(replay_venue_names(), want);
    assert_non_null(strstr(replay_venue_names(), "itch"));
    assert_non_null(strstr(replay_venue_names(), "mdp3"));
    assert_non_null(strstr(replay_venue_names(), "eobi"));
}

static struct tp_udp_view view(const uint8_t *payload, uint16_t len)
{
    return (struct tp_udp_view){.payload = payload, .payload_len = len};
}

static void test_detection_order(void **state)
{
    (void)state;
    uint8_t pkt[64];
    struct tp_mold_writer w;
    struct tp_itch_system_event ev = {.event_code = 'O'};
    const uint16_t len = (uint16_t)tp_itch_message_length(TP_ITCH_SYSTEM_EVENT);

    /* A MoldUDP64 packet of a valid ITCH message, and a heartbeat (no message): ITCH's. */
    assert_int_equal(tp_mold_writer_init(&w, pkt, sizeof(pkt), "SESSION001", 1), 0);
    uint8_t *msg = tp_mold_writer_reserve(&w, len);
    assert_non_null(msg);
    assert_int_equal(tp_itch_system_event_encode(msg, len, &ev), len);
    struct tp_udp_view u = view(pkt, (uint16_t)w.len);
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_itch);
    int hb = tp_mold_encode_control(pkt, sizeof(pkt), "SESSION001", 2, 0);
    u = view(pkt, (uint16_t)hb);
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_itch);

    /* Blocks that do not fill the packet exactly, or a message ITCH refuses: MDP3's. */
    assert_int_equal(tp_mold_writer_init(&w, pkt, sizeof(pkt), "SESSION001", 1), 0);
    assert_non_null(msg = tp_mold_writer_reserve(&w, len));
    tp_itch_system_event_encode(msg, len, &ev);
    u = view(pkt, (uint16_t)(w.len - 1));
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_mdp3);
    msg[0] = 'S' + 100; /* no ITCH type */
    u = view(pkt, (uint16_t)w.len);
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_mdp3);
    /* Too short for a MoldUDP64 header (an MDP3 packet header is 12 bytes), or empty. */
    static const uint8_t mdp3[12] = {1, 0, 0, 0};
    u = view(mdp3, sizeof(mdp3));
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_mdp3);
    u = view(mdp3, 0);
    assert_ptr_equal(replay_venue_detect(&u), &replay_venue_mdp3);
    /* EOBI has no test of its own: only --venue eobi takes it. */
    assert_null(replay_venue_eobi.looks_like);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_whole),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_detection_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
