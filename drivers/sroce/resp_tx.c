// SPDX-License-Identifier: GPL-2.0
/*
 * The responder's send stream: the jobs resp.c queued in PSN order
 * (qp->resp.jobs: ACKs, NAKs, READ and atomic responses) built into packets one
 * at a time for the transmit loop (sroce_resp_next()), and the stream sent
 * again from a PSN when the device dropped a packet (sroce_resp_rewind()).
 * READ responses are paced after losses (qp->resp.rd_pace).
 */
#include "sroce.h"
#include <sroce/wire.h>

/*
 * Build the next packet of a READ job; NULL when its MR went away, an
 * ERR_PTR when it must wait (memory, an ODP fault). To a requester in the
 * same host (the last packet's route stayed here) the packet is a chunk of
 * up to SROCE_LOCAL_CHUNK bytes, as the requester's own are (req.c); the
 * requester's READ requests already hold the window for its PSNs.
 */
static struct sk_buff *sroce_resp_read_pkt(struct sroce_qp *qp,
					   struct sroce_rjob *j, u32 *psnp)
{
	u32 room = qp->resp.peer_local ?
		   SROCE_LOCAL_CHUNK / qp->pmtu * qp->pmtu : qp->pmtu;
	u32 paylen = min(room, j->len - j->off), pad, crc;
	bool first = !j->off && !j->mid, last = j->off + paylen == j->len;
	bool chunk = paylen > qp->pmtu;
	struct sroce_copy c = {};
	struct sk_buff *skb;
	unsigned int hlen;
	u8 opcode, *p;
	u32 psn;
	int err;

	if (first)
		opcode = last ? SROCE_OP_READ_RESP_ONLY :
				SROCE_OP_READ_RESP_FIRST;
	else
		opcode = last ? SROCE_OP_READ_RESP_LAST :
				SROCE_OP_READ_RESP_MIDDLE;
	psn = sroce_psn_add(j->psn, j->off / qp->pmtu);
	pad = sroce_pad_len(paylen);
	hlen = sroce_opcode_hdr_len(opcode);
	skb = sroce_pkt_alloc(qp, &qp->av, qp->sport,
			      hlen + paylen + pad + SROCE_ICRC_LEN,
			      &qp->resp.big_head);
	/* Built again at the path MTU if the route left, or no memory. */
	qp->resp.peer_local = skb && sroce_pkt_is_local(skb);
	if (chunk && !qp->resp.peer_local) {
		kfree_skb(skb);
		return sroce_resp_read_pkt(qp, j, psnp);
	}
	if (!skb)
		return ERR_PTR(-ENOMEM);
	sroce_bth_init((struct sroce_bth *)skb->data, opcode, 0, pad,
		       SROCE_DEFAULT_PKEY, qp->dest_qpn, 0, psn);
	p = skb->data + sizeof(struct sroce_bth);
	if (sroce_opcode_hdrs(opcode) & SROCE_HDR_AETH) {
		sroce_aeth_init((struct sroce_aeth *)p,
				SROCE_AETH_ACK_UNLIMITED, j->msn);
		p += sizeof(struct sroce_aeth);
	}
	c.buf = p;
	c.crc = sroce_pkt_icrc_start(skb, p, &crc);
	/* Staying in the host (no ICRC): one copy, MR to MR. */
	if (!c.crc)
		c.ref = sroce_payref_start(skb, p);
	/* An ODP miss keeps the job; the fault runs the QP again. */
	c.qp = qp;
	c.kick = SROCE_ODP_KICK_RUN;
	err = paylen ? sroce_rkey_copy(qp, j->rkey, j->va + j->off, paylen,
				       IB_ACCESS_REMOTE_READ, &c) : 0;
	if (err) {
		kfree_skb(skb);
		return sroce_resp_odp_miss(err) ? ERR_PTR(-EAGAIN) : NULL;
	}
	p += paylen;
	sroce_pkt_icrc_end(skb, c.crc, pad);
	j->off += paylen;
	*psnp = psn;
	return skb;
}

