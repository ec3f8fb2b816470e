/*
 * Field readers the config sections share, on top of json_walk.h's typed getters: names (the
 * alphabet of metric labels and socket replies), paths resolved against the config file's
 * directory, string lists, "unknown X (did you mean Y?)" and the top-level array sections
 * (ports, channels, lcores): each problem is one error naming its JSON path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_loader.h"

bool is_power_of_two(uint64_t v)
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
bool get_name(struct loader *ld, const char *path, const json_t *obj, const char *key,
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
bool get_path(struct loader *ld, const char *path, const json_t *obj, const char *key,
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
void string_list(struct loader *ld, const char *path, const json_t *obj, const char *key, char *out,
                 size_t stride, unsigned max, unsigned *n)
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

void unknown_name(struct loader *ld, const char *path, const char *what, const char *name,
                  const char *const *known)
{
    const char *hint = tp_jw_closest(name, known);
    if (hint != NULL)
        tp_jw_error(ld->errs, path, "unknown %s \"%s\" (did you mean \"%s\"?)", what, name, hint);
    else
        tp_jw_error(ld->errs, path, "unknown %s \"%s\"", what, name);
}

/* An array element that must be an object. */
bool object_item(struct loader *ld, const char *path, const json_t *item)
{
    if (json_is_object(item))
        return true;
    tp_jw_error(ld->errs, path, "expected an object, got %s", tp_jw_type_name(item));
    return false;
}

void parse_section(struct loader *ld, const json_t *root, const struct section *s)
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
