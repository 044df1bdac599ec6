// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the ICRC against packets rdma_rxe put on the wire (captured by
 * scripts/make-icrc-fixture.sh), and which header fields it covers.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "../sroce.h"
#include <sroce/wire.h>
#include "sroce_test.h"
#include "rxe_packets.h"

static u32 pkt_icrc(const u8 *p, bool ipv6, unsigned int len)
{
	return sroce_icrc_packet(p, ipv6, len - SROCE_ICRC_LEN);
}

static void icrc_rxe_packets(struct kunit *test)
{
	unsigned int i;

	KUNIT_ASSERT_GE(test, ARRAY_SIZE(sroce_rxe_packets), 4);
	for (i = 0; i < ARRAY_SIZE(sroce_rxe_packets); i++) {
		const u8 *p = sroce_rxe_packets[i].bytes;
		unsigned int len = sroce_rxe_packets[i].len;

		KUNIT_EXPECT_EQ_MSG(test, pkt_icrc(p, sroce_rxe_packets[i].ipv6, len),
				    get_unaligned_le32(p + len - SROCE_ICRC_LEN),
				    "packet %s", sroce_rxe_packets[i].name);
	}
}

/* Routers may change the masked fields; the ICRC must not notice. */
static void icrc_masked_fields(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_rxe_packets); i++) {
		bool v6 = sroce_rxe_packets[i].ipv6;
		unsigned int len = sroce_rxe_packets[i].len;
		size_t ipl = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
		u8 *p = kunit_kmalloc(test, len, GFP_KERNEL);
		struct udphdr *udp = (struct udphdr *)(p + ipl);
		u32 want;

		KUNIT_ASSERT_NOT_NULL(test, p);
		memcpy(p, sroce_rxe_packets[i].bytes, len);
		want = pkt_icrc(p, v6, len);
		if (v6) {
			struct ipv6hdr *h = (struct ipv6hdr *)p;

			h->priority ^= 0x5;
			h->flow_lbl[0] ^= 0xa3;
			h->flow_lbl[2] ^= 0x11;
			h->hop_limit ^= 0x40;
		} else {
			struct iphdr *h = (struct iphdr *)p;

			h->tos ^= 0x03;		/* ECN CE */
			h->ttl ^= 0x21;
			h->check ^= (__force __sum16)0x1234;
		}
		udp->check ^= (__force __sum16)0xbeef;
		p[ipl + sizeof(*udp) + 4] ^= 0xc0;	/* FECN, BECN */
		KUNIT_EXPECT_EQ(test, pkt_icrc(p, v6, len), want);

		/* Anything else is covered: addresses, ports, QPN, payload. */
		p[ipl - 1] ^= 1;
		KUNIT_EXPECT_NE(test, pkt_icrc(p, v6, len), want);
		p[ipl - 1] ^= 1;
		udp->source ^= cpu_to_be16(1);
		KUNIT_EXPECT_NE(test, pkt_icrc(p, v6, len), want);
		udp->source ^= cpu_to_be16(1);
		p[ipl + sizeof(*udp) + 7] ^= 1;
		KUNIT_EXPECT_NE(test, pkt_icrc(p, v6, len), want);
		p[ipl + sizeof(*udp) + 7] ^= 1;
		p[len - SROCE_ICRC_LEN - 1] ^= 0x80;
		KUNIT_EXPECT_NE(test, pkt_icrc(p, v6, len), want);
	}
}

static void icrc_short(struct kunit *test)
{
	u8 b[40] = {};

	KUNIT_EXPECT_EQ(test, sroce_icrc_packet(b, false, 39), 0);
}

/*
 * A received packet as sroce_rcv() has it: IP header at the network
 * header, skb->data at UDP, the payload's second half in a page fragment
 * so the CRC must walk fragments.
 */
