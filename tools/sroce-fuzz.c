// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-fuzz: a RoCEv2 wire fuzzer for a receiver's parse and receive path.
 *
 * Builds RoCEv2 frames over IPv4, and with --dst6 over IPv6 too (Ethernet,
 * IP, UDP, BTH and the rest, with the ICRC of RoCEv2's masking rules), and
 * sends them in sendmmsg() batches through an AF_PACKET socket. Two modes,
 * interleaved:
 *
 *   generational: a random opcode (every RC/UC/UD one, CNP, and reserved
 *     ones), random BTH fields, extension headers of the right size or cut
 *     short or too long, random payload lengths from 0 to past the path MTU;
 *     QPNs mostly the target's, PSNs mostly near the expected ones, rkeys
 *     and addresses mostly in its MRs;
 *   mutational: a valid packet of one opcode for a QP of its transport,
 *     then bits flipped, bytes set, the packet cut or extended, or one
 *     header field changed;
 *   seeded (with --seeds PCAP): a RoCEv2 packet captured from real
 *     traffic, aimed at a target QP of its transport (its PSN, and its
 *     RETH, AtomicETH and DETH, mostly the target's), half of them then
 *     mutated as above;
 *   requests (5%): a READ or an atomic for an RC QP whose peer QPN the
 *     target names, from the peer's IPv4 address, at a PSN it answers.
 *
 * IP and UDP headers are always valid, so that every frame that reaches
 * the target host reaches its RoCEv2 receive path: what the target counts
 * must add up to what arrived. Most frames carry a correct ICRC (computed
 * after the mutation), some a wrong one. Sources: the connected peer's
 * address, and a third address on the same subnet; a QP marked live (a
 * connection that must stay intact) only ever gets the third address.
 *
 * For each frame the fuzzer predicts what the receive path's first stages
 * must count (malformed, ICRC error, P_Key, no QP, or handed to a QP) the
 * way sroce parses, and prints the totals as one "sroce-fuzz:" line. It
 * also takes the target's READ responses and atomic ACKs off the wire and
 * counts those that answer no request the target had to honour (see
 * check_reply()): that check does not rest on the prediction.
 *
 * Usage: sroce-fuzz --count-rx IFACE --dst IP [--dst6 IP6]
 *   counts the UDP 4791 frames to IP (and IP6) that IFACE receives (packet
 *   socket filters) until SIGTERM or SIGINT, then prints the count.
 *
 * Usage: sroce-fuzz --account PCAP --dst IP --dmac MAC
 *   reads a capture of the frames that arrived at the host of IP and MAC
 *   (its own interface's, before its IP stack: netem's corrupted ones
 *   among them) and prints how many each stage must drop: not for this
 *   MAC, IPv4, UDP, then sroce's receive path (malformed, ICRC error) and
 *   how many reach it intact. What sroce counted must add up to it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sroce/wire.h>

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define ETH_HLEN_	14
#define IP_HLEN		20
#define IP6_HLEN	40
#define UDP_HLEN	8
#define L2L4		(ETH_HLEN_ + IP_HLEN + UDP_HLEN)
#define L2L4_6		(ETH_HLEN_ + IP6_HLEN + UDP_HLEN)
#define MAX_ROCE	(1500 - IP_HLEN - UDP_HLEN)	/* BTH..ICRC */
#define MAX_ROCE6	(1500 - IP6_HLEN - UDP_HLEN)
#define BATCH		64
#define MAX_QPS		64
#define MAX_MRS		16
#define MAX_KNOWN	256
/* The IP TOS of every fuzzed frame (DSCP 8): how they are told apart. */
#define FUZZ_TOS	0x20
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum qtype { Q_RC, Q_UC, Q_UD };

/* A READ or atomic request sent to a QP, kept to match its replies. */
struct treq {
	u64 va;
	u32 psn;
	u32 rkey;
	u32 len;
	u8 op;
};

/* Per QP: far more than are ever on the way (the window, or TCG's lag). */
#define MAX_REQS	1024

struct tqp {
	u32 qpn;
	u32 psn;
	u32 dqpn;	/* its peer's QPN (the replies' destination), or 0 */
	u32 epsn;	/* the PSN its ACKs and NAKs say it expects next */
	enum qtype type;
	bool live;
	u32 nreqs;	/* requests recorded; the last MAX_REQS are kept */
	struct treq reqs[MAX_REQS];
};

/* Remote rights, as ibv_access_flags has them. */
#define ACC_RW		0x2
#define ACC_RR		0x4
#define ACC_AT		0x8

struct tmr {
	u64 va;
	u32 rkey;
	u32 len;
	u32 access;
	u8 *data;	/* its bytes, where no request can change them */
};

static struct tqp qps[MAX_QPS];
static int nqps;
static struct tmr mrs[MAX_MRS];
static int nmrs;
static u32 known[MAX_KNOWN];
static int nknown;
static u32 pmtu = 1024;
static u32 qkey = 0x11111111;
/* BTH..ICRC of the frame being built: an IPv6 header leaves less room. */
static u32 roce_max = MAX_ROCE;

/* What the receive path must make of the frames sent, class by class. */
enum { C_MALFORMED, C_ICRC, C_PKEY, C_NO_QP, C_QP, C_NR };
static const char * const cname[C_NR] = {
	"malformed", "icrc", "pkey", "no_qp", "to_qp",
};

static u64 rng;

static u32 rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (u32)((rng * 0x2545f4914f6cdd1dULL) >> 32);
}

static u32 below(u32 n)
{
	return n ? rnd() % n : 0;
}

static bool chance(u32 pct)
{
	return below(100) < pct;
}

static void rnd_bytes(u8 *p, u32 n)
{
	while (n--)
		*p++ = rnd();
}

/* CRC-32 (IEEE, reflected), as zlib's and the kernel's crc32_le. */
static u32 crc_tab[256];

static void crc_init(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_tab[i] = c;
	}
}

