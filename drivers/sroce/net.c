// SPDX-License-Identifier: GPL-2.0
/*
 * UDP tunnel sockets on port 4791 (IPv4 and IPv6) and the receive entry.
 *
 * The sockets are bound at module load. rdma_rxe binds the same port, so a
 * failed bind is how sroce notices that rdma_rxe (or another RoCEv2 driver)
 * owns the port and refuses to load; the reverse holds for rdma_rxe.
 *
 * Receive runs in softirq from udp's encap_rcv. Every header field is
 * bounds-checked before it is used, and a packet whose ICRC is wrong is
 * counted and dropped before anything acts on it.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/udp_tunnel.h>
#include <asm/unaligned.h>

#include "sroce.h"
#include <sroce/wire.h>

static struct socket *sroce_sk4;
static struct socket *sroce_sk6;

/**
 * sroce_dev_get_by_netdev() - the sroce device bound to a netdev
 * @ndev: netdev
 *
 * Safe in any context. The caller drops the reference with ib_device_put().
 *
 * Return: the device with a reference held, or NULL.
 */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct ib_device *ib;

	ib = ib_device_get_by_netdev(ndev, RDMA_DRIVER_RXE);
	if (!ib)
		return NULL;
	/* rdma_rxe shares the driver id; never mistake its device for ours. */
	if (ib->ops.dealloc_driver != sroce_dealloc_driver) {
		ib_device_put(ib);
		return NULL;
	}
	return to_sdev(ib);
}

static __wsum sroce_crc_update(const void *p, int len, __wsum crc)
{
	return (__force __wsum)crc32_le((__force u32)crc, p, len);
}

static __wsum sroce_crc_combine(__wsum a, __wsum b, int off, int len)
{
	return (__force __wsum)crc32_le_combine((__force u32)a, (__force u32)b,
						len);
}

/* Walks fragments without linearizing: CRC-32 through skb_checksum. */
static const struct skb_checksum_ops sroce_crc_ops = {
	.update = sroce_crc_update,
	.combine = sroce_crc_combine,
};

/*
 * Check the ICRC of a packet whose UDP header is at skb->data and whose
 * BTH the caller has pulled into the linear area. IP, UDP and BTH must be
 * contiguous: no IPv4 options, no IPv6 extension headers (RoCEv2 uses
 * neither); anything else fails the check.
 *
 * This is a pass of its own over the payload only while nothing is placed:
 * the responder will check payload-carrying packets in its copy pass.
 */
static bool sroce_icrc_ok(struct sk_buff *skb)
{
	const unsigned int hl = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	size_t ipl = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	__le32 wire;
	u32 crc;

	if (skb_network_header(skb) + ipl != skb->data)
		return false;
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		return false;
	if (skb_copy_bits(skb, skb->len - SROCE_ICRC_LEN, &wire, sizeof(wire)))
		return false;
	crc = sroce_icrc_hdr(skb_network_header(skb), ipv6);
	crc = (__force u32)__skb_checksum(skb, hl,
					 skb->len - hl - SROCE_ICRC_LEN,
					 (__force __wsum)crc, &sroce_crc_ops);
	return ~crc == le32_to_cpu(wire);
}

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;
	struct sroce_bth bth;
	unsigned int len, hlen;

	sdev = sroce_dev_get_by_netdev(skb->dev);
	if (!sdev)
		goto drop;

	len = skb->len;
	sroce_count(sdev, SROCE_CNT_RX_PKTS, 1);
	sroce_count(sdev, SROCE_CNT_RX_BYTES, len);

	if (!pskb_may_pull(skb, sizeof(struct udphdr) + sizeof(bth)))
		goto malformed;
	memcpy(&bth, skb->data + sizeof(struct udphdr), sizeof(bth));
	hlen = sroce_opcode_hdr_len(sroce_bth_opcode(&bth));
	if (!hlen || len < sizeof(struct udphdr) + hlen + SROCE_ICRC_LEN ||
	    sroce_bth_tver(&bth))
		goto malformed;
	if (!sroce_icrc_ok(skb)) {
		sroce_count(sdev, SROCE_CNT_RX_ICRC_ERR, 1);
		goto put;
	}

	/* No queue pair can exist yet: the RC/UD data path is not in. */
	sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP, 1);
	goto put;

malformed:
	sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED, 1);
put:
	ib_device_put(&sdev->ib);
drop:
	kfree_skb(skb);
	return 0;
}

static struct socket *sroce_udp_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(SROCE_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tcfg);
	return sock;
}

static void sroce_udp_close(struct socket **sock)
{
	if (*sock)
		udp_tunnel_sock_release(*sock);
	*sock = NULL;
}

int sroce_net_init(void)
{
	struct socket *s;

	s = sroce_udp_open(false);
	if (IS_ERR(s))
		goto err;
	sroce_sk4 = s;

	s = sroce_udp_open(true);
	/* A kernel booted with ipv6.disable=1 still gets IPv4 RoCE. */
	if (IS_ERR(s) && PTR_ERR(s) != -EAFNOSUPPORT) {
		sroce_udp_close(&sroce_sk4);
		goto err;
	}
	sroce_sk6 = IS_ERR(s) ? NULL : s;
	return 0;

err:
	if (PTR_ERR(s) == -EADDRINUSE)
		pr_err("sroce: UDP port %d is in use: rdma_rxe (or another RoCEv2 driver) is loaded; sroce and rdma_rxe cannot share a kernel, unload it first\n",
		       SROCE_UDP_PORT);
	else
		pr_err("sroce: cannot open UDP port %d: %ld\n", SROCE_UDP_PORT,
		       PTR_ERR(s));
	return PTR_ERR(s);
}

void sroce_net_exit(void)
{
	sroce_udp_close(&sroce_sk6);
	sroce_udp_close(&sroce_sk4);
	/* encap_rcv runs under RCU: let every caller leave before unload. */
	synchronize_net();
}
