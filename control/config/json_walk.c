/* Path-aware jansson getters for the config validator: see json_walk.h. */
#include "json_walk.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tp_jw_error(struct tp_config_errors *errs, const char *path, const char *fmt, ...)
{
    if (errs->count >= TP_CFG_MAX_ERRORS) {
        errs->dropped++;
        return;
    }
    struct tp_config_error *e = &errs->items[errs->count++];
    snprintf(e->path, sizeof(e->path), "%s", path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

void tp_jw_path_key(char *out, const char *parent, const char *key)
{
    if (parent[0] == '\0')
        snprintf(out, TP_JW_PATH_MAX, "%s", key);
    else
        snprintf(out, TP_JW_PATH_MAX, "%s.%s", parent, key);
}

void tp_jw_path_index(char *out, const char *parent, size_t index)
{
    snprintf(out, TP_JW_PATH_MAX, "%s[%zu]", parent, index);
}

const char *tp_jw_type_name(const json_t *value)
{
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

static const char *json_type_wanted_name(json_type t)
{
    switch (t) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    default:
        return "a value";
    }
}

unsigned tp_jw_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return UINT32_MAX;
    /* Two rows of the classic dynamic programme. */
    unsigned prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
            unsigned best = sub < del ? sub : del;
            cur[j] = best < ins ? best : ins;
        }
        memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
    }
    return prev[lb];
}

const char *tp_jw_closest(const char *word, const char *const *candidates)
{
    /* A typo is at most a third of the word's letters away (at least one, at most three). */
    size_t len = strlen(word);
    unsigned limit = (unsigned)(len / 3);
    if (limit < 1)
        limit = 1;
    if (limit > 3)
        limit = 3;
    const char *best = NULL;
    unsigned best_distance = limit + 1;
    for (size_t i = 0; candidates[i] != NULL; i++) {
        unsigned d = tp_jw_edit_distance(word, candidates[i]);
        if (d < best_distance) {
            best_distance = d;
            best = candidates[i];
        }
    }
    return best;
}

void tp_jw_check_keys(struct tp_config_errors *errs, const char *path, const json_t *obj,
                      const char *const *allowed)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        bool known = strcmp(key, "_comment") == 0;
        for (size_t i = 0; !known && allowed[i] != NULL; i++)
            known = strcmp(key, allowed[i]) == 0;
        if (known)
            continue;
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, key);
        const char *hint = tp_jw_closest(key, allowed);
        if (hint != NULL)
            tp_jw_error(errs, child, "unknown key (did you mean \"%s\"?)", hint);
        else
            tp_jw_error(errs, child, "unknown key");
    }
}

/* obj[key] with its path in child; NULL (and an error if required) when absent. */
static json_t *lookup(struct tp_config_errors *errs, const char *path, const json_t *obj,
                      const char *key, bool required, char *child)
{
    tp_jw_path_key(child, path, key);
    json_t *v = json_object_get(obj, key);
    if (v == NULL && required)
        tp_jw_error(errs, child, "required key is missing");
    return v;
}

json_t *tp_jw_get(struct tp_config_errors *errs, const char *path, const json_t *obj,
                  const char *key, json_type wanted, bool required)
{
    char child[TP_JW_PATH_MAX];
    json_t *v = lookup(errs, path, obj, key, required, child);
    if (v == NULL)
        return NULL;
    if (json_typeof(v) != wanted) {
        tp_jw_error(errs, child, "expected %s, got %s", json_type_wanted_name(wanted),
                    tp_jw_type_name(v));
        return NULL;
    }
    return v;
}

bool tp_jw_uint_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                      uint64_t min, uint64_t max, uint64_t *out)
{
    if (!json_is_integer(value)) {
        tp_jw_error(errs, path, "expected an integer, got %s", tp_jw_type_name(value));
        return false;
    }
    json_int_t n = json_integer_value(value);
    if (n < 0 || (uint64_t)n < min || (uint64_t)n > max) {
        tp_jw_error(errs, path,
                    "%" JSON_INTEGER_FORMAT " is out of range [%" PRIu64 ", %" PRIu64 "]", n, min,
                    max);
        return false;
    }
    *out = (uint64_t)n;
    return true;
}

bool tp_jw_uint(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                uint64_t min, uint64_t max, bool required, uint64_t *out)
{
    char child[TP_JW_PATH_MAX];
    json_t *v = lookup(errs, path, obj, key, required, child);
    if (v == NULL)
        return false;
    return tp_jw_uint_value(errs, child, v, min, max, out);
}

bool tp_jw_bool(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                bool required, bool *out)
{
    char child[TP_JW_PATH_MAX];
    json_t *v = lookup(errs, path, obj, key, required, child);
    if (v == NULL)
        return false;
    if (!json_is_boolean(v)) {
        tp_jw_error(errs, child, "expected a boolean, got %s", tp_jw_type_name(v));
        return false;
    }
    *out = json_is_true(v);
    return true;
}

