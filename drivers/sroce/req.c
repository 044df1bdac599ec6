// SPDX-License-Identifier: GPL-2.0
/*
 * The requester: send WQEs copied out of the SQ ring and validated, then
 * turned into packets one at a time (segmented by the path MTU, PSNs
 * assigned), within a window of unacknowledged PSNs; go-back-N
 * retransmission from the oldest unacknowledged PSN on the ACK timer, a
 * sequence NAK, an RNR NAK's delay or a dropped transmit.
 *
 * Decisions that need no QP (opcode choice, packet counts, timer values)
 * are pure functions, tested by KUnit.
 */
#include <linux/crc32.h>
#include <linux/hrtimer.h>

#include "sroce.h"
#include "trace.h"

/* Ask for an ACK this often inside a long message. */
#define SROCE_ACK_EVERY		16
/* Fewest response packets one READ request on the wire asks for. */
#define SROCE_RD_CHUNK_MIN	16

/**
 * sroce_req_opcode() - the BTH opcode of one packet of a message
 * @wr_opcode: IB_WR_* of the WQE (SEND/WRITE variants, atomics)
 * @first: the packet carries the message's first byte
 * @last: the packet carries its last byte
 *
 * Return: the RC opcode, or 0xff for a WR opcode the requester does not
 * segment (READ requests are one packet and chosen by the caller).
 */
u8 sroce_req_opcode(u32 wr_opcode, bool first, bool last)
{
	switch (wr_opcode) {
	case IB_WR_SEND:
		if (first)
			return last ? SROCE_OP_SEND_ONLY : SROCE_OP_SEND_FIRST;
		return last ? SROCE_OP_SEND_LAST : SROCE_OP_SEND_MIDDLE;
	case IB_WR_SEND_WITH_IMM:
		if (first)
			return last ? SROCE_OP_SEND_ONLY_IMM :
				      SROCE_OP_SEND_FIRST;
		return last ? SROCE_OP_SEND_LAST_IMM : SROCE_OP_SEND_MIDDLE;
	case IB_WR_SEND_WITH_INV:
		if (first)
			return last ? SROCE_OP_SEND_ONLY_INV :
				      SROCE_OP_SEND_FIRST;
		return last ? SROCE_OP_SEND_LAST_INV : SROCE_OP_SEND_MIDDLE;
	case IB_WR_RDMA_WRITE:
		if (first)
			return last ? SROCE_OP_WRITE_ONLY :
				      SROCE_OP_WRITE_FIRST;
		return last ? SROCE_OP_WRITE_LAST : SROCE_OP_WRITE_MIDDLE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		if (first)
			return last ? SROCE_OP_WRITE_ONLY_IMM :
				      SROCE_OP_WRITE_FIRST;
		return last ? SROCE_OP_WRITE_LAST_IMM :
			      SROCE_OP_WRITE_MIDDLE;
	/* One packet each. */
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return SROCE_OP_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return SROCE_OP_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_OP_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return SROCE_OP_FLUSH;
	}
	return 0xff;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_opcode);

/**
 * sroce_ack_timeout_ns() - the local ACK timeout a QP asks for
 * @timeout: the QP attribute, 0..31
 *
 * Return: IBTA's 4.096 us * 2^@timeout in ns, the least a requester waits
 * (sroce_rto_ns() may wait longer); 0 (no timer) for @timeout 0.
 */
u64 sroce_ack_timeout_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	return 4096ULL << min_t(u8, timeout, 31);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_ack_timeout_ns);

/**
 * sroce_rtt_sample() - fold one measured round trip into the estimate
 * @r: the estimate
 * @us: the round trip, from a packet sent once to the ACK that covered it
 *
 * RFC 6298's smoothing: the mean moves an eighth of the way to the
 * sample, the deviation a quarter of the way to the sample's distance
 * from the mean; the first sample sets the mean, half of it the deviation.
 */
void sroce_rtt_sample(struct sroce_rtt *r, u32 us)
{
	u32 d;

	us = max(us, 1U);
	if (!r->srtt_us) {
		r->srtt_us = us;
		r->rttvar_us = us / 2;
		return;
	}
	d = us > r->srtt_us ? us - r->srtt_us : r->srtt_us - us;
	r->rttvar_us = r->rttvar_us - r->rttvar_us / 4 + d / 4;
	r->srtt_us = max(r->srtt_us - r->srtt_us / 8 + us / 8, 1U);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rtt_sample);

/**
 * sroce_rto_ns() - the ACK timer's period
 * @ibta_ns: the QP's own timeout (sroce_ack_timeout_ns()), not 0
 * @r: the round trips measured on the QP
 * @backoff: ACK timeouts in a row
 *
 * The longest of IBTA's value, which is the least a requester waits; the
 * measured round trip with four deviations, as TCP's retransmission timer
 * (RFC 6298), or SROCE_RTO_INIT_NS before one was measured; and
 * SROCE_RTO_MIN_NS. Software peers stall for much longer than a wire's
 * round trip without losing anything (a loaded host, a guest not
 * scheduled, a debug kernel under emulation). A timer shorter than the
 * stall sends the window again behind the answers on their way, and the
 * duplicates delay the next answer past the next expiry: in the debug
 * kernel under TCG perftest's 67 ms ran the retries out so. The measured
 * round trip grows with such a peer, and each timeout in a row doubles
 * the period (up to 2^SROCE_RTO_BACKOFF_MAX times) until an ACK comes;
 * on a fast path a lost tail costs the QP's own timeout, not a fixed
 * worst case.
 *
 * Return: the period in ns.
 */
