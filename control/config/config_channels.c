/*
 * The "channels" section: each channel's protocol (one of the venues of config_venue.h), venue,
 * id, layout release, its A/B lines (multicast group, port, VLAN, source, rx port) written out
 * or imported by its venue from an exchange's file, its recovery (config_recovery.c) and its
 * venue's own keys. Validates the lines of a channel and, across channels, that no two lines
 * share a classification key.
 */
#include <stdio.h>
#include <string.h>

#include "config_loader.h"
#include "config_venue.h"

/*
 * One line object. Values in *line on entry (imported from an exchange's file, or zero) are
 * defaults the JSON overrides; default_rx_port is the channel's rx_ports entry for this side (-1 if
 * none).
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
 * an exchange's file. Side a is required unless imported.
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

/* A line pair under obj[key] (an object, side a required); obj[key] or NULL. */
const json_t *parse_line_pair_key(struct loader *ld, const char *path, const json_t *obj,
                                  const char *key, struct tp_cfg_line pair[2],
                                  const int rx_ports[2])
{
    json_t *value = tp_jw_get(ld->errs, path, obj, key, JSON_OBJECT, false);
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, key);
    parse_line_pair(ld, child, value, pair, rx_ports, true);
    return value;
}

#define CHANNEL_KEYS_MAX 32

/* The keys every channel has, every venue's, and "release": what a channel object may hold. */
static void channel_keys(const char *keys[CHANNEL_KEYS_MAX + 1])
{
    static const char *const common[] = {"name",  "protocol", "venue",    "id",
                                         "lines", "recovery", "rx_ports", NULL};
    unsigned n = 0;
    for (unsigned i = 0; common[i] != NULL; i++)
        keys[n++] = common[i];
    for (unsigned v = 0; tp_cfg_venues[v] != NULL; v++) {
        const struct tp_cfg_venue *venue = tp_cfg_venues[v];
        if (venue->import_key != NULL && n + 1 < CHANNEL_KEYS_MAX)
            keys[n++] = venue->import_key;
        for (const char *const *k = venue->channel_keys; k != NULL && *k != NULL; k++)
            if (n + 1 < CHANNEL_KEYS_MAX)
                keys[n++] = *k;
    }
    keys[n++] = "release";
    keys[n] = NULL;
}

/* The venues whose channels name releases, for "only for protocol ...". */
static void release_venues(char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned v = 0; tp_cfg_venues[v] != NULL && len < size; v++)
        if (tp_cfg_venues[v]->release != NULL)
            len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " or " : "",
                                    tp_cfg_venues[v]->name);
}

/* A channel whose protocol was refused keeps no venue's part (config_venue.h): what a venue's
 * reader put there only served to report its mistakes. */
static void drop_refused(struct tp_cfg_channel *ch, const struct tp_cfg_venue *mine)
{
    if (mine == NULL)
        memset(&ch->proto, 0, sizeof(ch->proto));
}

/* "release": the layout release of the venue's messages (two may run at once in a migration).
 * A channel whose protocol was refused has it read by the first venue that has releases. */
static void parse_release(struct loader *ld, const char *path, const json_t *obj,
                          struct tp_cfg_channel *ch, const struct tp_cfg_venue *mine)
{
    const struct tp_cfg_venue *venue = mine;
    char child[TP_JW_PATH_MAX], name[16], why[128];
    tp_jw_path_key(child, path, "release");
    if (json_object_get(obj, "release") == NULL)
        return;
    for (unsigned v = 0; venue == NULL && tp_cfg_venues[v] != NULL; v++)
        if (tp_cfg_venues[v]->release != NULL)
            venue = tp_cfg_venues[v];
    if (venue == NULL || venue->release == NULL) {
        char names[64];
        release_venues(names, sizeof(names));
        tp_jw_error(ld->errs, child, "only for protocol %s", names);
        return;
    }
    if (!tp_jw_string(ld->errs, path, obj, "release", sizeof(name), false, name))
        return;
    if (venue->release(name, ch, why, sizeof(why)) != 0)
        tp_jw_error(ld->errs, child, "%s", why);
    drop_refused(ch, mine);
}

/* The venues' own channel keys: read by the channel's venue (every venue when its protocol was
 * refused), refused on the channels of others. */
static void parse_venue_keys(struct loader *ld, const char *path, const json_t *obj,
                             struct tp_cfg_channel *ch, const struct tp_cfg_venue *mine)
{
    for (unsigned v = 0; tp_cfg_venues[v] != NULL; v++) {
        const struct tp_cfg_venue *venue = tp_cfg_venues[v];
        if (venue->channel_keys == NULL)
            continue;
        if (mine == NULL || mine == venue) {
            venue->parse_channel(ld, path, obj, ch);
            drop_refused(ch, mine);
            continue;
        }
        for (const char *const *k = venue->channel_keys; *k != NULL; k++) {
            char child[TP_JW_PATH_MAX];
            tp_jw_path_key(child, path, *k);
            if (json_object_get(obj, *k) != NULL)
                tp_jw_error(ld->errs, child, "only for protocol %s", venue->name);
        }
    }
}

