/*
 * test_dump.c - tickplane-dump end to end: a pcap built here (ITCH over MoldUDP64 on a VLAN,
 * MDP3, a heartbeat, an ARP frame, an unmapped flow, a cut IPv4 frame, a lying Mold count), a
 * pcapng file and a BinaryFILE; checks every JSON line, the stderr reports with frame and offset
 * (or the file the pcap reader refused, with its reason), and the exit status. The tool's path is
 * the first argument.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "binaryfile.h"
#include "itch50.h"
#include "mdp3_packet.h"
#include "moldudp64.h"
#include "net_build.h"
#include "pcap_writer.h"

static const char *dump_path;
static char dir[] = "/tmp/tp_test_dump_XXXXXX";

#define ITCH_GROUP 0xe9360c6fu /* 233.54.12.111 */
#define MDP3_GROUP 0xe0001c14u /* 224.0.28.20 */

/* Runs the tool with args, stdout and stderr to files; returns its exit status. */
static int run_dump(const char *args, const char *out, const char *err)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", dump_path, args, out, err);
    assert_true(n > 0 && (size_t)n < sizeof(cmd));
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    return WEXITSTATUS(rc);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Parses the JSON lines of path into lines[]; returns how many. */
static size_t load_lines(const char *path, json_t **lines, size_t max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[8192];
    size_t n = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        assert_true(n < max);
        json_error_t err;
        lines[n] = json_loads(line, 0, &err);
        if (lines[n] == NULL)
            fail_msg("not JSON: %s (%s)", line, err.text);
        n++;
    }
    fclose(f);
    return n;
}

static void write_frame(struct tp_pcap_writer *w, uint32_t group, uint16_t port, uint16_t vlan,
                        const uint8_t *payload, size_t len, uint64_t ts)
{
    struct tp_udp_frame_spec s = {.vlan_count = vlan ? 1 : 0,
                                  .vlan = {vlan},
                                  .src_ip = 0x0a000001,
                                  .dst_ip = group,
                                  .src_port = 40000,
                                  .dst_port = port};
    uint8_t frame[2048];
    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, len);
    assert_true(n > 0);
    assert_int_equal(tp_pcap_writer_write(w, ts, frame, (size_t)n), 0);
}

/* A Mold packet with an add order and a delete, sequence 500. */
static size_t itch_packet(uint8_t *buf, size_t cap)
{
    struct tp_mold_writer mw;
    tp_mold_writer_init(&mw, buf, cap, "SESSION001", 500);
    struct tp_itch_add_order a = {.stock_locate = 7,
                                  .order_ref = 42,
                                  .side = 'B',
                                  .shares = 300,
                                  .price = 1234500,
                                  .timestamp = 34200000000001ull};
    tp_itch_alpha_set(a.stock, sizeof(a.stock), "AAPL");
    tp_itch_add_order_encode(tp_mold_writer_reserve(&mw, 36), 36, &a);
    struct tp_itch_order_delete d = {.stock_locate = 7, .order_ref = 42};
    tp_itch_order_delete_encode(tp_mold_writer_reserve(&mw, 19), 19, &d);
    return mw.len;
}

static size_t mdp3_packet(uint8_t *buf, size_t cap)
{
    struct tp_mdp3_writer w;
    tp_mdp3_writer_init(&w, buf, cap, 77, 1536760535685381248ull);
    size_t room;
    uint8_t *sbe = tp_mdp3_writer_reserve(&w, &room);
    struct mktdata_md_incremental_refresh_book46 m = {0};
    struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o = {0};
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_and_apply_header(&m, sbe, room), 0);
    mktdata_md_incremental_refresh_book46_set_transact_time(&m, 1536760535644820404ull);
    mktdata_md_incremental_refresh_book46_set_match_event_indicator(&m, 0x80);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_encode(&m, &g, 1),
                     0);
    mktdata_md_incremental_refresh_book46_no_md_entries_next(&g);
    mktdata_md_incremental_refresh_book46_no_md_entries_set_security_id(&g, 5893);
    mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_px_mantissa(&g,
                                                                                 13003000000000);
    assert_int_equal(
        mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_encode(&m, &o, 0), 0);
    assert_int_equal(
        tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                      mktdata_md_incremental_refresh_book46_encoded_length(&m)),
        0);
    return w.len;
}