u64 sroce_rto_ns(u64 ibta_ns, const struct sroce_rtt *r, u8 backoff)
{
	u64 est = SROCE_RTO_INIT_NS;

	if (r->srtt_us)
		est = ((u64)r->srtt_us + 4ULL * r->rttvar_us) * NSEC_PER_USEC;
	return max3(ibta_ns, est, SROCE_RTO_MIN_NS) <<
	       min_t(u8, backoff, SROCE_RTO_BACKOFF_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rto_ns);

/**
 * sroce_req_rto_ns() - the QP's ACK timer period now
 * @qp: the QP; caller holds req.lock
 *
 * Return: sroce_rto_ns() for the QP, 0 when it has no ACK timer.
 */
u64 sroce_req_rto_ns(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);
	if (!qp->req.timer_ns)
		return 0;
	return sroce_rto_ns(qp->req.timer_ns, &qp->req.rtt, qp->req.backoff);
}

/**
 * sroce_cwnd_grow() - the send window after PSNs were acknowledged
 * @cwnd: the window in PSNs, 0 for the whole SROCE_WINDOW
 * @ssthresh: the window at which growth slows, 0 before any loss
 * @acked: PSNs just acknowledged
 *
 * As TCP's (RFC 5681): below @ssthresh one more PSN in flight per PSN
 * acknowledged, so the window doubles each round trip (slow start); at
 * or above it one more per ACK that moves the window, so that a window
 * halved by a loss creeps back up to where the path lost packets, not
 * straight past it.
 *
 * Return: the new window, 0 once it reaches SROCE_WINDOW.
 */
u16 sroce_cwnd_grow(u16 cwnd, u16 ssthresh, u32 acked)
{
	u32 w;

	if (!cwnd || !acked)
		return cwnd;
	if (ssthresh && cwnd >= ssthresh)
		w = cwnd + 1;
	else
		w = min_t(u32, cwnd + acked, ssthresh ?: SROCE_WINDOW);
	return w >= SROCE_WINDOW ? 0 : w;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_cwnd_grow);

/**
 * sroce_cwnd_cut() - the send window after a loss
 * @win: the window in PSNs when the loss was seen
 * @timeout: the ACK timer expired, rather than a NAK or a gap showing it
 * @ssthresh: set to the window at which growth is to slow again
 *
 * Half the window is what the path is taken to hold from now on. A
 * timeout means nothing came back for a while: the peer, or the path, may
 * still hold what was sent, and sending a full window again would queue
 * behind it, so the window starts small and doubles back up to that half.
 * A NAK or a gap means the packets after the lost one arrived: go on at
 * half.
 *
 * Return: the new window, at least SROCE_WINDOW_MIN.
 */
u16 sroce_cwnd_cut(u32 win, bool timeout, u16 *ssthresh)
{
	*ssthresh = clamp_t(u32, win / 2, SROCE_WINDOW_MIN, SROCE_WINDOW / 2);
	return timeout ? SROCE_WINDOW_MIN : *ssthresh;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_cwnd_cut);

/**
 * sroce_wire_window() - unacknowledged PSNs to a peer across a wire
 * @pmtu: the path MTU in bytes
 *
 * SROCE_WINDOW_BYTES worth of packets, between SROCE_WINDOW_MIN and
 * SROCE_WINDOW: the most that the window (sroce_cwnd_grow()) may grow to.
 *
 * Return: the window in PSNs.
 */
u32 sroce_wire_window(u32 pmtu)
{
	return clamp_t(u32, SROCE_WINDOW_BYTES / max(pmtu, 1U),
		       SROCE_WINDOW_MIN, SROCE_WINDOW);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_wire_window);

/**
 * sroce_req_window() - unacknowledged PSNs the requester may have now
 * @qp: the QP; caller holds req.lock
 *
 * The window cut by a timeout, if it is, and sroce_wire_window() unless
 * the peer is in the same host, where no buffer on the way holds packets.
 *
 * Return: the window in PSNs.
 */
static u32 sroce_req_window(struct sroce_qp *qp)
{
	u32 w = qp->req.cwnd ?: SROCE_WINDOW;

	lockdep_assert_held(&qp->req.lock);
	return min_t(u32, w, qp->req.peer_local ? SROCE_WINDOW_LOCAL :
			     sroce_wire_window(qp->pmtu));
}

/**
 * sroce_req_loss() - a packet the requester sent, or its answer, was lost
 * @qp: the QP; caller holds req.lock
 * @timeout: the ACK timer expired (else a NAK or a gap in READ responses)
 *
 * Cuts the window (sroce_cwnd_cut()). One loss shows up as a NAK and
 * then as gaps behind it until the PSNs sent before the cut are
 * acknowledged: those cut the window once, not once each.
 */
void sroce_req_loss(struct sroce_qp *qp, bool timeout)
{
	lockdep_assert_held(&qp->req.lock);
	if (!timeout && qp->req.recovering)
		return;
	qp->req.cwnd = sroce_cwnd_cut(sroce_req_window(qp), timeout,
				      &qp->req.ssthresh);
	qp->req.recover_psn = qp->req.max_psn;
	qp->req.recovering = true;
	sroce_qp_count(qp, SROCE_CNT_WINDOW_CUTS, 1);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_loss);

/* IBTA table 45: RNR NAK timer field -> delay in us (code 0 is 655.36 ms). */
static const u32 sroce_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * sroce_rnr_timer_ns() - the delay an RNR NAK asks for
 * @code: the 5-bit timer field
 *
 * Return: nanoseconds.
 */
u64 sroce_rnr_timer_ns(u8 code)
{
	return (u64)sroce_rnr_us[code & 0x1f] * NSEC_PER_USEC;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rnr_timer_ns);

