// SPDX-License-Identifier: GPL-2.0
/*
 * UDP tunnel sockets on port 4791 (IPv4 and IPv6) and the receive entry.
 *
 * Each network namespace with a sroce device in it has its own pair of
 * sockets, shared by its devices, and a device's routes, address lookups
 * and transmits are made in its netdev's namespace (sdev->net). The pair
 * of the initial namespace is bound at module load: rdma_rxe binds the
 * same port, so a failed bind is how sroce notices that rdma_rxe (or
 * another RoCEv2 driver) owns the port and refuses to load; the reverse
 * holds for rdma_rxe. Another namespace's pair is bound by its first
 * device and closed with its last, freeing the port there.
 *
 * Receive runs in softirq from udp's encap_rcv, which finds the device
 * and hands the packet to the receive stage (rx.c). This file also builds,
 * routes and sends the stages' packets and checks received ICRCs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/sched/mm.h>
#include <linux/skbuff.h>
#include <linux/wait_bit.h>
#include <net/addrconf.h>
#include <net/netns/generic.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "sroce.h"
#include "trace.h"
#include <sroce/wire.h>

/* Where a namespace's struct sroce_net is: net_generic(net, sroce_net_id). */
unsigned int sroce_net_id;
/* users and the socket pointers' changes; taken alone, never under rtnl. */
static DEFINE_MUTEX(sroce_net_mutex);

/*
 * The receive stage (rx.c's sroce_rcv()), given once at load: a packet
 * from the socket or from a local transmit goes up through it, and this
 * file, which every stage sends through, depends on none of them.
 */
static sroce_rx_fn sroce_rx_handler __ro_after_init;

/**
 * sroce_net_set_rx() - name the receive stage, before any socket opens
 * @rx: what takes each packet received
 */
void __init sroce_net_set_rx(sroce_rx_fn rx)
{
	sroce_rx_handler = rx;
}

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
	if (ib->ops.owner != THIS_MODULE) {
		ib_device_put(ib);
		return NULL;
	}
	return to_sdev(ib);
}

/*
 * CRC-32 over [@off, @off + @len) of @skb, fragments and all, without
 * linearizing (skb_checksum_ops, the older way, left the kernel in 7.x).
 */
static u32 sroce_skb_crc(struct sk_buff *skb, u32 off, u32 len, u32 crc)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		u32 n = skb_seq_read(done, &data, &st);

		if (!n)
			break;
		n = min(n, len - done);
		crc = crc32_le(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/*
 * The CRC over the masked IP, UDP and BTH of a packet whose BTH is in the
 * linear part, and the ICRC it carries; false for a header that is not
 * plain IP + UDP + BTH.
 */
static bool sroce_rx_icrc_hdr(struct sk_buff *skb, u32 *crc, u32 *icrc)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	size_t ipl = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	__le32 wire;

	if (skb_network_header(skb) + ipl != skb->data)
		return false;
	if (!ipv6 && ip_hdr(skb)->ihl != 5)
		return false;
	if (skb_copy_bits(skb, skb->len - SROCE_ICRC_LEN, &wire, sizeof(wire)))
		return false;
	*crc = sroce_icrc_hdr(skb_network_header(skb), ipv6);
	*icrc = le32_to_cpu(wire);
	return true;
}

/**
 * sroce_pkt_icrc_begin() - start the ICRC check of a received packet
 * @skb: the packet, skb->data at the UDP header
 * @pkt: its parsed headers; gets the CRC state and the ICRC it carries
 *
 * The CRC over the masked IP, UDP and BTH and the extension headers, and
 * the ICRC the packet carries. IP, UDP and BTH must be contiguous: no IPv4
 * options, no IPv6 extension headers (RoCEv2 uses neither); anything else
 * fails the check.
 *
 * The payload is left for later: a packet that is placed has its payload
 * CRC computed in the same pass as the copy (sroce_pkt_icrc_placed()), any
 * other one in a pass of its own before it is acted on
 * (sroce_pkt_icrc_ok()).
 *
 * Return: false if the headers are not laid out as RoCEv2 has them.
 */
bool sroce_pkt_icrc_begin(struct sk_buff *skb, struct sroce_pkt *pkt)
{
	const unsigned int hl = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u32 crc;

	if (!sroce_rx_icrc_hdr(skb, &crc, &pkt->icrc))
		return false;
	/* sroce_parse() pulled the extension headers into the linear part. */
	pkt->hcrc = crc32_le(crc, skb->data + hl, pkt->payoff - hl);
	pkt->icrc_todo = true;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_icrc_begin);

