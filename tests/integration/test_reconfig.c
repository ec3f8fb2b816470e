/*
 * Unit tests of the data lcore's side of live reload (dataplane/daemon/reconfig.h), without EAL:
 * real channels, classifier, IGMP host, books, publisher and bus (in /dev/shm), commands applied
 * directly as the lcore applies what it dequeues.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus_setup.h"
#include "classifier.h"
#include "config.h"
#include "host.h"
#include "publisher.h"
#include "reconfig.h"
#include "tp_books.h"
#include "tp_instrument_filter.h"
#include "tp_instruments.h"
#include "util/histogram.h"

#define GROUP_A  0xe9360c6fu /* 233.54.12.111 */
#define GROUP_B  0xe931c46fu /* 233.49.196.111 */
#define UDP_PORT 26477
#define LOCAL_IP 0x0a000002u
#define SLOT     3

struct fixture {
    struct tp_config cfg;
    struct tp_bus_writer *bus;
    struct tp_instruments *registry;
    struct tp_books *books;
    struct tp_publisher *publisher;
    struct tp_histogram latency;
    struct tp_host *host;
    struct tp_instrument_filter filter;
    struct tp_dp_set set;
    unsigned released; /* handles given back through io.release */
    void *last_released;
};

static void *zalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (p != NULL)
        memset(p, 0, (n + 63) & ~(size_t)63);
    return p;
}

static uint64_t clock_zero(void)
{
    return 1;
}

static void view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx)
{
    (void)ctx;
    (void)handle;
    *payload = NULL;
    *len = 0;
    *rx = 0;
}

static void release(void *ctx, void *handle)
{
    struct fixture *f = ctx;
    f->released++;
    f->last_released = handle;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(f->cfg.name, sizeof(f->cfg.name), "tprc%d", (int)getpid());
    f->cfg.bus.ring_bytes = 1u << 20;
    f->cfg.bus.state_depth = 10;
    f->cfg.instruments.capacity = 64;
    char err[256];
    f->bus = tp_daemon_bus_open(&f->cfg, 64, err, sizeof(err));
    assert_non_null(f->bus);
    struct tp_instruments_params ip = {.capacity = 64, .itch_venues = 2};
    struct tp_books_params bp = {
        .instruments = 64, .max_orders = 1024, .levels_per_side = 16, .mbp_depth = 10};
    f->registry = zalloc(tp_instruments_memsize(&ip));
    f->books = zalloc(tp_books_memsize(&bp));
    assert_int_equal(tp_instruments_init(f->registry, &ip), 0);
    assert_int_equal(tp_books_init(f->books, &bp), 0);
    struct tp_publisher_params pp = {.bus = f->bus,
                                     .books = f->books,
                                     .registry = f->registry,
                                     .instruments = 64,
                                     .depth = 10,
                                     .latency = &f->latency,
                                     .clock = clock_zero};
    f->publisher = zalloc(tp_publisher_memsize(&pp));
    assert_int_equal(tp_publisher_init(f->publisher, &pp), 0);
    struct tp_classifier_params cp = {.max_flows = TP_DP_MAX_CHANNELS * TP_ROLES};
    f->set.classifier = zalloc(tp_classifier_memsize(&cp));
    assert_int_equal(tp_classifier_init(f->set.classifier, &cp), 0);
    f->host = zalloc(tp_host_memsize());
    struct tp_host_params hp = {.ip = LOCAL_IP, .vlan = TP_HOST_NO_VLAN, .tsc_hz = 1000000000};
    assert_int_equal(tp_host_init(f->host, &hp), 0);
    f->set.hosts[0] = f->host;
    tp_instrument_filter_init(&f->filter);
    f->set.filter = &f->filter;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
        free(f->set.channels[s]);
    tp_daemon_bus_close(f->bus, true);
    free(f->registry);
    free(f->books);
    free(f->publisher);
    free(f->set.classifier);
    free(f->host);
    free(f);
    return 0;
}