static bool sroce_wr_supported(struct sroce_qp *qp, u32 op)
{
	if (sroce_qp_is_ud(qp))
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM;
	if (qp->ibqp.qp_type == IB_QPT_UC)
		return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
		       op == IB_WR_RDMA_WRITE ||
		       op == IB_WR_RDMA_WRITE_WITH_IMM;
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SROCE_WR_ATOMIC_WRITE:
		return true;
	case SROCE_WR_FLUSH:
		/* The kernel's send WR has no FLUSH form: user QPs only. */
		return qp->user;
	}
	return false;
}

/*
 * Local WQEs: LOCAL_INV on any QP; fast registration only for kernel
 * consumers (the WR holds a pointer); window binds for user RC and UC QPs
 * (the kernel has no bind WR).
 */
static bool sroce_wr_local_ok(struct sroce_qp *qp, u32 op)
{
	switch (op) {
	case IB_WR_LOCAL_INV:
		return true;
	case IB_WR_REG_MR:
		return !qp->user;
	case IB_WR_BIND_MW:
		return qp->user && !sroce_qp_is_ud(qp);
	}
	return false;
}

/*
 * Copy one WQE out of the SQ ring and validate the copy. A WQE that fails
 * is kept with its error status and completes in error, in order.
 */
static void sroce_req_copy_wqe(struct sroce_qp *qp, u32 i)
{
	const struct rxe_send_wqe *u = sroce_queue_slot(&qp->sq, i);
	struct sroce_swqe *w = sroce_swqe(qp, i);
	const struct sroce_flush_uwr *fl;
	u32 num_sge, len, k;
	u64 sum = 0;

	memset(w, 0, sizeof(*w));
	w->wr_id = READ_ONCE(u->wr.wr_id);
	w->opcode = READ_ONCE(u->wr.opcode);
	w->flags = READ_ONCE(u->wr.send_flags) &
		   (IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED |
		    IB_SEND_INLINE);
	w->raddr = READ_ONCE(u->wr.wr.rdma.remote_addr);
	w->rkey = READ_ONCE(u->wr.wr.rdma.rkey);
	w->imm = READ_ONCE(u->wr.ex.imm_data);

	if (!sroce_wr_supported(qp, w->opcode) &&
	    !sroce_wr_local_ok(qp, w->opcode)) {
		w->bad = IB_WC_LOC_QP_OP_ERR;
		return;
	}
	switch (w->opcode) {
	case IB_WR_BIND_MW:
		w->bind.addr = READ_ONCE(u->wr.wr.mw.addr);
		w->bind.length = READ_ONCE(u->wr.wr.mw.length);
		w->bind.mr_lkey = READ_ONCE(u->wr.wr.mw.mr_lkey);
		w->bind.mw_rkey = READ_ONCE(u->wr.wr.mw.mw_rkey);
		w->bind.rkey = READ_ONCE(u->wr.wr.mw.rkey);
		w->bind.access = READ_ONCE(u->wr.wr.mw.access);
		return;
	case IB_WR_REG_MR:
		w->reg_mr = to_smr(u->wr.wr.reg.mr);
		w->rkey = u->wr.wr.reg.key;
		w->reg_access = u->wr.wr.reg.access;
		return;
	case IB_WR_LOCAL_INV:
	case IB_WR_SEND_WITH_INV:
		/* The key to invalidate travels in the IETH, not an RETH. */
		w->rkey = READ_ONCE(u->wr.ex.invalidate_rkey);
		if (w->opcode == IB_WR_LOCAL_INV)
			return;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->raddr = READ_ONCE(u->wr.wr.atomic.remote_addr);
		w->rkey = READ_ONCE(u->wr.wr.atomic.rkey);
		w->cmp_add = READ_ONCE(u->wr.wr.atomic.compare_add);
		w->swap = READ_ONCE(u->wr.wr.atomic.swap);
		/* The result goes to the SGE list, never inline. */
		w->flags &= ~IB_SEND_INLINE;
		break;
	case SROCE_WR_FLUSH:
		/*
		 * No data. As for rdma_rxe, the provider puts the address in
		 * iova and the length in dma.length; rkey, type and level in
		 * the wr union's FLUSH form.
		 */
		fl = (const struct sroce_flush_uwr *)&u->wr.wr;
		BUILD_BUG_ON(sizeof(*fl) > sizeof(u->wr.wr));
		w->raddr = READ_ONCE(u->iova);
		w->rkey = READ_ONCE(fl->rkey);
		w->flush_len = READ_ONCE(u->dma.length);
		w->flush_type = READ_ONCE(fl->type);
		w->flush_level = READ_ONCE(fl->level);
		w->flags &= ~IB_SEND_INLINE;
		return;
	case SROCE_WR_ATOMIC_WRITE:
		/* The 8 bytes are where inline data goes (dma.atomic_wr). */
		memcpy(&w->cmp_add, u->dma.inline_data, sizeof(w->cmp_add));
		w->length = sizeof(w->cmp_add);
		return;
	}
	if (sroce_qp_is_ud(qp)) {
		w->dqpn = READ_ONCE(u->wr.wr.ud.remote_qpn) & SROCE_QPN_MASK;
		w->qkey = READ_ONCE(u->wr.wr.ud.remote_qkey);
		/* A Q_Key with the high bit set means the QP's own. */
		if (w->qkey & 0x80000000)
			w->qkey = qp->qkey;
		if (!qp->user)
			memcpy(&w->av, &u->wr.wr.ud.av, sizeof(w->av));
		else if (sroce_ah_get_av(qp->sdev,
					 READ_ONCE(u->wr.wr.ud.ah_num),
					 qp->ibqp.pd, &w->av))
			w->bad = IB_WC_LOC_QP_OP_ERR;
		if (w->bad)
			return;
	}
	if (w->flags & IB_SEND_INLINE) {
		len = READ_ONCE(u->dma.length);
		if (w->opcode == IB_WR_RDMA_READ ||
		    len > qp->cap.max_inline_data ||
		    (sroce_qp_is_ud(qp) && len > qp->pmtu)) {
			w->bad = IB_WC_LOC_LEN_ERR;
			return;
		}
		w->inl = 1;
		w->length = len;
		memcpy(w->inline_data, u->dma.inline_data, len);
		return;
	}
	num_sge = READ_ONCE(u->dma.num_sge);
	if (num_sge > qp->cap.max_send_sge) {
		w->bad = IB_WC_LOC_LEN_ERR;
		return;
	}
	memcpy(w->sge, u->dma.sge, num_sge * sizeof(struct ib_sge));
	for (k = 0; k < num_sge; k++)
		sum += w->sge[k].length;
	/* A datagram is one packet; an atomic's result takes 8 bytes. */
	if (sum > (1ULL << 31) || (sroce_qp_is_ud(qp) && sum > qp->pmtu) ||
	    ((w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	      w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) && sum < sizeof(u64))) {
		w->bad = IB_WC_LOC_LEN_ERR;
		return;
	}
	w->num_sge = num_sge;
	w->length = sum;
}

