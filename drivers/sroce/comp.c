// SPDX-License-Identifier: GPL-2.0
/*
 * The completer: ACKs, NAKs and READ responses from the responder turn into
 * send completions, in order. A positive ACK completes every WQE it covers;
 * READ responses are placed into the WQE's SGEs as they arrive, in PSN
 * order; a sequence NAK, a gap in READ responses or an ACK beyond an
 * unfinished READ (an implied NAK) sends the requester back; an RNR NAK
 * pauses it for the delay the responder asked for; the other NAKs, and
 * retries exhausted, complete the WQE in error and move the QP to ERR.
 * Runs under req.lock, from the receive path (softirq or a local transmit).
 */
#include "sroce.h"
#include "trace.h"

/**
 * sroce_comp_classify() - what an AETH syndrome asks of the requester
 * @syn: the syndrome
 * @st: set to the completion status for SROCE_ACK_FATAL
 *
 * Return: the action.
 */
enum sroce_ack_action sroce_comp_classify(u8 syn, enum ib_wc_status *st)
{
	switch (syn & SROCE_AETH_TYPE_MASK) {
	case SROCE_AETH_ACK:
		return SROCE_ACK_OK;
	case SROCE_AETH_RNR_NAK:
		return SROCE_ACK_RNR;
	case SROCE_AETH_NAK:
		switch (syn) {
		case SROCE_AETH_NAK_PSN_SEQ:
			return SROCE_ACK_RETRY;
		case SROCE_AETH_NAK_INVALID:
			*st = IB_WC_REM_INV_REQ_ERR;
			return SROCE_ACK_FATAL;
		case SROCE_AETH_NAK_REM_ACC:
			*st = IB_WC_REM_ACCESS_ERR;
			return SROCE_ACK_FATAL;
		case SROCE_AETH_NAK_REM_OP:
			*st = IB_WC_REM_OP_ERR;
			return SROCE_ACK_FATAL;
		}
	}
	return SROCE_ACK_IGNORE;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_comp_classify);

static enum ib_wc_opcode sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return (enum ib_wc_opcode)SROCE_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return (enum ib_wc_opcode)SROCE_WC_FLUSH;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	}
	return IB_WC_SEND;
}

/*
 * Complete the oldest WQE. Its ring slot is handed back before the
 * completion can be seen: a consumer that polls it and posts again at
 * once must find the room (a one-deep SQ, as perftest's rdma_cm control
 * QP has, saw a full ring otherwise).
 * Return: -EBUSY when its CQ overflowed.
 */
static int sroce_comp_one(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct sroce_swqe *w = sroce_swqe(qp, qp->sq.cons);
	struct sroce_wc wc;

	lockdep_assert_held(&qp->req.lock);
	if (sroce_wr_waits(w->opcode))
		qp->req.rd_outstanding -= w->rd_reqs - w->rd_answered;
	if (qp->req.cur == qp->sq.cons) {
		qp->req.cur = sroce_q_next(qp->req.cur, qp->sq.index_mask);
		qp->req.off = 0;
	}
	qp->sq.cons = sroce_q_next(qp->sq.cons, qp->sq.index_mask);
	sroce_queue_publish_cons(&qp->sq);
	/* w is the shadow copy: only sroce_req_fetch(), under req.lock, reuses it. */
	if (status == IB_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->flags & IB_SEND_SIGNALED))
		return 0;
	wc = (struct sroce_wc){
		.wr_id = w->wr_id,
		.status = status,
		.opcode = sroce_wc_opcode(w->opcode),
		.byte_len = w->length,
		.qp_num = qp->ibqp.qp_num,
	};
	return sroce_complete(qp, qp->ibqp.send_cq, &wc, false);
}

/* Complete the oldest WQE in error; the caller then calls sroce_qp_error(). */
static void sroce_comp_fail(struct sroce_qp *qp, enum ib_wc_status status)
{
	ibdev_info_ratelimited(&qp->sdev->ib,
			       "qp %#x: send queue failed: %s; QP to the error state\n",
			       qp->ibqp.qp_num, ib_wc_status_msg(status));
	if (qp->sq.cons != qp->req.head)
		sroce_comp_one(qp, status);
	qp->req.err = status;
}

