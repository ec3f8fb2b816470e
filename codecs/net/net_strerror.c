/*
 * net_strerror.c - reasons for refused frames, for tools and logs.
 */
#include "net_parse.h"

const char *tp_net_strerror(int err)
{
    switch (err) {
    case 0:
        return "ok";
    case TP_NET_ESHORT:
        return "frame ends inside a header";
    case TP_NET_ENOTIPV4:
        return "not IPv4";
    case TP_NET_EVLAN:
        return "more than two VLAN tags";
    case TP_NET_EIPHDR:
        return "bad IPv4 version or header length";
    case TP_NET_EIPLEN:
        return "bad IPv4 total length";
    case TP_NET_EFRAG:
        return "IPv4 fragment";
    case TP_NET_ENOTUDP:
        return "not UDP";
    case TP_NET_EUDPLEN:
        return "bad UDP length";
    case TP_NET_ECSUM:
        return "bad IPv4 header checksum";
    default:
        return "unknown error";
    }
}
