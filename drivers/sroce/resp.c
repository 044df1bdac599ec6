// SPDX-License-Identifier: GPL-2.0
/*
 * The responder: requests in PSN order are executed (SEND into the next
 * receive WQE, WRITE into the MR the rkey names, READ queued as a response
 * job), duplicates are answered without executing them again (re-ACK, READ
 * replayed from the MR), a PSN ahead of the expected one gets one sequence
 * NAK until the gap closes, and a SEND with no receive WQE gets an RNR NAK.
 *
 * What goes back to the requester (ACKs, NAKs, READ responses) is queued in
 * PSN order in qp->resp.jobs and sent by the QP's transmit loop; an ACK queued
 * behind another ACK replaces it, which coalesces ACKs under load.
 */
#include <linux/if_vlan.h>

#include "sroce.h"
#include "trace.h"

/* The requests executed once and answered from their remembered result. */
static bool sroce_opcode_is_atomic(u8 op)
{
	return op == SROCE_OP_CMP_SWAP || op == SROCE_OP_FETCH_ADD ||
	       op == SROCE_OP_ATOMIC_WRITE || op == SROCE_OP_FLUSH;
}

/**
 * sroce_resp_classify() - where a request PSN stands
 * @epsn: the PSN the responder expects
 * @psn: the request's PSN
 *
 * Return: expected, duplicate (older) or ahead (a gap before it).
 */
enum sroce_psn_class sroce_resp_classify(u32 epsn, u32 psn)
{
	int d = sroce_psn_cmp(psn, epsn);

	if (!d)
		return SROCE_PSN_EXPECTED;
	return d < 0 ? SROCE_PSN_DUPLICATE : SROCE_PSN_AHEAD;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_classify);

/**
 * sroce_resp_opseq() - may @opcode follow what is in progress
 * @in_msg: SROCE_MSG_* in progress
 * @opcode: the request's opcode
 * @next: set to what is in progress after it
 *
 * Return: 0, or -EINVAL for an opcode out of sequence or not a request
 * this responder executes (answered with an invalid-request NAK).
 */
int sroce_resp_opseq(u8 in_msg, u8 opcode, u8 *next)
{
	switch (opcode & SROCE_OP_MASK) {
	case SROCE_OP_SEND_FIRST:
		*next = SROCE_MSG_SEND;
		return in_msg == SROCE_MSG_NONE ? 0 : -EINVAL;
	case SROCE_OP_SEND_MIDDLE:
		*next = SROCE_MSG_SEND;
		return in_msg == SROCE_MSG_SEND ? 0 : -EINVAL;
	case SROCE_OP_SEND_LAST:
	case SROCE_OP_SEND_LAST_IMM:
	case SROCE_OP_SEND_LAST_INV:
		*next = SROCE_MSG_NONE;
		return in_msg == SROCE_MSG_SEND ? 0 : -EINVAL;
	case SROCE_OP_WRITE_FIRST:
		*next = SROCE_MSG_WRITE;
		return in_msg == SROCE_MSG_NONE ? 0 : -EINVAL;
	case SROCE_OP_WRITE_MIDDLE:
		*next = SROCE_MSG_WRITE;
		return in_msg == SROCE_MSG_WRITE ? 0 : -EINVAL;
	case SROCE_OP_WRITE_LAST:
	case SROCE_OP_WRITE_LAST_IMM:
		*next = SROCE_MSG_NONE;
		return in_msg == SROCE_MSG_WRITE ? 0 : -EINVAL;
	case SROCE_OP_SEND_ONLY:
	case SROCE_OP_SEND_ONLY_IMM:
	case SROCE_OP_SEND_ONLY_INV:
	case SROCE_OP_WRITE_ONLY:
	case SROCE_OP_WRITE_ONLY_IMM:
	case SROCE_OP_READ_REQ:
	case SROCE_OP_CMP_SWAP:
	case SROCE_OP_FETCH_ADD:
	case SROCE_OP_ATOMIC_WRITE:
	case SROCE_OP_FLUSH:
		*next = SROCE_MSG_NONE;
		return in_msg == SROCE_MSG_NONE ? 0 : -EINVAL;
	}
	*next = in_msg;
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_opseq);

/**
 * sroce_resp_push() - queue a job for the responder to send
 * @qp: the QP; caller holds resp.lock
 * @j: the job, copied
 *
 * An ACK right behind an ACK replaces it.
 *
 * Return: false when the ring is full.
 */
bool sroce_resp_push(struct sroce_qp *qp, const struct sroce_rjob *j)
{
	u32 n = qp->resp.job_tail - qp->resp.job_head;

	lockdep_assert_held(&qp->resp.lock);
	if (n && j->type == SROCE_RJOB_ACK &&
	    j->syn == SROCE_AETH_ACK_UNLIMITED) {
		struct sroce_rjob *t = sroce_rjob_at(qp, qp->resp.job_tail - 1);

		if (t->type == SROCE_RJOB_ACK && t->syn == j->syn) {
			t->psn = j->psn;
			t->msn = j->msn;
			return true;
		}
	}
	if (n > qp->resp.jobs_mask)
		return false;
	*sroce_rjob_at(qp, qp->resp.job_tail) = *j;
	qp->resp.job_tail++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_push);