static void make_pcap(const char *path, int with_bad_frames)
{
    struct tp_pcap_writer w;
    assert_int_equal(tp_pcap_writer_open(&w, path), 0);
    uint8_t pkt[1500];
    size_t n = itch_packet(pkt, sizeof(pkt));
    write_frame(&w, ITCH_GROUP, 26477, 141, pkt, n, 1000); /* frame 1: 2 ITCH lines */
    size_t m = mdp3_packet(pkt, sizeof(pkt));
    write_frame(&w, MDP3_GROUP, 14361, 0, pkt, m, 2000); /* frame 2: 1 MDP3 line */
    uint8_t hb[20];
    tp_mold_encode_control(hb, sizeof(hb), "SESSION001", 502, 0);
    write_frame(&w, ITCH_GROUP, 26477, 141, hb, sizeof(hb), 3000); /* frame 3: heartbeat */
    uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06};
    assert_int_equal(tp_pcap_writer_write(&w, 4000, arp, sizeof(arp)), 0); /* frame 4: skipped */
    write_frame(&w, 0xe0000001, 9999, 0, pkt, m, 5000); /* frame 5: unmapped flow, skipped */
    if (with_bad_frames) {
        n = itch_packet(pkt, sizeof(pkt));
        struct tp_udp_frame_spec s = {.dst_ip = ITCH_GROUP, .dst_port = 26477};
        uint8_t frame[2048];
        int len = tp_net_build_udp(frame, sizeof(frame), &s, pkt, n);
        assert_int_equal(tp_pcap_writer_write(&w, 6000, frame, 30), 0); /* frame 6: cut IPv4 */
        pkt[19] = 3; /* frame 7: count 3, 2 blocks: both print, then a report */
        len = tp_net_build_udp(frame, sizeof(frame), &s, pkt, n);
        assert_int_equal(tp_pcap_writer_write(&w, 7000, frame, (size_t)len), 0);
    }
    assert_int_equal(tp_pcap_writer_close(&w), 0);
}

static void test_pcap_with_map(void **state)
{
    (void)state;
    char pcap[512], out[512], err[512];
    snprintf(pcap, sizeof(pcap), "%s/in.pcap", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(err, sizeof(err), "%s/err", dir);
    make_pcap(pcap, 1);
    char args[1024];
    snprintf(args, sizeof(args),
             "--map 233.54.12.111:26477@141=itch,224.0.28.20:14361=mdp3,"
             "233.54.12.111:26477=itch --summary '%s'",
             pcap);
    assert_int_equal(run_dump(args, out, err), 1);

    json_t *lines[16];
    size_t n = load_lines(out, lines, 16);
    assert_int_equal(n, 2 + 1 + 1 + 2);
    /* frame 1, first ITCH message */
    assert_int_equal(json_integer_value(json_object_get(lines[0], "frame")), 1);
    assert_int_equal(json_integer_value(json_object_get(lines[0], "ts_ns")), 1000);
    assert_string_equal(json_string_value(json_object_get(lines[0], "dst")), "233.54.12.111:26477");
    assert_string_equal(json_string_value(json_object_get(lines[0], "src")), "10.0.0.1:40000");
    assert_int_equal(json_integer_value(json_object_get(lines[0], "vlan")), 141);
    assert_string_equal(json_string_value(json_object_get(lines[0], "proto")), "itch");
    assert_string_equal(json_string_value(json_object_get(lines[0], "session")), "SESSION001");
    assert_int_equal(json_integer_value(json_object_get(lines[0], "seq")), 500);
    json_t *msg = json_object_get(lines[0], "msg");
    assert_string_equal(json_string_value(json_object_get(msg, "message")), "add_order");
    assert_string_equal(json_string_value(json_object_get(msg, "price")), "123.4500");
    assert_string_equal(json_string_value(json_object_get(msg, "stock")), "AAPL");
    assert_int_equal(json_integer_value(json_object_get(lines[1], "seq")), 501);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(lines[1], "msg"), "message")),
        "order_delete");
    /* frame 2: MDP3 */
    assert_string_equal(json_string_value(json_object_get(lines[2], "proto")), "mdp3");
    assert_true(json_is_null(json_object_get(lines[2], "vlan")));
    assert_int_equal(json_integer_value(json_object_get(lines[2], "seq")), 77);
    assert_int_equal(json_integer_value(json_object_get(lines[2], "template_id")), 46);
    json_t *entries = json_object_get(json_object_get(lines[2], "msg"), "NoMDEntries");
    assert_int_equal(json_array_size(entries), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(entries, 0), "SecurityID")),
                     5893);
    /* frame 3: heartbeat */
    assert_string_equal(json_string_value(json_object_get(lines[3], "mold")), "heartbeat");
    assert_int_equal(json_integer_value(json_object_get(lines[3], "seq")), 502);
    /* frame 7: the two real blocks of the lying packet, untagged so the any-VLAN rule */
    assert_int_equal(json_integer_value(json_object_get(lines[4], "frame")), 7);
    assert_int_equal(json_integer_value(json_object_get(lines[5], "index")), 2);
    for (size_t i = 0; i < n; i++)
        json_decref(lines[i]);

    const char *e = slurp(err);
    assert_non_null(strstr(e, "frame 6 offset 0: frame ends inside a header"));
    /* frame 7: untagged, payload at 42; the missing third block would start after both */
    char want[128];
    snprintf(want, sizeof(want), "frame 7 offset %d: MoldUDP64 block 3 of 3", 42 + 20 + 38 + 21);
    assert_non_null(strstr(e, want));
    assert_non_null(strstr(e, "7 frames, 5 messages, 2 malformed, 2 skipped"));
}

