// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the responder's pure decisions: where a request PSN stands against
 * the expected one, which request opcodes may follow the multi-packet
 * message in progress, and the PSNs a local packet stands for.
 */
#include <kunit/test.h>

#include "../sroce.h"
#include <sroce/wire.h>
#include "sroce_test.h"

/* qp->resp.in_msg, as resp.c numbers it: nothing, a SEND or a WRITE. */
#define MSG_NONE	0
#define MSG_SEND	1
#define MSG_WRITE	2
#define MSG_NEVER	0xff	/* the opcode is never accepted */

static void resp_classify(struct kunit *test)
{
	static const u32 epsns[] = {
		0, 1, 5, 0x7fffff, 0x800000, 0x800001, 0xfffffe, 0xffffff,
	};
	/* A request this far after the expected PSN (mod 2^24) is... */
	static const struct {
		u32 delta;
		enum sroce_psn_class cls;
	} steps[] = {
		{ 0, SROCE_PSN_EXPECTED },
		{ 1, SROCE_PSN_AHEAD },
		{ 0xffffff, SROCE_PSN_DUPLICATE },	/* -1 */
		/* The far edges of the window either way. */
		{ 0x7fffff, SROCE_PSN_AHEAD },
		{ 0x800001, SROCE_PSN_DUPLICATE },	/* -0x7fffff */
		/* Half the space away counts as old. */
		{ 0x800000, SROCE_PSN_DUPLICATE },
	};
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(epsns); i++) {
		for (j = 0; j < ARRAY_SIZE(steps); j++) {
			u32 e = epsns[i];
			u32 psn = sroce_psn_add(e, steps[j].delta);

			KUNIT_EXPECT_EQ_MSG(test, sroce_resp_classify(e, psn),
					    steps[j].cls, "epsn %#x psn %#x",
					    e, psn);
		}
	}

	/* Across the 24-bit wrap. */
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(0xffffff, 0),
			SROCE_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(0xfffffe, 3),
			SROCE_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(0, 0xffffff),
			SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(2, 0xfffff0),
			SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(0, 0), SROCE_PSN_EXPECTED);
	/* Away from the wrap. */
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(100, 99),
			SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(100, 0), SROCE_PSN_DUPLICATE);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(100, 101), SROCE_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(100, 0x800063),
			SROCE_PSN_AHEAD);
	KUNIT_EXPECT_EQ(test, sroce_resp_classify(100, 0x800064),
			SROCE_PSN_DUPLICATE);
}

/*
 * For each operation (the low five opcode bits): the one in-progress state
 * it is accepted in, and the state after it. Everything else is refused:
 * responses and ACKs, and the reserved codes.
 */
static const struct {
	u8 from, to;
} resp_seq[32] = {
	[0x00] = { MSG_NONE, MSG_SEND },	/* SEND_FIRST */
	[0x01] = { MSG_SEND, MSG_SEND },	/* SEND_MIDDLE */
	[0x02] = { MSG_SEND, MSG_NONE },	/* SEND_LAST */
	[0x03] = { MSG_SEND, MSG_NONE },	/* SEND_LAST_IMM */
	[0x04] = { MSG_NONE, MSG_NONE },	/* SEND_ONLY */
	[0x05] = { MSG_NONE, MSG_NONE },	/* SEND_ONLY_IMM */
	[0x06] = { MSG_NONE, MSG_WRITE },	/* WRITE_FIRST */
	[0x07] = { MSG_WRITE, MSG_WRITE },	/* WRITE_MIDDLE */
	[0x08] = { MSG_WRITE, MSG_NONE },	/* WRITE_LAST */
	[0x09] = { MSG_WRITE, MSG_NONE },	/* WRITE_LAST_IMM */
	[0x0a] = { MSG_NONE, MSG_NONE },	/* WRITE_ONLY */
	[0x0b] = { MSG_NONE, MSG_NONE },	/* WRITE_ONLY_IMM */
	[0x0c] = { MSG_NONE, MSG_NONE },	/* READ_REQ */
	[0x0d ... 0x12] = { MSG_NEVER, MSG_NEVER },
	[0x13] = { MSG_NONE, MSG_NONE },	/* CMP_SWAP */
	[0x14] = { MSG_NONE, MSG_NONE },	/* FETCH_ADD */
	[0x15] = { MSG_NEVER, MSG_NEVER },
	[0x16] = { MSG_SEND, MSG_NONE },	/* SEND_LAST_INV */
	[0x17] = { MSG_NONE, MSG_NONE },	/* SEND_ONLY_INV */
	[0x18 ... 0x1b] = { MSG_NEVER, MSG_NEVER },
	[0x1c] = { MSG_NONE, MSG_NONE },	/* FLUSH */
	[0x1d] = { MSG_NONE, MSG_NONE },	/* ATOMIC_WRITE */
	[0x1e ... 0x1f] = { MSG_NEVER, MSG_NEVER },
};

