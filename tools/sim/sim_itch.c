/*
 * sim_itch.c - tickplane-sim's ITCH venue: the session's messages to a BinaryFILE and/or
 * MoldUDP64 packets, a re-request server, and a GLIMPSE snapshot recorded and/or served.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "binaryfile_out.h"
#include "glimpse_server.h"
#include "itch_feed.h"
#include "mold_out.h"
#include "rerequest.h"
#include "sim_outputs.h"
#include "sim_venue.h"

/* The ITCH options (sim_venue.h). */
static struct {
    const char *binaryfile_path;
    const char *rerequest_addr; /* host:port */
    uint64_t rerequest_window;
    uint64_t linger_ms;
    /* GLIMPSE: the snapshot at feed sequence glimpse_at, served and/or recorded */
    const char *glimpse_addr, *glimpse_file, *glimpse_user, *glimpse_password;
    uint64_t glimpse_at, glimpse_serve_ms;
    struct tp_sim_glimpse_faults glimpse_faults;
} itch = {.rerequest_window = 100000};

/* Sends each ITCH message to the BinaryFILE and the MoldUDP64 packetizer, whichever exist. */
struct itch_tee {
    struct tp_sim_binaryfile *binaryfile;
    struct tp_sim_mold_out *mold;
    /* GLIMPSE: the snapshot is taken at the first step end where the feed reached glimpse_at */
    const struct tp_sim_model *model;
    uint64_t glimpse_at; /* 0: no snapshot */
    struct tp_sim_glimpse *glimpse;
    int glimpse_taken;
};

/* The sequence number the feed's next message gets (BinaryFILE alone: its message count + 1). */
static uint64_t itch_tee_next_seq(const struct itch_tee *t)
{
    return t->mold != NULL ? t->mold->next_seq : t->binaryfile->messages + 1;
}

static int itch_tee_step_done(void *ctx)
{
    struct itch_tee *t = ctx;
    if (t->glimpse_at == 0 || t->glimpse_taken || itch_tee_next_seq(t) < t->glimpse_at)
        return 0;
    t->glimpse_taken = 1;
    return tp_sim_glimpse_build(t->glimpse, t->model, itch_tee_next_seq(t));
}

static int itch_tee_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct itch_tee *t = ctx;
    int rc = 0;
    if (t->binaryfile != NULL)
        rc = tp_sim_binaryfile_message(t->binaryfile, msg, len, time_ns);
    if (rc == 0 && t->mold != NULL)
        rc = tp_sim_mold_message(t->mold, msg, len, time_ns);
    return rc;
}

static int open_rerequest(const struct sim_options *o, struct tp_sim_rerequest_server *srv,
                          struct tp_sim_mold_store *store)
{
    struct tp_sim_endpoint where;
    int rc = tp_sim_endpoint_parse(itch.rerequest_addr, &where);
    if (rc == 0)
        rc = tp_sim_mold_store_init(store, itch.rerequest_window,
                                    o->packet_bytes ? o->packet_bytes : 1400);
    if (rc == 0)
        rc = tp_sim_rerequest_open(srv, store, where.group, where.port);
    if (rc == 0)
        fprintf(stderr, "tickplane-sim: re-request server on %s port %u\n", itch.rerequest_addr,
                tp_sim_rerequest_port(srv));
    return rc;
}

/* The GLIMPSE snapshot and its server (served from main once the other files are written). */
static struct tp_sim_glimpse glimpse_snapshot;
static struct tp_sim_glimpse_server glimpse_server = {.fd = -1};

/* Records and/or opens the server for the snapshot taken; reports both. */
static int glimpse_report(json_t *report)
{
    int rc = 0;
    if (itch.glimpse_file != NULL) {
        rc = tp_sim_glimpse_write(&glimpse_snapshot, itch.glimpse_file);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", itch.glimpse_file, strerror(-rc));
    }
    if (rc == 0 && itch.glimpse_addr != NULL) {
        struct tp_sim_endpoint where;
        rc = tp_sim_endpoint_parse(itch.glimpse_addr, &where);
        if (rc == 0)
            rc =
                tp_sim_glimpse_open(&glimpse_server, &glimpse_snapshot, where.group, where.port,
                                    itch.glimpse_user, itch.glimpse_password, &itch.glimpse_faults);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: GLIMPSE server %s: %s\n", itch.glimpse_addr,
                    strerror(-rc));
    }
    json_object_set_new(report, "glimpse",
                        json_pack("{s:I,s:I,s:I}", "next_seq",
                                  (json_int_t)glimpse_snapshot.next_seq, "messages",
                                  (json_int_t)glimpse_snapshot.messages, "live_orders",
                                  (json_int_t)glimpse_snapshot.live_orders));
    return rc;
}