/*
 * What the dump must not lose: a one-byte code that is a space, the schema versions behind an
 * MDP3 template it does not know, and TCP segments it skips.
 */
static void test_fidelity(void **state)
{
    (void)state;
    char pcap[512], out[512], err[512];
    snprintf(pcap, sizeof(pcap), "%s/fidelity.pcap", dir);
    snprintf(out, sizeof(out), "%s/fidelity.out", dir);
    snprintf(err, sizeof(err), "%s/fidelity.err", dir);
    struct tp_pcap_writer w;
    assert_int_equal(tp_pcap_writer_open(&w, pcap), 0);
    uint8_t pkt[1500];
    struct tp_mold_writer mw;
    tp_mold_writer_init(&mw, pkt, sizeof(pkt), "SESSION001", 900);
    struct tp_itch_noii noii = {.stock_locate = 7,
                                .paired_shares = 100,
                                .imbalance_direction = 'N',
                                .cross_type = 'O',
                                .price_variation_indicator = ' '};
    tp_itch_alpha_set(noii.stock, sizeof(noii.stock), "AAPL");
    tp_itch_noii_encode(tp_mold_writer_reserve(&mw, 50), 50, &noii);
    write_frame(&w, ITCH_GROUP, 26477, 0, pkt, mw.len, 1000); /* frame 1 */
    size_t m = mdp3_packet(pkt, sizeof(pkt));
    /* The message header after the packet header (12 bytes) and MsgSize (2): template 32 of
     * schema version 5. */
    memcpy(pkt + 12 + 2 + 2, (uint8_t[]){32, 0}, 2); /* little-endian, as SBE */
    memcpy(pkt + 12 + 2 + 6, (uint8_t[]){5, 0}, 2);
    write_frame(&w, MDP3_GROUP, 14361, 0, pkt, m, 2000); /* frame 2 */
    struct tp_udp_frame_spec spec = {.dst_ip = ITCH_GROUP, .dst_port = 26477};
    uint8_t frame[2048];
    int len = tp_net_build_udp(frame, sizeof(frame), &spec, pkt, 40);
    assert_true(len > 0);
    frame[TP_ETHER_HDR_LEN + 9] = 6; /* frame 3: the same bytes as a TCP segment */
    assert_int_equal(tp_pcap_writer_write(&w, 3000, frame, (size_t)len), 0);
    assert_int_equal(tp_pcap_writer_close(&w), 0);

    char args[1024];
    snprintf(args, sizeof(args), "--map 233.54.12.111:26477=itch,224.0.28.20:14361=mdp3 '%s'",
             pcap);
    assert_int_equal(run_dump(args, out, err), 1); /* the unknown template is reported */
    json_t *lines[4];
    assert_int_equal(load_lines(out, lines, 4), 2);
    json_t *msg = json_object_get(lines[0], "msg");
    assert_string_equal(json_string_value(json_object_get(msg, "message")), "noii");
    assert_string_equal(json_string_value(json_object_get(msg, "price_variation_indicator")), " ");
    assert_string_equal(json_string_value(json_object_get(msg, "cross_type")), "O");
    assert_string_equal(json_string_value(json_object_get(msg, "stock")), "AAPL");
    assert_int_equal(json_integer_value(json_object_get(lines[1], "version")), 5);
    json_decref(lines[0]);
    json_decref(lines[1]);
    const char *e = slurp(err);
    char want[160];
    snprintf(want, sizeof(want),
             "MDP3 template 32 is not in the schema (the message's schema version is 5, this "
             "build decodes version %u)",
             (unsigned)MKTDATA_SCHEMA_VERSION);
    assert_non_null(strstr(e, want));
    assert_non_null(strstr(e, "tickplane-dump: 1 TCP segments skipped (UDP feeds only)"));
}

