/*
 * libtickplane subscribing through the daemon's control socket: the real control socket server
 * (tp_ctl_server, served by a thread as the daemon's main lcore serves it) with a real bus
 * segment. This test's main thread plays the data lcore: it drains the command ring the socket
 * feeds into the real interest table (tp_interest) and tells the bus writer which instruments
 * have interest, as the daemon does.
 *
 * Proves: a subscription goes through the socket before the local filter and data flows; topic
 * changes replace the daemon's subscription; unsubscribe removes it; the daemon loses a client's
 * interest when it detaches or is killed; other uids are refused with the daemon's reason and get
 * nothing of what was refused, while an entitled uid gets data; a configured socket with no daemon
 * fails clearly unless fallback was asked; no socket = the local filter alone; a reload that
 * withdraws a right stops the delivery; a writer restart re-subscribes through a new connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "config.h"
#include "interest.h"
#include "publish_level.h"
#include "server.h"
#include "tickplane/tickplane.h"
#include "tmpdir.h"
#include "tpout_sbe.h"

#define INSTRUMENTS 4
#define ESZ6        0u
#define NQZ6        1u
#define AAPL        2u
#define MSFT        3u
#define OTHER_UID   65534u /* entitled: CME ES* top and trades */
#define NOBODY_UID  65533u /* no entitlement rule at all */
#define CME_UID     65532u /* trades of every CME instrument */

static const char *const symbols[INSTRUMENTS] = {"ESZ6", "NQZ6", "AAPL    ", "MSFT"};
static const uint8_t venues[INSTRUMENTS] = {0, 0, 1, 1}; /* tpout Venue: CME, NASDAQ */
static const char *venue_names[2] = {"CME", "NASDAQ"};   /* as the config names them */

static char shm_dir[64], sock_dir[64], sock_path[128];
static struct tp_bus_writer writer;
static struct tp_ctl_server *srv;

/* ---------------------------------------------------------- the daemon's side */

/* The command ring from the socket (server thread) to the data lcore (this thread): SPSC. */
#define RING_SIZE 256u
static struct tp_ctl_cmd ring[RING_SIZE];
static _Atomic unsigned ring_head, ring_tail;

static int send_command(void *ctx, const struct tp_ctl_cmd *cmd)
{
    (void)ctx;
    unsigned head = atomic_load_explicit(&ring_head, memory_order_relaxed);
    if (head - atomic_load_explicit(&ring_tail, memory_order_acquire) == RING_SIZE)
        return -ENOBUFS;
    ring[head % RING_SIZE] = *cmd;
    atomic_store_explicit(&ring_head, head + 1, memory_order_release);
    return 0;
}

static struct tp_config *cfg;

static const char *const protocol_names[] = {
    [TP_CFG_PROTO_MDP3] = "mdp3", [TP_CFG_PROTO_ITCH] = "itch", [TP_CFG_PROTO_EOBI] = "eobi"};

/* The daemon's status: its channels with their protocol and configured venue. */
static json_t *status(void *ctx)
{
    (void)ctx;
    json_t *channels = json_array();
    for (unsigned c = 0; c < cfg->n_channels; c++)
        json_array_append_new(channels,
                              json_pack("{s:s, s:s, s:s}", "name", cfg->channels[c].name,
                                        "protocol", protocol_names[cfg->channels[c].protocol],
                                        "venue", cfg->channels[c].venue));
    return json_pack("{s:o}", "channels", channels);
}

static const struct tp_ctl_ops ops = {.send_command = send_command, .status = status};

/* What the data lcore learnt: the interest table and every command, in order. */
static struct tp_interest *interest;
static struct tp_ctl_cmd seen_cmds[1024];
static unsigned n_seen_cmds;

/* Drain the ring into the interest table, then set the bus writer's per-instrument interest. */
static void data_lcore_step(void)
{
    unsigned tail = atomic_load_explicit(&ring_tail, memory_order_relaxed);
    while (tail != atomic_load_explicit(&ring_head, memory_order_acquire)) {
        struct tp_ctl_cmd cmd = ring[tail % RING_SIZE];
        atomic_store_explicit(&ring_tail, ++tail, memory_order_release);
        assert_int_equal(tp_interest_apply(interest, &cmd), 0);
        if (n_seen_cmds < sizeof(seen_cmds) / sizeof(seen_cmds[0]))
            seen_cmds[n_seen_cmds++] = cmd;
    }
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        char symbol[16];
        snprintf(symbol, sizeof(symbol), "%.4s", symbols[id]);
        tp_bus_set_interest(&writer, id,
                            interest->used == 0 ||
                                tp_interest_topics(interest, venue_names[venues[id]], symbol) != 0);
    }
}

/* Topics the data plane holds for an instrument. */
static uint32_t daemon_interest(uint32_t id)
{
    data_lcore_step();
    char symbol[16];
    snprintf(symbol, sizeof(symbol), "%.4s", symbols[id]);
    return tp_interest_topics(interest, venue_names[venues[id]], symbol);
}

/* Wait (serving the data lcore) until n commands have arrived in all. */
static void wait_commands(unsigned n)
{
    for (int i = 0; i < 2000 && n_seen_cmds < n; i++) {
        data_lcore_step();
        usleep(1000);
    }
    assert_true(n_seen_cmds >= n);
}