static void resp_opseq_table(struct kunit *test)
{
	unsigned int op;
	u8 st;

	for (op = 0; op < 32; op++) {
		for (st = MSG_NONE; st <= MSG_WRITE; st++) {
			u8 next = 0x55;
			int ret = sroce_resp_opseq(st, op, &next);

			if (st == resp_seq[op].from) {
				KUNIT_EXPECT_EQ_MSG(test, ret, 0,
						    "op %#x in %u", op, st);
				KUNIT_EXPECT_EQ_MSG(test, next, resp_seq[op].to,
						    "op %#x in %u", op, st);
			} else {
				KUNIT_EXPECT_EQ_MSG(test, ret, -EINVAL,
						    "op %#x in %u", op, st);
			}
		}
	}
}

/* Feed a stream of opcodes; return the index of the first refused, or n. */
static unsigned int resp_feed(const u8 *ops, unsigned int n, u8 *st)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u8 next;

		if (sroce_resp_opseq(*st, ops[i], &next))
			return i;
		*st = next;
	}
	return i;
}

static void resp_opseq_streams(struct kunit *test)
{
	static const u8 good[] = {
		0x06, 0x07, 0x07, 0x07, 0x08,	/* WRITE F M M M L */
		0x04,				/* SEND_ONLY */
		0x00, 0x02,			/* SEND F L */
		0x06, 0x09,			/* WRITE F L_IMM */
		0x0c,				/* READ */
		0x00, 0x01, 0x03,		/* SEND F M L_IMM */
		0x0a, 0x0b, 0x05,		/* the ONLYs */
		0x00, 0x01, 0x16, 0x17,		/* SEND F M L_INV, ONLY_INV */
		0x13, 0x14, 0x1d,		/* the atomics */
	};
	static const struct {
		u8 ops[3];
		unsigned int n, bad;
	} bad[] = {
		{ { 0x01 }, 1, 0 },		/* SEND_MIDDLE alone */
		{ { 0x02 }, 1, 0 },		/* SEND_LAST alone */
		{ { 0x07 }, 1, 0 },		/* WRITE_MIDDLE alone */
		{ { 0x09 }, 1, 0 },		/* WRITE_LAST_IMM alone */
		{ { 0x00, 0x00 }, 2, 1 },	/* SEND_FIRST twice */
		{ { 0x00, 0x06 }, 2, 1 },	/* WRITE_FIRST inside a SEND */
		{ { 0x06, 0x00 }, 2, 1 },	/* SEND_FIRST inside a WRITE */
		{ { 0x00, 0x04 }, 2, 1 },	/* SEND_ONLY inside a SEND */
		{ { 0x06, 0x0a }, 2, 1 },	/* WRITE_ONLY inside a WRITE */
		{ { 0x00, 0x0c }, 2, 1 },	/* READ inside a SEND */
		{ { 0x06, 0x0c }, 2, 1 },	/* READ inside a WRITE */
		{ { 0x00, 0x07 }, 2, 1 },	/* WRITE_MIDDLE in a SEND */
		{ { 0x06, 0x01 }, 2, 1 },	/* SEND_MIDDLE in a WRITE */
		{ { 0x06, 0x02 }, 2, 1 },	/* SEND_LAST ends a WRITE */
		{ { 0x00, 0x08 }, 2, 1 },	/* WRITE_LAST ends a SEND */
		{ { 0x00, 0x02, 0x02 }, 3, 2 },	/* LAST after the message */
		{ { 0x06, 0x07, 0x16 }, 3, 2 },	/* SEND_LAST_INV ends a WRITE */
		{ { 0x00, 0x17 }, 2, 1 },	/* SEND_ONLY_INV inside a SEND */
		{ { 0x00, 0x13 }, 2, 1 },	/* CMP_SWAP inside a SEND */
		{ { 0x06, 0x14 }, 2, 1 },	/* FETCH_ADD inside a WRITE */
		{ { 0x00, 0x1d }, 2, 1 },	/* ATOMIC_WRITE inside a SEND */
		{ { 0x06, 0x1c }, 2, 1 },	/* FLUSH inside a WRITE */
		{ { 0x11 }, 1, 0 },		/* ACK */
		{ { 0x10 }, 1, 0 },		/* READ_RESP_ONLY */
	};
	unsigned int i;
	u8 st = MSG_NONE;

	KUNIT_EXPECT_EQ(test, resp_feed(good, ARRAY_SIZE(good), &st),
			ARRAY_SIZE(good));
	KUNIT_EXPECT_EQ(test, st, MSG_NONE);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		st = MSG_NONE;
		KUNIT_EXPECT_EQ_MSG(test, resp_feed(bad[i].ops, bad[i].n, &st),
				    bad[i].bad, "stream %u", i);
	}
}