static u32 crc32_upd(u32 crc, const u8 *p, u32 n)
{
	while (n--)
		crc = crc_tab[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

/*
 * The ICRC of a RoCEv2 packet: @ip at the IP header (IPv6 if @v6), @len
 * bytes up to the ICRC. Masked as drivers/sroce/icrc.c masks them.
 */
static u32 icrc(const u8 *ip, bool v6, u32 len)
{
	static const u8 ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u32 ipl = v6 ? IP6_HLEN : IP_HLEN;
	u8 h[IP6_HLEN + UDP_HLEN + sizeof(struct sroce_bth)];
	u32 hl = ipl + UDP_HLEN + sizeof(struct sroce_bth), crc;

	if (len < hl)
		hl = len;
	memcpy(h, ip, hl);
	if (v6) {
		h[0] |= 0x0f;		/* traffic class, flow label */
		h[1] = 0xff;
		h[2] = 0xff;
		h[3] = 0xff;
		h[7] = 0xff;		/* hop limit */
	} else {
		h[1] = 0xff;		/* TOS */
		h[8] = 0xff;		/* TTL */
		h[10] = 0xff;		/* header checksum */
		h[11] = 0xff;
	}
	h[ipl + 6] = 0xff;		/* UDP checksum */
	h[ipl + 7] = 0xff;
	if (hl > ipl + UDP_HLEN + 4)
		h[ipl + UDP_HLEN + 4] = 0xff;	/* FECN, BECN, resv */
	crc = crc32_upd(~0u, ones, sizeof(ones));
	crc = crc32_upd(crc, h, hl);
	crc = crc32_upd(crc, ip + hl, len - hl);
	return ~crc;
}

static u16 csum16(const u8 *p, u32 n)
{
	u32 s = 0;

	for (; n > 1; p += 2, n -= 2)
		s += (p[0] << 8) | p[1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s & 0xffff;
}

/*
 * What sroce's receive path counts a frame as, following sroce_parse(),
 * sroce_rx_corrupt() and sroce_rcv(): @roce is the BTH onwards, @len bytes
 * with the ICRC. A frame with room for an ICRC and a wrong one is counted
 * as corrupted whatever else is wrong with it.
 */
static int classify(const u8 *roce, u32 len, bool good_icrc)
{
	const struct sroce_bth *bth = (const void *)roce;
	u32 hlen, hdrs, pad, qpn;
	int i;

	if (len < sizeof(*bth) + SROCE_ICRC_LEN)
		return C_MALFORMED;
	if (!good_icrc)
		return C_ICRC;
	hdrs = sroce_opcode_hdrs(sroce_bth_opcode(bth));
	hlen = sroce_opcode_hdr_len(sroce_bth_opcode(bth));
	if (!hlen || sroce_bth_tver(bth))
		return C_MALFORMED;
	pad = sroce_bth_pad(bth);
	if (len < hlen + pad + SROCE_ICRC_LEN)
		return C_MALFORMED;
	if (len - hlen - pad - SROCE_ICRC_LEN && !(hdrs & SROCE_HDR_PAYLOAD))
		return C_MALFORMED;
	if ((sroce_bth_pkey(bth) & 0x7fff) != (SROCE_DEFAULT_PKEY & 0x7fff))
		return C_PKEY;
	qpn = sroce_bth_qpn(bth);
	if (qpn == SROCE_MCAST_QPN)	/* no group on the target */
		return (sroce_bth_opcode(bth) & SROCE_TR_MASK) == SROCE_TR_UD ?
		       C_NO_QP : C_MALFORMED;
	for (i = 0; i < nknown; i++)
		if (known[i] == qpn)
			return C_QP;
	return C_NO_QP;
}

static u8 valid_ops[256];
static int nvalid;

static void init_ops(void)
{
	int op;

	for (op = 0; op < 256; op++)
		if (sroce_opcode_hdrs(op))
			valid_ops[nvalid++] = op;
}

static enum qtype op_type(u8 op)
{
	switch (op & SROCE_TR_MASK) {
	case SROCE_TR_UC:
		return Q_UC;
	case SROCE_TR_UD:
		return Q_UD;
	}
	return Q_RC;
}

static u32 pick_qpn(void)
{
	u32 r = below(100);

	if (r < 80 && nqps)
		return qps[below(nqps)].qpn;
	if (r < 85)
		return 1;
	if (r < 90)
		return 0x800000 + below(0x7ffffe);	/* nobody's */
	if (r < 95)
		return SROCE_MCAST_QPN;
	return rnd() & SROCE_QPN_MASK;
}

static struct tqp *find_qp(u32 qpn)
{
	int i;

	for (i = 0; i < nqps; i++)
		if (qps[i].qpn == qpn)
			return &qps[i];
	return NULL;
}

static u32 pick_psn(u32 qpn)
{
	struct tqp *q = find_qp(qpn);

	if (q && chance(80))
		return (q->psn + below(24) - 8) & SROCE_PSN_MASK;
	return rnd() & SROCE_PSN_MASK;
}

/* An address and length mostly inside one of the MRs. */
static void pick_range(u64 *va, u32 *rkey, u32 *len, u32 align)
{
	struct tmr *m = nmrs ? &mrs[below(nmrs)] : NULL;
	u32 off;

	if (!m || chance(10)) {
		*va = ((u64)rnd() << 32) | rnd();
		*rkey = rnd();
		*len = chance(50) ? below(4096) : rnd();
		return;
	}
	off = below(m->len + 64);
	if (chance(70))
		off = off > m->len ? m->len : off;
	if (chance(10))
		off = -below(64);	/* before the start */
	if (align && chance(90))
		off &= ~(align - 1);
	*va = m->va + (int)off;
	*rkey = chance(90) ? m->rkey : m->rkey ^ (1u << below(32));
	*len = chance(80) ? below(pmtu + 1) : below(2 * pmtu + 64);
}

/* The extension headers of @op into @p; returns their length. */
static u32 ext_hdrs(u8 *p, u8 op, u32 *paylen)
{
	u32 h = sroce_opcode_hdrs(op), rkey, len, n = 0;
	u64 va;

	if (h & SROCE_HDR_FETH) {
		sroce_feth_init((void *)(p + n), below(4), below(3));
		n += sizeof(struct sroce_feth);
	}
	if (h & SROCE_HDR_RETH) {
		pick_range(&va, &rkey, &len, 0);
		if ((op & SROCE_OP_MASK) == SROCE_OP_ATOMIC_WRITE && chance(80))
			len = 8;
		*paylen = len;
		sroce_reth_init((void *)(p + n), va, rkey, len);
		n += sizeof(struct sroce_reth);
	}
	if (h & SROCE_HDR_ATMETH) {
		pick_range(&va, &rkey, &len, 8);
		sroce_atmeth_init((void *)(p + n), va, rkey,
				  ((u64)rnd() << 32) | rnd(),
				  chance(50) ? 0 : ((u64)rnd() << 32) | rnd());
		n += sizeof(struct sroce_atmeth);
	}
	if (h & SROCE_HDR_AETH) {
		sroce_aeth_init((void *)(p + n), rnd(), rnd());
		n += sizeof(struct sroce_aeth);
	}
	if (h & SROCE_HDR_ATMACK) {
		sroce_atmack_init((void *)(p + n), ((u64)rnd() << 32) | rnd());
		n += sizeof(struct sroce_atmack);
	}
	if (h & SROCE_HDR_DETH) {
		sroce_deth_init((void *)(p + n),
				chance(50) ? qkey : chance(50) ?
				SROCE_GSI_QKEY : rnd(), rnd());
		n += sizeof(struct sroce_deth);
	}
	if (h & SROCE_HDR_IMM) {
		rnd_bytes(p + n, 4);
		n += 4;
	}
	if (h & SROCE_HDR_IETH) {
		struct sroce_ieth *ie = (void *)(p + n);

		ie->rkey = sroce_cpu_be32(nmrs && chance(50) ?
					  mrs[below(nmrs)].rkey : rnd());
		n += sizeof(*ie);
	}
	return n;
}

static void payload(u8 *p, u32 n)
{
	u32 i, b = rnd();

	for (i = 0; i < n; i++)
		p[i] = (u8)(b + i * 13);
}

/* A generational packet: BTH onwards up to, not including, the ICRC. */
static u32 gen_packet(u8 *roce)
{
	u32 r = below(100), qpn, hl, paylen = 0, n, pad, max, len;
	struct sroce_bth *bth = (void *)roce;
	u8 op;

	if (r < 80)
		op = valid_ops[below(nvalid)];
	else if (r < 85)
		op = SROCE_OPCODE_CNP;
	else
		op = rnd();
	qpn = pick_qpn();
	sroce_bth_init(bth, op, chance(50), below(4),
		       chance(95) ? SROCE_DEFAULT_PKEY :
		       chance(50) ? 0x7fff : rnd(), qpn, chance(50),
		       pick_psn(qpn));
	if (chance(5))
		bth->flags |= rnd() & SROCE_BTH_TVER_MASK;
	if (chance(10))
		bth->qpn |= sroce_cpu_be32(rnd() & 0xff000000u);
	hl = sizeof(*bth) + ext_hdrs(roce + sizeof(*bth), op, &paylen);
	if (chance(10)) {	/* short or long extension headers */
		n = sizeof(*bth) + below(hl - sizeof(*bth) + 16);
		if (n > hl)
			rnd_bytes(roce + hl, n - hl);
		hl = n;
	}
	max = roce_max - SROCE_ICRC_LEN;
	r = below(100);
	if (r < 15)
		n = 0;
	else if (r < 60)
		n = 1 + below(pmtu);
	else if (r < 80)
		n = pmtu + below(max - hl - pmtu + 1);
	else
		n = paylen;
	if (n > max - hl)
		n = max - hl;
	payload(roce + hl, n);
	len = hl + n;
	pad = chance(80) ? sroce_pad_len(n) : below(4);
	if (len + pad <= max) {
		memset(roce + len, 0, pad);
		len += pad;
	}
	return len;
}

/* A valid packet of a valid opcode for one of the target's QPs. */
static u32 valid_packet(u8 *roce)
{
	struct sroce_bth *bth = (void *)roce;
	u32 paylen = 0, hl, h, n, len;
	struct tqp *q = NULL;
	u8 op;
	int tries;

	for (tries = 0; tries < 16; tries++) {
		op = valid_ops[below(nvalid)];
		q = nqps ? &qps[below(nqps)] : NULL;
		if (!q || q->type == op_type(op))
			break;
	}
	h = sroce_opcode_hdrs(op);
	sroce_bth_init(bth, op, 0, 0, SROCE_DEFAULT_PKEY, q ? q->qpn : 1,
		       chance(50), q ? q->psn : 0);
	hl = sizeof(*bth) + ext_hdrs(roce + sizeof(*bth), op, &paylen);
	if (!(h & SROCE_HDR_PAYLOAD))
		n = 0;
	else if (h & SROCE_HDR_RETH)
		n = paylen <= pmtu ? paylen : below(pmtu + 1);
	else if ((op & SROCE_OP_MASK) == SROCE_OP_SEND_FIRST ||
		 (op & SROCE_OP_MASK) == SROCE_OP_SEND_MIDDLE ||
		 (op & SROCE_OP_MASK) == SROCE_OP_WRITE_MIDDLE ||
		 (op & SROCE_OP_MASK) == SROCE_OP_READ_RESP_FIRST ||
		 (op & SROCE_OP_MASK) == SROCE_OP_READ_RESP_MIDDLE)
		n = pmtu;
	else
		n = below(pmtu + 1);
	if (hl + n > roce_max - SROCE_ICRC_LEN - 3)
		n = roce_max - SROCE_ICRC_LEN - 3 - hl;
	if (h & SROCE_HDR_RETH)		/* the RETH length is the payload's */
		((struct sroce_reth *)(roce + sizeof(*bth) +
		 (h & SROCE_HDR_FETH ? sizeof(struct sroce_feth) : 0)))->len =
			sroce_cpu_be32(n);
	payload(roce + hl, n);
	len = hl + n;
	bth->flags |= sroce_pad_len(n) << SROCE_BTH_PAD_SHIFT;
	memset(roce + len, 0, sroce_pad_len(n));
	return len + sroce_pad_len(n);
}

/*
 * Mostly a range inside an MR that grants @right, else any (the rights
 * checks answer those with a NAK, which puts the QP in ERR): the QPs stay
 * up longer and answer more.
 */
static void pick_req_range(u64 *va, u32 *rkey, u32 *len, u32 right,
			   u32 align)
{
	const struct tmr *ok[MAX_MRS];
	const struct tmr *m;
	int n = 0, i;
	u32 off;

	for (i = 0; i < nmrs; i++)
		if ((mrs[i].access & right) && mrs[i].len >= 8)
			ok[n++] = &mrs[i];
	if (!n || chance(25)) {
		pick_range(va, rkey, len, align);
		return;
	}
	m = ok[below(n)];
	*len = align ? align : below(m->len < 2 * pmtu ? m->len : 2 * pmtu);
	off = below(m->len - *len + 1);
	if (align)
		off &= ~(align - 1);
	*va = m->va + off;
	*rkey = m->rkey;
}

/*
 * A READ, atomic or ATOMIC WRITE for an RC QP whose replies this host
 * sees, at the PSN
 * the QP expects (as its last ACK or NAK said; other frames may have moved
 * it since) or, for a READ, at one it has passed: a duplicate, answered
 * again with its own RETH and never executed.
 */
static u32 req_packet(u8 *roce)
{
	struct sroce_bth *bth = (void *)roce;
	struct tqp *rc[MAX_QPS], *q;
	bool atomic = chance(30);
	u32 rkey, len, psn;
	int n = 0, i;
	u64 va;

	for (i = 0; i < nqps; i++)
		if (qps[i].type == Q_RC && qps[i].dqpn)
			rc[n++] = &qps[i];
	if (!n)
		return gen_packet(roce);
	q = rc[below(n)];
	psn = chance(80) ? q->epsn : q->psn;
	if (chance(10)) {	/* an ATOMIC WRITE: 8 bytes to a writable MR */
		sroce_bth_init(bth, SROCE_OP_ATOMIC_WRITE, 0, 0,
			       SROCE_DEFAULT_PKEY, q->qpn, chance(50), psn);
		pick_req_range(&va, &rkey, &len, ACC_RW, 8);
		sroce_reth_init((void *)(bth + 1), va, rkey, 8);
		payload(roce + sizeof(*bth) + sizeof(struct sroce_reth), 8);
		return sizeof(*bth) + sizeof(struct sroce_reth) + 8;
	}
	if (atomic) {
		sroce_bth_init(bth, chance(50) ? SROCE_OP_CMP_SWAP :
			       SROCE_OP_FETCH_ADD, 0, 0, SROCE_DEFAULT_PKEY,
			       q->qpn, chance(50), psn);
		pick_req_range(&va, &rkey, &len, ACC_AT, 8);
		sroce_atmeth_init((void *)(bth + 1), va, rkey,
				  ((u64)rnd() << 32) | rnd(), rnd());
		return sizeof(*bth) + sizeof(struct sroce_atmeth);
	}
	if (chance(50))
		psn -= 1 + below(8);
	sroce_bth_init(bth, SROCE_OP_READ_REQ, 0, 0, SROCE_DEFAULT_PKEY,
		       q->qpn, chance(50), psn & SROCE_PSN_MASK);
	pick_req_range(&va, &rkey, &len, ACC_RR, 0);
	sroce_reth_init((void *)(bth + 1), va, rkey, len);
	return sizeof(*bth) + sizeof(struct sroce_reth);
}

/* One to four mutations of the @len bytes at @roce; the new length. */
static u32 mutate(u8 *roce, u32 len)
{
	u32 max = roce_max - SROCE_ICRC_LEN;
	struct sroce_bth *bth = (void *)roce;
	u32 k, nmut = 1 + below(4), off, n;

	for (k = 0; k < nmut; k++) {
		switch (below(6)) {
		case 0:		/* flip a bit */
			if (len)
				roce[below(len)] ^= 1 << below(8);
			break;
		case 1:		/* set a byte */
			if (len)
				roce[below(len)] = rnd();
			break;
		case 2:		/* cut */
			len -= below(len + 1 < 64 ? len + 1 : 64);
			break;
		case 3:		/* extend */
			n = below(65);
			if (len + n > max)
				n = max - len;
			rnd_bytes(roce + len, n);
			len += n;
			break;
		case 4:		/* one BTH field */
			if (len < sizeof(*bth))
				break;
			off = below(6);
			if (off == 0)
				bth->opcode = chance(50) ?
					      valid_ops[below(nvalid)] : rnd();
			else if (off == 1)
				bth->flags = rnd();
			else if (off == 2)
				bth->pkey = sroce_cpu_be16(rnd());
			else if (off == 3)
				bth->qpn = sroce_cpu_be32(pick_qpn());
			else
				bth->apsn = sroce_cpu_be32(rnd());
			break;
		default:	/* an extension header word */
			if (len > sizeof(*bth) + 4) {
				off = sizeof(*bth) +
				      (below(len - sizeof(*bth) - 3) & ~3u);
				memcpy(roce + off, &(u32){ rnd() }, 4);
			}
			break;
		}
	}
	return len;
}

static u32 mut_packet(u8 *roce)
{
	return mutate(roce, valid_packet(roce));
}

/*
 * Seeds: RoCEv2 packets captured from real traffic (--seeds, a classic
 * pcap), BTH onwards without the ICRC.
 */
#define MAX_SEEDS	2048
#define SEEDS_PER_OP	16	/* so that a bulk of one kind leaves room */
struct seed {
	u16 len;
	u8 roce[MAX_ROCE - SROCE_ICRC_LEN];
};

static struct seed *seeds;
static u32 nseeds;

/* A QP of the target of transport @t, or NULL if it has none. */
static struct tqp *pick_qp_of(enum qtype t)
{
	struct tqp *c[MAX_QPS];
	int i, n = 0;

	for (i = 0; i < nqps; i++)
		if (qps[i].type == t)
			c[n++] = &qps[i];
	return n ? c[below(n)] : NULL;
}

/*
 * A captured packet aimed at the target: mostly at one of its QPs of the
 * packet's transport at a PSN near the expected one, its RETH, AtomicETH
 * and DETH mostly pointed at the target's MRs and Q_Key; then, half the
 * time, mutated.
 */
static u32 seed_packet(u8 *roce)
{
	const struct seed *sd = &seeds[below(nseeds)];
	struct sroce_bth *bth = (void *)roce;
	u32 len = sd->len, h, n = sizeof(*bth), rkey, plen;
	struct tqp *q;
	u64 va;
	u8 op;

	if (len > roce_max - SROCE_ICRC_LEN)
		len = roce_max - SROCE_ICRC_LEN;
	memcpy(roce, sd->roce, len);
	op = sroce_bth_opcode(bth);
	h = sroce_opcode_hdrs(op);
	q = chance(80) ? pick_qp_of(op_type(op)) : NULL;
	if (q) {
		bth->qpn = sroce_cpu_be32(q->qpn);
		bth->apsn = sroce_cpu_be32((sroce_be32(bth->apsn) &
					    ~SROCE_PSN_MASK) |
					   pick_psn(q->qpn));
	}
	if (h & SROCE_HDR_FETH)
		n += sizeof(struct sroce_feth);
	if ((h & SROCE_HDR_RETH) && n + sizeof(struct sroce_reth) <= len) {
		struct sroce_reth *r = (void *)(roce + n);

		if (chance(70)) {
			pick_range(&va, &rkey, &plen, 0);
			sroce_reth_init(r, va, rkey, sroce_reth_len(r));
		}
		n += sizeof(*r);
	}
	if ((h & SROCE_HDR_ATMETH) && n + sizeof(struct sroce_atmeth) <= len) {
		struct sroce_atmeth *a = (void *)(roce + n);

		if (chance(70)) {
			pick_range(&va, &rkey, &plen, 8);
			sroce_atmeth_init(a, va, rkey, sroce_atmeth_swap_add(a),
					  sroce_atmeth_comp(a));
		}
		n += sizeof(*a);
	}
	if (h & SROCE_HDR_AETH)
		n += sizeof(struct sroce_aeth);
	if (h & SROCE_HDR_ATMACK)
		n += sizeof(struct sroce_atmack);
	if ((h & SROCE_HDR_DETH) && n + sizeof(struct sroce_deth) <= len &&
	    chance(80)) {
		struct sroce_deth *d = (void *)(roce + n);

		sroce_deth_init(d, qkey, sroce_deth_sqp(d));
	}
	return chance(50) ? mutate(roce, len) : len;
}

static u32 rd16(const u8 *p)
{
	return p[0] << 8 | p[1];
}

static u8 smac[6], dmac[6];
static struct in_addr src_ip, spoof_ip, dst_ip;
static struct in6_addr src6, spoof6, dst6;
static bool have6;

/* A classic pcap file, frame by frame. */
struct pcap_in {
	FILE *f;
	bool swap;
};

static int pcap_open(struct pcap_in *in, const char *path)
{
	u8 gh[24];
	u32 magic;

	in->f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!in->f || fread(gh, sizeof(gh), 1, in->f) != 1) {
		fprintf(stderr, "sroce-fuzz: cannot read %s\n", path);
		return -1;
	}
	memcpy(&magic, gh, 4);
	in->swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
	if (!in->swap && magic != 0xa1b2c3d4 && magic != 0xa1b23c4d) {
		fprintf(stderr, "sroce-fuzz: %s: not a classic pcap\n", path);
		return -1;
	}
	return 0;
}

/*
 * The next frame into @pkt (@max bytes); its length, 0 at the end, or -1
 * for a frame the capture cut short or one longer than @max.
 */
static int pcap_next(struct pcap_in *in, u8 *pkt, u32 max)
{
	u8 rh[16];
	u32 caplen, len;

	if (fread(rh, sizeof(rh), 1, in->f) != 1)
		return 0;
	memcpy(&caplen, rh + 8, 4);
	memcpy(&len, rh + 12, 4);
	if (in->swap) {
		caplen = __builtin_bswap32(caplen);
		len = __builtin_bswap32(len);
	}
	if (caplen > max || fread(pkt, caplen, 1, in->f) != 1)
		return 0;
	return caplen == len ? (int)caplen : -1;
}

/*
 * Load the RoCEv2 packets (UDP port 4791 over IPv4 or IPv6, Ethernet
 * without VLAN) of a classic pcap file as seeds, up to SEEDS_PER_OP of
 * each opcode; print how many, of which opcodes. Returns 0, or -1 on an
 * unreadable file or no seed at all.
 */
static int load_seeds(const char *path)
{
	static u32 per_op[256];
	static u8 pkt[65536];
	u32 off, ulen, i, nops = 0;
	struct pcap_in in;
	int caplen;

	if (pcap_open(&in, path))
		goto fail;
	seeds = calloc(MAX_SEEDS, sizeof(*seeds));
	if (!seeds)
		goto fail;
	while (nseeds < MAX_SEEDS &&
	       (caplen = pcap_next(&in, pkt, sizeof(pkt))) != 0) {
		if (caplen < ETH_HLEN_ + IP_HLEN + UDP_HLEN)
			continue;
		if (rd16(pkt + 12) == 0x0800 && pkt[ETH_HLEN_ + 9] == 17)
			off = ETH_HLEN_ + (pkt[ETH_HLEN_] & 0xf) * 4;
		else if (rd16(pkt + 12) == 0x86dd &&
			 caplen >= L2L4_6 && pkt[ETH_HLEN_ + 6] == 17)
			off = ETH_HLEN_ + IP6_HLEN;
		else
			continue;
		if (off + UDP_HLEN > (u32)caplen ||
		    rd16(pkt + off + 2) != SROCE_UDP_PORT)
			continue;
		ulen = rd16(pkt + off + 4);
		if (ulen > caplen - off ||
		    ulen < UDP_HLEN + sizeof(struct sroce_bth) + SROCE_ICRC_LEN ||
		    ulen - UDP_HLEN - SROCE_ICRC_LEN > sizeof(seeds->roce))
			continue;
		if (per_op[pkt[off + UDP_HLEN]]++ >= SEEDS_PER_OP)
			continue;
		seeds[nseeds].len = ulen - UDP_HLEN - SROCE_ICRC_LEN;
		memcpy(seeds[nseeds].roce, pkt + off + UDP_HLEN,
		       seeds[nseeds].len);
		nseeds++;
	}
	fclose(in.f);
	in.f = NULL;
	if (!nseeds) {
		fprintf(stderr, "sroce-fuzz: no RoCEv2 packet in %s\n", path);
		goto fail;
	}
	for (i = 0; i < 256; i++)
		nops += !!per_op[i];
	printf("sroce-fuzz: seeds=%u opcodes=%u:", nseeds, nops);
	for (i = 0; i < 256; i++)
		if (per_op[i])
			printf(" %02x", i);
	printf("\n");
	return 0;
fail:
	if (in.f)
		fclose(in.f);
	return -1;
}

/*
 * --account: what this host must make of each frame captured on the way
 * in, stage by stage as Linux and sroce drop it: not for this host's MAC;
 * dropped by IPv4 (header checksum, lengths, fragment, not UDP or not to
 * --dst); dropped by UDP (lengths, a checksum that does not match) or for
 * another port; then sroce_rcv(): malformed, ICRC error, or intact.
 */
enum { A_OTHER_HOST, A_IP, A_UDP, A_MALFORMED, A_ICRC, A_INTACT, A_NR };
static const char * const aname[A_NR] = {
	"other_host", "ip_dropped", "udp_dropped", "malformed", "icrc",
	"intact",
};

/* Whether a UDP checksum over IPv4 @ip, @ulen bytes of @udp, holds. */
static bool udp4_csum_ok(const u8 *ip, const u8 *udp, u32 ulen)
{
	u32 s = 17 + ulen, i;

	for (i = 12; i < 20; i += 2)
		s += rd16(ip + i);
	for (i = 0; i + 1 < ulen; i += 2)
		s += rd16(udp + i);
	if (ulen & 1)
		s += udp[ulen - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

static int account_frame(const u8 *f, u32 len)
{
	const u8 *ip = f + ETH_HLEN_, *udp;
	u32 ihl, tot, ulen, at;
	int c;

	if (len < ETH_HLEN_ || memcmp(f, dmac, 6))
		return A_OTHER_HOST;
	if (len < ETH_HLEN_ + IP_HLEN || rd16(f + 12) != 0x0800 ||
	    ip[0] >> 4 != 4)
		return A_IP;
	ihl = (ip[0] & 0xf) * 4;
	if (ihl < IP_HLEN || len < ETH_HLEN_ + ihl || csum16(ip, ihl))
		return A_IP;
	tot = rd16(ip + 2);
	if (tot < ihl || tot > len - ETH_HLEN_ || rd16(ip + 6) & 0x3fff ||
	    ip[9] != 17 || memcmp(ip + 16, &dst_ip, 4))
		return A_IP;
	udp = ip + ihl;
	if (tot - ihl < UDP_HLEN)
		return A_UDP;
	ulen = rd16(udp + 4);		/* UDP trims the packet to it */
	if (ulen < UDP_HLEN || ulen > tot - ihl ||
	    rd16(udp + 2) != SROCE_UDP_PORT ||
	    (rd16(udp + 6) && !udp4_csum_ok(ip, udp, ulen)))
		return A_UDP;
	/* sroce_pkt_icrc_begin() takes an IPv4 header of 20 bytes only */
	at = ihl + ulen - SROCE_ICRC_LEN;
	c = classify(udp + UDP_HLEN, ulen - UDP_HLEN, ihl == IP_HLEN &&
		     ulen >= UDP_HLEN + SROCE_ICRC_LEN &&
		     icrc(ip, false, at) == (ip[at] | ip[at + 1] << 8 |
					     ip[at + 2] << 16 |
					     (u32)ip[at + 3] << 24));
	return c == C_MALFORMED ? A_MALFORMED : c == C_ICRC ? A_ICRC :
	       A_INTACT;
}

/* --account PCAP ("-": stdin): count the frames by what becomes of them. */
static int account(const char *path)
{
	static u8 pkt[65536];
	u64 by[A_NR] = { 0 }, frames = 0;
	struct pcap_in in;
	int len, k;

	if (pcap_open(&in, path))
		return 1;
	while ((len = pcap_next(&in, pkt, sizeof(pkt))) != 0) {
		if (len < 0) {
			fprintf(stderr, "sroce-fuzz: frame %llu cut short\n",
				frames + 1);
			return 1;
		}
		frames++;
		by[account_frame(pkt, len)]++;
	}
	printf("sroce-fuzz: frames=%llu", frames);
	for (k = 0; k < A_NR; k++)
		printf(" %s=%llu", aname[k], by[k]);
	printf(" roce=%llu\n", by[A_MALFORMED] + by[A_ICRC] + by[A_INTACT]);
	return 0;
}

struct frame {
	u8 buf[ETH_HLEN_ + 1500];
	u32 len;
};

/* The IPv4 header of a frame of @ulen UDP bytes. */
static void ip4_hdr(u8 *ip, u32 ulen, bool spoof)
{
	u16 sum;

	ip[0] = 0x45;
	ip[1] = FUZZ_TOS;
	ip[2] = (IP_HLEN + ulen) >> 8;
	ip[3] = (IP_HLEN + ulen) & 0xff;
	ip[4] = rnd();
	ip[5] = rnd();
	ip[6] = 0x40;			/* DF */
	ip[7] = 0;
	ip[8] = 64;
	ip[9] = 17;
	ip[10] = 0;
	ip[11] = 0;
	memcpy(ip + 12, spoof ? &spoof_ip : &src_ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	sum = csum16(ip, IP_HLEN);
	ip[10] = sum >> 8;
	ip[11] = sum & 0xff;
}

/* The IPv6 header: traffic class FUZZ_TOS, a random flow label. */
static void ip6_hdr(u8 *ip, u32 ulen, bool spoof)
{
	u32 fl = rnd() & 0xfffff;

	ip[0] = 0x60 | FUZZ_TOS >> 4;
	ip[1] = (FUZZ_TOS & 0xf) << 4 | fl >> 16;
	ip[2] = fl >> 8;
	ip[3] = fl;
	ip[4] = ulen >> 8;
	ip[5] = ulen & 0xff;
	ip[6] = 17;
	ip[7] = 64;
	memcpy(ip + 8, spoof ? &spoof6 : &src6, 16);
	memcpy(ip + 24, &dst6, 16);
}

/*
 * Ethernet, IP (IPv6 if @v6) and UDP around @roce_len bytes at buf + L2L4
 * (L2L4_6); the ICRC.
 */
static void wrap(struct frame *f, bool v6, u32 roce_len, bool spoof,
		 bool bad_icrc)
{
	u32 ipl = v6 ? IP6_HLEN : IP_HLEN;
	u8 *eth = f->buf, *ip = eth + ETH_HLEN_, *udp = ip + ipl;
	u32 ulen = UDP_HLEN + roce_len + SROCE_ICRC_LEN, c;

	memcpy(eth, dmac, 6);
	memcpy(eth + 6, smac, 6);
	eth[12] = v6 ? 0x86 : 0x08;
	eth[13] = v6 ? 0xdd : 0x00;
	if (v6)
		ip6_hdr(ip, ulen, spoof);
	else
		ip4_hdr(ip, ulen, spoof);
	udp[0] = 0xc0 | below(0x40);
	udp[1] = rnd();
	udp[2] = SROCE_UDP_PORT >> 8;
	udp[3] = SROCE_UDP_PORT & 0xff;
	udp[4] = ulen >> 8;
	udp[5] = ulen & 0xff;
	udp[6] = 0;			/* no UDP checksum, as RoCEv2 sends */
	udp[7] = 0;
	c = icrc(ip, v6, ipl + UDP_HLEN + roce_len);
	if (bad_icrc)
		c ^= 1u << below(32);
	/* little endian on the wire */
	udp[UDP_HLEN + roce_len] = c;
	udp[UDP_HLEN + roce_len + 1] = c >> 8;
	udp[UDP_HLEN + roce_len + 2] = c >> 16;
	udp[UDP_HLEN + roce_len + 3] = c >> 24;
	f->len = ETH_HLEN_ + ipl + UDP_HLEN + roce_len + SROCE_ICRC_LEN;
	if (f->len < 60) {		/* the minimum Ethernet frame */
		memset(f->buf + f->len, 0, 60 - f->len);
		f->len = 60;
	}
}

/* The live QPs take frames from the third address only. */
static bool must_spoof(const u8 *roce, u32 len)
{
	struct tqp *q;

	if (len < sizeof(struct sroce_bth))
		return false;
	q = find_qp(sroce_bth_qpn((const void *)roce));
	return q && q->live;
}

/* @name's bytes (a path relative to @dir's directory), @len of them. */
static u8 *load_bytes(const char *dir, const char *name, u32 len)
{
	const char *slash = strrchr(dir, '/');
	char path[4096];
	u8 *b = malloc(len ? len : 1);
	FILE *f;

	snprintf(path, sizeof(path), "%.*s%s",
		 slash ? (int)(slash - dir + 1) : 0, dir, name);
	f = fopen(path, "rb");
	if (!f || !b || fread(b, 1, len, f) != len) {
		fprintf(stderr, "sroce-fuzz: %s: not %u bytes\n", path, len);
		if (f)
			fclose(f);
		free(b);
		return NULL;
	}
	fclose(f);
	return b;
}

/* A "qp QPN PSN rc|uc|ud live|x [PEER_QPN]" line of the target file. */
static void parse_qp(const char *line)
{
	struct tqp *q = &qps[nqps];
	char t[8], live[8];
	unsigned long long a;
	unsigned int b, c;
	int n;

	if (nqps == MAX_QPS)
		return;
	n = sscanf(line, "qp %llx %x %7s %7s %x", &a, &b, t, live, &c);
	if (n < 4)
		return;
	q->qpn = a & SROCE_QPN_MASK;
	q->psn = b & SROCE_PSN_MASK;
	q->epsn = q->psn;
	q->type = !strcmp(t, "ud") ? Q_UD : !strcmp(t, "uc") ? Q_UC : Q_RC;
	q->live = !strcmp(live, "live");
	q->dqpn = n == 5 ? c & SROCE_QPN_MASK : 0;
	nqps++;
}

/*
 * A "mr VA RKEY LEN [ACCESS [FILE]]" line of the target file @path;
 * nonzero when FILE cannot be read.
 */
static int parse_mr(const char *path, const char *line)
{
	struct tmr *m = &mrs[nmrs];
	unsigned long long a;
	unsigned int b, c, d;
	char file[256];
	int n;

	if (nmrs == MAX_MRS)
		return 0;
	n = sscanf(line, "mr %llx %x %x %x %255s", &a, &b, &c, &d, file);
	if (n < 3)
		return 0;
	m->va = a;
	m->rkey = b;
	m->len = c;
	m->access = n >= 4 ? d : 0;
	if (n == 5) {
		m->data = load_bytes(path, file, c);
		if (!m->data)
			return -1;
	}
	nmrs++;
	return 0;
}

/*
 * The target's description, one object a line:
 *   qp QPN PSN rc|uc|ud live|x [PEER_QPN]
 *   mr VA RKEY LEN [ACCESS [FILE]]	(FILE: its bytes, if constant)
 *   known QPN				(a QPN that has a QP)
 *   pmtu BYTES, qkey QKEY
 */
static int load_target(const char *path)
{
	char line[512], kind[16];
	unsigned long long a;
	FILE *f = fopen(path, "r");
	unsigned int b;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%15s", kind) != 1)
			continue;
		if (!strcmp(kind, "qp")) {
			parse_qp(line);
		} else if (!strcmp(kind, "mr")) {
			if (parse_mr(path, line)) {
				fclose(f);
				return -1;
			}
		} else if (!strcmp(kind, "known") && nknown < MAX_KNOWN &&
			   sscanf(line, "known %llx", &a) == 1) {
			known[nknown++] = a;
		} else if (!strcmp(kind, "pmtu") &&
			   sscanf(line, "pmtu %u", &b) == 1) {
			pmtu = b;
		} else if (!strcmp(kind, "qkey") &&
			   sscanf(line, "qkey %x", &b) == 1) {
			qkey = b;
		}
	}
	fclose(f);
	return 0;
}

static int parse_mac(const char *s, u8 *mac)
{
	unsigned int m[6], i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = m[i];
	return 0;
}

/* recv() is a call, so the loop reads it again after each signal. */
static sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * A packet socket that takes the incoming frames @code accepts:
 * PACKET_STATISTICS then counts them, those its queue had no room for
 * included, so it need not keep up.
 */
static int rx_socket(const char *ifname, struct sock_filter *code,
		     unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = code };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);
	char buf[64];
	int fd;

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		return -1;
	/* Attach the filter first, then bind: nothing unfiltered gets in. */
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
		       sizeof(prog))) {
		close(fd);
		return -1;
	}
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = if_nametoindex(ifname);
	if (bind(fd, (void *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	/* Reading the statistics resets them: start from zero. */
	getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	return fd;
}

/* The incoming IPv4 UDP 4791 frames to @dst (with @tos only, if >= 0). */
static int rx_socket4(const char *ifname, struct in_addr dst, int tos)
{
	u32 d = ntohl(dst.s_addr);
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 11, 0),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 9),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 30),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, d, 0, 5),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 15),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, tos < 0 ? 0 : tos,
			 0, tos < 0 ? 0 : 3),
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, 16),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SROCE_UDP_PORT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 64),
	};

	return rx_socket(ifname, code, ARRAY_SIZE(code));
}