/* An ACK or NAK, or an ATOMIC ACKNOWLEDGE carrying the original value. */
static struct sk_buff *sroce_resp_ack_pkt(struct sroce_qp *qp,
					  const struct sroce_rjob *j)
{
	bool atomic = j->type == SROCE_RJOB_ATOMIC;
	u8 opcode = atomic ? SROCE_OP_ATOMIC_ACK : SROCE_OP_ACK;
	unsigned int hlen = sroce_opcode_hdr_len(opcode);
	struct sk_buff *skb;
	u8 *p;
	u32 crc;

	skb = sroce_pkt_alloc(qp, &qp->av, qp->sport, hlen + SROCE_ICRC_LEN,
			      NULL);
	if (!skb)
		return NULL;
	sroce_bth_init((struct sroce_bth *)skb->data, opcode, 0, 0,
		       SROCE_DEFAULT_PKEY, qp->dest_qpn, 0, j->psn);
	p = skb->data + sizeof(struct sroce_bth);
	sroce_aeth_init((struct sroce_aeth *)p,
			atomic ? SROCE_AETH_ACK_UNLIMITED : j->syn, j->msn);
	if (atomic)
		sroce_atmack_init((struct sroce_atmack *)
				  (p + sizeof(struct sroce_aeth)), j->va);
	sroce_pkt_icrc_end(skb, sroce_pkt_icrc_start(skb, skb->data + hlen, &crc),
			   0);
	return skb;
}

/*
 * Whether this jiffy's READ responses are used up; counts one if not. Only
 * a request for more than the window is paced: a requester that asks in
 * chunks (sroce does) recovers a loss without a timer and is never held
 * up.
 */
static bool sroce_resp_paced(struct sroce_qp *qp, const struct sroce_rjob *j)
{
	unsigned long now = jiffies;

	if (!qp->resp.rd_pace || !j->big)
		return false;
	if (qp->resp.rd_pace_tick != now) {
		qp->resp.rd_pace_tick = now;
		qp->resp.rd_pace_sent = 0;
	}
	if (qp->resp.rd_pace_sent >= qp->resp.rd_pace)
		return true;
	qp->resp.rd_pace_sent++;
	return false;
}

/**
 * sroce_resp_next() - the responder's next packet, in PSN order
 * @qp: the QP
 * @psn: set to the packet's PSN
 *
 * Return: a packet ready for sroce_pkt_xmit(), or NULL.
 */
struct sk_buff *sroce_resp_next(struct sroce_qp *qp, u32 *psn)
{
	struct sk_buff *skb = NULL;
	struct sroce_rjob *j;
	bool paced = false;

	spin_lock_bh(&qp->resp.lock);
	while (qp->resp.job_head != qp->resp.job_tail) {
		j = sroce_rjob_at(qp, qp->resp.job_head);
		if (j->type != SROCE_RJOB_READ) {
			skb = sroce_resp_ack_pkt(qp, j);
			if (!skb)
				break;
			*psn = j->psn;
			qp->resp.job_head++;
			if (j->type == SROCE_RJOB_ATOMIC)
				qp->resp.rd_pending--;
			break;
		}
		/* READ responses stop in ERR; ACKs and NAKs still go. */
		if (qp->state != IB_QPS_ERR) {
			paced = sroce_resp_paced(qp, j);
			if (paced)
				break;
			skb = sroce_resp_read_pkt(qp, j, psn);
			if (IS_ERR(skb)) {
				skb = NULL;
				break;
			}
		}
		if (skb && j->off < j->len)
			break;
		/* Done, or its MR went away: the requester will time out. */
		qp->resp.rjob_last = *j;
		qp->resp.job_head++;
		qp->resp.rd_pending--;
		if (skb)
			break;
	}
	spin_unlock_bh(&qp->resp.lock);
	if (paced)
		sroce_qp_schedule(qp, 1);
	return skb;
}

/* Whether @psn is one of the response packets of READ job @j. */
static bool sroce_rjob_covers(struct sroce_qp *qp, const struct sroce_rjob *j,
			      u32 psn)
{
	int d = sroce_psn_diff(psn, j->psn);

	return j->type == SROCE_RJOB_READ && d >= 0 &&
	       d < sroce_req_npkts(0, j->len, qp->pmtu);
}

/**
 * sroce_resp_rewind() - a READ response at @psn was dropped on the way out
 * @qp: the QP
 * @psn: its PSN; the job goes back there
 */
void sroce_resp_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_rjob *j;

	spin_lock_bh(&qp->resp.lock);
	if (qp->resp.job_head != qp->resp.job_tail) {
		j = sroce_rjob_at(qp, qp->resp.job_head);
		if (sroce_rjob_covers(qp, j, psn)) {
			j->off = sroce_psn_diff(psn, j->psn) * qp->pmtu;
			goto out;
		}
	}
	/* The last packet of the job before it (a dropped ACK is not). */
	j = &qp->resp.rjob_last;
	if (j->len && sroce_rjob_covers(qp, j, psn) &&
	    qp->resp.job_tail - qp->resp.job_head <= qp->resp.jobs_mask) {
		j->off = sroce_psn_diff(psn, j->psn) * qp->pmtu;
		qp->resp.job_head--;
		*sroce_rjob_at(qp, qp->resp.job_head) = *j;
		qp->resp.rd_pending++;
		j->len = 0;
	}
out:
	spin_unlock_bh(&qp->resp.lock);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resp_rewind);
