/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 wire format (IBTA Vol 1 ch. 9, Annex A17): header layouts, opcodes
 * and accessors. Shared by the sroce module and the user-space tools, so it
 * only uses <linux/types.h> and a byte-order shim.
 *
 * Every accessor works on a header that the caller has already proved to be
 * inside the packet (see sroce_opcode_hdr_len()); none of them reads past the
 * structure it is given.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <asm/byteorder.h>
#define sroce_be16(x)		be16_to_cpu(x)
#define sroce_be32(x)		be32_to_cpu(x)
#define sroce_cpu_be16(x)	cpu_to_be16(x)
#define sroce_cpu_be32(x)	cpu_to_be32(x)
#else
#include <endian.h>
#define sroce_be16(x)		be16toh(x)
#define sroce_be32(x)		be32toh(x)
#define sroce_cpu_be16(x)	htobe16(x)
#define sroce_cpu_be32(x)	htobe32(x)
#endif

#define SROCE_UDP_PORT		4791
#define SROCE_UDP_SPORT_MIN	0xc000
#define SROCE_ICRC_LEN		4
#define SROCE_PSN_MASK		0xffffffu
#define SROCE_QPN_MASK		0xffffffu
/* The destination QPN of every multicast datagram. */
#define SROCE_MCAST_QPN		0xffffffu
#define SROCE_GSI_QKEY		0x80010000u
#define SROCE_DEFAULT_PKEY	0xffff

/* Transport bits 7:5 of the opcode. */
enum sroce_transport {
	SROCE_TR_RC	= 0x00,
	SROCE_TR_UC	= 0x20,
	SROCE_TR_RD	= 0x40,
	SROCE_TR_UD	= 0x60,
	SROCE_TR_CNP	= 0x80,
	SROCE_TR_MASK	= 0xe0,
};

/* Operation bits 4:0 of the opcode. */
enum sroce_op {
	SROCE_OP_SEND_FIRST		= 0x00,
	SROCE_OP_SEND_MIDDLE		= 0x01,
	SROCE_OP_SEND_LAST		= 0x02,
	SROCE_OP_SEND_LAST_IMM		= 0x03,
	SROCE_OP_SEND_ONLY		= 0x04,
	SROCE_OP_SEND_ONLY_IMM		= 0x05,
	SROCE_OP_WRITE_FIRST		= 0x06,
	SROCE_OP_WRITE_MIDDLE		= 0x07,
	SROCE_OP_WRITE_LAST		= 0x08,
	SROCE_OP_WRITE_LAST_IMM		= 0x09,
	SROCE_OP_WRITE_ONLY		= 0x0a,
	SROCE_OP_WRITE_ONLY_IMM		= 0x0b,
	SROCE_OP_READ_REQ		= 0x0c,
	SROCE_OP_READ_RESP_FIRST	= 0x0d,
	SROCE_OP_READ_RESP_MIDDLE	= 0x0e,
	SROCE_OP_READ_RESP_LAST		= 0x0f,
	SROCE_OP_READ_RESP_ONLY		= 0x10,
	SROCE_OP_ACK			= 0x11,
	SROCE_OP_ATOMIC_ACK		= 0x12,
	SROCE_OP_CMP_SWAP		= 0x13,
	SROCE_OP_FETCH_ADD		= 0x14,
	SROCE_OP_SEND_LAST_INV		= 0x16,
	SROCE_OP_SEND_ONLY_INV		= 0x17,
	SROCE_OP_FLUSH			= 0x1c,
	SROCE_OP_ATOMIC_WRITE		= 0x1d,
	SROCE_OP_MASK			= 0x1f,
};

#define SROCE_OPCODE_CNP	0x81

/* Base Transport Header, 12 bytes. */
struct sroce_bth {
	__u8	opcode;
	__u8	flags;		/* SE:1 MigReq:1 PadCnt:2 TVer:4 */
	__be16	pkey;
	__be32	qpn;		/* FECN:1 BECN:1 resv:6 DestQP:24 */
	__be32	apsn;		/* AckReq:1 resv:7 PSN:24 */
};

#define SROCE_BTH_SE		0x80
#define SROCE_BTH_MIG		0x40
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	0x30
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_FECN		0x80000000u
#define SROCE_BTH_BECN		0x40000000u
#define SROCE_BTH_ACKREQ	0x80000000u

