// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation with the SQ and RQ rings mapped into user space, the
 * IBTA state machine (transitions and attribute masks as ib_core's
 * ib_modify_qp_is_ok() defines them), the flush into FLUSH_ERR and the send
 * doorbell. The transmit loop is tx.c's.
 *
 * Concurrency: requester and completer state is under req.lock, responder
 * state under resp.lock; attributes are written under both and read under
 * either.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/route.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"
#include "trace.h"

/**
 * sroce_qp_ref_init() - give @qp the references its lookup entry holds
 * @qp: the QP, being created
 *
 * Return: 0 or -ENOMEM. Until sroce_qpn_alloc() publishes it, kfree()
 * undoes it; after, sroce_qp_unlist() and sroce_qp_quiesce().
 */
int sroce_qp_ref_init(struct sroce_qp *qp)
{
	qp->ref = kzalloc_obj(*qp->ref, GFP_KERNEL_ACCOUNT);
	if (!qp->ref)
		return -ENOMEM;
	refcount_set(&qp->ref->users, 1);
	init_completion(&qp->ref->idle);
	qp->ref->qp = qp;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_qp_ref_init);

/**
 * sroce_qpn_alloc() - give @qp a QP number and make it findable by it
 * @sdev: its device
 * @qp: the QP
 * @qpn: set to the number
 *
 * Numbers go round from 16 (0 and 1 are the special QPs, the rest below
 * 16 kept as other RNICs keep them) up to, not including, 0xffffff: that
 * one addresses a multicast group on the wire and can be no QP's own.
 *
 * Return: 0 or 1 (the numbers wrapped), or a negative errno.
 */
int sroce_qpn_alloc(struct sroce_dev *sdev, struct sroce_qp *qp, u32 *qpn)
{
	return xa_alloc_cyclic_bh(&sdev->qp_xa, qpn, qp->ref,
				  XA_LIMIT(16, SROCE_MCAST_QPN - 1),
				  &sdev->qp_next, GFP_KERNEL);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_qpn_alloc);

/**
 * sroce_qp_unlist() - take @qp out of the receive path's lookups
 * @sdev: its device
 * @qp: the QP, being destroyed
 */
void sroce_qp_unlist(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	xa_erase_bh(&sdev->qp_xa, qp->ibqp.qp_num);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_qp_unlist);

/**
 * sroce_qp_quiesce() - wait until nothing can touch an unlisted QP
 * @qp: the QP, unlisted
 *
 * Drops the creation reference and waits for the holders of the others.
 * A receive path may have loaded the QP's lookup entry before it was
 * erased and not yet taken its reference: it is inside an RCU read-side
 * section, and the entry, freed after a grace period, is still there for
 * it to find its count at zero. The QP itself it never reaches.
 */
void sroce_qp_quiesce(struct sroce_qp *qp)
{
	struct sroce_qp_ref *ref = qp->ref;

	sroce_qp_put(qp);
	wait_for_completion(&ref->idle);
	qp->ref = NULL;
	kfree_rcu(ref, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_qp_quiesce);

/* Flush the receive WQEs still posted. Caller holds resp.lock. */
static void sroce_rq_flush(struct sroce_qp *qp)
{
	struct sroce_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	u32 prod;

	lockdep_assert_held(&qp->resp.lock);

	/* One taken from an SRQ is the QP's; the rest stay for others. */
	if (qp->resp.have_rwqe) {
		wc.wr_id = qp->resp.rwqe.wr_id;
		sroce_complete(qp, qp->ibqp.recv_cq, &wc, false);
		qp->resp.have_rwqe = false;
		if (qp->rq.buf)
			qp->rq.cons = sroce_q_next(qp->rq.cons,
						   qp->rq.index_mask);
	}
	if (!qp->rq.buf)
		return;
	/*
	 * Pairs with the barrier in sroce_post_recv(): a receive posted as
	 * the QP went to ERR is flushed here or by its poster.
	 */
	smp_mb();
	prod = sroce_queue_prod(&qp->rq);
	while (qp->rq.cons != prod) {
		struct rxe_recv_wqe *w = sroce_queue_slot(&qp->rq, qp->rq.cons);

		wc.wr_id = READ_ONCE(w->wr_id);
		if (sroce_complete(qp, qp->ibqp.recv_cq, &wc, false)) {
			sroce_qp_flush_later(qp);
			break;
		}
		qp->rq.cons = sroce_q_next(qp->rq.cons, qp->rq.index_mask);
	}
	sroce_queue_publish_cons(&qp->rq);
}

static void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event e = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&e, qp->ibqp.qp_context);
}

/**
 * sroce_qp_error() - move a QP to the error state and flush it
 * @qp: the QP
 * @resets: qp->resets when the caller found the QP failed, read under
 *	    either of its locks
 *
 * Every outstanding send and receive WQE completes with
 * IB_WC_WR_FLUSH_ERR. Callers decide on a failure under one lock (and
 * complete the WQE that failed in error there) and call this after
 * dropping it, since it takes both; meanwhile the consumer may have seen
 * that completion and reset the QP, and perhaps connected it again. Such
 * a QP is not the one that failed: it is left as it is. Any context.
 */
