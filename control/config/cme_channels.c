/* Strict reader of CME's channel configuration XML: see cme_channels.h. */
#include "cme_channels.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_walk.h" /* tp_parse_ipv4 */

#define XML_MAX_DEPTH 16
#define XML_NAME_MAX  32
#define XML_TEXT_MAX  256

/* Parser state: the cursor, the open-element stack and what we collect for the wanted channel. */
struct cme_parser {
    const char *p, *end;
    unsigned line;
    char *err;
    size_t err_size;
    bool failed;

    unsigned depth;
    char stack[XML_MAX_DEPTH][XML_NAME_MAX];
    char text[XML_TEXT_MAX]; /* decoded text of the innermost element */
    size_t text_len;

    uint32_t wanted;
    struct tp_cme_channel *out;
    unsigned found;                 /* channels with the wanted id seen */
    bool in_wanted;                 /* inside <channel id=wanted> */
    struct tp_cme_connection *conn; /* connection being read, NULL outside one */
};

static void fail(struct cme_parser *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct cme_parser *x, const char *fmt, ...)
{
    if (x->failed)
        return;
    x->failed = true;
    int n = snprintf(x->err, x->err_size, "line %u: ", x->line);
    if (n < 0 || (size_t)n >= x->err_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err + n, x->err_size - (size_t)n, fmt, ap);
    va_end(ap);
}

static bool at(const struct cme_parser *x, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(x->end - x->p) >= n && memcmp(x->p, lit, n) == 0;
}

static void advance(struct cme_parser *x, size_t n)
{
    for (size_t i = 0; i < n && x->p < x->end; i++, x->p++)
        if (*x->p == '\n')
            x->line++;
}

static void skip_space(struct cme_parser *x)
{
    while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\r' || *x->p == '\n'))
        advance(x, 1);
}

/* Skip past the terminator (e.g. "?>" or "-->"); fail if the document ends first. */
static void skip_past(struct cme_parser *x, const char *terminator, const char *what)
{
    while (x->p < x->end && !at(x, terminator))
        advance(x, 1);
    if (x->p >= x->end)
        fail(x, "unterminated %s", what);
    else
        advance(x, strlen(terminator));
}

static bool name_char(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':')
        return true;
    return !first && ((c >= '0' && c <= '9') || c == '-' || c == '.');
}

static bool read_name(struct cme_parser *x, char *name)
{
    size_t n = 0;
    while (x->p < x->end && name_char(*x->p, n == 0)) {
        if (n + 1 >= XML_NAME_MAX) {
            fail(x, "name longer than %d bytes", XML_NAME_MAX - 1);
            return false;
        }
        name[n++] = *x->p;
        advance(x, 1);
    }
    name[n] = '\0';
    if (n == 0)
        fail(x, "expected a name");
    return n > 0;
}

/*
 * Decode character data up to the stop character (not consumed) into out, with the five predefined
 * entities and decimal/hex character references (ASCII only: the file has nothing else we use).
 */
