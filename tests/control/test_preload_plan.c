/*
 * The preload plan (control/config/preload_plan.h) without DPDK: size classes at their
 * boundaries, the objects' bytes, a capture counted by class and its bytes. test_config.c holds
 * the config's estimate of a preloaded port to the plan's bytes (so it counts the pools
 * dataplane/ports/preload.c creates from the same plan); tests/dataplane/test_preload_sizing.c
 * holds the rule's DPDK figures to DPDK's own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pcap_reader.h"
#include "pcap_writer.h"
#include "preload_plan.h"

/* A frame's class is the smallest data room (a multiple of the step) with the headroom and it. */
static void test_classes(void **state)
{
    (void)state;
    assert_int_equal(tp_preload_class(0), 0);
    assert_int_equal(tp_preload_class(1), 1);
    assert_int_equal(tp_preload_class(128), 1);
    assert_int_equal(tp_preload_class(129), 2);
    assert_int_equal(tp_preload_class(1400), 11);
    assert_int_equal(tp_preload_class(TP_PRELOAD_FRAME_MAX), TP_PRELOAD_CLASSES - 1);
    for (uint32_t bytes = 0; bytes <= TP_PRELOAD_FRAME_MAX; bytes++) {
        uint32_t room = tp_preload_room(tp_preload_class(bytes));
        if (room < TP_PRELOAD_HEADROOM + bytes ||
            room - TP_PRELOAD_ROOM_STEP >= TP_PRELOAD_HEADROOM + bytes)
            fail_msg("a frame of %u bytes gets a data room of %u", bytes, room);
    }
}

/* An odd number of cache lines that hold the object header, the mbuf header and the room. */
static void test_object_bytes(void **state)
{
    (void)state;
    assert_int_equal(tp_preload_object_bytes(0), 5 * 64);   /* 64 + 128 + 128 */
    assert_int_equal(tp_preload_object_bytes(1), 7 * 64);   /* 64 + 128 + 256 */
    assert_int_equal(tp_preload_object_bytes(2), 9 * 64);   /* 64 + 128 + 384: 9 lines, odd */
    assert_int_equal(tp_preload_object_bytes(11), 27 * 64); /* 64 + 128 + 1536 */
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++) {
        uint64_t bytes = tp_preload_object_bytes(c);
        uint64_t need = TP_PRELOAD_OBJ_HEADER + TP_PRELOAD_MBUF_HEADER + tp_preload_room(c);
        assert_true(bytes >= need && bytes < need + 2 * TP_PRELOAD_LINE);
        assert_int_equal(bytes / TP_PRELOAD_LINE % 2, 1);
    }
}

static const uint32_t lens[] = {60, 100, 0, 200, 1400, 128, 129, 60};

static const char *write_capture(void)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/tp-test-preload-plan-%d.pcap", (int)getpid());
    struct tp_pcap_writer w;
    assert_int_equal(tp_pcap_writer_open(&w, path), 0);
    static const uint8_t zeros[1400];
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        assert_int_equal(tp_pcap_writer_write(&w, i, zeros, lens[i]), 0);
    assert_int_equal(tp_pcap_writer_close(&w), 0);
    return path;
}

/* Frames by class, the largest, and the bytes: per frame its object and 32 bytes of ring slots,
 * per class with frames one pool. */
static void test_scan(void **state)
{
    (void)state;
    const char *path = write_capture();
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct tp_preload_plan plan;
    char why[160] = "";
    assert_int_equal(tp_preload_plan_scan(&plan, f, why, sizeof(why)), 0);
    fclose(f);
    assert_string_equal(why, "");
    assert_int_equal(plan.frames, 8);
    assert_int_equal(plan.max_frame, 1400);
    uint32_t want[TP_PRELOAD_CLASSES] = {0};
    want[0] = 1;  /* 0 */
    want[1] = 4;  /* 60, 100, 128, 60 */
    want[2] = 2;  /* 200, 129 */
    want[11] = 1; /* 1400 */
    assert_memory_equal(plan.class_frames, want, sizeof(want));
    uint64_t bytes = 4 * (uint64_t)TP_PRELOAD_POOL_BYTES + 1 * (5 * 64 + 32) + 4 * (7 * 64 + 32) +
                     2 * (9 * 64 + 32) + 1 * (27 * 64 + 32);
    assert_int_equal(tp_preload_plan_bytes(&plan), bytes);
    unlink(path);
}

/* A capture the reader refuses: the reader's reason, and the frames counted before it. */
static void test_scan_refused(void **state)
{
    (void)state;
    const char *path = write_capture();
    assert_int_equal(truncate(path, 24 + 16 + 60 + 16 + 50), 0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct tp_preload_plan plan;
    char why[160];
    assert_int_equal(tp_preload_plan_scan(&plan, f, why, sizeof(why)), TP_PCAP_EFRAME);
    fclose(f);
    assert_string_equal(why, "truncated: frame 2 has 50 of its 100 bytes");
    assert_int_equal(plan.frames, 1);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_object_bytes),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_scan_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