/* PSN the oldest unfinished READ (or atomic) expects next. */
static u32 sroce_rd_expect(struct sroce_qp *qp, struct sroce_swqe *w)
{
	return sroce_psn_add(w->first_psn, w->rd_done / qp->pmtu);
}

/**
 * sroce_comp_ack() - everything up to @psn has arrived
 * @qp: the QP; caller holds req.lock
 * @psn: the newest PSN acknowledged
 * @implied: an ACK, not a response: reaching past a READ (or atomic) that
 *	     has not finished means its responses were lost
 *
 * Completes the WQEs @psn covers, in order, and moves una_psn up to the
 * first PSN still unanswered, never past req.psn. With @implied, a READ
 * left behind sends the requester back for it, once until a response
 * arrives in order (qp->req.rd_gap).
 *
 * Return: -EBUSY on a CQ overflow (the QP must go to ERR), else 0.
 */
int sroce_comp_ack(struct sroce_qp *qp, u32 psn, bool implied)
{
	u32 old = qp->req.una_psn, next = sroce_psn_add(psn, 1);
	int err = 0;

	lockdep_assert_held(&qp->req.lock);
	while (qp->sq.cons != qp->req.head) {
		struct sroce_swqe *w = sroce_swqe(qp, qp->sq.cons);

		if (w->bad || !w->started)
			break;
		if (sroce_wr_waits(w->opcode)) {
			if (w->done)
				goto complete;
			if (implied && !qp->req.rd_gap &&
			    sroce_psn_cmp(psn, w->first_psn) >= 0) {
				qp->req.rd_gap = true;
				sroce_req_rewind(qp, sroce_rd_expect(qp, w));
				sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ, 1);
				sroce_req_loss(qp, false);
			}
			if (sroce_psn_cmp(next, sroce_rd_expect(qp, w)) > 0)
				next = sroce_rd_expect(qp, w);
			break;
		}
		if (!w->sent || sroce_psn_cmp(w->last_psn, psn) > 0)
			break;
complete:
		/* Answered even though a rewind meant to send it again. */
		if (sroce_psn_cmp(qp->req.psn, w->last_psn) <= 0)
			qp->req.psn = sroce_psn_add(w->last_psn, 1);
		err = sroce_comp_one(qp, IB_WC_SUCCESS);
		if (err)
			return err;
	}
	if (sroce_psn_cmp(next, qp->req.una_psn) > 0)
		qp->req.una_psn = next;
	if (sroce_psn_cmp(qp->req.una_psn, qp->req.psn) > 0)
		qp->req.una_psn = qp->req.psn;
	if (qp->req.una_psn != old) {
		u32 acked = sroce_psn_diff(qp->req.una_psn, old);

		qp->req.cwnd = sroce_cwnd_grow(qp->req.cwnd, qp->req.ssthresh,
					       acked);
		if (qp->req.recovering &&
		    sroce_psn_cmp(qp->req.una_psn, qp->req.recover_psn) >= 0)
			qp->req.recovering = false;
		if (qp->req.rtt_on &&
		    sroce_psn_cmp(qp->req.una_psn, qp->req.rtt_psn) > 0) {
			s64 us = ktime_us_delta(ktime_get(), qp->req.rtt_start);

			qp->req.rtt_on = false;
			sroce_rtt_sample(&qp->req.rtt,
					 clamp_t(s64, us, 0, U32_MAX));
		}
		qp->req.backoff = 0;
		qp->req.retry_left = qp->retry_cnt;
		qp->req.rnr_left = qp->rnr_retry;
		sroce_req_arm_timer(qp);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_comp_ack);

