/*
 * Simulator: every frame of a generated pcap carries a correct UDP checksum, except the frames the
 * fault report lists as corrupted, whose checksum is the one of the uncorrupted payload (the byte
 * was flipped "on the wire", after the checksum was computed).
 *   argv[1..2]: an ITCH run with line A truncated now and then, line B corrupted (pcap, report)
 * Payload corruption is the only kind the simulator makes (Ethernet and IP headers stay intact:
 * every frame must parse with a correct IPv4 header checksum).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <pcap/pcap.h>

#include "net_build.h"
#include "net_parse.h"
#include "packet.h"

#define MAX_FRAMES 4096

static char **paths;

/* One line's incremental frames, in the order sent (the run has no loss or reordering). */
struct line_frames {
    uint8_t *frame[MAX_FRAMES];
    size_t len[MAX_FRAMES];
    size_t n;
};

/* The stored UDP checksum is the one of the segment as it stands (tp_udp_checksum: tests/net). */
static int udp_checksum_correct(const struct tp_udp_view *v)
{
    const uint8_t *udp = v->payload - TP_UDP_HDR_LEN;
    size_t udp_len = TP_UDP_HDR_LEN + (size_t)v->payload_len;
    return tp_load_be16(udp + 6) == tp_udp_checksum(v->src_ip, v->key.dst_ip, udp, udp_len);
}

static void read_lines(const char *path, struct line_frames lines[TP_SIM_LINES])
{
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(path, err);
    assert_non_null(p);
    struct pcap_pkthdr *h;
    const u_char *data;
    while (pcap_next_ex(p, &h, &data) == 1) {
        struct tp_udp_view v;
        assert_int_equal(tp_net_parse_udp(data, h->caplen, TP_NET_CHECK_IP_CSUM, &v), 0);
        assert_int_equal(h->caplen, h->len);
        /* the simulator's source MAC names the stream and line (tools/sim/pcap_out.c) */
        assert_int_equal(data[10], TP_SIM_STREAM_INCREMENTAL);
        assert_true(data[11] < TP_SIM_LINES);
        struct line_frames *l = &lines[data[11]];
        assert_true(l->n < MAX_FRAMES);
        l->frame[l->n] = malloc(h->caplen);
        assert_non_null(l->frame[l->n]);
        memcpy(l->frame[l->n], data, h->caplen);
        l->len[l->n++] = h->caplen;
    }
    pcap_close(p);
}

static struct tp_udp_view parse(const uint8_t *frame, size_t len)
{
    struct tp_udp_view v;
    assert_int_equal(tp_net_parse_udp(frame, len, 0, &v), 0);
    return v;
}

/* Source packet index -> reported byte offset + 1 (0: not listed) for one fault kind. */
static size_t listed(json_t *report, const char *line, const char *kind, const char *field,
                     uint32_t *out)
{
    json_t *arr = json_object_get(json_object_get(json_object_get(report, "lines"), line), kind);
    assert_non_null(arr);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_int_t index = json_integer_value(json_object_get(e, "index"));
        assert_true(index >= 0 && index < MAX_FRAMES);
        out[index] = 1 + (uint32_t)json_integer_value(json_object_get(e, field));
    }
    return json_array_size(arr);
}

static void test_checksums_match_report(void **state)
{
    (void)state;
    static struct line_frames lines[TP_SIM_LINES];
    read_lines(paths[1], lines);
    json_error_t err;
    json_t *report = json_load_file(paths[2], 0, &err);
    assert_non_null(report);
    static uint32_t corrupt_b[MAX_FRAMES], truncated_a[MAX_FRAMES];
    size_t n_corrupt = listed(report, "B", "corrupted", "offset", corrupt_b);
    size_t n_truncated = listed(report, "A", "truncated", "len", truncated_a);
    assert_true(n_corrupt >= 10 && n_truncated >= 10);
    assert_int_equal(lines[0].n, lines[1].n);
    assert_true(lines[0].n > 500);

    size_t bad_b = 0, compared = 0;
    for (size_t i = 0; i < lines[0].n; i++) {
        const uint8_t *fa = lines[0].frame[i], *fb = lines[1].frame[i];
        struct tp_udp_view a = parse(fa, lines[0].len[i]), b = parse(fb, lines[1].len[i]);
        /* Line A is never corrupted: truncated or not, its checksum holds. */
        assert_true(udp_checksum_correct(&a));
        if (truncated_a[i])
            assert_int_equal(a.payload_len, truncated_a[i] - 1);
        int b_ok = udp_checksum_correct(&b);
        assert_int_equal(b_ok, corrupt_b[i] == 0);
        bad_b += !b_ok;
        if (truncated_a[i]) {
            assert_int_equal(corrupt_b[i], 0); /* the seed keeps the two faults apart */
            continue;
        }
        /* Same payload on both lines, except the one reported byte of a corrupted frame. */
        assert_int_equal(a.payload_len, b.payload_len);
        for (size_t k = 0; k < b.payload_len; k++)
            assert_int_equal(a.payload[k] != b.payload[k], corrupt_b[i] == k + 1);
        if (corrupt_b[i]) {
            /* Putting the original byte back makes B's checksum right: it was computed before. */
            uint8_t *restored = lines[1].frame[i];
            size_t at = (size_t)(b.payload - fb) + corrupt_b[i] - 1;
            restored[at] = a.payload[corrupt_b[i] - 1];
            assert_true(udp_checksum_correct(&b));
            compared++;
        }
    }
    assert_int_equal(bad_b, n_corrupt);
    assert_int_equal(compared, n_corrupt);

    for (int l = 0; l < TP_SIM_LINES; l++)
        for (size_t i = 0; i < lines[l].n; i++)
            free(lines[l].frame[i]);
    json_decref(report);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s itch.pcap itch.report\n", argv[0]);
        return 2;
    }
    paths = argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checksums_match_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
