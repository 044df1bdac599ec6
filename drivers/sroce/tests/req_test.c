// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the requester's pure decisions: the opcode of each packet of a
 * message, how many packets a message takes, the ACK timeout and the delay
 * an RNR NAK asks for.
 */
#include <kunit/test.h>

#include "../sroce.h"
#include <sroce/wire.h>
#include "sroce_test.h"

/* One packet's opcode: WR opcode, first/last byte in it -> RC opcode. */
static const struct {
	u32 wr;
	bool first, last;
	u8 opcode;
} req_opcodes[] = {
	{ IB_WR_SEND, true, true, 0x04 },		/* SEND_ONLY */
	{ IB_WR_SEND, true, false, 0x00 },		/* SEND_FIRST */
	{ IB_WR_SEND, false, false, 0x01 },		/* SEND_MIDDLE */
	{ IB_WR_SEND, false, true, 0x02 },		/* SEND_LAST */
	{ IB_WR_SEND_WITH_IMM, true, true, 0x05 },	/* SEND_ONLY_IMM */
	{ IB_WR_SEND_WITH_IMM, true, false, 0x00 },	/* SEND_FIRST */
	{ IB_WR_SEND_WITH_IMM, false, false, 0x01 },	/* SEND_MIDDLE */
	{ IB_WR_SEND_WITH_IMM, false, true, 0x03 },	/* SEND_LAST_IMM */
	{ IB_WR_RDMA_WRITE, true, true, 0x0a },		/* WRITE_ONLY */
	{ IB_WR_RDMA_WRITE, true, false, 0x06 },	/* WRITE_FIRST */
	{ IB_WR_RDMA_WRITE, false, false, 0x07 },	/* WRITE_MIDDLE */
	{ IB_WR_RDMA_WRITE, false, true, 0x08 },	/* WRITE_LAST */
	{ IB_WR_RDMA_WRITE_WITH_IMM, true, true, 0x0b },  /* WRITE_ONLY_IMM */
	{ IB_WR_RDMA_WRITE_WITH_IMM, true, false, 0x06 }, /* WRITE_FIRST */
	{ IB_WR_RDMA_WRITE_WITH_IMM, false, false, 0x07 }, /* WRITE_MIDDLE */
	{ IB_WR_RDMA_WRITE_WITH_IMM, false, true, 0x09 }, /* WRITE_LAST_IMM */
	{ IB_WR_SEND_WITH_INV, true, true, 0x17 },	/* SEND_ONLY_INV */
	{ IB_WR_SEND_WITH_INV, true, false, 0x00 },	/* SEND_FIRST */
	{ IB_WR_SEND_WITH_INV, false, false, 0x01 },	/* SEND_MIDDLE */
	{ IB_WR_SEND_WITH_INV, false, true, 0x16 },	/* SEND_LAST_INV */
};

/* The atomics and FLUSH: one packet each, whatever first and last say. */
static void req_opcode_atomic(struct kunit *test)
{
	static const struct {
		u32 wr;
		u8 opcode;
		u32 hdr;
	} at[] = {
		{ IB_WR_ATOMIC_CMP_AND_SWP, 0x13, SROCE_HDR_ATMETH },
		{ IB_WR_ATOMIC_FETCH_AND_ADD, 0x14, SROCE_HDR_ATMETH },
		{ SROCE_WR_ATOMIC_WRITE, 0x1d,
		  SROCE_HDR_RETH | SROCE_HDR_PAYLOAD },
		{ SROCE_WR_FLUSH, 0x1c, SROCE_HDR_RETH },
	};
	unsigned int i, fl;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		KUNIT_EXPECT_TRUE(test, sroce_wr_waits(at[i].wr));
		for (fl = 0; fl < 4; fl++) {
			u8 opc = sroce_req_opcode(at[i].wr, fl & 1, fl & 2);

			KUNIT_EXPECT_EQ(test, opc, at[i].opcode);
			KUNIT_EXPECT_EQ(test, sroce_opcode_hdrs(opc) &
					(SROCE_HDR_ATMETH | SROCE_HDR_RETH |
					 SROCE_HDR_PAYLOAD), at[i].hdr);
		}
	}
	KUNIT_EXPECT_TRUE(test, sroce_wr_waits(IB_WR_RDMA_READ));
	KUNIT_EXPECT_FALSE(test, sroce_wr_waits(IB_WR_RDMA_WRITE));
	KUNIT_EXPECT_FALSE(test, sroce_wr_waits(IB_WR_SEND));
}

