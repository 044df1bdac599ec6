// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RC completer and the requester's go-back-N on a fake QP: a
 * send queue of WQEs left as the requester leaves them once sent, ACKs fed
 * to sroce_comp_ack() as the receive path does, sroce_req_rewind() as the
 * NAK, timeout and transmit paths call it, and a real kernel CQ to see
 * what completes, in which order. PSNs and ring slots wrap. And a kernel
 * QP in ERR: what a full CQ held back completes once there is room, and
 * receives may be posted from a hard interrupt.
 */
#include <kunit/test.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>

#include "../sroce.h"
#include "sroce_test.h"

#define FQ_PMTU		1024
#define FQ_QPN		0x11
#define FQ_RETRY	7
#define FQ_RNR_RETRY	6

struct fq {
	struct sroce_dev *sdev;
	struct sroce_cq *cq;
	struct sroce_qp *qp;
};

static int fq_init(struct kunit *test)
{
	struct ib_cq_init_attr attr = { .cqe = 16 };
	struct sroce_queue_geom g;
	struct sroce_qp *qp;
	struct fq *fx;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	test->priv = fx;
	fx->sdev = kunit_kzalloc(test, sizeof(*fx->sdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev);
	fx->sdev->cnt = alloc_percpu(struct sroce_counters);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev->cnt);
	fx->sdev->wq = system_wq;

	fx->cq = kunit_kzalloc(test, sizeof(*fx->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->cq);
	fx->cq->ibcq.device = &fx->sdev->ib;
	KUNIT_ASSERT_EQ(test, sroce_create_cq(&fx->cq->ibcq, &attr, NULL), 0);

	/* Only what the completer and the rewind touch. */
	qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	fx->qp = qp;
	qp->sdev = fx->sdev;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.qp_num = FQ_QPN;
	qp->ibqp.send_cq = &fx->cq->ibcq;
	qp->ibqp.recv_cq = &fx->cq->ibcq;
	qp->pmtu = FQ_PMTU;
	qp->retry_cnt = FQ_RETRY;
	qp->rnr_retry = FQ_RNR_RETRY;
	/* No ACK timer: sroce_req_arm_timer() leaves qp->req.timer alone. */
	qp->req.timer_ns = 0;
	spin_lock_init(&qp->req.lock);
	spin_lock_init(&qp->resp.lock);
	raw_spin_lock_init(&qp->rq_post_lock);
	INIT_DELAYED_WORK(&qp->rq_err_work, sroce_rq_err_work);
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(7, sizeof(struct rxe_send_wqe),
					       SROCE_MAX_QP_WR, &g), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&qp->sq, NULL, &g), 0);
	qp->swqe_size = ALIGN(sizeof(struct sroce_swqe), 8);
	qp->swqe_mask = g.num_slots - 1;
	qp->swqe = kunit_kcalloc(test, g.num_slots, qp->swqe_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->swqe);
	return 0;
}

/* Also after a failed init: undo only what was done. */
static void fq_exit(struct kunit *test)
{
	struct fq *fx = test->priv;

	if (!fx)
		return;
	if (fx->qp) {
		/* Not dying: the work may have been queued, it stops here. */
		WRITE_ONCE(fx->qp->dying, true);
		cancel_delayed_work_sync(&fx->qp->rq_err_work);
		sroce_queue_free(&fx->qp->rq);
		sroce_queue_free(&fx->qp->sq);
	}
	if (fx->cq && fx->cq->q.buf)
		sroce_destroy_cq(&fx->cq->ibcq, NULL);
	if (fx->sdev)
		free_percpu(fx->sdev->cnt);
}

/* An empty send queue at ring slot @slot, the next PSN @psn. */
static void fq_start(struct sroce_qp *qp, u32 slot, u32 psn)
{
	slot &= qp->sq.index_mask;
	qp->sq.cons = slot;
	qp->sq.prod = slot;
	qp->req.head = slot;
	qp->req.cur = slot;
	qp->req.off = 0;
	qp->req.una_psn = psn;
	qp->req.psn = psn;
	qp->req.max_psn = psn;
	qp->req.cwnd = 0;
	qp->req.ssthresh = 0;
	qp->req.recovering = false;
	qp->req.retry_left = FQ_RETRY;
	qp->req.rnr_left = FQ_RNR_RETRY;
}

/* A WQE copied out of the ring, not looked at by the requester yet. */
static struct sroce_swqe *fq_queue(struct sroce_qp *qp, u64 wr_id, u32 opcode,
				   u32 length)
{
	struct sroce_swqe *w = sroce_swqe(qp, qp->req.head);

	memset(w, 0, qp->swqe_size);
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = IB_SEND_SIGNALED;
	w->length = length;
	qp->req.head = sroce_q_next(qp->req.head, qp->sq.index_mask);
	qp->sq.prod = qp->req.head;
	return w;
}