/**
 * sroce_comp_nak_seq() - a PSN sequence error NAK: go back to @psn
 * @qp: the QP; caller holds req.lock
 * @psn: the PSN the responder expects
 *
 * Everything before @psn arrived, the request of a READ (or atomic) whose
 * responses are not all in included: those responses were lost, and the
 * requester goes back for them (an implied NAK) rather than to @psn, which
 * is past them and would leave them to the ACK timer. While they are asked
 * again, a NAK never moves the requester forward past that request.
 *
 * Return: as sroce_comp_ack().
 */
int sroce_comp_nak_seq(struct sroce_qp *qp, u32 psn)
{
	int err;

	lockdep_assert_held(&qp->req.lock);
	sroce_qp_count(qp, SROCE_CNT_RX_NAKS, 1);
	err = sroce_comp_ack(qp, sroce_psn_add(psn, -1), true);
	if (!err)
		sroce_req_loss(qp, false);
	if (!err && !(qp->req.rd_gap && sroce_psn_cmp(psn, qp->req.psn) > 0))
		sroce_req_rewind(qp, psn);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_comp_nak_seq);

/* The oldest WQE if it waits for a response, else NULL. */
static struct sroce_swqe *sroce_comp_waiting(struct sroce_qp *qp)
{
	struct sroce_swqe *w;

	if (qp->sq.cons == qp->req.head)
		return NULL;
	w = sroce_swqe(qp, qp->sq.cons);
	if (!sroce_wr_waits(w->opcode) || !w->started || w->done)
		return NULL;
	return w;
}

/*
 * A response that is not the one the oldest waiting WQE expects: beyond
 * it, the expected one was lost and the requester goes back for it at
 * once (only once until one arrives in order); before it, a duplicate.
 */
static void sroce_comp_unexpected(struct sroce_qp *qp, struct sroce_swqe *w,
				  u32 psn)
{
	if (sroce_psn_cmp(psn, sroce_rd_expect(qp, w)) > 0) {
		if (!qp->req.rd_gap) {
			qp->req.rd_gap = true;
			sroce_req_rewind(qp, sroce_rd_expect(qp, w));
			sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ, 1);
			sroce_req_loss(qp, false);
		}
	} else {
		sroce_qp_count(qp, SROCE_CNT_RX_DUPLICATES, 1);
	}
}

/*
 * A response at @psn acknowledges everything before it. Return: the
 * oldest WQE waiting for a response if @psn is the one it expects, else
 * NULL; ERR_PTR(-EBUSY) on a CQ overflow.
 */
static struct sroce_swqe *sroce_comp_responded(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *w;
	int err;

	err = sroce_comp_ack(qp, sroce_psn_add(psn, -1), false);
	if (err)
		return ERR_PTR(err);
	w = sroce_comp_waiting(qp);
	if (w && psn != sroce_rd_expect(qp, w)) {
		sroce_comp_unexpected(qp, w, psn);
		return NULL;
	}
	return w;
}

/* The one response of an atomic has arrived: it is done. */
static int sroce_comp_atomic_done(struct sroce_qp *qp, struct sroce_swqe *w,
				  u32 psn)
{
	w->done = 1;
	w->rd_answered = w->rd_reqs;
	qp->req.rd_outstanding--;
	qp->req.rd_gap = false;
	return sroce_comp_ack(qp, psn, false);
}

/*
 * An ATOMIC ACKNOWLEDGE: the original value goes into the WQE's first 8
 * bytes. Its ICRC was checked on receipt (rx.c): it is 8 bytes.
 *
 * Return: -errno to fail the QP.
 */