void sroce_qp_error(struct sroce_qp *qp, u32 resets)
{
	bool ev;

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	if (qp->resets != resets) {
		spin_unlock(&qp->resp.lock);
		spin_unlock_bh(&qp->req.lock);
		return;
	}
	ev = qp->state != IB_QPS_ERR && qp->state != IB_QPS_RESET;
	if (qp->state != IB_QPS_ERR)
		trace_sroce_qp_state(qp, qp->state, IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	sroce_rq_flush(qp);
	if (qp->user && qp->rq.buf && !qp->dying) {
		set_bit(SROCE_QP_RQ_KICK, &qp->flags);
		mod_delayed_work(qp->sdev->wq, &qp->rq_err_work, 1);
	}
	spin_unlock(&qp->resp.lock);
	sroce_comp_flush(qp);
	spin_unlock_bh(&qp->req.lock);
	hrtimer_try_to_cancel(&qp->req.timer);

	if (ev) {
		sroce_qp_event(qp, IB_EVENT_QP_FATAL);
		if (qp->ibqp.srq)
			sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
}

/*
 * The rxe provider posts a receive without entering the kernel, so nothing
 * would flush one posted to a user QP already in ERR. While the QP stays in
 * ERR this looks at its RQ ring: at once, then less and less often, up to
 * every SROCE_ERR_POLL_MAX jiffies. After SROCE_ERR_POLL_FOR with nothing
 * new it stops and parks the QP on its receive CQ: a consumer waiting for
 * that CQ arms it (the provider's ibv_req_notify_cq enters the kernel),
 * and that, the send doorbell or a query of the QP polls again. So a QP
 * left in ERR costs nothing after a while, however many there are.
 */
#define SROCE_ERR_POLL_MAX	HZ
#define SROCE_ERR_POLL_FOR	(10 * HZ)

/* Park @qp on its receive CQ; caller holds its resp.lock. */
static void sroce_rq_err_park(struct sroce_qp *qp, struct sroce_cq *rcq)
{
	unsigned long irqf;

	lockdep_assert_held(&qp->resp.lock);
	irqf = sroce_cq_lock(rcq);
	if (list_empty(&qp->rq_parked))
		list_add_tail(&qp->rq_parked, &rcq->parked);
	sroce_cq_unlock(rcq, irqf);
}

static void sroce_rq_err_unpark(struct sroce_qp *qp, struct sroce_cq *rcq)
{
	unsigned long irqf = sroce_cq_lock(rcq);

	list_del_init(&qp->rq_parked);
	sroce_cq_unlock(rcq, irqf);
}

/**
 * sroce_qp_cq_armed() - a consumer armed a CQ: wake the QPs parked on it
 * @cq: the CQ
 *
 * Called after sroce_req_notify_cq(): the consumer is about to wait for
 * this CQ, so a receive it posted to a QP in ERR must be flushed into it.
 */
void sroce_qp_cq_armed(struct sroce_cq *cq)
{
	struct sroce_qp *qp, *tmp;
	unsigned long irqf;

	/* Only user QPs park, on user CQs: kernel consumers pay nothing. */
	if (!cq->user)
		return;
	/* Pairs with the one in sroce_rq_err_work(): see there. */
	smp_mb();
	if (list_empty(&cq->parked))
		return;
	irqf = sroce_cq_lock(cq);
	list_for_each_entry_safe(qp, tmp, &cq->parked, rq_parked) {
		list_del_init(&qp->rq_parked);
		set_bit(SROCE_QP_RQ_KICK, &qp->flags);
		mod_delayed_work(qp->sdev->wq, &qp->rq_err_work, 0);
	}
	sroce_cq_unlock(cq, irqf);
}

/* How often a kernel QP's flush that a full CQ held back tries again. */
#define SROCE_FLUSH_RETRY	max(HZ / 50, 1)

/**
 * sroce_qp_flush_later() - a flush of @qp stopped at a full CQ
 * @qp: the QP; caller holds req.lock or resp.lock
 *
 * A kernel consumer has no doorbell to call again (ib_drain_*() posts its
 * marker once, then polls), so the QP's work tries again every
 * SROCE_FLUSH_RETRY until the CQ has room and all is flushed. A user
 * QP's work watches it in ERR anyway.
 */
void sroce_qp_flush_later(struct sroce_qp *qp)
{
	/* Under either lock: destroy sets it under both, then cancels. */
	if (!qp->user && !READ_ONCE(qp->dying))
		mod_delayed_work(qp->sdev->wq, &qp->rq_err_work,
				 SROCE_FLUSH_RETRY);
}

/* A kernel QP in ERR: what a full CQ held back, and receives posted. */
static void sroce_qp_flush_kernel(struct sroce_qp *qp)
{
	struct sroce_cq *scq = to_scq(qp->ibqp.send_cq);
	struct sroce_cq *rcq = to_scq(qp->ibqp.recv_cq);

	spin_lock_bh(&qp->req.lock);
	if (qp->state == IB_QPS_ERR && !qp->dying &&
	    qp->sq.cons != qp->req.head) {
		if (sroce_cq_has_room(scq))
			sroce_comp_flush(qp);
		else
			sroce_qp_flush_later(qp);
	}
	spin_unlock_bh(&qp->req.lock);

	spin_lock_bh(&qp->resp.lock);
	if (qp->state == IB_QPS_ERR && !qp->dying && qp->rq.buf &&
	    qp->rq.cons != sroce_queue_prod(&qp->rq)) {
		if (sroce_cq_has_room(rcq))
			sroce_rq_flush(qp);
		else
			sroce_qp_flush_later(qp);
	}
	spin_unlock_bh(&qp->resp.lock);
}

/**
 * sroce_rq_err_work() - the work of a QP in ERR
 * @w: the QP's rq_err_work
 *
 * Flushes what a full CQ held back and, for a user QP, watches the RQ
 * ring (see above); for a kernel QP, the receives posted with interrupts
 * off (sroce_post_recv()).
 */
void sroce_rq_err_work(struct work_struct *w)
{
	struct sroce_qp *qp = container_of(to_delayed_work(w), struct sroce_qp,
					   rq_err_work);
	struct sroce_cq *rcq = to_scq(qp->ibqp.recv_cq);
	bool kick;
	u32 cons, prod;

	if (!qp->user) {
		sroce_qp_flush_kernel(qp);
		return;
	}
	kick = test_and_clear_bit(SROCE_QP_RQ_KICK, &qp->flags);

	/* Send WQEs a full CQ held back (sroce_comp_flush()). */
	spin_lock_bh(&qp->req.lock);
	if (qp->state == IB_QPS_ERR && !qp->dying &&
	    qp->sq.cons != qp->req.head)
		sroce_comp_flush(qp);
	spin_unlock_bh(&qp->req.lock);

	spin_lock_bh(&qp->resp.lock);
	if (kick) {
		sroce_rq_err_unpark(qp, rcq);
		qp->rq_err_delay = 1;
		qp->rq_err_last = jiffies;
	}
	if (qp->state != IB_QPS_ERR || qp->dying)
		goto out;
	cons = qp->rq.cons;
	prod = sroce_queue_prod(&qp->rq);
	sroce_rq_flush(qp);
	if (cons != qp->rq.cons) {
		qp->rq_err_delay = 1;
		qp->rq_err_last = jiffies;
	} else if (time_after(jiffies, qp->rq_err_last + SROCE_ERR_POLL_FOR)) {
		sroce_rq_err_park(qp, rcq);
		/*
		 * A receive posted after the flush above, then an arm that
		 * found nothing parked: look once more. The barrier pairs with
		 * the arm's: it sees this QP parked, or this sees the receive.
		 */
		smp_mb();
		if (sroce_queue_prod(&qp->rq) == prod)
			goto out;
		sroce_rq_err_unpark(qp, rcq);
		qp->rq_err_delay = 1;
		qp->rq_err_last = jiffies;
	} else {
		qp->rq_err_delay = min_t(unsigned long, 2 * qp->rq_err_delay,
					 SROCE_ERR_POLL_MAX);
	}
	mod_delayed_work(qp->sdev->wq, &qp->rq_err_work, qp->rq_err_delay);
out:
	spin_unlock_bh(&qp->resp.lock);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rq_err_work);

/* A verb on a user QP in ERR: look at its RQ ring again soon. */
static void sroce_rq_err_kick(struct sroce_qp *qp)
{
	if (qp->user && qp->rq.buf && READ_ONCE(qp->state) == IB_QPS_ERR &&
	    !READ_ONCE(qp->dying)) {
		set_bit(SROCE_QP_RQ_KICK, &qp->flags);
		mod_delayed_work(qp->sdev->wq, &qp->rq_err_work, 0);
	}
}

static size_t sroce_sq_elem(u32 max_sge, u32 max_inline)
{
	return sizeof(struct rxe_send_wqe) +
	       max_t(size_t, max_sge * sizeof(struct rxe_sge), max_inline);
}

static int sroce_qp_check_init(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *c = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:	/* QP1, for ib_core's MADs */
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (c->max_send_wr > SROCE_MAX_QP_WR ||
	    c->max_recv_wr > SROCE_MAX_QP_WR ||
	    c->max_send_sge > SROCE_MAX_SGE ||
	    c->max_recv_sge > SROCE_MAX_SGE ||
	    c->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int sroce_qp_queues(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct ib_ucontext *uc = uctx ? &uctx->ibuc : NULL;
	struct ib_qp_cap *c = &init->cap;
	struct rxe_create_qp_resp resp = {};
	struct sroce_queue_geom sg, rg;
	size_t avail;
	int err;

	err = sroce_queue_geom(max_t(u32, c->max_send_wr, 1),
			       sroce_sq_elem(c->max_send_sge,
					     c->max_inline_data),
			       SROCE_MAX_QP_WR, &sg);
	if (err)
		return err;
	/* With an SRQ there is no RQ; rq_mi stays zero. */
	if (init->srq) {
		c->max_recv_wr = 0;
		c->max_recv_sge = 0;
	} else {
		err = sroce_queue_geom(max_t(u32, c->max_recv_wr, 1),
				       sroce_recv_elem(c->max_recv_sge),
				       SROCE_MAX_QP_WR, &rg);
		if (err)
			return err;
	}

	/* Report what the slots really hold; the provider uses these. */
	avail = (1UL << sg.log2_elem) - sizeof(struct rxe_send_wqe);
	c->max_send_wr = sg.num_slots - 1;
	c->max_send_sge = min_t(size_t, SROCE_MAX_SGE,
				avail / sizeof(struct rxe_sge));
	c->max_inline_data = min_t(size_t, SROCE_MAX_INLINE, avail);
	if (!init->srq) {
		c->max_recv_wr = rg.num_slots - 1;
		c->max_recv_sge = sroce_recv_slot_sge(&rg);
	}

	qp->swqe_size = ALIGN(sizeof(struct sroce_swqe) +
			      max_t(size_t,
				    c->max_send_sge * sizeof(struct ib_sge),
				    c->max_inline_data), 8);
	qp->swqe_max = min_t(u32, sg.num_slots, SROCE_SWQE_WINDOW);
	/* A kernel QP may post with interrupts off: it cannot grow them. */
	qp->swqe_mask = (uc ? min_t(u32, qp->swqe_max, SROCE_SWQE_START) :
			 qp->swqe_max) - 1;
	qp->swqe = kvcalloc(qp->swqe_mask + 1, qp->swqe_size,
			    uc ? SROCE_GFP_USER : GFP_KERNEL);
	if (!qp->swqe)
		return -ENOMEM;

	err = sroce_queue_init(&qp->sq, uc, &sg);
	if (err)
		goto err_swqe;
	if (!init->srq) {
		err = sroce_queue_init(&qp->rq, uc, &rg);
		if (err)
			goto err_sq;
	}
	if (udata) {
		err = init->srq ? 0 : sroce_queue_mminfo(&qp->rq, &resp.rq_mi);
		if (!err)
			err = sroce_queue_mminfo(&qp->sq, &resp.sq_mi);
		if (!err)
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_rq;
	}
	qp->cap = *c;
	return 0;

err_rq:
	sroce_queue_free(&qp->rq);
err_sq:
	sroce_queue_free(&qp->sq);
err_swqe:
	kvfree(qp->swqe);
	return err;
}

/*
 * The CPU of a QP's worker, which sends its long messages
 * (sroce_post_send()): a PD's QPs take the CPUs in turn. Counting by QPN
 * instead put every QP of one process on one CPU whenever another process
 * created a QP between each two of them: perftest's client and server in
 * one guest, whose -q 4 then ran no faster than -q 1 in one round of five.
 */
static unsigned int sroce_qp_cpu(struct sroce_pd *pd)
{
	return cpumask_local_spread(atomic_inc_return(&pd->qp_seq),
				    NUMA_NO_NODE);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_rjobs_mem jobs = {};
	u32 qpn;
	int err;

	err = sroce_qp_check_init(init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(struct rxe_create_qp_resp))
		return -EINVAL;
	err = sroce_res_get(sdev, SROCE_RES_QP);
	if (err)
		return err;

	qp->sdev = sdev;
	qp->user = !!udata;
	INIT_LIST_HEAD(&qp->mw_list);
	spin_lock_init(&qp->req.lock);
	spin_lock_init(&qp->resp.lock);
	raw_spin_lock_init(&qp->rq_post_lock);
	INIT_DELAYED_WORK(&qp->tx_work, sroce_tx_work);
	INIT_DELAYED_WORK(&qp->rq_err_work, sroce_rq_err_work);
	INIT_LIST_HEAD(&qp->rq_parked);
	sroce_hrtimer_setup(&qp->req.timer, sroce_req_timer, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_SOFT);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->path_mtu = IB_MTU_256;
	qp->pmtu = 256;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_res;
	err = sroce_resp_jobs_alloc(&jobs, 0);
	if (err)
		goto err_dst;
	sroce_resp_jobs_init(qp, &jobs, 0);
	err = sroce_qp_ref_init(qp);
	if (err)
		goto err_jobs;

	err = sroce_qp_queues(qp, init, udata);
	if (err)
		goto err_ref;
	/*
	 * What a user QP allocates while it runs and keeps (its streams'
	 * pages for big packet heads, net.c) is charged to its creator.
	 */
	if (udata)
		qp->memcg = get_mem_cgroup_from_mm(current->mm);
	qp->serial = atomic64_inc_return(&sdev->qp_serial);

	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = udata ? -EINVAL : xa_insert_bh(&sdev->qp_xa, qpn, qp->ref,
						      GFP_KERNEL);
		qp->pmtu = ib_mtu_enum_to_int(sdev->active_mtu);
		qp->sport = rdma_flow_label_to_udp_sport(rdma_calc_flow_label(1,
									      1));
	} else {
		/* A datagram fits the port's MTU; UD has no path MTU. */
		if (init->qp_type == IB_QPT_UD)
			qp->pmtu = ib_mtu_enum_to_int(sdev->active_mtu);
		err = sroce_qpn_alloc(sdev, qp, &qpn);
	}
	if (err < 0)
		goto err_queues;
	ibqp->qp_num = qpn;
	qp->cpu = sroce_qp_cpu(to_spd(ibqp->pd));
	return 0;

err_queues:
	mem_cgroup_put(qp->memcg);
	sroce_queue_free(&qp->rq);
	sroce_queue_free(&qp->sq);
	kvfree(qp->swqe);
err_ref:
	kfree(qp->ref);
err_jobs:
	sroce_resp_jobs_free(&jobs);
err_dst:
	dst_cache_destroy(&qp->dst_cache);
err_res:
	sroce_res_put(sdev, SROCE_RES_QP);
	return err;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	WRITE_ONCE(qp->dying, true);
	qp->state = IB_QPS_ERR;
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);

	sroce_qp_unlist(sdev, qp);
	hrtimer_cancel(&qp->req.timer);
	cancel_delayed_work_sync(&qp->tx_work);
	/* Off the CQ's list first: arming the CQ would queue the work. */
	if (qp->user && qp->ibqp.recv_cq)
		sroce_rq_err_unpark(qp, to_scq(qp->ibqp.recv_cq));
	cancel_delayed_work_sync(&qp->rq_err_work);
	sroce_qp_quiesce(qp);
	/* A receive path that ran last may have re-armed either. */
	hrtimer_cancel(&qp->req.timer);
	cancel_delayed_work_sync(&qp->tx_work);
	sroce_mw_qp_gone(qp);

	sroce_queue_free(&qp->rq);
	sroce_queue_free(&qp->sq);
	kvfree(qp->swqe);
	kvfree(qp->resp.jobs);
	kvfree(qp->resp.rd_hist);
	dst_cache_destroy(&qp->dst_cache);
	sroce_big_head_free(&qp->req.big_head);
	sroce_big_head_free(&qp->resp.big_head);
	mem_cgroup_put(qp->memcg);
	sroce_res_put(sdev, SROCE_RES_QP);
	return 0;
}

/* Drop every send WQE in the ring, unread. Caller holds req.lock. */
static void sroce_sq_discard(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);
	qp->sq.cons = qp->user ? sroce_queue_prod(&qp->sq) : qp->sq.prod;
	qp->req.head = qp->sq.cons;
	sroce_queue_publish_cons(&qp->sq);
	qp->req.cur = qp->req.head;
	qp->req.off = 0;
}

/* Drop everything queued and return the QP to its created state. */
static void sroce_qp_reset_locked(struct sroce_qp *qp)
{
	qp->resets++;
	sroce_sq_discard(qp);
	qp->req.rd_outstanding = 0;
	qp->req.cwnd = SROCE_WINDOW_INIT;
	qp->req.ssthresh = 0;
	qp->req.recovering = false;
	qp->req.rtt = (struct sroce_rtt){};
	qp->req.rtt_on = false;
	qp->req.backoff = 0;
	qp->req.rnr_wait = false;
	qp->req.odp_wait = false;
	/* A fault that failed before the reset fails nothing after it. */
	clear_bit(SROCE_QP_ODP_ERR_REQ, &qp->flags);
	clear_bit(SROCE_QP_ODP_ERR_COMP, &qp->flags);
	clear_bit(SROCE_QP_ODP_ERR_RESP, &qp->flags);
	clear_bit(SROCE_QP_ODP_ERR_READ, &qp->flags);
	clear_bit(SROCE_QP_ODP_RESEND, &qp->flags);
	qp->req.rd_gap = false;
	qp->req.err = 0;

	sroce_resp_reset(qp);
	qp->resp.have_rwqe = false;
	if (qp->rq.buf) {
		qp->rq.cons = sroce_queue_prod(&qp->rq);
		sroce_queue_publish_cons(&qp->rq);
	}
	qp->resp.in_msg = 0;
	qp->resp.nak_seq = false;
	qp->resp.rcv_off = 0;
	qp->resp.msn = 0;
}

/**
 * sroce_qp_check_attr() - may @qp go from @cur to @next with these attributes
 * @qp: the QP (its type decides the transition table)
 * @a: the attributes
 * @mask: which of @a are given (IB_QP_*)
 * @cur: the state it is in
 * @next: the state asked for
 *
 * ib_core's transition table (ib_modify_qp_is_ok()), then sroce's own
 * limits on the values: port 1, the P_Key index, the RD atomic depths,
 * MTU, timers and counts in range, access flags sroce knows, no alternate
 * path or resize, and a RoCE v2 GID for the path.
 *
 * Return: 0 or -EINVAL.
 */
int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *a, int mask,
			enum ib_qp_state cur, enum ib_qp_state next)
{
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && a->pkey_index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (a->path_mtu < IB_MTU_256 || a->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	/*
	 * rdma-core's ODP tests give a QP its MR's flags, ON_DEMAND among
	 * them; rdma_rxe ignores what means nothing for a QP, so does sroce
	 * where it offers ODP.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_READ |
				    IB_ACCESS_REMOTE_ATOMIC |
				    IB_ACCESS_LOCAL_WRITE |
				    SROCE_ACCESS_FLUSH |
				    SROCE_ACCESS_ON_DEMAND)))
		return -EINVAL;
	/* No alternate paths on RoCE; no resizing through modify. */
	if (mask & (IB_QP_ALT_PATH | IB_QP_CAP))
		return -EINVAL;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *g;

		if (!(rdma_ah_get_ah_flags(&a->ah_attr) & IB_AH_GRH))
			return -EINVAL;
		g = rdma_ah_read_grh(&a->ah_attr);
		if (!g->sgid_attr ||
		    g->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
			return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_qp_check_attr);

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *a, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	enum ib_qp_state cur, next;
	struct sroce_rjobs_mem jobs = {};
	struct rxe_av av = {};
	bool flush = false;
	u32 resets, nhist = 0;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(&av, &a->ah_attr);
		if (err)
			return err;
	}
	/*
	 * A larger job ring and history, allocated before the locks and
	 * swapped in below; they never shrink.
	 */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic <= SROCE_MAX_QP_RD_ATOM) {
		nhist = max_t(u32, a->max_dest_rd_atomic, 1);
		if (nhist > READ_ONCE(qp->resp.rd_hist_n)) {
			if (sroce_resp_jobs_alloc(&jobs, nhist))
				return -ENOMEM;
		}
	}

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	cur = (mask & IB_QP_CUR_STATE) ? a->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? a->qp_state : cur;
	err = -EINVAL;
	if (qp->dying || cur != qp->state)
		goto out;
	err = sroce_qp_check_attr(qp, a, mask, cur, next);
	if (err)
		goto out;

	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = a->qp_access_flags;
	if (mask & IB_QP_QKEY)
		qp->qkey = a->qkey;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *g = rdma_ah_read_grh(&a->ah_attr);
		u32 fl = g->flow_label;

		qp->av = av;
		if (!fl)
			fl = rdma_calc_flow_label(ibqp->qp_num,
						  (mask & IB_QP_DEST_QPN) ?
						  a->dest_qp_num :
						  qp->dest_qpn);
		qp->sport = rdma_flow_label_to_udp_sport(fl);
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & IB_QP_PATH_MTU) {
		enum ib_mtu port_mtu;

		spin_lock(&sdev->port_lock);
		port_mtu = sdev->active_mtu;
		spin_unlock(&sdev->port_lock);
		qp->path_mtu = min(a->path_mtu, port_mtu);
		qp->pmtu = ib_mtu_enum_to_int(qp->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT) {
		qp->timeout = a->timeout;
		qp->req.timer_ns = sroce_ack_timeout_ns(a->timeout);
	}
	if (mask & IB_QP_RETRY_CNT) {
		qp->retry_cnt = a->retry_cnt;
		qp->req.retry_left = a->retry_cnt;
	}
	if (mask & IB_QP_RNR_RETRY) {
		qp->rnr_retry = a->rnr_retry;
		qp->req.rnr_left = a->rnr_retry;
	}
	if (mask & IB_QP_RQ_PSN)
		qp->resp.epsn = a->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN) {
		qp->req.psn = a->sq_psn & SROCE_PSN_MASK;
		qp->req.una_psn = qp->req.psn;
		qp->req.max_psn = qp->req.psn;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (jobs.jobs && nhist > qp->resp.rd_hist_n)
		sroce_resp_jobs_swap(qp, &jobs, nhist);
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = a->dest_qp_num & SROCE_QPN_MASK;

	if (next != cur) {
		if (next == IB_QPS_RESET)
			sroce_qp_reset_locked(qp);
		if (next == IB_QPS_ERR)
			flush = true;
		/*
		 * The provider writes a WQE into the ring before its doorbell
		 * is refused; a WR refused before RTS must never run.
		 */
		if (cur == IB_QPS_RTR && next == IB_QPS_RTS)
			sroce_sq_discard(qp);
		trace_sroce_qp_state(qp, cur, next);
		qp->state = next;
	}
	err = 0;
out:
	resets = qp->resets;
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);
	sroce_resp_jobs_free(&jobs);	/* the old ones, or new ones unused */
	if (flush) {
		sroce_qp_error(qp, resets);
		/* Nothing more will be taken from the SRQ for this QP. */
		if (qp->ibqp.srq)
			sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	} else if (!err && next == IB_QPS_RTS) {
		sroce_qp_run(qp);	/* SQD -> RTS resumes the SQ */
	}
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *a, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ib_global_route *g;

	memset(a, 0, sizeof(*a));
	memset(init, 0, sizeof(*init));
	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	a->qp_state = qp->state;
	a->cur_qp_state = qp->state;
	a->path_mtu = qp->path_mtu;
	a->path_mig_state = IB_MIG_MIGRATED;
	a->qkey = qp->qkey;
	a->rq_psn = qp->resp.epsn;
	a->sq_psn = qp->req.psn;
	a->dest_qp_num = qp->dest_qpn;
	a->qp_access_flags = qp->access;
	a->cap = qp->cap;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->port_num = 1;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a->ah_attr, 1);
	rdma_ah_set_ah_flags(&a->ah_attr, IB_AH_GRH);
	g = rdma_ah_retrieve_grh(&a->ah_attr);
	memcpy(g->dgid.raw, qp->av.grh.dgid.raw, sizeof(g->dgid.raw));
	g->flow_label = qp->av.grh.flow_label;
	g->sgid_index = qp->av.grh.sgid_index;
	g->hop_limit = qp->av.grh.hop_limit;
	g->traffic_class = qp->av.grh.traffic_class;
	memcpy(a->ah_attr.roce.dmac, qp->av.dmac, ETH_ALEN);
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	/*
	 * The owner asking after its QP (ibv_query_qp names attributes);
	 * not ib_core's nldev, which asks with no mask for every QP that
	 * any local user's `rdma resource show qp` lists.
	 */
	if (mask)
		sroce_rq_err_kick(qp);
	return 0;
}

