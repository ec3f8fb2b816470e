/* The live view: see stat.h. */
#include "stat.h"

#include <stdbool.h>
#include <string.h>

/* A counter of the stats reply (0 when absent). */
static json_int_t counter(const json_t *stats, const char *name)
{
    return stats != NULL ? json_integer_value(json_object_get(stats, name)) : 0;
}

static double rate(const json_t *prev, const json_t *now, const char *name, double seconds)
{
    if (prev == NULL || seconds <= 0)
        return 0.0;
    json_int_t d = counter(now, name) - counter(prev, name);
    return d > 0 ? (double)d / seconds : 0.0; /* a restarted counter is no negative rate */
}

/* "KEY=VALUE.rest" names: the distinct VALUEs of KEY, in the reply's order. */
static json_t *labels(const json_t *stats, const char *key)
{
    json_t *seen = json_array();
    size_t klen = strlen(key);
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)stats, name, v)
    {
        if (strncmp(name, key, klen) != 0 || name[klen] != '=')
            continue;
        const char *value = name + klen + 1;
        size_t n = strcspn(value, ".");
        char label[64];
        if (n >= sizeof(label))
            continue;
        memcpy(label, value, n);
        label[n] = '\0';
        bool dup = false;
        size_t i;
        json_t *s;
        json_array_foreach(seen, i, s) dup |= strcmp(json_string_value(s), label) == 0;
        if (!dup)
            json_array_append_new(seen, json_string(label));
    }
    return seen;
}

static json_t *channel_view(const json_t *prev, const json_t *now, const char *ch, double secs)
{
    char name[160];
#define NAME(suffix) (snprintf(name, sizeof(name), "channel=%s.%s", ch, suffix), name)
    json_t *lines = json_array();
    static const char *const line_names[] = {"a", "b", "r"};
    for (size_t l = 0; l < 3; l++) {
        char part[64];
        snprintf(part, sizeof(part), "line=%s.line.packets", line_names[l]);
        if (json_object_get(now, NAME(part)) == NULL)
            continue;
        json_int_t packets = counter(now, name);
        double per_s = rate(prev, now, name, secs);
        snprintf(part, sizeof(part), "line=%s.line.held", line_names[l]);
        json_array_append_new(lines, json_pack("{s:s, s:I, s:f, s:I}", "line", line_names[l],
                                               "packets", packets, "packets_per_s", per_s, "held",
                                               counter(now, NAME(part))));
    }
    json_t *v = json_pack(
        "{s:s, s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "name", ch, "messages",
        counter(now, NAME("feed.messages")), "messages_per_s",
        rate(prev, now, NAME("feed.messages"), secs), "gaps", counter(now, NAME("arb.gaps")),
        "gap_filled", counter(now, NAME("arb.gap_filled")), "rerequests",
        counter(now, NAME("mold.requests")), "recovered", counter(now, NAME("mold.recovered")),
        "given_up", counter(now, NAME("mold.given_up")), "stale_marks",
        counter(now, NAME("feed.stale_marks")), "lines", lines);
#undef NAME
    return v;
}