/*
 * A WQE of @npkts packets from @psn, every one sent once, as
 * sroce_req_build() leaves it; the requester is past it.
 */
static struct sroce_swqe *fq_sent(struct sroce_qp *qp, u64 wr_id, u32 opcode,
				  u32 psn, u32 npkts)
{
	struct sroce_swqe *w = fq_queue(qp, wr_id, opcode, npkts * FQ_PMTU);

	w->started = 1;
	w->sent = 1;
	w->first_psn = psn;
	w->last_psn = sroce_psn_add(psn, npkts - 1);
	if (opcode == IB_WR_RDMA_READ) {
		w->rd_chunk = sroce_rd_chunk_pkts(qp->max_rd_atomic) * FQ_PMTU;
		w->rd_reqs = 1;
		qp->req.rd_outstanding++;
	}
	qp->req.cur = qp->req.head;
	qp->req.off = 0;
	qp->req.psn = sroce_psn_add(psn, npkts);
	qp->req.max_psn = qp->req.psn;
	return w;
}

/* A local WQE the requester executed: it has no PSNs (sroce_req_local()). */
static struct sroce_swqe *fq_local(struct sroce_qp *qp, u64 wr_id)
{
	struct sroce_swqe *w = fq_queue(qp, wr_id, IB_WR_LOCAL_INV, 0);

	w->started = 1;
	w->sent = 1;
	w->done = 1;
	w->first_psn = qp->req.psn;
	w->last_psn = sroce_psn_add(qp->req.psn, -1);
	qp->req.cur = qp->req.head;
	return w;
}

/* The requester sent every WQE again, up to @psn. */
static void fq_resent(struct sroce_qp *qp, u32 psn)
{
	qp->req.cur = qp->req.head;
	qp->req.off = 0;
	qp->req.psn = psn;
}

/* The calls under req.lock, as the driver makes them (lockdep checks). */
static int fq_ack(struct sroce_qp *qp, u32 psn, bool implied)
{
	int err;

	spin_lock_bh(&qp->req.lock);
	err = sroce_comp_ack(qp, psn, implied);
	spin_unlock_bh(&qp->req.lock);
	return err;
}

static int fq_nak_seq(struct sroce_qp *qp, u32 psn)
{
	int err;

	spin_lock_bh(&qp->req.lock);
	err = sroce_comp_nak_seq(qp, psn);
	spin_unlock_bh(&qp->req.lock);
	return err;
}

static void fq_rewind(struct sroce_qp *qp, u32 psn)
{
	spin_lock_bh(&qp->req.lock);
	sroce_req_rewind(qp, psn);
	spin_unlock_bh(&qp->req.lock);
}

/* The next completion on the send CQ is @wr_id's, successful. */
static void fq_wc(struct kunit *test, struct fq *fx, u64 wr_id,
		  enum ib_wc_opcode opcode, u32 byte_len)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ_MSG(test, sroce_poll_cq(&fx->cq->ibcq, 1, &wc), 1,
			    "no completion for wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.status, IB_WC_SUCCESS, "wr_id %llu",
			    wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.opcode, opcode, "wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.byte_len, byte_len, "wr_id %llu", wr_id);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, &fx->qp->ibqp);
}

/* The next completion, waiting up to 2 s for one: 1, or 0 if none came. */
static int fq_wait_wc(struct fq *fx, struct ib_wc *wc)
{
	unsigned long deadline = jiffies + 2 * HZ;
	int n;

	while (!(n = sroce_poll_cq(&fx->cq->ibcq, 1, wc)) &&
	       time_before(jiffies, deadline))
		usleep_range(2000, 5000);
	return n;
}

static void fq_no_wc(struct kunit *test, struct fq *fx)
{
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 1, &wc), 0);
}