/*
 * The receive path admits only RC opcodes to the responder, so the
 * sequence check looks at the operation bits alone: any transport bits
 * give the same answer as RC's.
 */
static void resp_opseq_transport(struct kunit *test)
{
	unsigned int tr, op;
	u8 st;

	for (tr = 0x20; tr < 0x100; tr += 0x20) {
		for (op = 0; op < 32; op++) {
			for (st = MSG_NONE; st <= MSG_WRITE; st++) {
				u8 n_rc = 0x55, n_tr = 0x55;
				int rc = sroce_resp_opseq(st, op, &n_rc);
				int r = sroce_resp_opseq(st, tr | op, &n_tr);

				KUNIT_EXPECT_EQ_MSG(test, r, rc, "op %#x in %u",
						    tr | op, st);
				if (!rc)
					KUNIT_EXPECT_EQ_MSG(test, n_tr, n_rc,
							    "op %#x in %u",
							    tr | op, st);
			}
		}
	}
	/* For instance UC and UD SEND_ONLY, and UC WRITE_FIRST. */
	st = 0x55;
	KUNIT_EXPECT_EQ(test, sroce_resp_opseq(MSG_NONE, 0x24, &st), 0);
	KUNIT_EXPECT_EQ(test, st, MSG_NONE);
	KUNIT_EXPECT_EQ(test, sroce_resp_opseq(MSG_NONE, 0x64, &st), 0);
	KUNIT_EXPECT_EQ(test, sroce_resp_opseq(MSG_NONE, 0x26, &st), 0);
	KUNIT_EXPECT_EQ(test, st, MSG_WRITE);
	/* UD SEND_ONLY_IMM while a SEND is in progress is still refused. */
	KUNIT_EXPECT_EQ(test, sroce_resp_opseq(MSG_SEND, 0x65, &st), -EINVAL);
}