/* What sroce_fill_res_qp_entry() reports, named as `rdma resource` shows it. */
struct sroce_qp_res {
	u32 una_psn, next_psn, max_psn, sq_wqes, rd_outstanding, rd_max,
	    rd_chunk, retry_left, rnr_left, rnr_wait, timer, srtt_us, rto_us,
	    rq_wqes, msn, resp_jobs, read_jobs, rd_dest_max, nak_seq, cpu;
};

#define SROCE_QP_RES(f, hex) SROCE_RES_FIELD(struct sroce_qp_res, f, hex)
static const struct sroce_res_field sroce_qp_res_fields[] = {
	SROCE_QP_RES(una_psn, true), SROCE_QP_RES(next_psn, true),
	SROCE_QP_RES(max_psn, true), SROCE_QP_RES(sq_wqes, false),
	SROCE_QP_RES(rd_outstanding, false), SROCE_QP_RES(rd_max, false),
	SROCE_QP_RES(rd_chunk, false), SROCE_QP_RES(retry_left, false),
	SROCE_QP_RES(rnr_left, false), SROCE_QP_RES(rnr_wait, false),
	SROCE_QP_RES(timer, false), SROCE_QP_RES(srtt_us, false),
	SROCE_QP_RES(rto_us, false), SROCE_QP_RES(rq_wqes, false),
	SROCE_QP_RES(msn, false), SROCE_QP_RES(resp_jobs, false),
	SROCE_QP_RES(read_jobs, false), SROCE_QP_RES(rd_dest_max, false),
	SROCE_QP_RES(nak_seq, false),
	SROCE_QP_RES(cpu, false),
};

