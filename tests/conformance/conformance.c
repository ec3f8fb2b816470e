/*
 * conformance.c - the comparison engine and the per-capture test driver.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "conformance.h"

void actual_text(struct actuals *a, bool required, const char *path, const char *fmt, ...)
{
    assert_true(a->count < ACTUAL_MAX);
    struct actual *x = &a->items[a->count++];
    memset(x, 0, sizeof(*x));
    snprintf(x->path, sizeof(x->path), "%s", path);
    x->kind = ACTUAL_TEXT;
    x->required = required;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof(x->text), fmt, ap);
    va_end(ap);
}

void actual_price(struct actuals *a, const char *path, int64_t p9)
{
    assert_true(a->count < ACTUAL_MAX);
    struct actual *x = &a->items[a->count++];
    memset(x, 0, sizeof(*x));
    snprintf(x->path, sizeof(x->path), "%s", path);
    x->kind = ACTUAL_PRICE;
    x->p9 = p9;
    x->required = true;
}

bool decimal_to_p9(const char *s, int64_t *out)
{
    bool negative = *s == '-';
    s += negative;
    int64_t whole = 0, frac = 0;
    int frac_digits = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++)
        whole = whole * 10 + (*s - '0');
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++) {
            if (frac_digits == 9)
                return false; /* finer than price9 */
            frac = frac * 10 + (*s - '0');
            frac_digits++;
        }
    }
    if (*s != '\0')
        return false;
    for (; frac_digits < 9; frac_digits++)
        frac *= 10;
    *out = (whole * 1000000000 + frac) * (negative ? -1 : 1);
    return true;
}

static size_t trimmed_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    return n;
}

static void compare_leaf(const char *what, const char *path, const char *theirs, struct actuals *a)
{
    for (unsigned i = 0; i < a->count; i++) {
        struct actual *x = &a->items[i];
        if (strcmp(x->path, path) != 0)
            continue;
        x->matched = true;
        if (x->kind == ACTUAL_PRICE) {
            int64_t p9;
            if (!decimal_to_p9(theirs, &p9) || p9 != x->p9)
                fail_msg("%s: %s: expected price %s, decoded price9 %" PRId64, what, path, theirs,
                         x->p9);
        } else if (trimmed_len(theirs) != trimmed_len(x->text) ||
                   memcmp(theirs, x->text, trimmed_len(theirs)) != 0) {
            fail_msg("%s: %s: expected '%s', decoded '%s'", what, path, theirs, x->text);
        }
        return;
    }
    fail_msg("%s: %s (= '%s') has no mapping to our fields: add it to the table", what, path,
             theirs);
}

/* True for the label of a subtree: "" (or an array of them) next to the object's key_tree. */
static bool is_label(json_t *node, const char *key, json_t *value)
{
    char tree[256];
    snprintf(tree, sizeof(tree), "%s_tree", key);
    if (json_object_get(node, tree) == NULL)
        return false;
    if (json_is_string(value))
        return json_string_value(value)[0] == '\0';
    size_t i;
    json_t *item;
    json_array_foreach(value, i, item)
    {
        if (!json_is_string(item) || json_string_value(item)[0] != '\0')
            return false;
    }
    return json_is_array(value);
}

static void walk(const char *what, json_t *node, const char *prefix, struct actuals *a);

static void walk_value(const char *what, json_t *value, const char *path, struct actuals *a)
{
    if (json_is_object(value)) {
        walk(what, value, path, a);
    } else if (json_is_array(value)) {
        size_t i;
        json_t *item;
        json_array_foreach(value, i, item)
        {
            char at[256];
            snprintf(at, sizeof(at), "%s/%zu", path, i);
            walk_value(what, item, at, a);
        }
    } else if (json_is_string(value)) {
        compare_leaf(what, path, json_string_value(value), a);
    } else {
        fail_msg("%s: %s is neither a string, an array nor an object", what, path);
    }
}

static void walk(const char *what, json_t *node, const char *prefix, struct actuals *a)
{
    const char *key;
    json_t *value;
    json_object_foreach(node, key, value)
    {
        char path[256];
        snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "/" : "", key);
        if (is_label(node, key, value))
            continue;
        if (json_is_object(value) || json_is_array(value))
            walk_value(what, value, path, a);
        else if (strncmp(key, "padding", 7) == 0)
            continue;
        else if (json_is_string(value))
            compare_leaf(what, path, json_string_value(value), a);
        else
            fail_msg("%s: %s is neither a string nor an object", what, path);
    }
}

void conformance_compare(const char *what, json_t *expected, struct actuals *a)
{
    walk(what, expected, "", a);
    for (unsigned i = 0; i < a->count; i++)
        if (a->items[i].required && !a->items[i].matched)
            fail_msg("%s: decoded field %s is missing from the expected values", what,
                     a->items[i].path);
}