static int sroce_comp_atomic_ack(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_swqe *w;
	/* An ODP miss drops the response; the fault sends the request again. */
	struct sroce_copy c = { .to_mr = true, .qp = qp,
				.kick = SROCE_ODP_KICK_RESEND };
	u64 orig = sroce_atmack_orig(&pkt->atmack);
	int err;

	if ((sroce_aeth_syn(&pkt->aeth) & SROCE_AETH_TYPE_MASK) !=
	    SROCE_AETH_ACK)
		goto malformed;
	w = sroce_comp_responded(qp, pkt->psn);
	if (IS_ERR_OR_NULL(w))
		return PTR_ERR_OR_ZERO(w);
	if (w->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	    w->opcode != IB_WR_ATOMIC_FETCH_AND_ADD)
		goto malformed;
	c.buf = (u8 *)&orig;
	err = sroce_sge_copy(qp->ibqp.pd, w->sge, w->num_sge, 0, sizeof(orig),
			     IB_ACCESS_LOCAL_WRITE, &c);
	if (err == -EAGAIN || err == -ENOMEM)
		return 0;
	if (err)
		return -EACCES;
	return sroce_comp_atomic_done(qp, w, pkt->psn);

malformed:
	sroce_qp_count(qp, SROCE_CNT_RX_DROP_MALFORMED, 1);
	return 0;
}

/*
 * A READ response: placed if it is the one the oldest READ expects, with
 * the ICRC checked in the copy; anything else is checked first.
 *
 * Return: -errno to fail the QP.
 */
static int sroce_comp_read_resp(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_copy c = { .skb = pkt->skb, .off = pkt->payoff,
				.to_mr = true, .qp = qp,
				.kick = SROCE_ODP_KICK_RESEND };
	u8 op = pkt->opcode & SROCE_OP_MASK;
	/* A local chunk stands for this many path-MTU packets' bytes. */
	u32 span = (pkt->more_psns + 1) * qp->pmtu;
	struct sroce_swqe *w;
	u32 resid, end, crc;
	int err;

	w = sroce_comp_waiting(qp);
	if (w && w->opcode == IB_WR_RDMA_READ &&
	    pkt->psn == sroce_rd_expect(qp, w))
		goto place;
	if (!sroce_pkt_icrc_ok(pkt))
		return 0;
	w = sroce_comp_responded(qp, pkt->psn);
	if (IS_ERR_OR_NULL(w))
		return PTR_ERR_OR_ZERO(w);
	/* ATOMIC WRITE and FLUSH: answered by an empty READ RESPONSE ONLY. */
	if (w->opcode == SROCE_WR_ATOMIC_WRITE ||
	    w->opcode == SROCE_WR_FLUSH) {
		if (op != SROCE_OP_READ_RESP_ONLY || pkt->paylen)
			goto malformed;
		return sroce_comp_atomic_done(qp, w, pkt->psn);
	}
	if (w->opcode != IB_WR_RDMA_READ)
		goto malformed;
place:
	/* The responses to one request: FIRST..LAST, ONLY; MIDDLE..LAST
	 * for a request that asked for the rest of a chunk again.
	 */
	end = min(w->length, w->rd_done - w->rd_done % w->rd_chunk +
			      w->rd_chunk);
	resid = end - w->rd_done;
	/* A local chunk counted in another path MTU: sroce_rx_local_psns(). */
	if (pkt->mtu_mismatch)
		goto malformed;
	if (resid > span) {
		if ((op != SROCE_OP_READ_RESP_FIRST &&
		     op != SROCE_OP_READ_RESP_MIDDLE) ||
		    pkt->paylen != span)
			goto malformed;
	} else if ((op != SROCE_OP_READ_RESP_LAST &&
		    op != SROCE_OP_READ_RESP_ONLY) || pkt->paylen != resid) {
		goto malformed;
	}
	c.crc = sroce_pkt_icrc_copy(pkt, &crc);
	err = sroce_sge_copy(qp->ibqp.pd, w->sge, w->num_sge, w->rd_done,
			     pkt->paylen, IB_ACCESS_LOCAL_WRITE, &c);
	/* ODP: as if lost; the fault sends the request again. */
	if (err == -EAGAIN || err == -ENOMEM)
		return 0;
	if (err)
		return sroce_pkt_icrc_ok(pkt) ? -EACCES : 0;
	/* Rewritten by the retransmission if corrupt: nothing changes. */
	if (!sroce_pkt_icrc_placed(pkt, crc))
		return 0;
	w->rd_done += pkt->paylen;
	if (w->rd_done == end && w->rd_answered < w->rd_reqs) {
		w->rd_answered++;
		qp->req.rd_outstanding--;
	}
	qp->req.rd_gap = false;
	if (w->rd_done == w->length)
		w->done = 1;
	return sroce_comp_ack(qp, sroce_psn_add(pkt->psn, pkt->more_psns),
			      false);

malformed:
	if (sroce_pkt_icrc_ok(pkt))
		sroce_qp_count(qp, SROCE_CNT_RX_DROP_MALFORMED, 1);
	return 0;
}