/* One ACK covers several WQEs; one WQE takes several ACKs. */
static void compqp_ack_coalesce(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;

	fq_start(qp, 0, 10);
	fq_sent(qp, 1, IB_WR_SEND, 10, 3);
	fq_sent(qp, 2, IB_WR_SEND, 13, 1);
	fq_sent(qp, 3, IB_WR_SEND, 14, 2);
	KUNIT_ASSERT_EQ(test, qp->req.psn, 16U);
	/* A window cut by a timeout, retries partly used. */
	qp->req.cwnd = SROCE_WINDOW_MIN;
	qp->req.retry_left = 1;
	qp->req.rnr_left = 0;

	/* Inside the first WQE: progress, nothing complete. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 11, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 12U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, SROCE_WINDOW_MIN + 2);
	KUNIT_EXPECT_EQ(test, qp->req.retry_left, FQ_RETRY);
	KUNIT_EXPECT_EQ(test, qp->req.rnr_left, FQ_RNR_RETRY);

	/* 13 covers the first two exactly. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 13, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 14U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 2U);
	KUNIT_EXPECT_EQ(test, qp->sq.buf->consumer_index, 2U);
	fq_wc(test, fx, 1, IB_WC_SEND, 3 * FQ_PMTU);
	fq_wc(test, fx, 2, IB_WC_SEND, FQ_PMTU);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, SROCE_WINDOW_MIN + 4);

	KUNIT_EXPECT_EQ(test, fq_ack(qp, 15, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 16U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, qp->req.head);
	fq_wc(test, fx, 3, IB_WC_SEND, 2 * FQ_PMTU);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 16U);
}

/*
 * WQEs across the 24-bit PSN wrap, in ring slots across the ring's wrap;
 * a stale or duplicate ACK completes nothing and moves nothing back.
 */
static void compqp_ack_psn_wrap(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *c;

	fq_start(qp, 6, 0xfffffe);
	fq_sent(qp, 1, IB_WR_SEND, 0xfffffe, 2);
	fq_sent(qp, 2, IB_WR_RDMA_WRITE, 0x000000, 1);
	c = fq_sent(qp, 3, IB_WR_SEND, 0x000001, 2);
	KUNIT_ASSERT_EQ(test, c->last_psn, 2U);
	KUNIT_ASSERT_EQ(test, qp->req.psn, 3U);

	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0xffffff, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 0U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 7U);
	fq_wc(test, fx, 1, IB_WC_SEND, 2 * FQ_PMTU);

	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0x000000, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 1U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);
	fq_wc(test, fx, 2, IB_WC_RDMA_WRITE, FQ_PMTU);
	fq_no_wc(test, fx);

	/* Older and duplicate ACKs, reordered: no progress, no reset. */
	qp->req.retry_left = 2;
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0xfffffe, true), 0);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0xffffff, true), 0);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0x000000, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 1U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.retry_left, 2);
	fq_no_wc(test, fx);

	KUNIT_EXPECT_EQ(test, fq_ack(qp, 0x000002, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 3U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 1U);
	fq_wc(test, fx, 3, IB_WC_SEND, 2 * FQ_PMTU);
	fq_no_wc(test, fx);
}

/*
 * An ACK past a READ whose responses stopped coming: they were lost, the
 * requester goes back for the rest (once), and the READ and what follows
 * it complete only once the responses are in.
 */
static void compqp_implied_nak(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *r;

	fq_start(qp, 0, 99);
	fq_sent(qp, 1, IB_WR_SEND, 99, 1);
	r = fq_sent(qp, 2, IB_WR_RDMA_READ, 100, 4);
	fq_sent(qp, 3, IB_WR_SEND, 104, 1);
	KUNIT_ASSERT_EQ(test, qp->req.rd_outstanding, 1U);

	/* Short of the READ: an ordinary ACK. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 99, true), 0);
	fq_wc(test, fx, 1, IB_WC_SEND, FQ_PMTU);
	KUNIT_EXPECT_FALSE(test, qp->req.rd_gap);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 100U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 105U);

	/* The first response placed, as sroce_comp_read_resp() does. */
	r->rd_done = FQ_PMTU;
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 100, false), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 101U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 105U);

	/* The SEND's ACK: 101..103 are not coming. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 104, true), 0);
	KUNIT_EXPECT_TRUE(test, qp->req.rd_gap);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 1U);
	KUNIT_EXPECT_EQ(test, qp->req.off, FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 101U);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 101U);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 1U);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RX_OUT_OF_SEQ), 1);
	fq_no_wc(test, fx);

	/* Asked again; the ACK again (duplicate SEND) goes back no more. */
	fq_resent(qp, 105);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 104, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cur, qp->req.head);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 105U);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 101U);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RX_OUT_OF_SEQ), 1);
	fq_no_wc(test, fx);

	/* The rest placed in order: READ, then the SEND behind it. */
	r->rd_done = r->length;
	r->rd_answered = 1;
	qp->req.rd_outstanding--;
	r->done = 1;
	qp->req.rd_gap = false;
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 103, false), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 104U);
	fq_wc(test, fx, 2, IB_WC_RDMA_READ, 4 * FQ_PMTU);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 104, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 105U);
	fq_wc(test, fx, 3, IB_WC_SEND, FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, qp->req.head);
	KUNIT_EXPECT_EQ(test, qp->req.rd_outstanding, 0U);
	KUNIT_EXPECT_FALSE(test, qp->req.rd_gap);
}