/* The daemon's main lcore: serves the control socket until told to stop. */
static atomic_bool server_stop;
static pthread_t server_thread;

static void *serve(void *arg)
{
    (void)arg;
    while (!atomic_load(&server_stop))
        tp_ctl_server_poll(srv, 5);
    return NULL;
}

static const char *config_fmt =
    "{\"eal\": {\"lcores\": \"0-1\"},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\"}], \"channels\": [\"cme\", "
    "\"itch\"]}],"
    " \"channels\": [{\"name\": \"cme\", \"protocol\": \"mdp3\","
    "                 \"lines\": {\"a\": {\"group\": \"224.0.31.1\", \"port\": 1}}},"
    "                {\"name\": \"itch\", \"protocol\": \"itch\", \"venue\": \"%s\","
    "                 \"lines\": {\"a\": {\"group\": \"233.54.12.111\", \"port\": 2}}}],"
    " \"control\": {\"socket\": \"%s\"},"
    " \"entitlements\": {\"default\": \"deny\", \"rules\": ["
    "    {\"uid\": %u, \"venues\": [\"CME\"], \"instruments\": [\"ES*\"],"
    "     \"topics\": [\"top\", \"trades\"]},"
    "    {\"uid\": 65532, \"venues\": [\"CME\"], \"topics\": [\"trades\"]}]}}";

/* The bus instance "ctl" with its four instruments defined in the state table. */
static void open_writer(void)
{
    char err[256];
    struct tp_bus_params p = {.instance = "ctl",
                              .dir = shm_dir,
                              .ring_bytes = 1 << 16,
                              .max_record = 512,
                              .instruments = INSTRUMENTS,
                              .depth = 10,
                              .counters = 16,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writer_open(&writer, &p, err, sizeof(err)), 0);
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        struct tp_state_entry *e = tp_state_write_begin(writer.state, id);
        memcpy(e->book.symbol, symbols[id], strlen(symbols[id]));
        e->book.venue = venues[id];
        tp_state_write_end(e);
    }
}

static void load_config(struct tp_config *out, uid_t entitled)
{
    char json[4096];
    snprintf(json, sizeof(json), config_fmt, venue_names[1], sock_path, (unsigned)entitled);
    struct tp_config_errors errs;
    assert_int_equal(tp_config_load_string(json, NULL, out, &errs), 0);
}

static void start_serving(void)
{
    atomic_store(&server_stop, false);
    assert_int_equal(pthread_create(&server_thread, NULL, serve, NULL), 0);
}

static void stop_serving(void)
{
    atomic_store(&server_stop, true);
    pthread_join(server_thread, NULL);
}

static int setup(void **state)
{
    (void)state;
    assert_int_equal(tmpdir_make(shm_dir, sizeof(shm_dir), "ctlclient"), 0);
    chmod(shm_dir, 0755); /* the other uids map the segments */
    strcpy(sock_dir, "/tmp/tp-ctlclient-XXXXXX");
    assert_non_null(mkdtemp(sock_dir));
    chmod(sock_dir, 0755);
    snprintf(sock_path, sizeof(sock_path), "%s/control.sock", sock_dir);
    open_writer();

    struct tp_interest_params ip = {.max_subscriptions = 256};
    interest = aligned_alloc(64, (tp_interest_memsize(&ip) + 63) / 64 * 64);
    assert_int_equal(tp_interest_init(interest, &ip), 0);
    n_seen_cmds = 0;
    atomic_store(&ring_head, 0);
    atomic_store(&ring_tail, 0);

    cfg = malloc(sizeof(*cfg));
    load_config(cfg, OTHER_UID);
    assert_int_equal(tp_ctl_server_open(&srv, cfg, &ops), 0);
    chmod(sock_path, 0666); /* test only: let the other uids connect */
    start_serving();
    unsetenv(TP_CONTROL_SOCKET_ENV);
    unsetenv(TP_CONTROL_FALLBACK_ENV);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    stop_serving();
    tp_ctl_server_close(srv);
    free(cfg);
    free(interest);
    tp_bus_writer_close(&writer, 1);
    rmdir(sock_dir);
    unsetenv(TP_CONTROL_SOCKET_ENV);
    unsetenv(TP_CONTROL_FALLBACK_ENV);
    return tmpdir_remove(shm_dir);
}

/* ---------------------------------------------------------- publishing and reading */

/* A trade, if the writer publishes the instrument (someone has interest); 0 when skipped. */
static uint64_t pub_trade(uint32_t id, int64_t px)
{
    uint8_t buf[128];
    struct tpout_trade m;
    tpout_trade_wrap_and_apply_header(&m, buf, sizeof(buf));
    tpout_trade_set_instrument_id(&m, id);
    tpout_trade_set_price_mantissa(&m, px);
    tpout_trade_set_quantity(&m, 1);
    uint32_t len = (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_trade_encoded_length(&m));
    return tp_bus_publish(&writer, TP_REC_SBE, TP_TOPIC_TRADES, id, 0, buf, len);
}