static void resp_rd_pace(struct kunit *test)
{
	unsigned int i;
	u16 p;

	/* Unpaced until a loss; each further loss halves, down to 4. */
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(0, false), 0);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(0, true), 64);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(64, true), 32);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(8, true), 4);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(4, true), 4);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(5, true), 4);
	/* A request without a loss doubles it, then lifts it. */
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(4, false), 8);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(256, false), 512);
	KUNIT_EXPECT_EQ(test, sroce_rd_pace_next(512, false), 0);
	/* From the floor back to unpaced in a bounded number of requests. */
	for (p = 4, i = 0; p && i < 16; i++)
		p = sroce_rd_pace_next(p, false);
	KUNIT_EXPECT_EQ(test, p, 0);
	KUNIT_EXPECT_LE(test, i, 8);
}

/* FLUSH: each placement type needs its own right; nothing else passes. */
static void resp_flush_need(struct kunit *test)
{
	const int g = SROCE_ACCESS_FLUSH_GLOBAL;
	const int p = SROCE_ACCESS_FLUSH_PERSISTENT;
	u32 sel;

	for (sel = 0; sel < 2; sel++) {
		KUNIT_EXPECT_EQ(test, sroce_flush_need(1, sel), g);
		KUNIT_EXPECT_EQ(test, sroce_flush_need(2, sel), p);
		KUNIT_EXPECT_EQ(test, sroce_flush_need(3, sel), g | p);
		KUNIT_EXPECT_EQ(test, sroce_flush_need(0, sel), -EINVAL);
		KUNIT_EXPECT_EQ(test, sroce_flush_need(4, sel), -EINVAL);
		KUNIT_EXPECT_EQ(test, sroce_flush_need(0xf, sel), -EINVAL);
	}
	/* Levels 2 and 3 are reserved. */
	KUNIT_EXPECT_EQ(test, sroce_flush_need(1, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_flush_need(1, 3), -EINVAL);
	/* The rights are the MR access bits ib_core checks at registration. */
	KUNIT_EXPECT_EQ(test, g, BIT(8));
	KUNIT_EXPECT_EQ(test, p, BIT(9));
}

/*
 * UC: a stream of (PSN, opcode) with losses. Each row is what arrives and
 * what the responder must do with it.
 */
static void resp_uc_accept(struct kunit *test)
{
	static const struct {
		u32 psn;
		u8 op;
		bool exec;	/* executed */
		bool abandon;	/* the message in progress is given up */
	} s[] = {
		{ 10, 0x24, true, false },	/* UC SEND_ONLY */
		{ 11, 0x20, true, false },	/* SEND_FIRST */
		{ 12, 0x21, true, false },	/* SEND_MIDDLE */
		/* 13 lost: the rest of this SEND is dropped */
		{ 14, 0x21, false, true },	/* MIDDLE: out of sequence */
		{ 15, 0x22, false, false },	/* LAST: nothing in progress */
		{ 16, 0x26, true, false },	/* WRITE_FIRST starts anew */
		{ 17, 0x27, true, false },	/* WRITE_MIDDLE */
		/* 18, 19 lost; a new message's first packet is taken */
		{ 20, 0x20, true, true },	/* SEND_FIRST */
		{ 21, 0x22, true, false },	/* SEND_LAST */
		/* in sequence but out of place: a FIRST inside a message */
		{ 22, 0x20, true, false },
		{ 23, 0x26, true, true },	/* WRITE_FIRST mid-SEND */
		{ 24, 0x28, true, false },	/* WRITE_LAST */
		/* after a gap, an ONLY needs nothing in progress */
		{ 30, 0x2a, true, false },	/* WRITE_ONLY */
		{ 0xffffff, 0x20, true, false },/* PSN wraps inside */
		{ 0, 0x23, true, false },	/* SEND_LAST_IMM */
	};
	u8 in_msg = MSG_NONE, next;
	u32 epsn = 0;
	bool ab;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(s); i++) {
		bool exec = sroce_resp_uc_accept(in_msg, epsn, s[i].psn,
						 s[i].op, &ab);

		KUNIT_EXPECT_EQ_MSG(test, exec, s[i].exec, "row %u", i);
		KUNIT_EXPECT_EQ_MSG(test, ab, s[i].abandon, "row %u", i);
		if (ab)
			in_msg = MSG_NONE;
		if (exec) {
			KUNIT_ASSERT_EQ(test,
					sroce_resp_opseq(in_msg, s[i].op, &next),
					0);
			in_msg = next;
			epsn = (s[i].psn + 1) & 0xffffff;
		}
	}
	KUNIT_EXPECT_EQ(test, in_msg, MSG_NONE);
}

