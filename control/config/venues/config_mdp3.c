/*
 * CME MDP 3.0 channels in the config (config_venue.h): venue "CME", no silence bound by default
 * (a quiet spell is the operator's to bound, docs/CONFIG.md); lines written out or imported from
 * CME's config.xml ("cme_config"); recovery by the snapshot, definition and order-level (MBO)
 * snapshot lines, audited every cycle on request; the SBE schema file a channel may name, which
 * must be the decoder's.
 */
#include <stddef.h>
#include <stdlib.h>

#include "cme_channels.h"
#include "config_loader.h"
#include "config_mdp3.h"
#include "config_venue.h"
#include "mdp3_schema_file.h"

_Static_assert(TP_CFG_MDP3_PATH_MAX == TP_CFG_PATH_MAX, "an MDP3 channel's paths are config paths");

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
    struct tp_cfg_mdp3_channel *m = &ch->proto.mdp3;
    tp_jw_check_keys(ld->errs, path, obj, keys);
    uint64_t id;
    bool have_file = get_path(ld, path, obj, "file", true, false, m->cme_config_file,
                              sizeof(m->cme_config_file));
    bool have_id = tp_jw_uint(ld->errs, path, obj, "channel", 1, UINT32_MAX, true, &id);
    if (!have_file || !have_id)
        return false;
    m->cme_config_channel = (uint32_t)id;
    struct tp_cme_channel *cme = malloc(sizeof(*cme));
    if (cme == NULL) {
        tp_jw_error(ld->errs, path, "out of memory");
        return false;
    }
    bool ok = false;
    char why[200];
    int rc = tp_cme_channel_load(m->cme_config_file, m->cme_config_channel, cme, why, sizeof(why));
    if (rc != 0) {
        tp_jw_error(ld->errs, path, "%s: %s", m->cme_config_file, why);
    } else if (tp_cme_channel_feed(cme, "I", 'A') == NULL &&
               tp_cme_channel_feed(cme, "I", 'B') == NULL) {
        tp_jw_error(ld->errs, path, "channel %u in %s has no incremental (I) UDP feed",
                    m->cme_config_channel, m->cme_config_file);
    } else {
        ch->venue_channel_id = m->cme_config_channel;
        /* If CME lists only a B incremental feed, it becomes our primary line. */
        const struct tp_cme_connection *ia = tp_cme_channel_feed(cme, "I", 'A');
        import_cme_line(&ch->lines[0], ia ? ia : tp_cme_channel_feed(cme, "I", 'B'));
        if (ia != NULL)
            import_cme_line(&ch->lines[1], tp_cme_channel_feed(cme, "I", 'B'));
        import_cme_line(&ch->snapshot[0], tp_cme_channel_feed(cme, "S", 'A'));
        import_cme_line(&ch->snapshot[1], tp_cme_channel_feed(cme, "S", 'B'));
        import_cme_line(&m->definitions[0], tp_cme_channel_feed(cme, "N", 'A'));
        import_cme_line(&m->definitions[1], tp_cme_channel_feed(cme, "N", 'B'));
        import_cme_line(&m->snapshot_mbo[0], tp_cme_channel_feed(cme, "SMBO", 'A'));
        import_cme_line(&m->snapshot_mbo[1], tp_cme_channel_feed(cme, "SMBO", 'B'));
        ok = true;
    }
    free(cme);
    return ok;
}

static void parse_mdp3_channel(struct loader *ld, const char *path, const json_t *obj,
                               struct tp_cfg_channel *ch)
{
    get_path(ld, path, obj, "schema", false, true, ch->proto.mdp3.schema,
             sizeof(ch->proto.mdp3.schema));
}

static void parse_mdp3_recovery(struct loader *ld, const char *path, const json_t *obj,
                                struct tp_cfg_channel *ch, const int rx_ports[2])
{
    struct tp_cfg_mdp3_channel *m = &ch->proto.mdp3;
    parse_line_pair_key(ld, path, obj, "snapshot", ch->snapshot, rx_ports);
    parse_line_pair_key(ld, path, obj, "definitions", m->definitions, rx_ports);
    const json_t *mbo =
        parse_line_pair_key(ld, path, obj, "snapshot_mbo", m->snapshot_mbo, rx_ports);
    /* Its orders are applied on top of what the price-level snapshot recovered. */
    if (mbo != NULL && !ch->snapshot[0].present && !ch->snapshot[1].present) {
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, "snapshot_mbo");
        tp_jw_error(ld->errs, child, "needs recovery.snapshot (the price-level snapshot lines)");
    }
    tp_jw_bool(ld->errs, path, obj, "audit_always", false, &m->audit_always);
}

/* Per instrument id of the capacity, 12 bytes of RptSeq and order-book state, and the 4 MiB
 * buffer of incrementals kept for replay after a snapshot. */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t state_bytes = 12, replay_bytes = 4u << 20;
    (void)ch;
    return state_bytes * cfg->instruments.capacity + replay_bytes;
}

static int check_files(const struct tp_cfg_channel *ch, const char **key, char *why,
                       size_t why_size)
{
    const char *schema = ch->proto.mdp3.schema;
    *key = "schema";
    return schema[0] == '\0' ? 0 : tp_mdp3_schema_file_check(schema, why, why_size);
}

static const char *const channel_keys[] = {"schema", NULL};
static const struct tp_cfg_venue_lines recovery_lines[] = {
    {"definitions", offsetof(struct tp_cfg_channel, proto.mdp3.definitions)},
    {"snapshot_mbo", offsetof(struct tp_cfg_channel, proto.mdp3.snapshot_mbo)},
    {NULL, 0}};
static const char *const recovery_keys[] = {"snapshot", "definitions", "snapshot_mbo",
                                            "audit_always", NULL};

const struct tp_cfg_venue tp_cfg_venue_mdp3 = {
    .name = "mdp3",
    .protocol = TP_CFG_PROTO_MDP3,
    .bus_name = "CME",
    .silence_ms = 0,
    .locate_map = false,
    .import_key = "cme_config",
    .import = import_cme,
    .channel_keys = channel_keys,
    .parse_channel = parse_mdp3_channel,
    .recovery_keys = recovery_keys,
    .parse_recovery = parse_mdp3_recovery,
    .recovery_lines = recovery_lines,
    .channel_bytes = channel_bytes,
    .check_files = check_files,
};
