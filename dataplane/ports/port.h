/*
 * DPDK port setup: one Ethernet device (real PCI port or vdev: net_pcap, net_af_packet,
 * net_ring, net_null) configured for receiving multicast feeds.
 *
 * Promises:
 *  - The mbuf pool is created on the port's NUMA socket (falling back to the caller's socket when
 *    the device does not say), sized from the setup.
 *  - rx/tx queues are configured and the device started; tx queues are optional (a replay vdev
 *    may have none): tp_port.tx_queues says how many exist.
 *  - The multicast address filter holds exactly the configured groups' MACs
 *    (rte_eth_dev_set_mc_addr_list); when the device cannot filter, all-multicast is enabled
 *    instead and tp_port.mc_mode says so. Promiscuous mode only when asked.
 *  - Receive offloads the data path uses are enabled where the device has them: UDP checksum
 *    verification, and (when asked) receive timestamps, kept only if the device's clock can be
 *    read (tp_port.rx_udp_checksum, tp_port.rx_timestamp).
 *  - Errors come back as a negative errno and a sentence in err; nothing is left half open.
 * Control path only (EAL initialised, main lcore); nothing here runs on the data path.
 */
#ifndef TP_PORTS_PORT_H
#define TP_PORTS_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mempool;

#define TP_PORT_MAX_GROUPS 128

enum tp_port_mc_mode {
    TP_PORT_MC_FILTER = 0,   /* the device filters on the configured groups */
    TP_PORT_MC_ALLMULTI = 1, /* the device delivers every multicast frame */
    TP_PORT_MC_PROMISC = 2,  /* promiscuous: everything (configured, or the only option) */
};

struct tp_port_setup {
    const char *dev_name; /* DPDK device name: PCI address or vdev name ("net_pcap0") */
    uint16_t rx_queues;
    uint16_t tx_queues; /* wanted; fewer are accepted when the device has fewer (even 0) */
    uint16_t rx_descriptors;
    uint16_t tx_descriptors;
    uint32_t mbufs;
    uint16_t mbuf_cache;
    uint16_t mtu; /* 0: leave the device's */
    bool promiscuous;
    bool nic_timestamps; /* use the NIC's receive timestamps where the device offers them */
    unsigned n_groups;
    uint32_t groups[TP_PORT_MAX_GROUPS]; /* host order */
};

struct tp_port {
    uint16_t port_id;
    int socket;
    uint16_t rx_queues;
    uint16_t tx_queues;
    enum tp_port_mc_mode mc_mode;
    bool rx_udp_checksum; /* the NIC verifies UDP checksums (mbuf RX_L4_CKSUM flags) */
    /* The NIC stamps received packets (the mbuf's rx timestamp field and flag) in a clock that
     * rte_eth_read_clock reads, so nic_clock.h can map the stamps to the TSC. */
    bool rx_timestamp;
    uint8_t mac[6];
    struct rte_mempool *pool;
    char name[64];
};

/* Opens, configures and starts the port. 0 or -errno with err filled. */
int tp_port_open(struct tp_port *port, const struct tp_port_setup *setup, char *err,
                 size_t err_len);

/*
 * Replaces the groups of the multicast address filter (a live reload's channels). A device
 * that takes all multicast (or everything) already delivers them: nothing to do. 0 or -errno.
 */
int tp_port_set_groups(struct tp_port *port, const uint32_t *groups, unsigned n);

/* Stops and closes the port and frees its pool. */
void tp_port_close(struct tp_port *port);

#endif
