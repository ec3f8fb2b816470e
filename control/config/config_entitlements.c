/*
 * The "entitlements" section and the topic names: a default policy and rules that allow a uid or
 * user and/or a gid or group some venues, instruments (patterns) and topics. Validates the
 * policy, that a rule names a subject (uid or user, not both; gid or group, not both) that exists
 * on this host and that its topics are known.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "config_loader.h"

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

void parse_entitlements(struct loader *ld, const json_t *root)
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
