/*
 * Config loading and validation: see config.h. The loader reads every section in order (each
 * section only needs the ones before it), records every problem with its JSON path, then runs the
 * cross-section checks (lcores vs the EAL list, channel placement, memory budget).
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cme_channels.h"
#include "json_walk.h"
#include "log.h"
#include "preload_plan.h"
#include "../util/glob.h"

struct loader {
    struct tp_config *cfg;
    struct tp_config_errors *errs;
    char base_dir[TP_CFG_PATH_MAX];
    /* Cross checks are skipped for sections that failed, so one mistake gives one message. */
    bool eal_ok, ports_ok, channels_ok, lcores_ok;
    bool instruments_bad; /* instruments.capacity or an lcores[].instruments was refused */
};

static const char *const topic_names[] = {"depth",  "top",         "trades", "mbo",
                                          "status", "definitions", NULL};

uint32_t tp_cfg_topic_from_name(const char *name)
{
    if (strcmp(name, "orders") == 0)
        return TP_CFG_TOPIC_MBO;
    for (unsigned i = 0; topic_names[i] != NULL; i++)
        if (strcmp(name, topic_names[i]) == 0)
            return 1u << i;
    return 0;
}

const char *tp_cfg_topic_name(uint32_t topic_bit)
{
    for (unsigned i = 0; topic_names[i] != NULL; i++)
        if (topic_bit == 1u << i)
            return topic_names[i];
    return NULL;
}

static bool is_power_of_two(uint64_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Names used in metric labels and socket replies: a safe, simple alphabet. */
static bool check_name(struct loader *ld, const char *path, const char *name)
{
    for (const char *c = name; *c != '\0'; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.';
        if (!ok) {
            tp_jw_error(ld->errs, path, "\"%s\" may contain only letters, digits, '-', '_' and '.'",
                        name);
            return false;
        }
    }
    return true;
}

/* A name-valued key (checked with check_name); false if absent or not a valid name. */
static bool get_name(struct loader *ld, const char *path, const json_t *obj, const char *key,
                     bool required, char *out, size_t cap)
{
    char child[TP_JW_PATH_MAX];
    if (!tp_jw_string(ld->errs, path, obj, key, cap, required, out))
        return false;
    tp_jw_path_key(child, path, key);
    return check_name(ld, child, out);
}

/* Make a relative path absolute against the config file's directory. */
static bool resolve_path(struct loader *ld, const char *path, const char *in, char *out, size_t cap)
{
    int n;
    if (in[0] == '/' || ld->base_dir[0] == '\0')
        n = snprintf(out, cap, "%s", in);
    else
        n = snprintf(out, cap, "%s/%s", ld->base_dir, in);
    if (n < 0 || (size_t)n >= cap) {
        tp_jw_error(ld->errs, path, "resolved path is longer than %zu bytes", cap - 1);
        return false;
    }
    return true;
}

/* A path-valued key, resolved; optionally the file must be readable now. */
static bool get_path(struct loader *ld, const char *path, const json_t *obj, const char *key,
                     bool required, bool must_exist, char *out, size_t cap)
{
    char raw[TP_CFG_PATH_MAX], child[TP_JW_PATH_MAX];
    if (!tp_jw_string(ld->errs, path, obj, key, sizeof(raw), required, raw))
        return false;
    tp_jw_path_key(child, path, key);
    if (!resolve_path(ld, child, raw, out, cap))
        return false;
    if (must_exist && access(out, R_OK) != 0) {
        tp_jw_error(ld->errs, child, "cannot read \"%s\": %s", out, strerror(errno));
        return false;
    }
    return true;
}

/* A list of non-empty strings into out[max][stride]. */
static void string_list(struct loader *ld, const char *path, const json_t *obj, const char *key,
                        char *out, size_t stride, unsigned max, unsigned *n)
{
    json_t *arr = tp_jw_get(ld->errs, path, obj, key, JSON_ARRAY, false);
    if (arr == NULL)
        return;
    char child[TP_JW_PATH_MAX], item[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, key);
    if (json_array_size(arr) > max) {
        tp_jw_error(ld->errs, child, "has %zu entries, the limit is %u", json_array_size(arr), max);
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        tp_jw_path_index(item, child, i);
        if (tp_jw_string_value(ld->errs, item, v, stride, out + *n * stride))
            (*n)++;
    }
}

/* Fill names[] with pointers to each element's name field, NULL-terminated (for did-you-mean). */
#define NAME_LIST(names, array, count)                                                             \
    do {                                                                                           \
        for (unsigned i_ = 0; i_ < (count); i_++)                                                  \
            (names)[i_] = (array)[i_].name;                                                        \
        (names)[(count)] = NULL;                                                                   \
    } while (0)

static void unknown_name(struct loader *ld, const char *path, const char *what, const char *name,
                         const char *const *known)
{
    const char *hint = tp_jw_closest(name, known);
    if (hint != NULL)
        tp_jw_error(ld->errs, path, "unknown %s \"%s\" (did you mean \"%s\"?)", what, name, hint);
    else
        tp_jw_error(ld->errs, path, "unknown %s \"%s\"", what, name);
}

/* An array element that must be an object. */
static bool object_item(struct loader *ld, const char *path, const json_t *item)
{
    if (json_is_object(item))
        return true;
    tp_jw_error(ld->errs, path, "expected an object, got %s", tp_jw_type_name(item));
    return false;
}

/*
 * A top-level array section (ports, channels, lcores) of 1..max objects: the count is checked,
 * each element must be an object, and parse_item gets each one with its path ("ports[2]").
 * *ok starts true and is cleared when the section cannot be used by the cross-checks; parse_item
 * clears it too for problems that make the parsed item unusable.
 */
struct section {
    const char *key;
    unsigned max;
    const char *what; /* the elements' name in the count error */
    bool *ok;
    void (*parse_item)(struct loader *ld, const char *path, const json_t *obj);
};

static void parse_section(struct loader *ld, const json_t *root, const struct section *s)
{
    *s->ok = false;
    json_t *arr = tp_jw_get(ld->errs, "", root, s->key, JSON_ARRAY, true);
    if (arr == NULL)
        return;
    size_t n = json_array_size(arr);
    if (n == 0 || n > s->max) {
        tp_jw_error(ld->errs, s->key, "needs 1 to %u %s, got %zu", s->max, s->what, n);
        return;
    }
    *s->ok = true;
    size_t i;
    json_t *obj;
    json_array_foreach(arr, i, obj)
    {
        char path[TP_JW_PATH_MAX];
        tp_jw_path_index(path, s->key, i);
        if (!object_item(ld, path, obj)) {
            *s->ok = false;
            continue;
        }
        s->parse_item(ld, path, obj);
    }
}

/* ---------------------------------------------------------------- eal */

/*
 * The EAL lcore list grammar ("--lcores"; "-l" lists are its subset):
 *   list  = item ("," item)*          item = set ["@" set]
 *   set   = range | "(" range ("," range)* ")"          range = n ["-" n]
 * The set before '@' names lcores, the one after the CPUs each of them may run on. Without '@',
 * a group's lcores share the group's CPUs and every other lcore runs on the CPU of its number.
 */
#define LCORE_SYNTAX "expected a list like \"0-3,5\" or \"0@0,1@1,2@1\""

/* One set at *p into mask (bits 0..127); *group says it was parenthesized. NULL or why not. */
static const char *parse_id_set(const char **p, uint64_t mask[2], bool *group, const char *what)
{
    const char *s = *p;
    mask[0] = mask[1] = 0;
    *group = *s == '(';
    if (*group)
        s++;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return LCORE_SYNTAX;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        s = end;
        if (*s == '-') {
            s++;
            if (*s < '0' || *s > '9')
                return LCORE_SYNTAX;
            hi = strtoul(s, &end, 10);
            s = end;
        }
        if (hi < lo)
            return "a range runs backwards";
        if (hi > TP_CFG_MAX_LCORE_ID)
            return what;
        for (unsigned long id = lo; id <= hi; id++)
            mask[id / 64] |= 1ull << (id % 64);
        if (!*group || *s != ',')
            break;
        s++;
    }
    if (*group) {
        if (*s != ')')
            return LCORE_SYNTAX;
        s++;
    }
    *p = s;
    return NULL;
}

const char *tp_config_parse_lcores(const char *text, struct tp_cfg_eal *eal)
{
    static const char *const lcore_range = "lcore ids must be at most 127";
    static const char *const cpu_range = "CPU ids must be at most 127";
    uint64_t cpus[TP_CFG_MAX_LCORE_ID + 1][2];
    bool seen[TP_CFG_MAX_LCORE_ID + 1] = {false};
    bool mapped = false;
    if (strlen(text) >= sizeof(eal->lcore_map))
        return "the list is too long";
    const char *p = text;
    while (*p != '\0') {
        uint64_t lcores[2], cpu_set[2];
        bool group, cpu_group;
        const char *why = parse_id_set(&p, lcores, &group, lcore_range);
        if (why != NULL)
            return why;
        bool at = *p == '@';
        if (at) {
            p++;
            why = parse_id_set(&p, cpu_set, &cpu_group, cpu_range);
            if (why != NULL)
                return why;
        }
        mapped |= at || group;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return LCORE_SYNTAX;
        for (unsigned id = 0; id <= TP_CFG_MAX_LCORE_ID; id++) {
            if (!(lcores[id / 64] >> (id % 64) & 1))
                continue;
            if (seen[id])
                return "an lcore is listed twice";
            seen[id] = true;
            cpus[id][0] = at ? cpu_set[0] : group ? lcores[0] : id < 64 ? 1ull << id : 0;
            cpus[id][1] = at ? cpu_set[1] : group ? lcores[1] : id >= 64 ? 1ull << (id - 64) : 0;
        }
    }
    eal->n_lcores = 0;
    for (unsigned id = 0; id <= TP_CFG_MAX_LCORE_ID; id++) {
        if (!seen[id])
            continue;
        if (eal->n_lcores == TP_CFG_MAX_LCORES)
            return "more than 32 lcores";
        memcpy(eal->lcore_cpus[eal->n_lcores], cpus[id], sizeof(cpus[id]));
        eal->lcores[eal->n_lcores++] = (uint16_t)id;
    }
    if (eal->n_lcores == 0)
        return "the list is empty";
    eal->cpu_map = mapped;
    snprintf(eal->lcore_map, sizeof(eal->lcore_map), "%s", text);
    return NULL;
}

int tp_config_lcore_cpus(const struct tp_cfg_eal *eal, unsigned lcore, uint64_t out[2])
{
    for (unsigned i = 0; i < eal->n_lcores; i++) {
        if (eal->lcores[i] == lcore) {
            out[0] = eal->lcore_cpus[i][0];
            out[1] = eal->lcore_cpus[i][1];
            return 0;
        }
    }
    return -ENOENT;
}

static void set_lcores(struct loader *ld, const char *path, const char *text)
{
    const char *why = tp_config_parse_lcores(text, &ld->cfg->eal);
    if (why != NULL) {
        tp_jw_error(ld->errs, path, "\"%s\": %s", text, why);
        ld->eal_ok = false;
    }
}

/* The value of an option in args: "-l 0-1", "-l0-1", "--lcores=0-1" (either form may be NULL); NULL
 * if absent. */