/**
 * sroce_rx_corrupt() - whether a packet sroce_parse() refused was corrupted
 * @skb: the packet, skb->data at the UDP header
 *
 * A packet whose headers do not parse is counted as corrupted
 * (rx_icrc_errors) when its ICRC is wrong, as the link's fault, and as
 * malformed, the sender's fault, only when its ICRC is right. Such
 * packets are rare, so one pass over the whole packet is cheap.
 *
 * Return: true if the ICRC is wrong or cannot be checked the way
 * sroce_pkt_icrc_begin() refuses it; false for a packet too short to
 * carry a BTH and an ICRC, or one with a right ICRC.
 */
bool sroce_rx_corrupt(struct sk_buff *skb)
{
	const unsigned int hl = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u32 crc, icrc;

	if (skb->len < hl + SROCE_ICRC_LEN || !pskb_may_pull(skb, hl))
		return false;
	if (!sroce_rx_icrc_hdr(skb, &crc, &icrc))
		return true;
	crc = sroce_skb_crc(skb, hl, skb->len - hl - SROCE_ICRC_LEN, crc);
	return ~crc != icrc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rx_corrupt);

/*
 * rdma_rxe (6.2 to at least 7.2) computes a FLUSH's ICRC over its BTH,
 * FETH and RETH twice: its opcode table gives FLUSH no payload offset,
 * so the "payload" it adds after the headers is the 32 header bytes from
 * the BTH on, unmasked. Such a FLUSH is accepted, and counted, so that an
 * rdma_rxe requester can flush sroce memory; sroce itself sends the ICRC
 * IBTA defines (which rdma_rxe in turn drops).
 */
static bool sroce_icrc_rxe_flush(struct sroce_pkt *pkt, u32 crc)
{
	const unsigned int bth = sizeof(struct udphdr);

	if ((pkt->opcode & SROCE_OP_MASK) != SROCE_OP_FLUSH || pkt->paylen ||
	    pkt->padlen)
		return false;
	/* sroce_parse() pulled the headers into the linear part. */
	crc = crc32_le(crc, pkt->skb->data + bth, pkt->payoff - bth);
	if (~crc != pkt->icrc)
		return false;
	sroce_count(pkt->sdev, SROCE_CNT_RX_FLUSH_ICRC_RXE, 1);
	return true;
}

/* Compare; a mismatch is counted, and the packet must then be dropped. */
static bool sroce_icrc_final(struct sroce_pkt *pkt, u32 crc)
{
	pkt->icrc_todo = false;
	if (likely(~crc == pkt->icrc))
		return true;
	if (sroce_icrc_rxe_flush(pkt, crc))
		return true;
	sroce_count(pkt->sdev, SROCE_CNT_RX_ICRC_ERR, 1);
	return false;
}

/**
 * sroce_pkt_icrc_ok() - check a received packet's ICRC before acting on it
 * @pkt: the packet
 *
 * For a packet that is not placed (a NAK, a duplicate, a request to read,
 * any error): one pass over payload and pad. Nothing to do for a packet
 * already checked, or handed over locally.
 *
 * Return: false if the ICRC is wrong (counted; drop the packet).
 */
bool sroce_pkt_icrc_ok(struct sroce_pkt *pkt)
{
	u32 crc;

	if (!pkt->icrc_todo)
		return true;
	crc = sroce_skb_crc(pkt->skb, pkt->payoff, pkt->paylen + pkt->padlen,
			    pkt->hcrc);
	return sroce_icrc_final(pkt, crc);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_icrc_ok);

/**
 * sroce_pkt_icrc_copy() - the running CRC for the copy that places a packet
 * @pkt: the packet
 * @crc: storage for it
 *
 * Return: @crc, seeded, for &struct sroce_copy; NULL if there is nothing
 * left to check.
 */
u32 *sroce_pkt_icrc_copy(struct sroce_pkt *pkt, u32 *crc)
{
	if (!pkt->icrc_todo)
		return NULL;
	*crc = pkt->hcrc;
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_icrc_copy);

/**
 * sroce_pkt_icrc_placed() - finish the check a placing copy carried
 * @pkt: the packet
 * @crc: the CRC from sroce_pkt_icrc_copy(), after the copy went over the
 *	 whole payload
 *
 * The payload is in memory already, where the retransmission of the same
 * PSN will put it again, so a wrong ICRC only means: change no state,
 * complete nothing, drop the packet.
 *
 * Return: false if the ICRC is wrong (counted).
 */
bool sroce_pkt_icrc_placed(struct sroce_pkt *pkt, u32 crc)
{
	if (!pkt->icrc_todo)
		return true;
	if (pkt->padlen)
		crc = sroce_skb_crc(pkt->skb, pkt->payoff + pkt->paylen,
				    pkt->padlen, crc);
	return sroce_icrc_final(pkt, crc);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_pkt_icrc_placed);