/* One new best bid, if the writer publishes the instrument. */
static uint64_t pub_bid(uint32_t id, int64_t px)
{
    return publish_level(&writer, id, 0, 1, 0, px, 1);
}

struct trades {
    int per_instrument[INSTRUMENTS];
    int64_t last_price[INSTRUMENTS];
    int tops[INSTRUMENTS];
    int64_t last_bid[INSTRUMENTS];
};

static void count_trades(void *user, const struct tp_event *ev)
{
    struct trades *t = user;
    if (ev->topic == TP_TOPIC_TRADES && ev->instrument_id < INSTRUMENTS) {
        t->per_instrument[ev->instrument_id]++;
        t->last_price[ev->instrument_id] = ev->u.trade.price;
    }
    if (ev->topic == TP_TOPIC_TOP && ev->instrument_id < INSTRUMENTS) {
        t->tops[ev->instrument_id]++;
        t->last_bid[ev->instrument_id] = ev->u.top.bid_price;
    }
}

/* Write (or, with symbol NULL, clear) an instrument's definition in the state table. */
static void define(uint32_t id, const char *symbol, uint8_t venue)
{
    struct tp_state_entry *e = tp_state_write_begin(writer.state, id);
    memset(e->book.symbol, 0, sizeof(e->book.symbol));
    if (symbol != NULL)
        memcpy(e->book.symbol, symbol, strlen(symbol));
    e->book.venue = venue;
    tp_state_write_end(e);
}

static void drain(struct tp_client *c, struct trades *t)
{
    memset(t, 0, sizeof(*t));
    struct tp_client_stats st;
    do {
        assert_true(tp_poll(c, count_trades, t, 64) >= 0);
        tp_stats(c, &st);
    } while (st.lag > 0);
}

static struct tp_client *attach(int no_reader_segment, char *err, size_t err_len, int *rc)
{
    struct tp_client *c = NULL;
    struct tp_client_options opt = {.shm_dir = shm_dir, .no_reader_segment = no_reader_segment};
    *rc = tp_attach(&c, "ctl", &opt, err, err_len);
    return c;
}

static struct tp_client *attach_ok(void)
{
    char err[256];
    int rc;
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    if (rc != 0)
        print_error("attach: %s\n", err);
    assert_int_equal(rc, 0);
    return c;
}

/* ---------------------------------------------------------- tests */

static void test_no_socket_local_filter(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connected(c), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    assert_string_equal(tp_last_error(c), "");
    data_lcore_step();
    assert_int_equal(n_seen_cmds, 0); /* the daemon heard nothing */
    assert_true(pub_trade(NQZ6, 7) > 0);
    assert_true(pub_trade(AAPL, 8) > 0); /* published (nobody subscribed anywhere) but filtered */
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[NQZ6], 1);
    assert_int_equal(t.per_instrument[AAPL], 0);
    tp_detach(c);
}

/*
 * A config may name a venue otherwise than the defaults: the library learns the names from the
 * daemon on connect, so its subscriptions name the venue as the daemon's config does.
 */
static void test_venue_named_by_config(void **state)
{
    (void)state;
    stop_serving();
    tp_ctl_server_close(srv);
    venue_names[1] = "XNAS";
    load_config(cfg, OTHER_UID);
    assert_int_equal(tp_ctl_server_open(&srv, cfg, &ops), 0);
    start_serving();
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    uint32_t aapl = AAPL;
    assert_int_equal(tp_subscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    wait_commands(1);
    assert_string_equal(seen_cmds[0].venue, "XNAS");
    assert_int_equal(daemon_interest(AAPL), TP_CFG_TOPIC_TRADES);
    assert_true(pub_trade(AAPL, 1234) > 0);
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[AAPL], 1);
    assert_int_equal(tp_subscribe_pattern(c, "NASDAQ", "A*", TP_TOPIC_BIT(TP_TOPIC_TRADES)),
                     -EINVAL);
    assert_non_null(strstr(tp_last_error(c), "XNAS"));
    tp_detach(c);
    venue_names[1] = "NASDAQ";
}