static u32 fq_chunk(struct sroce_qp *qp, const struct sroce_swqe *w)
{
	u32 len;

	spin_lock_bh(&qp->req.lock);
	len = sroce_req_chunk(qp, w);
	spin_unlock_bh(&qp->req.lock);
	return len;
}

/* A same-host WRITE or SEND goes in chunks, within the window. */
static void compqp_local_chunk(struct kunit *test)
{
	u32 full = SROCE_LOCAL_CHUNK / FQ_PMTU * FQ_PMTU;
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *w;

	fq_start(qp, 0, 100);
	w = fq_queue(qp, 1, IB_WR_RDMA_WRITE, 64 * FQ_PMTU);
	/* Until a packet's route was seen to stay in the host: path MTU. */
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), FQ_PMTU);
	qp->req.peer_local = true;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), full);
	w->opcode = IB_WR_SEND_WITH_IMM;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), full);

	/* No more PSNs than the window has room for. */
	qp->req.psn = sroce_psn_add(qp->req.una_psn, SROCE_WINDOW_LOCAL - 3);
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), 3 * FQ_PMTU);
	qp->req.psn = sroce_psn_add(qp->req.una_psn, 2);
	qp->req.cwnd = 4;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), 2 * FQ_PMTU);
	qp->req.cwnd = 0;

	/* Never a READ, an atomic, inline data, or UC. */
	w->opcode = IB_WR_RDMA_READ;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), FQ_PMTU);
	w->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), FQ_PMTU);
	w->opcode = IB_WR_RDMA_WRITE;
	w->inl = 1;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), FQ_PMTU);
	w->inl = 0;
	qp->ibqp.qp_type = IB_QPT_UC;
	KUNIT_EXPECT_EQ(test, fq_chunk(qp, w), FQ_PMTU);
	qp->ibqp.qp_type = IB_QPT_RC;
}

/*
 * Go-back-N to a packet inside a multi-packet WQE, past a local WQE (no
 * packets), to before the oldest WQE, and beyond anything sent.
 */
static void compqp_rewind(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;

	fq_start(qp, 0, 200);
	fq_sent(qp, 1, IB_WR_SEND, 200, 4);
	fq_local(qp, 2);
	fq_sent(qp, 3, IB_WR_RDMA_WRITE, 204, 2);
	fq_queue(qp, 4, IB_WR_SEND, FQ_PMTU);
	KUNIT_ASSERT_EQ(test, qp->req.cur, 3U);
	KUNIT_ASSERT_EQ(test, qp->req.psn, 206U);

	fq_rewind(qp, 202);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 2 * FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 202U);

	fq_rewind(qp, 205);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, qp->req.off, FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 205U);

	fq_rewind(qp, 204);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 204U);

	/* Older than anything outstanding: from the oldest WQE's start. */
	fq_rewind(qp, 150);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 200U);

	/* Not sent yet: the requester stays where it is. */
	qp->req.cur = 3;
	qp->req.psn = 206;
	fq_rewind(qp, 206);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 3U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 206U);
	/* Four went back; the last one did not, and is not counted. */
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_REWINDS), 4);

	/* A rewind completes nothing; an ACK takes the local WQE along. */
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 203, true), 0);
	fq_wc(test, fx, 1, IB_WC_SEND, 4 * FQ_PMTU);
	fq_wc(test, fx, 2, IB_WC_LOCAL_INV, 0);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 2U);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 204U);
}

/* The byte offset of a packet counts PSNs across the 24-bit wrap. */
static void compqp_rewind_psn_wrap(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;

	fq_start(qp, 5, 0xfffffe);
	fq_sent(qp, 1, IB_WR_RDMA_WRITE, 0xfffffe, 4);
	fq_sent(qp, 2, IB_WR_SEND, 0x000002, 1);
	KUNIT_ASSERT_EQ(test, qp->req.psn, 3U);

	fq_rewind(qp, 0x000001);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 5U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 3 * FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 1U);

	fq_rewind(qp, 0x000002);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 6U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 2U);

	fq_rewind(qp, 0xfffffd);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 5U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 0xfffffeU);
}

/* A READ is asked again only from its first response not placed. */
static void compqp_rewind_read(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *r;

	fq_start(qp, 0, 300);
	r = fq_sent(qp, 1, IB_WR_RDMA_READ, 300, 8);
	fq_sent(qp, 2, IB_WR_SEND, 308, 1);
	r->rd_done = 3 * FQ_PMTU;

	fq_rewind(qp, 305);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 3 * FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 303U);

	qp->req.cur = 2;
	qp->req.psn = 309;
	fq_rewind(qp, 301);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 3 * FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 303U);

	/* The SEND after it, by itself. */
	fq_rewind(qp, 308);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 1U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 308U);
}

/*
 * After a rewind, una_psn never passes req.psn, even for ACKs of the
 * packets sent before it; an ACK for all of them completes the WQEs the
 * requester was about to send again, and it skips them.
 */