/*
 * The incoming IPv6 UDP 4791 frames to @dst (with traffic class @tos only,
 * if >= 0); the fuzzer sends no extension headers.
 */
static int rx_socket6(const char *ifname, const struct in6_addr *dst, int tos)
{
	u32 d[4];
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 17, 0),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 15),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20),		/* next header */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 13),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 38),		/* destination */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 11),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 42),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 9),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 46),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 50),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14),		/* traffic class */
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x0ff0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, tos < 0 ? 0 : tos << 4,
			 0, tos < 0 ? 0 : 2),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 56),		/* UDP port */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SROCE_UDP_PORT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 64),
	};
	int i;

	memcpy(d, dst, sizeof(d));
	for (i = 0; i < 4; i++)
		code[7 + 2 * i].k = ntohl(d[i]);
	return rx_socket(ifname, code, ARRAY_SIZE(code));
}

static u64 rx_count(int fd)
{
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl))
		return 0;
	/* tp_packets: what the filter took, the dropped ones included */
	return st.tp_packets;
}

/* --count-rx: count until SIGTERM or SIGINT. */
static int count_rx(const char *ifname)
{
	int all = rx_socket4(ifname, dst_ip, -1);
	int fuzz = rx_socket4(ifname, dst_ip, FUZZ_TOS);
	int all6 = have6 ? rx_socket6(ifname, &dst6, -1) : -1;
	int fuzz6 = have6 ? rx_socket6(ifname, &dst6, FUZZ_TOS) : -1;
	u64 rx6 = 0, fz6 = 0;

	if (all < 0 || fuzz < 0 || (have6 && (all6 < 0 || fuzz6 < 0))) {
		perror("count-rx");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("sroce-fuzz: counting\n");
	fflush(stdout);
	while (!stop)
		pause();
	if (have6) {
		rx6 = rx_count(all6);
		fz6 = rx_count(fuzz6);
	}
	printf("sroce-fuzz: rx=%llu fuzz=%llu rx6=%llu\n",
	       rx_count(all) + rx6, rx_count(fuzz) + fz6, rx6);
	return 0;
}

/*
 * --window: after every N frames, an ICMP echo to the target, and wait for
 * its answer. The target takes frames off its NIC in order, so the answer
 * means that all frames before the echo have been taken in (or dropped by
 * the target itself, where its counters see it): no more than N are ever
 * queued on the way, in QEMU or a host socket, which is where frames got
 * lost without it.
 */
static int probe_fd = -1;
static u16 probe_seq;
static u64 probe_retries;

static int probe(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = dst_ip };
	struct pollfd pfd = { .events = POLLIN };
	struct icmphdr req = { .type = ICMP_ECHO };
	int tries;
	u8 buf[256];

	if (probe_fd < 0) {
		probe_fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
		if (probe_fd < 0) {
			perror("icmp socket");
			return -1;
		}
	}
	pfd.fd = probe_fd;
	req.un.echo.id = htons(0x5f7a);
	req.un.echo.sequence = htons(++probe_seq);
	req.checksum = htons(csum16((u8 *)&req, sizeof(req)));
	for (tries = 0; tries < 30; tries++) {
		struct timespec end, now;

		if (sendto(probe_fd, &req, sizeof(req), 0, (void *)&to,
			   sizeof(to)) < 0) {
			perror("icmp sendto");
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += 1;
		for (;;) {
			const struct icmphdr *ic;
			ssize_t n;
			int ms;

			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = (end.tv_sec - now.tv_sec) * 1000 +
			     (end.tv_nsec - now.tv_nsec) / 1000000;
			if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
				break;
			n = recv(probe_fd, buf, sizeof(buf), 0);
			if (n < IP_HLEN + (ssize_t)sizeof(*ic))
				continue;
			ic = (const void *)(buf + (buf[0] & 0xf) * 4);
			if (ic->type == ICMP_ECHOREPLY &&
			    ic->un.echo.id == req.un.echo.id &&
			    ic->un.echo.sequence == req.un.echo.sequence)
				return 0;
		}
		probe_retries++;
	}
	fprintf(stderr, "sroce-fuzz: the target stopped answering\n");
	return -1;
}

/*
 * Replies. The target answers its fuzz QPs' READs and atomics at their
 * peer's QPN on this host. Every READ response and atomic ACK taken off
 * the wire must answer a request sent to that QP with a good ICRC that
 * the target had to honour, judged by the MRs' own rights and bounds, not
 * by classify(): the rkey of an MR with that remote right, the range
 * inside it (an atomic's 8 bytes aligned), a PSN and a length that the
 * request covers; and a READ response from an MR that no request can
 * change must carry that MR's bytes.
 */
enum { R_READ, R_READ_BYTES, R_ATOMIC, R_ATOMIC_WRITE, R_BAD, R_NR };
static const char * const rname[R_NR] = {
	"replies_read", "replies_read_bytes", "replies_atomic",
	"replies_atomic_write", "replies_bad",
};

static u64 by_reply[R_NR];

/* Keep a READ or atomic request to an RC QP whose peer is known. */
static void record_request(const u8 *roce)
{
	const struct sroce_bth *bth = (const void *)roce;
	const u8 *ext = roce + sizeof(*bth);
	u8 op = sroce_bth_opcode(bth);
	struct tqp *q = find_qp(sroce_bth_qpn(bth));
	struct treq *r;

	if (!q || !q->dqpn || q->type != Q_RC ||
	    (op != SROCE_OP_READ_REQ && op != SROCE_OP_CMP_SWAP &&
	     op != SROCE_OP_FETCH_ADD && op != SROCE_OP_ATOMIC_WRITE))
		return;
	r = &q->reqs[q->nreqs++ % MAX_REQS];
	r->op = op;
	r->psn = sroce_bth_psn(bth);
	if (op == SROCE_OP_READ_REQ || op == SROCE_OP_ATOMIC_WRITE) {
		r->va = sroce_reth_va((const void *)ext);
		r->rkey = sroce_reth_rkey((const void *)ext);
		r->len = sroce_reth_len((const void *)ext);
	} else {
		r->va = sroce_atmeth_va((const void *)ext);
		r->rkey = sroce_atmeth_rkey((const void *)ext);
		r->len = 8;
	}
}

/* The MR that @rkey names if it grants @right over [@va, @va + @len). */
static const struct tmr *mr_grants(u32 rkey, u64 va, u32 len, u32 right)
{
	int i;

	for (i = 0; i < nmrs; i++) {
		const struct tmr *m = &mrs[i];

		if (m->rkey == rkey && (m->access & right) && va >= m->va &&
		    len <= m->len && va - m->va <= m->len - len)
			return m;
	}
	return NULL;
}

/*
 * Whether READ response @op at @psn with @n payload bytes answers request
 * @r; *@bytes set if its bytes were compared with the MR's. A replay from
 * inside an earlier READ continues it, so it may begin with MIDDLE or LAST.
 */
static bool read_answers(const struct treq *r, u32 psn, u8 op, const u8 *pay,
			 u32 n, bool *bytes)
{
	u32 npk = r->len ? (r->len + pmtu - 1) / pmtu : 1;
	u32 k = (psn - r->psn) & SROCE_PSN_MASK;
	bool last = k == npk - 1;
	const struct tmr *m;

	if (r->op != SROCE_OP_READ_REQ || r->len > 1u << 31 || k >= npk)
		return false;
	if (last != (op == SROCE_OP_READ_RESP_LAST ||
		     op == SROCE_OP_READ_RESP_ONLY) ||
	    (k && (op == SROCE_OP_READ_RESP_FIRST ||
		   op == SROCE_OP_READ_RESP_ONLY)))
		return false;
	if (n != (last ? r->len - k * pmtu : pmtu))
		return false;
	if (!r->len)		/* nothing read: no rkey to check */
		return true;
	m = mr_grants(r->rkey, r->va, r->len, ACC_RR);
	if (!m)
		return false;
	if (m->data) {
		if (memcmp(pay, m->data + (r->va - m->va) + (u64)k * pmtu, n))
			return false;
		*bytes = true;
	}
	return true;
}

/*
 * An ATOMIC WRITE (IBTA 2021) is answered by an empty READ RESPONSE ONLY
 * at its PSN: 8 aligned bytes of an MR with remote write.
 */
static bool atomic_write_answers(const struct treq *r, u32 psn, u8 op,
				 u32 n)
{
	return r->op == SROCE_OP_ATOMIC_WRITE &&
	       op == SROCE_OP_READ_RESP_ONLY && r->psn == psn && !n &&
	       r->len == 8 && !(r->va & 7) &&
	       mr_grants(r->rkey, r->va, 8, ACC_RW);
}

static bool atomic_answers(const struct treq *r, u32 psn, u32 n)
{
	return (r->op == SROCE_OP_CMP_SWAP || r->op == SROCE_OP_FETCH_ADD) &&
	       r->psn == psn && !n && !(r->va & 7) &&
	       mr_grants(r->rkey, r->va, 8, ACC_AT);
}

/* Whether @a comes after @b in PSN order. */
static bool psn_after(u32 a, u32 b)
{
	u32 d = (a - b) & SROCE_PSN_MASK;

	return d && d < (SROCE_PSN_MASK + 1) / 2;
}

/*
 * What a reply with @psn and @syn says the QP expects next: an ACK, a READ
 * response with an AETH or an atomic ACK names a PSN the QP has passed, a
 * sequence NAK the one expected; any other NAK puts it in ERR, and the target brings
 * it back at its first PSN.
 */
static void learn_epsn(struct tqp *q, u32 psn, u8 syn)
{
	if ((syn & SROCE_AETH_TYPE_MASK) == SROCE_AETH_ACK) {
		if (psn_after((psn + 1) & SROCE_PSN_MASK, q->epsn))
			q->epsn = (psn + 1) & SROCE_PSN_MASK;
	} else if (syn == SROCE_AETH_NAK_PSN_SEQ) {
		q->epsn = psn;
	} else if ((syn & SROCE_AETH_TYPE_MASK) == SROCE_AETH_NAK) {
		q->epsn = q->psn;
	}
}

static void reply_bad(const char *why, u8 op, u32 psn, u32 n, u32 qpn)
{
	if (++by_reply[R_BAD] <= 8)
		fprintf(stderr, "sroce-fuzz: reply opcode %#x PSN %#x, %u bytes, to QPN %#x: %s\n",
			op, psn, n, qpn, why);
}

/* One IPv4 frame from the target to this host's UDP 4791. */
static void check_reply(const u8 *f, u32 len)
{
	const u8 *ip = f + ETH_HLEN_, *udp = ip + IP_HLEN, *roce = udp + UDP_HLEN;
	const struct sroce_bth *bth = (const void *)roce;
	u32 ulen, rlen, hl, n, psn, qpn, at, i, nr;
	struct tqp *q = NULL;
	bool bytes = false, awrite = false;
	u8 op;
	int k;

	if (len < L2L4 + sizeof(*bth) || (ip[0] & 0xf) * 4 != IP_HLEN)
		return;
	ulen = rd16(udp + 4);
	if (ulen < UDP_HLEN + sizeof(*bth) + SROCE_ICRC_LEN ||
	    ulen > len - ETH_HLEN_ - IP_HLEN)
		return;
	op = sroce_bth_opcode(bth);
	if (op != SROCE_OP_ACK && op != SROCE_OP_READ_RESP_FIRST &&
	    op != SROCE_OP_READ_RESP_MIDDLE && op != SROCE_OP_READ_RESP_LAST &&
	    op != SROCE_OP_READ_RESP_ONLY && op != SROCE_OP_ATOMIC_ACK)
		return;
	qpn = sroce_bth_qpn(bth);
	for (k = 0; k < nqps && !q; k++)
		if (qps[k].dqpn && qps[k].dqpn == qpn)
			q = &qps[k];
	if (!q)
		return;
	psn = sroce_bth_psn(bth);
	rlen = ulen - UDP_HLEN;
	hl = sroce_opcode_hdr_len(op);
	if (rlen < hl + sroce_bth_pad(bth) + SROCE_ICRC_LEN) {
		reply_bad("shorter than its headers", op, psn, 0, qpn);
		return;
	}
	n = rlen - hl - sroce_bth_pad(bth) - SROCE_ICRC_LEN;
	at = IP_HLEN + ulen - SROCE_ICRC_LEN;
	if (icrc(ip, false, at) != (ip[at] | ip[at + 1] << 8 |
				    ip[at + 2] << 16 | (u32)ip[at + 3] << 24)) {
		reply_bad("wrong ICRC", op, psn, n, qpn);
		return;
	}
	if (op != SROCE_OP_READ_RESP_MIDDLE)	/* the others have an AETH */
		learn_epsn(q, psn, sroce_aeth_syn((const void *)(bth + 1)));
	if (op == SROCE_OP_ACK)
		return;
	nr = q->nreqs < MAX_REQS ? q->nreqs : MAX_REQS;
	for (i = 0; i < nr; i++) {
		const struct treq *r = &q->reqs[i];

		if (op == SROCE_OP_ATOMIC_ACK ? atomic_answers(r, psn, n) :
		    read_answers(r, psn, op, roce + hl, n, &bytes))
			break;
		if (atomic_write_answers(r, psn, op, n)) {
			awrite = true;
			break;
		}
	}
	if (i == nr) {
		reply_bad("answers no request the MR's rights allow", op, psn,
			  n, qpn);
		return;
	}
	by_reply[op == SROCE_OP_ATOMIC_ACK ? R_ATOMIC :
		 awrite ? R_ATOMIC_WRITE : R_READ]++;
	by_reply[R_READ_BYTES] += bytes;
}

/* The target's IPv4 UDP 4791 frames to this host, whole. */
static int reply_socket(const char *ifname)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 8, 0),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 6),
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 26),		/* source */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(dst_ip.s_addr), 0, 2),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 36),		/* UDP port */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SROCE_UDP_PORT, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
	};
	int fd = rx_socket(ifname, code, ARRAY_SIZE(code)), sz = 16 << 20;

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	return fd;
}