static void test_subscribe_unsubscribe_through_socket(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    assert_int_equal(tp_control_connected(c), 1);
    assert_int_equal(tp_control_connect(c, sock_path, 0), -EISCONN);

    uint32_t es = ESZ6;
    uint32_t top_trades = TP_TOPIC_BIT(TP_TOPIC_TOP) | TP_TOPIC_BIT(TP_TOPIC_TRADES);
    assert_int_equal(tp_subscribe(c, &es, 1, top_trades), 0);
    wait_commands(1);
    assert_int_equal(seen_cmds[0].op, TP_CTL_SUBSCRIBE);
    assert_string_equal(seen_cmds[0].venue, "CME");
    assert_string_equal(seen_cmds[0].pattern, "ESZ6");
    assert_int_equal(seen_cmds[0].topics, TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_int_equal(daemon_interest(ESZ6), TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_int_equal(daemon_interest(AAPL), 0);

    /* The writer now publishes only what someone wants, and the client gets it. */
    assert_true(pub_trade(ESZ6, 4200) > 0);
    assert_int_equal(pub_trade(AAPL, 1), 0);
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[ESZ6], 1);
    assert_int_equal(t.last_price[ESZ6], 4200);

    /* A padded ITCH symbol is named without its padding; a second topic set replaces the
     * first subscription (new one granted first, then the old one removed). */
    uint32_t aapl = AAPL;
    assert_int_equal(tp_subscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    assert_int_equal(tp_subscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_ORDERS)), 0);
    wait_commands(4);
    assert_int_equal(seen_cmds[1].op, TP_CTL_SUBSCRIBE);
    assert_string_equal(seen_cmds[1].venue, "NASDAQ");
    assert_string_equal(seen_cmds[1].pattern, "AAPL");
    assert_int_equal(seen_cmds[2].op, TP_CTL_SUBSCRIBE);
    assert_int_equal(seen_cmds[2].topics, TP_CFG_TOPIC_TRADES | TP_CFG_TOPIC_MBO);
    assert_int_equal(seen_cmds[3].op, TP_CTL_UNSUBSCRIBE);
    assert_int_equal(seen_cmds[3].sub_id, seen_cmds[1].sub_id);
    assert_int_equal(daemon_interest(AAPL), TP_CFG_TOPIC_TRADES | TP_CFG_TOPIC_MBO);
    /* Asking again for what is already held sends nothing. */
    assert_int_equal(tp_subscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);

    /* Unsubscribing one topic narrows the daemon's subscription; the last one removes it. */
    assert_int_equal(tp_unsubscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_ORDERS)), 0);
    assert_int_equal(tp_unsubscribe(c, &es, 1, top_trades), 0);
    wait_commands(7);
    assert_int_equal(daemon_interest(AAPL), TP_CFG_TOPIC_TRADES);
    assert_int_equal(daemon_interest(ESZ6), 0);
    assert_int_equal(seen_cmds[6].op, TP_CTL_UNSUBSCRIBE);
    assert_int_equal(seen_cmds[6].sub_id, seen_cmds[0].sub_id);
    assert_int_equal(pub_trade(ESZ6, 1), 0); /* nobody wants it any more */
    assert_true(pub_trade(AAPL, 9) > 0);
    drain(c, &t);
    assert_int_equal(t.per_instrument[ESZ6], 0);
    assert_int_equal(t.per_instrument[AAPL], 1);

    /* Every instrument: one "*" subscription per venue; removing it removes everything. */
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_STATUS)), 0);
    wait_commands(9);
    assert_string_equal(seen_cmds[7].pattern, "*");
    assert_string_equal(seen_cmds[8].pattern, "*");
    assert_int_equal(daemon_interest(MSFT), TP_CFG_TOPIC_STATUS);
    assert_int_equal(
        tp_unsubscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_STATUS) | TP_TOPIC_BIT(TP_TOPIC_TRADES)),
        0);
    wait_commands(12);
    assert_int_equal(daemon_interest(MSFT), 0);
    assert_int_equal(daemon_interest(AAPL), 0);
    assert_int_equal(interest->used, 0);

    /* An id without a definition cannot be named to the daemon. */
    define(MSFT, NULL, 1);
    uint32_t msft = MSFT;
    assert_int_equal(tp_subscribe(c, &msft, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), -ENOENT);
    assert_string_equal(tp_last_error(c), "instrument 3 is not defined (yet)");
    tp_detach(c);
}

/* Patterns without a daemon: matched now, and on the first record of a later definition. */
/*
 * The daemon closes a connection that holds no subscription and sends nothing for
 * control.idle_timeout_ms; a strategy that connected early and subscribes later is connected
 * again by the library, and its subscription goes through.
 */