/*
 * 64-bit fields are kept as 32-bit halves throughout: in the AtomicETH they
 * sit at 4-byte offsets, and extension headers follow a 12-byte BTH, so no
 * header here needs more than 4-byte alignment.
 */

/* RDMA Extended Transport Header, 16 bytes. */
struct sroce_reth {
	__be32	va_hi;
	__be32	va_lo;
	__be32	rkey;
	__be32	len;
};

/* Atomic Extended Transport Header, 28 bytes. */
struct sroce_atmeth {
	__be32	va_hi;
	__be32	va_lo;
	__be32	rkey;
	__be32	swap_add_hi;
	__be32	swap_add_lo;
	__be32	comp_hi;
	__be32	comp_lo;
};

/* ACK Extended Transport Header, 4 bytes. */
struct sroce_aeth {
	__be32	smsn;		/* syndrome:8 MSN:24 */
};

/* AETH syndromes. */
#define SROCE_AETH_TYPE_MASK	0xe0
#define SROCE_AETH_ACK		0x00
#define SROCE_AETH_RNR_NAK	0x20
#define SROCE_AETH_NAK		0x60
#define SROCE_AETH_CREDIT_MASK	0x1f
#define SROCE_AETH_CREDIT_INVAL	0x1f
/* An ACK that grants no end-to-end credits: what sroce sends. */
#define SROCE_AETH_ACK_UNLIMITED	(SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVAL)
#define SROCE_AETH_NAK_PSN_SEQ	0x60
#define SROCE_AETH_NAK_INVALID	0x61
#define SROCE_AETH_NAK_REM_ACC	0x62
#define SROCE_AETH_NAK_REM_OP	0x63

/* Atomic ACK Extended Transport Header, 8 bytes. */
struct sroce_atmack {
	__be32	orig_hi;
	__be32	orig_lo;
};

/*
 * FLUSH Extended Transport Header (IBTA 1.5 memory placement extensions),
 * 4 bytes, between the BTH and the RETH of a FLUSH request: the placement
 * type (which visibility the requester asks for) in bits 3..0 and the
 * selectivity level (the RETH's range or the whole region) in bits 5..4.
 */
struct sroce_feth {
	__be32	bits;
};

#define SROCE_FETH_PLT_MASK	0x0000000fu
#define SROCE_FETH_SEL_MASK	0x00000030u
#define SROCE_FETH_SEL_SHIFT	4
#define SROCE_FLUSH_GLOBAL	0x1	/* placement type: global visibility */
#define SROCE_FLUSH_PERSISTENT	0x2	/* placement type: persistence */
#define SROCE_FLUSH_RANGE	0	/* selectivity: the RETH's range */
#define SROCE_FLUSH_MR		1	/* selectivity: the whole region */

/* Datagram Extended Transport Header, 8 bytes. */
struct sroce_deth {
	__be32	qkey;
	__be32	sqp;		/* resv:8 SrcQP:24 */
};

/* Immediate data and Invalidate ETH, 4 bytes each. */
struct sroce_immdt {
	__be32	imm;
};

struct sroce_ieth {
	__be32	rkey;
};

/* Which extension headers follow the BTH, in wire order. */
enum sroce_hdr_bits {
	SROCE_HDR_RETH		= 1u << 0,
	SROCE_HDR_ATMETH	= 1u << 1,
	SROCE_HDR_AETH		= 1u << 2,
	SROCE_HDR_ATMACK	= 1u << 3,
	SROCE_HDR_DETH		= 1u << 4,
	SROCE_HDR_IMM		= 1u << 5,
	SROCE_HDR_IETH		= 1u << 6,
	SROCE_HDR_PAYLOAD	= 1u << 7,	/* may carry payload */
	SROCE_HDR_VALID		= 1u << 8,	/* a known opcode */
	SROCE_HDR_FETH		= 1u << 9,	/* before the RETH */
};

/**
 * sroce_opcode_hdrs() - extension headers an opcode carries
 * @opcode: BTH opcode
 *
 * Return: a mask of &enum sroce_hdr_bits; 0 for an opcode sroce does not know
 * (reserved codes, RD, and CNP, which is handled before this is asked).
 */