/**
 * sroce_req_fetch() - copy the WQEs user space queued since the last look
 * @qp: the QP; caller holds req.lock
 *
 * As many as there are free copies (qp->swqe_mask + 1): the others are
 * copied when completions free some, or the copies grow, on a later call.
 *
 * Return: the number of WQEs copied.
 */
u32 sroce_req_fetch(struct sroce_qp *qp)
{
	u32 prod, n = 0;

	lockdep_assert_held(&qp->req.lock);

	prod = qp->user ? sroce_queue_prod(&qp->sq) : qp->sq.prod;
	/* A producer index that claims more than the ring holds is a lie. */
	if (sroce_q_count(prod, qp->sq.cons, qp->sq.index_mask) <
	    sroce_q_count(qp->req.head, qp->sq.cons, qp->sq.index_mask))
		return 0;
	while (qp->req.head != prod &&
	       sroce_q_count(qp->req.head, qp->sq.cons, qp->sq.index_mask) <=
	       qp->swqe_mask) {
		sroce_req_copy_wqe(qp, qp->req.head);
		qp->req.head = sroce_q_next(qp->req.head, qp->sq.index_mask);
		n++;
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_fetch);

/**
 * sroce_req_swqe_want() - the copies a user QP's posted WQEs call for
 * @qp: the QP; caller holds req.lock
 *
 * Return: a number of copies larger than the QP has, a power of two up to
 * qp->swqe_max, when more WQEs are posted and not complete than it has
 * copies; otherwise 0.
 */
u32 sroce_req_swqe_want(struct sroce_qp *qp)
{
	u32 n;

	lockdep_assert_held(&qp->req.lock);
	if (!qp->user || qp->swqe_mask + 1 >= qp->swqe_max)
		return 0;
	n = sroce_q_count(sroce_queue_prod(&qp->sq), qp->sq.cons,
			  qp->sq.index_mask);
	if (n <= qp->swqe_mask + 1)
		return 0;
	return min(qp->swqe_max, roundup_pow_of_two(n));
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_swqe_want);

/**
 * sroce_req_swqe_swap() - move the copies to a larger array
 * @qp: the QP; caller holds req.lock
 * @swqe: @n copies of qp->swqe_size bytes
 * @n: a power of two, more than the QP has and at most qp->swqe_max
 *
 * The copies from sq.cons to req.head keep their slots' indices.
 *
 * Return: the old array, for the caller to free once the lock is dropped.
 */
u8 *sroce_req_swqe_swap(struct sroce_qp *qp, u8 *swqe, u32 n)
{
	u8 *old = qp->swqe;
	u32 i;

	lockdep_assert_held(&qp->req.lock);
	for (i = qp->sq.cons; i != qp->req.head;
	     i = sroce_q_next(i, qp->sq.index_mask))
		memcpy(swqe + (size_t)(i & (n - 1)) * qp->swqe_size,
		       sroce_swqe(qp, i), qp->swqe_size);
	qp->swqe = swqe;
	qp->swqe_mask = n - 1;
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_swqe_swap);

/**
 * sroce_req_arm_timer() - the ACK timeout starts again from now
 * @qp: the QP; caller holds req.lock
 *
 * Called when something is sent with nothing outstanding, and when an ACK
 * moves the oldest unacknowledged PSN. The timer is lazy: starting and
 * cancelling an hrtimer per message costs more than the message under
 * emulation, so only the deadline moves here. A timer that fires early
 * goes back to sleep until the deadline (sroce_req_timer()); one that
 * finds nothing outstanding just stops.
 */
void sroce_req_arm_timer(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);
	/* An ACK moved the oldest PSN: from here on, its own deadline. */
	qp->req.keep_deadline = false;
	if (qp->req.rnr_wait || !qp->req.timer_ns || qp->dying ||
	    qp->req.una_psn == qp->req.psn)
		return;
	qp->req.ack_deadline = ktime_add_ns(ktime_get(), sroce_req_rto_ns(qp));
	if (!hrtimer_is_queued(&qp->req.timer))
		hrtimer_start(&qp->req.timer, qp->req.ack_deadline,
			      HRTIMER_MODE_ABS_SOFT);
}