static void test_subscribe_after_idle_close(void **state)
{
    (void)state;
    stop_serving();
    tp_ctl_server_close(srv);
    cfg->control.idle_timeout_ms = 100;
    assert_int_equal(tp_ctl_server_open(&srv, cfg, &ops), 0);
    chmod(sock_path, 0666);
    start_serving();
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    struct tp_ctl_server_stats st;
    for (int i = 0; i < 1000; i++) {
        tp_ctl_server_stats(srv, &st);
        if (st.idle_closed > 0)
            break;
        usleep(10000);
    }
    assert_int_equal(st.idle_closed, 1);
    uint32_t es = ESZ6;
    assert_int_equal(tp_subscribe(c, &es, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    wait_commands(1);
    assert_int_equal(seen_cmds[0].op, TP_CTL_SUBSCRIBE);
    assert_string_equal(seen_cmds[0].pattern, "ESZ6");
    tp_detach(c);
}

static void test_pattern_local(void **state)
{
    (void)state;
    define(MSFT, NULL, 0); /* id 3 undefined for now */
    struct tp_client *c = attach_ok();
    uint32_t top = TP_TOPIC_BIT(TP_TOPIC_TOP), trades = TP_TOPIC_BIT(TP_TOPIC_TRADES);
    assert_int_equal(tp_subscribe_pattern(c, NULL, "E S*", trades), -EINVAL);
    assert_int_equal(tp_subscribe_pattern(c, "LSE", "ES*", trades), -EINVAL);
    assert_string_equal(tp_last_error(c), "unknown venue \"LSE\" (CME, NASDAQ, EUREX)");
    assert_int_equal(tp_subscribe_pattern(c, "CME", "ES*", 0), -EINVAL);
    int es = tp_subscribe_pattern(c, "CME", "ES*", trades | top);
    int aapl = tp_subscribe_pattern(c, "CME", "AAPL", trades); /* AAPL is on NASDAQ */
    assert_true(es >= 1 && aapl >= 1 && es != aapl);
    /* Explicit and pattern topics add up; tp_unsubscribe removes the explicit ones only. */
    assert_int_equal(tp_subscribe(c, &(uint32_t){ESZ6}, 1, trades), 0);
    assert_int_equal(tp_unsubscribe(c, &(uint32_t){ESZ6}, 1, trades), 0);

    assert_true(pub_trade(ESZ6, 1) > 0);
    assert_true(pub_trade(NQZ6, 2) > 0);
    assert_true(pub_trade(AAPL, 3) > 0);
    define(MSFT, "ESH7", 0); /* defined after the subscription */
    assert_true(pub_bid(MSFT, 4200) > 0);
    assert_true(pub_trade(MSFT, 4) > 0);
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[ESZ6], 1);
    assert_int_equal(t.per_instrument[NQZ6], 0);
    assert_int_equal(t.per_instrument[AAPL], 0);
    assert_int_equal(t.per_instrument[MSFT], 1);
    assert_int_equal(t.tops[MSFT], 1); /* its book came from the spare books */
    assert_int_equal(t.last_bid[MSFT], 4200);

    assert_int_equal(tp_unsubscribe_pattern(c, es), 0);
    assert_int_equal(tp_unsubscribe_pattern(c, es), -ENOENT);
    assert_true(pub_trade(ESZ6, 5) > 0);
    assert_true(pub_bid(MSFT, 4300) > 0);
    drain(c, &t);
    assert_int_equal(t.per_instrument[ESZ6] + t.tops[MSFT], 0);
    for (int k = 1; k < 32; k++)
        assert_true(tp_subscribe_pattern(c, NULL, "Z*", trades) >= 1);
    assert_int_equal(tp_subscribe_pattern(c, NULL, "Z*", trades), -ENOSPC);
    tp_detach(c);
}

/* A definition record for an instrument, without touching the state table. */
static uint64_t pub_definition(uint32_t id, const char *symbol, uint8_t venue)
{
    uint8_t buf[256];
    struct tpout_instrument_definition m;
    tpout_instrument_definition_wrap_and_apply_header(&m, buf, sizeof(buf));
    tpout_instrument_definition_set_instrument_id(&m, id);
    tpout_instrument_definition_set_venue(&m, venue);
    tpout_instrument_definition_set_symbol(&m, symbol, strlen(symbol));
    uint32_t len = (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH +
                              tpout_instrument_definition_encoded_length(&m));
    return tp_bus_publish(&writer, TP_REC_SBE, TP_TOPIC_DEFINITIONS, id, 0, buf, len);
}

/*
 * A reader at the writer's heels may read an instrument's definition record before the state
 * table names it (the writer inside the entry, or not there yet): the pattern is matched from
 * the record itself, and the instrument's next records are delivered.
 */
static void test_pattern_from_definition_record(void **state)
{
    (void)state;
    define(MSFT, NULL, 0);
    struct tp_client *c = attach_ok();
    uint32_t trades = TP_TOPIC_BIT(TP_TOPIC_TRADES);
    assert_true(tp_subscribe_pattern(c, "CME", "ES*", trades) >= 1);
    assert_true(pub_definition(MSFT, "ESM7", 0) > 0);
    assert_true(pub_trade(MSFT, 7) > 0);
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[MSFT], 1);
    assert_int_equal(t.last_price[MSFT], 7);
    tp_detach(c);

    /* A symbol the pattern does not match, or on another venue: nothing. */
    c = attach_ok();
    assert_true(tp_subscribe_pattern(c, "CME", "ES*", trades) >= 1);
    assert_true(pub_definition(MSFT, "ESM7", 1) > 0);
    assert_true(pub_trade(MSFT, 8) > 0);
    drain(c, &t);
    assert_int_equal(t.per_instrument[MSFT], 0);
    tp_detach(c);
}

/* Through the daemon: one subscription with the pattern itself. */
static void test_pattern_through_socket(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    int h = tp_subscribe_pattern(c, "CME", "ES*", TP_TOPIC_BIT(TP_TOPIC_TRADES));
    assert_true(h >= 1);
    wait_commands(1);
    assert_int_equal(seen_cmds[0].op, TP_CTL_SUBSCRIBE);
    assert_string_equal(seen_cmds[0].venue, "CME");
    assert_string_equal(seen_cmds[0].pattern, "ES*");
    assert_int_equal(daemon_interest(ESZ6), TP_CFG_TOPIC_TRADES);
    assert_int_equal(daemon_interest(NQZ6), 0);
    assert_true(pub_trade(ESZ6, 1) > 0);
    assert_int_equal(pub_trade(NQZ6, 2), 0);
    struct trades t;
    drain(c, &t);
    assert_int_equal(t.per_instrument[ESZ6], 1);
    assert_int_equal(tp_unsubscribe_pattern(c, h), 0);
    wait_commands(2);
    assert_int_equal(seen_cmds[1].op, TP_CTL_UNSUBSCRIBE);
    assert_int_equal(seen_cmds[1].sub_id, seen_cmds[0].sub_id);
    assert_int_equal(daemon_interest(ESZ6), 0);
    tp_detach(c);
}