/* A job ring and history for @rd, zeroed, freed with the test. */
static struct sroce_rjobs_mem rjobs_mem(struct kunit *test, u32 rd)
{
	struct sroce_rjobs_mem m = {
		.jobs = kunit_kcalloc(test, sroce_rjobs_for(rd),
				      sizeof(*m.jobs), GFP_KERNEL),
		.hist = kunit_kcalloc(test, max(rd, 1U), sizeof(*m.hist),
				      GFP_KERNEL),
	};

	KUNIT_ASSERT_NOT_NULL(test, m.jobs);
	KUNIT_ASSERT_NOT_NULL(test, m.hist);
	return m;
}

/* A responder with a job ring and nothing else: what the ring code uses. */
static struct sroce_qp *ring_qp(struct kunit *test, u32 pos)
{
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct sroce_rjobs_mem m;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	m = rjobs_mem(test, SROCE_MAX_QP_RD_ATOM);
	sroce_resp_jobs_init(qp, &m, SROCE_MAX_QP_RD_ATOM);
	spin_lock_init(&qp->resp.lock);
	qp->pmtu = 1024;
	qp->resp.job_head = pos;
	qp->resp.job_tail = pos;
	return qp;
}

/* The ring calls under resp.lock, as resp.c makes them (lockdep checks). */
static bool push_locked(struct sroce_qp *qp, const struct sroce_rjob *j)
{
	bool ok;

	spin_lock_bh(&qp->resp.lock);
	ok = sroce_resp_push(qp, j);
	spin_unlock_bh(&qp->resp.lock);
	return ok;
}

/*
 * The ring positions are free-running u32s: across their wrap every job
 * must stay in its own slot (with 258 slots indexed modulo 258, positions
 * 16 apart across 2^32 shared one) and come out in order.
 */
static void resp_ring_wrap(struct kunit *test)
{
	struct sroce_qp *qp = ring_qp(test, U32_MAX - 100);
	struct sroce_rjob j = { .type = SROCE_RJOB_READ, .len = 1024 };
	struct sroce_rjob ack = { .type = SROCE_RJOB_ACK, .syn = 0x1f };
	u32 i, n = 2 * SROCE_MAX_QP_RD_ATOM + 2;

	/* Full with READs and the ACKs between them, none merged. */
	for (i = 0; i < n; i++) {
		struct sroce_rjob *x = i & 1 ? &j : &ack;

		x->psn = i;
		KUNIT_EXPECT_TRUE(test, push_locked(qp, x));
	}
	KUNIT_EXPECT_EQ(test, qp->resp.job_tail - qp->resp.job_head, n);
	for (i = 0; i < n; i++) {
		struct sroce_rjob *x = sroce_rjob_at(qp, qp->resp.job_head + i);

		KUNIT_EXPECT_EQ_MSG(test, x->psn, i, "job %u", i);
		KUNIT_EXPECT_EQ(test, x->type,
				i & 1 ? SROCE_RJOB_READ : SROCE_RJOB_ACK);
	}
	/* An ACK behind an ACK replaces it, also across the wrap. */
	qp->resp.job_head = U32_MAX;
	qp->resp.job_tail = U32_MAX;
	ack.syn = SROCE_AETH_ACK | SROCE_AETH_CREDIT_MASK;
	ack.psn = 7;
	KUNIT_EXPECT_TRUE(test, push_locked(qp, &ack));
	ack.psn = 8;
	KUNIT_EXPECT_TRUE(test, push_locked(qp, &ack));
	KUNIT_EXPECT_EQ(test, qp->resp.job_tail, 0U);
	KUNIT_EXPECT_EQ(test, sroce_rjob_at(qp, U32_MAX)->psn, 8U);
}