static const char *find_eal_option(const struct tp_cfg_eal *eal, const char *short_opt,
                                   const char *long_opt)
{
    for (unsigned i = 0; i < eal->n_args; i++) {
        const char *a = eal->args[i];
        size_t sl = short_opt ? strlen(short_opt) : 0, ll = long_opt ? strlen(long_opt) : 0;
        bool has_next = i + 1 < eal->n_args;
        if ((short_opt && strcmp(a, short_opt) == 0) || (long_opt && strcmp(a, long_opt) == 0))
            return has_next ? eal->args[i + 1] : "";
        if (short_opt && strncmp(a, short_opt, sl) == 0 && a[sl] != '\0')
            return a + sl;
        if (long_opt && strncmp(a, long_opt, ll) == 0 && a[ll] == '=')
            return a + ll + 1;
    }
    return NULL;
}

static void parse_explicit_eal(struct loader *ld, const json_t *eal_obj)
{
    struct tp_cfg_eal *eal = &ld->cfg->eal;
    static const char *const structured[] = {"lcores", "main_lcore", "memory_mb",   "no_huge",
                                             "no_pci", "no_shconf",  "file_prefix", "log_level",
                                             "vdevs",  "pci_allow",  NULL};
    for (unsigned i = 0; structured[i] != NULL; i++) {
        if (json_object_get(eal_obj, structured[i]) != NULL) {
            char child[TP_JW_PATH_MAX];
            tp_jw_path_key(child, "eal", structured[i]);
            tp_jw_error(ld->errs, child, "not allowed together with eal.args");
        }
    }
    eal->explicit_args = true;
    unsigned before = ld->errs->count;
    string_list(ld, "eal", eal_obj, "args", &eal->args[0][0], TP_CFG_ARG_MAX, TP_CFG_MAX_EAL_ARGS,
                &eal->n_args);
    if (ld->errs->count != before) {
        ld->eal_ok = false;
        return;
    }
    if (find_eal_option(eal, "-c", "--coremask") != NULL) {
        tp_jw_error(ld->errs, "eal.args", "-c (core mask) is not supported, use -l");
        ld->eal_ok = false;
    }
    const char *list = find_eal_option(eal, "-l", NULL);
    const char *lcores = find_eal_option(eal, NULL, "--lcores");
    if (list == NULL && lcores == NULL) {
        tp_jw_error(ld->errs, "eal.args", "must contain -l <lcore list> or --lcores <mappings>");
        ld->eal_ok = false;
    } else if (list != NULL && lcores != NULL) {
        tp_jw_error(ld->errs, "eal.args", "-l and --lcores are exclusive");
        ld->eal_ok = false;
    } else if (list != NULL && strpbrk(list, "@()") != NULL) {
        tp_jw_error(ld->errs, "eal.args", "\"%s\": -l takes no '@' mappings (use --lcores)", list);
        ld->eal_ok = false;
    } else {
        set_lcores(ld, "eal.args", list != NULL ? list : lcores);
    }
    const char *main_lcore = find_eal_option(eal, NULL, "--main-lcore");
    if (ld->eal_ok)
        eal->main_lcore = eal->lcores[0];
    if (main_lcore != NULL)
        eal->main_lcore = (uint16_t)strtoul(main_lcore, NULL, 10);
    const char *memory = find_eal_option(eal, "-m", NULL);
    if (memory != NULL)
        eal->memory_mb = (uint32_t)strtoul(memory, NULL, 10);
    eal->no_huge = find_eal_option(eal, NULL, "--no-huge") != NULL;
    eal->no_pci = find_eal_option(eal, NULL, "--no-pci") != NULL;
    eal->no_shconf = find_eal_option(eal, NULL, "--no-shconf") != NULL;
}

static void parse_eal(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"args",      "lcores", "main_lcore", "memory_mb",
                                       "no_huge",   "no_pci", "no_shconf",  "file_prefix",
                                       "log_level", "vdevs",  "pci_allow",  NULL};
    struct tp_cfg_eal *eal = &ld->cfg->eal;
    ld->eal_ok = true;
    json_t *obj = tp_jw_get(ld->errs, "", root, "eal", JSON_OBJECT, true);
    if (obj == NULL) {
        ld->eal_ok = false;
        return;
    }
    tp_jw_check_keys(ld->errs, "eal", obj, keys);
    json_t *args = json_object_get(obj, "args");
    if (args != NULL) {
        parse_explicit_eal(ld, obj);
        return;
    }

    json_t *lcores = json_object_get(obj, "lcores");
    if (lcores == NULL) {
        tp_jw_error(ld->errs, "eal.lcores", "required key is missing");
        ld->eal_ok = false;
    } else if (json_is_string(lcores)) {
        set_lcores(ld, "eal.lcores", json_string_value(lcores));
    } else if (json_is_array(lcores)) {
        /* [0, 1, 3] is the same as "0,1,3". */
        char text[512] = "";
        size_t used = 0, i;
        json_t *v;
        bool ok = true;
        json_array_foreach(lcores, i, v)
        {
            char item[TP_JW_PATH_MAX];
            uint64_t id;
            tp_jw_path_index(item, "eal.lcores", i);
            if (!tp_jw_uint_value(ld->errs, item, v, 0, TP_CFG_MAX_LCORE_ID, &id)) {
                ok = false;
                continue;
            }
            if (used < sizeof(text) - 8)
                used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u", used ? "," : "",
                                         (unsigned)id);
        }
        if (ok)
            set_lcores(ld, "eal.lcores", text);
        else
            ld->eal_ok = false;
    } else {
        tp_jw_error(ld->errs, "eal.lcores", "expected a string or an array, got %s",
                    tp_jw_type_name(lcores));
        ld->eal_ok = false;
    }
    if (ld->eal_ok)
        eal->main_lcore = eal->lcores[0];
    uint64_t v;
    if (tp_jw_uint(ld->errs, "eal", obj, "main_lcore", 0, TP_CFG_MAX_LCORE_ID, false, &v))
        eal->main_lcore = (uint16_t)v;
    if (tp_jw_uint(ld->errs, "eal", obj, "memory_mb", 64, 1u << 20, false, &v))
        eal->memory_mb = (uint32_t)v;
    tp_jw_bool(ld->errs, "eal", obj, "no_huge", false, &eal->no_huge);
    tp_jw_bool(ld->errs, "eal", obj, "no_pci", false, &eal->no_pci);
    tp_jw_bool(ld->errs, "eal", obj, "no_shconf", false, &eal->no_shconf);
    tp_jw_string(ld->errs, "eal", obj, "file_prefix", sizeof(eal->file_prefix), false,
                 eal->file_prefix);
    tp_jw_string(ld->errs, "eal", obj, "log_level", sizeof(eal->log_level), false, eal->log_level);
    string_list(ld, "eal", obj, "vdevs", &eal->vdevs[0][0], TP_CFG_ARG_MAX, TP_CFG_MAX_VDEVS,
                &eal->n_vdevs);
    string_list(ld, "eal", obj, "pci_allow", &eal->pci_allow[0][0], TP_CFG_NAME_MAX, TP_CFG_MAX_PCI,
                &eal->n_pci_allow);
    if (eal->no_huge && eal->memory_mb == 0) {
        tp_jw_error(ld->errs, "eal.memory_mb", "required with no_huge (e.g. 256)");
    }
}

/* -------------------------------------------------------------- ports */

/*
 * A capture to preload: its frames, its largest frame's bytes and the memory the preload takes
 * (preload_plan.h, the rule dataplane/ports/preload.c creates its pools by). NULL, or why it
 * cannot be preloaded (in why).
 */
static const char *scan_pcap(struct tp_cfg_port *port, char *why, size_t why_len)
{
    FILE *f = fopen(port->pcap, "rb");
    if (f == NULL)
        return strerror(errno);
    struct tp_preload_plan plan;
    int rc = tp_preload_plan_scan(&plan, f, why, why_len);
    fclose(f);
    port->preload_frames = plan.frames;
    port->preload_max_frame = plan.max_frame;
    port->preload_bytes = tp_preload_plan_bytes(&plan);
    return rc == 0 ? NULL : why;
}

/* "preload": a pcap port only, one rx queue (one ring), a readable capture. */
static void parse_preload(struct loader *ld, const char *path, struct tp_cfg_port *port,
                          unsigned index)
{
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "preload");
    if (port->kind != TP_CFG_PORT_PCAP) {
        tp_jw_error(ld->errs, child, "only a \"pcap\" port can be preloaded");
        return;
    }
    if (port->rx_queues != 1)
        tp_jw_error(ld->errs, child, "a preloaded port has one rx queue, not %u", port->rx_queues);
    if (port->pcap[0] == '\0')
        return;
    /* The daemon creates it with rte_eth_from_rings, which names it "net_ring_<name>". */
    snprintf(port->dev_name, sizeof(port->dev_name), "net_ring_preload%u", index);
    port->device[0] = '\0';
    char why_buf[160];
    const char *why = scan_pcap(port, why_buf, sizeof(why_buf));
    if (why != NULL)
        tp_jw_error(ld->errs, child, "cannot preload \"%s\": %s", port->pcap, why);
}