static struct sk_buff *rx_skb(struct kunit *test, const u8 *p,
			      unsigned int len, bool v6, unsigned int split)
{
	size_t ipl = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);
	struct page *pg;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, p, split);
	pg = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pg);
	memcpy(page_address(pg), p + split, len - split);
	skb_add_rx_frag(skb, 0, pg, 0, len - split, PAGE_SIZE);
	skb_reset_network_header(skb);
	skb_pull(skb, ipl);
	skb->protocol = htons(v6 ? ETH_P_IPV6 : ETH_P_IP);
	return skb;
}

/*
 * The receive check in both forms: a pass of its own (sroce_pkt_icrc_ok)
 * and carried by the copy that places the payload (sroce_pkt_icrc_copy,
 * sroce_mr_copy, sroce_pkt_icrc_placed). Both accept what rdma_rxe sent,
 * both refuse it with one payload bit flipped, and count it.
 */
static void icrc_rx_fused(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	struct sroce_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	unsigned int i, n = 0;

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	sdev->cnt = alloc_percpu(struct sroce_counters);
	KUNIT_ASSERT_NOT_NULL(test, sdev->cnt);
	mr->dma = true;
	for (i = 0; i < ARRAY_SIZE(sroce_rxe_packets); i++) {
		bool v6 = sroce_rxe_packets[i].ipv6;
		unsigned int len = sroce_rxe_packets[i].len, flip;
		size_t ipl = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
		const u8 *p = sroce_rxe_packets[i].bytes;
		const struct sroce_bth *bth = (const void *)(p + ipl +
							     sizeof(struct udphdr));
		u8 op = sroce_bth_opcode(bth), *buf, *dst;
		struct sroce_pkt pkt = { .sdev = sdev };
		struct sk_buff *skb;
		int bad;
		u32 crc;

		pkt.payoff = sizeof(struct udphdr) + sroce_opcode_hdr_len(op);
		pkt.padlen = sroce_bth_pad(bth);
		pkt.paylen = len - ipl - pkt.payoff - pkt.padlen -
			     SROCE_ICRC_LEN;
		if (!pkt.paylen)
			continue;
		n++;
		buf = kunit_kmalloc(test, pkt.paylen, GFP_KERNEL);
		dst = kunit_kzalloc(test, pkt.paylen, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, buf);
		KUNIT_ASSERT_NOT_NULL(test, dst);
		flip = ipl + pkt.payoff + pkt.paylen / 2;
		for (bad = 0; bad < 2; bad++) {
			u8 *q = kunit_kmalloc(test, len, GFP_KERNEL);
			u64 before = sroce_counter_read(sdev, SROCE_CNT_RX_ICRC_ERR);

			KUNIT_ASSERT_NOT_NULL(test, q);
			memcpy(q, p, len);
			if (bad)
				q[flip] ^= 0x10;

			/* A pass of its own. */
			skb = rx_skb(test, q, len, v6, ipl + pkt.payoff + 1);
			pkt.skb = skb;
			KUNIT_ASSERT_TRUE(test, sroce_pkt_icrc_begin(skb, &pkt));
			KUNIT_EXPECT_EQ(test, sroce_pkt_icrc_ok(&pkt), !bad);
			/* Checked once only. */
			KUNIT_EXPECT_TRUE(test, sroce_pkt_icrc_ok(&pkt));
			KUNIT_EXPECT_PTR_EQ(test, sroce_pkt_icrc_copy(&pkt, &crc),
					    NULL);

			/* In the copy that places the payload. */
			KUNIT_ASSERT_TRUE(test, sroce_pkt_icrc_begin(skb, &pkt));
			KUNIT_ASSERT_PTR_EQ(test, sroce_pkt_icrc_copy(&pkt, &crc),
					    &crc);
			KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, pkt.payoff, buf,
							    pkt.paylen), 0);
			sroce_mr_copy(mr, (uintptr_t)dst, buf, pkt.paylen,
				      true, &crc);
			KUNIT_EXPECT_EQ(test, sroce_pkt_icrc_placed(&pkt, crc),
					!bad);
			KUNIT_EXPECT_EQ(test, memcmp(dst, q + ipl + pkt.payoff,
						     pkt.paylen), 0);
			KUNIT_EXPECT_EQ(test,
					sroce_counter_read(sdev,
							   SROCE_CNT_RX_ICRC_ERR) -
					before, (u64)(bad ? 2 : 0));
			kfree_skb(skb);
		}
	}
	KUNIT_EXPECT_GE(test, n, 2U);
	free_percpu(sdev->cnt);
}