/*
 * The venues' imports of lines from an exchange's file, before "lines": refused on the channels
 * of other venues. *imported tells whether one ran; false when the channel is not read further
 * (a refused or failed import would only add follow-on errors).
 */
static bool import_lines(struct loader *ld, const char *path, const json_t *obj,
                         struct tp_cfg_channel *ch, const struct tp_cfg_venue *mine, bool *imported)
{
    *imported = false;
    for (unsigned v = 0; tp_cfg_venues[v] != NULL; v++) {
        const struct tp_cfg_venue *venue = tp_cfg_venues[v];
        if (venue->import_key == NULL)
            continue;
        json_t *value = tp_jw_get(ld->errs, path, obj, venue->import_key, JSON_OBJECT, false);
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, venue->import_key);
        if (value == NULL)
            continue;
        if (mine != NULL && mine != venue) {
            tp_jw_error(ld->errs, child, "only for protocol %s", venue->name);
            return false;
        }
        bool ok = venue->import(ld, child, value, ch);
        drop_refused(ch, mine);
        if (!ok)
            return false;
        *imported = true;
    }
    return true;
}

static void parse_channel(struct loader *ld, const char *path, const json_t *obj,
                          struct tp_cfg_channel *ch)
{
    const char *protocols[16], *keys[CHANNEL_KEYS_MAX + 1];
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
    channel_keys(keys);
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    get_name(ld, path, obj, "name", true, ch->name, sizeof(ch->name));
    int proto = -1;
    if (tp_jw_enum(ld->errs, path, obj, "protocol", protocols, true, &proto))
        ch->protocol = tp_cfg_venues[proto]->protocol;
    const struct tp_cfg_venue *mine = proto < 0 ? NULL : tp_cfg_venues[proto];
    if (mine != NULL && mine->defaults != NULL)
        mine->defaults(ch);
    ch->silence_ms = mine == NULL ? 0 : mine->silence_ms;
    /* A refused protocol leaves the first venue's name (the document fails anyway). */
    snprintf(ch->venue, sizeof(ch->venue), "%s", (mine ? mine : tp_cfg_venues[0])->bus_name);
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

    bool imported;
    if (!import_lines(ld, path, obj, ch, mine, &imported))
        return;
    json_t *lines = tp_jw_get(ld->errs, path, obj, "lines", JSON_OBJECT, !imported);
    tp_jw_path_key(child, path, "lines");
    if (lines != NULL || ch->lines[0].present)
        parse_line_pair(ld, child, lines, ch->lines, rx_ports, true);

    json_t *rec = tp_jw_get(ld->errs, path, obj, "recovery", JSON_OBJECT, false);
    tp_jw_path_key(child, path, "recovery");
    parse_recovery(ld, child, rec, ch, rx_ports);

    parse_release(ld, path, obj, ch, mine);
    parse_venue_keys(ld, path, obj, ch, mine);
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
    struct {
        const struct tp_cfg_line *pair;
        char path[TP_JW_PATH_MAX];
    } kinds[TP_CFG_CHANNEL_LINES / 2];
    char recovery[TP_JW_PATH_MAX];
    tp_jw_path_key(recovery, path, "recovery");
    kinds[0].pair = ch->lines;
    tp_jw_path_key(kinds[0].path, path, "lines");
    kinds[1].pair = ch->snapshot;
    tp_jw_path_key(kinds[1].path, recovery, "snapshot");
    unsigned n_kinds = 2;
    const struct tp_cfg_venue *venue = tp_cfg_venue_get(ch->protocol);
    for (const struct tp_cfg_venue_lines *vl = venue ? venue->recovery_lines : NULL;
         vl != NULL && vl->key != NULL && n_kinds < TP_CFG_CHANNEL_LINES / 2; vl++) {
        kinds[n_kinds].pair = (const struct tp_cfg_line *)((const char *)ch + vl->offset);
        tp_jw_path_key(kinds[n_kinds++].path, recovery, vl->key);
    }
    unsigned n = 0;
    for (unsigned k = 0; k < n_kinds; k++) {
        for (int side = 0; side < 2; side++) {
            if (!kinds[k].pair[side].present)
                continue;
            refs[n].line = &kinds[k].pair[side];
            tp_jw_path_key(refs[n].path, kinds[k].path, side ? "b" : "a");
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

/* The key a channel's venue id came from: "id", or else the import that set it. */
static const char *id_key(const json_t *obj)
{
    for (unsigned v = 0; json_object_get(obj, "id") == NULL && tp_cfg_venues[v] != NULL; v++) {
        const char *key = tp_cfg_venues[v]->import_key;
        if (key != NULL && json_object_get(obj, key) != NULL)
            return key;
    }
    return "id";
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
            tp_jw_path_key(child, path, id_key(obj));
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