/**
 * sroce_resp_jobs_alloc() - a job ring and READ history, zeroed
 * @m: set to them
 * @max_dest_rd_atomic: what they are sized for
 *
 * Charged to the caller's memory cgroup.
 *
 * Return: 0 or -ENOMEM, with nothing allocated.
 */
int sroce_resp_jobs_alloc(struct sroce_rjobs_mem *m, u32 max_dest_rd_atomic)
{
	m->jobs = kvcalloc(sroce_rjobs_for(max_dest_rd_atomic),
			   sizeof(*m->jobs), GFP_KERNEL_ACCOUNT);
	m->hist = kvcalloc(max(max_dest_rd_atomic, 1U), sizeof(*m->hist),
			   GFP_KERNEL_ACCOUNT);
	if (m->jobs && m->hist)
		return 0;
	sroce_resp_jobs_free(m);
	return -ENOMEM;
}

/* Either may be NULL. */
void sroce_resp_jobs_free(struct sroce_rjobs_mem *m)
{
	kvfree(m->jobs);
	kvfree(m->hist);
	m->jobs = NULL;
	m->hist = NULL;
}

/**
 * sroce_resp_jobs_init() - give a new QP its job ring and history
 * @qp: the QP, not yet in use
 * @m: from sroce_resp_jobs_alloc(@max_dest_rd_atomic); the QP owns them
 * @max_dest_rd_atomic: what they are sized for
 */
void sroce_resp_jobs_init(struct sroce_qp *qp, struct sroce_rjobs_mem *m,
			  u32 max_dest_rd_atomic)
{
	qp->resp.jobs = m->jobs;
	qp->resp.jobs_mask = sroce_rjobs_for(max_dest_rd_atomic) - 1;
	qp->resp.rd_hist = m->hist;
	qp->resp.rd_hist_n = max(max_dest_rd_atomic, 1U);
	qp->resp.rd_hist_next = 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_jobs_init);

/**
 * sroce_resp_jobs_swap() - move the responder's jobs to a larger ring
 * @qp: the QP; caller holds resp.lock
 * @m: the new ring and history, from sroce_resp_jobs_alloc(); on return
 *	the old ones, for the caller to free once the lock is dropped
 * @max_dest_rd_atomic: what they are sized for, more than the present ring
 *
 * The jobs owed keep their positions, so their order, across the wrap;
 * the history keeps its requests, oldest first.
 */
void sroce_resp_jobs_swap(struct sroce_qp *qp, struct sroce_rjobs_mem *m,
			  u32 max_dest_rd_atomic)
{
	u32 n = sroce_rjobs_for(max_dest_rd_atomic), i, k;
	u32 hn = max(max_dest_rd_atomic, 1U);
	struct sroce_rjobs_mem old = { qp->resp.jobs, qp->resp.rd_hist };

	lockdep_assert_held(&qp->resp.lock);
	for (i = qp->resp.job_head; i != qp->resp.job_tail; i++)
		m->jobs[i & (n - 1)] = *sroce_rjob_at(qp, i);
	for (k = 0; k < qp->resp.rd_hist_n && k < hn; k++)
		m->hist[k] = qp->resp.rd_hist[(qp->resp.rd_hist_next + k) %
					      qp->resp.rd_hist_n];
	qp->resp.jobs = m->jobs;
	qp->resp.jobs_mask = n - 1;
	qp->resp.rd_hist = m->hist;
	qp->resp.rd_hist_n = hn;
	qp->resp.rd_hist_next = k % hn;
	*m = old;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_jobs_swap);

static void sroce_resp_ack(struct sroce_qp *qp, u8 syn, u32 psn)
{
	struct sroce_rjob j = {
		.type = SROCE_RJOB_ACK,
		.syn = syn,
		.psn = psn,
		.msn = qp->resp.msn,
	};

	if ((syn & SROCE_AETH_TYPE_MASK) == SROCE_AETH_NAK) {
		sroce_qp_count(qp, SROCE_CNT_TX_NAKS, 1);
		trace_sroce_nak(qp, true, syn, psn);
	} else if ((syn & SROCE_AETH_TYPE_MASK) == SROCE_AETH_RNR_NAK) {
		sroce_qp_count(qp, SROCE_CNT_TX_RNR_NAKS, 1);
		trace_sroce_nak(qp, true, syn, psn);
	}
	sroce_resp_push(qp, &j);
}

/* Keep a READ or atomic request's PSN range and result for its replays. */
static void sroce_resp_remember(struct sroce_qp *qp, u32 psn, u32 npkts,
				u64 orig, u8 atomic)
{
	typeof(qp->resp.rd_hist[0]) *h = &qp->resp.rd_hist[qp->resp.rd_hist_next];

	h->psn = psn;
	h->npkts = npkts;
	h->orig = orig;
	h->atomic = atomic;
	qp->resp.rd_hist_next = (qp->resp.rd_hist_next + 1) % qp->resp.rd_hist_n;
}