/* A prepared ITCH channel on lines A/B (GROUP_A, GROUP_B) with a re-request server. */
static struct tp_dp_attach itch_attach(struct fixture *f, unsigned slot, uint16_t itch_slot)
{
    struct tp_channel_params p = {
        .protocol = TP_CHANNEL_ITCH,
        .index = slot,
        .held_max = 64,
        .gap_wait_tsc = UINT64_MAX / 4, /* a gap stays open: its packets stay held */
        .start_seq = 1,
        .registry = f->registry,
        .books = f->books,
        .filter = f->set.filter,
        .itch_slot = itch_slot,
        .publisher = f->publisher,
        .io = {.ctx = f, .view = view, .release = release},
    };
    struct tp_dp_attach a = {.channel = zalloc(tp_channel_memsize(&p))};
    assert_int_equal(tp_channel_init(a.channel, &p), 0);
    a.slot.lines[TP_ROLE_INCR_A] = (struct tp_dp_line){
        .present = true, .group = GROUP_A, .udp = UDP_PORT, .vlan = TP_CLASSIFY_ANY_VLAN};
    a.slot.lines[TP_ROLE_INCR_B] = (struct tp_dp_line){
        .present = true, .group = GROUP_B, .udp = UDP_PORT, .vlan = TP_CLASSIFY_ANY_VLAN};
    a.slot.rerequest = (struct tp_dp_rerequest_target){
        .server_ip = 0x0a000001u, .server_port = 9000, .local_ip = LOCAL_IP};
    return a;
}

static uint32_t lookup(struct fixture *f, uint32_t group, uint16_t port)
{
    struct tp_flow_key k = {.dst_ip = group, .dst_port = port, .vlan = TP_CLASSIFY_ANY_VLAN};
    return tp_classifier_lookup(f->set.classifier, &k);
}

static void be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
    be16(p, (uint16_t)(v >> 16));
    be16(p + 2, (uint16_t)v);
}

static void be64(uint8_t *p, uint64_t v)
{
    be32(p, (uint32_t)(v >> 32));
    be32(p + 4, (uint32_t)v);
}

/* A MoldUDP64 packet of one ITCH message at `seq`; returns its length. */
static uint16_t mold(uint8_t *buf, uint64_t seq, const uint8_t *msg, uint16_t len)
{
    memcpy(buf, "SESSION001", 10);
    be64(buf + 10, seq);
    be16(buf + 18, 1);
    be16(buf + 20, len);
    memcpy(buf + 22, msg, len);
    return (uint16_t)(22 + len);
}

/* Stock directory (R) for "AAPL" at locate 1, then an add (A): a bid 100 @ 190.0000. */
static void feed_instrument(struct tp_channel *ch)
{
    uint8_t r[39] = {'R'}, a[36] = {'A'}, pkt[128];
    be16(r + 1, 1);
    memcpy(r + 11, "AAPL    ", 8);
    r[19] = 'Q';
    r[20] = 'N';
    be32(r + 21, 100);
    r[25] = 'N';
    r[26] = 'C';
    memcpy(r + 27, "Z ", 2);
    r[29] = 'P';
    r[30] = 'N';
    r[31] = ' ';
    r[32] = '1';
    r[33] = 'N';
    be16(a + 1, 1);
    be64(a + 11, 77);
    a[19] = 'B';
    be32(a + 20, 100);
    memcpy(a + 24, "AAPL    ", 8);
    be32(a + 32, 1900000);
    assert_false(tp_channel_packet(ch, TP_ROLE_INCR_A, pkt, mold(pkt, 1, r, sizeof(r)), NULL, 1));
    assert_false(tp_channel_packet(ch, TP_ROLE_INCR_A, pkt, mold(pkt, 2, a, sizeof(a)), NULL, 2));
}

/* The state table's view of AAPL: its bid levels and whether it is flagged stale. */
static void book_state(struct fixture *f, size_t *bids, int *stale)
{
    const char *names[TP_TPOUT_VENUES] = {"CME", "NASDAQ", "EUREX"};
    char err[128];
    json_t *b = tp_daemon_bus_book(f->bus, names, "NASDAQ", "AAPL", 10, err, sizeof(err));
    assert_non_null(b);
    *bids = json_array_size(json_object_get(b, "bids"));
    *stale = json_is_true(json_object_get(b, "stale"));
    json_decref(b);
}