/*
 * The ring is as large as max_dest_rd_atomic needs: full at that size,
 * and grown to a larger one with the jobs owed kept, in order, across the
 * wrap of the positions.
 */
static void resp_ring_grow(struct kunit *test)
{
	struct sroce_qp *qp = ring_qp(test, U32_MAX - 1);
	struct sroce_rjob j = { .type = SROCE_RJOB_READ, .len = 1024 };
	struct sroce_rjobs_mem m = rjobs_mem(test, 2), old;
	u32 i;

	sroce_resp_jobs_init(qp, &m, 2);
	qp->resp.job_head = U32_MAX - 1;
	qp->resp.job_tail = U32_MAX - 1;
	/* Three requests remembered, the oldest overwritten by the third. */
	for (i = 0; i < 3; i++) {
		qp->resp.rd_hist[qp->resp.rd_hist_next].psn = 100 + i;
		qp->resp.rd_hist_next = (qp->resp.rd_hist_next + 1) %
					qp->resp.rd_hist_n;
	}

	KUNIT_EXPECT_EQ(test, sroce_rjobs_for(0), 4U);
	KUNIT_EXPECT_EQ(test, sroce_rjobs_for(1), 4U);
	KUNIT_EXPECT_EQ(test, sroce_rjobs_for(3), 8U);
	KUNIT_EXPECT_EQ(test, sroce_rjobs_for(4), 16U);
	KUNIT_EXPECT_EQ(test, sroce_rjobs_for(SROCE_MAX_QP_RD_ATOM),
			(u32)SROCE_RJOBS);

	KUNIT_EXPECT_EQ(test, qp->resp.jobs_mask, 7U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist_n, 2U);
	for (i = 0; i < 8; i++) {
		j.psn = 10 + i;
		KUNIT_EXPECT_TRUE(test, push_locked(qp, &j));
	}
	KUNIT_EXPECT_FALSE(test, push_locked(qp, &j));

	/* max_dest_rd_atomic 7: 16 jobs, 7 requests remembered. */
	old = m;
	m = rjobs_mem(test, 7);
	spin_lock_bh(&qp->resp.lock);
	sroce_resp_jobs_swap(qp, &m, 7);
	spin_unlock_bh(&qp->resp.lock);
	KUNIT_EXPECT_EQ(test, qp->resp.jobs_mask, 15U);
	/* The old ones come back, for the caller to free. */
	KUNIT_EXPECT_PTR_EQ(test, m.jobs, old.jobs);
	KUNIT_EXPECT_PTR_EQ(test, m.hist, old.hist);
	KUNIT_EXPECT_TRUE(test, qp->resp.jobs != old.jobs);
	KUNIT_EXPECT_TRUE(test, qp->resp.rd_hist != old.hist);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist_n, 7U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist_next, 2U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist[0].psn, 101U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist[1].psn, 102U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_hist[2].psn, 0U);
	for (i = 0; i < 8; i++) {
		j.psn = 18 + i;
		KUNIT_EXPECT_TRUE(test, push_locked(qp, &j));
	}
	KUNIT_EXPECT_FALSE(test, push_locked(qp, &j));
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_rjob_at(qp, qp->resp.job_head + i)->psn,
				    10 + i, "job %u", i);
}