/* Copy the next receive WQE out of the RQ or the SRQ into qp->resp.rwqe. */
static int sroce_resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_srq *srq;
	bool limit_hit;
	u32 prod;
	int err;

	if (!qp->ibqp.srq) {
		prod = sroce_queue_prod(&qp->rq);
		if (qp->rq.cons == prod)
			return -EAGAIN;
		qp->resp.have_rwqe = true;
		return sroce_rwqe_copy(sroce_queue_slot(&qp->rq, qp->rq.cons),
				       &qp->resp.rwqe, qp->cap.max_recv_sge);
	}
	srq = to_ssrq(qp->ibqp.srq);
	err = sroce_srq_take(srq, &qp->resp.rwqe, &limit_hit);
	if (err != -EAGAIN)
		qp->resp.have_rwqe = true;
	if (limit_hit)
		sroce_srq_event(srq);
	return err;
}

/*
 * Hand the current receive WQE's slot back, then complete it (the slot
 * first: a consumer that polls the completion and posts again at once
 * must find the room). The WQE was copied out when it was taken.
 * Return: 0, or -ENOSPC when the receive CQ overflowed: the completion is
 * lost and the QP must go to ERR (IBTA: a CQ overrun is an error of the
 * QPs that complete into it), so that the sender is not told that a
 * message nobody will see was delivered.
 */
int sroce_resp_complete(struct sroce_qp *qp, struct sroce_wc *wc,
			bool solicited)
{
	int err;

	wc->wr_id = qp->resp.rwqe.wr_id;
	wc->qp_num = qp->ibqp.qp_num;
	if (!wc->src_qp)
		wc->src_qp = qp->dest_qpn;
	qp->resp.have_rwqe = false;
	qp->resp.rcv_off = 0;
	/* An SRQ's WQE left its ring when the QP took it. */
	if (!qp->ibqp.srq) {
		qp->rq.cons = sroce_q_next(qp->rq.cons, qp->rq.index_mask);
		sroce_queue_publish_cons(&qp->rq);
	}
	err = sroce_complete(qp, qp->ibqp.recv_cq, wc, solicited);
	if (err) {
		qp->resp.rwqe_failed = true;
		return -ENOSPC;
	}
	return 0;
}

void sroce_resp_fail_rwqe(struct sroce_qp *qp, enum ib_wc_status st)
{
	struct sroce_wc wc = { .status = st, .opcode = IB_WC_RECV };

	if (qp->resp.have_rwqe) {
		sroce_resp_complete(qp, &wc, true);
		qp->resp.rwqe_failed = true;
	}
}

/*
 * Get the receive WQE @pkt needs.
 * Return: 0; -EAGAIN when none is posted; -EBADMSG when @pkt is corrupt
 * (nothing consumed from an RQ); -EINVAL when the WQE was bad and has
 * completed in error.
 */
int sroce_resp_get_rwqe(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	int err = sroce_resp_take_rwqe(qp);

	if (!err)
		return 0;
	if (err == -EAGAIN)
		return sroce_pkt_icrc_ok(pkt) ? -EAGAIN : -EBADMSG;
	/*
	 * A bad WQE left in the RQ is looked at again for the next packet;
	 * one out of the SRQ is the QP's already and completes now.
	 */
	if (!qp->ibqp.srq && !sroce_pkt_icrc_ok(pkt)) {
		qp->resp.have_rwqe = false;
		return -EBADMSG;
	}
	sroce_resp_fail_rwqe(qp, IB_WC_LOC_LEN_ERR);
	return sroce_pkt_icrc_ok(pkt) ? -EINVAL : -EBADMSG;
}

/*
 * A local chunk (pkt->more_psns) carries that many path-MTU packets' worth;
 * one from a QP of another path MTU is never right (sroce_rx_local_psns()).
 */
static bool sroce_resp_paylen_ok(struct sroce_qp *qp, struct sroce_pkt *pkt,
				 bool last)
{
	u32 max = (pkt->more_psns + 1) * qp->pmtu;

	if (pkt->mtu_mismatch)
		return false;

	return last ? pkt->paylen <= max : pkt->paylen == max;
}

/*
 * Refuse a packet with NAK @syn and error @err, unless its ICRC is wrong:
 * a corrupt packet is dropped (-EBADMSG) and changes nothing.
 */
static int sroce_resp_nak(struct sroce_pkt *pkt, u8 *nak, u8 syn, int err)
{
	if (!sroce_pkt_icrc_ok(pkt))
		return -EBADMSG;
	*nak = syn;
	return err;
}

/* sroce_resp_get_rwqe() failed: RNR, or a bad receive WQE failed. */
static int sroce_resp_no_rwqe(u8 *nak, int err)
{
	if (err == -EINVAL)
		*nak = SROCE_AETH_NAK_REM_OP;
	return err;
}