static void test_attach_adds_flows_and_joins(void **state)
{
    struct fixture *f = *state;
    struct tp_dp_attach a = itch_attach(f, SLOT, 0);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &a, 1), 0);
    assert_ptr_equal(f->set.channels[SLOT], a.channel);
    assert_int_equal(lookup(f, GROUP_A, UDP_PORT), SLOT * TP_ROLES + TP_ROLE_INCR_A);
    assert_int_equal(lookup(f, GROUP_B, UDP_PORT), SLOT * TP_ROLES + TP_ROLE_INCR_B);
    assert_int_equal(lookup(f, LOCAL_IP, TP_DP_RETRANS_PORT_BASE + SLOT),
                     SLOT * TP_ROLES + TP_ROLE_RETRANS);
    assert_true(tp_host_joined(f->host, GROUP_A));
    assert_true(tp_host_joined(f->host, GROUP_B));
    /* A slot in use is refused. */
    struct tp_dp_attach again = itch_attach(f, SLOT, 1);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &again, 1), -EINVAL);
    free(again.channel);
}

static void test_detach_removes_everything(void **state)
{
    struct fixture *f = *state;
    struct tp_dp_attach a = itch_attach(f, SLOT, 0);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &a, 1), 0);
    feed_instrument(a.channel);
    size_t bids;
    int stale;
    book_state(f, &bids, &stale);
    assert_int_equal(bids, 1);
    assert_false(stale);
    /* Sequence 5 behind a gap (3..4): the channel holds the packet. */
    uint8_t pkt[64], add[36] = {'A'};
    be16(add + 1, 1);
    be64(add + 11, 78);
    add[19] = 'S';
    be32(add + 20, 100);
    memcpy(add + 24, "AAPL    ", 8);
    be32(add + 32, 1910000);
    int token;
    assert_true(tp_channel_packet(a.channel, TP_ROLE_INCR_A, pkt, mold(pkt, 5, add, sizeof(add)),
                                  &token, 3));

    assert_ptr_equal(tp_dp_set_detach(&f->set, SLOT, 4), a.channel);
    assert_null(f->set.channels[SLOT]);
    assert_int_equal(f->released, 1);
    assert_ptr_equal(f->last_released, &token);
    assert_int_equal(lookup(f, GROUP_A, UDP_PORT), TP_CLASSIFY_NONE);
    assert_int_equal(lookup(f, GROUP_B, UDP_PORT), TP_CLASSIFY_NONE);
    assert_int_equal(lookup(f, LOCAL_IP, TP_DP_RETRANS_PORT_BASE + SLOT), TP_CLASSIFY_NONE);
    assert_false(tp_host_joined(f->host, GROUP_A));
    assert_false(tp_host_joined(f->host, GROUP_B));
    /* Its instrument: book cleared, flagged stale for consumers. */
    assert_int_equal(f->set.detached_instruments, 1);
    book_state(f, &bids, &stale);
    assert_int_equal(bids, 0);
    assert_true(stale);
    assert_null(tp_dp_set_detach(&f->set, SLOT, 5)); /* nothing left to detach */
    free(a.channel);

    /* The same channel added again (same locate map): fed again, no longer stale. */
    struct tp_dp_attach b = itch_attach(f, SLOT, 0);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &b, 6), 0);
    book_state(f, &bids, &stale);
    assert_false(stale);
    feed_instrument(b.channel);
    book_state(f, &bids, &stale);
    assert_int_equal(bids, 1);
}

static void test_restart_keeps_excluded_stale(void **state)
{
    struct fixture *f = *state;
    struct tp_dp_attach a = itch_attach(f, SLOT, 0);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &a, 1), 0);
    feed_instrument(a.channel);
    assert_ptr_equal(tp_dp_set_detach(&f->set, SLOT, 2), a.channel);
    /* The filter swapped in the same reload now excludes it: not fed, so it stays stale. */
    assert_int_equal(tp_instrument_filter_parse(&f->filter, "exclude:symbol:AAPL"), 0);
    struct tp_dp_attach b = itch_attach(f, SLOT, 0);
    assert_int_equal(tp_dp_set_attach(&f->set, SLOT, &b, 3), 0);
    size_t bids;
    int stale;
    book_state(f, &bids, &stale);
    assert_int_equal(bids, 0);
    assert_true(stale);
    free(a.channel);
}