json_t *tp_stat_view(const json_t *prev, const json_t *now, double seconds)
{
    json_t *channels = json_array(), *ports = json_array();
    json_t *names = labels(now, "channel");
    size_t i;
    json_t *s;
    json_array_foreach(names, i, s)
        json_array_append_new(channels, channel_view(prev, now, json_string_value(s), seconds));
    json_decref(names);
    names = labels(now, "port");
    json_array_foreach(names, i, s)
    {
        const char *p = json_string_value(s);
        char name[160];
        snprintf(name, sizeof(name), "port=%s.nic.ipackets", p);
        if (json_object_get(now, name) == NULL)
            continue; /* the host side's port=N counters, not a NIC's */
        json_int_t ipackets = counter(now, name);
        double per_s = rate(prev, now, name, seconds);
        snprintf(name, sizeof(name), "port=%s.nic.imissed", p);
        json_int_t imissed = counter(now, name);
        snprintf(name, sizeof(name), "port=%s.nic.ierrors", p);
        json_int_t ierrors = counter(now, name);
        snprintf(name, sizeof(name), "port=%s.nic.rx_nombuf", p);
        json_array_append_new(ports,
                              json_pack("{s:s, s:I, s:f, s:I, s:I, s:I}", "name", p, "ipackets",
                                        ipackets, "rx_per_s", per_s, "imissed", imissed, "ierrors",
                                        ierrors, "rx_nombuf", counter(now, name)));
    }
    json_decref(names);
    /* Every bus writer: bus.published and bus.ring=K.published. */
    json_int_t published = 0;
    double published_per_s = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)now, key, v)
    {
        size_t n = strlen(key);
        if (strncmp(key, "bus.", 4) == 0 && n > 10 && strcmp(key + n - 10, ".published") == 0) {
            published += json_integer_value(v);
            published_per_s += rate(prev, now, key, seconds);
        }
    }
    const json_t *books = json_object_get(now, "books");
    const json_t *consumers = json_object_get(now, "consumers");
    /* "o" takes a reference: the reply's own objects get one more, fresh ones are handed over. */
    return json_pack("{s:f, s:o, s:o, s:o, s:{s:I, s:f}, s:o}", "interval_s", seconds, "channels",
                     channels, "books", books ? json_incref((json_t *)books) : json_object(),
                     "ports", ports, "bus", "published", published, "published_per_s",
                     published_per_s, "consumers",
                     consumers ? json_incref((json_t *)consumers) : json_array());
}

static json_int_t get(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

void tp_stat_render(FILE *out, const json_t *view)
{
    size_t i, j;
    json_t *c, *l;
    fprintf(out, "%-24s %4s %12s %10s %8s %8s %8s %8s %8s\n", "CHANNEL", "LINE", "PACKETS/S",
            "MSGS/S", "GAPS", "FILLED", "REREQ", "GIVENUP", "STALE");
    json_array_foreach(json_object_get(view, "channels"), i, c)
    {
        fprintf(out, "%-24s %4s %12s %10.0f %8lld %8lld %8lld %8lld %8lld\n",
                json_string_value(json_object_get(c, "name")), "", "",
                json_real_value(json_object_get(c, "messages_per_s")), (long long)get(c, "gaps"),
                (long long)get(c, "gap_filled"), (long long)get(c, "rerequests"),
                (long long)get(c, "given_up"), (long long)get(c, "stale_marks"));
        json_array_foreach(json_object_get(c, "lines"), j, l)
            fprintf(out, "%-24s %4s %12.0f\n", "", json_string_value(json_object_get(l, "line")),
                    json_real_value(json_object_get(l, "packets_per_s")));
    }
    fprintf(out, "\n%-24s %12s %10s %10s\n", "BOOKS", "INSTRUMENTS", "STALE", "RECOVERING");
    const char *venue;
    json_object_foreach(json_object_get(view, "books"), venue, c)
        fprintf(out, "%-24s %12lld %10lld %10lld\n", venue, (long long)get(c, "instruments"),
                (long long)get(c, "stale"), (long long)get(c, "recovering"));
    fprintf(out, "\n%-24s %12s %10s %10s %10s\n", "PORT", "RX/S", "IMISSED", "IERRORS",
            "RX_NOMBUF");
    json_array_foreach(json_object_get(view, "ports"), i, c) fprintf(
        out, "%-24s %12.0f %10lld %10lld %10lld\n", json_string_value(json_object_get(c, "name")),
        json_real_value(json_object_get(c, "rx_per_s")), (long long)get(c, "imissed"),
        (long long)get(c, "ierrors"), (long long)get(c, "rx_nombuf"));
    const json_t *bus = json_object_get(view, "bus");
    fprintf(out, "\nBUS published %lld records, %.0f/s\n", (long long)get(bus, "published"),
            json_real_value(json_object_get(bus, "published_per_s")));
    fprintf(out, "%-24s %12s %10s %10s %10s %10s\n", "CONSUMER PID", "RECORDS", "LAG", "LAPPED",
            "LOST", "RESYNCS");
    json_array_foreach(json_object_get(view, "consumers"), i, c)
        fprintf(out, "%-24lld %12lld %10lld %10lld %10lld %10lld\n", (long long)get(c, "pid"),
                (long long)get(c, "records"), (long long)get(c, "lag"), (long long)get(c, "lapped"),
                (long long)get(c, "lost"), (long long)get(c, "resyncs"));
}
