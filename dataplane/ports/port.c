/*
 * DPDK port setup: see port.h. The l2fwd/l3fwd sequence: find the device, create the pool on
 * its socket, configure queues, start, then program the multicast filter (which most PMDs accept
 * only once started).
 */
#include "port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "net_build.h"

static int fail(char *err, size_t err_len, int rc, const char *what, const struct tp_port *port)
{
    snprintf(err, err_len, "port %s: %s: %s", port->name, what, rte_strerror(-rc));
    return rc < 0 ? rc : -EIO;
}

/* The device's multicast address filter: exactly the MACs of these groups. */
static int set_mc_list(uint16_t port_id, const uint32_t *groups, unsigned n)
{
    struct rte_ether_addr macs[TP_PORT_MAX_GROUPS];
    if (n > TP_PORT_MAX_GROUPS)
        return -ENOSPC;
    for (unsigned i = 0; i < n; i++)
        tp_net_multicast_mac(groups[i], macs[i].addr_bytes);
    return rte_eth_dev_set_mc_addr_list(port_id, macs, n);
}

int tp_port_set_groups(struct tp_port *port, const uint32_t *groups, unsigned n)
{
    return port->mc_mode == TP_PORT_MC_FILTER ? set_mc_list(port->port_id, groups, n) : 0;
}

/* Filter on the groups' MACs, or fall back to all-multicast when the device cannot. */
static int program_multicast(struct tp_port *port, const struct tp_port_setup *setup)
{
    if (setup->promiscuous) {
        port->mc_mode = TP_PORT_MC_PROMISC;
        return rte_eth_promiscuous_enable(port->port_id);
    }
    int rc = set_mc_list(port->port_id, setup->groups, setup->n_groups);
    if (rc == 0) {
        port->mc_mode = TP_PORT_MC_FILTER;
        return 0;
    }
    port->mc_mode = TP_PORT_MC_ALLMULTI;
    rc = rte_eth_allmulticast_enable(port->port_id);
    if (rc == -ENOTSUP) {
        /* Capture and ring devices take everything anyway. */
        port->mc_mode = TP_PORT_MC_PROMISC;
        rc = rte_eth_promiscuous_enable(port->port_id);
        if (rc == -ENOTSUP)
            rc = 0;
    }
    return rc;
}

int tp_port_open(struct tp_port *port, const struct tp_port_setup *setup, char *err, size_t err_len)
{
    memset(port, 0, sizeof(*port));
    snprintf(port->name, sizeof(port->name), "%s", setup->dev_name);
    if (setup->n_groups > TP_PORT_MAX_GROUPS || setup->rx_queues == 0)
        return fail(err, err_len, -EINVAL, "bad setup", port);
    int rc = rte_eth_dev_get_port_by_name(setup->dev_name, &port->port_id);
    if (rc != 0)
        return fail(err, err_len, -ENODEV, "no such DPDK device (check --vdev / -a)", port);

    struct rte_eth_dev_info info;
    rc = rte_eth_dev_info_get(port->port_id, &info);
    if (rc != 0)
        return fail(err, err_len, rc, "device info", port);
    if (setup->rx_queues > info.max_rx_queues)
        return fail(err, err_len, -EINVAL, "more rx queues than the device has", port);
    port->rx_queues = setup->rx_queues;
    port->tx_queues = setup->tx_queues < info.max_tx_queues ? setup->tx_queues : info.max_tx_queues;

    port->socket = rte_eth_dev_socket_id(port->port_id);
    if (port->socket < 0)
        port->socket = (int)rte_socket_id();
    char pool_name[RTE_MEMPOOL_NAMESIZE];
    snprintf(pool_name, sizeof(pool_name), "tp_pool_%u", port->port_id);
    port->pool = rte_pktmbuf_pool_create(pool_name, setup->mbufs, setup->mbuf_cache, 0,
                                         RTE_MBUF_DEFAULT_BUF_SIZE, port->socket);
    if (port->pool == NULL)
        return fail(err, err_len, -rte_errno, "mbuf pool", port);

    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    if (port->rx_queues > 1) {
        /* Spread flows over the queues by addresses and ports. */
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP;
        conf.rx_adv_conf.rss_conf.rss_hf &= info.flow_type_rss_offloads;
    }
    /* A NIC that verifies UDP checksums saves the data lcore summing every payload again. */
    port->rx_udp_checksum = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_UDP_CKSUM) != 0;
    if (port->rx_udp_checksum)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
    /* The NIC's receive time is the wire's: it leaves out the time a packet waits in the rx ring.
     */
    port->rx_timestamp =
        setup->nic_timestamps && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
    if (port->rx_timestamp)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    rc = rte_eth_dev_configure(port->port_id, port->rx_queues, port->tx_queues, &conf);
    if (rc != 0)
        goto failed_configure;
    if (setup->mtu != 0) {
        rc = rte_eth_dev_set_mtu(port->port_id, setup->mtu);
        if (rc != 0 && rc != -ENOTSUP)
            goto failed_configure;
    }
    uint16_t rxd = setup->rx_descriptors, txd = setup->tx_descriptors;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(port->port_id, &rxd, &txd);
    if (rc != 0)
        goto failed_configure;
    for (uint16_t q = 0; q < port->rx_queues; q++) {
        rc =
            rte_eth_rx_queue_setup(port->port_id, q, rxd, (unsigned)port->socket, NULL, port->pool);
        if (rc != 0)
            goto failed_configure;
    }
    for (uint16_t q = 0; q < port->tx_queues; q++) {
        rc = rte_eth_tx_queue_setup(port->port_id, q, txd, (unsigned)port->socket, NULL);
        if (rc != 0)
            goto failed_configure;
    }
    rc = rte_eth_dev_start(port->port_id);
    if (rc != 0)
        goto failed_configure;
    rc = program_multicast(port, setup);
    if (rc != 0) {
        fail(err, err_len, rc, "multicast filter / all-multicast", port);
        tp_port_close(port);
        return rc;
    }
    /* Stamps in a clock that cannot be read cannot be mapped to the TSC: ignore them. */
    uint64_t nic_time;
    if (port->rx_timestamp && rte_eth_read_clock(port->port_id, &nic_time) != 0)
        port->rx_timestamp = false;
    struct rte_ether_addr mac;
    if (rte_eth_macaddr_get(port->port_id, &mac) == 0)
        memcpy(port->mac, mac.addr_bytes, 6);
    return 0;

failed_configure:
    fail(err, err_len, rc, "configure / queue setup / start", port);
    rte_mempool_free(port->pool);
    port->pool = NULL;
    return rc < 0 ? rc : -EIO;
}

void tp_port_close(struct tp_port *port)
{
    if (port->pool == NULL)
        return;
    rte_eth_dev_stop(port->port_id);
    rte_eth_dev_close(port->port_id);
    rte_mempool_free(port->pool);
    port->pool = NULL;
}