static void req_opcode(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(req_opcodes); i++) {
		u32 wr = req_opcodes[i].wr;
		bool first = req_opcodes[i].first, last = req_opcodes[i].last;
		u8 opc = sroce_req_opcode(wr, first, last);
		u32 h = sroce_opcode_hdrs(opc);
		bool imm = wr == IB_WR_SEND_WITH_IMM ||
			   wr == IB_WR_RDMA_WRITE_WITH_IMM;
		bool write = wr == IB_WR_RDMA_WRITE ||
			     wr == IB_WR_RDMA_WRITE_WITH_IMM;
		bool inv = wr == IB_WR_SEND_WITH_INV;

		KUNIT_EXPECT_EQ_MSG(test, opc, req_opcodes[i].opcode,
				    "wr %u first %d last %d", wr, first, last);
		/* An RC request that carries data... */
		KUNIT_EXPECT_EQ(test, opc & SROCE_TR_MASK, SROCE_TR_RC);
		KUNIT_EXPECT_TRUE(test, h & SROCE_HDR_VALID);
		KUNIT_EXPECT_TRUE(test, h & SROCE_HDR_PAYLOAD);
		KUNIT_EXPECT_FALSE(test, h & SROCE_HDR_AETH);
		/* ...with the immediate on the last packet only... */
		KUNIT_EXPECT_EQ_MSG(test, !!(h & SROCE_HDR_IMM), imm && last,
				    "wr %u first %d last %d", wr, first, last);
		/* ...the key to invalidate on the last packet only... */
		KUNIT_EXPECT_EQ_MSG(test, !!(h & SROCE_HDR_IETH), inv && last,
				    "wr %u first %d last %d", wr, first, last);
		/* ...and a WRITE's RETH on the first packet only. */
		KUNIT_EXPECT_EQ_MSG(test, !!(h & SROCE_HDR_RETH),
				    write && first, "wr %u first %d last %d",
				    wr, first, last);
	}
}

static void req_opcode_unsupported(struct kunit *test)
{
	static const u32 others[] = {
		IB_WR_RDMA_READ, IB_WR_BIND_MW,
		IB_WR_LSO, IB_WR_RDMA_READ_WITH_INV, IB_WR_LOCAL_INV,
		IB_WR_REG_MR, IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
		IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, IB_WR_REG_MR_INTEGRITY,
		IB_WR_RESERVED1, IB_WR_RESERVED10, 0xff, 0xffffffff,
	};
	unsigned int i, fl;

	for (i = 0; i < ARRAY_SIZE(others); i++)
		for (fl = 0; fl < 4; fl++)
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_req_opcode(others[i], fl & 1,
							     fl & 2),
					    0xff, "wr %#x first %u last %u",
					    others[i], fl & 1, (fl >> 1) & 1);
}

static void req_npkts(struct kunit *test)
{
	static const u32 wrs[] = {
		IB_WR_SEND, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_RDMA_READ,
	};
	unsigned int i, m;

	for (i = 0; i < ARRAY_SIZE(wrs); i++) {
		for (m = 256; m <= 4096; m <<= 1) {
			u32 wr = wrs[i];

			/* Zero bytes still take a packet. */
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 0, m), 1);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 1, m), 1);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, m - 1, m), 1);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, m, m), 1);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, m + 1, m), 2);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 2 * m, m), 2);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 2 * m + 1, m),
					3);
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 100 * m, m),
					100);
			/* The largest message (max_msg_sz, 2 GiB). */
			KUNIT_EXPECT_EQ(test, sroce_req_npkts(wr, 1U << 31, m),
					(1U << 31) / m);
			KUNIT_EXPECT_EQ(test,
					sroce_req_npkts(wr, (1U << 31) - 1, m),
					(1U << 31) / m);
		}
	}
	/* An atomic is one packet; its length is its result buffer's. */
	for (m = 8; m <= 1U << 20; m <<= 2) {
		KUNIT_EXPECT_EQ(test, sroce_req_npkts(IB_WR_ATOMIC_CMP_AND_SWP,
						      m, 1024), 1);
		KUNIT_EXPECT_EQ(test,
				sroce_req_npkts(IB_WR_ATOMIC_FETCH_AND_ADD, m,
						256), 1);
	}
	/* An MTU that does not divide the length. */
	KUNIT_EXPECT_EQ(test, sroce_req_npkts(IB_WR_SEND, 4096, 1000), 5);
	KUNIT_EXPECT_EQ(test, sroce_req_npkts(IB_WR_SEND, 4000, 1000), 4);
}