static void parse_port(struct loader *ld, const char *path, const json_t *obj, unsigned index)
{
    static const char *const keys[] = {"name",
                                       "pci",
                                       "vdev",
                                       "pcap",
                                       "rx_queues",
                                       "rx_descriptors",
                                       "tx_descriptors",
                                       "mbuf_pool_size",
                                       "mbuf_cache_size",
                                       "mtu",
                                       "promiscuous",
                                       "nic_timestamps",
                                       "ipv4",
                                       "preload",
                                       NULL};
    struct tp_cfg_port *port = &ld->cfg->ports[index];
    /* Field by field on zeroed memory: reload compares sections with memcmp, padding included. */
    memset(port, 0, sizeof(*port));
    port->rx_queues = 1;
    port->rx_descriptors = 1024;
    port->tx_descriptors = 512;
    port->mbuf_pool_size = 8191;
    port->mbuf_cache_size = 256;
    port->mtu = 1500;
    port->nic_timestamps = true;
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    get_name(ld, path, obj, "name", true, port->name, sizeof(port->name));

    unsigned kinds = (json_object_get(obj, "pci") != NULL) +
                     (json_object_get(obj, "vdev") != NULL) +
                     (json_object_get(obj, "pcap") != NULL);
    if (kinds != 1) {
        tp_jw_error(ld->errs, path, "needs exactly one of \"pci\", \"vdev\" or \"pcap\"");
        ld->ports_ok = false;
    } else if (json_object_get(obj, "pci") != NULL) {
        port->kind = TP_CFG_PORT_PCI;
        if (tp_jw_string(ld->errs, path, obj, "pci", sizeof(port->pci), true, port->pci))
            memcpy(port->dev_name, port->pci, sizeof(port->dev_name));
    } else if (json_object_get(obj, "vdev") != NULL) {
        port->kind = TP_CFG_PORT_VDEV;
        if (tp_jw_string(ld->errs, path, obj, "vdev", sizeof(port->device), true, port->device)) {
            size_t len = strcspn(port->device, ",");
            tp_jw_path_key(child, path, "vdev");
            if (len >= sizeof(port->dev_name))
                tp_jw_error(ld->errs, child, "device name is longer than %zu bytes",
                            sizeof(port->dev_name) - 1);
            else
                memcpy(port->dev_name, port->device, len);
        }
    } else {
        port->kind = TP_CFG_PORT_PCAP;
        char file[TP_CFG_PATH_MAX];
        if (get_path(ld, path, obj, "pcap", true, false, file, sizeof(file))) {
            snprintf(port->dev_name, sizeof(port->dev_name), "net_pcap%u", index);
            snprintf(port->device, sizeof(port->device), "net_pcap%u,rx_pcap=%s", index, file);
            /* Only up to the NUL: reload compares ports with memcmp, and file is on the stack. */
            snprintf(port->pcap, sizeof(port->pcap), "%s", file);
        }
    }

    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "rx_queues", 1, 64, false, &v))
        port->rx_queues = (uint16_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "rx_descriptors", 64, 16384, false, &v)) {
        tp_jw_path_key(child, path, "rx_descriptors");
        if (is_power_of_two(v))
            port->rx_descriptors = (uint16_t)v;
        else
            tp_jw_error(ld->errs, child, "must be a power of two, got %llu", (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, path, obj, "tx_descriptors", 64, 16384, false, &v)) {
        tp_jw_path_key(child, path, "tx_descriptors");
        if (is_power_of_two(v))
            port->tx_descriptors = (uint16_t)v;
        else
            tp_jw_error(ld->errs, child, "must be a power of two, got %llu", (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, path, obj, "mbuf_pool_size", 1023, 1u << 24, false, &v))
        port->mbuf_pool_size = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "mbuf_cache_size", 0, 512, false, &v))
        port->mbuf_cache_size = (uint16_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "mtu", 68, 9600, false, &v))
        port->mtu = (uint16_t)v;
    tp_jw_bool(ld->errs, path, obj, "promiscuous", false, &port->promiscuous);
    tp_jw_bool(ld->errs, path, obj, "nic_timestamps", false, &port->nic_timestamps);
    tp_jw_ipv4(ld->errs, path, obj, "ipv4", TP_JW_ADDR_UNICAST, false, &port->ipv4);

    /* DPDK's mempool rule: the per-core cache may hold at most 2/3 of the pool. */
    if ((uint64_t)port->mbuf_cache_size * 3 > (uint64_t)port->mbuf_pool_size * 2) {
        tp_jw_path_key(child, path, "mbuf_cache_size");
        tp_jw_error(ld->errs, child, "%u is more than 2/3 of mbuf_pool_size %u",
                    port->mbuf_cache_size, port->mbuf_pool_size);
    }
    /* Every descriptor of every queue holds an mbuf, plus a burst in flight. */
    uint64_t needed = (uint64_t)port->rx_queues * port->rx_descriptors + port->tx_descriptors + 64;
    if (port->mbuf_pool_size < needed) {
        tp_jw_path_key(child, path, "mbuf_pool_size");
        tp_jw_error(ld->errs, child,
                    "%u mbufs cannot fill %u rx queues x %u descriptors (need at least %llu)",
                    port->mbuf_pool_size, port->rx_queues, port->rx_descriptors,
                    (unsigned long long)needed);
    }
    tp_jw_bool(ld->errs, path, obj, "preload", false, &port->preload);
    if (port->preload)
        parse_preload(ld, path, port, index);
}

/* One ports[] element, checked against the ports before it. */
static void parse_ports_item(struct loader *ld, const char *path, const json_t *obj)
{
    struct tp_config *cfg = ld->cfg;
    unsigned before = ld->errs->count;
    parse_port(ld, path, obj, cfg->n_ports);
    if (ld->errs->count != before)
        ld->ports_ok = false;
    for (unsigned j = 0; j < cfg->n_ports; j++) {
        char child[TP_JW_PATH_MAX];
        if (cfg->ports[cfg->n_ports].name[0] != '\0' &&
            strcmp(cfg->ports[j].name, cfg->ports[cfg->n_ports].name) == 0) {
            tp_jw_path_key(child, path, "name");
            tp_jw_error(ld->errs, child, "duplicate port name \"%s\" (also ports[%u])",
                        cfg->ports[j].name, j);
            ld->ports_ok = false;
        }
        if (cfg->ports[cfg->n_ports].dev_name[0] != '\0' &&
            strcmp(cfg->ports[j].dev_name, cfg->ports[cfg->n_ports].dev_name) == 0) {
            tp_jw_error(ld->errs, path, "device \"%s\" is already ports[%u]",
                        cfg->ports[j].dev_name, j);
            ld->ports_ok = false;
        }
    }
    cfg->n_ports++;
}

/* ----------------------------------------------------------- channels */

/* Resolve a port name at path to its index; -1 (with an error) if unknown. */
static int port_ref(struct loader *ld, const char *path, const char *name)
{
    int idx = tp_config_port_index(ld->cfg, name);
    if (idx < 0 && ld->ports_ok) {
        const char *names[TP_CFG_MAX_PORTS + 1];
        NAME_LIST(names, ld->cfg->ports, ld->cfg->n_ports);
        unknown_name(ld, path, "port", name, names);
    }
    return idx;
}

/*
 * One line object. Values in *line on entry (imported from CME's file, or zero) are defaults the
 * JSON overrides; default_rx_port is the channel's rx_ports entry for this side (-1 if none).
 */
static void parse_line(struct loader *ld, const char *path, const json_t *obj,
                       struct tp_cfg_line *line, int default_rx_port)
{
    static const char *const keys[] = {"group", "port", "vlan", "source", "rx_port", NULL};
    tp_jw_check_keys(ld->errs, path, obj, keys);
    bool imported = line->present;
    if (!imported)
        line->vlan = -1;
    line->present = true;
    tp_jw_ipv4(ld->errs, path, obj, "group", TP_JW_ADDR_MULTICAST, !imported, &line->group);
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "port", 1, 65535, !imported, &v))
        line->port = (uint16_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "vlan", 1, 4094, false, &v))
        line->vlan = (int16_t)v;
    tp_jw_ipv4(ld->errs, path, obj, "source", TP_JW_ADDR_UNICAST, false, &line->source);

    char child[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
    tp_jw_path_key(child, path, "rx_port");
    if (json_object_get(obj, "rx_port") != NULL) {
        if (tp_jw_string(ld->errs, path, obj, "rx_port", sizeof(name), true, name)) {
            int idx = port_ref(ld, child, name);
            line->rx_port = idx < 0 ? 0 : (uint16_t)idx;
        }
    } else if (default_rx_port >= 0) {
        line->rx_port = (uint16_t)default_rx_port;
    } else if (ld->cfg->n_ports == 1) {
        line->rx_port = 0;
    } else if (ld->ports_ok) {
        tp_jw_error(ld->errs, child, "required when more than one port is configured");
    }
}

/*
 * A/B pair object {"a": line, "b": line}; obj may be NULL when the pair was only imported from
 * CME's file. Side a is required unless imported.
 */
static void parse_line_pair(struct loader *ld, const char *path, const json_t *obj,
                            struct tp_cfg_line pair[2], const int rx_ports[2], bool a_required)
{
    static const char *const keys[] = {"a", "b", NULL};
    if (obj != NULL)
        tp_jw_check_keys(ld->errs, path, obj, keys);
    for (int side = 0; side < 2; side++) {
        const char *key = keys[side];
        char child[TP_JW_PATH_MAX], rx_path[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, key);
        json_t *line = NULL;
        if (obj != NULL)
            line = tp_jw_get(ld->errs, path, obj, key, JSON_OBJECT,
                             side == 0 && a_required && !pair[0].present);
        if (line != NULL) {
            parse_line(ld, child, line, &pair[side], rx_ports[side]);
        } else if (pair[side].present) {
            /* Imported line without a JSON override: it still needs its ethernet port. */
            tp_jw_path_key(rx_path, child, "rx_port");
            if (rx_ports[side] >= 0)
                pair[side].rx_port = (uint16_t)rx_ports[side];
            else if (ld->cfg->n_ports > 1 && ld->ports_ok)
                tp_jw_error(ld->errs, rx_path,
                            "required when more than one port is configured (or set rx_ports)");
        }
    }
}

/* Copy one CME connection into a line (defaults, the JSON may override). */
static void import_cme_line(struct tp_cfg_line *line, const struct tp_cme_connection *c)
{
    if (c == NULL)
        return;
    line->present = true;
    line->group = c->ip;
    line->port = c->port;
    line->source = c->host_ip;
    line->vlan = -1;
}

/* Returns false (with an error) if the channel could not be imported. */
static bool import_cme(struct loader *ld, const char *path, const json_t *obj,
                       struct tp_cfg_channel *ch)
{
    static const char *const keys[] = {"file", "channel", NULL};
    tp_jw_check_keys(ld->errs, path, obj, keys);
    uint64_t id;
    bool have_file = get_path(ld, path, obj, "file", true, false, ch->cme_config_file,
                              sizeof(ch->cme_config_file));
    bool have_id = tp_jw_uint(ld->errs, path, obj, "channel", 1, UINT32_MAX, true, &id);
    if (!have_file || !have_id)
        return false;
    ch->cme_config_channel = (uint32_t)id;
    struct tp_cme_channel *cme = malloc(sizeof(*cme));
    if (cme == NULL) {
        tp_jw_error(ld->errs, path, "out of memory");
        return false;
    }
    bool ok = false;
    char why[200];
    int rc =
        tp_cme_channel_load(ch->cme_config_file, ch->cme_config_channel, cme, why, sizeof(why));
    if (rc != 0) {
        tp_jw_error(ld->errs, path, "%s: %s", ch->cme_config_file, why);
    } else if (tp_cme_channel_feed(cme, "I", 'A') == NULL &&
               tp_cme_channel_feed(cme, "I", 'B') == NULL) {
        tp_jw_error(ld->errs, path, "channel %u in %s has no incremental (I) UDP feed",
                    ch->cme_config_channel, ch->cme_config_file);
    } else {
        ch->venue_channel_id = ch->cme_config_channel;
        /* If CME lists only a B incremental feed, it becomes our primary line. */
        const struct tp_cme_connection *ia = tp_cme_channel_feed(cme, "I", 'A');
        import_cme_line(&ch->lines[0], ia ? ia : tp_cme_channel_feed(cme, "I", 'B'));
        if (ia != NULL)
            import_cme_line(&ch->lines[1], tp_cme_channel_feed(cme, "I", 'B'));
        import_cme_line(&ch->snapshot[0], tp_cme_channel_feed(cme, "S", 'A'));
        import_cme_line(&ch->snapshot[1], tp_cme_channel_feed(cme, "S", 'B'));
        import_cme_line(&ch->definitions[0], tp_cme_channel_feed(cme, "N", 'A'));
        import_cme_line(&ch->definitions[1], tp_cme_channel_feed(cme, "N", 'B'));
        ok = true;
    }
    free(cme);
    return ok;
}