static inline __u32 sroce_opcode_hdrs(__u8 opcode)
{
	__u32 tr = opcode & SROCE_TR_MASK;
	__u32 op = opcode & SROCE_OP_MASK;
	__u32 h = SROCE_HDR_VALID;

	if (tr != SROCE_TR_RC && tr != SROCE_TR_UC && tr != SROCE_TR_UD)
		return 0;

	switch (op) {
	case SROCE_OP_SEND_FIRST:
	case SROCE_OP_SEND_MIDDLE:
	case SROCE_OP_SEND_LAST:
		h |= SROCE_HDR_PAYLOAD;
		break;
	case SROCE_OP_SEND_LAST_IMM:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_IMM;
		break;
	case SROCE_OP_SEND_ONLY:
		h |= SROCE_HDR_PAYLOAD;
		break;
	case SROCE_OP_SEND_ONLY_IMM:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_IMM;
		break;
	case SROCE_OP_WRITE_FIRST:
	case SROCE_OP_WRITE_ONLY:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_RETH;
		break;
	case SROCE_OP_WRITE_MIDDLE:
	case SROCE_OP_WRITE_LAST:
		h |= SROCE_HDR_PAYLOAD;
		break;
	case SROCE_OP_WRITE_LAST_IMM:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_IMM;
		break;
	case SROCE_OP_WRITE_ONLY_IMM:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_RETH | SROCE_HDR_IMM;
		break;
	case SROCE_OP_READ_REQ:
		h |= SROCE_HDR_RETH;
		break;
	case SROCE_OP_FLUSH:
		h |= SROCE_HDR_FETH | SROCE_HDR_RETH;
		break;
	case SROCE_OP_READ_RESP_FIRST:
	case SROCE_OP_READ_RESP_LAST:
	case SROCE_OP_READ_RESP_ONLY:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_AETH;
		break;
	case SROCE_OP_READ_RESP_MIDDLE:
		h |= SROCE_HDR_PAYLOAD;
		break;
	case SROCE_OP_ACK:
		h |= SROCE_HDR_AETH;
		break;
	case SROCE_OP_ATOMIC_ACK:
		h |= SROCE_HDR_AETH | SROCE_HDR_ATMACK;
		break;
	case SROCE_OP_CMP_SWAP:
	case SROCE_OP_FETCH_ADD:
		h |= SROCE_HDR_ATMETH;
		break;
	case SROCE_OP_SEND_LAST_INV:
	case SROCE_OP_SEND_ONLY_INV:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_IETH;
		break;
	case SROCE_OP_ATOMIC_WRITE:
		h |= SROCE_HDR_PAYLOAD | SROCE_HDR_RETH;
		break;
	default:
		return 0;
	}

	/* Which operations each transport defines (IBTA table 38). */
	switch (tr) {
	case SROCE_TR_UD:
		if (op != SROCE_OP_SEND_ONLY && op != SROCE_OP_SEND_ONLY_IMM)
			return 0;
		h |= SROCE_HDR_DETH;
		break;
	case SROCE_TR_UC:
		if (op > SROCE_OP_WRITE_ONLY_IMM)
			return 0;
		break;
	}
	return h;
}

/**
 * sroce_opcode_hdr_len() - bytes of BTH plus extension headers
 * @opcode: BTH opcode
 *
 * Return: the header length, or 0 for an unknown opcode.
 */
static inline unsigned int sroce_opcode_hdr_len(__u8 opcode)
{
	__u32 h = sroce_opcode_hdrs(opcode);
	unsigned int len = sizeof(struct sroce_bth);

	if (!h)
		return 0;
	if (h & SROCE_HDR_FETH)
		len += sizeof(struct sroce_feth);
	if (h & SROCE_HDR_RETH)
		len += sizeof(struct sroce_reth);
	if (h & SROCE_HDR_ATMETH)
		len += sizeof(struct sroce_atmeth);
	if (h & SROCE_HDR_AETH)
		len += sizeof(struct sroce_aeth);
	if (h & SROCE_HDR_ATMACK)
		len += sizeof(struct sroce_atmack);
	if (h & SROCE_HDR_DETH)
		len += sizeof(struct sroce_deth);
	if (h & SROCE_HDR_IMM)
		len += sizeof(struct sroce_immdt);
	if (h & SROCE_HDR_IETH)
		len += sizeof(struct sroce_ieth);
	return len;
}

