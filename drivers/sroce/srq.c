// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: a ring of receive WQEs in the RQ's format that
 * many QPs consume from. User space produces into it without a system
 * call, like an RQ; the receive path of whichever QP needs a WQE copies
 * one out under the SRQ's lock and owns it from then on. The limit event
 * fires once when the WQEs left drop below an armed limit.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sroce.h"

/* Kernel posters publish under post_lock, apart from the consumers. */
static u32 sroce_srq_prod(struct sroce_srq *srq)
{
	return sroce_queue_prod(&srq->q);
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct ib_srq_attr *a = &init->attr;
	struct rxe_create_srq_resp resp = {};
	struct sroce_queue_geom g;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (a->max_sge > SROCE_MAX_SGE || a->srq_limit > a->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = sroce_queue_geom(a->max_wr, sroce_recv_elem(a->max_sge),
			       SROCE_MAX_SRQ_WR, &g);
	if (err)
		return err;
	err = sroce_res_get(sdev, SROCE_RES_SRQ);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	raw_spin_lock_init(&srq->post_lock);
	mutex_init(&srq->resize_lock);
	srq->user = !!udata;
	srq->limit = a->srq_limit;
	err = sroce_queue_init(&srq->q, uctx ? &uctx->ibuc : NULL, &g);
	if (err)
		goto err_res;
	/* Report what the slots really hold; the provider uses these. */
	a->max_wr = g.num_slots - 1;
	a->max_sge = sroce_recv_slot_sge(&g);
	srq->max_sge = a->max_sge;
	if (udata) {
		resp.srq_num = atomic_inc_return(&sdev->srq_seq);
		err = sroce_queue_mminfo(&srq->q, &resp.mi);
		if (!err)
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_q;
	}
	return 0;

err_q:
	sroce_queue_free(&srq->q);
err_res:
	sroce_res_put(sdev, SROCE_RES_SRQ);
	return err;
}

/*
 * Move @srq's posted WQEs into @nq, of @slots slots, and make it the SRQ's
 * ring; the old one is left in @oq. Caller holds srq->lock, and for a
 * kernel SRQ post_lock. Return: false when they (or the limit) do not fit.
 */
static bool sroce_srq_switch(struct sroce_srq *srq, struct sroce_queue *nq,
			     struct sroce_queue *oq, u32 slots)
{
	u32 n = sroce_q_count(sroce_srq_prod(srq), srq->q.cons,
			      srq->q.index_mask);

	lockdep_assert_held(&srq->lock);
	if (n > slots - 1 || srq->limit > slots - 1)
		return false;
	sroce_queue_transfer(nq, &srq->q, srq->q.cons, n);
	*oq = srq->q;
	srq->q = *nq;
	return true;
}

/* Move the SRQ to a ring of @max_wr WQEs; posted WQEs move along, in order. */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct sroce_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct rxe_modify_srq_cmd cmd = {};
	struct sroce_queue nq, oq;
	struct sroce_queue_geom g;
	unsigned long flags;
	struct mminfo mi;
	bool ok;
	int err;

	if (udata) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}
	err = sroce_queue_geom(max_wr, sroce_recv_elem(srq->max_sge),
			       SROCE_MAX_SRQ_WR, &g);
	if (err)
		return err;
	err = sroce_queue_init(&nq, uctx ? &uctx->ibuc : NULL, &g);
	if (err)
		return err;
	if (udata) {
		/* Seen before the switch: the provider holds its SRQ lock. */
		err = sroce_queue_mminfo(&nq, &mi);
		if (!err && copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr),
					 &mi, sizeof(mi)))
			err = -EFAULT;
		if (err)
			goto err_free;
	}

	/*
	 * Both sides stopped: no consumer meanwhile, and for a kernel SRQ no
	 * post (user space posts under the provider's own lock, which it
	 * holds across this call). Interrupts go off only for a kernel SRQ:
	 * the copy may be of megabytes.
	 */
	spin_lock_bh(&srq->lock);
	if (srq->user) {
		ok = sroce_srq_switch(srq, &nq, &oq, g.num_slots);
	} else {
		raw_spin_lock_irqsave(&srq->post_lock, flags);
		ok = sroce_srq_switch(srq, &nq, &oq, g.num_slots);
		raw_spin_unlock_irqrestore(&srq->post_lock, flags);
	}
	spin_unlock_bh(&srq->lock);
	if (!ok) {
		err = -EINVAL;
		goto err_free;
	}

	sroce_queue_free(&oq);
	return 0;

err_free:
	sroce_queue_free(&nq);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *a,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	mutex_lock(&srq->resize_lock);
	if (mask & IB_SRQ_MAX_WR) {
		err = sroce_srq_resize(srq, a->max_wr, udata);
		if (err)
			goto out;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_bh(&srq->lock);
		if (a->srq_limit > srq->q.index_mask)
			err = -EINVAL;
		else
			srq->limit = a->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
out:
	mutex_unlock(&srq->resize_lock);
	return err;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *a)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	spin_lock_bh(&srq->lock);
	a->max_wr = srq->q.index_mask;
	a->max_sge = srq->max_sge;
	a->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* ib_core refuses while a QP uses it, so no receive path can. */
	sroce_queue_free(&srq->q);
	sroce_res_put(to_sdev(ibsrq->device), SROCE_RES_SRQ);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	/*
	 * A kernel consumer may post from any context, hard interrupts too;
	 * the receive paths take srq->lock with only BHs off, so posts have
	 * their own lock and reach the consumers through the published index.
	 */
	raw_spin_lock_irqsave(&srq->post_lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_rq_post_one(&srq->q, wr, srq->max_sge);
		if (err) {
			*bad = wr;
			break;
		}
	}
	sroce_queue_publish_prod(&srq->q);
	raw_spin_unlock_irqrestore(&srq->post_lock, flags);
	return err;
}

/**
 * sroce_srq_take() - copy the next WQE out of an SRQ for a QP
 * @srq: the SRQ
 * @rwqe: where the validated copy goes
 * @limit_hit: set when this took the SRQ below its armed limit; the
 *	caller raises IB_EVENT_SRQ_LIMIT_REACHED
 *
 * The WQE leaves the ring at once: it belongs to the QP that took it.
 *
 * Return: 0, -EAGAIN when the SRQ is empty, or -EINVAL for a WQE that
 * fails validation (@rwqe->wr_id is set: it completes in error).
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe,
		   bool *limit_hit)
{
	u32 prod, left;
	int err;

	*limit_hit = false;
	spin_lock(&srq->lock);
	prod = sroce_srq_prod(srq);
	if (srq->q.cons == prod) {
		spin_unlock(&srq->lock);
		return -EAGAIN;
	}
	err = sroce_rwqe_copy(sroce_queue_slot(&srq->q, srq->q.cons), rwqe,
			      srq->max_sge);
	srq->q.cons = sroce_q_next(srq->q.cons, srq->q.index_mask);
	sroce_queue_publish_cons(&srq->q);
	left = sroce_q_count(prod, srq->q.cons, srq->q.index_mask);
	if (srq->limit && left < srq->limit) {
		/* One event per arming. */
		srq->limit = 0;
		*limit_hit = true;
	}
	spin_unlock(&srq->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_srq_take);

void sroce_srq_event(struct sroce_srq *srq)
{
	struct ib_event e = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&e, srq->ibsrq.srq_context);
}