/*
 * Check the replies queued; with @secs, go on until a second passes
 * without a frame, or @secs in all (the live connection's frames match
 * the filter too).
 */
static void drain_replies(int fd, int secs)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	static u8 buf[65536];
	time_t end = time(NULL) + secs;
	ssize_t n;

	for (;;) {
		while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			check_reply(buf, n);
		if (!secs || time(NULL) >= end || poll(&pfd, 1, 1000) <= 0)
			return;
	}
}

/* Frames the reply socket had no room for (and the count restarts). */
static u64 replies_lost(int fd)
{
	struct tpacket_stats st;
	socklen_t sl = sizeof(st);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl))
		return 0;
	return st.tp_drops;
}

static const char help_fmt[] =
	"usage: sroce-fuzz -i IFACE --src IP --spoof IP --dst IP --dmac MAC\n"
	"                  --target FILE [--seed N] [--count N] [--pps N]\n"
	"                  [--window N] [--src6 IP6 --spoof6 IP6 --dst6 IP6\n"
	"                  [--v6 PERCENT]] [--seeds PCAP]\n"
	"       sroce-fuzz --count-rx IFACE --dst IP [--dst6 IP6]\n"
	"       sroce-fuzz --account PCAP --dst IP --dmac MAC\n";

static void usage(void)
{
	fputs(help_fmt, stderr);
	exit(2);
}