static void compqp_ack_clamp(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;

	fq_start(qp, 0, 200);
	fq_sent(qp, 1, IB_WR_SEND, 200, 4);
	fq_sent(qp, 2, IB_WR_SEND, 204, 2);
	/* The ACK timer: back to the oldest unacknowledged PSN. */
	fq_rewind(qp, 200);
	KUNIT_ASSERT_EQ(test, qp->req.psn, 200U);
	qp->req.retry_left = 3;

	/* The first transmission's ACK, late: nothing may count. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 201, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 200U);
	KUNIT_EXPECT_EQ(test, qp->req.retry_left, 3);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 0U);

	/* 200..202 sent again: now the same ACK moves una_psn. */
	qp->req.psn = 203;
	qp->req.off = 3 * FQ_PMTU;
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 201, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 202U);
	KUNIT_EXPECT_EQ(test, qp->req.retry_left, FQ_RETRY);
	fq_no_wc(test, fx);

	/* Everything of the first transmission arrived after all. */
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 205, true), 0);
	fq_wc(test, fx, 1, IB_WC_SEND, 4 * FQ_PMTU);
	fq_wc(test, fx, 2, IB_WC_SEND, 2 * FQ_PMTU);
	fq_no_wc(test, fx);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 206U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 206U);
	KUNIT_EXPECT_EQ(test, qp->req.cur, qp->req.head);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
}

/*
 * An unsignaled WQE completes without a CQE; a CQE that does not fit
 * fails the ACK (the QP then goes to ERR).
 */
static void compqp_ack_unsignaled_overflow(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *w;
	union sroce_cqe e = {};
	int i;

	fq_start(qp, 0, 40);
	w = fq_sent(qp, 1, IB_WR_SEND, 40, 1);
	w->flags = 0;
	fq_sent(qp, 2, IB_WR_SEND, 41, 1);
	fq_sent(qp, 3, IB_WR_SEND, 42, 1);

	KUNIT_EXPECT_EQ(test, fq_ack(qp, 41, true), 0);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 2U);
	fq_wc(test, fx, 2, IB_WC_SEND, FQ_PMTU);
	fq_no_wc(test, fx);

	for (i = 0; i < fx->cq->ibcq.cqe; i++)
		KUNIT_ASSERT_EQ(test, sroce_cq_post(fx->cq, &e, false), 0);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 42, true), -EBUSY);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_CQ_OVERFLOW), 1);
}

/*
 * An atomic is one packet, though its WQE's length is that of the local
 * buffer for the result: a rewind to the packet after it lands on the
 * next WQE, not inside the atomic (which would then run twice).
 */
static void compqp_rewind_atomic(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	static const u32 ops[] = {
		IB_WR_ATOMIC_CMP_AND_SWP, IB_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct sroce_swqe *a;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		fq_start(qp, 0, 500);
		a = fq_sent(qp, 1, ops[i], 500, 1);
		a->length = 4 * FQ_PMTU;
		fq_sent(qp, 2, IB_WR_SEND, 501, 1);
		fq_sent(qp, 3, IB_WR_SEND, 502, 1);

		fq_rewind(qp, 501);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.cur, 1U, "op %u", ops[i]);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.off, 0U, "op %u", ops[i]);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.psn, 501U, "op %u", ops[i]);

		fq_rewind(qp, 500);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.cur, 0U, "op %u", ops[i]);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.off, 0U, "op %u", ops[i]);
		KUNIT_EXPECT_EQ_MSG(test, qp->req.psn, 500U, "op %u", ops[i]);
	}
}

/*
 * A sequence NAK goes back to its PSN, unless a READ before it still lacks
 * responses: they were lost too, and the requester asks for them first.
 */
static void compqp_nak_seq(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct sroce_swqe *r;

	fq_start(qp, 0, 10);
	fq_sent(qp, 1, IB_WR_SEND, 10, 3);
	fq_sent(qp, 2, IB_WR_SEND, 13, 1);
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 12), 0);
	KUNIT_EXPECT_EQ(test, qp->req.una_psn, 12U);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 2 * FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 12U);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RX_NAKS), 1);
	fq_no_wc(test, fx);

	fq_start(qp, 0, 100);
	r = fq_sent(qp, 1, IB_WR_RDMA_READ, 100, 4);
	fq_sent(qp, 2, IB_WR_SEND, 104, 1);
	fq_sent(qp, 3, IB_WR_SEND, 105, 1);
	r->rd_done = FQ_PMTU;
	/* 104 arrived, 105 did not, nor did the READ's last three. */
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 105), 0);
	KUNIT_EXPECT_TRUE(test, qp->req.rd_gap);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 101U);
	fq_no_wc(test, fx);

	/* Another before the READ went again: it does not skip the READ. */
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 105), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.off, FQ_PMTU);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 101U);

	/* Once all went again, back to its PSN as any NAK. */
	qp->req.cur = qp->req.head;
	qp->req.psn = 106;
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 105), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, qp->req.off, 0U);
	KUNIT_EXPECT_EQ(test, qp->req.psn, 105U);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_RX_NAKS), 4);
}