static void test_shared_group_membership(void **state)
{
    struct fixture *f = *state;
    struct tp_dp_attach a = itch_attach(f, 1, 0), b = itch_attach(f, 2, 1);
    /* Two channels on the same groups (different UDP ports): one membership each. */
    for (unsigned r = TP_ROLE_INCR_A; r <= TP_ROLE_INCR_B; r++)
        b.slot.lines[r].udp = UDP_PORT + 1;
    b.slot.rerequest.server_ip = 0;
    assert_int_equal(tp_dp_set_attach(&f->set, 1, &a, 1), 0);
    assert_int_equal(tp_dp_set_attach(&f->set, 2, &b, 1), 0);
    /* The channel itself leaves line B; detaching must not leave it a second time. */
    tp_dp_set_membership(&f->set, 1, TP_ROLE_INCR_B, false, 2);
    tp_dp_set_membership(&f->set, 1, TP_ROLE_INCR_B, false, 2);
    assert_true(tp_host_joined(f->host, GROUP_B)); /* slot 2 still holds it */
    tp_dp_set_detach(&f->set, 1, 3);
    assert_true(tp_host_joined(f->host, GROUP_A));
    assert_true(tp_host_joined(f->host, GROUP_B));
    assert_int_equal(lookup(f, GROUP_A, UDP_PORT + 1), 2 * TP_ROLES + TP_ROLE_INCR_A);
    tp_dp_set_detach(&f->set, 2, 4);
    assert_false(tp_host_joined(f->host, GROUP_A));
    assert_false(tp_host_joined(f->host, GROUP_B));
    assert_int_equal(f->set.apply_errors, 0);
    free(a.channel);
    free(b.channel);
}

static void test_commands_and_ticket(void **state)
{
    struct fixture *f = *state;
    struct tp_dp_attach a = itch_attach(f, 0, 0);
    struct tp_instrument_filter next;
    tp_instrument_filter_init(&next);
    assert_int_equal(tp_instrument_filter_parse(&next, "include:symbol:AA*"), 0);
    struct tp_dp_cmd gen1[] = {
        {.generation = 1, .op = TP_DP_OP_ATTACH, .slot = 0, .object = &a},
        {.generation = 1, .op = TP_DP_OP_FILTER, .object = &next},
        {.generation = 1, .op = TP_DP_OP_COMMIT},
    };
    /* Without an open ticket nothing applies. */
    tp_dp_set_apply(&f->set, gen1, 3, 1);
    assert_null(f->set.channels[0]);
    assert_false(tp_dp_set_applied(&f->set, 1));

    tp_dp_set_open(&f->set, 1);
    tp_dp_set_apply(&f->set, gen1, 3, 1);
    assert_true(tp_dp_set_applied(&f->set, 1));
    assert_ptr_equal(f->set.channels[0], a.channel);
    assert_memory_equal(&f->filter, &next, sizeof(next));
    assert_int_equal(tp_dp_set_cancel(&f->set, 1), 1); /* too late: it was applied */

    /* Generation 2 times out and is withdrawn: its commands are skipped when they arrive. */
    struct tp_dp_cmd gen2[] = {{.generation = 2, .op = TP_DP_OP_DETACH, .slot = 0},
                               {.generation = 2, .op = TP_DP_OP_COMMIT}};
    tp_dp_set_open(&f->set, 2);
    assert_int_equal(tp_dp_set_cancel(&f->set, 2), 0);
    tp_dp_set_apply(&f->set, gen2, 2, 2);
    assert_ptr_equal(f->set.channels[0], a.channel);
    assert_false(tp_dp_set_applied(&f->set, 2));

    /* Generation 3 is claimed by its first command: cancelling then is refused until done. */
    struct tp_dp_cmd gen3[] = {{.generation = 3, .op = TP_DP_OP_DETACH, .slot = 0},
                               {.generation = 3, .op = TP_DP_OP_COMMIT}};
    tp_dp_set_open(&f->set, 3);
    tp_dp_set_apply(&f->set, gen3, 1, 3);
    assert_null(f->set.channels[0]);
    assert_int_equal(tp_dp_set_cancel(&f->set, 3), -EBUSY);
    tp_dp_set_apply(&f->set, gen2, 2, 3); /* stale commands of a withdrawn generation */
    tp_dp_set_apply(&f->set, gen3 + 1, 1, 3);
    assert_true(tp_dp_set_applied(&f->set, 3));
    assert_int_equal(tp_dp_set_cancel(&f->set, 3), 1);
    assert_int_equal(f->set.apply_errors, 0);
    free(a.channel);
}