static bool sroce_av_ipv6(const struct rxe_av *av)
{
	return av->network_type == RXE_NETWORK_TYPE_IPV6;
}

/**
 * sroce_pkt_from_peer() - is a packet for a connected QP from its peer?
 * @qp: an RC or UC QP in RTR or later, one of its locks held (its address
 *	vector is written under both)
 * @pkt: the packet
 *
 * The IP header must name the QP's path: the remote GID's address as the
 * source and the local GID's as the destination. Anything else would let
 * any host that reaches UDP 4791 inject into, or tear down, a connection
 * whose QP number and PSN it guessed. A packet refused with a good ICRC is
 * counted in rx_drop_not_peer.
 *
 * Return: true if the packet may be acted on.
 */
bool sroce_pkt_from_peer(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	const struct rxe_av *av = &qp->av;
	struct sk_buff *skb = pkt->skb;
	bool ok;

	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		ok = sroce_av_ipv6(av) &&
		     ipv6_addr_equal(&ip6->saddr,
				     &av->dgid_addr._sockaddr_in6.sin6_addr) &&
		     ipv6_addr_equal(&ip6->daddr,
				     &av->sgid_addr._sockaddr_in6.sin6_addr);
	} else {
		const struct iphdr *ip4 = ip_hdr(skb);

		ok = !sroce_av_ipv6(av) &&
		     ip4->saddr == av->dgid_addr._sockaddr_in.sin_addr.s_addr &&
		     ip4->daddr == av->sgid_addr._sockaddr_in.sin_addr.s_addr;
	}
	if (likely(ok))
		return true;
	if (sroce_pkt_icrc_ok(pkt))
		sroce_qp_count(qp, SROCE_CNT_RX_DROP_NOT_PEER, 1);
	return false;
}

/*
 * The device a packet that arrived on (or is addressed to) @ndev belongs
 * to: a VLAN netdev's packets are its real device's, whose GID table holds
 * the VLAN's addresses too.
 */
static struct sroce_dev *sroce_dev_get_for_rx(struct net_device *ndev)
{
	struct sroce_dev *sdev = sroce_dev_get_by_netdev(ndev);

	if (!sdev && is_vlan_dev(ndev))
		sdev = sroce_dev_get_by_netdev(vlan_dev_real_dev(ndev));
	return sdev;
}

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;

	sdev = sroce_dev_get_for_rx(skb->dev);
	if (!sdev) {
		kfree_skb(skb);
		return 0;
	}
	/* Its netdev moved away, the device is going: not from here. */
	if (unlikely(!net_eq(sock_net(sk), sdev->net))) {
		ib_device_put(&sdev->ib);
		kfree_skb(skb);
		return 0;
	}
	sroce_rx_handler(sdev, skb, 0);
	ib_device_put(&sdev->ib);
	return 0;
}

/*
 * Where a packet must leave: by the interface that owns its source address
 * (the GID's netdev, sroce's own or a VLAN on it), which is where ib_core
 * resolved the peer's MAC; not by whatever the routing table prefers on a
 * host with several interfaces or sroce devices. A packet to an address of
 * this host never leaves it and is routed as the stack would (0: no
 * interface named). Return: the ifindex, 0, or -1 when the source address
 * is no longer here (no route).
 */
static int sroce_oif4(struct net *net, __be32 saddr, __be32 daddr)
{
	struct net_device *dev;
	int oif = 0;

	rcu_read_lock();
	if (!__ip_dev_find(net, daddr, false)) {
		dev = __ip_dev_find(net, saddr, false);
		oif = dev ? dev->ifindex : -1;
	}
	rcu_read_unlock();
	return oif;
}

static int sroce_oif6(struct net *net, const struct in6_addr *saddr,
		      const struct in6_addr *daddr)
{
	struct net_device *dev;
	int oif = 0;

	rcu_read_lock();
	if (!ipv6_chk_addr(net, daddr, NULL, 0)) {
		dev = ipv6_dev_find(net, saddr, NULL);
		oif = dev ? dev->ifindex : -1;
	}
	rcu_read_unlock();
	return oif;
}

static struct dst_entry *sroce_route4(struct sroce_dev *sdev,
				      struct dst_cache *cache,
				      const struct rxe_av *av)
{
	struct flowi4 fl = {
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->dgid_addr._sockaddr_in.sin_addr.s_addr,
		.saddr = av->sgid_addr._sockaddr_in.sin_addr.s_addr,
	};
	__be32 saddr;
	struct rtable *rt;

	rt = cache ? dst_cache_get_ip4(cache, &saddr) : NULL;
	if (rt)
		return &rt->dst;
	fl.flowi4_oif = sroce_oif4(sdev->net, fl.saddr, fl.daddr);
	if (fl.flowi4_oif < 0)
		return NULL;
	rt = ip_route_output_key(sdev->net, &fl);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
	return &rt->dst;
}