/*
 * SEND and WRITE payload goes where QP state says (the receive WQE, or
 * the address the message's first packet gave): the copy carries the
 * ICRC check, and nothing is committed before it passes.
 */
int sroce_resp_send(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 *nak)
{
	struct sroce_copy c = { .skb = pkt->skb, .off = pkt->payoff,
				.to_mr = true, .qp = qp };
	u8 op = pkt->opcode & SROCE_OP_MASK;
	bool first = op == SROCE_OP_SEND_FIRST || op == SROCE_OP_SEND_ONLY ||
		     op == SROCE_OP_SEND_ONLY_IMM || op == SROCE_OP_SEND_ONLY_INV;
	bool inv = op == SROCE_OP_SEND_LAST_INV || op == SROCE_OP_SEND_ONLY_INV;
	bool last = op != SROCE_OP_SEND_FIRST && op != SROCE_OP_SEND_MIDDLE;
	u32 crc;
	int err;

	/* rcv_off also tracks a WRITE; a new SEND starts from zero. */
	if (first)
		qp->resp.rcv_off = 0;
	if (!qp->resp.have_rwqe) {
		err = sroce_resp_get_rwqe(qp, pkt);
		if (err)
			return sroce_resp_no_rwqe(nak, err);
	}
	if (!sroce_resp_paylen_ok(qp, pkt, last))
		return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_INVALID, -EINVAL);
	if (pkt->paylen > qp->resp.rwqe.length - qp->resp.rcv_off) {
		err = sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_INVALID, -EINVAL);
		if (err != -EBADMSG)
			sroce_resp_fail_rwqe(qp, IB_WC_LOC_LEN_ERR);
		return err;
	}
	c.crc = sroce_pkt_icrc_copy(pkt, &crc);
	err = sroce_sge_copy(qp->ibqp.pd, qp->resp.rwqe.sge, qp->resp.rwqe.num_sge,
			     qp->resp.rcv_off, pkt->paylen, IB_ACCESS_LOCAL_WRITE,
			     &c);
	if (sroce_resp_odp_miss(err))
		return sroce_pkt_icrc_ok(pkt) ? -EAGAIN : -EBADMSG;
	if (err) {
		err = sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_REM_OP, err);
		if (err != -EBADMSG)
			sroce_resp_fail_rwqe(qp, IB_WC_LOC_PROT_ERR);
		return err;
	}
	if (!sroce_pkt_icrc_placed(pkt, crc))
		return -EBADMSG;
	qp->resp.rcv_off += pkt->paylen;
	if (last) {
		struct sroce_wc wc = {
			.status = IB_WC_SUCCESS,
			.opcode = IB_WC_RECV,
			.byte_len = qp->resp.rcv_off,
		};

		if (op == SROCE_OP_SEND_LAST_IMM ||
		    op == SROCE_OP_SEND_ONLY_IMM) {
			wc.flags = IB_WC_WITH_IMM;
			wc.imm = pkt->imm;
		}
		/* The data is placed; the key goes before the completion. */
		if (inv) {
			if (sroce_invalidate(qp, pkt->ieth, true)) {
				*nak = SROCE_AETH_NAK_INVALID;
				sroce_resp_fail_rwqe(qp, IB_WC_REM_INV_REQ_ERR);
				return -EINVAL;
			}
			wc.flags = IB_WC_WITH_INVALIDATE;
			wc.inv_rkey = pkt->ieth;
		}
		if (sroce_resp_complete(qp, &wc, pkt->se)) {
			*nak = SROCE_AETH_NAK_REM_OP;
			return -ENOSPC;
		}
		qp->resp.msn++;
	}
	return 0;
}

/* Check that the QP and the MR or window an rkey names allow @need. */
static int sroce_resp_rkey_ok(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
			      int need)
{
	if (!(qp->access & need))
		return -EACCES;
	return sroce_rkey_check(qp, rkey, va, len, need);
}