static void fq_loss(struct sroce_qp *qp, bool timeout)
{
	spin_lock_bh(&qp->req.lock);
	sroce_req_loss(qp, timeout);
	spin_unlock_bh(&qp->req.lock);
}

/*
 * A NAK halves the window, once for the PSNs sent before it; the window
 * then grows by one a ACK. A timeout starts it again from the least.
 */
static void compqp_loss_cut(struct kunit *test)
{
	u32 w = sroce_wire_window(FQ_PMTU);
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;

	fq_start(qp, 0, 10);
	fq_sent(qp, 1, IB_WR_SEND, 10, 10);
	fq_sent(qp, 2, IB_WR_SEND, 20, 10);
	fq_sent(qp, 3, IB_WR_SEND, 30, 10);
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 15), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, w / 2);
	KUNIT_EXPECT_EQ(test, qp->req.ssthresh, w / 2);
	KUNIT_EXPECT_EQ(test,
			sroce_counter_read(fx->sdev, SROCE_CNT_WINDOW_CUTS), 1);

	/* The same loss again, before 40 was acknowledged: no cut. */
	fq_resent(qp, 40);
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 20), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, w / 2 + 1);
	KUNIT_EXPECT_EQ(test,
			sroce_counter_read(fx->sdev, SROCE_CNT_WINDOW_CUTS), 1);
	fq_resent(qp, 40);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 39, true), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, w / 2 + 2);
	KUNIT_EXPECT_FALSE(test, qp->req.recovering);
	fq_wc(test, fx, 1, IB_WC_SEND, 10 * FQ_PMTU);
	fq_wc(test, fx, 2, IB_WC_SEND, 10 * FQ_PMTU);
	fq_wc(test, fx, 3, IB_WC_SEND, 10 * FQ_PMTU);

	/* A new loss after that: half again. */
	fq_sent(qp, 4, IB_WR_SEND, 40, 10);
	KUNIT_EXPECT_EQ(test, fq_nak_seq(qp, 45), 0);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd,
			max_t(u32, (w / 2 + 3) / 2, SROCE_WINDOW_MIN));
	KUNIT_EXPECT_EQ(test,
			sroce_counter_read(fx->sdev, SROCE_CNT_WINDOW_CUTS), 2);
	/* A timeout cuts even while recovering, to the least. */
	fq_loss(qp, true);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, SROCE_WINDOW_MIN);
	KUNIT_EXPECT_EQ(test,
			sroce_counter_read(fx->sdev, SROCE_CNT_WINDOW_CUTS), 3);
	fq_resent(qp, 50);
	KUNIT_EXPECT_EQ(test, fq_ack(qp, 49, true), 0);
	fq_wc(test, fx, 4, IB_WC_SEND, 10 * FQ_PMTU);
	fq_no_wc(test, fx);
}

/* Post @n SENDs into the ring itself, as post_send() leaves them. */
static void fq_post(struct sroce_qp *qp, u64 wr_id, u32 n)
{
	u32 k;

	for (k = 0; k < n; k++) {
		struct rxe_send_wqe *u = sroce_queue_slot(&qp->sq, qp->sq.prod);

		memset(u, 0, sizeof(*u));
		u->wr.wr_id = wr_id + k;
		u->wr.opcode = IB_WR_SEND;
		u->wr.send_flags = IB_SEND_SIGNALED;
		qp->sq.prod = sroce_q_next(qp->sq.prod, qp->sq.index_mask);
	}
}

/*
 * Fewer copies than ring slots: a fetch copies as many WQEs as copies
 * are free, each into the copy of its slot, the next fetch more once
 * completions freed some, across the ring's wrap; a flush completes
 * every WQE posted, copied or not, in order.
 */
