// SPDX-License-Identifier: GPL-2.0
/*
 * The transmit loop: a QP's two send streams, the responder's (ACKs, NAKs,
 * READ responses, sroce_resp_next()) and the requester's (requests,
 * sroce_req_next()), each pulled packet by packet and handed to the
 * network (sroce_pkt_xmit(), or in batches, sroce_pkt_batch_xmit()).
 *
 * Packets are built under the stream's lock and sent after it is dropped,
 * by one context at a time per stream (SROCE_QP_RESP_RUNNING,
 * SROCE_QP_REQ_RUNNING), which keeps each stream in PSN order without
 * holding a lock across the network stack. That also lets a packet to a
 * local QP be delivered straight into its receive path, this QP's own
 * included.
 */
#include <linux/workqueue.h>

#include "sroce.h"

/* Packets one transmit pass sends before it yields to a worker. */
#define SROCE_TX_BUDGET		64
/*
 * The same from a softirq (a received packet, a timer): READ requests
 * answered there at the full budget (a NAPI poll of them) kept a debug
 * guest in softirq for minutes in a READ storm (an RCU stall; ib_cm's
 * work waited 100 s), and still at 16. Whatever is more than an ACK or a
 * small response goes on in the QP's worker, which the scheduler shares
 * with everything else (design.rst).
 */
#define SROCE_TX_BUDGET_SOFTIRQ	4

/*
 * How long a stream's packets may meet a full queue with none going out
 * before the stream takes its packet as lost and goes on, as after a loss
 * on the wire: a qdisc that drops every packet (a tc drop action looks
 * like a full queue) must not hold a stream, a UD or UC send queue, or a
 * READ response, for ever. A queue that drains sends something well
 * within it, even one that a slow emulated NIC empties at a few MB/s
 * while unpaced UD and UC senders fill it again (a bound of 8 jiffies
 * lost their messages there). An RC requester's ACK deadline runs
 * meanwhile (sroce_req_tx_dropped()).
 */
#define SROCE_TX_DROPS_FOR	(2 * HZ)

/*
 * The device dropped @psn's packet. Return: true when the stream went back
 * to it (to send it again a jiffy later), false when it is taken as lost.
 */
static bool sroce_tx_rewind(struct sroce_qp *qp, bool resp, u32 psn)
{
	unsigned long *since = resp ? &qp->tx_drops_resp : &qp->tx_drops_req;

	if (!*since) {
		*since = jiffies | 1;	/* 0: no drop in a row */
	} else if (time_after(jiffies, *since + SROCE_TX_DROPS_FOR)) {
		*since = 0;
		return false;
	}
	if (resp)
		sroce_resp_rewind(qp, psn);
	else
		sroce_req_tx_dropped(qp, psn);
	return true;
}

/* A packet went: the next drop is the first of a run again. */
static void sroce_tx_sent(struct sroce_qp *qp, bool resp)
{
	if (resp)
		qp->tx_drops_resp = 0;
	else
		qp->tx_drops_req = 0;
}

/*
 * Send the requester's batch; when the device dropped it, the stream goes
 * back to its first packet. Return: whether the batch went.
 */
static bool sroce_tx_flush(struct sroce_qp *qp, struct sroce_pkt_batch *b)
{
	u32 first = b->psn;

	if (!sroce_pkt_batch_xmit(qp, b)) {
		sroce_tx_sent(qp, false);
		return true;
	}
	return !sroce_tx_rewind(qp, false, first);
}

/*
 * One pass over one of the QP's two send streams: the responder's (ACKs,
 * NAKs, READ responses) or the requester's. The requester's packets go in
 * batches (sroce_pkt_batch_add()): what one pass builds for the wire goes
 * to the device with one notification, not one per packet. Not the
 * responder's: sroce_resp_rewind() finds only the READ response job in
 * hand, and a batch may end one job and begin the next.
 *
 * Return: -1 when the stream has nothing more to send, else the delay in
 * jiffies after which the worker goes on: 0 when the stream had more than
 * the budget, 1 when the device dropped a packet (the stream went back to
 * it). A packet dropped too many times in a row is lost instead, and the
 * pass goes on.
 */
