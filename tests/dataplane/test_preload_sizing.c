/*
 * The preload plan's sizing rule (control/config/preload_plan.h, written without DPDK) against
 * this DPDK's own arithmetic, without EAL: a class's mempool object is exactly what
 * rte_mempool_calc_obj_size gives for rte_pktmbuf_pool_create's element, a ring rounded up to a
 * power of two stays within the rule's two slots a frame, and a plan's bytes cover what
 * dataplane/ports/preload.c's pools and ring take. A DPDK whose layout differs fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "preload_plan.h"

/* rte_pktmbuf_pool_create(..., priv_size 0, data_room): an mbuf header and the room, flags 0. */
static void test_object_is_dpdks(void **state)
{
    (void)state;
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++) {
        struct rte_mempool_objsz sz;
        uint32_t total = rte_mempool_calc_obj_size(
            (uint32_t)sizeof(struct rte_mbuf) + tp_preload_room(c), 0, &sz);
        if (total != tp_preload_object_bytes(c))
            fail_msg("class %u (room %u): DPDK's object is %u bytes, the rule's %llu", c,
                     tp_preload_room(c), total, (unsigned long long)tp_preload_object_bytes(c));
    }
}

/* The bytes of a ring for n objects as the mempool and the preload's rx ring make it (n + 1
 * slots rounded up to a power of two). */
static uint64_t ring_bytes(uint32_t n)
{
    ssize_t bytes = rte_ring_get_memsize(rte_align32pow2(n + 1));
    assert_true(bytes > 0);
    return (uint64_t)bytes;
}

static void test_ring_within_two_slots_a_frame(void **state)
{
    (void)state;
    static const uint32_t counts[] = {1, 2, 3, 127, 128, 1000, 65535, 65536, 1000000};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        uint64_t header = ring_bytes(0);
        assert_true(ring_bytes(counts[i]) - header <= 2ull * TP_PRELOAD_RING_SLOT * counts[i]);
    }
}

/* What preload.c allocates for plan: per class with frames a pool (its header with per-lcore
 * caches, its objects, its ring), and the port's rx ring. */
static uint64_t dpdk_bytes(const struct tp_preload_plan *plan)
{
    uint64_t bytes = ring_bytes(plan->frames);
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++) {
        uint32_t n = plan->class_frames[c];
        if (n == 0)
            continue;
        struct rte_mempool_objsz sz;
        uint32_t object = rte_mempool_calc_obj_size(
            (uint32_t)sizeof(struct rte_mbuf) + tp_preload_room(c), 0, &sz);
        bytes += sizeof(struct rte_mempool) + RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) +
                 (uint64_t)n * object + ring_bytes(n);
    }
    return bytes;
}

static void test_plan_covers_the_pools(void **state)
{
    (void)state;
    static struct tp_preload_plan plan;
    static const uint32_t shapes[][3] = {
        {1, 0, 0}, {1000000, 0, 0}, {900000, 100000, 3}, {5, 5, 5}, {65537, 1, 1 << 20}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        memset(&plan, 0, sizeof(plan));
        static const unsigned classes[3] = {1, 11, TP_PRELOAD_CLASSES - 1};
        for (unsigned k = 0; k < 3; k++) {
            plan.class_frames[classes[k]] = shapes[s][k];
            plan.frames += shapes[s][k];
        }
        uint64_t need = dpdk_bytes(&plan), estimate = tp_preload_plan_bytes(&plan);
        if (estimate < need)
            fail_msg("shape %zu: the plan counts %llu bytes, DPDK takes %llu", s,
                     (unsigned long long)estimate, (unsigned long long)need);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_is_dpdks),
        cmocka_unit_test(test_ring_within_two_slots_a_frame),
        cmocka_unit_test(test_plan_covers_the_pools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
