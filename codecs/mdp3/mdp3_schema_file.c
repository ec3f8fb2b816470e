/*
 * The schema file check: see mdp3_schema_file.h. A schema's root element opens within its first
 * few kilobytes, after the XML declaration and comments, so only the file's head is read.
 */
#include "mdp3_schema_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3_sbe.h"

#define SCHEMA_HEAD_BYTES 65536

/* The decimal value of attribute `name` inside the tag [tag, end), or -1. */
static long long attribute(const char *tag, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = tag; p + n + 2 < end; p++) {
        /* A whole attribute name: preceded by white space, followed by =" or ='. */
        if ((p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n' && p[-1] != '\r') ||
            strncmp(p, name, n) != 0 || p[n] != '=' || (p[n + 1] != '"' && p[n + 1] != '\''))
            continue;
        const char *v = p + n + 2;
        long long value = 0;
        const char *d = v;
        while (d < end && *d >= '0' && *d <= '9' && d - v < 10)
            value = value * 10 + (*d++ - '0');
        return d > v && d < end && *d == p[n + 1] ? value : -1;
    }
    return -1;
}

int tp_sbe_schema_text_id(const char *text, uint32_t *id, uint32_t *version)
{
    for (const char *p = strchr(text, '<'); p != NULL; p = strchr(p + 1, '<')) {
        if (strncmp(p, "<!--", 4) == 0) {
            /* A comment may quote a schema element: skip it whole. */
            p = strstr(p + 4, "-->");
            if (p == NULL)
                return -ENOENT;
            continue;
        }
        const char *name = p + 1, *colon = strpbrk(name, ": \t\r\n>");
        if (colon != NULL && *colon == ':')
            name = colon + 1;
        if (strncmp(name, "messageSchema", 13) != 0 || name[13] == '\0' ||
            strchr(" \t\r\n", name[13]) == NULL)
            continue;
        const char *end = strchr(name, '>');
        if (end == NULL)
            return -ENOENT;
        long long i = attribute(name + 13, end, "id"), v = attribute(name + 13, end, "version");
        if (i < 0 || v < 0 || i > UINT32_MAX || v > UINT32_MAX)
            return -EINVAL;
        *id = (uint32_t)i;
        *version = (uint32_t)v;
        return 0;
    }
    return -ENOENT;
}

int tp_sbe_schema_file_id(const char *path, uint32_t *id, uint32_t *version, char *err,
                          size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int rc = -errno;
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return rc;
    }
    char *head = malloc(SCHEMA_HEAD_BYTES + 1);
    if (head == NULL) {
        fclose(f);
        snprintf(err, err_len, "%s: out of memory", path);
        return -ENOMEM;
    }
    size_t len = fread(head, 1, SCHEMA_HEAD_BYTES, f);
    fclose(f);
    head[len] = '\0';
    int rc = tp_sbe_schema_text_id(head, id, version);
    free(head);
    if (rc == -ENOENT)
        snprintf(err, err_len, "%s: no messageSchema element in its first %d bytes", path,
                 SCHEMA_HEAD_BYTES);
    else if (rc != 0)
        snprintf(err, err_len, "%s: messageSchema without a decimal id and version", path);
    return rc == 0 ? 0 : -EINVAL;
}

int tp_mdp3_schema_file_check(const char *path, char *err, size_t err_len)
{
    uint32_t id, version;
    int rc = tp_sbe_schema_file_id(path, &id, &version, err, err_len);
    if (rc != 0)
        return rc;
    if (id != MKTDATA_SCHEMA_ID || version != MKTDATA_SCHEMA_VERSION) {
        snprintf(err, err_len,
                 "%s is schema id %u version %u, but this build decodes id %u version %u "
                 "(rebuild with -Dmdp3_schema=%s)",
                 path, id, version, (unsigned)MKTDATA_SCHEMA_ID, (unsigned)MKTDATA_SCHEMA_VERSION,
                 path);
        return -EPROTO;
    }
    return 0;
}