int sroce_resp_write(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 *nak)
{
	struct sroce_copy c = { .skb = pkt->skb, .off = pkt->payoff,
				.to_mr = true, .qp = qp };
	u8 op = pkt->opcode & SROCE_OP_MASK;
	bool first = op == SROCE_OP_WRITE_FIRST || op == SROCE_OP_WRITE_ONLY ||
		     op == SROCE_OP_WRITE_ONLY_IMM;
	bool last = op != SROCE_OP_WRITE_FIRST && op != SROCE_OP_WRITE_MIDDLE;
	bool imm = op == SROCE_OP_WRITE_LAST_IMM ||
		   op == SROCE_OP_WRITE_ONLY_IMM;
	u32 crc;
	int err;

	/* The receive WQE an immediate consumes must be there first. */
	if (imm && !qp->resp.have_rwqe) {
		err = sroce_resp_get_rwqe(qp, pkt);
		if (err)
			return sroce_resp_no_rwqe(nak, err);
	}
	if (first) {
		u64 va = sroce_reth_va(&pkt->reth);
		u32 rkey = sroce_reth_rkey(&pkt->reth);
		u32 len = sroce_reth_len(&pkt->reth);

		if (len > (1U << 31))
			return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_INVALID,
					      -EINVAL);
		if (sroce_resp_rkey_ok(qp, rkey, va, len,
				       IB_ACCESS_REMOTE_WRITE))
			return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_REM_ACC,
					      -EACCES);
		qp->resp.wr_va = va;
		qp->resp.wr_rkey = rkey;
		qp->resp.wr_len = len;
		qp->resp.rcv_off = 0;
	}
	if (!sroce_resp_paylen_ok(qp, pkt, last) ||
	    pkt->paylen > qp->resp.wr_len - qp->resp.rcv_off ||
	    (last && qp->resp.rcv_off + pkt->paylen != qp->resp.wr_len))
		return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_INVALID, -EINVAL);
	c.crc = sroce_pkt_icrc_copy(pkt, &crc);
	if (pkt->paylen) {
		/* Looked up per packet: a deregistered MR stops the write. */
		err = sroce_rkey_copy(qp, qp->resp.wr_rkey,
				      qp->resp.wr_va + qp->resp.rcv_off, pkt->paylen,
				      IB_ACCESS_REMOTE_WRITE, &c);
		if (sroce_resp_odp_miss(err))
			return sroce_pkt_icrc_ok(pkt) ? -EAGAIN : -EBADMSG;
		if (err)
			return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_REM_ACC,
					      err);
	}
	if (!sroce_pkt_icrc_placed(pkt, crc))
		return -EBADMSG;
	qp->resp.rcv_off += pkt->paylen;
	if (last) {
		if (imm) {
			struct sroce_wc wc = {
				.status = IB_WC_SUCCESS,
				.opcode = IB_WC_RECV_RDMA_WITH_IMM,
				.byte_len = qp->resp.wr_len,
				.flags = IB_WC_WITH_IMM,
				.imm = pkt->imm,
			};

			if (sroce_resp_complete(qp, &wc, pkt->se)) {
				*nak = SROCE_AETH_NAK_REM_OP;
				return -ENOSPC;
			}
		}
		qp->resp.rcv_off = 0;
		qp->resp.msn++;
	}
	return 0;
}

static int sroce_resp_read(struct sroce_qp *qp, struct sroce_pkt *pkt,
			   u8 *nak)
{
	struct sroce_rjob j = {
		.type = SROCE_RJOB_READ,
		.psn = pkt->psn,
		.va = sroce_reth_va(&pkt->reth),
		.rkey = sroce_reth_rkey(&pkt->reth),
		.len = sroce_reth_len(&pkt->reth),
	};

	if (j.len > (1U << 31) ||
	    qp->resp.rd_pending >= qp->max_dest_rd_atomic) {
		*nak = SROCE_AETH_NAK_INVALID;
		return -EINVAL;
	}
	if (sroce_resp_rkey_ok(qp, j.rkey, j.va, j.len,
			       IB_ACCESS_REMOTE_READ)) {
		*nak = SROCE_AETH_NAK_REM_ACC;
		return -EACCES;
	}
	j.big = sroce_req_npkts(0, j.len, qp->pmtu) > SROCE_RD_CHUNK_MAX;
	qp->resp.msn++;
	j.msn = qp->resp.msn;
	if (!sroce_resp_push(qp, &j)) {
		*nak = SROCE_AETH_NAK_INVALID;
		return -EINVAL;
	}
	qp->resp.rd_pending++;
	qp->resp.rd_pace = sroce_rd_pace_next(qp->resp.rd_pace, qp->resp.rd_loss);
	qp->resp.rd_loss = false;
	sroce_resp_remember(qp, j.psn, sroce_req_npkts(0, j.len, qp->pmtu), 0,
			    0);
	return 0;
}

/*
 * CMP_SWAP and FETCH_ADD (answered by an ATOMIC ACKNOWLEDGE with the
 * value before) and ATOMIC WRITE (answered by an empty READ RESPONSE
 * ONLY). Each is executed once: its result is remembered for a replay.
 */