static struct dst_entry *sroce_route6(struct sroce_dev *sdev,
				      struct dst_cache *cache,
				      const struct rxe_av *av)
{
	struct flowi6 fl = {
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->dgid_addr._sockaddr_in6.sin6_addr,
		.saddr = av->sgid_addr._sockaddr_in6.sin6_addr,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	if (!sdev->sn->sk6)
		return NULL;
	dst = cache ? dst_cache_get_ip6(cache, &saddr) : NULL;
	if (dst)
		return dst;
	fl.flowi6_oif = sroce_oif6(sdev->net, &fl.saddr, &fl.daddr);
	if (fl.flowi6_oif < 0)
		return NULL;
	dst = ip6_dst_lookup_flow(sdev->net, sdev->sn->sk6->sk, &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl.saddr);
	return dst;
}

/*
 * A head over a page, from the calling stream's own compound page when its
 * last head has been freed (the page's one reference is then the
 * stream's). Newer kernels' fragment caches (7.2's) refuse a fragment over
 * a page that does not fit the rest of theirs without starting a new page,
 * so most heads of same-host chunks (req.c) and of IB MTU 4096 packets
 * would come from kmalloc, zeroed. A packet that stays in the host is
 * freed before its stream builds the next: one page serves them all.
 * The page stays with the stream until its QP goes, so it is charged to
 * @memcg, the QP's creator's (NULL: a kernel QP's, not charged): 64 KiB
 * per QP that no cgroup saw otherwise.
 * Caller holds the stream's lock; NULL when the page is still in use.
 */
static void *sroce_big_head(struct page **big, struct mem_cgroup *memcg)
{
	struct page *page = *big;

	if (!page) {
		struct mem_cgroup *old = set_active_memcg(memcg);

		page = alloc_pages(GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN |
				   (memcg ? __GFP_ACCOUNT : 0),
				   SROCE_BIG_HEAD_ORDER);
		set_active_memcg(old);
		if (!page)
			return NULL;
		*big = page;
	} else if (page_ref_count(page) != 1) {
		return NULL;
	}
	get_page(page);
	return page_address(page);
}

/**
 * sroce_big_head_free() - let a stream's page for big heads go
 * @big: &qp->req.big_head or &qp->resp.big_head, no longer used
 *
 * A packet still out holds the page until it is freed.
 */
void sroce_big_head_free(struct page **big)
{
	if (*big)
		put_page(*big);
	*big = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_big_head_free);

/*
 * Packet heads come from the calling stream's page when over a page and
 * @big is given, else from the kernel's per-CPU page fragment caches
 * (netdev_alloc_frag(), as netdev_alloc_skb() uses, for any size up to
 * their 32 KiB page), not from kmalloc: Debian's kernels zero every
 * kmalloc'ed head (init_on_alloc), a quarter of the busy CPU time on the
 * same host for nothing, since every byte is written (or, for a local
 * packet's payload, never read). A cache page is used again without being
 * zeroed once all of its packets are freed, which is at once for a packet
 * that stays in the host. @memcg: whom the stream's page is charged to.
 */
struct sk_buff *sroce_skb_alloc(unsigned int size, struct page **big,
				struct mem_cgroup *memcg)
{
	unsigned int truesize = SKB_DATA_ALIGN(size) +
				SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data = NULL;

	if (big && truesize > PAGE_SIZE &&
	    truesize <= PAGE_SIZE << SROCE_BIG_HEAD_ORDER)
		data = sroce_big_head(big, memcg);
	if (!data)
		data = netdev_alloc_frag(truesize);

	/* No fragment (no memory, or only an order-0 page): kmalloc. */
	if (!data)
		return alloc_skb(size, GFP_ATOMIC);
	skb = build_skb(data, truesize);
	if (!skb)
		skb_free_frag(data);
	return skb;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_skb_alloc);

/**
 * sroce_pkt_alloc() - a packet, IP and UDP headers built
 * @qp: the sending QP
 * @av: where to: &qp->av (connected QPs, route cached) or a UD WQE's
 * @sport: UDP source port
 * @len: bytes from the BTH to the end of the ICRC
 * @big: the calling stream's page for heads over a page (under the
 *	 stream's lock), or NULL
 *
 * Any context. skb->data points at the BTH for the caller to fill; the IP
 * header is final except for its checksum, so the ICRC can be computed
 * before the packet goes. With no route to @av the packet is built all the
 * same, without a dst: sroce_pkt_xmit() counts and drops it, as a wire
 * would lose it, so that the QP's own rules end the WQE (RC: the ACK
 * timeout and the retry count; UD, UC: sent) instead of a retry per jiffy
 * that never ends and holds up the rest of the send queue.
 *
 * Return: the packet, or NULL (no memory).
 */
struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp, const struct rxe_av *av,
				u16 sport, unsigned int len, struct page **big)
{
	struct dst_cache *cache = av == &qp->av ? &qp->dst_cache : NULL;
	bool v6 = sroce_av_ipv6(av);
	unsigned int ipl = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct udphdr *uh;
	unsigned int room;
	u8 ttl;

	dst = v6 ? sroce_route6(qp->sdev, cache, av) :
		   sroce_route4(qp->sdev, cache, av);
	room = (dst ? LL_RESERVED_SPACE(dst->dev) : LL_MAX_HEADER) + ipl +
	       sizeof(*uh);
	skb = sroce_skb_alloc(room + len, big, qp->memcg);
	if (!skb) {
		dst_release(dst);
		return NULL;
	}
	skb_reserve(skb, room);
	skb_put(skb, len);
	if (dst)
		skb_dst_set(skb, dst);

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(sizeof(*uh) + len);
	uh->check = 0;

	ttl = av->grh.hop_limit ? av->grh.hop_limit : 64;
	if (v6) {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		skb_reset_network_header(skb);
		ip6_flow_hdr(ip6, av->grh.traffic_class,
			     htonl(av->grh.flow_label & 0xfffff));
		ip6->payload_len = htons(sizeof(*uh) + len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = ttl;
		ip6->saddr = av->sgid_addr._sockaddr_in6.sin6_addr;
		ip6->daddr = av->dgid_addr._sockaddr_in6.sin6_addr;
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		struct iphdr *ip4 = skb_push(skb, sizeof(*ip4));

		skb_reset_network_header(skb);
		ip4->version = 4;
		ip4->ihl = 5;
		ip4->tos = av->grh.traffic_class;
		ip4->tot_len = htons(sizeof(*ip4) + sizeof(*uh) + len);
		/* DF and no socket: the ID is 0, as ip_select_ident() does. */
		ip4->id = 0;
		ip4->frag_off = htons(IP_DF);
		ip4->ttl = ttl;
		ip4->protocol = IPPROTO_UDP;
		ip4->check = 0;
		ip4->saddr = av->sgid_addr._sockaddr_in.sin_addr.s_addr;
		ip4->daddr = av->dgid_addr._sockaddr_in.sin_addr.s_addr;
		skb->protocol = htons(ETH_P_IP);
	}
	skb_pull(skb, ipl + sizeof(*uh));
	return skb;
}

/**
 * sroce_pkt_icrc_start() - begin the ICRC of a packet from sroce_pkt_alloc()
 * @skb: the packet, headers written up to @end
 * @end: the end of the extension headers the caller wrote
 * @crc: the running CRC, set after IP, UDP, BTH and those headers
 *
 * A packet whose route stays in this host goes straight to the local
 * receive path, which never checks its ICRC: it gets none, and the copy
 * that fills its payload runs without a CRC pass.
 *
 * Return: @crc, for the payload copy to continue (sroce_copy.crc), or NULL
 * when the packet needs no ICRC.
 */
u32 *sroce_pkt_icrc_start(struct sk_buff *skb, const u8 *end, u32 *crc)
{
	const u8 *ext = skb->data + sizeof(struct sroce_bth);

	if (sroce_pkt_is_local(skb))
		return NULL;
	*crc = sroce_icrc_hdr(skb_network_header(skb),
			      skb->protocol == htons(ETH_P_IPV6));
	*crc = crc32_le(*crc, ext, end - ext);
	return crc;
}

/*
 * Zero the @pad bytes before the ICRC and write the ICRC: the CRC from
 * sroce_pkt_icrc_start() continued over them, or 0 when @crc is NULL.
 */
void sroce_pkt_icrc_end(struct sk_buff *skb, u32 *crc, unsigned int pad)
{
	u8 *icrc = skb_tail_pointer(skb) - SROCE_ICRC_LEN;

	memset(icrc - pad, 0, pad);
	if (!crc) {
		put_unaligned_le32(0, icrc);
		return;
	}
	*crc = crc32_le(*crc, icrc - pad, pad);
	put_unaligned_le32(~*crc, icrc);
}

/*
 * The sroce device a local address of @net belongs to, with a reference;
 * the packet then comes from the netdev that owns the address (a VLAN's,
 * say), as it would from the wire. Caller holds the RCU read lock, which
 * keeps that netdev until the packet is delivered.
 */
static struct sroce_dev *sroce_local_dev(struct net *net, struct sk_buff *skb)
{
	struct net_device *ndev;
	struct sroce_dev *sdev;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "no RCU read lock");
	if (skb->protocol == htons(ETH_P_IPV6))
		ndev = ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
	else
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	if (!ndev)
		return NULL;
	sdev = sroce_dev_get_for_rx(ndev);
	if (sdev)
		skb->dev = ndev;
	return sdev;
}

