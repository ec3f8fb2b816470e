/* The host resources a config needs: see resources.h. */
#include "resources.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "bus/bus.h"
#include "json_walk.h"
#include "config_venue.h"
#include "pcap_reader.h"

void tp_config_bus_params(const struct tp_config *cfg, struct tp_bus_params *bp)
{
    *bp = (struct tp_bus_params){
        .instance = cfg->name,
        .dir = cfg->bus.path[0] ? cfg->bus.path : NULL,
        .ring_bytes = cfg->bus.ring_bytes,
        .max_record = 8192, /* a DELETE_FROM of 255 levels is ~6 KiB */
        .instruments = cfg->instruments.capacity,
        .depth = cfg->bus.state_depth,
        .counters = TP_CFG_BUS_COUNTERS(tp_config_bus_rings(cfg)),
        .mode = cfg->bus.mode ? cfg->bus.mode : 0640,
        .gid = (gid_t)-1,
        .heartbeat_timeout_ms = cfg->bus.heartbeat_timeout_ms,
    };
}

unsigned tp_config_bus_rings(const struct tp_config *cfg)
{
    return cfg->n_lcores > 1 ? cfg->n_lcores : 1;
}

/* The directory a path names: whether it exists, is one, and this user may create files in it. */
static void check_dir(struct tp_config_errors *errs, const char *key, const char *dir,
                      const char *what)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        tp_jw_error(errs, key, "%s \"%s\": %s", what, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        tp_jw_error(errs, key, "%s \"%s\" is not a directory", what, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        tp_jw_error(errs, key, "%s \"%s\": this user (uid %u) cannot create files in it", what, dir,
                    (unsigned)geteuid());
}

/* Bytes the instance's segments from an earlier run hold: a new run replaces them. */
static uint64_t previous_run_bytes(const struct tp_bus_params *bp)
{
    static const char *const parts[] = {"state", "counters", "ring"};
    uint64_t bytes = 0;
    for (unsigned i = 0; i < 3 + TP_BUS_MAX_RINGS - 1; i++) {
        char part[16], path[512];
        if (i < 3)
            snprintf(part, sizeof(part), "%s", parts[i]);
        else
            snprintf(part, sizeof(part), "ring.%u", i - 2);
        struct stat st;
        if (tp_seg_path(path, sizeof(path), bp->dir, bp->instance, part) == 0 &&
            lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
            bytes += (uint64_t)st.st_blocks * 512u;
    }
    return bytes;
}

static void check_bus(const struct tp_config *cfg, struct tp_config_errors *errs)
{
    const char *dir = cfg->bus.path[0] ? cfg->bus.path : TP_BUS_DEFAULT_DIR;
    unsigned before = errs->count;
    check_dir(errs, "bus.path", dir, "bus directory");
    if (errs->count != before)
        return;
    struct statfs fs;
    if (statfs(dir, &fs) != 0 || fs.f_bsize <= 0) {
        tp_jw_error(errs, "bus.path", "bus directory \"%s\": statfs: %s", dir, strerror(errno));
        return;
    }
    struct tp_bus_params bp;
    tp_config_bus_params(cfg, &bp);
    bp.dir = dir;
    unsigned rings = tp_config_bus_rings(cfg);
    uint64_t block = (uint64_t)fs.f_bsize;
    uint64_t need = tp_bus_footprint(&bp, rings, block);
    uint64_t free_bytes = (uint64_t)fs.f_bavail * block;
    uint64_t previous = previous_run_bytes(&bp);
    if (need > free_bytes + previous)
        tp_jw_error(errs, "bus.ring_bytes",
                    "the bus needs %" PRIu64 " bytes on %s (%u ring%s of %" PRIu64
                    " bytes, the state table of %u instruments and the counters, in %" PRIu64
                    "-byte blocks), the file system has %" PRIu64 " bytes free%s: lower "
                    "bus.ring_bytes or instruments.capacity, or enlarge the file system",
                    need, dir, rings, rings == 1 ? "" : "s", cfg->bus.ring_bytes,
                    cfg->instruments.capacity, block, free_bytes + previous,
                    previous ? " (counting the previous run's segments, which it replaces)" : "");
}

static void check_socket(const struct tp_config *cfg, struct tp_config_errors *errs)
{
    const char *path = cfg->control.socket_path;
    char dir[TP_CFG_PATH_MAX];
    tp_config_dirname(path, dir, sizeof(dir));
    unsigned before = errs->count;
    check_dir(errs, "control.socket", dir, "socket directory");
    struct stat st;
    if (errs->count == before && lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
        tp_jw_error(errs, "control.socket", "\"%s\" exists and is %s, not a socket", path,
                    S_ISDIR(st.st_mode) ? "a directory" : "another file");
}

static void check_pcap(const struct tp_cfg_port *port, unsigned index,
                       struct tp_config_errors *errs)
{
    char key[TP_JW_PATH_MAX];
    snprintf(key, sizeof(key), "ports[%u].pcap", index);
    struct stat st;
    if (stat(port->pcap, &st) != 0) {
        tp_jw_error(errs, key, "\"%s\": %s", port->pcap, strerror(errno));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        tp_jw_error(errs, key, "\"%s\" is not a file", port->pcap);
        return;
    }
    FILE *f = fopen(port->pcap, "rb");
    if (f == NULL) {
        tp_jw_error(errs, key, "\"%s\": %s", port->pcap, strerror(errno));
        return;
    }
    struct tp_pcap_reader r;
    int status = tp_pcap_reader_open(&r, f, 65535, UINT32_MAX);
    /* Classic pcap or pcapng, both of which net_pcap reads; one without frames replays none. */
    if (status != TP_PCAP_OK && status != TP_PCAP_EEMPTY) {
        char why[160];
        tp_jw_error(errs, key, "\"%s\" is not a capture net_pcap can replay: %s", port->pcap,
                    tp_pcap_reader_why(&r, why, sizeof(why)));
    }
    tp_pcap_reader_close(&r);
    fclose(f);
}

/* A "Key:   N kB" line of meminfo, in bytes; 0 when absent. */
static uint64_t meminfo_bytes(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return 0;
    char line[256];
    uint64_t kb = 0;
    size_t len = strlen(key);
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, key, len) == 0 && line[len] == ':')
            kb = strtoull(line + len + 1, NULL, 10);
    fclose(f);
    return kb * 1024u;
}

/* Free huge pages of every size, in bytes (directories "hugepages-<N>kB"). */
static uint64_t free_hugepage_bytes(const char *root)
{
    DIR *d = opendir(root);
    if (d == NULL)
        return 0;
    uint64_t bytes = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        unsigned long kb;
        if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s/free_hugepages", root, e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long pages = 0;
        if (f != NULL && fscanf(f, "%lu", &pages) == 1)
            bytes += (uint64_t)pages * kb * 1024u;
        if (f != NULL)
            fclose(f);
    }
    closedir(d);
    return bytes;
}