json_t *expect_member(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL)
        fail_msg("expected JSON has no '%s'", key);
    return v;
}

void check_flow(json_t *entry, const struct tp_udp_view *udp)
{
    char ip[16];
    uint32_t d = udp->key.dst_ip;
    snprintf(ip, sizeof(ip), "%u.%u.%u.%u", d >> 24, (d >> 16) & 0xff, (d >> 8) & 0xff, d & 0xff);
    assert_string_equal(json_string_value(expect_member(entry, "ip_dst")), ip);
    assert_int_equal(json_integer_value(expect_member(entry, "udp_dstport")), udp->key.dst_port);
    json_t *vlan = expect_member(entry, "vlan");
    if (json_is_null(vlan)) {
        assert_int_equal(udp->vlan_count, 0);
    } else {
        char id[8];
        snprintf(id, sizeof(id), "%u", udp->key.vlan);
        assert_true(udp->vlan_count > 0);
        assert_string_equal(json_string_value(vlan), id);
    }
}

/* ---- driver: one cmocka test per capture ----------------------------------------------- */

enum venue { VENUE_MDP3, VENUE_ITCH, VENUE_EOBI };

struct capture {
    char pcap[512];
    char expected[512];
    enum venue venue;
};

static void test_capture(void **state)
{
    const struct capture *c = *state;
    json_error_t jerr;
    json_t *expected = json_load_file(c->expected, 0, &jerr);
    if (expected == NULL)
        fail_msg("%s: %s (line %d)", c->expected, jerr.text, jerr.line);
    assert_true(json_is_array(expected));

    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(c->pcap, PCAP_TSTAMP_PRECISION_NANO, err);
    if (p == NULL)
        fail_msg("%s: %s", c->pcap, err);
    struct pcap_pkthdr *h;
    const u_char *data;
    size_t frame = 0;
    while (pcap_next_ex(p, &h, &data) == 1) {
        frame++;
        assert_true(frame <= json_array_size(expected));
        json_t *entry = json_array_get(expected, frame - 1);
        assert_int_equal(json_integer_value(expect_member(entry, "frame")), frame);
        struct tp_udp_view udp = {0};
        assert_int_equal(tp_net_parse_udp(data, h->caplen, 0, &udp), 0);
        check_flow(entry, &udp);
        if (c->venue == VENUE_ITCH)
            check_itch_frame(entry, udp.payload, udp.payload_len);
        else if (c->venue == VENUE_EOBI)
            check_eobi_frame(entry, udp.payload, udp.payload_len);
        else
            check_mdp3_frame(entry, udp.payload, udp.payload_len);
    }
    assert_int_equal(frame, json_array_size(expected));
    pcap_close(p);
    json_decref(expected);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct capture *)a)->pcap, ((const struct capture *)b)->pcap);
}

/* Adds dir's captures that have an .expected.json; returns how many. */
static size_t find_captures(const char *dir, enum venue venue, struct capture *out, size_t room)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < room) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".pcap") != 0)
            continue;
        struct capture *c = &out[n];
        snprintf(c->pcap, sizeof(c->pcap), "%s/%s", dir, e->d_name);
        snprintf(c->expected, sizeof(c->expected), "%s/%.*s.expected.json", dir, (int)(len - 5),
                 e->d_name);
        c->venue = venue;
        struct stat st;
        if (stat(c->expected, &st) == 0)
            n++;
    }
    closedir(d);
    qsort(out, n, sizeof(out[0]), by_name);
    return n;
}

#define MAX_CAPTURES 256

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "";
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("SKIP: conformance directory '%s' not found: the reference captures are not on "
               "this machine\n",
               root);
        return 77; /* meson: skipped */
    }
    static struct capture captures[MAX_CAPTURES];
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/cme-mdp3-v9", root);
    size_t n = find_captures(dir, VENUE_MDP3, captures, MAX_CAPTURES);
    snprintf(dir, sizeof(dir), "%s/nasdaq-itch50", root);
    n += find_captures(dir, VENUE_ITCH, captures + n, MAX_CAPTURES - n);
    snprintf(dir, sizeof(dir), "%s/eurex-eobi-t7-v6", root);
    n += find_captures(dir, VENUE_EOBI, captures + n, MAX_CAPTURES - n);
    if (n == 0) {
        printf("SKIP: no captures with .expected.json under '%s'\n", root);
        return 77;
    }
    static struct CMUnitTest tests[MAX_CAPTURES];
    for (size_t i = 0; i < n; i++) {
        const char *slash = strrchr(captures[i].pcap, '/');
        tests[i] = (struct CMUnitTest){.name = slash ? slash + 1 : captures[i].pcap,
                                       .test_func = test_capture,
                                       .initial_state = &captures[i]};
    }
    return _cmocka_run_group_tests("conformance", tests, n, NULL, NULL);
}