static void parse_recovery(struct loader *ld, const char *path, const json_t *obj,
                           struct tp_cfg_channel *ch, const int rx_ports[2])
{
    static const char *const keys[] = {"snapshot",     "definitions",  "rerequest",
                                       "max_messages", "gap_wait_us",  "give_up_ms",
                                       "silence_ms",   "audit_always", NULL};
    bool mdp3 = ch->protocol == TP_CFG_PROTO_MDP3, itch = ch->protocol == TP_CFG_PROTO_ITCH;
    if (obj == NULL) {
        /* No recovery section: imported snapshot/definition lines still need their ports. */
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, "snapshot");
        parse_line_pair(ld, child, NULL, ch->snapshot, rx_ports, false);
        tp_jw_path_key(child, path, "definitions");
        parse_line_pair(ld, child, NULL, ch->definitions, rx_ports, false);
        return;
    }
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    static const char *const mdp3_only[] = {"definitions", "audit_always", NULL};
    static const char *const itch_only[] = {"rerequest", "max_messages", "silence_ms", NULL};
    for (unsigned i = 0; mdp3_only[i] != NULL; i++) {
        tp_jw_path_key(child, path, mdp3_only[i]);
        if (itch && json_object_get(obj, mdp3_only[i]) != NULL)
            tp_jw_error(ld->errs, child, "only for protocol mdp3");
    }
    for (unsigned i = 0; itch_only[i] != NULL; i++) {
        tp_jw_path_key(child, path, itch_only[i]);
        if (mdp3 && json_object_get(obj, itch_only[i]) != NULL)
            tp_jw_error(ld->errs, child, "only for protocol itch");
    }
    if (mdp3) {
        json_t *snap = tp_jw_get(ld->errs, path, obj, "snapshot", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "snapshot");
        parse_line_pair(ld, child, snap, ch->snapshot, rx_ports, true);
        json_t *defs = tp_jw_get(ld->errs, path, obj, "definitions", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "definitions");
        parse_line_pair(ld, child, defs, ch->definitions, rx_ports, true);
        tp_jw_bool(ld->errs, path, obj, "audit_always", false, &ch->audit_always);
    }
    if (itch) {
        /* ITCH's snapshot is a TCP service (GLIMPSE), not multicast lines. */
        json_t *snap = tp_jw_get(ld->errs, path, obj, "snapshot", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "snapshot");
        tp_cfg_parse_itch_snapshot(ld->errs, child, snap, &ch->glimpse);
        char text[64];
        tp_jw_path_key(child, path, "rerequest");
        if (tp_jw_string(ld->errs, path, obj, "rerequest", sizeof(text), false, text)) {
            char *colon = strrchr(text, ':');
            char *end = NULL;
            unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
            if (colon != NULL)
                *colon = '\0';
            uint32_t host;
            if (colon == NULL || end == colon + 1 || *end != '\0' || port == 0 || port > 65535 ||
                tp_parse_ipv4(text, &host) != 0 || host == 0 || (host >> 28) == 0xe)
                tp_jw_error(ld->errs, child, "expected \"<unicast IPv4>:<port>\"");
            else {
                ch->rerequest_host = host;
                ch->rerequest_port = (uint16_t)port;
            }
        }
        uint64_t v;
        if (tp_jw_uint(ld->errs, path, obj, "max_messages", 1, 65535, false, &v))
            ch->rerequest_max_messages = (uint16_t)v;
        if (tp_jw_uint(ld->errs, path, obj, "silence_ms", 0, 600000, false, &v))
            ch->silence_ms = (uint32_t)v;
    }
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "gap_wait_us", 0, 1000000, false, &v))
        ch->gap_wait_us = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "give_up_ms", 1, 600000, false, &v))
        ch->give_up_ms = (uint32_t)v;
}

static void parse_channel(struct loader *ld, const char *path, const json_t *obj,
                          struct tp_cfg_channel *ch)
{
    static const char *const keys[] = {"name",     "protocol", "venue",    "id",         "lines",
                                       "recovery", "schema",   "rx_ports", "cme_config", NULL};
    static const char *const protocols[] = {"mdp3", "itch", NULL};
    memset(ch, 0, sizeof(*ch));
    ch->gap_wait_us = 500;
    ch->give_up_ms = 5000;
    ch->rerequest_max_messages = 100;
    ch->silence_ms = 3000;
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    get_name(ld, path, obj, "name", true, ch->name, sizeof(ch->name));
    int proto = -1;
    if (tp_jw_enum(ld->errs, path, obj, "protocol", protocols, true, &proto))
        ch->protocol = proto == 0 ? TP_CFG_PROTO_MDP3 : TP_CFG_PROTO_ITCH;
    snprintf(ch->venue, sizeof(ch->venue), "%s", proto == 1 ? "NASDAQ" : "CME");
    get_name(ld, path, obj, "venue", false, ch->venue, sizeof(ch->venue));
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "id", 1, UINT32_MAX, false, &v))
        ch->venue_channel_id = (uint32_t)v;

    /* rx_ports: default ethernet port of every A and B line of this channel. */
    int rx_ports[2] = {-1, -1};
    json_t *rx = tp_jw_get(ld->errs, path, obj, "rx_ports", JSON_OBJECT, false);
    if (rx != NULL) {
        static const char *const sides[] = {"a", "b", NULL};
        tp_jw_path_key(child, path, "rx_ports");
        tp_jw_check_keys(ld->errs, child, rx, sides);
        for (int side = 0; side < 2; side++) {
            char name[TP_CFG_NAME_MAX], side_path[TP_JW_PATH_MAX];
            tp_jw_path_key(side_path, child, sides[side]);
            if (tp_jw_string(ld->errs, child, rx, sides[side], sizeof(name), false, name))
                rx_ports[side] = port_ref(ld, side_path, name);
        }
    }

    json_t *cme = tp_jw_get(ld->errs, path, obj, "cme_config", JSON_OBJECT, false);
    tp_jw_path_key(child, path, "cme_config");
    if (cme != NULL && ch->protocol == TP_CFG_PROTO_ITCH) {
        tp_jw_error(ld->errs, child, "only for protocol mdp3");
        return;
    }
    /* A failed import already said why; its lines would only add follow-on errors. */
    if (cme != NULL && !import_cme(ld, child, cme, ch))
        return;

    bool imported = cme != NULL;
    json_t *lines = tp_jw_get(ld->errs, path, obj, "lines", JSON_OBJECT, !imported);
    tp_jw_path_key(child, path, "lines");
    if (lines != NULL || ch->lines[0].present)
        parse_line_pair(ld, child, lines, ch->lines, rx_ports, true);

    json_t *rec = tp_jw_get(ld->errs, path, obj, "recovery", JSON_OBJECT, false);
    tp_jw_path_key(child, path, "recovery");
    parse_recovery(ld, child, rec, ch, rx_ports);

    tp_jw_path_key(child, path, "schema");
    if (json_object_get(obj, "schema") != NULL && ch->protocol == TP_CFG_PROTO_ITCH)
        tp_jw_error(ld->errs, child, "only for protocol mdp3");
    else
        get_path(ld, path, obj, "schema", false, true, ch->schema, sizeof(ch->schema));
}

/* Human form of a line's classification key for error messages. */
static void describe_line(const struct tp_cfg_line *l, char *buf, size_t size)
{
    if (l->vlan >= 0)
        snprintf(buf, size, "%u.%u.%u.%u:%u vlan %d", l->group >> 24, (l->group >> 16) & 255,
                 (l->group >> 8) & 255, l->group & 255, l->port, l->vlan);
    else
        snprintf(buf, size, "%u.%u.%u.%u:%u", l->group >> 24, (l->group >> 16) & 255,
                 (l->group >> 8) & 255, l->group & 255, l->port);
}

/* All lines of a channel with their path suffixes, for the duplicate check. */
struct line_ref {
    const struct tp_cfg_line *line;
    char path[TP_JW_PATH_MAX];
};

static unsigned channel_lines(const struct tp_cfg_channel *ch, const char *path,
                              struct line_ref refs[6])
{
    const struct {
        const struct tp_cfg_line *pair;
        const char *name;
    } kinds[] = {{ch->lines, "lines"},
                 {ch->snapshot, "recovery.snapshot"},
                 {ch->definitions, "recovery.definitions"}};
    unsigned n = 0;
    for (unsigned k = 0; k < 3; k++) {
        for (int side = 0; side < 2; side++) {
            if (!kinds[k].pair[side].present)
                continue;
            refs[n].line = &kinds[k].pair[side];
            char kind_path[TP_JW_PATH_MAX];
            tp_jw_path_key(kind_path, path, kinds[k].name);
            tp_jw_path_key(refs[n].path, kind_path, side ? "b" : "a");
            n++;
        }
    }
    return n;
}

/*
 * Two lines with the same (group, UDP port, VLAN) cannot be told apart by the classifier. CME's
 * snapshot A line and definition A line may share a group but never a port, so the port is part
 * of the key, as it is in the data plane.
 */
static void check_duplicate_lines(struct loader *ld)
{
    static struct line_ref refs[TP_CFG_MAX_CHANNELS * 6];
    unsigned n = 0;
    for (unsigned c = 0; c < ld->cfg->n_channels; c++) {
        char path[TP_JW_PATH_MAX];
        tp_jw_path_index(path, "channels", c);
        n += channel_lines(&ld->cfg->channels[c], path, refs + n);
    }
    for (unsigned i = 0; i < n; i++) {
        for (unsigned j = 0; j < i; j++) {
            const struct tp_cfg_line *a = refs[i].line, *b = refs[j].line;
            if (a->group == b->group && a->port == b->port && a->vlan == b->vlan) {
                char what[64];
                describe_line(a, what, sizeof(what));
                tp_jw_error(ld->errs, refs[i].path, "group %s is already used by %s", what,
                            refs[j].path);
                break;
            }
        }
    }
}

/* One channels[] element, checked against the channels before it. */
static void parse_channels_item(struct loader *ld, const char *path, const json_t *obj)
{
    struct tp_config *cfg = ld->cfg;
    char child[TP_JW_PATH_MAX];
    struct tp_cfg_channel *ch = &cfg->channels[cfg->n_channels];
    unsigned before = ld->errs->count;
    parse_channel(ld, path, obj, ch);
    if (ld->errs->count != before)
        ld->channels_ok = false;
    for (unsigned j = 0; j < cfg->n_channels; j++) {
        const struct tp_cfg_channel *other = &cfg->channels[j];
        if (ch->name[0] != '\0' && strcmp(other->name, ch->name) == 0) {
            tp_jw_path_key(child, path, "name");
            tp_jw_error(ld->errs, child, "duplicate channel name \"%s\" (also channels[%u])",
                        ch->name, j);
            ld->channels_ok = false;
        }
        if (ch->venue_channel_id != 0 && other->venue_channel_id == ch->venue_channel_id &&
            strcmp(other->venue, ch->venue) == 0) {
            tp_jw_path_key(child, path, json_object_get(obj, "id") ? "id" : "cme_config");
            tp_jw_error(ld->errs, child, "%s channel %u is already channels[%u]", ch->venue,
                        ch->venue_channel_id, j);
            ld->channels_ok = false;
        }
        /* The bus numbers venues by protocol: one venue name per protocol and instance. */
        if (ch->protocol != 0 && other->protocol == ch->protocol &&
            strcmp(other->venue, ch->venue) != 0) {
            tp_jw_path_key(child, path, "venue");
            tp_jw_error(ld->errs, child,
                        "\"%s\" differs from channels[%u]'s \"%s\": an instance carries one "
                        "venue per protocol (run another instance for another venue)",
                        ch->venue, j, other->venue);
            ld->channels_ok = false;
        }
    }
    cfg->n_channels++;
}