/* Count and trace a packet of sroce_pkt_alloc() as it goes; data at the BTH. */
static void sroce_pkt_account(struct sroce_qp *qp, struct sk_buff *skb)
{
	sroce_qp_count_pkt(qp, true, skb->len + sizeof(struct udphdr));
	trace_sroce_tx(qp->sdev, (void *)skb->data, skb->len);
}

/*
 * Hand @skb, data at its IP header, to the IP stack: one packet, or the
 * head of a batch of @n.
 *
 * A full queue (the qdisc's NET_XMIT_DROP, which a tc drop action returns
 * too, or -ENOBUFS) may take the packet a moment later: -EAGAIN, and the
 * caller tries again, a bounded number of times (tx.c). Any other refusal
 * comes again for every packet (a netfilter drop's -EPERM, -EMSGSIZE once
 * the netdev MTU fell below the path MTU, a netdev gone down): the packet
 * is lost, as on a wire, counted in tx_refused, and the QP's own ACK
 * timeout and retry count end an RC transfer (RETRY_EXC_ERR).
 *
 * Return: 0 (sent, or lost), or -EAGAIN when it was dropped and may be
 * sent again.
 */
static int sroce_pkt_out(struct sroce_qp *qp, struct sk_buff *skb,
			 unsigned int n)
{
	struct sroce_dev *sdev = qp->sdev;
	int err;

	if (skb->protocol == htons(ETH_P_IPV6)) {
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		err = ip6_local_out(sdev->net, sdev->sn->sk6->sk, skb);
	} else {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		err = ip_local_out(sdev->net, sdev->sn->sk4->sk, skb);
	}
	err = net_xmit_eval(err);
	if (likely(!err))
		return 0;
	if (err == NET_XMIT_DROP || err == -ENOBUFS) {
		sroce_qp_count(qp, SROCE_CNT_TX_DROPS, n);
		return -EAGAIN;
	}
	sroce_qp_count(qp, SROCE_CNT_TX_REFUSED, n);
	return 0;
}