static void compqp_fetch_window(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	struct ib_wc wc;
	u32 i;

	qp->swqe_mask = 3;
	fq_start(qp, 6, 10);
	fq_post(qp, 0x70, 7);

	spin_lock_bh(&qp->req.lock);
	KUNIT_EXPECT_EQ(test, sroce_req_fetch(qp), 4U);
	KUNIT_EXPECT_EQ(test, qp->req.head, 2U);
	/* No copy is free: nothing more, however much is posted. */
	KUNIT_EXPECT_EQ(test, sroce_req_fetch(qp), 0U);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, sroce_swqe(qp, 6 + i)->wr_id, 0x70 + i);
	/* Two completed: two more copied, into the copies they freed. */
	qp->sq.cons = 0;
	KUNIT_EXPECT_EQ(test, sroce_req_fetch(qp), 2U);
	KUNIT_EXPECT_EQ(test, qp->req.head, 4U);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, sroce_swqe(qp, i)->wr_id, 0x70 + 2 + i);
	/* A flush takes the one never copied too. */
	qp->state = IB_QPS_ERR;
	sroce_comp_flush(qp);
	spin_unlock_bh(&qp->req.lock);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 5U);
	KUNIT_EXPECT_EQ(test, qp->req.head, 5U);
	for (i = 2; i < 7; i++) {
		KUNIT_ASSERT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 0x70 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	}
	fq_no_wc(test, fx);
}

/*
 * A user QP's copies grow when more WQEs are posted than it has copies
 * (an 8-slot ring here): to a power of two, never past swqe_max; the
 * copies not completed keep their slots across the ring's wrap, and the
 * next fetch fills the rest.
 */
static void compqp_swqe_grow(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	u32 start = qp->sq.index_mask - 1, i;
	u8 *big, *old;

	qp->swqe_mask = 3;
	qp->swqe_max = 8;
	fq_start(qp, start, 10);
	fq_post(qp, 0x70, 7);
	sroce_queue_publish_prod(&qp->sq);
	big = kunit_kcalloc(test, 8, qp->swqe_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, big);

	spin_lock_bh(&qp->req.lock);
	KUNIT_EXPECT_EQ(test, sroce_req_fetch(qp), 4U);
	/* A kernel QP never grows them: it may post with interrupts off. */
	KUNIT_EXPECT_EQ(test, sroce_req_swqe_want(qp), 0U);
	qp->user = true;
	/* Seven posted: the next power of two, capped at swqe_max. */
	KUNIT_EXPECT_EQ(test, sroce_req_swqe_want(qp), 8U);
	qp->swqe_max = 64;
	KUNIT_EXPECT_EQ(test, sroce_req_swqe_want(qp), 8U);
	qp->swqe_max = 4;
	KUNIT_EXPECT_EQ(test, sroce_req_swqe_want(qp), 0U);
	qp->swqe_max = 8;
	qp->user = false;
	/* The oldest completed meanwhile; three copies move. */
	qp->sq.cons = sroce_q_next(start, qp->sq.index_mask);
	old = qp->swqe;
	KUNIT_EXPECT_PTR_EQ(test, sroce_req_swqe_swap(qp, big, 8), old);
	KUNIT_EXPECT_EQ(test, qp->swqe_mask, 7U);
	KUNIT_EXPECT_EQ(test, sroce_req_fetch(qp), 3U);
	for (i = 1; i < 7; i++)
		KUNIT_EXPECT_EQ(test,
				sroce_swqe(qp, (start + i) &
					   qp->sq.index_mask)->wr_id,
				0x70 + i);
	/* Copies enough for all six not completed: no more wanted. */
	qp->user = true;
	KUNIT_EXPECT_EQ(test, sroce_req_swqe_want(qp), 0U);
	qp->user = false;
	spin_unlock_bh(&qp->req.lock);
}

/*
 * A flush into a full CQ stops there and keeps the rest, in order, for the
 * next flush; nothing is lost.
 */
static void compqp_flush_full_cq(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	u32 room = fx->cq->ibcq.cqe - 2;
	union sroce_cqe cqe = {};
	struct ib_wc wc;
	unsigned int i;

	for (i = 0; i < room; i++)
		KUNIT_ASSERT_EQ(test, sroce_cq_post(fx->cq, &cqe, false), 0);
	fq_start(qp, 0, 10);
	for (i = 0; i < 5; i++)
		fq_queue(qp, 0x50 + i, IB_WR_SEND, FQ_PMTU);
	qp->state = IB_QPS_ERR;

	spin_lock_bh(&qp->req.lock);
	sroce_comp_flush(qp);
	spin_unlock_bh(&qp->req.lock);
	KUNIT_EXPECT_EQ(test, qp->sq.cons, 2U);
	KUNIT_EXPECT_EQ(test, qp->req.cur, 2U);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_CQ_OVERFLOW), 1);

	/* While the CQ stays full the retries do not report it again. */
	msleep(200);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_CQ_OVERFLOW), 1);

	for (i = 0; i < room; i++)
		KUNIT_ASSERT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 1, &wc), 1);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 0x50 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	}
	/*
	 * A kernel consumer (ib_drain_sq()) only polls from here on: the
	 * rest must come without another post.
	 */
	for (i = 2; i < 5; i++) {
		KUNIT_ASSERT_EQ_MSG(test, fq_wait_wc(fx, &wc), 1,
				    "wr_id %u held back for good", 0x50 + i);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 0x50 + i);
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	}
	KUNIT_EXPECT_EQ(test, qp->sq.cons, qp->req.head);
	fq_no_wc(test, fx);
}