/* An ACK or NAK. Return: -errno with *st set to fail the QP. */
static int sroce_comp_aeth(struct sroce_qp *qp, struct sroce_pkt *pkt,
			   enum ib_wc_status *st)
{
	u8 syn = sroce_aeth_syn(&pkt->aeth);
	u32 psn = pkt->psn;
	enum sroce_ack_action act;
	int err;

	act = sroce_comp_classify(syn, st);
	/* A NAK for a PSN already answered is stale (reordered): drop it. */
	if (act != SROCE_ACK_OK && sroce_psn_cmp(psn, qp->req.una_psn) < 0)
		return 0;
	if (act != SROCE_ACK_OK && act != SROCE_ACK_IGNORE)
		trace_sroce_nak(qp, false, syn, psn);
	switch (act) {
	case SROCE_ACK_OK:
		return sroce_comp_ack(qp, psn, true);
	case SROCE_ACK_RNR:
		sroce_qp_count(qp, SROCE_CNT_RX_RNR_NAKS, 1);
		err = sroce_comp_ack(qp, sroce_psn_add(psn, -1), false);
		if (err)
			return err;
		if (qp->rnr_retry != 7) {
			if (!qp->req.rnr_left) {
				*st = IB_WC_RNR_RETRY_EXC_ERR;
				return -EIO;
			}
			qp->req.rnr_left--;
		}
		qp->req.rnr_wait = true;
		qp->req.una_psn = psn;
		sroce_req_rewind(qp, psn);
		hrtimer_start(&qp->req.timer,
			      ns_to_ktime(sroce_rnr_timer_ns(syn &
							     SROCE_AETH_CREDIT_MASK)),
			      HRTIMER_MODE_REL_SOFT);
		return 0;
	case SROCE_ACK_RETRY:
		return sroce_comp_nak_seq(qp, psn);
	case SROCE_ACK_FATAL:
		sroce_qp_count(qp, SROCE_CNT_RX_NAKS, 1);
		err = sroce_comp_ack(qp, sroce_psn_add(psn, -1), false);
		return err ? err : -EIO;
	case SROCE_ACK_IGNORE:
		break;
	}
	return 0;
}

/**
 * sroce_comp_fail_head() - complete the oldest WQE in error, and the QP
 * @qp: the QP, no lock held
 *
 * The requester's call when it failed a WQE: the retries ran out
 * (qp->req.err) or the WQE did not validate (w->bad). Nothing happens if
 * neither holds any more (the QP left RTS meanwhile, say).
 */