/**
 * sroce_fill_res_qp_entry() - driver details of a QP for `rdma resource`
 * @msg: the netlink message ib_core builds
 * @ibqp: the QP
 *
 * What ``rdma resource show qp -dd`` adds to ib_core's own attributes
 * (state, type, the PSNs of query_qp): the requester's window (oldest
 * unacknowledged, next and highest PSN sent), its WQEs not yet complete,
 * READs and atomics outstanding, how many it may have (max_rd_atomic) and
 * the packets a READ request asks for, the retry and RNR budgets left, the
 * timer, the smoothed round trip and the timer's period now; the
 * responder's receive WQEs posted (none with an SRQ), its MSN, the READ
 * and ACK jobs queued, the READs it takes at once (max_dest_rd_atomic)
 * and whether a sequence NAK is outstanding; the CPU of the QP's worker.
 * A snapshot under both locks.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qp_res r = {};

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	r.una_psn = qp->req.una_psn;
	r.next_psn = qp->req.psn;
	r.max_psn = qp->req.max_psn;
	/* Copied or not yet (SROCE_SWQE_WINDOW): posted, not complete. */
	r.sq_wqes = ((qp->user ? sroce_queue_prod(&qp->sq) : qp->sq.prod) -
		     qp->sq.cons) & qp->sq.index_mask;
	r.rd_outstanding = qp->req.rd_outstanding;
	r.rd_max = qp->max_rd_atomic;
	r.rd_chunk = sroce_rd_chunk_pkts(qp->max_rd_atomic);
	r.retry_left = qp->req.retry_left;
	r.rnr_left = qp->req.rnr_left;
	r.rnr_wait = qp->req.rnr_wait;
	r.timer = hrtimer_active(&qp->req.timer);
	r.srtt_us = qp->req.rtt.srtt_us;
	r.rto_us = min_t(u64, div_u64(sroce_req_rto_ns(qp), NSEC_PER_USEC),
			 U32_MAX);
	if (qp->rq.buf)
		r.rq_wqes = (sroce_queue_prod(&qp->rq) - qp->rq.cons) &
			    qp->rq.index_mask;
	r.msn = qp->resp.msn;
	r.resp_jobs = qp->resp.job_tail - qp->resp.job_head;	/* tail produces */
	r.read_jobs = qp->resp.rd_pending;
	r.rd_dest_max = qp->max_dest_rd_atomic;
	r.nak_seq = qp->resp.nak_seq;
	r.cpu = qp->cpu;
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);

	return sroce_fill_res(msg, NULL, sroce_qp_res_fields,
			      ARRAY_SIZE(sroce_qp_res_fields), &r);
}