static int sroce_resp_atomic(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     u8 *nak)
{
	u8 op = pkt->opcode & SROCE_OP_MASK;
	struct sroce_rjob j = { .type = SROCE_RJOB_ATOMIC, .psn = pkt->psn };
	int need = IB_ACCESS_REMOTE_ATOMIC, err;
	u64 va, a, b = 0;
	u32 rkey;

	if (op == SROCE_OP_ATOMIC_WRITE) {
		va = sroce_reth_va(&pkt->reth);
		rkey = sroce_reth_rkey(&pkt->reth);
		need = IB_ACCESS_REMOTE_WRITE;
		if (sroce_reth_len(&pkt->reth) != sizeof(u64) ||
		    pkt->paylen != sizeof(u64) ||
		    skb_copy_bits(pkt->skb, pkt->payoff, &a, sizeof(a)))
			goto invalid;
		j.type = SROCE_RJOB_READ;
	} else {
		va = sroce_atmeth_va(&pkt->atmeth);
		rkey = sroce_atmeth_rkey(&pkt->atmeth);
		a = op == SROCE_OP_CMP_SWAP ? sroce_atmeth_comp(&pkt->atmeth) :
					      sroce_atmeth_swap_add(&pkt->atmeth);
		b = sroce_atmeth_swap_add(&pkt->atmeth);
	}
	if (qp->resp.rd_pending >= qp->max_dest_rd_atomic ||
	    (va & (sizeof(u64) - 1)))
		goto invalid;
	if (!(qp->access & need)) {
		*nak = SROCE_AETH_NAK_REM_ACC;
		return -EACCES;
	}
	err = sroce_rkey_atomic(qp, rkey, va, op, a, b, &j.va);
	if (sroce_resp_odp_miss(err))
		return -EAGAIN;
	if (err == -EFAULT)
		goto invalid;
	if (err) {
		*nak = SROCE_AETH_NAK_REM_ACC;
		return err;
	}
	qp->resp.msn++;
	j.msn = qp->resp.msn;
	/* Without room the requester's retry gets the remembered result. */
	if (sroce_resp_push(qp, &j))
		qp->resp.rd_pending++;
	sroce_resp_remember(qp, j.psn, 1, j.va, op);
	return 0;

invalid:
	*nak = SROCE_AETH_NAK_INVALID;
	return -EINVAL;
}

/**
 * sroce_flush_need() - the rights a FLUSH request needs
 * @plt: its placement type (FETH bits 3..0)
 * @sel: its selectivity level (FETH bits 5..4)
 *
 * Both the QP and the memory must allow each placement type asked for.
 *
 * Return: IB_ACCESS_FLUSH_* bits, or -EINVAL for a request that asks for
 * no type, an unknown type or an unknown level.
 */