static void req_rd_chunk(struct kunit *test)
{
	/* The whole window for one request; max_rd_atomic 0 acts as 1. */
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(0), 64);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(1), 64);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(2), 32);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(3), 21);
	/* Never fewer than 16 packets per request. */
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(4), 16);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(5), 16);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(128), 16);
	KUNIT_EXPECT_EQ(test, sroce_rd_chunk_pkts(255), 16);
}

/* Slow start up to ssthresh (or the whole window), then one per ACK. */
static void req_cwnd_grow(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(0, 0, 5), 0);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(0, 32, 5), 0);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW_MIN, 0, 0),
			SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW_MIN, 0, 16),
			2 * SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW - 1, 0, 0),
			SROCE_WINDOW - 1);
	/* Whole again at SROCE_WINDOW, also for an ACK of many PSNs. */
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW - 1, 0, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW_MIN, 0, 0xffffff),
			0);
	/* Slow start ends at ssthresh... */
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(16, 40, 16), 32);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(32, 40, 16), 40);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(32, 40, 0xffffff), 40);
	/* ...then one PSN per ACK, however many it covers. */
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(40, 40, 16), 41);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(100, 40, 1), 101);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(100, 40, 0), 100);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_grow(SROCE_WINDOW - 1, 40, 16), 0);
}

/* A loss halves the window; a timeout restarts it from the least. */
static void req_cwnd_cut(struct kunit *test)
{
	u16 ss = 0;

	KUNIT_EXPECT_EQ(test, sroce_cwnd_cut(SROCE_WINDOW, false, &ss),
			SROCE_WINDOW / 2);
	KUNIT_EXPECT_EQ(test, ss, SROCE_WINDOW / 2);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_cut(100, true, &ss), SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, ss, 50);
	/* Never under the least, nor over half the largest. */
	KUNIT_EXPECT_EQ(test, sroce_cwnd_cut(20, false, &ss), SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, ss, SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_cut(0, true, &ss), SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, ss, SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, sroce_cwnd_cut(U32_MAX, false, &ss),
			SROCE_WINDOW / 2);
}

static void req_wire_window(struct kunit *test)
{
	/* 256 KiB worth: the whole window at IB MTU 1024, less above it. */
	KUNIT_EXPECT_EQ(test, sroce_wire_window(256), SROCE_WINDOW);
	KUNIT_EXPECT_EQ(test, sroce_wire_window(1024), SROCE_WINDOW);
	KUNIT_EXPECT_EQ(test, sroce_wire_window(2048), 128);
	KUNIT_EXPECT_EQ(test, sroce_wire_window(4096), 64);
	/* Never under SROCE_WINDOW_MIN, and no division by zero. */
	KUNIT_EXPECT_EQ(test, sroce_wire_window(65536), SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test, sroce_wire_window(0), SROCE_WINDOW);
}

static void req_ack_timeout(struct kunit *test)
{
	unsigned int t;

	/* 0: no timer at all. */
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(0), 0);
	/* 4.096 us * 2^t exactly: sroce_rto_ns() adds what sroce needs. */
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(1), 8192ULL);
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(14), 67108864ULL);
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(31), 8796093022208ULL);
	for (t = 1; t <= 31; t++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_ack_timeout_ns(t),
				    4096ULL << t, "timeout %u", t);
	/* Out of range (modify_qp refuses these): no overflow, the maximum. */
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(32), 8796093022208ULL);
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(255), 8796093022208ULL);
}

static void req_rtt_sample(struct kunit *test)
{
	struct sroce_rtt r = {};
	int i;

	/* The first sample: the mean, half of it the deviation. */
	sroce_rtt_sample(&r, 1000);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1000);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 500);
	/* An eighth and a quarter of the way to a sample. */
	sroce_rtt_sample(&r, 1800);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1000 - 125 + 225);
	KUNIT_EXPECT_EQ(test, r.rttvar_us, 500 - 125 + 200);
	/* Steady samples: the mean converges, the deviation fades. */
	for (i = 0; i < 200; i++)
		sroce_rtt_sample(&r, 300);
	KUNIT_EXPECT_LE(test, r.srtt_us, 310);
	KUNIT_EXPECT_GE(test, r.srtt_us, 300);
	KUNIT_EXPECT_LE(test, r.rttvar_us, 10);
	/* A zero-length sample counts as 1 us: srtt 0 means "none yet". */
	r = (struct sroce_rtt){};
	sroce_rtt_sample(&r, 0);
	KUNIT_EXPECT_EQ(test, r.srtt_us, 1);
	for (i = 0; i < 100; i++)
		sroce_rtt_sample(&r, 0);
	KUNIT_EXPECT_GE(test, r.srtt_us, 1);
	/* The largest sample the caller passes: no overflow. */
	r = (struct sroce_rtt){};
	sroce_rtt_sample(&r, U32_MAX);
	sroce_rtt_sample(&r, U32_MAX);
	KUNIT_EXPECT_EQ(test, r.srtt_us, U32_MAX - U32_MAX / 8 + U32_MAX / 8);
}