/* Write a kernel consumer's send WR into the SQ ring as the provider would. */
static int sroce_post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	struct rxe_send_wqe *w;
	u32 len;

	if (sroce_q_next(qp->sq.prod, qp->sq.index_mask) == qp->sq.cons)
		return -ENOMEM;
	if (wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	w = sroce_queue_slot(&qp->sq, qp->sq.prod);
	memset(w, 0, sizeof(*w));
	w->wr.wr_id = wr->wr_id;
	w->wr.opcode = wr->opcode;
	w->wr.send_flags = wr->send_flags & ~IB_SEND_INLINE;
	w->wr.ex.imm_data = wr->ex.imm_data;
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->wr.wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.wr.rdma.rkey = rdma_wr(wr)->rkey;
		w->iova = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.wr.atomic.rkey = atomic_wr(wr)->rkey;
		w->iova = atomic_wr(wr)->remote_addr;
		break;
	case IB_WR_REG_MR:
		w->wr.wr.reg.mr = reg_wr(wr)->mr;
		w->wr.wr.reg.key = reg_wr(wr)->key;
		w->wr.wr.reg.access = reg_wr(wr)->access;
		break;
	default:
		break;
	}
	if (sroce_qp_is_ud(qp)) {
		w->wr.wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->wr.wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		w->wr.wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->num;
		w->wr.wr.ud.av = to_sah(ud_wr(wr)->ah)->av;
	}
	len = sroce_sge_to_ring(w->dma.sge, wr->sg_list, wr->num_sge);
	w->dma.num_sge = wr->num_sge;
	w->dma.length = len;
	w->dma.resid = len;
	qp->sq.prod = sroce_q_next(qp->sq.prod, qp->sq.index_mask);
	return 0;
}