/* A receive posted from a hard interrupt. */
struct fq_irq_post {
	struct hrtimer		timer;
	struct sroce_qp		*qp;
	u64			wr_id;
	int			err;
	bool			hardirq;
};

static enum hrtimer_restart fq_irq_post_fn(struct hrtimer *t)
{
	struct fq_irq_post *p = container_of(t, struct fq_irq_post, timer);
	struct ib_recv_wr wr = { .wr_id = p->wr_id };
	const struct ib_recv_wr *bad;

	p->hardirq = in_hardirq();
	p->err = sroce_post_recv(&p->qp->ibqp, &wr, &bad);
	return HRTIMER_NORESTART;
}

static int fq_irq_post(struct fq_irq_post *p, u64 wr_id)
{
	p->wr_id = wr_id;
	p->err = 1;
	hrtimer_start(&p->timer, us_to_ktime(100), HRTIMER_MODE_REL_HARD);
	while (hrtimer_active(&p->timer))
		usleep_range(500, 2000);
	return p->err;
}

/*
 * A kernel consumer may post receives from a hard interrupt, while the
 * receive path takes the QP's receive-side lock with only BHs off: lockdep
 * stops (and says why in the log) if the post takes that lock too. Posted
 * into a QP in ERR with interrupts off, the receive is flushed by the
 * QP's work.
 */
static void compqp_post_recv_hardirq(struct kunit *test)
{
	struct fq *fx = test->priv;
	struct sroce_qp *qp = fx->qp;
	bool locks_on = debug_locks;
	struct sroce_queue_geom g;
	/* Not on the stack: debugobjects wants timers there annotated. */
	struct fq_irq_post *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(test, p);
	p->qp = qp;
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(7, sroce_recv_elem(1),
					       SROCE_MAX_QP_WR, &g), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&qp->rq, NULL, &g), 0);
	qp->cap.max_recv_sge = 1;
	qp->state = IB_QPS_RTS;
	sroce_hrtimer_setup(&p->timer, fq_irq_post_fn, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_HARD);

	/* The receive side's lock as the receive path takes it. */
	spin_lock_bh(&qp->resp.lock);
	spin_unlock_bh(&qp->resp.lock);
	sroce_rq_err_work(&qp->rq_err_work.work);

	KUNIT_EXPECT_EQ(test, fq_irq_post(p, 0x70), 0);
	KUNIT_EXPECT_TRUE(test, p->hardirq);
	KUNIT_EXPECT_EQ(test, sroce_queue_prod(&qp->rq), 1U);
	fq_no_wc(test, fx);

	/* In ERR: flushed, with the one posted before, by the QP's work. */
	qp->state = IB_QPS_ERR;
	KUNIT_EXPECT_EQ(test, fq_irq_post(p, 0x71), 0);
	KUNIT_ASSERT_EQ(test, fq_wait_wc(fx, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0x70);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_ASSERT_EQ(test, fq_wait_wc(fx, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0x71);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	fq_no_wc(test, fx);
	hrtimer_cancel(&p->timer);
	if (locks_on)
		KUNIT_EXPECT_TRUE_MSG(test, debug_locks,
				      "lockdep turned itself off: see the log");
}

static struct kunit_case compqp_cases[] = {
	KUNIT_CASE(compqp_ack_coalesce),
	KUNIT_CASE(compqp_ack_psn_wrap),
	KUNIT_CASE(compqp_implied_nak),
	KUNIT_CASE(compqp_local_chunk),
	KUNIT_CASE(compqp_rewind),
	KUNIT_CASE(compqp_rewind_psn_wrap),
	KUNIT_CASE(compqp_rewind_read),
	KUNIT_CASE(compqp_rewind_atomic),
	KUNIT_CASE(compqp_nak_seq),
	KUNIT_CASE(compqp_loss_cut),
	KUNIT_CASE(compqp_flush_full_cq),
	KUNIT_CASE(compqp_fetch_window),
	KUNIT_CASE(compqp_swqe_grow),
	KUNIT_CASE(compqp_post_recv_hardirq),
	KUNIT_CASE(compqp_ack_clamp),
	KUNIT_CASE(compqp_ack_unsignaled_overflow),
	{}
};

/* One word after "sroce_": check.sh tells suites from cases that way. */
struct kunit_suite sroce_compqp_suite = {
	.name = "sroce_compqp",
	.init = fq_init,
	.exit = fq_exit,
	.test_cases = compqp_cases,
};
