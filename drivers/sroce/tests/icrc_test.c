// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the ICRC against packets rdma_rxe put on the wire (captured by
 * scripts/make-icrc-fixture.sh), and which header fields it covers.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <asm/unaligned.h>

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

static struct kunit_case icrc_cases[] = {
	KUNIT_CASE(icrc_rxe_packets),
	KUNIT_CASE(icrc_masked_fields),
	KUNIT_CASE(icrc_short),
	{}
};

struct kunit_suite sroce_icrc_suite = {
	.name = "sroce_icrc",
	.test_cases = icrc_cases,
};