static void test_clean_pcap_exits_zero(void **state)
{
    (void)state;
    char pcap[512], out[512], err[512];
    snprintf(pcap, sizeof(pcap), "%s/clean.pcap", dir);
    snprintf(out, sizeof(out), "%s/out2", dir);
    snprintf(err, sizeof(err), "%s/err2", dir);
    make_pcap(pcap, 0);
    char args[1024];
    /* --proto for every flow: the MDP3 packet on port 14361 is mapped, the rest decode as ITCH
     * (the unmapped flow carries MDP3 bytes, which ITCH framing refuses: malformed). */
    snprintf(args, sizeof(args), "--map 224.0.28.20:14361=mdp3 --proto itch '%s'", pcap);
    assert_int_equal(run_dump(args, out, err), 1);
    assert_non_null(strstr(slurp(err), "frame 5 "));
    snprintf(args, sizeof(args), "--map 224.0.28.20:14361=mdp3,233.54.12.111:26477=itch '%s'",
             pcap);
    assert_int_equal(run_dump(args, out, err), 0);
    assert_string_equal(slurp(err), "");
}

/* A capture cut inside its last record: the frames before it print, the cut is reported. */
static void test_truncated_pcap(void **state)
{
    (void)state;
    char pcap[512], out[512], err[512];
    snprintf(pcap, sizeof(pcap), "%s/cut.pcap", dir);
    snprintf(out, sizeof(out), "%s/out5", dir);
    snprintf(err, sizeof(err), "%s/err5", dir);
    make_pcap(pcap, 0);
    FILE *f = fopen(pcap, "rb+");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(pcap, size - 5), 0);
    char args[1024];
    snprintf(args, sizeof(args), "--map 224.0.28.20:14361=mdp3,233.54.12.111:26477=itch '%s'",
             pcap);
    assert_int_equal(run_dump(args, out, err), 1);
    json_t *lines[16];
    size_t n = load_lines(out, lines, 16);
    assert_int_equal(n, 4); /* frames 1-3; frame 5 (unmapped) is the cut one */
    for (size_t i = 0; i < n; i++)
        json_decref(lines[i]);
    char want[600];
    snprintf(want, sizeof(want), "frame 5 offset 0: %s: truncated: frame 5 has ", pcap);
    assert_non_null(strstr(slurp(err), want));
}

/* A capture the reader refuses (a pcapng section header cut short): nothing printed, the file
 * and the reason on stderr, status 2. */