/* ------------------------------------------------------------- lcores */

static bool eal_has_lcore(const struct tp_cfg_eal *eal, unsigned id)
{
    for (unsigned i = 0; i < eal->n_lcores; i++)
        if (eal->lcores[i] == id)
            return true;
    return false;
}

/* "0-1,3" back from the sorted EAL list, for messages. */
static void format_lcore_list(const struct tp_cfg_eal *eal, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < eal->n_lcores && used < size; i++) {
        unsigned lo = eal->lcores[i];
        while (i + 1 < eal->n_lcores && eal->lcores[i + 1] == eal->lcores[i] + 1)
            i++;
        int w =
            lo == eal->lcores[i]
                ? snprintf(buf + used, size - used, "%s%u", used ? "," : "", lo)
                : snprintf(buf + used, size - used, "%s%u-%u", used ? "," : "", lo, eal->lcores[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static void parse_poll(struct loader *ld, const char *path, const json_t *arr,
                       struct tp_cfg_lcore *lc)
{
    if (json_array_size(arr) > TP_CFG_MAX_RXQ) {
        tp_jw_error(ld->errs, path, "has %zu entries, the limit is %d", json_array_size(arr),
                    TP_CFG_MAX_RXQ);
        return;
    }
    size_t i;
    json_t *obj;
    json_array_foreach(arr, i, obj)
    {
        static const char *const keys[] = {"port", "queue", NULL};
        char item[TP_JW_PATH_MAX], child[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
        tp_jw_path_index(item, path, i);
        if (!object_item(ld, item, obj)) {
            continue;
        }
        tp_jw_check_keys(ld->errs, item, obj, keys);
        uint64_t queue = 0;
        bool have_queue = tp_jw_uint(ld->errs, item, obj, "queue", 0, 63, false, &queue) ||
                          json_object_get(obj, "queue") == NULL;
        tp_jw_path_key(child, item, "port");
        if (!tp_jw_string(ld->errs, item, obj, "port", sizeof(name), true, name) || !have_queue)
            continue;
        int port = port_ref(ld, child, name);
        if (port < 0) {
            ld->lcores_ok = false;
            continue;
        }
        if (queue >= ld->cfg->ports[port].rx_queues) {
            ld->lcores_ok = false;
            tp_jw_path_key(child, item, "queue");
            tp_jw_error(ld->errs, child, "port \"%s\" has %u rx queues, queue %llu does not exist",
                        name, ld->cfg->ports[port].rx_queues, (unsigned long long)queue);
            continue;
        }
        lc->rxq[lc->n_rxq++] =
            (struct tp_cfg_rxq){.port = (uint16_t)port, .queue = (uint16_t)queue};
    }
}

static void parse_lcore_channels(struct loader *ld, const char *path, const json_t *arr,
                                 struct tp_cfg_lcore *lc)
{
    const char *names[TP_CFG_MAX_CHANNELS + 1];
    NAME_LIST(names, ld->cfg->channels, ld->cfg->n_channels);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        char item[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
        tp_jw_path_index(item, path, i);
        if (!tp_jw_string_value(ld->errs, item, v, sizeof(name), name))
            continue;
        int idx = tp_config_channel_index(ld->cfg, name);
        if (idx < 0) {
            if (ld->channels_ok)
                unknown_name(ld, item, "channel", name, names);
            continue;
        }
        if (lc->n_channels < TP_CFG_MAX_CHANNELS)
            lc->channels[lc->n_channels++] = (uint16_t)idx;
    }
}

/* One lcores[] element: an EAL lcore other than the main one, what it polls and runs. */
static void parse_lcores_item(struct loader *ld, const char *path, const json_t *obj)
{
    static const char *const keys[] = {"lcore", "poll", "channels", "instruments", NULL};
    struct tp_config *cfg = ld->cfg;
    char child[TP_JW_PATH_MAX];
    tp_jw_check_keys(ld->errs, path, obj, keys);
    struct tp_cfg_lcore *lc = &cfg->lcores[cfg->n_lcores];
    memset(lc, 0, sizeof(*lc));
    uint64_t id;
    tp_jw_path_key(child, path, "lcore");
    if (!tp_jw_uint(ld->errs, path, obj, "lcore", 0, TP_CFG_MAX_LCORE_ID, true, &id)) {
        ld->lcores_ok = false;
    } else if (ld->eal_ok && !eal_has_lcore(&cfg->eal, (unsigned)id)) {
        char eal_list[128];
        format_lcore_list(&cfg->eal, eal_list, sizeof(eal_list));
        tp_jw_error(ld->errs, child, "lcore %llu is not in the EAL lcore list (%s)",
                    (unsigned long long)id, eal_list);
    } else if (ld->eal_ok && id == cfg->eal.main_lcore) {
        tp_jw_error(ld->errs, child,
                    "lcore %llu is the main lcore (control plane); data lcores must differ",
                    (unsigned long long)id);
    }
    lc->lcore_id = (uint16_t)id;
    for (unsigned j = 0; j < cfg->n_lcores; j++) {
        if (cfg->lcores[j].lcore_id == lc->lcore_id) {
            tp_jw_error(ld->errs, child, "lcore %u is already lcores[%u]", lc->lcore_id, j);
            ld->lcores_ok = false;
        }
    }
    json_t *poll = tp_jw_get(ld->errs, path, obj, "poll", JSON_ARRAY, true);
    tp_jw_path_key(child, path, "poll");
    if (poll != NULL)
        parse_poll(ld, child, poll, lc);
    json_t *chans = tp_jw_get(ld->errs, path, obj, "channels", JSON_ARRAY, true);
    tp_jw_path_key(child, path, "channels");
    if (chans != NULL)
        parse_lcore_channels(ld, child, chans, lc);
    /* The size of its window of instrument ids (check_windows checks they fit together). */
    json_t *ids = json_object_get(obj, "instruments");
    uint64_t v = 0;
    tp_jw_path_key(child, path, "instruments");
    if (json_is_integer(ids) && json_integer_value(ids) == 0) {
        tp_jw_error(ld->errs, child,
                    "0 instrument ids: give at least 1, or leave \"instruments\" out to share "
                    "what the other lcores leave");
        ld->instruments_bad = true;
    } else if (ids != NULL && !tp_jw_uint_value(ld->errs, child, ids, 1, 1u << 24, &v)) {
        ld->instruments_bad = true;
    }
    lc->instruments = (uint32_t)v;
    cfg->n_lcores++;
}

/* Every rx queue polled exactly once, every channel run exactly once, by an lcore that polls its
 * lines' ports. */
static void check_placement(struct loader *ld)
{
    struct tp_config *cfg = ld->cfg;
    if (!ld->ports_ok || !ld->lcores_ok)
        return;
    for (unsigned p = 0; p < cfg->n_ports; p++) {
        for (unsigned q = 0; q < cfg->ports[p].rx_queues; q++) {
            int owner = -1;
            for (unsigned l = 0; l < cfg->n_lcores; l++) {
                for (unsigned r = 0; r < cfg->lcores[l].n_rxq; r++) {
                    const struct tp_cfg_rxq *rxq = &cfg->lcores[l].rxq[r];
                    if (rxq->port != p || rxq->queue != q)
                        continue;
                    if (owner >= 0) {
                        char path[TP_JW_PATH_MAX];
                        snprintf(path, sizeof(path), "lcores[%u].poll[%u]", l, r);
                        tp_jw_error(ld->errs, path,
                                    "port \"%s\" queue %u is already polled by "
                                    "lcores[%d]",
                                    cfg->ports[p].name, q, owner);
                    } else {
                        owner = (int)l;
                    }
                }
            }
            if (owner < 0) {
                char path[TP_JW_PATH_MAX];
                tp_jw_path_index(path, "ports", p);
                tp_jw_error(ld->errs, path, "rx queue %u is polled by no lcore", q);
            }
        }
    }
    if (!ld->channels_ok)
        return;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        int owner = -1;
        for (unsigned l = 0; l < cfg->n_lcores; l++) {
            for (unsigned k = 0; k < cfg->lcores[l].n_channels; k++) {
                if (cfg->lcores[l].channels[k] != c)
                    continue;
                if (owner >= 0) {
                    char path[TP_JW_PATH_MAX];
                    snprintf(path, sizeof(path), "lcores[%u].channels[%u]", l, k);
                    tp_jw_error(ld->errs, path, "channel \"%s\" already runs on lcores[%d]",
                                cfg->channels[c].name, owner);
                } else {
                    owner = (int)l;
                }
            }
        }
        char path[TP_JW_PATH_MAX];
        tp_jw_path_index(path, "channels", c);
        if (owner < 0) {
            tp_jw_error(ld->errs, path, "runs on no lcore (add it to an lcores[].channels list)");
            continue;
        }
        struct line_ref refs[6];
        unsigned n = channel_lines(&cfg->channels[c], path, refs);
        const struct tp_cfg_lcore *lc = &cfg->lcores[owner];
        for (unsigned i = 0; i < n; i++) {
            bool polled = false;
            for (unsigned r = 0; r < lc->n_rxq; r++)
                polled |= lc->rxq[r].port == refs[i].line->rx_port;
            if (!polled) {
                char child[TP_JW_PATH_MAX];
                tp_jw_path_key(child, refs[i].path, "rx_port");
                tp_jw_error(ld->errs, child,
                            "port \"%s\" is not polled by lcore %u, which runs this channel",
                            cfg->ports[refs[i].line->rx_port].name, lc->lcore_id);
            }
        }
    }
}

/*
 * Every data lcore's window of instrument ids (tp_config_lcore_window) fits instruments.capacity
 * and holds at least one id. Windows that do not are marked bad (the memory estimate needs them).
 */
static void check_windows(struct loader *ld)
{
    const struct tp_config *cfg = ld->cfg;
    if (!ld->lcores_ok || ld->instruments_bad)
        return;
    char path[TP_JW_PATH_MAX], sum[256] = "";
    size_t used = 0;
    unsigned terms = 0;
    uint64_t taken = 0, sharing = 0;
    for (unsigned l = 0; l < cfg->n_lcores; l++) {
        uint32_t ids = cfg->lcores[l].instruments;
        sharing += ids == 0;
        if (ids == 0)
            continue;
        taken += ids;
        if (used < sizeof(sum)) {
            int w = snprintf(sum + used, sizeof(sum) - used, "%s%u", terms ? " + " : "", ids);
            used += w > 0 ? (size_t)w : 0;
        }
        terms++;
        if (taken > cfg->instruments.capacity) {
            snprintf(path, sizeof(path), "lcores[%u].instruments", l);
            tp_jw_error(ld->errs, path, "%s %s instruments.capacity %u", sum,
                        terms > 1 ? "exceed" : "exceeds", cfg->instruments.capacity);
            ld->instruments_bad = true;
            return;
        }
    }
    for (unsigned l = 0; l < cfg->n_lcores; l++) {
        if (tp_config_lcore_window(cfg, l).ids != 0)
            continue;
        tp_jw_path_index(path, "lcores", l);
        tp_jw_error(ld->errs, path,
                    "no instrument id left for this lcore: instruments.capacity %u minus the %llu "
                    "given to lcores with \"instruments\" leaves %llu for %llu lcore(s) without it",
                    cfg->instruments.capacity, (unsigned long long)taken,
                    (unsigned long long)(cfg->instruments.capacity - taken),
                    (unsigned long long)sharing);
        ld->instruments_bad = true;
    }
}

/* ------------------------------------------------- instruments, books */

static void check_patterns(struct loader *ld, const char *path,
                           char (*patterns)[TP_CFG_PATTERN_MAX], unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        for (const char *c = patterns[i]; *c != '\0'; c++) {
            if (*c <= ' ' || *c > '~') {
                char item[TP_JW_PATH_MAX];
                tp_jw_path_index(item, path, i);
                tp_jw_error(ld->errs, item, "pattern \"%s\" has a space or non-printable character",
                            patterns[i]);
                break;
            }
        }
    }
}

static void parse_instruments(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"capacity", "include", "exclude", "security_groups", NULL};
    struct tp_cfg_instruments *in = &ld->cfg->instruments;
    in->capacity = 4096;
    json_t *obj = tp_jw_get(ld->errs, "", root, "instruments", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "instruments", obj, keys);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "instruments", obj, "capacity", 1, 1u << 24, false, &v))
        in->capacity = (uint32_t)v;
    else if (json_object_get(obj, "capacity") != NULL)
        ld->instruments_bad = true;
    string_list(ld, "instruments", obj, "include", &in->include[0][0], TP_CFG_PATTERN_MAX,
                TP_CFG_MAX_PATTERNS, &in->n_include);
    check_patterns(ld, "instruments.include", in->include, in->n_include);
    string_list(ld, "instruments", obj, "exclude", &in->exclude[0][0], TP_CFG_PATTERN_MAX,
                TP_CFG_MAX_PATTERNS, &in->n_exclude);
    check_patterns(ld, "instruments.exclude", in->exclude, in->n_exclude);
    string_list(ld, "instruments", obj, "security_groups", &in->security_groups[0][0],
                TP_CFG_NAME_MAX, TP_CFG_MAX_GROUPS, &in->n_security_groups);
}