/**
 * sroce_req_rewind() - go back to @psn and send everything from there again
 * @qp: the QP; caller holds req.lock
 * @psn: the oldest PSN to send again
 *
 * The requester's position (req.cur, req.off, req.psn) moves to the packet
 * at @psn, or to the first one of the oldest WQE not completed if @psn is
 * older; a READ is asked again only from its first byte not placed. A
 * @psn beyond every WQE started changes nothing.
 */
void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	u32 i;

	lockdep_assert_held(&qp->req.lock);
	/* A NAK's or the timer's: the resend may start the deadline again. */
	qp->req.keep_deadline = false;
	for (i = qp->sq.cons; i != qp->req.head;
	     i = sroce_q_next(i, qp->sq.index_mask)) {
		struct sroce_swqe *w = sroce_swqe(qp, i);
		u32 last;

		if (!w->started)
			break;
		/* Executed once, never again; it has no packets. */
		if (sroce_wr_local(w->opcode))
			continue;
		last = w->first_psn +
		       sroce_req_npkts(w->opcode, w->length, qp->pmtu) - 1;
		if (sroce_psn_cmp(psn, last & SROCE_PSN_MASK) > 0)
			continue;
		if (sroce_psn_cmp(psn, w->first_psn) < 0)
			psn = w->first_psn;
		qp->req.cur = i;
		if (w->opcode == IB_WR_RDMA_READ) {
			/* Ask again only for what has not arrived. */
			qp->req.off = w->rd_done;
			psn = sroce_psn_add(w->first_psn,
					    w->rd_done / qp->pmtu);
		} else {
			qp->req.off = sroce_psn_add(psn, -w->first_psn) *
				      qp->pmtu;
		}
		qp->req.psn = psn;
		sroce_qp_count(qp, SROCE_CNT_REWINDS, 1);
		return;
	}
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_rewind);

/**
 * sroce_req_tx_dropped() - the device dropped the requester's packet @psn
 * @qp: the QP; no QP lock held
 * @psn: the first PSN of what it dropped
 *
 * The stream goes back to @psn, to send it again shortly (tx.c), but the
 * ACK deadline stays where it was: a packet that is refused every time
 * must not postpone the timeout that ends the transfer.
 */
void sroce_req_tx_dropped(struct sroce_qp *qp, u32 psn)
{
	spin_lock_bh(&qp->req.lock);
	sroce_req_rewind(qp, psn);
	qp->req.keep_deadline = true;
	spin_unlock_bh(&qp->req.lock);
}

/**
 * sroce_rd_chunk_pkts() - response packets per READ request on the wire
 * @max_rd_atomic: READ requests the responder lets us have outstanding
 *
 * A large READ goes out as several requests, each for one chunk: a lost
 * response then costs one chunk again, not the rest of the message, and
 * a responder that answers a request in one burst (rdma_rxe does) never
 * sends more than SROCE_RD_CHUNK_MAX packets at once. The chunks of all
 * allowed requests together cover that much.
 *
 * Return: between SROCE_RD_CHUNK_MIN and SROCE_RD_CHUNK_MAX.
 */