/* Two lcores' sets sharing one ticket: one claim starts a reload for both, a withdrawal stops it
 * for both, and it cannot be withdrawn once either began. */
static void test_shared_ticket(void **state)
{
    struct fixture *f = *state;
    static struct tp_dp_set other; /* a second lcore's set: no channels, the same ticket */
    memset(&other, 0, sizeof(other));
    _Atomic uint64_t shared = 0;
    tp_dp_set_share_ticket(&f->set, &shared);
    tp_dp_set_share_ticket(&other, &shared);
    struct tp_dp_cmd commit1[] = {{.generation = 1, .op = TP_DP_OP_COMMIT}};
    tp_dp_set_open(&f->set, 1);
    assert_int_equal(atomic_load(&shared), 1 * 4);    /* generation 1, open */
    assert_int_equal(atomic_load(&f->set.ticket), 0); /* its own word is not used */
    tp_dp_set_apply(&other, commit1, 1, 1);           /* the other lcore claims it for both */
    assert_true(tp_dp_set_applied(&other, 1));
    assert_false(tp_dp_set_applied(&f->set, 1));
    assert_int_equal(tp_dp_set_cancel(&f->set, 1), -EBUSY); /* begun: no withdrawal */
    tp_dp_set_apply(&f->set, commit1, 1, 1);
    assert_true(tp_dp_set_applied(&f->set, 1));
    /* Withdrawn before either lcore saw it: both skip it. */
    struct tp_dp_cmd commit2[] = {{.generation = 2, .op = TP_DP_OP_COMMIT}};
    tp_dp_set_open(&other, 2);
    assert_int_equal(tp_dp_set_cancel(&f->set, 2), 0);
    tp_dp_set_apply(&f->set, commit2, 1, 2);
    tp_dp_set_apply(&other, commit2, 1, 2);
    assert_false(tp_dp_set_applied(&f->set, 2));
    assert_false(tp_dp_set_applied(&other, 2));
    tp_dp_set_share_ticket(&f->set, NULL);
}

/* tp_classifier_remove (backward shift) against a reference, many random tables. */
static void test_classifier_remove(void **state)
{
    (void)state;
    struct tp_classifier_params cp = {.max_flows = 256};
    struct tp_classifier *cls = zalloc(tp_classifier_memsize(&cp));
    srand(7);
    for (int round = 0; round < 200; round++) {
        uint32_t groups[256];
        bool live[256] = {false};
        assert_int_equal(tp_classifier_init(cls, &cp), 0);
        for (unsigned i = 0; i < 256; i++) {
            groups[i] = 0xe0000000u | (uint32_t)(rand() & 0x3ff);
            live[i] = tp_classifier_add(cls, groups[i], 1, TP_CLASSIFY_ANY_VLAN, i) == 0;
        }
        for (unsigned i = 0; i < 256; i += 1 + (unsigned)(rand() % 3))
            if (live[i]) {
                assert_int_equal(tp_classifier_remove(cls, groups[i], 1, TP_CLASSIFY_ANY_VLAN), 0);
                live[i] = false;
                assert_int_equal(tp_classifier_remove(cls, groups[i], 1, TP_CLASSIFY_ANY_VLAN),
                                 -ENOENT);
            }
        for (unsigned i = 0; i < 256; i++) {
            struct tp_flow_key k = {.dst_ip = groups[i], .dst_port = 1, .vlan = 5};
            uint32_t got = tp_classifier_lookup(cls, &k);
            if (live[i])
                assert_int_equal(got, i);
            else if (got != TP_CLASSIFY_NONE)
                assert_int_equal(groups[got], groups[i]); /* the same group added again */
        }
        /* Freed room is usable again. */
        for (unsigned i = 0; i < 256; i++)
            if (!live[i]) {
                int rc = tp_classifier_add(cls, groups[i], 2, TP_CLASSIFY_ANY_VLAN, i);
                assert_true(rc == 0 || rc == -EEXIST); /* a group drawn twice */
            }
    }
    free(cls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_attach_adds_flows_and_joins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach_removes_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_excluded_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_group_membership, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commands_and_ticket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_ticket, setup, teardown),
        cmocka_unit_test(test_classifier_remove),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