int sroce_flush_need(u32 plt, u32 sel)
{
	int need = 0;

	if (!plt || (plt & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
	    (sel != SROCE_FLUSH_RANGE && sel != SROCE_FLUSH_MR))
		return -EINVAL;
	if (plt & SROCE_FLUSH_GLOBAL)
		need |= SROCE_ACCESS_FLUSH_GLOBAL;
	if (plt & SROCE_FLUSH_PERSISTENT)
		need |= SROCE_ACCESS_FLUSH_PERSISTENT;
	return need;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_flush_need);

/*
 * FLUSH: the requests before it were placed, in PSN order, before it runs,
 * by the CPU's own stores; a full barrier makes them globally visible,
 * which is what a global flush asks for. Persistence needs persistent
 * memory, which no MR here can have (the device does not offer it), so a
 * persistent flush fails the rights check. Answered by an empty READ
 * RESPONSE ONLY, executed once and remembered like an atomic.
 */
static int sroce_resp_flush(struct sroce_qp *qp, struct sroce_pkt *pkt,
			    u8 *nak)
{
	u32 sel = sroce_feth_sel(&pkt->feth);
	int need = sroce_flush_need(sroce_feth_plt(&pkt->feth), sel);
	struct sroce_rjob j = { .type = SROCE_RJOB_READ, .psn = pkt->psn };
	u32 len = sroce_reth_len(&pkt->reth);

	/* As rdma_rxe: a QP not enabled for the type refuses the request. */
	if (need < 0 || (qp->access & need) != need ||
	    qp->resp.rd_pending >= qp->max_dest_rd_atomic ||
	    len > (1U << 31)) {
		*nak = SROCE_AETH_NAK_INVALID;
		return -EINVAL;
	}
	/* The whole region: the key and its rights, no range. */
	if (sroce_rkey_rights(qp, sroce_reth_rkey(&pkt->reth),
			      sroce_reth_va(&pkt->reth),
			      sel == SROCE_FLUSH_MR ? 0 : len, need)) {
		*nak = SROCE_AETH_NAK_REM_ACC;
		return -EACCES;
	}
	/* Orders every earlier placement before the answer is queued. */
	smp_mb();
	qp->resp.msn++;
	j.msn = qp->resp.msn;
	/* Without room the requester's retry gets the remembered answer. */
	if (sroce_resp_push(qp, &j))
		qp->resp.rd_pending++;
	sroce_resp_remember(qp, j.psn, 1, 0, SROCE_OP_FLUSH);
	return 0;
}

/* READ responses per jiffy: first step after a loss, floor, ceiling. */
#define SROCE_RD_PACE_START	64
#define SROCE_RD_PACE_MIN	4
#define SROCE_RD_PACE_MAX	1024

/**
 * sroce_rd_pace_next() - the READ response pace after a request
 * @pace: packets per jiffy so far, 0 for unpaced
 * @loss: the requester asked again for part of a response (it lost some)
 *
 * A requester that only recovers lost READ responses by its ACK timer and
 * a new request (rdma_rxe does) cannot keep up with a burst of thousands
 * of responses, and its backlog of stale ones makes every retry lose
 * again. So a loss starts pacing, each further loss halves the pace, and a
 * READ request without a loss since the last one doubles it, back to
 * unpaced. A requester that asks for small parts (sroce does) is never
 * held up by it.
 *
 * Return: the new pace, 0 for unpaced.
 */
u16 sroce_rd_pace_next(u16 pace, bool loss)
{
	if (loss)
		return pace ? max_t(u16, pace / 2, SROCE_RD_PACE_MIN) :
			      SROCE_RD_PACE_START;
	if (!pace || pace >= SROCE_RD_PACE_MAX / 2)
		return 0;
	return pace * 2;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rd_pace_next);

/*
 * Whether a duplicate READ at @psn asks for the rest of an earlier request
 * rather than all of it. Its responses then continue that request
 * (MIDDLE..LAST), as a requester that kept the first part expects.
 */
static bool sroce_resp_read_mid(struct sroce_qp *qp, u32 psn)
{
	u32 i;

	for (i = 0; i < qp->resp.rd_hist_n; i++) {
		int d = sroce_psn_diff(psn, qp->resp.rd_hist[i].psn);

		if (d > 0 && d < qp->resp.rd_hist[i].npkts)
			return true;
	}
	return false;
}

/* A request at the expected PSN. Return: 0, -EAGAIN (RNR) or -errno. */
static int sroce_resp_execute(struct sroce_qp *qp, struct sroce_pkt *pkt,
			      u8 *nak)
{
	u8 op = pkt->opcode & SROCE_OP_MASK, next;
	int err;

	if (sroce_resp_opseq(qp->resp.in_msg, pkt->opcode, &next))
		return sroce_resp_nak(pkt, nak, SROCE_AETH_NAK_INVALID, -EINVAL);
	switch (op) {
	case SROCE_OP_READ_REQ:
		err = sroce_resp_read(qp, pkt, nak);
		break;
	case SROCE_OP_CMP_SWAP:
	case SROCE_OP_FETCH_ADD:
	case SROCE_OP_ATOMIC_WRITE:
		err = sroce_resp_atomic(qp, pkt, nak);
		break;
	case SROCE_OP_FLUSH:
		err = sroce_resp_flush(qp, pkt, nak);
		break;
	case SROCE_OP_WRITE_FIRST:
	case SROCE_OP_WRITE_MIDDLE:
	case SROCE_OP_WRITE_LAST:
	case SROCE_OP_WRITE_LAST_IMM:
	case SROCE_OP_WRITE_ONLY:
	case SROCE_OP_WRITE_ONLY_IMM:
		err = sroce_resp_write(qp, pkt, nak);
		break;
	default:
		err = sroce_resp_send(qp, pkt, nak);
		break;
	}
	if (err)
		return err;
	qp->resp.in_msg = next;
	qp->resp.nak_seq = false;
	if (op == SROCE_OP_READ_REQ) {
		u32 n = sroce_req_npkts(IB_WR_RDMA_READ,
					sroce_reth_len(&pkt->reth), qp->pmtu);

		qp->resp.epsn = sroce_psn_add(pkt->psn, n);
	} else if (sroce_opcode_is_atomic(op)) {
		/* Its response job is its ACK. */
		qp->resp.epsn = sroce_psn_add(pkt->psn, 1);
	} else {
		u32 last = sroce_psn_add(pkt->psn, pkt->more_psns);

		qp->resp.epsn = sroce_psn_add(last, 1);
		if (pkt->ackreq)
			sroce_resp_ack(qp, SROCE_AETH_ACK_UNLIMITED, last);
	}
	return 0;
}

/**
 * sroce_resp_replay() - queue the answer to a replayed READ or atomic
 * @qp: the QP; caller holds resp.lock
 * @j: the job answering it
 *
 * Go-back-N: the requester sends everything from its PSN again, so what
 * is queued from there on is answered afresh.
 */
void sroce_resp_replay(struct sroce_qp *qp, const struct sroce_rjob *j)
{
	u32 i;

	lockdep_assert_held(&qp->resp.lock);
	for (i = qp->resp.job_head; i != qp->resp.job_tail; i++) {
		struct sroce_rjob *q = sroce_rjob_at(qp, i);
		u32 end = q->psn;

		if (q->type == SROCE_RJOB_READ)
			end = sroce_psn_add(q->psn,
					    sroce_req_npkts(0, q->len,
							    qp->pmtu) - 1);
		if (sroce_psn_cmp(end, j->psn) >= 0)
			break;
	}
	while (qp->resp.job_tail != i) {
		qp->resp.job_tail--;
		if (sroce_rjob_at(qp, qp->resp.job_tail)->type != SROCE_RJOB_ACK)
			qp->resp.rd_pending--;
	}
	if (sroce_resp_push(qp, j))
		qp->resp.rd_pending++;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_replay);

/* The remembered result of atomic request @op at @psn, if still kept. */
static bool sroce_resp_recall(struct sroce_qp *qp, u32 psn, u8 op, u64 *orig)
{
	u32 i;

	for (i = 0; i < qp->resp.rd_hist_n; i++) {
		if (qp->resp.rd_hist[i].atomic == op && qp->resp.rd_hist[i].psn == psn) {
			*orig = qp->resp.rd_hist[i].orig;
			return true;
		}
	}
	return false;
}

/* An old PSN: answer it again, never execute it again. */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	u8 op = pkt->opcode & SROCE_OP_MASK;
	struct sroce_rjob j = {
		.type = SROCE_RJOB_READ,
		.psn = pkt->psn,
		.msn = qp->resp.msn,
	};

	sroce_qp_count(qp, SROCE_CNT_RX_DUPLICATES, 1);
	if (op == SROCE_OP_READ_REQ) {
		j.va = sroce_reth_va(&pkt->reth);
		j.rkey = sroce_reth_rkey(&pkt->reth);
		j.len = sroce_reth_len(&pkt->reth);
		if (j.len > (1U << 31) ||
		    sroce_resp_rkey_ok(qp, j.rkey, j.va, j.len,
				       IB_ACCESS_REMOTE_READ))
			return;
		j.big = sroce_req_npkts(0, j.len, qp->pmtu) > SROCE_RD_CHUNK_MAX;
		j.mid = sroce_resp_read_mid(qp, j.psn);
		if (j.mid) {
			qp->resp.rd_pace = sroce_rd_pace_next(qp->resp.rd_pace, true);
			qp->resp.rd_loss = true;
		}
		sroce_resp_replay(qp, &j);
		return;
	}
	if (sroce_opcode_is_atomic(op)) {
		/* Too old to be remembered: the requester gave up on it. */
		if (!sroce_resp_recall(qp, pkt->psn, op, &j.va))
			return;
		if (op != SROCE_OP_ATOMIC_WRITE && op != SROCE_OP_FLUSH)
			j.type = SROCE_RJOB_ATOMIC;
		sroce_resp_replay(qp, &j);
		return;
	}
	if (pkt->ackreq)
		sroce_resp_ack(qp, SROCE_AETH_ACK_UNLIMITED,
			       sroce_psn_add(qp->resp.epsn, -1));
}