/* A header that is not plain IP + UDP + BTH is refused at once. */
static void icrc_rx_layout(struct kunit *test)
{
	const u8 *p = sroce_rxe_packets[0].bytes;
	unsigned int len = sroce_rxe_packets[0].len;
	struct sroce_pkt pkt = { .payoff = sizeof(struct udphdr) +
					    sizeof(struct sroce_bth) };
	struct sk_buff *skb;
	u8 q[SROCE_RXE_PACKET_MAX];

	KUNIT_ASSERT_FALSE(test, sroce_rxe_packets[0].ipv6);
	memcpy(q, p, len);
	q[0] = 0x46;	/* IPv4 with options */
	skb = rx_skb(test, q, len, false, len - 8);
	KUNIT_EXPECT_FALSE(test, sroce_pkt_icrc_begin(skb, &pkt));
	kfree_skb(skb);
}

/*
 * A packet whose headers do not parse (a transport version other than 0):
 * corrupted when its ICRC is wrong, malformed when it is right; too short
 * to carry a BTH and an ICRC, malformed. Over every captured packet, with
 * the payload split across a fragment.
 */
static void icrc_rx_corrupt(struct kunit *test)
{
	const size_t bth = sizeof(struct udphdr) + 1;	/* BTH byte 1 */
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_rxe_packets); i++) {
		bool v6 = sroce_rxe_packets[i].ipv6;
		unsigned int len = sroce_rxe_packets[i].len;
		size_t ipl = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
		u8 q[SROCE_RXE_PACKET_MAX];
		struct sk_buff *skb;
		u32 icrc;

		memcpy(q, sroce_rxe_packets[i].bytes, len);
		q[ipl + bth] |= 0x01;		/* TVer 1 */
		skb = rx_skb(test, q, len, v6, len - 2);
		KUNIT_EXPECT_TRUE(test, sroce_rx_corrupt(skb));
		kfree_skb(skb);

		icrc = sroce_icrc_packet(q, v6, len - SROCE_ICRC_LEN);
		put_unaligned_le32(icrc, q + len - SROCE_ICRC_LEN);
		skb = rx_skb(test, q, len, v6, len - 2);
		KUNIT_EXPECT_FALSE(test, sroce_rx_corrupt(skb));
		kfree_skb(skb);

		/* UDP, BTH and 3 bytes: no room for an ICRC */
		skb = rx_skb(test, q, ipl + bth + 14, v6, ipl + bth + 10);
		KUNIT_EXPECT_FALSE(test, sroce_rx_corrupt(skb));
		kfree_skb(skb);
	}
}

/*
 * FLUSH requests captured between rdma_rxe and sroce on 7.2 (rc.sh ib15):
 * rdma_rxe's carries an ICRC over its BTH, FETH and RETH twice, sroce's
 * the one IBTA defines.
 */
static const u8 rxe_flush[] = {
	0x45, 0x00, 0x00, 0x40, 0xe0, 0xba, 0x40, 0x00,
	0x40, 0x11, 0xcd, 0xca, 0xc6, 0x12, 0x00, 0x02,
	0xc6, 0x12, 0x00, 0x01, 0xc1, 0x32, 0x12, 0xb7,
	0x00, 0x2c, 0x00, 0x00, 0x1c, 0x00, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x08, 0x01,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x7f, 0xa5,
	0xd2, 0x31, 0xb0, 0x64, 0x00, 0x00, 0x03, 0x04,
	0x00, 0x00, 0x01, 0x2c, 0x04, 0x57, 0x0a, 0x79,
};