/* Serves the snapshot for --glimpse-serve-ms and prints what the server did. */
static void glimpse_serve(void)
{
    if (glimpse_server.fd < 0)
        return;
    fprintf(stderr, "tickplane-sim: GLIMPSE server on %s port %u serving (next_seq %llu)\n",
            itch.glimpse_addr, tp_sim_glimpse_port(&glimpse_server),
            (unsigned long long)glimpse_snapshot.next_seq);
    tp_sim_glimpse_serve(&glimpse_server, itch.glimpse_serve_ms);
    fprintf(stderr, "tickplane-sim: GLIMPSE logins %llu refused %llu dropped %llu served %llu\n",
            (unsigned long long)glimpse_server.logins, (unsigned long long)glimpse_server.refused,
            (unsigned long long)glimpse_server.dropped, (unsigned long long)glimpse_server.served);
    tp_sim_glimpse_close(&glimpse_server);
}

static int run_itch(struct sim_options *o, struct tp_sim_model *m, json_t *report)
{
    struct tp_sim_binaryfile bf;
    struct tp_sim_mold_store store;
    struct tp_sim_rerequest_server srv = {.fd = -1};
    struct tp_sim_mold_out mold;
    struct sim_outputs out;
    struct itch_tee tee = {0};
    int packets = o->pcap_path != NULL || o->live;
    int rc = 0;

    if (itch.binaryfile_path == NULL && !packets) {
        fprintf(stderr, "tickplane-sim itch: nothing to write (--binaryfile, --pcap, --live)\n");
        return -EINVAL;
    }
    if (itch.rerequest_addr != NULL) {
        rc = open_rerequest(o, &srv, &store);
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: re-request server %s: %s\n", itch.rerequest_addr,
                    strerror(-rc));
            return rc;
        }
    }
    if (itch.binaryfile_path != NULL) {
        rc = tp_sim_binaryfile_open(&bf, itch.binaryfile_path);
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: %s: %s\n", itch.binaryfile_path, strerror(-rc));
            return rc;
        }
        tee.binaryfile = &bf;
    }
    if (packets) {
        o->faults.heartbeat = tp_sim_mold_heartbeat;
        rc = sim_outputs_open(&out, o, TP_SIM_VENUE_ITCH, srv.fd >= 0 ? &srv : NULL);
        struct tp_sim_mold_params mp;
        tp_sim_mold_params_default(&mp);
        mp.reset_at_message = o->seq_reset_at;
        if (o->packet_bytes > 0)
            tp_sim_mold_params_fill(&mp, o->packet_bytes);
        struct tp_sim_packet_sink to_faults = sim_outputs_sink(&out);
        if (rc == 0)
            rc = tp_sim_mold_init(&mold, &mp, &to_faults, srv.fd >= 0 ? &store : NULL);
        if (rc < 0)
            return rc;
        tee.mold = &mold;
    }

    struct tp_sim_msg_sink sink = {
        .message = itch_tee_message, .step_done = itch_tee_step_done, .ctx = &tee};
    tee.model = m;
    tee.glimpse = &glimpse_snapshot;
    tee.glimpse_at = itch.glimpse_addr != NULL || itch.glimpse_file != NULL
                         ? (itch.glimpse_at > 0 ? itch.glimpse_at : 1)
                         : 0;
    rc = tp_sim_itch_run(m, o->messages, &sink);
    /* A sequence past the end of the feed: the snapshot of the end of the day. */
    if (rc == 0 && tee.glimpse_at > 0 && !tee.glimpse_taken) {
        tee.glimpse_taken = 1;
        rc = tp_sim_glimpse_build(&glimpse_snapshot, m, itch_tee_next_seq(&tee));
    }
    if (rc == 0 && tee.glimpse_taken)
        rc = glimpse_report(report);
    if (tee.binaryfile != NULL) {
        int close_rc = tp_sim_binaryfile_close(&bf);
        rc = rc < 0 ? rc : close_rc;
        fprintf(stderr, "tickplane-sim: %llu ITCH messages in %s\n", bf.messages,
                itch.binaryfile_path);
        json_object_set_new(report, "binaryfile_messages", json_integer((json_int_t)bf.messages));
    }
    if (packets) {
        if (rc == 0)
            rc = tp_sim_mold_finish(&mold);
        int close_rc = sim_outputs_close(&out);
        rc = rc < 0 ? rc : close_rc;
        json_object_set_new(report, "mold",
                            json_pack("{s:I,s:I,s:I,s:I}", "messages", (json_int_t)mold.messages,
                                      "packets", (json_int_t)mold.packets, "sessions",
                                      (json_int_t)mold.sessions, "reset_at_seq",
                                      (json_int_t)mold.reset_at_seq));
        sim_outputs_report(&out, o, report);
    }
    if (srv.fd >= 0) {
        if (itch.linger_ms > 0)
            tp_sim_rerequest_linger(&srv, (int)itch.linger_ms);
        json_object_set_new(report, "rerequest",
                            json_pack("{s:I,s:I,s:I}", "window", (json_int_t)store.window,
                                      "answered", (json_int_t)store.answered, "refused",
                                      (json_int_t)store.refused));
        tp_sim_rerequest_close(&srv);
        tp_sim_mold_store_free(&store);
    }
    return rc;
}

