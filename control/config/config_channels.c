/*
 * The "channels" section: each venue channel's protocol (MDP3, ITCH, EOBI), venue, id, schema, its
 * A/B lines (multicast group, port, VLAN, source, rx port) written out or imported from a
 * CME config.xml, and its recovery (config_recovery.c). Validates the lines of a channel and,
 * across channels, that no two lines share a classification key.
 */
#include <stdio.h>
#include <string.h>

#include "config_loader.h"
#include "cme_channels.h"
#include "config_venue.h"
#include "eobi_release.h"

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
void parse_line_pair(struct loader *ld, const char *path, const json_t *obj,
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
        import_cme_line(&ch->snapshot_mbo[0], tp_cme_channel_feed(cme, "SMBO", 'A'));
        import_cme_line(&ch->snapshot_mbo[1], tp_cme_channel_feed(cme, "SMBO", 'B'));
        ok = true;
    }
    free(cme);
    return ok;
}

/* "release": the T7 release of an EOBI channel's layouts (two run at once in a migration). */
static void parse_release(struct loader *ld, const char *path, const json_t *obj,
                          struct tp_cfg_channel *ch)
{
    char child[TP_JW_PATH_MAX], name[16];
    ch->eobi_release = TP_EOBI_RELEASE_DEFAULT;
    tp_jw_path_key(child, path, "release");
    if (json_object_get(obj, "release") == NULL)
        return;
    if (ch->protocol != TP_CFG_PROTO_EOBI && ch->protocol != 0) {
        tp_jw_error(ld->errs, child, "only for protocol eobi");
        return;
    }
    if (!tp_jw_string(ld->errs, path, obj, "release", sizeof(name), false, name))
        return;
    int r = tp_eobi_release_parse(name);
    if (r < 0)
        tp_jw_error(ld->errs, child, "unknown T7 release \"%s\" (known: %s)", name,
                    TP_EOBI_RELEASE_NAMES);
    else
        ch->eobi_release = (uint8_t)r;
}

static void parse_channel(struct loader *ld, const char *path, const json_t *obj,
                          struct tp_cfg_channel *ch)
{
    static const char *const keys[] = {"name",       "protocol", "venue",  "id",
                                       "lines",      "recovery", "schema", "rx_ports",
                                       "cme_config", "release",  NULL};
    const char *protocols[16];
    unsigned n_protocols = 0;
    while (tp_cfg_venues[n_protocols] != NULL &&
           n_protocols + 1 < sizeof(protocols) / sizeof(protocols[0])) {
        protocols[n_protocols] = tp_cfg_venues[n_protocols]->name;
        n_protocols++;
    }
    protocols[n_protocols] = NULL;
    memset(ch, 0, sizeof(*ch));
    ch->gap_wait_us = 500;
    ch->give_up_ms = 5000;
    ch->rerequest_max_messages = 100;
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    get_name(ld, path, obj, "name", true, ch->name, sizeof(ch->name));
    int proto = -1;
    if (tp_jw_enum(ld->errs, path, obj, "protocol", protocols, true, &proto))
        ch->protocol = tp_cfg_venues[proto]->protocol;
    /* A refused protocol leaves the first venue's name (the document fails anyway). */
    const struct tp_cfg_venue *venue = tp_cfg_venues[proto < 0 ? 0 : proto];
    ch->silence_ms = proto < 0 ? 0 : venue->silence_ms;
    snprintf(ch->venue, sizeof(ch->venue), "%s", venue->bus_name);
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
    if (cme != NULL && ch->protocol != TP_CFG_PROTO_MDP3 && ch->protocol != 0) {
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

    parse_release(ld, path, obj, ch);

    tp_jw_path_key(child, path, "schema");
    if (json_object_get(obj, "schema") != NULL && ch->protocol != TP_CFG_PROTO_MDP3 &&
        ch->protocol != 0)
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

unsigned channel_lines(const struct tp_cfg_channel *ch, const char *path,
                       struct line_ref refs[TP_CFG_CHANNEL_LINES])
{
    const struct {
        const struct tp_cfg_line *pair;
        const char *name;
    } kinds[] = {{ch->lines, "lines"},
                 {ch->snapshot, "recovery.snapshot"},
                 {ch->definitions, "recovery.definitions"},
                 {ch->snapshot_mbo, "recovery.snapshot_mbo"}};
    unsigned n = 0;
    for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
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
void check_duplicate_lines(struct loader *ld)
{
    static struct line_ref refs[TP_CFG_MAX_CHANNELS * TP_CFG_CHANNEL_LINES];
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
void parse_channels_item(struct loader *ld, const char *path, const json_t *obj)
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