static void parse_books(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"max_orders", "recent_orders", "levels_per_side", NULL};
    struct tp_cfg_books *b = &ld->cfg->books;
    b->max_orders = 1u << 20;
    b->levels_per_side = 10;
    json_t *obj = tp_jw_get(ld->errs, "", root, "books", JSON_OBJECT, false);
    uint64_t v;
    if (obj != NULL) {
        tp_jw_check_keys(ld->errs, "books", obj, keys);
        if (tp_jw_uint(ld->errs, "books", obj, "max_orders", 0, 1u << 28, false, &v))
            b->max_orders = (uint32_t)v;
        /* tp_books' TP_RECENT_ORDERS_LIMIT; 0 takes its default */
        if (tp_jw_uint(ld->errs, "books", obj, "recent_orders", 0, 1u << 28, false, &v))
            b->recent_orders = (uint32_t)v;
        if (tp_jw_uint(ld->errs, "books", obj, "levels_per_side", 1, 1000, false, &v))
            b->levels_per_side = (uint16_t)v;
    }
}

/* ------------------------------------------------------- bus, control */

static void parse_bus(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"path",  "ring_bytes",           "state_depth", "mode",
                                       "group", "heartbeat_timeout_ms", NULL};
    struct tp_cfg_bus *bus = &ld->cfg->bus;
    strcpy(bus->path, "/dev/shm");
    bus->ring_bytes = 64u << 20;
    bus->state_depth = ld->cfg->books.levels_per_side < 10 ? ld->cfg->books.levels_per_side : 10;
    bus->mode = 0640;
    bus->heartbeat_timeout_ms = 5000;
    json_t *obj = tp_jw_get(ld->errs, "", root, "bus", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "bus", obj, keys);
    if (tp_jw_string(ld->errs, "bus", obj, "path", sizeof(bus->path), false, bus->path) &&
        bus->path[0] != '/')
        tp_jw_error(ld->errs, "bus.path", "\"%s\" must be an absolute directory", bus->path);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "bus", obj, "ring_bytes", 1u << 16, 1ull << 34, false, &v)) {
        if (is_power_of_two(v))
            bus->ring_bytes = v;
        else
            tp_jw_error(ld->errs, "bus.ring_bytes", "must be a power of two, got %llu",
                        (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, "bus", obj, "state_depth", 1, TP_CFG_MAX_STATE_DEPTH, false, &v)) {
        bus->state_depth = (uint16_t)v;
        if (v > ld->cfg->books.levels_per_side)
            tp_jw_error(ld->errs, "bus.state_depth", "%llu is more than books.levels_per_side (%u)",
                        (unsigned long long)v, ld->cfg->books.levels_per_side);
    }
    if (tp_jw_mode(ld->errs, "bus", obj, "mode", false, &bus->mode) &&
        (bus->mode & (S_IWGRP | S_IWOTH)))
        tp_jw_error(ld->errs, "bus.mode",
                    "%04o lets other users write the bus (readers refuse such segments): "
                    "readers need read access only, e.g. 0640",
                    (unsigned)bus->mode);
    tp_jw_string(ld->errs, "bus", obj, "group", sizeof(bus->group), false, bus->group);
    /* The daemon beats every 10 ms: below 100 ms a busy machine's scheduling alone is a death. */
    if (tp_jw_uint(ld->errs, "bus", obj, "heartbeat_timeout_ms", 100, 3600000, false, &v))
        bus->heartbeat_timeout_ms = (uint32_t)v;
}

static void parse_control(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"socket",
                                       "mode",
                                       "group",
                                       "max_clients",
                                       "max_line_bytes",
                                       "max_subscriptions",
                                       "max_requests_per_sec",
                                       "max_clients_per_uid",
                                       "reserved_clients",
                                       "operator_group",
                                       "idle_timeout_ms",
                                       NULL};
    struct tp_cfg_control *c = &ld->cfg->control;
    strcpy(c->socket_path, "/run/tickplane/control.sock");
    c->socket_mode = 0660;
    c->max_clients = 64;
    c->max_line_bytes = 4096;
    c->max_subscriptions = 256;
    c->max_requests_per_sec = 1000;
    c->max_clients_per_uid = 16;
    c->reserved_clients = 4; /* of the default 64 */
    c->idle_timeout_ms = 60000;
    json_t *obj = tp_jw_get(ld->errs, "", root, "control", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "control", obj, keys);
    char raw[TP_CFG_PATH_MAX];
    /* sun_path holds 108 bytes including the NUL. */
    if (get_path(ld, "control", obj, "socket", false, false, raw, sizeof(raw))) {
        if (strlen(raw) > 107)
            tp_jw_error(ld->errs, "control.socket",
                        "path is %zu bytes, a UNIX socket path must be at most 107", strlen(raw));
        else
            strcpy(c->socket_path, raw);
    }
    tp_jw_mode(ld->errs, "control", obj, "mode", false, &c->socket_mode);
    tp_jw_string(ld->errs, "control", obj, "group", sizeof(c->socket_group), false,
                 c->socket_group);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_clients", 1, 4096, false, &v))
        c->max_clients = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_line_bytes", 256, 1u << 20, false, &v))
        c->max_line_bytes = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_subscriptions", 1, 65536, false, &v))
        c->max_subscriptions = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_requests_per_sec", 1, 1000000, false, &v))
        c->max_requests_per_sec = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_clients_per_uid", 1, 4096, false, &v))
        c->max_clients_per_uid = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "reserved_clients", 0, 4095, false, &v))
        c->reserved_clients = (uint32_t)v;
    else
        c->reserved_clients = c->max_clients < 2    ? 0
                              : c->max_clients < 32 ? 1
                                                    : c->max_clients / 16;
    tp_jw_string(ld->errs, "control", obj, "operator_group", sizeof(c->operator_group), false,
                 c->operator_group);
    if (tp_jw_uint(ld->errs, "control", obj, "idle_timeout_ms", 0, 86400000, false, &v))
        c->idle_timeout_ms = (uint32_t)v;
    if (c->reserved_clients >= c->max_clients)
        tp_jw_error(ld->errs, "control.reserved_clients",
                    "%u reserved of max_clients %u leaves no slot for other clients",
                    c->reserved_clients, c->max_clients);
}

int tp_config_group_gid(const char *group, gid_t *gid)
{
    if (group[0] == '\0') {
        *gid = (gid_t)-1;
        return 0;
    }
    const struct group *gr = getgrnam(group);
    if (gr == NULL)
        return -ENOENT;
    *gid = gr->gr_gid;
    return 0;
}

int tp_config_check_host(const struct tp_config *cfg, struct tp_config_errors *errs)
{
    static const struct {
        const char *path;
        size_t offset;
    } groups[] = {{"bus.group", offsetof(struct tp_config, bus.group)},
                  {"control.group", offsetof(struct tp_config, control.socket_group)},
                  {"control.operator_group", offsetof(struct tp_config, control.operator_group)}};
    memset(errs, 0, sizeof(*errs));
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        const char *name = (const char *)cfg + groups[i].offset;
        gid_t gid;
        if (tp_config_group_gid(name, &gid) != 0)
            tp_jw_error(errs, groups[i].path, "no such group \"%s\" on this host", name);
    }
    return errs->count == 0 ? 0 : -EINVAL;
}

/* ------------------------------------------------------- entitlements */

static void parse_rule(struct loader *ld, const char *path, const json_t *obj,
                       struct tp_cfg_entitlement *rule)
{
    static const char *const keys[] = {"uid",    "user",        "gid",    "group",
                                       "venues", "instruments", "topics", NULL};
    tp_jw_check_keys(ld->errs, path, obj, keys);
    rule->uid = -1;
    rule->gid = -1;
    rule->topics = TP_CFG_TOPIC_ALL;
    char child[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
    uint64_t v;
    if (json_object_get(obj, "uid") && json_object_get(obj, "user"))
        tp_jw_error(ld->errs, path, "give \"uid\" or \"user\", not both");
    if (json_object_get(obj, "gid") && json_object_get(obj, "group"))
        tp_jw_error(ld->errs, path, "give \"gid\" or \"group\", not both");
    if (tp_jw_uint(ld->errs, path, obj, "uid", 0, UINT32_MAX - 1, false, &v))
        rule->uid = (int64_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "gid", 0, UINT32_MAX - 1, false, &v))
        rule->gid = (int64_t)v;
    tp_jw_path_key(child, path, "user");
    if (tp_jw_string(ld->errs, path, obj, "user", sizeof(name), false, name)) {
        struct passwd *pw = getpwnam(name);
        if (pw == NULL)
            tp_jw_error(ld->errs, child, "no such user \"%s\"", name);
        else
            rule->uid = pw->pw_uid;
    }
    tp_jw_path_key(child, path, "group");
    if (tp_jw_string(ld->errs, path, obj, "group", sizeof(name), false, name)) {
        struct group *gr = getgrnam(name);
        if (gr == NULL)
            tp_jw_error(ld->errs, child, "no such group \"%s\"", name);
        else
            rule->gid = gr->gr_gid;
    }
    bool has_who = json_object_get(obj, "uid") || json_object_get(obj, "user") ||
                   json_object_get(obj, "gid") || json_object_get(obj, "group");
    if (!has_who)
        tp_jw_error(ld->errs, path, "needs one of \"uid\", \"user\", \"gid\" or \"group\"");