/* An IPv6 option's address; "::" stands for "not given". */
static void parse_in6(const char *s, struct in6_addr *a)
{
	if (inet_pton(AF_INET6, s, a) != 1 || IN6_IS_ADDR_UNSPECIFIED(a))
		usage();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "src", required_argument, NULL, 's' },
		{ "spoof", required_argument, NULL, 'S' },
		{ "dst", required_argument, NULL, 'd' },
		{ "dmac", required_argument, NULL, 'm' },
		{ "target", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{ "pps", required_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'w' },
		{ "count-rx", required_argument, NULL, 'c' },
		{ "src6", required_argument, NULL, '6' },
		{ "spoof6", required_argument, NULL, '7' },
		{ "dst6", required_argument, NULL, '8' },
		{ "v6", required_argument, NULL, 'V' },
		{ "seeds", required_argument, NULL, 'P' },
		{ "account", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname = NULL, *target = NULL, *count_if = NULL;
	const char *seed_file = NULL, *account_file = NULL;
	u64 seed = 1, count = 1000, pps = 0, sent = 0, i, window = 0;
	u64 since_probe = 0;
	u64 by_mode[4] = { 0 }, by_class[C_NR] = { 0 }, spoofed = 0, ipv6 = 0;
	u32 v6_pct = 50;
	static struct frame frames[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct timespec t0, now;
	int fd, rfd, o, k, c;

	while ((o = getopt_long(argc, argv, "i:", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			ifname = optarg;
			break;
		case 's':
			if (!inet_aton(optarg, &src_ip))
				usage();
			break;
		case 'S':
			if (!inet_aton(optarg, &spoof_ip))
				usage();
			break;
		case 'd':
			if (!inet_aton(optarg, &dst_ip))
				usage();
			break;
		case 'm':
			if (parse_mac(optarg, dmac))
				usage();
			break;
		case 't':
			target = optarg;
			break;
		case 'r':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pps = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			window = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			count_if = optarg;
			break;
		case '6':
			parse_in6(optarg, &src6);
			break;
		case '7':
			parse_in6(optarg, &spoof6);
			break;
		case '8':
			parse_in6(optarg, &dst6);
			break;
		case 'P':
			seed_file = optarg;
			break;
		case 'A':
			account_file = optarg;
			break;
		case 'V':
			v6_pct = strtoul(optarg, NULL, 0);
			if (v6_pct > 100)
				usage();
			break;
		default:
			usage();
		}
	}
	have6 = !IN6_IS_ADDR_UNSPECIFIED(&dst6);
	if (count_if)
		return count_rx(count_if);
	if (account_file) {
		if (!dst_ip.s_addr)
			usage();
		crc_init();
		return account(account_file);
	}
	if (!ifname || !target || !src_ip.s_addr || !spoof_ip.s_addr ||
	    !dst_ip.s_addr || (have6 && (IN6_IS_ADDR_UNSPECIFIED(&src6) ||
					 IN6_IS_ADDR_UNSPECIFIED(&spoof6))))
		usage();
	if (!have6)
		v6_pct = 0;
	if (load_target(target) || (seed_file && load_seeds(seed_file)))
		return 1;
	crc_init();
	init_ops();
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex || bind(fd, (void *)&sll, sizeof(sll))) {
		perror(ifname);
		return 1;
	}
	{
		struct sockaddr_ll me;
		socklen_t sl = sizeof(me);

		if (getsockname(fd, (void *)&me, &sl) || me.sll_halen != 6) {
			perror("getsockname");
			return 1;
		}
		memcpy(smac, me.sll_addr, 6);
	}
	rfd = reply_socket(ifname);
	if (rfd < 0) {
		perror("reply socket");
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (sent < count) {
		u32 n = count - sent < BATCH ? count - sent : BATCH;
		u32 done = 0;

		if (window && n > window - since_probe)
			n = window - since_probe;

		for (i = 0; i < n; i++) {
			struct frame *f = &frames[i];
			/*
			 * 5% requests whose replies are checked, from the
			 * peer's IPv4 address; generational, mutational,
			 * seeded: a third each of the rest.
			 */
			u32 len, mode = chance(5) ? 3 : below(nseeds ? 3 : 2);
			bool v6 = mode != 3 && chance(v6_pct), bad, spoof;
			u8 *roce = f->buf + (v6 ? L2L4_6 : L2L4);

			roce_max = v6 ? MAX_ROCE6 : MAX_ROCE;
			len = mode == 3 ? req_packet(roce) :
			      mode == 2 ? seed_packet(roce) :
			      mode == 1 ? mut_packet(roce) : gen_packet(roce);
			bad = chance(10);
			spoof = must_spoof(roce, len) ||
				(mode != 3 && chance(20));
			wrap(f, v6, len, spoof, bad);
			by_mode[mode]++;
			ipv6 += v6;
			spoofed += spoof;
			c = classify(roce, len + SROCE_ICRC_LEN, !bad);
			by_class[c]++;
			if (c == C_QP)
				record_request(roce);
			iov[i].iov_base = f->buf;
			iov[i].iov_len = f->len;
			memset(&msgs[i], 0, sizeof(msgs[i]));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		while (done < n) {
			k = sendmmsg(fd, msgs + done, n - done, 0);
			if (k < 0) {
				if (errno == ENOBUFS || errno == EAGAIN ||
				    errno == EINTR) {
					usleep(1000);
					continue;
				}
				perror("sendmmsg");
				return 1;
			}
			done += k;
		}
		drain_replies(rfd, 0);
		sent += n;
		since_probe += n;
		if (window && (since_probe >= window || sent == count)) {
			if (probe())
				return 1;
			since_probe = 0;
		}
		if (pps) {		/* hold the average rate */
			double el, want = (double)sent / pps;

			clock_gettime(CLOCK_MONOTONIC, &now);
			el = now.tv_sec - t0.tv_sec +
			     (now.tv_nsec - t0.tv_nsec) / 1e9;
			if (want > el)
				usleep((want - el) * 1e6);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	drain_replies(rfd, 5);
	printf("sroce-fuzz: sent=%llu generational=%llu mutational=%llu",
	       sent, by_mode[0], by_mode[1]);
	printf(" seeded=%llu requests=%llu spoofed=%llu ipv6=%llu",
	       by_mode[2], by_mode[3], spoofed, ipv6);
	for (k = 0; k < C_NR; k++)
		printf(" %s=%llu", cname[k], by_class[k]);
	printf(" probes=%u probe_retries=%llu", probe_seq, probe_retries);
	for (k = 0; k < R_NR; k++)
		printf(" %s=%llu", rname[k], by_reply[k]);
	printf(" replies_lost=%llu", replies_lost(rfd));
	printf(" seconds=%.1f\n", now.tv_sec - t0.tv_sec +
	       (now.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
