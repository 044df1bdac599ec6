// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCEv2 invariant CRC (IBTA 7.8.1, Annex A17.3.3): CRC-32 (the kernel's
 * crc32_le, seeded with all ones, complemented at the end) over 8 bytes of
 * ones standing for the masked LRH, the IP header, the UDP header, the BTH
 * and everything after it up to the ICRC, with the fields routers may change
 * replaced by ones. It goes on the wire little endian.
 *
 * The header part is computed once per packet from a small masked copy; the
 * payload part is fed by the caller chunk by chunk, in the same pass as the
 * copy to or from the MR pages.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "sroce.h"
#include <sroce/wire.h>

/* Byte of the BTH holding FECN, BECN and reserved bits. */
#define SROCE_BTH_MASKED_BYTE	4

/**
 * sroce_icrc_hdr() - ICRC state after IP, UDP and BTH
 * @l3: start of the IP header; IP (no IPv4 options), UDP and BTH follow
 *	contiguously, as the receive path and the transmit path guarantee
 * @ipv6: @l3 is an IPv6 header
 *
 * Return: the running CRC, to be continued with crc32_le() over the
 * extension headers, payload and pad, and closed with sroce_icrc_final().
 */
u32 sroce_icrc_hdr(const void *l3, bool ipv6)
{
	u8 b[8 + sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	     sizeof(struct sroce_bth)];
	size_t ipl = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	size_t n = ipl + sizeof(struct udphdr) + sizeof(struct sroce_bth);
	struct udphdr *udp;

	memset(b, 0xff, 8);
	memcpy(b + 8, l3, n);
	if (ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(b + 8);

		/* Traffic class and flow label span these bits. */
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		struct iphdr *ip4 = (struct iphdr *)(b + 8);

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	}
	udp = (struct udphdr *)(b + 8 + ipl);
	udp->check = (__force __sum16)0xffff;
	b[8 + ipl + sizeof(struct udphdr) + SROCE_BTH_MASKED_BYTE] = 0xff;
	return crc32_le(~0U, b, 8 + n);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_hdr);

/**
 * sroce_icrc_packet() - ICRC of a linear packet
 * @l3: start of the IP header
 * @ipv6: @l3 is an IPv6 header
 * @len: bytes from @l3 up to, not including, the ICRC
 *
 * Return: the ICRC in host order, to compare with get_unaligned_le32() of
 * the received one; 0 with the packet too short to hold the headers is
 * never a valid answer, so callers check @len first.
 */
u32 sroce_icrc_packet(const void *l3, bool ipv6, size_t len)
{
	size_t hl = (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		    sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u32 crc;

	if (len < hl)
		return 0;
	crc = sroce_icrc_hdr(l3, ipv6);
	crc = crc32_le(crc, (const u8 *)l3 + hl, len - hl);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_packet);