/* A replayed READ drops what was queued from its PSN on, across the wrap. */
static void resp_ring_replay(struct kunit *test)
{
	struct sroce_qp *qp = ring_qp(test, U32_MAX - 20);
	struct sroce_rjob j = { .type = SROCE_RJOB_READ, .len = 2048 };
	u32 i;

	/* 60 READs of two packets each, PSNs 100, 102, ... */
	for (i = 0; i < 60; i++) {
		j.psn = 100 + 2 * i;
		KUNIT_EXPECT_TRUE(test, push_locked(qp, &j));
		qp->resp.rd_pending++;
	}
	/* The requester goes back to the 40th READ (past the wrap). */
	j.psn = 100 + 2 * 40;
	j.va = 0xabc;
	spin_lock_bh(&qp->resp.lock);
	sroce_resp_replay(qp, &j);
	spin_unlock_bh(&qp->resp.lock);
	KUNIT_EXPECT_EQ(test, qp->resp.job_tail - qp->resp.job_head, 41U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_pending, 41U);
	KUNIT_EXPECT_EQ(test, sroce_rjob_at(qp, qp->resp.job_tail - 1)->va, 0xabcULL);
	KUNIT_EXPECT_EQ(test, sroce_rjob_at(qp, qp->resp.job_tail - 2)->psn,
			100U + 2 * 39);
}

/* A response lost at the ring's position 0 puts its job back at U32_MAX. */
static void resp_ring_rewind(struct kunit *test)
{
	struct sroce_qp *qp = ring_qp(test, 0);

	qp->resp.rjob_last = (struct sroce_rjob){
		.type = SROCE_RJOB_READ, .psn = 500, .len = 3 * 1024,
		.off = 3 * 1024,
	};
	sroce_resp_rewind(qp, 501);
	KUNIT_EXPECT_EQ(test, qp->resp.job_head, U32_MAX);
	KUNIT_EXPECT_EQ(test, qp->resp.job_tail, 0U);
	KUNIT_EXPECT_EQ(test, qp->resp.rd_pending, 1U);
	KUNIT_EXPECT_EQ(test, sroce_rjob_at(qp, U32_MAX)->psn, 500U);
	KUNIT_EXPECT_EQ(test, sroce_rjob_at(qp, U32_MAX)->off, 1024U);
	KUNIT_EXPECT_EQ(test, qp->resp.rjob_last.len, 0U);
}

/*
 * A local packet's PSNs, counted in its sender's path MTU: a chunk of many
 * when both QPs have one path MTU, refused when they differ; a single
 * packet is left to the length checks the wire's packets meet.
 */
static void resp_local_psns(struct kunit *test)
{
	static const struct {
		u32 paylen, sender, pmtu, more;
		bool mismatch;
	} c[] = {
		{ 0, 1024, 1024, 0, false },
		{ 1024, 1024, 1024, 0, false },
		{ 1025, 1024, 1024, 1, false },
		{ 16384, 1024, 1024, 15, false },
		{ 16384, 4096, 4096, 3, false },
		/* The receiver's unit would count 16 PSNs for the sender's 4. */
		{ 16384, 4096, 1024, 0, true },
		{ 16384, 1024, 4096, 0, true },
		{ 2048, 1024, 4096, 0, true },
		/* One packet either way: checked against 1024 as from a wire. */
		{ 4096, 4096, 1024, 0, false },
		{ 1000, 1024, 4096, 0, false },
	};
	struct sroce_pkt pkt;
	int i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.paylen = c[i].paylen;
		sroce_rx_local_psns(&pkt, c[i].sender, c[i].pmtu);
		KUNIT_EXPECT_EQ_MSG(test, pkt.more_psns, c[i].more, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, pkt.mtu_mismatch, c[i].mismatch,
				    "case %d", i);
	}
}

static struct kunit_case resp_cases[] = {
	KUNIT_CASE(resp_classify),
	KUNIT_CASE(resp_rd_pace),
	KUNIT_CASE(resp_flush_need),
	KUNIT_CASE(resp_opseq_table),
	KUNIT_CASE(resp_opseq_streams),
	KUNIT_CASE(resp_opseq_transport),
	KUNIT_CASE(resp_uc_accept),
	KUNIT_CASE(resp_ring_wrap),
	KUNIT_CASE(resp_ring_grow),
	KUNIT_CASE(resp_ring_replay),
	KUNIT_CASE(resp_ring_rewind),
	KUNIT_CASE(resp_local_psns),
	{}
};

struct kunit_suite sroce_resp_suite = {
	.name = "sroce_resp",
	.test_cases = resp_cases,
};