static void test_detach_drops_interest(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    wait_commands(1);
    assert_int_equal(daemon_interest(NQZ6), TP_CFG_TOPIC_DEPTH);
    tp_detach(c);
    wait_commands(2);
    assert_int_equal(seen_cmds[1].op, TP_CTL_UNSUBSCRIBE_CLIENT);
    assert_int_equal(seen_cmds[1].client_id, seen_cmds[0].client_id);
    assert_int_equal(daemon_interest(NQZ6), 0);
}

static void test_killed_client_drops_interest(void **state)
{
    (void)state;
    int sync[2];
    assert_int_equal(pipe(sync), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[256];
        int rc;
        struct tp_client *c = attach(1, err, sizeof(err), &rc);
        if (rc != 0 || tp_control_connect(c, sock_path, 0) != 0 ||
            tp_subscribe(c, &(uint32_t){AAPL}, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)) != 0)
            _exit(1);
        ssize_t ignored = write(sync[1], "s", 1);
        (void)ignored;
        for (;;)
            pause(); /* killed by the parent */
    }
    close(sync[1]);
    char byte;
    assert_int_equal(read(sync[0], &byte, 1), 1);
    close(sync[0]);
    wait_commands(1);
    assert_int_equal(daemon_interest(AAPL), TP_CFG_TOPIC_TOP);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    wait_commands(2);
    assert_int_equal(seen_cmds[1].op, TP_CTL_UNSUBSCRIBE_CLIENT);
    assert_int_equal(daemon_interest(AAPL), 0);
}