u32 sroce_rd_chunk_pkts(u8 max_rd_atomic)
{
	return clamp_t(u32, SROCE_RD_CHUNK_MAX / max_t(u32, max_rd_atomic, 1),
		       SROCE_RD_CHUNK_MIN, SROCE_RD_CHUNK_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rd_chunk_pkts);

/* UD: one source port per QP pair, as for connected QPs. */
static u16 sroce_ud_sport(struct sroce_qp *qp, struct sroce_swqe *w)
{
	return rdma_flow_label_to_udp_sport(rdma_calc_flow_label(qp->ibqp.qp_num,
								 w->dqpn));
}

/*
 * Execute a local WQE (fast registration, local invalidation, window bind)
 * when the requester reaches it, in SQ order. It has no packets: it
 * completes with the packets before it, at once if they are all
 * acknowledged. Caller holds req.lock. Return: true when it failed and must
 * complete in error now.
 */
static bool sroce_req_local(struct sroce_qp *qp, struct sroce_swqe *w)
{
	enum ib_wc_status st = IB_WC_LOC_PROT_ERR;
	int err = 0;

	lockdep_assert_held(&qp->req.lock);

	if (!w->started) {
		if (w->opcode == IB_WR_REG_MR) {
			err = sroce_mr_fast_reg(qp->ibqp.pd, w->reg_mr, w->rkey,
						w->reg_access);
		} else if (w->opcode == IB_WR_BIND_MW) {
			err = sroce_mw_bind(qp, &w->bind);
			st = IB_WC_MW_BIND_ERR;
		} else {
			err = sroce_invalidate(qp, w->rkey, false);
		}
		w->started = 1;
		w->sent = 1;
		w->done = 1;
		w->first_psn = qp->req.psn;
		w->last_psn = sroce_psn_add(qp->req.psn, -1);
	}
	if (err) {
		w->bad = st;
		return qp->req.cur == qp->sq.cons;
	}
	qp->req.cur = sroce_q_next(qp->req.cur, qp->sq.index_mask);
	qp->req.off = 0;
	/* Completes now if everything before it has. */
	sroce_comp_sent(qp);
	return false;
}

/**
 * sroce_req_chunk() - the most payload the next packet of @w may carry
 * @qp: the QP; caller holds req.lock
 * @w: the WQE being sent
 *
 * The path MTU, or for an RC WRITE or SEND to a QP in this host (the last
 * packet's route stayed here) a chunk of up to SROCE_LOCAL_CHUNK bytes,
 * within the window. A chunk is one packet for the PSNs of the path-MTU
 * packets it replaces: the responder places it in one copy and answers
 * its last PSN, so PSNs, ACKs and rewinds are those of the packets it
 * stands for, while the fixed cost of a packet (skb, headers, lookups, a
 * pass through the receive path) is paid once. The packet counters and
 * the tracepoints see the one packet.
 *
 * Return: a multiple of the path MTU.
 */
u32 sroce_req_chunk(struct sroce_qp *qp, const struct sroce_swqe *w)
{
	int room;

	lockdep_assert_held(&qp->req.lock);
	if (!qp->req.peer_local || w->inl || sroce_qp_unacked(qp) ||
	    sroce_qp_is_ud(qp))
		return qp->pmtu;
	switch (w->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		break;
	default:
		return qp->pmtu;
	}
	room = sroce_req_window(qp) -
	       sroce_psn_diff(qp->req.psn, qp->req.una_psn);
	return clamp_t(int, room, 1, SROCE_LOCAL_CHUNK / qp->pmtu) * qp->pmtu;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_chunk);

/*
 * Build one packet of @w at req.off. Caller holds req.lock. Return: the
 * packet, or ERR_PTR(-ENOMEM) or a copy's error (sroce_sge_copy()).
 */
static struct sk_buff *sroce_req_build(struct sroce_qp *qp,
				       struct sroce_swqe *w, u32 *psnp)
{
	u32 psn = qp->req.psn, off = qp->req.off, paylen = 0, npkts = 1;
	bool first = !off, last = true, ackreq, chunk, ud = sroce_qp_is_ud(qp);
	bool unacked = sroce_qp_unacked(qp);
	u32 rlen = w->length - off;	/* RETH length */
	unsigned int hlen, pad = 0;
	struct sroce_copy c = {};
	struct sroce_bth *bth;
	struct sk_buff *skb;
	u8 *p, opcode;
	u32 crc;

	if (!w->started) {
		w->started = 1;
		w->first_psn = psn;
		w->rd_chunk = sroce_rd_chunk_pkts(qp->max_rd_atomic) * qp->pmtu;
	}
	if (w->opcode == IB_WR_RDMA_READ) {
		opcode = SROCE_OP_READ_REQ;
		/* Up to the end of this chunk; a rewind may start mid-chunk. */
		rlen = min(rlen, w->rd_chunk - off % w->rd_chunk);
		npkts = sroce_req_npkts(w->opcode, rlen, qp->pmtu);
		last = off + rlen == w->length;
		ackreq = true;
		if (off / w->rd_chunk >= w->rd_reqs) {
			w->rd_reqs = off / w->rd_chunk + 1;
			qp->req.rd_outstanding++;
		}
	} else if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		   w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		opcode = sroce_req_opcode(w->opcode, true, true);
		ackreq = true;
	} else if (w->opcode == SROCE_WR_FLUSH) {
		opcode = SROCE_OP_FLUSH;
		rlen = w->flush_len;
		ackreq = true;
	} else {
		paylen = min(sroce_req_chunk(qp, w), w->length - off);
		npkts = max(DIV_ROUND_UP(paylen, qp->pmtu), 1U);
		last = off + paylen == w->length;
		opcode = sroce_req_opcode(w->opcode, first, last);
		pad = sroce_pad_len(paylen);
		ackreq = last || npkts > 1 ||
			 !((sroce_psn_add(psn, -w->first_psn) + 1) %
			   SROCE_ACK_EVERY);
	}
	/* An atomic takes a responder resource, once. */
	if (w->opcode != IB_WR_RDMA_READ && sroce_wr_waits(w->opcode) &&
	    !w->rd_reqs) {
		w->rd_reqs = 1;
		qp->req.rd_outstanding++;
	}
	if (ud)
		opcode |= SROCE_TR_UD;
	else if (unacked)
		opcode |= SROCE_TR_UC;
	if (unacked)
		ackreq = false;
	hlen = sroce_opcode_hdr_len(opcode);
	skb = sroce_pkt_alloc(qp, ud ? &w->av : &qp->av,
			      ud ? sroce_ud_sport(qp, w) : qp->sport,
			      hlen + paylen + pad + SROCE_ICRC_LEN,
			      &qp->req.big_head);
	chunk = npkts > 1 && w->opcode != IB_WR_RDMA_READ;
	if (!skb && !chunk)
		return ERR_PTR(-ENOMEM);
	/*
	 * Whether the next packets may be chunks. This one is built again
	 * at the path MTU if its route left the host, or if there was no
	 * memory for its size (a path-MTU packet then sets the flag again).
	 */
	qp->req.peer_local = skb && sroce_pkt_is_local(skb);
	if (chunk && !qp->req.peer_local) {
		kfree_skb(skb);
		return sroce_req_build(qp, w, psnp);
	}
	bth = (struct sroce_bth *)skb->data;
	sroce_bth_init(bth, opcode,
		       last && (w->flags & IB_SEND_SOLICITED) &&
		       (w->opcode == IB_WR_SEND ||
			w->opcode == IB_WR_SEND_WITH_IMM ||
			w->opcode == IB_WR_RDMA_WRITE_WITH_IMM),
		       pad, SROCE_DEFAULT_PKEY, ud ? w->dqpn : qp->dest_qpn,
		       ackreq, psn);
	p = skb->data + sizeof(*bth);
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_FETH) {
		sroce_feth_init((struct sroce_feth *)p, w->flush_type,
				w->flush_level);
		p += sizeof(struct sroce_feth);
	}
	if (ud) {
		sroce_deth_init((struct sroce_deth *)p, w->qkey,
				qp->ibqp.qp_num);
		p += sizeof(struct sroce_deth);
	}
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_RETH) {
		sroce_reth_init((struct sroce_reth *)p, w->raddr + off, w->rkey,
				rlen);
		p += sizeof(struct sroce_reth);
	}
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_ATMETH) {
		sroce_atmeth_init((struct sroce_atmeth *)p, w->raddr, w->rkey,
				  w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
				  w->swap : w->cmp_add, w->cmp_add);
		p += sizeof(struct sroce_atmeth);
	}
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_IMM) {
		memcpy(p, &w->imm, sizeof(w->imm));
		p += sizeof(w->imm);
	}
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_IETH) {
		((struct sroce_ieth *)p)->rkey = cpu_to_be32(w->rkey);
		p += sizeof(struct sroce_ieth);
	}
	c.crc = sroce_pkt_icrc_start(skb, p, &crc);
	if (paylen) {
		c.buf = p;
		if (w->opcode == SROCE_WR_ATOMIC_WRITE || w->inl) {
			memcpy(p, w->inl ? w->inline_data + off :
			       (void *)&w->cmp_add, paylen);
			if (c.crc)
				crc = crc32_le(crc, p, paylen);
		} else {
			/* An ODP miss pauses the requester (odp.c). */
			c.qp = qp;
			c.kick = SROCE_ODP_KICK_REQ;
			/* Staying in the host (no ICRC): one copy, MR to MR. */
			if (!c.crc && !ud)
				c.ref = sroce_payref_start(skb, p);
			int err = sroce_sge_copy(qp->ibqp.pd, w->sge,
						 w->num_sge, off, paylen, 0,
						 &c);

			if (err) {
				kfree_skb(skb);
				return ERR_PTR(err);
			}
		}
		p += paylen;
	}
	sroce_pkt_icrc_end(skb, c.crc, pad);

	if (last) {
		w->last_psn = sroce_psn_add(psn, npkts - 1);
		w->sent = 1;
		w->done = unacked;
		qp->req.cur = sroce_q_next(qp->req.cur, qp->sq.index_mask);
		qp->req.off = 0;
	} else {
		qp->req.off += w->opcode == IB_WR_RDMA_READ ? rlen : paylen;
	}
	if (sroce_psn_cmp(psn, qp->req.max_psn) < 0) {
		sroce_qp_count(qp, SROCE_CNT_RETRANSMITS, 1);
		trace_sroce_retransmit(qp, psn);
		/* Karn: whose ACK answers a PSN sent twice is not known. */
		qp->req.rtt_on = false;
	} else if (!qp->req.rtt_on && qp->req.timer_ns &&
		   !sroce_qp_unacked(qp)) {
		/* One PSN timed at a time: a clock read per round trip. */
		qp->req.rtt_on = true;
		qp->req.rtt_psn = psn;
		qp->req.rtt_start = ktime_get();
	}
	qp->req.psn = sroce_psn_add(psn, npkts);
	if (sroce_psn_cmp(qp->req.psn, qp->req.max_psn) > 0)
		qp->req.max_psn = qp->req.psn;
	*psnp = psn;
	return skb;
}