static unsigned int sroce_pkt_hdrs(const struct sk_buff *skb)
{
	return (skb->protocol == htons(ETH_P_IPV6) ? sizeof(struct ipv6hdr) :
						     sizeof(struct iphdr)) +
	       sizeof(struct udphdr);
}

/**
 * sroce_pkt_xmit() - send a packet built by sroce_pkt_alloc()
 * @qp: the sending QP
 * @skb: the packet, ICRC written; consumed
 *
 * A packet to a local address skips the IP stack and goes straight into
 * the receiving device's receive path (the ICRC is not checked there).
 * Any context, no QP lock held: the local receive path may take the locks
 * of any QP, this one included.
 *
 * Return: 0, or -EAGAIN when the packet was dropped on the way out (the
 * caller backs off and sends it again).
 */
int sroce_pkt_xmit(struct sroce_qp *qp, struct sk_buff *skb)
{
	unsigned int hdrs = sroce_pkt_hdrs(skb);
	struct sroce_dev *sdev = qp->sdev;

	if (unlikely(!skb_dst(skb))) {
		sroce_qp_count(qp, SROCE_CNT_TX_NO_ROUTE, 1);
		kfree_skb(skb);
		return 0;	/* no route: lost, as on a wire */
	}
	sroce_pkt_account(qp, skb);
	skb_push(skb, hdrs);

	if (sroce_pkt_is_local(skb)) {
		struct sroce_dev *peer;

		rcu_read_lock();
		peer = sroce_local_dev(sdev->net, skb);
		if (!peer) {
			rcu_read_unlock();
			kfree_skb(skb);
			return 0;	/* nobody to take it: lost, as on a wire */
		}
		skb_dst_drop(skb);
		skb_pull(skb, hdrs - sizeof(struct udphdr));
		local_bh_disable();
		sroce_rx_handler(peer, skb, qp->pmtu);
		local_bh_enable();
		rcu_read_unlock();
		ib_device_put(&peer->ib);
		return 0;
	}

	skb->ip_summed = CHECKSUM_NONE;
	return sroce_pkt_out(qp, skb, 1);
}

/*
 * A batch's packets and its bytes from the IP header: the second under an
 * IPv4 total length and the stack's GSO limit (64 KiB).
 */
