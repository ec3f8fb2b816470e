/* Live multicast sender with pacing; serves re-requests while it waits. */
#include "live_out.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int tp_sim_live_open(struct tp_sim_live_out *o, const struct tp_sim_endpoints *endpoints,
                     const char *iface, uint64_t rate_pps, struct tp_sim_rerequest_server *server)
{
    memset(o, 0, sizeof(*o));
    o->endpoints = *endpoints;
    o->rate_pps = rate_pps;
    o->server = server;
    o->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (o->fd < 0)
        return -errno;
    unsigned char ttl = 1, loop = 1;
    int rc = 0;
    if (setsockopt(o->fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)) < 0 ||
        setsockopt(o->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0)
        rc = -errno;
    if (rc == 0 && iface != NULL) {
        struct ip_mreqn mreq = {.imr_ifindex = (int)if_nametoindex(iface)};
        if (mreq.imr_ifindex == 0)
            rc = -ENODEV;
        else if (setsockopt(o->fd, IPPROTO_IP, IP_MULTICAST_IF, &mreq, sizeof(mreq)) < 0)
            rc = -errno;
    }
    if (rc < 0) {
        close(o->fd);
        o->fd = -1;
    }
    o->next_send_ns = monotonic_ns();
    return rc;
}

void tp_sim_live_follow_venue_time(struct tp_sim_live_out *o, double speed)
{
    o->speed = speed;
    o->clock_start = 0;
}

/* When packet p may leave (CLOCK_MONOTONIC ns), 0: now. */
static uint64_t due_time(struct tp_sim_live_out *o, const struct tp_sim_packet *p)
{
    if (o->speed > 0) {
        if (o->clock_start == 0) {
            o->clock_start = monotonic_ns();
            o->venue_start = p->time_ns;
        }
        uint64_t venue = p->time_ns > o->venue_start ? p->time_ns - o->venue_start : 0;
        return o->clock_start + (uint64_t)((double)venue / o->speed);
    }
    if (o->rate_pps == 0)
        return 0;
    uint64_t due = o->next_send_ns;
    o->next_send_ns += 1000000000ULL / o->rate_pps;
    return due;
}

/* Waits until due, answering re-requests meanwhile. */
static void wait_until(struct tp_sim_live_out *o, uint64_t due)
{
    for (;;) {
        uint64_t now = monotonic_ns();
        if (now >= due)
            return;
        uint64_t wait = due - now;
        if (o->server != NULL && wait > 1000000) {
            tp_sim_rerequest_serve(o->server, (int)(wait / 1000000));
            continue;
        }
        struct timespec ts = {.tv_sec = (time_t)(wait / 1000000000ULL),
                              .tv_nsec = (long)(wait % 1000000000ULL)};
        nanosleep(&ts, NULL);
    }
}

int tp_sim_live_packet(void *ctx, const struct tp_sim_packet *p)
{
    struct tp_sim_live_out *o = ctx;
    const struct tp_sim_endpoint *ep = &o->endpoints.ep[p->stream][p->line];
    if (ep->group == 0)
        return 0;
    wait_until(o, due_time(o, p));
    if (o->server != NULL)
        tp_sim_rerequest_serve(o->server, 0);
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(ep->port), .sin_addr.s_addr = htonl(ep->group)};
    if (sendto(o->fd, p->data, p->len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
        o->errors++;
    else
        o->sent++;
    return 0;
}

void tp_sim_live_close(struct tp_sim_live_out *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
}