static void test_daemon_not_running(void **state)
{
    (void)state;
    char missing[160], err[256];
    snprintf(missing, sizeof(missing), "%s/nobody.sock", sock_dir);
    int rc;

    /* Through the environment: the attach fails and says why. */
    setenv(TP_CONTROL_SOCKET_ENV, missing, 1);
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    assert_int_equal(rc, -ENOENT);
    assert_int_equal(strncmp(err, "control socket ", 15), 0);
    assert_non_null(strstr(err, missing));
    assert_non_null(strstr(err, "is the daemon running?"));

    /* Fallback asked for: attached, filtering locally. */
    setenv(TP_CONTROL_FALLBACK_ENV, "1", 1);
    c = attach(1, err, sizeof(err), &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(tp_control_connected(c), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    tp_detach(c);
    unsetenv(TP_CONTROL_FALLBACK_ENV);

    /* The environment names the live socket: connected at attach. */
    setenv(TP_CONTROL_SOCKET_ENV, sock_path, 1);
    c = attach(1, err, sizeof(err), &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(tp_control_connected(c), 1);
    tp_detach(c);
    unsetenv(TP_CONTROL_SOCKET_ENV);

    /* Through the API. */
    c = attach_ok();
    assert_int_equal(tp_control_connect(c, missing, 0), -ENOENT);
    assert_non_null(strstr(tp_last_error(c), missing));
    assert_int_equal(tp_control_connect(c, missing, TP_CONTROL_FALLBACK), 1);
    assert_int_equal(tp_control_connected(c), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    assert_int_equal(tp_control_connect(c, sock_path, 0), -EBUSY); /* after subscribing */
    tp_detach(c);
    data_lcore_step();
    assert_int_equal(n_seen_cmds, 0);
}

static void test_daemon_stops(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){ESZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    stop_serving();
    tp_ctl_server_close(srv); /* the daemon is gone */
    assert_int_equal(tp_control_check(c), -ENOTCONN);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), -ENOTCONN);
    assert_non_null(strstr(tp_last_error(c), "not connected"));
    tp_detach(c);
    /* teardown closes a server again: open a fresh one for it. */
    assert_int_equal(tp_ctl_server_open(&srv, cfg, &ops), 0);
    start_serving();
}

/* The writer restarts (new segments): tp_reattach connects again and asks for everything again. */
static void test_reattach_resubscribes(void **state)
{
    (void)state;
    struct tp_client *c = attach_ok();
    assert_int_equal(tp_control_connect(c, sock_path, 0), 0);
    assert_int_equal(tp_subscribe(c, &(uint32_t){NQZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_STATUS)), 0);
    wait_commands(3); /* NQZ6, then "*" on CME and on NASDAQ */
    tp_bus_writer_close(&writer, 0);
    open_writer();
    struct trades t;
    assert_int_equal(tp_poll(c, count_trades, &t, 8), -ESTALE);
    char err[256];
    assert_int_equal(tp_reattach(c, err, sizeof(err)), 0);
    wait_commands(7);
    assert_int_equal(seen_cmds[3].op, TP_CTL_UNSUBSCRIBE_CLIENT); /* the old connection */
    assert_int_equal(seen_cmds[3].client_id, seen_cmds[0].client_id);
    for (unsigned i = 4; i < 7; i++) {
        assert_int_equal(seen_cmds[i].op, TP_CTL_SUBSCRIBE);
        assert_int_not_equal(seen_cmds[i].client_id, seen_cmds[0].client_id);
    }
    assert_int_equal(daemon_interest(NQZ6), TP_CFG_TOPIC_TRADES | TP_CFG_TOPIC_STATUS);
    assert_int_equal(daemon_interest(AAPL), TP_CFG_TOPIC_STATUS);
    assert_true(pub_trade(NQZ6, 11) > 0);
    drain(c, &t);
    assert_int_equal(t.per_instrument[NQZ6], 1);
    tp_detach(c);
}

/* ---------------------------------------------------------- other uids */

/* The child's checks: exit status = number of the first failed one (0: all passed). */
static int entitled_child(int ready_fd)
{
    char err[256];
    int rc;
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    if (rc != 0 || tp_control_connect(c, sock_path, 0) != 0)
        return 1;
    uint32_t es = ESZ6, aapl = AAPL;
    if (tp_subscribe(c, &es, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != 0)
        return 2;
    if (tp_subscribe(c, &aapl, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES ||
        strcmp(tp_last_error(c), "refused: uid 65534 is not entitled to venue NASDAQ") != 0)
        return 3;
    if (tp_subscribe(c, &es, 1, TP_TOPIC_BIT(TP_TOPIC_ORDERS)) != -EACCES ||
        strcmp(tp_last_error(c),
               "refused: uid 65534 is not entitled to topic mbo of CME \"ESZ6\"") != 0)
        return 4;
    /* Patterns are checked as a whole: NQ* is not covered by the right on ES*. */
    if (tp_subscribe_pattern(c, "CME", "NQ*", TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES ||
        strcmp(tp_last_error(c),
               "refused: uid 65534 is not entitled to instruments \"NQ*\" of CME") != 0)
        return 8;
    if (tp_subscribe_pattern(c, "CME", "ESZ?", TP_TOPIC_BIT(TP_TOPIC_TOP)) < 1)
        return 9;
    /* Every instrument means every venue: refused without rights on all of it. */
    if (tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES ||
        strcmp(tp_last_error(c),
               "refused: uid 65534 is not entitled to instruments \"*\" of CME") != 0)
        return 10;
    /* All or nothing: one refused instrument refuses the whole call. */
    uint32_t both[2] = {NQZ6, AAPL};
    if (tp_subscribe(c, both, 2, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES)
        return 5;
    ssize_t ignored = write(ready_fd, "r", 1);
    (void)ignored;
    /* The parent now publishes trades of every instrument: only ESZ6's may arrive. */
    struct trades t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < 4000 && t.per_instrument[ESZ6] < 20; i++) {
        if (tp_poll(c, count_trades, &t, 64) == 0)
            usleep(500);
    }
    if (t.per_instrument[ESZ6] < 20)
        return 6;
    if (t.per_instrument[AAPL] != 0 || t.per_instrument[NQZ6] != 0)
        return 7;
    tp_detach(c);
    return 0;
}

static int unentitled_child(int ready_fd)
{
    char err[256];
    int rc;
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    if (rc != 0 || tp_control_connect(c, sock_path, 0) != 0)
        return 1;
    if (tp_subscribe(c, &(uint32_t){ESZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)) != -EACCES ||
        strcmp(tp_last_error(c), "refused: uid 65533 has no entitlements") != 0)
        return 2;
    if (tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES)
        return 3;
    ssize_t ignored = write(ready_fd, "r", 1);
    (void)ignored;
    struct trades t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < 400; i++)
        if (tp_poll(c, count_trades, &t, 64) == 0)
            usleep(500);
    tp_detach(c);
    return t.per_instrument[ESZ6] + t.per_instrument[AAPL] == 0 ? 0 : 4;
}

/*
 * Run fn in a child as uid. Once it says it is ready, publish trades of every instrument with
 * interest forced on (as if other consumers wanted them) until it exits.
 */
static int run_as(uid_t uid, int (*fn)(int ready_fd), void (*on_ready)(void))
{
    int sync[2];
    assert_int_equal(pipe(sync), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sync[0]);
        if (setgroups(0, NULL) != 0 || setgid(uid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(fn(sync[1]));
    }
    close(sync[1]);
    fcntl(sync[0], F_SETFL, O_NONBLOCK);
    int ready = 0, status = 0;
    for (int i = 0; i < 10000; i++) {
        char byte;
        if (read(sync[0], &byte, 1) == 1) {
            ready = 1;
            if (on_ready != NULL)
                on_ready();
        }
        data_lcore_step();
        if (ready) {
            tp_bus_set_interest_all(&writer, 1);
            for (uint32_t id = 0; id < INSTRUMENTS; id++)
                pub_trade(id, 100 + id);
        }
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        usleep(1000);
    }
    close(sync[0]);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_entitled_uid_gets_data_refused_gets_reason(void **state)
{
    (void)state;
    assert_int_equal(run_as(OTHER_UID, entitled_child, NULL), 0);
    /* The refused requests never reached the data plane: ESZ6, ESZ? and the removal at exit. */
    wait_commands(3);
    assert_int_equal(n_seen_cmds, 3);
    assert_string_equal(seen_cmds[0].pattern, "ESZ6");
    assert_string_equal(seen_cmds[1].pattern, "ESZ?");
    assert_int_equal(seen_cmds[2].op, TP_CTL_UNSUBSCRIBE_CLIENT);
}

/* Subscribed as uid 65534, then a reload withdraws the right: tp_control_check reports it. */
static int revoked_child(int ready_fd)
{
    char err[256];
    int rc;
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    if (rc != 0 || tp_control_connect(c, sock_path, 0) != 0)
        return 1;
    if (tp_subscribe(c, &(uint32_t){ESZ6}, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != 0)
        return 2;
    ssize_t ignored = write(ready_fd, "r", 1);
    (void)ignored;
    int revoked = 0;
    for (int i = 0; i < 4000 && revoked == 0; i++) {
        revoked = tp_control_check(c);
        usleep(1000);
    }
    if (revoked != 1 || strcmp(tp_last_error(c), "revoked: uid 65534 has no entitlements") != 0)
        return 3;
    /* From now on ESZ6's trades are not delivered here, although still published. */
    struct trades t;
    memset(&t, 0, sizeof(t));
    struct tp_client_stats before, after;
    tp_stats(c, &before);
    for (int i = 0; i < 400; i++)
        if (tp_poll(c, count_trades, &t, 64) == 0)
            usleep(500);
    tp_stats(c, &after);
    if (t.per_instrument[ESZ6] != 0 || after.records == before.records)
        return 4;
    tp_detach(c);
    return 0;
}

/* On the child's signal: reload with the rule for another uid (the server thread paused). */
static void revoke_rights(void)
{
    stop_serving();
    struct tp_config *next = malloc(sizeof(*next));
    load_config(next, 4242);
    tp_ctl_server_update(srv, next);
    free(cfg);
    cfg = next;
    start_serving();
}

static void test_revoked_by_reload(void **state)
{
    (void)state;
    assert_int_equal(run_as(OTHER_UID, revoked_child, revoke_rights), 0);
    wait_commands(2);
    assert_int_equal(seen_cmds[0].op, TP_CTL_SUBSCRIBE);
    assert_int_equal(seen_cmds[1].op, TP_CTL_UNSUBSCRIBE);
}

/*
 * Rights on one venue of two: "every instrument" is refused and what CME granted is undone; a
 * pattern on every venue is granted on CME only, and NASDAQ's records are not delivered.
 */
static int one_venue_child(int ready_fd)
{
    char err[256];
    int rc;
    struct tp_client *c = attach(1, err, sizeof(err), &rc);
    if (rc != 0 || tp_control_connect(c, sock_path, 0) != 0)
        return 1;
    if (tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != -EACCES ||
        strcmp(tp_last_error(c), "refused: uid 65532 is not entitled to venue NASDAQ") != 0)
        return 2;
    /* A pattern on every venue is granted where the rights are, and delivered only there. */
    if (tp_subscribe_pattern(c, NULL, "*", TP_TOPIC_BIT(TP_TOPIC_TRADES)) < 1)
        return 3;
    ssize_t ignored = write(ready_fd, "r", 1);
    (void)ignored;
    struct trades t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < 4000 && t.per_instrument[NQZ6] < 20; i++)
        if (tp_poll(c, count_trades, &t, 64) == 0)
            usleep(500);
    if (t.per_instrument[ESZ6] < 20 || t.per_instrument[NQZ6] < 20)
        return 4;
    if (t.per_instrument[AAPL] != 0 || t.per_instrument[MSFT] != 0)
        return 5;
    tp_detach(c);
    return 0;
}

static void test_every_instrument_needs_every_venue(void **state)
{
    (void)state;
    assert_int_equal(run_as(CME_UID, one_venue_child, NULL), 0);
    wait_commands(4);
    assert_int_equal(seen_cmds[0].op, TP_CTL_SUBSCRIBE); /* CME "*", granted ... */
    assert_string_equal(seen_cmds[0].venue, "CME");
    assert_int_equal(seen_cmds[1].op, TP_CTL_UNSUBSCRIBE); /* ... undone when NASDAQ refused */
    assert_int_equal(seen_cmds[1].sub_id, seen_cmds[0].sub_id);
    assert_int_equal(seen_cmds[2].op, TP_CTL_SUBSCRIBE); /* the pattern, granted on CME */
    assert_string_equal(seen_cmds[2].venue, "CME");
    assert_int_equal(seen_cmds[3].op, TP_CTL_UNSUBSCRIBE_CLIENT);
}

static void test_uid_without_rights_refused(void **state)
{
    (void)state;
    assert_int_equal(run_as(NOBODY_UID, unentitled_child, NULL), 0);
    data_lcore_step();
    assert_int_equal(n_seen_cmds, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_socket_local_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_unsubscribe_through_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_venue_named_by_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_after_idle_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_local, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_from_definition_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pattern_through_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach_drops_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_client_drops_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_not_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entitled_uid_gets_data_refused_gets_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_uid_without_rights_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_revoked_by_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_instrument_needs_every_venue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reattach_resubscribes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