/**
 * sroce_resp_rcv() - the responder's entry for a request packet
 * @qp: the QP it names
 * @pkt: the packet, ICRC checked
 */
void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	bool fail = false;
	u32 resets;
	u8 nak = 0;
	int err;

	spin_lock_bh(&qp->resp.lock);
	if (qp->state < IB_QPS_RTR || qp->state == IB_QPS_ERR ||
	    !sroce_pkt_from_peer(qp, pkt)) {
		spin_unlock_bh(&qp->resp.lock);
		return;
	}
	switch (sroce_resp_classify(qp->resp.epsn, pkt->psn)) {
	case SROCE_PSN_AHEAD:
		if (!sroce_pkt_icrc_ok(pkt))
			break;
		sroce_qp_count(qp, SROCE_CNT_RX_OUT_OF_SEQ, 1);
		if (!qp->resp.nak_seq) {
			qp->resp.nak_seq = true;
			sroce_resp_ack(qp, SROCE_AETH_NAK_PSN_SEQ, qp->resp.epsn);
		}
		break;
	case SROCE_PSN_DUPLICATE:
		if (sroce_pkt_icrc_ok(pkt))
			sroce_resp_duplicate(qp, pkt);
		break;
	case SROCE_PSN_EXPECTED:
		err = sroce_resp_execute(qp, pkt, &nak);
		if (err == -EBADMSG) {
			/* Corrupt: counted, dropped, nothing changed. */
		} else if (err == -EAGAIN) {
			sroce_resp_ack(qp, SROCE_AETH_RNR_NAK |
				       (qp->min_rnr_timer &
					SROCE_AETH_CREDIT_MASK), pkt->psn);
		} else if (err) {
			sroce_resp_ack(qp, nak, pkt->psn);
			fail = true;
		}
		break;
	}
	resets = qp->resets;
	spin_unlock_bh(&qp->resp.lock);
	if (fail) {
		sroce_qp_error(qp, resets);
		sroce_qp_run(qp);
	} else {
		sroce_qp_run_resp(qp);
	}
}

/* Forget every queued job and message in progress. Caller holds resp.lock. */
void sroce_resp_reset(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp.lock);
	qp->resp.job_head = 0;
	qp->resp.job_tail = 0;
	qp->resp.rd_pending = 0;
	qp->resp.rjob_last.len = 0;
	memset(qp->resp.rd_hist, 0,
	       qp->resp.rd_hist_n * sizeof(*qp->resp.rd_hist));
	qp->resp.rd_pace = 0;
	qp->resp.rd_loss = false;
	qp->resp.in_msg = SROCE_MSG_NONE;
	qp->resp.rcv_off = 0;
}
