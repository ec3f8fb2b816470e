/* Config mutation helper for tests: see config_mutate.h. */
#include "config_mutate.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Follow "a[1].b.c" to the parent of the last segment; *last and *last_index name the slot. */
static json_t *walk(json_t *root, const char *path, char *last, long *last_index)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    json_t *node = root;
    char *seg = buf;
    for (;;) {
        char *dot = strchr(seg, '.');
        if (dot != NULL)
            *dot = '\0';
        char *bracket = strchr(seg, '[');
        long index = -1;
        if (bracket != NULL) {
            index = strtol(bracket + 1, NULL, 10);
            *bracket = '\0';
        }
        if (dot == NULL) {
            if (index >= 0) {
                node = json_object_get(node, seg);
                last[0] = '\0';
            } else {
                strcpy(last, seg);
            }
            *last_index = index;
            return node;
        }
        node = json_object_get(node, seg);
        if (index >= 0)
            node = json_array_get(node, (size_t)index);
        if (node == NULL)
            return NULL;
        seg = dot + 1;
    }
}

int tp_test_load_mutated_v(const char *base_json, const char *base_dir, struct tp_config *cfg,
                           struct tp_config_errors *errs, int pairs, va_list ap)
{
    json_error_t jerr;
    json_t *root = json_loads(base_json, 0, &jerr);
    if (root == NULL) {
        fprintf(stderr, "base config: %s\n", jerr.text);
        abort();
    }
    for (int i = 0; i < pairs; i++) {
        const char *path = va_arg(ap, const char *);
        const char *value = va_arg(ap, const char *);
        char last[64];
        long index;
        json_t *parent = walk(root, path, last, &index);
        json_t *v = value ? json_loads(value, JSON_DECODE_ANY, &jerr) : NULL;
        if (parent == NULL || (value != NULL && v == NULL)) {
            fprintf(stderr, "bad mutation %s = %s\n", path, value ? value : "(delete)");
            abort();
        }
        if (index >= 0 && v != NULL && (size_t)index == json_array_size(parent))
            json_array_append_new(parent, v);
        else if (index >= 0 && v != NULL)
            json_array_set_new(parent, (size_t)index, v);
        else if (index >= 0)
            json_array_remove(parent, (size_t)index);
        else if (v != NULL)
            json_object_set_new(parent, last, v);
        else
            json_object_del(parent, last);
    }
    char *text = json_dumps(root, 0);
    json_decref(root);
    int rc = tp_config_load_string(text, base_dir, cfg, errs);
    free(text);
    return rc;
}

int tp_test_load_mutated(const char *base_json, const char *base_dir, struct tp_config *cfg,
                         struct tp_config_errors *errs, int pairs, ...)
{
    va_list ap;
    va_start(ap, pairs);
    int rc = tp_test_load_mutated_v(base_json, base_dir, cfg, errs, pairs, ap);
    va_end(ap);
    return rc;
}