/**
 * sroce_req_next() - the requester's next packet, if it may send one
 * @qp: the QP
 * @psn: set to the packet's PSN
 *
 * Return: the packet ready for sroce_pkt_xmit(), or NULL.
 */
struct sk_buff *sroce_req_next(struct sroce_qp *qp, u32 *psn)
{
	struct sk_buff *skb = NULL;
	struct sroce_swqe *w;
	bool fail = false;
	u32 copied = 0, n;
	int err = 0;

	spin_lock_bh(&qp->req.lock);
	/* A fault the completer dropped a response for is in (odp.c). */
	if (test_and_clear_bit(SROCE_QP_ODP_RESEND, &qp->flags) &&
	    qp->state == IB_QPS_RTS && !qp->req.rnr_wait)
		sroce_req_rewind(qp, qp->req.una_psn);
	/* UD, UC: what the last call handed out has gone; complete it. */
	if (sroce_qp_unacked(qp) &&
	    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD))
		sroce_comp_sent(qp);
	if (qp->state != IB_QPS_RTS || qp->req.rnr_wait || qp->req.odp_wait ||
	    qp->req.err)
		goto out;
again:
	/*
	 * What was posted since the last look, as far as completions have
	 * freed copies; one ring's worth a call at most, as local WQEs
	 * complete here and free copies at once, and user space may post
	 * more meanwhile: a doorbell's pass takes the rest.
	 */
	if (qp->req.cur == qp->req.head) {
		n = copied <= qp->sq.index_mask ? sroce_req_fetch(qp) : 0;
		if (!n)
			goto out;
		copied += n;
	}
	w = sroce_swqe(qp, qp->req.cur);
	if (w->bad) {
		/* Completes in order, once everything before it has. */
		if (qp->req.cur == qp->sq.cons)
			fail = true;
		goto out;
	}
	/* Nothing to acknowledge on UD and UC: done once sent. */
	if (sroce_qp_unacked(qp))
		qp->req.una_psn = qp->req.psn;
	if (!w->started && (w->flags & IB_SEND_FENCE) && qp->req.rd_outstanding)
		goto out;
	/* Local WQEs send nothing: the PSN window does not hold them up. */
	if (sroce_wr_local(w->opcode)) {
		fail = sroce_req_local(qp, w);
		if (!w->bad)
			goto again;
		goto out;
	}
	if (!sroce_qp_unacked(qp) &&
	    sroce_psn_diff(qp->req.psn, qp->req.una_psn) >=
	    sroce_req_window(qp))
		goto out;
	/*
	 * A READ request or an atomic not sent before needs a responder
	 * resource.
	 */
	if (sroce_wr_waits(w->opcode) &&
	    qp->req.rd_outstanding >= max_t(u32, qp->max_rd_atomic, 1) &&
	    (w->opcode == IB_WR_RDMA_READ ?
	     !w->started || qp->req.off / w->rd_chunk >= w->rd_reqs :
	     !w->rd_reqs))
		goto out;

	/*
	 * Where a response lands: ODP pages faulted in before it is asked
	 * (an SGE lookup each, skipped while the device has no ODP MR; one
	 * registered meanwhile is faulted in by the response's copy).
	 */
	if (!w->started && atomic_read(&qp->sdev->odp_mrs) &&
	    (w->opcode == IB_WR_RDMA_READ ||
	     w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD))
		err = sroce_sge_prefault(qp, w->sge, w->num_sge,
					 w->opcode == IB_WR_RDMA_READ ?
					 w->length : sizeof(u64));
	if (!err) {
		skb = sroce_req_build(qp, w, psn);
		if (IS_ERR(skb)) {
			err = PTR_ERR(skb);
			skb = NULL;
		}
	}
	if (err == -EAGAIN) {
		/* An ODP fault is on its way; it resumes the requester. */
		qp->req.odp_wait = true;
	} else if (err == -ENOMEM) {
		sroce_qp_schedule(qp, 1);
	} else if (err) {
		/* Bad lkey, foreign PD, no right or out of bounds. */
		w->bad = IB_WC_LOC_PROT_ERR;
		if (qp->req.cur == qp->sq.cons)
			fail = true;
	}
	if (skb && sroce_qp_unacked(qp)) {
		/*
		 * A UD or UC WQE completes once its last packet has gone: the
		 * caller's next call does it (first thing above), after
		 * sroce_pkt_xmit(). Completed now, a packet the device then
		 * refused could not be sent again (sroce_req_rewind() finds
		 * only WQEs not completed) and the message would be lost.
		 */
		qp->req.una_psn = qp->req.psn;
	} else if (skb && *psn == qp->req.una_psn &&
		   (!qp->req.keep_deadline ||
		    !hrtimer_is_queued(&qp->req.timer))) {
		/*
		 * The first outstanding packet: its ACK is due from now. Sent
		 * again after a local drop, only if no deadline is pending
		 * (the timer, firing, resent it and the resend was dropped).
		 */
		sroce_req_arm_timer(qp);
	}