    string_list(ld, path, obj, "venues", &rule->venues[0][0], TP_CFG_NAME_MAX, TP_CFG_MAX_VENUES,
                &rule->n_venues);
    const char *venues[TP_CFG_MAX_CHANNELS + 1];
    unsigned nv = 0;
    for (unsigned c = 0; c < ld->cfg->n_channels; c++) {
        bool dup = false;
        for (unsigned k = 0; k < nv; k++)
            dup |= strcmp(venues[k], ld->cfg->channels[c].venue) == 0;
        if (!dup)
            venues[nv++] = ld->cfg->channels[c].venue;
    }
    venues[nv] = NULL;
    for (unsigned i = 0; i < rule->n_venues && ld->channels_ok; i++) {
        bool known = false;
        for (unsigned k = 0; k < nv; k++)
            known |= strcmp(venues[k], rule->venues[i]) == 0;
        if (!known) {
            tp_jw_path_key(child, path, "venues");
            char item[TP_JW_PATH_MAX];
            tp_jw_path_index(item, child, i);
            unknown_name(ld, item, "venue", rule->venues[i], venues);
        }
    }
    string_list(ld, path, obj, "instruments", &rule->instruments[0][0], TP_CFG_PATTERN_MAX,
                TP_CFG_MAX_PATTERNS, &rule->n_instruments);
    tp_jw_path_key(child, path, "instruments");
    check_patterns(ld, child, rule->instruments, rule->n_instruments);

    json_t *topics = tp_jw_get(ld->errs, path, obj, "topics", JSON_ARRAY, false);
    if (topics == NULL)
        return;
    tp_jw_path_key(child, path, "topics");
    rule->topics = 0;
    size_t i;
    json_t *t;
    json_array_foreach(topics, i, t)
    {
        char item[TP_JW_PATH_MAX], topic[TP_CFG_NAME_MAX];
        tp_jw_path_index(item, child, i);
        if (!tp_jw_string_value(ld->errs, item, t, sizeof(topic), topic))
            continue;
        uint32_t bit = tp_cfg_topic_from_name(topic);
        if (bit == 0)
            unknown_name(ld, item, "topic", topic, topic_names);
        rule->topics |= bit;
    }
}

static void parse_entitlements(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"default", "rules", NULL};
    static const char *const policies[] = {"deny", "allow", NULL};
    struct tp_cfg_entitlements *ent = &ld->cfg->entitlements;
    json_t *obj = tp_jw_get(ld->errs, "", root, "entitlements", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "entitlements", obj, keys);
    int policy = 0;
    if (tp_jw_enum(ld->errs, "entitlements", obj, "default", policies, false, &policy))
        ent->default_allow = policy == 1;
    json_t *rules = tp_jw_get(ld->errs, "entitlements", obj, "rules", JSON_ARRAY, false);
    if (rules == NULL)
        return;
    if (json_array_size(rules) > TP_CFG_MAX_RULES) {
        tp_jw_error(ld->errs, "entitlements.rules", "has %zu entries, the limit is %d",
                    json_array_size(rules), TP_CFG_MAX_RULES);
        return;
    }
    size_t i;
    json_t *r;
    json_array_foreach(rules, i, r)
    {
        char path[TP_JW_PATH_MAX];
        tp_jw_path_index(path, "entitlements.rules", i);
        if (!object_item(ld, path, r)) {
            continue;
        }
        parse_rule(ld, path, r, &ent->rules[ent->n_rules++]);
    }
}

static void parse_telemetry(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"prometheus_file", "prometheus_port", "prometheus_address",
                                       "interval_ms",     "dpdk_telemetry",  NULL};
    struct tp_cfg_telemetry *t = &ld->cfg->telemetry;
    t->interval_ms = 1000;
    t->prometheus_address = 0x7f000001; /* loopback: metrics are not for the whole network */
    t->dpdk_telemetry = true;
    json_t *obj = tp_jw_get(ld->errs, "", root, "telemetry", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "telemetry", obj, keys);
    get_path(ld, "telemetry", obj, "prometheus_file", false, false, t->prometheus_file,
             sizeof(t->prometheus_file));
    uint64_t v;
    if (tp_jw_uint(ld->errs, "telemetry", obj, "prometheus_port", 1, 65535, false, &v))
        t->prometheus_port = (uint16_t)v;
    if (tp_jw_uint(ld->errs, "telemetry", obj, "interval_ms", 100, 3600000, false, &v))
        t->interval_ms = (uint32_t)v;
    tp_jw_bool(ld->errs, "telemetry", obj, "dpdk_telemetry", false, &t->dpdk_telemetry);
    /* "0.0.0.0" listens on every interface; otherwise one host address of this machine. */
    const json_t *addr = json_object_get(obj, "prometheus_address");
    if (json_is_string(addr) && strcmp(json_string_value(addr), "0.0.0.0") == 0)
        t->prometheus_address = 0;
    else
        tp_jw_ipv4(ld->errs, "telemetry", obj, "prometheus_address", TP_JW_ADDR_UNICAST, false,
                   &t->prometheus_address);
}

static bool log_level_value(struct loader *ld, const char *path, const json_t *v, uint8_t *out)
{
    static const char *const names[] = {"error", "warning", "notice", "info", "debug", NULL};
    char text[16];
    if (!tp_jw_string_value(ld->errs, path, v, sizeof(text), text))
        return false;
    int level = tp_log_level_parse(text);
    if (level < 0) {
        tp_jw_error(ld->errs, path, "\"%s\" is not a level (%s, %s, %s, %s or %s)", text, names[0],
                    names[1], names[2], names[3], names[4]);
        return false;
    }
    *out = (uint8_t)level;
    return true;
}

static void parse_logging(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"level", "components", "burst", NULL};
    struct tp_cfg_logging *l = &ld->cfg->logging;
    l->level = TP_LOG_INFO;
    l->burst = 10;
    json_t *obj = tp_jw_get(ld->errs, "", root, "logging", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "logging", obj, keys);
    const json_t *level = json_object_get(obj, "level");
    if (level != NULL)
        log_level_value(ld, "logging.level", level, &l->level);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "logging", obj, "burst", 1, 100000, false, &v))
        l->burst = (uint32_t)v;
    json_t *comps = tp_jw_get(ld->errs, "logging", obj, "components", JSON_OBJECT, false);
    const char *name;
    json_t *value;
    json_object_foreach(comps, name, value)
    {
        char path[96];
        snprintf(path, sizeof(path), "logging.components.%s", name);
        int c = tp_log_component_parse(name);
        if (c < 0 || c >= TP_CFG_LOG_COMPONENTS)
            tp_jw_error(ld->errs, path,
                        "unknown component (main, port, gap, books, session, "
                        "consumer, control, reload, telemetry)");
        else
            log_level_value(ld, path, value, &l->components[c]);
    }
}

/* ---------------------------------------------------------- the whole */

static void check_memory(struct loader *ld)
{
    const struct tp_config *cfg = ld->cfg;
    if (cfg->eal.memory_mb == 0 || !ld->ports_ok || ld->instruments_bad)
        return;
    uint64_t need = tp_config_memory_estimate(cfg);
    uint64_t have = (uint64_t)cfg->eal.memory_mb << 20;
    /* A preloaded capture is usually what does not fit: say how much of the need is its own. */
    for (unsigned p = 0; need > have && p < cfg->n_ports; p++) {
        uint64_t mbufs = tp_config_preload_estimate(&cfg->ports[p]);
        char path[TP_JW_PATH_MAX];
        snprintf(path, sizeof(path), "ports[%u].preload", p);
        if (mbufs > 0)
            tp_jw_error(ld->errs, path,
                        "the capture needs %llu MiB of mbufs (%u frames of up to %u bytes), "
                        "eal.memory_mb gives %u",
                        (unsigned long long)((mbufs + (1u << 20) - 1) >> 20),
                        cfg->ports[p].preload_frames, cfg->ports[p].preload_max_frame,
                        cfg->eal.memory_mb);
    }
    if (need > have)
        tp_jw_error(
            ld->errs, cfg->eal.explicit_args ? "eal.args" : "eal.memory_mb",
            "%u MB is too small: mbuf pools, books, instruments and channels need about %llu MB",
            cfg->eal.memory_mb, (unsigned long long)((need + (1u << 20) - 1) >> 20));
}

static void load_root(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"name",        "eal",     "ports", "lcores",  "channels",
                                       "instruments", "books",   "bus",   "control", "entitlements",
                                       "telemetry",   "logging", NULL};
    struct tp_config *cfg = ld->cfg;
    tp_jw_check_keys(ld->errs, "", root, keys);
    strcpy(cfg->name, "tickplane");
    get_name(ld, "", root, "name", false, cfg->name, sizeof(cfg->name));
    parse_eal(ld, root);
    parse_section(
        ld, root,
        &(struct section){"ports", TP_CFG_MAX_PORTS, "ports", &ld->ports_ok, parse_ports_item});
    parse_section(ld, root,
                  &(struct section){"channels", TP_CFG_MAX_CHANNELS, "channels", &ld->channels_ok,
                                    parse_channels_item});
    check_duplicate_lines(ld); /* across channels (none parsed: nothing to check) */
    parse_section(ld, root,
                  &(struct section){"lcores", TP_CFG_MAX_DATA_LCORES, "data lcores", &ld->lcores_ok,
                                    parse_lcores_item});
    parse_instruments(ld, root);
    parse_books(ld, root);
    parse_bus(ld, root);
    parse_control(ld, root);
    parse_entitlements(ld, root);
    parse_telemetry(ld, root);
    parse_logging(ld, root);
    if (ld->eal_ok && !eal_has_lcore(&cfg->eal, cfg->eal.main_lcore)) {
        char list[128];
        format_lcore_list(&cfg->eal, list, sizeof(list));
        tp_jw_error(ld->errs, cfg->eal.explicit_args ? "eal.args" : "eal.main_lcore",
                    "main lcore %u is not in the EAL lcore list (%s)", cfg->eal.main_lcore, list);
    }
    check_placement(ld);
    check_windows(ld);
    check_memory(ld);
}

int tp_config_load_string(const char *json, const char *base_dir, struct tp_config *cfg,
                          struct tp_config_errors *errs)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(errs, 0, sizeof(*errs));
    struct loader ld = {.cfg = cfg, .errs = errs};
    if (base_dir != NULL) {
        /* Relative paths would silently resolve against the wrong directory if it were cut. */
        int w = snprintf(ld.base_dir, sizeof(ld.base_dir), "%s", base_dir);
        if (w < 0 || (size_t)w >= sizeof(ld.base_dir)) {
            tp_jw_error(errs, "", "config directory is longer than %zu bytes: %s",
                        sizeof(ld.base_dir) - 1, base_dir);
            return -ENAMETOOLONG;
        }
    }
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        tp_jw_error(errs, "", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                    jerr.text);
        return -EINVAL;
    }
    if (!json_is_object(root))
        tp_jw_error(errs, "", "the document must be an object, got %s", tp_jw_type_name(root));
    else
        load_root(&ld, root);
    json_decref(root);
    return errs->count == 0 && errs->dropped == 0 ? 0 : -EINVAL;
}