static void req_rto(struct kunit *test)
{
	const u64 ms = NSEC_PER_MSEC, t14 = sroce_ack_timeout_ns(14);
	struct sroce_rtt none = {}, fast = { 500, 100 }, slow = { 300000, 50000 };
	struct sroce_rtt huge = { U32_MAX, U32_MAX };

	/* Nothing measured: SROCE_RTO_INIT_NS, or IBTA's value if longer. */
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &none, 0), SROCE_RTO_INIT_NS);
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(sroce_ack_timeout_ns(18), &none, 0),
			sroce_ack_timeout_ns(18));
	/* A fast path: the QP's own 67 ms, never under SROCE_RTO_MIN_NS. */
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &fast, 0), t14);
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(sroce_ack_timeout_ns(8), &fast, 0),
			SROCE_RTO_MIN_NS);
	/* A slow peer: its round trip and four deviations. */
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &slow, 0), 500 * ms);
	/* Timeouts in a row double it, three times at most. */
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &fast, 1), 2 * t14);
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &fast, 3), 8 * t14);
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &fast, 200), 8 * t14);
	/* The longest IBTA timeout backed off: no overflow. */
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(sroce_ack_timeout_ns(31), &slow, 3),
			8 * 8796093022208ULL);
	KUNIT_EXPECT_EQ(test, sroce_rto_ns(t14, &huge, 3),
			8 * (5ULL * U32_MAX * NSEC_PER_USEC));
}

/*
 * IBTA table 45 in units of 10 us, worked out from its pattern rather than
 * copied: code 1 is 10 us, and from code 2 on the delays run 2, 3, 4, 6, 8,
 * 12, 16, ... (an even code c is 2^(c/2), an odd one 3 * 2^((c-3)/2));
 * code 0 is the longest, 655.36 ms.
 */
static u64 rnr_expect_ns(unsigned int code)
{
	u64 units;

	if (code == 0)
		units = 65536;
	else if (code == 1)
		units = 1;
	else if (code % 2 == 0)
		units = 1ULL << (code / 2);
	else
		units = 3ULL << ((code - 3) / 2);
	return units * 10 * NSEC_PER_USEC;
}

static void req_rnr_timer(struct kunit *test)
{
	unsigned int c;

	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(0), 655360000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(1), 10000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(2), 20000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(5), 60000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(14), 1280000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(18), 5120000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(30), 327680000ULL);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_ns(31), 491520000ULL);

	for (c = 0; c < 32; c++) {
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_ns(c),
				    rnr_expect_ns(c), "code %u", c);
		/* Only the low five bits are the timer. */
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_ns(c | 0x20),
				    rnr_expect_ns(c), "code %#x", c | 0x20);
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_ns(c | 0xe0),
				    rnr_expect_ns(c), "code %#x", c | 0xe0);
		/* Codes 1..31 grow strictly; code 0 is above them all. */
		if (c >= 2)
			KUNIT_EXPECT_GT(test, sroce_rnr_timer_ns(c),
					sroce_rnr_timer_ns(c - 1));
		if (c)
			KUNIT_EXPECT_LT(test, sroce_rnr_timer_ns(c),
					sroce_rnr_timer_ns(0));
	}
}

static struct kunit_case req_cases[] = {
	KUNIT_CASE(req_opcode),
	KUNIT_CASE(req_opcode_atomic),
	KUNIT_CASE(req_opcode_unsupported),
	KUNIT_CASE(req_npkts),
	KUNIT_CASE(req_rd_chunk),
	KUNIT_CASE(req_cwnd_grow),
	KUNIT_CASE(req_cwnd_cut),
	KUNIT_CASE(req_wire_window),
	KUNIT_CASE(req_ack_timeout),
	KUNIT_CASE(req_rtt_sample),
	KUNIT_CASE(req_rto),
	KUNIT_CASE(req_rnr_timer),
	{}
};

struct kunit_suite sroce_req_suite = {
	.name = "sroce_req",
	.test_cases = req_cases,
};