static int sroce_tx_pass(struct sroce_qp *qp, bool resp, int budget)
{
	struct sroce_pkt_batch b = {};
	int sent, ret = 0;

	/*
	 * The packet after the budget is built and sent too: only then is
	 * it known that there is more, and a 64-packet message (64 KiB at
	 * IB MTU 1024) then ends its pass without a worker run for nothing.
	 */
	for (sent = 0; sent <= budget; sent++) {
		struct sk_buff *skb;
		u32 psn;

		skb = resp ? sroce_resp_next(qp, &psn) :
			     sroce_req_next(qp, &psn);
		if (!skb) {
			ret = -1;
			break;
		}
		if (!resp && sroce_pkt_batch_add(qp, &b, skb, psn))
			continue;
		/* Whatever cannot join goes after the batch, in PSN order. */
		if (b.n) {
			if (!sroce_tx_flush(qp, &b)) {
				/* Built again after the batch's first. */
				kfree_skb(skb);
				return 1;
			}
			if (sroce_pkt_batch_add(qp, &b, skb, psn))
				continue;
		}
		if (!sroce_pkt_xmit(qp, skb)) {
			sroce_tx_sent(qp, resp);
			continue;
		}
		if (sroce_tx_rewind(qp, resp, psn))
			return 1;
	}
	if (b.n && !sroce_tx_flush(qp, &b))
		return 1;
	return ret;
}

/*
 * Send what one stream has to send. One caller at a time owns a stream's
 * loop; a caller that finds it owned leaves a note that the owner picks up
 * before it lets go, so no work is lost.
 */
static void sroce_tx_stream(struct sroce_qp *qp, bool resp)
{
	int running = resp ? SROCE_QP_RESP_RUNNING : SROCE_QP_REQ_RUNNING;
	int again = resp ? SROCE_QP_RESP_AGAIN : SROCE_QP_REQ_AGAIN;
	int budget = SROCE_TX_BUDGET;
	int delay;

	if (in_serving_softirq()) {
		/*
		 * A worker queued for this QP sends what is here too: a
		 * softirq leaves the stream to it rather than take a pass of
		 * its own per packet received meanwhile.
		 */
		if (delayed_work_pending(&qp->tx_work))
			return;
		budget = SROCE_TX_BUDGET_SOFTIRQ;
	}
	set_bit(again, &qp->flags);
	/* The note is visible before we look for an owner. */
	smp_mb__after_atomic();
	if (test_and_set_bit_lock(running, &qp->flags))
		return;
	do {
		while (test_and_clear_bit(again, &qp->flags)) {
			delay = sroce_tx_pass(qp, resp, budget);
			if (delay >= 0) {
				clear_bit_unlock(running, &qp->flags);
				sroce_qp_schedule(qp, delay);
				return;
			}
		}
		clear_bit_unlock(running, &qp->flags);
		/* Letting go before looking for a late note; pairs with above. */
		smp_mb__after_atomic();
	} while (test_bit(again, &qp->flags) &&
		 !test_and_set_bit_lock(running, &qp->flags));
}

/**
 * sroce_qp_run() - send what the QP has to send
 * @qp: the QP
 *
 * Any context, no locks held. The responder's and the requester's streams
 * have an owner each (IBTA orders each stream by its own PSNs, not one
 * against the other), so an ACK owed to a peer never waits while another
 * context builds and delivers this QP's next request. A pass that uses up
 * its budget, or whose packet the device dropped, hands the rest to a
 * worker.
 */
void sroce_qp_run(struct sroce_qp *qp)
{
	sroce_tx_stream(qp, true);
	sroce_tx_stream(qp, false);
}

/**
 * sroce_qp_run_req() - send what the requester has to send
 * @qp: the QP
 *
 * As sroce_qp_run(), for a context that gave work to the requester alone
 * (a doorbell, an ACK that opened the window, a timer): looking at the
 * other stream would cost its lock and flag operations for nothing.
 */
void sroce_qp_run_req(struct sroce_qp *qp)
{
	sroce_tx_stream(qp, false);
}

/**
 * sroce_qp_run_resp() - send what the responder has to send
 * @qp: the QP
 *
 * As sroce_qp_run_req(), for the responder (a request received).
 */
void sroce_qp_run_resp(struct sroce_qp *qp)
{
	sroce_tx_stream(qp, true);
}

/* The QP's worker (qp->tx_work): what a pass left, or a deferred kick. */
void sroce_tx_work(struct work_struct *w)
{
	struct sroce_qp *qp = container_of(to_delayed_work(w), struct sroce_qp,
					   tx_work);

	sroce_qp_count(qp, SROCE_CNT_TX_WORK_RUNS, 1);
	local_bh_disable();
	sroce_qp_run(qp);
	local_bh_enable();
}