static int set_binaryfile(const char *arg)
{
    itch.binaryfile_path = arg;
    return 0;
}

static int set_rerequest(const char *arg)
{
    itch.rerequest_addr = arg;
    return 0;
}

static int set_rerequest_window(const char *arg)
{
    int rc = sim_parse_u64(arg, &itch.rerequest_window);
    return rc == 0 && itch.rerequest_window == 0 ? -EINVAL : rc;
}

static int set_linger_ms(const char *arg)
{
    return sim_parse_u64(arg, &itch.linger_ms);
}

static int set_glimpse(const char *arg)
{
    itch.glimpse_addr = arg;
    return 0;
}

static int set_glimpse_at(const char *arg)
{
    return sim_parse_u64(arg, &itch.glimpse_at);
}

static int set_glimpse_file(const char *arg)
{
    itch.glimpse_file = arg;
    return 0;
}

/* SoupBinTCP's login fields: a username of 6 characters, a password of 10. */
static int set_glimpse_user(const char *arg)
{
    itch.glimpse_user = arg;
    return strlen(arg) <= 6 ? 0 : -EINVAL;
}

static int set_glimpse_password(const char *arg)
{
    itch.glimpse_password = arg;
    return strlen(arg) <= 10 ? 0 : -EINVAL;
}

static int set_glimpse_serve_ms(const char *arg)
{
    return sim_parse_u64(arg, &itch.glimpse_serve_ms);
}

static int set_glimpse_refuse(const char *arg)
{
    return sim_parse_u32(arg, &itch.glimpse_faults.refuse);
}

static int set_glimpse_drops(const char *arg)
{
    return sim_parse_u32(arg, &itch.glimpse_faults.drops);
}

static int set_glimpse_drop_after(const char *arg)
{
    return sim_parse_u64(arg, &itch.glimpse_faults.drop_after);
}

static int set_glimpse_pause_us(const char *arg)
{
    return sim_parse_u32(arg, &itch.glimpse_faults.pause_us);
}

/* Serves the snapshot when all went well, then frees it. */
static void finish_itch(int rc)
{
    if (rc == 0)
        glimpse_serve();
    tp_sim_glimpse_free(&glimpse_snapshot);
}

static const struct sim_venue_option itch_options[] = {
    {"binaryfile", set_binaryfile},
    {"rerequest", set_rerequest},
    {"rerequest-window", set_rerequest_window},
    {"linger-ms", set_linger_ms},
    {"glimpse", set_glimpse},
    {"glimpse-at", set_glimpse_at},
    {"glimpse-file", set_glimpse_file},
    {"glimpse-user", set_glimpse_user},
    {"glimpse-password", set_glimpse_password},
    {"glimpse-serve-ms", set_glimpse_serve_ms},
    {"glimpse-refuse", set_glimpse_refuse},
    {"glimpse-drops", set_glimpse_drops},
    {"glimpse-drop-after", set_glimpse_drop_after},
    {"glimpse-pause-us", set_glimpse_pause_us},
};

const struct sim_venue sim_venue_itch = {
    .name = "itch",
    .usage =
        "itch:    --binaryfile F  --rerequest HOST:PORT --rerequest-window N --linger-ms MS\n"
        "         --glimpse HOST:PORT --glimpse-at SEQ --glimpse-file F --glimpse-serve-ms MS\n"
        "         --glimpse-user U --glimpse-password P --glimpse-refuse N\n"
        "         --glimpse-drops N --glimpse-drop-after MSGS --glimpse-pause-us US\n",
    .options = itch_options,
    .n_options = sizeof(itch_options) / sizeof(itch_options[0]),
    .min_packet_bytes = 100,
    .implied_depth = 0,
    .run = run_itch,
    .finish = finish_itch,
};