void sroce_comp_fail_head(struct sroce_qp *qp)
{
	struct sroce_swqe *w;
	bool fail = false;
	u32 resets;

	spin_lock_bh(&qp->req.lock);
	if ((qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
	    qp->sq.cons != qp->req.head) {
		w = sroce_swqe(qp, qp->sq.cons);
		if (qp->req.err || w->bad) {
			sroce_comp_fail(qp, qp->req.err ? qp->req.err : w->bad);
			fail = true;
		}
	}
	resets = qp->resets;
	spin_unlock_bh(&qp->req.lock);
	if (fail)
		sroce_qp_error(qp, resets);
}

/**
 * sroce_comp_rcv() - the completer's entry for a packet
 * @qp: the QP
 * @pkt: an ACK, NAK, READ response or atomic ACK
 */
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	enum ib_wc_status st = IB_WC_GENERAL_ERR;
	bool fail = false;
	u32 resets;
	int err = 0;

	spin_lock_bh(&qp->req.lock);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		goto out;
	if (!sroce_pkt_from_peer(qp, pkt))
		goto out;
	/* A PSN never sent is not an answer to anything. */
	if (sroce_psn_cmp(pkt->psn, qp->req.max_psn) >= 0)
		goto out;
	switch (pkt->opcode & SROCE_OP_MASK) {
	case SROCE_OP_ACK:
		err = sroce_comp_aeth(qp, pkt, &st);
		break;
	case SROCE_OP_READ_RESP_FIRST:
	case SROCE_OP_READ_RESP_MIDDLE:
	case SROCE_OP_READ_RESP_LAST:
	case SROCE_OP_READ_RESP_ONLY:
		err = sroce_comp_read_resp(qp, pkt);
		if (err == -EACCES)
			st = IB_WC_LOC_PROT_ERR;
		break;
	case SROCE_OP_ATOMIC_ACK:
		err = sroce_comp_atomic_ack(qp, pkt);
		if (err == -EACCES)
			st = IB_WC_LOC_PROT_ERR;
		break;
	default:
		break;
	}
	if (err) {
		sroce_comp_fail(qp, err == -EBUSY ? IB_WC_GENERAL_ERR : st);
		fail = true;
	}
out:
	resets = qp->resets;
	spin_unlock_bh(&qp->req.lock);
	if (fail)
		sroce_qp_error(qp, resets);
	else
		sroce_qp_run_req(qp);
}

/**
 * sroce_comp_sent() - complete the oldest WQEs while they are done
 * @qp: the QP; caller holds req.lock
 *
 * UD and UC WQEs are done once sent, local WQEs (fast registration,
 * invalidation) once executed.
 */
void sroce_comp_sent(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);
	while (qp->sq.cons != qp->req.cur &&
	       sroce_swqe(qp, qp->sq.cons)->done)
		if (sroce_comp_one(qp, IB_WC_SUCCESS))
			break;
}

/**
 * sroce_comp_flush() - complete every send WQE with IB_WC_WR_FLUSH_ERR
 * @qp: the QP in ERR; caller holds req.lock
 *
 * WQEs user space queued but the kernel has not looked at yet are copied
 * out first, so each one gets its completion. When the send CQ is full
 * (overrun, an error the CQ's consumer is told of) the rest stay queued,
 * in order, for the next flush: the next send doorbell, or the QP's work,
 * which for a user QP watches it in ERR and for a kernel QP tries again
 * once the CQ has room (ib_drain_sq() posts its marker into a QP that may
 * already be held back, and then only polls). Dropping them would leave a
 * WR, that marker say, without its completion for good.
 */
void sroce_comp_flush(struct sroce_qp *qp)
{
	u32 done = 0;

	lockdep_assert_held(&qp->req.lock);
	/*
	 * Each completion frees a copy for the next WQE of the ring; one
	 * ring's worth a call, as user space may post meanwhile (its
	 * doorbell flushes the rest).
	 */
	while (qp->sq.cons != qp->req.head ||
	       (done <= qp->sq.index_mask && sroce_req_fetch(qp))) {
		struct sroce_swqe *w = sroce_swqe(qp, qp->sq.cons);
		struct sroce_wc wc = {
			.wr_id = w->wr_id,
			.status = IB_WC_WR_FLUSH_ERR,
			.opcode = sroce_wc_opcode(w->opcode),
			.qp_num = qp->ibqp.qp_num,
		};

		if (sroce_complete(qp, qp->ibqp.send_cq, &wc, false)) {
			sroce_qp_flush_later(qp);
			break;
		}
		qp->sq.cons = sroce_q_next(qp->sq.cons, qp->sq.index_mask);
		done++;
	}
	qp->req.cur = qp->sq.cons;
	qp->req.off = 0;
	qp->req.rd_outstanding = 0;
	sroce_queue_publish_cons(&qp->sq);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_comp_flush);