static void check_memory(const struct tp_config *cfg, const struct tp_resource_paths *paths,
                         struct tp_config_errors *errs)
{
    const char *meminfo = paths && paths->meminfo ? paths->meminfo : "/proc/meminfo";
    const char *huge = paths && paths->hugepages ? paths->hugepages : "/sys/kernel/mm/hugepages";
    uint64_t want =
        cfg->eal.memory_mb ? (uint64_t)cfg->eal.memory_mb << 20 : tp_config_memory_estimate(cfg);
    const char *key = cfg->eal.explicit_args ? "eal.args" : "eal.memory_mb";
    if (cfg->eal.no_huge) {
        uint64_t available = meminfo_bytes(meminfo, "MemAvailable");
        if (available != 0 && want > available)
            tp_jw_error(errs, key,
                        "%" PRIu64
                        " MB of DPDK memory without huge pages, this machine has %" PRIu64
                        " MB available",
                        want >> 20, available >> 20);
        return;
    }
    uint64_t free_huge = free_hugepage_bytes(huge);
    if (want > free_huge)
        tp_jw_error(errs, key,
                    "%" PRIu64 " MB of DPDK memory in huge pages, this machine has %" PRIu64
                    " MB of free huge pages (deploy/tune reserves them; or set eal.no_huge)",
                    want >> 20, free_huge >> 20);
}

int tp_config_check_resources(const struct tp_config *cfg, const struct tp_resource_paths *paths,
                              struct tp_config_errors *errs)
{
    tp_config_check_host(cfg, errs);
    check_bus(cfg, errs);
    check_socket(cfg, errs);
    for (unsigned p = 0; p < cfg->n_ports; p++)
        /* A preloaded capture was read whole by validation already. */
        if (cfg->ports[p].kind == TP_CFG_PORT_PCAP && !cfg->ports[p].preload)
            check_pcap(&cfg->ports[p], p, errs);
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        const struct tp_cfg_channel *ch = &cfg->channels[c];
        char why[512], key[TP_JW_PATH_MAX];
        const char *file_key = NULL;
        if (tp_cfg_venue_check_files(ch, &file_key, why, sizeof(why)) == 0)
            continue;
        snprintf(key, sizeof(key), "channels[%u].%s", c, file_key);
        tp_jw_error(errs, key, "%s", why);
    }
    check_memory(cfg, paths, errs);
    return errs->count == 0 && errs->dropped == 0 ? 0 : -EINVAL;
}