static bool read_chars(struct cme_parser *x, char stop, char *out, size_t cap, size_t *len)
{
    size_t n = *len;
    while (x->p < x->end && *x->p != stop) {
        char c = *x->p;
        if (c == '<') {
            fail(x, "'<' inside an attribute value");
            return false;
        }
        if (c == '&') {
            static const struct {
                const char *ref;
                char ch;
            } entities[] = {
                {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
            bool matched = false;
            for (size_t i = 0; i < sizeof(entities) / sizeof(entities[0]); i++) {
                if (at(x, entities[i].ref)) {
                    c = entities[i].ch;
                    advance(x, strlen(entities[i].ref));
                    matched = true;
                    break;
                }
            }
            if (!matched && at(x, "&#")) {
                advance(x, 2);
                int base = 10;
                if (x->p < x->end && *x->p == 'x') {
                    base = 16;
                    advance(x, 1);
                }
                unsigned long v = 0;
                unsigned digits = 0;
                while (x->p < x->end && *x->p != ';' && digits < 8) {
                    char d = *x->p;
                    int dv = (d >= '0' && d <= '9')                 ? d - '0'
                             : (base == 16 && d >= 'a' && d <= 'f') ? d - 'a' + 10
                             : (base == 16 && d >= 'A' && d <= 'F') ? d - 'A' + 10
                                                                    : -1;
                    if (dv < 0)
                        break;
                    v = v * (unsigned long)base + (unsigned long)dv;
                    digits++;
                    advance(x, 1);
                }
                if (digits == 0 || x->p >= x->end || *x->p != ';' || v == 0 || v > 127) {
                    fail(x, "bad or non-ASCII character reference");
                    return false;
                }
                advance(x, 1);
                c = (char)v;
                matched = true;
            }
            if (!matched) {
                fail(x, "unknown entity");
                return false;
            }
        } else {
            advance(x, 1);
        }
        if (n + 1 >= cap) {
            fail(x, "text longer than %zu bytes", cap - 1);
            return false;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    *len = n;
    return true;
}

/* Copy a value into a fixed field, failing (not truncating) if it does not fit. */
static void set_field(struct cme_parser *x, char *field, size_t cap, const char *value,
                      const char *what)
{
    if (strlen(value) >= cap) {
        fail(x, "%s \"%s\" is too long", what, value);
        return;
    }
    strcpy(field, value);
}

static void on_attribute(struct cme_parser *x, const char *element, const char *name,
                         const char *value)
{
    if (x->depth == 2 && strcmp(element, "channel") == 0) {
        if (strcmp(name, "id") == 0) {
            char *endp;
            errno = 0;
            unsigned long id = strtoul(value, &endp, 10);
            if (value[0] < '0' || value[0] > '9' || *endp != '\0' || errno != 0 ||
                id > UINT32_MAX) {
                fail(x, "channel id \"%s\" is not a number", value);
                return;
            }
            x->in_wanted = id == x->wanted;
            if (x->in_wanted) {
                x->found++;
                memset(x->out, 0, sizeof(*x->out));
                x->out->id = (uint32_t)id;
            }
        } else if (strcmp(name, "label") == 0 && x->in_wanted) {
            snprintf(x->out->label, sizeof(x->out->label), "%s", value);
        }
    } else if (x->conn != NULL) {
        if (x->depth == 4 && strcmp(name, "id") == 0)
            set_field(x, x->conn->id, sizeof(x->conn->id), value, "connection id");
        else if (x->depth == 5 && strcmp(element, "type") == 0 && strcmp(name, "feed-type") == 0)
            set_field(x, x->conn->feed_type, sizeof(x->conn->feed_type), value, "feed-type");
    }
}

static void start_element(struct cme_parser *x, const char *name)
{
    if (x->depth == XML_MAX_DEPTH) {
        fail(x, "elements nested deeper than %d", XML_MAX_DEPTH);
        return;
    }
    if (x->depth == 0 && strcmp(name, "configuration") != 0) {
        fail(x, "root element is <%s>, expected <configuration>", name);
        return;
    }
    strcpy(x->stack[x->depth++], name);
    x->text_len = 0;
    x->text[0] = '\0';
    if (x->depth == 2 && strcmp(name, "channel") == 0)
        x->in_wanted = false;
    if (x->depth == 4 && x->in_wanted && strcmp(name, "connection") == 0 &&
        strcmp(x->stack[2], "connections") == 0) {
        if (x->out->n_connections == TP_CME_MAX_CONNECTIONS) {
            fail(x, "channel %u has more than %d connections", x->wanted, TP_CME_MAX_CONNECTIONS);
            return;
        }
        x->conn = &x->out->connections[x->out->n_connections++];
    }
}

/* A connection's child element ended: store its text. */
static void connection_field(struct cme_parser *x, const char *name)
{
    struct tp_cme_connection *c = x->conn;
    const char *t = x->text;
    if (strcmp(name, "ip") == 0 || strcmp(name, "host-ip") == 0) {
        uint32_t addr;
        if (tp_parse_ipv4(t, &addr) != 0) {
            fail(x, "<%s> \"%s\" is not an IPv4 address", name, t);
            return;
        }
        if (name[0] == 'i')
            c->ip = addr;
        else
            c->host_ip = addr;
    } else if (strcmp(name, "port") == 0) {
        char *endp;
        unsigned long port = strtoul(t, &endp, 10);
        if (t[0] < '0' || t[0] > '9' || *endp != '\0' || port == 0 || port > 65535) {
            fail(x, "<port> \"%s\" is not a UDP port", t);
            return;
        }
        c->port = (uint16_t)port;
    } else if (strcmp(name, "feed") == 0) {
        if ((t[0] != 'A' && t[0] != 'B') || t[1] != '\0') {
            fail(x, "<feed> \"%s\" is not A or B", t);
            return;
        }
        c->feed = t[0];
    } else if (strcmp(name, "protocol") == 0) {
        set_field(x, c->protocol, sizeof(c->protocol), t, "protocol");
    }
}

/* A connection ended: it must have said everything we rely on. */
static void check_connection(struct cme_parser *x)
{
    const struct tp_cme_connection *c = x->conn;
    if (c->id[0] == '\0')
        fail(x, "connection without an id");
    else if (c->feed_type[0] == '\0')
        fail(x, "connection %s has no <type feed-type=...>", c->id);
    else if (c->protocol[0] == '\0')
        fail(x, "connection %s has no <protocol>", c->id);
    else if (strcmp(c->protocol, "UDP/IP") == 0 && (c->ip == 0 || c->port == 0 || c->feed == 0))
        fail(x, "connection %s lacks <ip>, <port> or <feed>", c->id);
}

static void end_element(struct cme_parser *x, const char *name)
{
    if (x->depth == 0) {
        fail(x, "closing </%s> without an opening tag", name);
        return;
    }
    if (strcmp(x->stack[x->depth - 1], name) != 0) {
        fail(x, "closing </%s> does not match <%s>", name, x->stack[x->depth - 1]);
        return;
    }
    if (x->conn != NULL && x->depth == 5)
        connection_field(x, name);
    if (x->conn != NULL && x->depth == 4) {
        check_connection(x);
        x->conn = NULL;
    }
    if (x->depth == 2)
        x->in_wanted = false;
    x->depth--;
    x->text_len = 0;
    x->text[0] = '\0';
}

/* "<name attr='v' ...>" or ".../>": the '<' is already consumed. */
static void parse_start_tag(struct cme_parser *x)
{
    char name[XML_NAME_MAX];
    if (!read_name(x, name))
        return;
    start_element(x, name);
    for (;;) {
        if (x->failed)
            return;
        skip_space(x);
        if (x->p >= x->end) {
            fail(x, "unterminated tag <%s>", name);
            return;
        }
        if (*x->p == '>') {
            advance(x, 1);
            return;
        }
        if (at(x, "/>")) {
            advance(x, 2);
            end_element(x, name);
            return;
        }
        char attr[XML_NAME_MAX];
        if (!read_name(x, attr))
            return;
        skip_space(x);
        if (x->p >= x->end || *x->p != '=') {
            fail(x, "attribute %s without a value", attr);
            return;
        }
        advance(x, 1);
        skip_space(x);
        if (x->p >= x->end || (*x->p != '"' && *x->p != '\'')) {
            fail(x, "attribute %s value is not quoted", attr);
            return;
        }
        char quote = *x->p;
        advance(x, 1);
        char value[XML_TEXT_MAX];
        size_t len = 0;
        if (!read_chars(x, quote, value, sizeof(value), &len))
            return;
        if (x->p >= x->end) {
            fail(x, "unterminated attribute %s", attr);
            return;
        }
        advance(x, 1);
        on_attribute(x, name, attr, value);
    }
}

static void parse_end_tag(struct cme_parser *x)
{
    char name[XML_NAME_MAX];
    if (!read_name(x, name))
        return;
    skip_space(x);
    if (x->p >= x->end || *x->p != '>') {
        fail(x, "malformed closing tag </%s", name);
        return;
    }
    advance(x, 1);
    end_element(x, name);
}

/* Text between tags: only whitespace outside the root; kept (trimmed) for leaf elements. */
static void parse_text(struct cme_parser *x)
{
    char chunk[XML_TEXT_MAX];
    size_t len = 0;
    if (!read_chars(x, '<', chunk, sizeof(chunk), &len))
        return;
    chunk[len] = '\0';
    size_t start = 0;
    while (start < len && strchr(" \t\r\n", chunk[start]) != NULL)
        start++;
    while (len > start && strchr(" \t\r\n", chunk[len - 1]) != NULL)
        len--;
    chunk[len] = '\0';
    if (len == start)
        return;
    if (x->depth == 0) {
        fail(x, "text outside the root element");
        return;
    }
    size_t n = len - start;
    if (x->text_len + n + 1 > sizeof(x->text)) {
        fail(x, "text longer than %zu bytes", sizeof(x->text) - 1);
        return;
    }
    memcpy(x->text + x->text_len, chunk + start, n + 1);
    x->text_len += n;
}

int tp_cme_channel_find(const char *xml, size_t len, uint32_t id, struct tp_cme_channel *out,
                        char *err, size_t err_size)
{
    struct cme_parser x = {.p = xml,
                           .end = xml + len,
                           .line = 1,
                           .err = err,
                           .err_size = err_size,
                           .wanted = id,
                           .out = out};
    err[0] = '\0';
    bool seen_root = false;
    while (!x.failed && x.p < x.end) {
        if (at(&x, "<?")) {
            if (seen_root)
                fail(&x, "processing instruction after the root element started");
            skip_past(&x, "?>", "processing instruction");
        } else if (at(&x, "<!--")) {
            skip_past(&x, "-->", "comment");
        } else if (at(&x, "<!")) {
            fail(&x, "DOCTYPE and CDATA are not supported");
        } else if (at(&x, "</")) {
            advance(&x, 2);
            parse_end_tag(&x);
        } else if (at(&x, "<")) {
            if (seen_root && x.depth == 0)
                fail(&x, "more than one root element");
            seen_root = true;
            advance(&x, 1);
            parse_start_tag(&x);
        } else {
            parse_text(&x);
        }
    }
    if (!x.failed && !seen_root)
        fail(&x, "no root element");
    if (!x.failed && x.depth != 0)
        fail(&x, "document ends inside <%s>", x.stack[x.depth - 1]);
    if (!x.failed && x.found > 1)
        fail(&x, "channel %u appears %u times", id, x.found);
    if (x.failed)
        return -EINVAL;
    if (x.found == 0) {
        snprintf(err, err_size, "channel %u is not in the file", id);
        return -ENOENT;
    }
    return 0;
}

int tp_cme_channel_load(const char *file, uint32_t id, struct tp_cme_channel *out, char *err,
                        size_t err_size)
{
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        int e = errno;
        snprintf(err, err_size, "cannot open: %s", strerror(e));
        return -e;
    }
    char *buf = malloc(TP_CME_MAX_FILE_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    size_t n = fread(buf, 1, TP_CME_MAX_FILE_BYTES + 1, f);
    int read_error = ferror(f);
    fclose(f);
    int rc;
    if (read_error) {
        snprintf(err, err_size, "read error");
        rc = -EIO;
    } else if (n > TP_CME_MAX_FILE_BYTES) {
        snprintf(err, err_size, "file is larger than %u bytes", TP_CME_MAX_FILE_BYTES);
        rc = -EFBIG;
    } else {
        rc = tp_cme_channel_find(buf, n, id, out, err, err_size);
    }
    free(buf);
    return rc;
}

const struct tp_cme_connection *tp_cme_channel_feed(const struct tp_cme_channel *ch,
                                                    const char *feed_type, char feed)
{
    for (unsigned i = 0; i < ch->n_connections; i++) {
        const struct tp_cme_connection *c = &ch->connections[i];
        if (strcmp(c->feed_type, feed_type) == 0 && c->feed == feed &&
            strcmp(c->protocol, "UDP/IP") == 0)
            return c;
    }
    return NULL;
}