static void test_refused_capture(void **state)
{
    (void)state;
    char path[512], out[512], err[512];
    snprintf(path, sizeof(path), "%s/in.pcapng", dir);
    snprintf(out, sizeof(out), "%s/out6", dir);
    snprintf(err, sizeof(err), "%s/err6", dir);
    /* A pcapng section header block's type, length and byte-order magic. */
    static const uint8_t section_header[] = {0x0a, 0x0d, 0x0d, 0x0a, 28,   0,
                                             0,    0,    0x4d, 0x3c, 0x2b, 0x1a};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(section_header, 1, sizeof(section_header), f), sizeof(section_header));
    assert_int_equal(fclose(f), 0);
    char args[600], want[600];
    snprintf(args, sizeof(args), "--proto itch '%s'", path);
    assert_int_equal(run_dump(args, out, err), 2);
    assert_string_equal(slurp(out), "");
    snprintf(want, sizeof(want),
             "tickplane-dump: %s: truncated: a pcapng block after frame 0 is cut short\n", path);
    assert_string_equal(slurp(err), want);
}

static void test_binaryfile(void **state)
{
    (void)state;
    char path[512], out[512], err[512];
    snprintf(path, sizeof(path), "%s/itch.bin", dir);
    snprintf(out, sizeof(out), "%s/out3", dir);
    snprintf(err, sizeof(err), "%s/err3", dir);
    uint8_t file[256];
    size_t len = 0;
    struct tp_itch_system_event s = {.event_code = 'O'};
    uint8_t m[12];
    tp_itch_system_event_encode(m, sizeof(m), &s);
    tp_binfile_append(file, sizeof(file), &len, m, 12);
    m[0] = 'Z'; /* unknown type: reported, line printed with msg null */
    tp_binfile_append(file, sizeof(file), &len, m, 12);
    tp_binfile_append(file, sizeof(file), &len, m, 12);
    len -= 5; /* cut the third block */
    FILE *f = fopen(path, "wb");
    fwrite(file, 1, len, f);
    fclose(f);
    char args[600];
    snprintf(args, sizeof(args), "--binaryfile '%s'", path);
    assert_int_equal(run_dump(args, out, err), 1);
    json_t *lines[4];
    assert_int_equal(load_lines(out, lines, 4), 2);
    assert_int_equal(json_integer_value(json_object_get(lines[0], "offset")), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(lines[0], "msg"), "event_code")), "O");
    assert_int_equal(json_integer_value(json_object_get(lines[1], "offset")), 14);
    assert_true(json_is_null(json_object_get(lines[1], "msg")));
    json_decref(lines[0]);
    json_decref(lines[1]);
    const char *e = slurp(err);
    assert_non_null(strstr(e, "file offset 16: unknown ITCH message type 0x5a"));
    assert_non_null(strstr(e, "file offset 28: BinaryFILE block runs past the end"));
}

static void test_usage_errors(void **state)
{
    (void)state;
    char out[512], err[512];
    snprintf(out, sizeof(out), "%s/out4", dir);
    snprintf(err, sizeof(err), "%s/err4", dir);
    assert_int_equal(run_dump("--proto fix x.pcap", out, err), 2);
    assert_int_equal(run_dump("--map 1.2.3.4=itch x.pcap", out, err), 2);
    assert_int_equal(run_dump("--map 1.2.3.4:99999=itch x.pcap", out, err), 2);
    assert_int_equal(run_dump("--map 1.2.3.4:80@4096=itch x.pcap", out, err), 2);
    assert_int_equal(run_dump("--map 300.2.3.4:80=itch x.pcap", out, err), 2);
    assert_int_equal(run_dump("--map 1.2.3.4:80=fix x.pcap", out, err), 2);
    assert_non_null(strstr(slurp(err), "bad flow rule '1.2.3.4:80=fix'"));
    assert_int_equal(run_dump("x.pcap", out, err), 2); /* no protocol */
    assert_int_equal(run_dump("--proto itch /nonexistent.pcap", out, err), 2);
    assert_int_equal(run_dump("--binaryfile /nonexistent.bin", out, err), 2);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_dump PATH-TO-tickplane-dump\n");
        return 2;
    }
    dump_path = argv[1];
    if (mkdtemp(dir) == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcap_with_map),  cmocka_unit_test(test_clean_pcap_exits_zero),
        cmocka_unit_test(test_truncated_pcap), cmocka_unit_test(test_refused_capture),
        cmocka_unit_test(test_binaryfile),     cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_fidelity),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