int tp_config_load_file(const char *file, struct tp_config *cfg, struct tp_config_errors *errs)
{
    memset(errs, 0, sizeof(*errs));
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        int e = errno;
        tp_jw_error(errs, "", "cannot open %s: %s", file, strerror(e));
        return -e;
    }
    /* Configs are small; refuse anything that is clearly not one. */
    enum { MAX_CONFIG_BYTES = 4 << 20 };
    char *text = malloc(MAX_CONFIG_BYTES + 1);
    if (text == NULL) {
        fclose(f);
        tp_jw_error(errs, "", "out of memory");
        return -ENOMEM;
    }
    size_t n = fread(text, 1, MAX_CONFIG_BYTES + 1, f);
    fclose(f);
    if (n > MAX_CONFIG_BYTES) {
        free(text);
        tp_jw_error(errs, "", "%s is larger than %d bytes", file, MAX_CONFIG_BYTES);
        return -EFBIG;
    }
    text[n] = '\0';
    /* The file opened, so its name (and directory) fits PATH_MAX; load_string checks its own cap.
     */
    char dir[PATH_MAX];
    tp_config_dirname(file, dir, sizeof(dir));
    int rc = tp_config_load_string(text, dir, cfg, errs);
    free(text);
    if (rc == -ENAMETOOLONG)
        return rc;
    /* Absolute, so a reload finds the same file whatever the working directory is by then. */
    char resolved[PATH_MAX];
    const char *source = realpath(file, resolved) != NULL ? resolved : file;
    int w = snprintf(cfg->source, sizeof(cfg->source), "%s", source);
    if (w < 0 || (size_t)w >= sizeof(cfg->source)) {
        tp_jw_error(errs, "", "config file name is longer than %zu bytes (reload needs it): %s",
                    sizeof(cfg->source) - 1, source);
        return -ENAMETOOLONG;
    }
    return rc;
}

void tp_config_dirname(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(out, size, ".");
    else if (slash == path)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - path), path);
}

size_t tp_config_errors_format(const struct tp_config_errors *errs, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < errs->count && used < size; i++) {
        const struct tp_config_error *e = &errs->items[i];
        int w = e->path[0] ? snprintf(buf + used, size - used, "%s: %s\n", e->path, e->message)
                           : snprintf(buf + used, size - used, "%s\n", e->message);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (errs->dropped > 0 && used < size) {
        int w = snprintf(buf + used, size - used, "(and %u more errors)\n", errs->dropped);
        if (w > 0)
            used += (size_t)w;
    }
    return used < size ? used : size - 1;
}

int tp_config_port_index(const struct tp_config *cfg, const char *name)
{
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (strcmp(cfg->ports[i].name, name) == 0)
            return (int)i;
    return -1;
}

int tp_config_channel_index(const struct tp_config *cfg, const char *name)
{
    for (unsigned i = 0; i < cfg->n_channels; i++)
        if (strcmp(cfg->channels[i].name, name) == 0)
            return (int)i;
    return -1;
}

int tp_config_channel_lcore(const struct tp_config *cfg, unsigned ci)
{
    for (unsigned l = 0; l < cfg->n_lcores; l++)
        for (unsigned k = 0; k < cfg->lcores[l].n_channels; k++)
            if (cfg->lcores[l].channels[k] == ci)
                return (int)l;
    return -1;
}

struct tp_cfg_window tp_config_lcore_window(const struct tp_config *cfg, unsigned l)
{
    uint64_t capacity = cfg->instruments.capacity;
    if (cfg->n_lcores == 0)
        return (struct tp_cfg_window){.first_id = 0, .ids = (uint32_t)capacity};
    /* The ids the lcores with "instruments" take, and how many lcores share the rest. */
    uint64_t taken = 0, sharing = 0;
    for (unsigned k = 0; k < cfg->n_lcores; k++) {
        taken += cfg->lcores[k].instruments;
        sharing += cfg->lcores[k].instruments == 0;
    }
    uint64_t left = taken < capacity ? capacity - taken : 0;
    /* The windows before l: the sizes given, and the first `shared` shares of what is left. */
    uint64_t first = 0, shared = 0;
    for (unsigned k = 0; k < l; k++) {
        first += cfg->lcores[k].instruments;
        shared += cfg->lcores[k].instruments == 0;
    }
    first += left * shared / (sharing ? sharing : 1);
    uint64_t ids = cfg->lcores[l].instruments != 0
                       ? cfg->lcores[l].instruments
                       : left * (shared + 1) / sharing - left * shared / sharing;
    return (struct tp_cfg_window){.first_id = (uint32_t)first, .ids = (uint32_t)ids};
}

/*
 * Sizes behind the estimate (documented in docs/CONFIG.md), as dataplane/books and
 * dataplane/instruments lay their tables out (tests/control/test_memory_estimate.c holds the
 * estimate to their memsize functions): per instrument id of the lcore's window a 576-byte book
 * record, 16 bytes of hot order-book state, a 72-byte registry record, 16 bytes per level of the
 * order-level book (max(256, levels_per_side) + 4 sentinels a side) and 24 per level of the
 * price-level books (min(levels_per_side, 255) + 2 implied a side); the registry's lookups have
 * a power of two of 12-byte slots, at least two per id of the window (so 24-48 bytes an id); the
 * order table has a power of two of 32-byte slots, at least two per order, and a window of recent
 * orders of 16 slots per order, at most 2^20, of 33 bytes;
 * the registry's ITCH locate maps 256 KiB per ITCH channel and 4 spares (for ITCH channels a
 * reload adds), and a few KiB of table headers and alignment. An mbuf with 2 KiB data room, 128 B
 * headroom, its header and mempool overhead is about 2.4 KiB; EAL itself about 48 MiB.
 */
/* Slots of an open-addressing table for n keys: a power of two, at least 16 and 2 * n. */
static uint64_t table_slots(uint64_t n)
{
    uint64_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    return slots;
}

uint64_t tp_config_lcore_tables_estimate(const struct tp_config *cfg, unsigned l)
{
    const uint64_t order_level_bytes = 16, price_level_bytes = 24, instrument_bytes = 576 + 16 + 72,
                   lookup_slot_bytes = 12, order_slot_bytes = 32, recent_slot_bytes = 33,
                   recent_per_order = 16, recent_slots_max = 1u << 20,
                   locate_map_bytes = 256u << 10, headers_bytes = 4096;
    uint64_t lps = cfg->books.levels_per_side;
    uint64_t order_levels = (lps < TP_CFG_ORDER_LEVELS_MIN ? TP_CFG_ORDER_LEVELS_MIN : lps) + 4;
    uint64_t price_levels = (lps < 255 ? lps : 255) + 2;
    uint64_t per_instrument = instrument_bytes + order_levels * 2 * order_level_bytes +
                              price_levels * 2 * price_level_bytes;
    uint64_t slots = cfg->books.max_orders > 0 ? table_slots(cfg->books.max_orders) : 0;
    /* The window asked for, or tp_books' default (TP_RECENT_ORDERS_PER_ORDER, at most
     * TP_RECENT_ORDERS_DEFAULT_MAX); none without an order table. */
    uint64_t recent = cfg->books.recent_orders ? cfg->books.recent_orders
                                               : recent_per_order * cfg->books.max_orders;
    if (cfg->books.recent_orders == 0 && recent > recent_slots_max)
        recent = recent_slots_max;
    if (cfg->books.max_orders == 0)
        recent = 0;
    uint64_t instruments = tp_config_lcore_window(cfg, l).ids;
    uint64_t locate_maps = 4;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        locate_maps += cfg->channels[c].protocol == TP_CFG_PROTO_ITCH;
    return headers_bytes + locate_maps * locate_map_bytes + instruments * per_instrument +
           table_slots(instruments) * lookup_slot_bytes + slots * order_slot_bytes +
           recent * recent_slot_bytes;
}

/*
 * Sizes behind the channel estimate, as dataplane/daemon/channel.c lays a channel out with the
 * parameters channels.c gives it (tests/control/test_memory_estimate.c holds the estimate to
 * tp_channel_memsize): the channel record (about 11 KiB), its arbiter's held packets (at most 4096
 * of 32 bytes); an ITCH channel's stage of 65,534 message pointers and lengths; an MDP3 channel's
 * 8-byte RptSeq state per instrument id of the capacity and its 4 MiB buffer of incrementals
 * kept for replay after a snapshot; an ITCH channel with a snapshot service (recovery.snapshot)
 * its buffer_messages of 64 bytes, the stream kept while a snapshot loads.
 */
uint64_t tp_config_channel_estimate(const struct tp_config *cfg, unsigned c)
{
    const uint64_t channel_bytes = 16384, held_bytes = 4096 * 32,
                   itch_stage_bytes = 524288 + 131072, mdp3_state_bytes = 8,
                   mdp3_replay_bytes = 4u << 20;
    uint64_t total = channel_bytes + held_bytes;
    if (cfg->channels[c].protocol == TP_CFG_PROTO_ITCH) {
        total += itch_stage_bytes;
        if (cfg->channels[c].glimpse.present)
            total += 64ull * cfg->channels[c].glimpse.buffer_messages;
    } else
        total += mdp3_state_bytes * cfg->instruments.capacity + mdp3_replay_bytes;
    return total;
}

uint64_t tp_config_preload_estimate(const struct tp_cfg_port *port)
{
    return port->preload ? port->preload_bytes : 0;
}

uint64_t tp_config_memory_estimate(const struct tp_config *cfg)
{
    const uint64_t mbuf_bytes = 2432, eal_bytes = 48ull << 20;
    uint64_t total = eal_bytes;
    for (unsigned p = 0; p < cfg->n_ports; p++)
        total += (uint64_t)cfg->ports[p].mbuf_pool_size * mbuf_bytes +
                 tp_config_preload_estimate(&cfg->ports[p]);
    for (unsigned c = 0; c < cfg->n_channels; c++)
        total += tp_config_channel_estimate(cfg, c);
    /* Every data lcore has its own books for its window of ids, and its own order table. */
    unsigned lcores = cfg->n_lcores > 1 ? cfg->n_lcores : 1;
    for (unsigned l = 0; l < lcores; l++)
        total += tp_config_lcore_tables_estimate(cfg, l);
    return total;
}

bool tp_config_instrument_wanted(const struct tp_cfg_instruments *filter, const char *symbol,
                                 const char *security_group)
{
    for (unsigned i = 0; i < filter->n_exclude; i++)
        if (tp_glob_match(filter->exclude[i], symbol))
            return false;
    if (filter->n_security_groups > 0) {
        bool in_group = false;
        for (unsigned i = 0; security_group != NULL && i < filter->n_security_groups; i++)
            in_group |= strcmp(filter->security_groups[i], security_group) == 0;
        if (!in_group)
            return false;
    }
    if (filter->n_include == 0)
        return true;
    for (unsigned i = 0; i < filter->n_include; i++)
        if (tp_glob_match(filter->include[i], symbol))
            return true;
    return false;
}