static const u8 sroce_flush[] = {
	0x45, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x00,
	0x40, 0x11, 0xae, 0x85, 0xc6, 0x12, 0x00, 0x01,
	0xc6, 0x12, 0x00, 0x02, 0xc1, 0x10, 0x12, 0xb7,
	0x00, 0x2c, 0x00, 0x00, 0x1c, 0x40, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x08, 0x01,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x7f, 0x00,
	0xfe, 0xd5, 0xa0, 0x64, 0x00, 0x00, 0x02, 0x94,
	0x00, 0x00, 0x01, 0x2c, 0x6f, 0x71, 0x7a, 0xfd,
};

/*
 * rdma_rxe's FLUSH ICRC is accepted and counted as such, only for FLUSH
 * and only exactly; sroce's own FLUSH passes the plain rule.
 */
static void icrc_rxe_flush(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	const unsigned int len = sizeof(rxe_flush);
	struct sroce_pkt pkt = {
		.sdev = sdev, .opcode = SROCE_OP_FLUSH,
		.payoff = sizeof(struct udphdr) +
			  sroce_opcode_hdr_len(SROCE_OP_FLUSH),
	};
	struct sk_buff *skb;
	int bad;

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	sdev->cnt = alloc_percpu(struct sroce_counters);
	KUNIT_ASSERT_NOT_NULL(test, sdev->cnt);
	KUNIT_ASSERT_EQ(test, len, (unsigned int)sizeof(struct iphdr) +
			pkt.payoff + SROCE_ICRC_LEN);

	/* Headers linear (as sroce_parse() leaves them), the ICRC in a frag. */
	for (bad = 0; bad < 2; bad++) {
		u8 q[sizeof(rxe_flush)];

		memcpy(q, rxe_flush, len);
		if (bad)	/* one bit of the RETH's length */
			q[len - 5] ^= 0x01;
		skb = rx_skb(test, q, len, false, len - SROCE_ICRC_LEN);
		pkt.skb = skb;
		KUNIT_ASSERT_TRUE(test, sroce_pkt_icrc_begin(skb, &pkt));
		KUNIT_EXPECT_EQ(test, sroce_pkt_icrc_ok(&pkt), !bad);
		kfree_skb(skb);
	}
	KUNIT_EXPECT_EQ(test, sroce_counter_read(sdev, SROCE_CNT_RX_FLUSH_ICRC_RXE), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(sdev, SROCE_CNT_RX_ICRC_ERR), 1ULL);

	/* The same bytes as any other opcode: the plain rule only. */
	pkt.opcode = SROCE_OP_WRITE_ONLY;
	skb = rx_skb(test, rxe_flush, len, false, len - SROCE_ICRC_LEN);
	pkt.skb = skb;
	KUNIT_ASSERT_TRUE(test, sroce_pkt_icrc_begin(skb, &pkt));
	KUNIT_EXPECT_FALSE(test, sroce_pkt_icrc_ok(&pkt));
	kfree_skb(skb);

	pkt.opcode = SROCE_OP_FLUSH;
	skb = rx_skb(test, sroce_flush, len, false, len - SROCE_ICRC_LEN);
	pkt.skb = skb;
	KUNIT_ASSERT_TRUE(test, sroce_pkt_icrc_begin(skb, &pkt));
	KUNIT_EXPECT_TRUE(test, sroce_pkt_icrc_ok(&pkt));
	kfree_skb(skb);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(sdev, SROCE_CNT_RX_FLUSH_ICRC_RXE), 1ULL);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(sdev, SROCE_CNT_RX_ICRC_ERR), 2ULL);
	free_percpu(sdev->cnt);
}

static struct kunit_case icrc_cases[] = {
	KUNIT_CASE(icrc_rxe_packets),
	KUNIT_CASE(icrc_masked_fields),
	KUNIT_CASE(icrc_short),
	KUNIT_CASE(icrc_rx_fused),
	KUNIT_CASE(icrc_rx_layout),
	KUNIT_CASE(icrc_rx_corrupt),
	KUNIT_CASE(icrc_rxe_flush),
	{}
};

struct kunit_suite sroce_icrc_suite = {
	.name = "sroce_icrc",
	.test_cases = icrc_cases,
};