#define SROCE_BATCH_PKTS	32
#define SROCE_BATCH_BYTES	60000

/**
 * sroce_pkt_batch_add() - add a packet to the stream's batch, if it may join
 * @qp: the sending QP
 * @b: the batch, empty or not
 * @skb: a packet of sroce_pkt_alloc(), ICRC written
 * @psn: its PSN
 *
 * Packets of an RC requester that leave the host by one route join a
 * batch, which sroce_pkt_batch_xmit() hands to the IP stack as one UDP
 * GSO packet of the fraglist kind: each packet keeps its own headers and
 * ICRC, the stack's software GSO splits the list again in front of the
 * device, and the device takes them all with one notification (xmit_more)
 * instead of one per packet; the qdisc, netfilter and the neighbour see
 * the batch once. UD and UC are not batched: their WQE is complete as
 * soon as its last packet is built (sroce_req_next()), so a batch dropped
 * later could not be sent again.
 *
 * Return: true when @skb is in the batch (the batch owns it), false when
 * it cannot join: the caller sends the batch first, then tries again.
 */
bool sroce_pkt_batch_add(struct sroce_qp *qp, struct sroce_pkt_batch *b,
			 struct sk_buff *skb, u32 psn)
{
	struct sk_buff *head = b->head;

	if (sroce_qp_unacked(qp) || !skb_dst(skb) || sroce_pkt_is_local(skb))
		return false;
	if (!head) {
		b->head = skb;
		b->psn = psn;
	} else {
		if (b->n == SROCE_BATCH_PKTS || skb_dst(skb) != skb_dst(head) ||
		    head->len + skb->len + sroce_pkt_hdrs(head) >
		    SROCE_BATCH_BYTES)
			return false;
		if (b->tail)
			b->tail->next = skb;
		else
			skb_shinfo(head)->frag_list = skb;
		b->tail = skb;
		/* As GRO chains the packets of a fraglist batch. */
		head->len += skb->len;
		head->data_len += skb->len;
		head->truesize += skb->truesize;
	}
	b->n++;
	sroce_pkt_account(qp, skb);
	return true;
}

/**
 * sroce_pkt_batch_xmit() - send the stream's batch
 * @qp: the sending QP
 * @b: the batch; empty on return
 *
 * The list's packets sit after their own UDP headers, network and
 * transport headers set, as GRO leaves them; the head, the first packet,
 * carries the batch's lengths, and its payload is the segment size
 * (gso_size), which the stack checks before it trusts the list. Every
 * packet's IPv4 ID is already final (0, with DF): the ICRC covers it, so
 * the segmentation must keep it (SKB_GSO_TCP_FIXEDID, for any protocol),
 * not number the segments. Software GSO then writes each segment's
 * checksum and length, and the head's UDP length, back to what they were.
 *
 * Return: 0, or -EAGAIN when the batch was dropped (the caller goes back
 * to its first packet, b->psn as it was).
 */
int sroce_pkt_batch_xmit(struct sroce_qp *qp, struct sroce_pkt_batch *b)
{
	struct sk_buff *skb = b->head;
	unsigned int n = b->n, hdrs;
	struct skb_shared_info *si;
	struct udphdr *uh;

	if (!skb)
		return 0;
	b->head = NULL;
	b->tail = NULL;
	b->n = 0;
	hdrs = sroce_pkt_hdrs(skb);
	if (n == 1) {
		skb_push(skb, hdrs);
		skb->ip_summed = CHECKSUM_NONE;
		return sroce_pkt_out(qp, skb, 1);
	}
	si = skb_shinfo(skb);
	si->gso_size = skb_headlen(skb);
	si->gso_segs = n;
	si->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	if (skb->protocol == htons(ETH_P_IP))
		si->gso_type |= SKB_GSO_TCP_FIXEDID;
	/* No checksum for the segmentation to fill in (UDP's is 0). */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	uh = skb_push(skb, sizeof(*uh));
	uh->len = htons(skb->len);
	skb_push(skb, hdrs - sizeof(*uh));
	sroce_qp_count(qp, SROCE_CNT_TX_BATCHES, 1);
	return sroce_pkt_out(qp, skb, n);
}

static int sroce_sockopt(struct socket *sock, int level, int name, int val)
{
	return sock->ops->setsockopt(sock, level, name, KERNEL_SOCKPTR(&val),
				     sizeof(val));
}