out:
	spin_unlock_bh(&qp->req.lock);
	if (fail)
		sroce_comp_fail_head(qp);
	return skb;
}

/* The ACK timer, or the end of an RNR wait: go back N. Softirq. */
enum hrtimer_restart sroce_req_timer(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp, req.timer);
	enum ib_wc_status fail = IB_WC_SUCCESS;

	spin_lock(&qp->req.lock);
	/*
	 * Stale: while this waited for the lock, an RNR NAK or the transmit
	 * path queued the timer again (hrtimer_start() on a running timer);
	 * that expiry is the one that counts.
	 */
	if (hrtimer_is_queued(t) ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)) {
		spin_unlock(&qp->req.lock);
		return HRTIMER_NORESTART;
	}
	if (qp->req.rnr_wait) {
		qp->req.rnr_wait = false;
		sroce_req_rewind(qp, qp->req.una_psn);
	} else if (qp->req.una_psn != qp->req.psn) {
		/* ACKs or a new first packet moved the deadline meanwhile. */
		if (ktime_before(ktime_get(), qp->req.ack_deadline)) {
			hrtimer_set_expires(t, qp->req.ack_deadline);
			spin_unlock(&qp->req.lock);
			return HRTIMER_RESTART;
		}
		sroce_qp_count(qp, SROCE_CNT_TIMEOUTS, 1);
		if (!qp->req.retry_left) {
			fail = IB_WC_RETRY_EXC_ERR;
		} else {
			qp->req.retry_left--;
			if (qp->req.backoff < SROCE_RTO_BACKOFF_MAX)
				qp->req.backoff++;
			/*
			 * A peer slower than the timeout still holds what was
			 * sent; a full window again would queue behind it and
			 * time out again. Resend a little, grow on ACKs.
			 */
			sroce_req_loss(qp, true);
			sroce_req_rewind(qp, qp->req.una_psn);
		}
	} else {
		/* Everything was acknowledged since it was armed. */
		spin_unlock(&qp->req.lock);
		return HRTIMER_NORESTART;
	}
	if (fail != IB_WC_SUCCESS)
		qp->req.err = fail;
	spin_unlock(&qp->req.lock);

	if (fail != IB_WC_SUCCESS) {
		sroce_comp_fail_head(qp);
		return HRTIMER_NORESTART;
	}
	sroce_qp_run_req(qp);

	/*
	 * What was just sent again is unacknowledged too. The transmit path
	 * re-armed the timer if it ran here; if another context sends, do it
	 * now.
	 */
	spin_lock(&qp->req.lock);
	if (!hrtimer_is_queued(t) && qp->req.una_psn != qp->req.psn &&
	    qp->req.timer_ns && !qp->dying &&
	    !qp->req.rnr_wait && qp->state == IB_QPS_RTS) {
		qp->req.ack_deadline = ktime_add_ns(ktime_get(),
						    sroce_req_rto_ns(qp));
		hrtimer_set_expires(t, qp->req.ack_deadline);
		spin_unlock(&qp->req.lock);
		return HRTIMER_RESTART;
	}
	spin_unlock(&qp->req.lock);
	return HRTIMER_NORESTART;
}