bool tp_jw_string_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                        size_t cap, char *out)
{
    if (!json_is_string(value)) {
        tp_jw_error(errs, path, "expected a string, got %s", tp_jw_type_name(value));
        return false;
    }
    size_t len = json_string_length(value);
    const char *s = json_string_value(value);
    if (len == 0) {
        tp_jw_error(errs, path, "must not be empty");
        return false;
    }
    if (strlen(s) != len) {
        tp_jw_error(errs, path, "must not contain NUL characters");
        return false;
    }
    if (len >= cap) {
        tp_jw_error(errs, path, "is %zu bytes long, the limit is %zu", len, cap - 1);
        return false;
    }
    memcpy(out, s, len + 1);
    return true;
}

bool tp_jw_string(struct tp_config_errors *errs, const char *path, const json_t *obj,
                  const char *key, size_t cap, bool required, char *out)
{
    char child[TP_JW_PATH_MAX];
    json_t *v = lookup(errs, path, obj, key, required, child);
    if (v == NULL)
        return false;
    return tp_jw_string_value(errs, child, v, cap, out);
}

/* "a, b or c" into buf. */
static void join_names(const char *const *names, char *buf, size_t size)
{
    size_t n = 0, used = 0;
    while (names[n] != NULL)
        n++;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        const char *sep = i == 0 ? "" : (i + 1 == n ? " or " : ", ");
        int w = snprintf(buf + used, size - used, "%s%s", sep, names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

bool tp_jw_enum(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                const char *const *names, bool required, int *out)
{
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, key);
    char text[TP_CFG_NAME_MAX];
    if (!tp_jw_string(errs, path, obj, key, sizeof(text), required, text))
        return false;
    for (int i = 0; names[i] != NULL; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return true;
        }
    }
    char expected[128];
    join_names(names, expected, sizeof(expected));
    const char *hint = tp_jw_closest(text, names);
    if (hint != NULL)
        tp_jw_error(errs, child, "unknown value \"%s\" (expected %s; did you mean \"%s\"?)", text,
                    expected, hint);
    else
        tp_jw_error(errs, child, "unknown value \"%s\" (expected %s)", text, expected);
    return false;
}

int tp_parse_ipv4(const char *text, uint32_t *out)
{
    struct in_addr a;
    if (inet_pton(AF_INET, text, &a) != 1)
        return -1;
    *out = ntohl(a.s_addr);
    return 0;
}

bool tp_jw_ipv4_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                      enum tp_jw_addr_kind kind, uint32_t *out)
{
    char text[32];
    if (!tp_jw_string_value(errs, path, value, sizeof(text), text))
        return false;
    uint32_t addr;
    if (tp_parse_ipv4(text, &addr) != 0) {
        tp_jw_error(errs, path, "\"%s\" is not an IPv4 address", text);
        return false;
    }
    bool multicast = (addr >> 28) == 0xe;
    if (kind == TP_JW_ADDR_MULTICAST && !multicast) {
        tp_jw_error(errs, path, "\"%s\" is not a multicast address (224.0.0.0/4)", text);
        return false;
    }
    if (kind == TP_JW_ADDR_UNICAST && (multicast || addr == 0 || addr == UINT32_MAX)) {
        tp_jw_error(errs, path, "\"%s\" is not a unicast host address", text);
        return false;
    }
    *out = addr;
    return true;
}

bool tp_jw_ipv4(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                enum tp_jw_addr_kind kind, bool required, uint32_t *out)
{
    char child[TP_JW_PATH_MAX];
    json_t *v = lookup(errs, path, obj, key, required, child);
    if (v == NULL)
        return false;
    return tp_jw_ipv4_value(errs, child, v, kind, out);
}

bool tp_jw_mode(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                bool required, mode_t *out)
{
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, key);
    char text[8];
    if (!tp_jw_string(errs, path, obj, key, sizeof(text), required, text))
        return false;
    size_t len = strlen(text);
    unsigned mode = 0;
    bool octal = len >= 3 && len <= 4;
    for (size_t i = 0; octal && i < len; i++) {
        octal = text[i] >= '0' && text[i] <= '7';
        mode = mode * 8 + (unsigned)(text[i] - '0');
    }
    if (!octal || mode > 0777) {
        tp_jw_error(errs, child, "\"%s\" is not an octal file mode like \"0640\"", text);
        return false;
    }
    if (mode & 0002) {
        tp_jw_error(errs, child, "world-writable mode \"%s\" is refused", text);
        return false;
    }
    *out = (mode_t)mode;
    return true;
}