static struct socket *sroce_udp_open(struct net *net, bool ipv6)
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
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sroce_udp_tunnel_arg(sock), &tcfg);
	/*
	 * Packets are sized by the QP's path MTU, which the device MTU
	 * bounds, as an RNIC sizes them. A smaller MTU the stack holds for
	 * the route (its mtu attribute, or a PMTU learned from the
	 * frag-needed the stack sent itself while the MTU was briefly lower,
	 * cached for ten minutes) must not drop every full-size packet.
	 * "Interface": the device MTU, DF kept, no PMTU updates taken.
	 */
	if (ipv6) {
		err = sroce_sockopt(sock, SOL_IPV6, IPV6_MTU_DISCOVER,
				    IPV6_PMTUDISC_INTERFACE);
	} else {
		err = sroce_sockopt(sock, SOL_IP, IP_MTU_DISCOVER,
				    IP_PMTUDISC_INTERFACE);
		/*
		 * setup_udp_tunnel_sock() turns IPv4 multicast loopback off,
		 * but QPs of this host attached to a group must get what is
		 * sent to it (IPv6 loops back by default).
		 */
		if (!err)
			err = sroce_sockopt(sock, SOL_IP, IP_MULTICAST_LOOP, 1);
	}
	if (err) {
		udp_tunnel_sock_release(sroce_udp_tunnel_arg(sock));
		return ERR_PTR(err);
	}
	return sock;
}

static void sroce_udp_close(struct socket **sock)
{
	if (*sock)
		udp_tunnel_sock_release(sroce_udp_tunnel_arg(*sock));
	*sock = NULL;
}

/* Close a namespace's sockets (none open is fine). */
static void sroce_net_release(struct sroce_net *sn)
{
	lockdep_assert_held(&sroce_net_mutex);
	sroce_udp_close(&sn->sk6);
	sroce_udp_close(&sn->sk4);
}

static int sroce_net_open(struct net *net, struct sroce_net *sn)
{
	struct socket *s;

	s = sroce_udp_open(net, false);
	if (IS_ERR(s))
		goto err;
	sn->sk4 = s;

	s = sroce_udp_open(net, true);
	/* A kernel booted with ipv6.disable=1 still gets IPv4 RoCE. */
	if (IS_ERR(s) && PTR_ERR(s) != -EAFNOSUPPORT) {
		sroce_udp_close(&sn->sk4);
		goto err;
	}
	sn->sk6 = IS_ERR(s) ? NULL : s;
	return 0;

err:
	if (PTR_ERR(s) == -EADDRINUSE)
		pr_err("UDP port %d is in use%s: rdma_rxe (or another RoCEv2 driver) is loaded; sroce and rdma_rxe cannot share a network namespace, unload it first\n",
		       SROCE_UDP_PORT,
		       net_eq(net, &init_net) ? "" : " in this network namespace");
	else
		pr_err("cannot open UDP port %d: %ld\n", SROCE_UDP_PORT,
		       PTR_ERR(s));
	return PTR_ERR(s);
}

/**
 * sroce_net_get() - a namespace's sockets, for a device in it
 * @net: the device's netdev's namespace, which the caller keeps alive
 *
 * Process context, rtnl not held (the sockets are set up here). The first
 * user binds the namespace's port; sroce_net_put() releases the use.
 *
 * Return: the namespace's sockets, or an ERR_PTR (the port is taken).
 */
struct sroce_net *sroce_net_get(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	int err = 0;

	mutex_lock(&sroce_net_mutex);
	if (!sn->users)
		err = sroce_net_open(net, sn);
	if (!err)
		sn->users++;
	mutex_unlock(&sroce_net_mutex);
	return err ? ERR_PTR(err) : sn;
}

/**
 * sroce_net_put() - release a use of a namespace's sockets
 * @sn: from sroce_net_get()
 *
 * The last user closes them. Called once no QP of the device can send.
 */
void sroce_net_put(struct sroce_net *sn)
{
	mutex_lock(&sroce_net_mutex);
	if (!WARN_ON(!sn->users)) {
		WRITE_ONCE(sn->users, sn->users - 1);	/* sroce_net_close() */
		if (!sn->users) {
			sroce_net_release(sn);
			/* Under the mutex, which sroce_net_close() takes next. */
			wake_up_var(&sn->users);
		}
	}
	mutex_unlock(&sroce_net_mutex);
}

/**
 * sroce_net_close() - a namespace is going: close its sockets
 * @net: the namespace, none of whose devices is left on main.c's list
 *
 * From the namespace's pernet exit, once its listed devices are gone
 * (main.c's sroce_pernet_exit()). A device whose queued unregistration
 * already took it off the list may still be inside its dealloc, before
 * its sroce_net_put(): wait for that, or its put would land in the
 * namespace's freed storage.
 */
void sroce_net_close(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	wait_var_event(&sn->users, !READ_ONCE(sn->users));
	mutex_lock(&sroce_net_mutex);
	sroce_net_release(sn);
	mutex_unlock(&sroce_net_mutex);
}