/**
 * sroce_qp_swqe_grow() - more copies for a user QP's send WQEs
 * @qp: the QP, whose doorbell found more posted than copies
 * @n: the copies wanted (sroce_req_swqe_want())
 *
 * Process context, BHs on. Without memory the QP goes on with the copies
 * it has. With more, the WQEs waiting in the ring are copied and sent.
 */
static void sroce_qp_swqe_grow(struct sroce_qp *qp, u32 n)
{
	u8 *swqe = kvcalloc(n, qp->swqe_size, SROCE_GFP_USER);

	if (!swqe)
		return;
	local_bh_disable();
	spin_lock(&qp->req.lock);
	if (n > qp->swqe_mask + 1) {
		swqe = sroce_req_swqe_swap(qp, swqe, n);
		if (qp->state != IB_QPS_ERR)
			sroce_req_fetch(qp);
	}
	spin_unlock(&qp->req.lock);
	sroce_qp_run_req(qp);
	local_bh_enable();
	kvfree(swqe);
}

/**
 * sroce_post_send() - the send doorbell
 * @ibqp: the QP
 * @wr: kernel WRs to queue, or NULL: the rxe provider's doorbell, meaning
 *	"look at the SQ ring"
 * @bad: the first WR not queued
 *
 * New WQEs are copied out of the ring and validated here; the transmit loop
 * then runs in the caller's context up to its budget.
 *
 * Return: 0, or -EINVAL before RTS as IBTA requires.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	/*
	 * Kernel consumers may post with interrupts off (the MAD layer does):
	 * no softirq runs here then, the plain lock is enough, and a worker
	 * runs the transmit loop. Otherwise BHs go off once for the post and
	 * the loop: cheaper than irqsave, which costs a lot under emulation.
	 */
	bool irqs_off = irqs_disabled(), defer;
	u32 fetched, grow;
	int err = 0;

	if (!irqs_off)
		local_bh_disable();
	spin_lock(&qp->req.lock);
	if (qp->state < IB_QPS_RTS && qp->state != IB_QPS_ERR) {
		spin_unlock(&qp->req.lock);
		if (!irqs_off)
			local_bh_enable();
		if (bad)
			*bad = wr;
		return -EINVAL;
	}
	for (; wr && !qp->user; wr = wr->next) {
		err = sroce_post_one_send(qp, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	if (!qp->user)
		sroce_queue_publish_prod(&qp->sq);
	/*
	 * When the last WQE posted is a message of many packets, the QP's
	 * worker sends on the QP's CPU, so that the QPs one thread posts to
	 * are sent by all CPUs; a short one is sent at once, sparing its
	 * latency a worker's wakeup.
	 */
	fetched = sroce_req_fetch(qp);
	grow = irqs_off ? 0 : sroce_req_swqe_want(qp);
	defer = irqs_off ||
		(fetched && qp->cpu != smp_processor_id() &&
		 sroce_swqe(qp, qp->req.head - 1)->length > qp->pmtu);
	if (qp->state == IB_QPS_ERR)
		sroce_comp_flush(qp);
	spin_unlock(&qp->req.lock);

	if (defer)
		sroce_qp_schedule(qp, 0);
	else
		sroce_qp_run_req(qp);
	if (!irqs_off)
		local_bh_enable();
	if (grow)
		sroce_qp_swqe_grow(qp, grow);
	sroce_rq_err_kick(qp);
	return err;
}

/**
 * sroce_post_recv() - a kernel consumer's receive WRs
 * @ibqp: the QP
 * @wr: the WRs
 * @bad: the first WR not queued
 *
 * They go into the RQ ring as the provider's do. A kernel consumer may
 * post from any context, hard interrupts too, while the receive path
 * takes resp.lock with only BHs off: so posts have their own lock, and
 * the receive path sees them through the ring's published index. A post
 * to a QP in ERR is flushed here, or by the QP's work when interrupts
 * are off.
 *
 * Return: 0, -EINVAL (too many SGEs; no RQ, the QP has an SRQ) or
 * -ENOMEM (the RQ is full).
 */
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (!qp->rq.buf) {
		*bad = wr;
		return -EINVAL;	/* it receives through its SRQ */
	}
	raw_spin_lock_irqsave(&qp->rq_post_lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_rq_post_one(&qp->rq, wr, qp->cap.max_recv_sge);
		if (err) {
			*bad = wr;
			break;
		}
	}
	sroce_queue_publish_prod(&qp->rq);
	raw_spin_unlock_irqrestore(&qp->rq_post_lock, flags);

	/* Pairs with the one in sroce_rq_flush(): one of us flushes it. */
	smp_mb();
	if (READ_ONCE(qp->state) != IB_QPS_ERR)
		return err;
	if (irqs_disabled()) {
		mod_delayed_work(qp->sdev->wq, &qp->rq_err_work, 0);
	} else {
		spin_lock_bh(&qp->resp.lock);
		if (qp->state == IB_QPS_ERR)
			sroce_rq_flush(qp);
		spin_unlock_bh(&qp->resp.lock);
	}
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_post_recv);