/* BTH accessors. */
static inline __u8 sroce_bth_opcode(const struct sroce_bth *b)
{
	return b->opcode;
}

static inline int sroce_bth_se(const struct sroce_bth *b)
{
	return !!(b->flags & SROCE_BTH_SE);
}

static inline int sroce_bth_mig(const struct sroce_bth *b)
{
	return !!(b->flags & SROCE_BTH_MIG);
}

static inline unsigned int sroce_bth_pad(const struct sroce_bth *b)
{
	return (b->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
}

static inline unsigned int sroce_bth_tver(const struct sroce_bth *b)
{
	return b->flags & SROCE_BTH_TVER_MASK;
}

static inline __u16 sroce_bth_pkey(const struct sroce_bth *b)
{
	return sroce_be16(b->pkey);
}

static inline __u32 sroce_bth_qpn(const struct sroce_bth *b)
{
	return sroce_be32(b->qpn) & SROCE_QPN_MASK;
}

static inline int sroce_bth_fecn(const struct sroce_bth *b)
{
	return !!(sroce_be32(b->qpn) & SROCE_BTH_FECN);
}

static inline int sroce_bth_becn(const struct sroce_bth *b)
{
	return !!(sroce_be32(b->qpn) & SROCE_BTH_BECN);
}

static inline int sroce_bth_ackreq(const struct sroce_bth *b)
{
	return !!(sroce_be32(b->apsn) & SROCE_BTH_ACKREQ);
}

static inline __u32 sroce_bth_psn(const struct sroce_bth *b)
{
	return sroce_be32(b->apsn) & SROCE_PSN_MASK;
}

/**
 * sroce_bth_init() - fill a BTH
 * @b: header to fill
 * @opcode: opcode
 * @se: solicited event
 * @pad: pad count, 0..3
 * @pkey: partition key
 * @qpn: destination QP, 24 bits
 * @ackreq: request an acknowledgment
 * @psn: packet sequence number, 24 bits
 *
 * MigReq is always set (RoCE has no path migration; rdma_rxe and hardware
 * send it set), TVer is 0, FECN/BECN are clear.
 */
static inline void sroce_bth_init(struct sroce_bth *b, __u8 opcode, int se,
				  unsigned int pad, __u16 pkey, __u32 qpn,
				  int ackreq, __u32 psn)
{
	b->opcode = opcode;
	b->flags = (se ? SROCE_BTH_SE : 0) | SROCE_BTH_MIG |
		   ((pad << SROCE_BTH_PAD_SHIFT) & SROCE_BTH_PAD_MASK);
	b->pkey = sroce_cpu_be16(pkey);
	b->qpn = sroce_cpu_be32(qpn & SROCE_QPN_MASK);
	b->apsn = sroce_cpu_be32((ackreq ? SROCE_BTH_ACKREQ : 0) |
				 (psn & SROCE_PSN_MASK));
}

static inline __u64 sroce_join64(__be32 hi, __be32 lo)
{
	return ((__u64)sroce_be32(hi) << 32) | sroce_be32(lo);
}

/* FETH */
static inline unsigned int sroce_feth_plt(const struct sroce_feth *f)
{
	return sroce_be32(f->bits) & SROCE_FETH_PLT_MASK;
}

static inline unsigned int sroce_feth_sel(const struct sroce_feth *f)
{
	return (sroce_be32(f->bits) & SROCE_FETH_SEL_MASK) >>
	       SROCE_FETH_SEL_SHIFT;
}

static inline void sroce_feth_init(struct sroce_feth *f, unsigned int plt,
				   unsigned int sel)
{
	f->bits = sroce_cpu_be32(((sel << SROCE_FETH_SEL_SHIFT) &
				  SROCE_FETH_SEL_MASK) |
				 (plt & SROCE_FETH_PLT_MASK));
}

/* RETH */
static inline __u64 sroce_reth_va(const struct sroce_reth *r)
{
	return sroce_join64(r->va_hi, r->va_lo);
}

static inline __u32 sroce_reth_rkey(const struct sroce_reth *r)
{
	return sroce_be32(r->rkey);
}

static inline __u32 sroce_reth_len(const struct sroce_reth *r)
{
	return sroce_be32(r->len);
}

static inline void sroce_reth_init(struct sroce_reth *r, __u64 va, __u32 rkey,
				   __u32 len)
{
	r->va_hi = sroce_cpu_be32((__u32)(va >> 32));
	r->va_lo = sroce_cpu_be32((__u32)va);
	r->rkey = sroce_cpu_be32(rkey);
	r->len = sroce_cpu_be32(len);
}

/* AtomicETH */
static inline __u64 sroce_atmeth_va(const struct sroce_atmeth *a)
{
	return sroce_join64(a->va_hi, a->va_lo);
}

static inline __u32 sroce_atmeth_rkey(const struct sroce_atmeth *a)
{
	return sroce_be32(a->rkey);
}

static inline __u64 sroce_atmeth_swap_add(const struct sroce_atmeth *a)
{
	return sroce_join64(a->swap_add_hi, a->swap_add_lo);
}

static inline __u64 sroce_atmeth_comp(const struct sroce_atmeth *a)
{
	return sroce_join64(a->comp_hi, a->comp_lo);
}

static inline void sroce_atmeth_init(struct sroce_atmeth *a, __u64 va,
				     __u32 rkey, __u64 swap_add, __u64 comp)
{
	a->va_hi = sroce_cpu_be32((__u32)(va >> 32));
	a->va_lo = sroce_cpu_be32((__u32)va);
	a->rkey = sroce_cpu_be32(rkey);
	a->swap_add_hi = sroce_cpu_be32((__u32)(swap_add >> 32));
	a->swap_add_lo = sroce_cpu_be32((__u32)swap_add);
	a->comp_hi = sroce_cpu_be32((__u32)(comp >> 32));
	a->comp_lo = sroce_cpu_be32((__u32)comp);
}

/* AETH */
static inline __u8 sroce_aeth_syn(const struct sroce_aeth *a)
{
	return sroce_be32(a->smsn) >> 24;
}

static inline __u32 sroce_aeth_msn(const struct sroce_aeth *a)
{
	return sroce_be32(a->smsn) & 0xffffffu;
}

static inline void sroce_aeth_init(struct sroce_aeth *a, __u8 syn, __u32 msn)
{
	a->smsn = sroce_cpu_be32(((__u32)syn << 24) | (msn & 0xffffffu));
}

/* AtomicAckETH */
static inline __u64 sroce_atmack_orig(const struct sroce_atmack *a)
{
	return sroce_join64(a->orig_hi, a->orig_lo);
}

static inline void sroce_atmack_init(struct sroce_atmack *a, __u64 orig)
{
	a->orig_hi = sroce_cpu_be32((__u32)(orig >> 32));
	a->orig_lo = sroce_cpu_be32((__u32)orig);
}

/* DETH */
static inline __u32 sroce_deth_qkey(const struct sroce_deth *d)
{
	return sroce_be32(d->qkey);
}

static inline __u32 sroce_deth_sqp(const struct sroce_deth *d)
{
	return sroce_be32(d->sqp) & SROCE_QPN_MASK;
}

static inline void sroce_deth_init(struct sroce_deth *d, __u32 qkey, __u32 sqp)
{
	d->qkey = sroce_cpu_be32(qkey);
	d->sqp = sroce_cpu_be32(sqp & SROCE_QPN_MASK);
}

/**
 * sroce_psn_cmp() - order two 24-bit PSNs
 * @a: PSN
 * @b: PSN
 *
 * Return: > 0 if @a is newer than @b, < 0 if older, 0 if equal; the window
 * is half the PSN space either way.
 */
static inline int sroce_psn_cmp(__u32 a, __u32 b)
{
	return (int)((a - b) << 8);
}

/* Signed distance from @b to @a, -2^23 .. 2^23 - 1. */
static inline int sroce_psn_diff(__u32 a, __u32 b)
{
	return sroce_psn_cmp(a, b) >> 8;
}

static inline __u32 sroce_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/* Bytes of pad that bring @len to a multiple of four. */
static inline unsigned int sroce_pad_len(unsigned int len)
{
	return (4 - (len & 3)) & 3;
}

#endif /* SROCE_WIRE_H */
