// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues. A user CQ's ring holds struct ib_uverbs_wc slots that
 * the rxe provider reads directly; a kernel CQ's ring holds struct ib_wc and
 * is drained by sroce_poll_cq(). The kernel is the only producer; cq->lock
 * serialises producers with resize, notify and kernel polling. A QP's
 * completion takes the CQ's form here (sroce_complete()).
 */
#include <linux/slab.h>

#include "sroce.h"
#include "trace.h"

static size_t sroce_cqe_size(bool user)
{
	return user ? sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc);
}

static struct lock_class_key sroce_user_cq_key;

/* The consumer index, from user memory for a user CQ. Caller holds cq->lock. */
static u32 sroce_cq_cons(struct sroce_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	return cq->user ? sroce_queue_cons(&cq->q) : cq->q.cons;
}

static int sroce_cq_mminfo_to_user(struct sroce_queue *q, struct ib_udata *udata)
{
	struct mminfo mi;
	int err;

	err = sroce_queue_mminfo(q, &mi);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &mi, sizeof(mi));
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ucontext *uctx;
	struct sroce_queue_geom g;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe <= 0)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct rxe_create_cq_resp))
		return -EINVAL;

	cq->user = !!udata;
	err = sroce_queue_geom(attr->cqe, sroce_cqe_size(cq->user),
			       SROCE_MAX_CQE, &g);
	if (err)
		return err;

	err = sroce_res_get(sdev, SROCE_RES_CQ);
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	err = sroce_queue_init(&cq->q, uctx ? &uctx->ibuc : NULL, &g);
	if (err)
		goto err_res;
	if (udata) {
		err = sroce_cq_mminfo_to_user(&cq->q, udata);
		if (err)
			goto err_queue;
	}

	spin_lock_init(&cq->lock);
	/* Kernel CQs' locks are irq-safe, user CQs' are not: two classes. */
	if (cq->user)
		lockdep_set_class(&cq->lock, &sroce_user_cq_key);
	cq->notify = 0;
	INIT_LIST_HEAD(&cq->parked);
	ibcq->cqe = g.num_slots - 1;
	return 0;

err_queue:
	sroce_queue_free(&cq->q);
err_res:
	sroce_res_put(sdev, SROCE_RES_CQ);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_create_cq);

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_queue_free(&cq->q);
	sroce_res_put(to_sdev(ibcq->device), SROCE_RES_CQ);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_destroy_cq);

/**
 * sroce_resize_cq() - move a CQ to a ring of another size
 * @ibcq: the CQ
 * @cqe: entries wanted
 * @udata: for a user CQ, where the new ring's mminfo goes
 *
 * Pending completions move to the new ring in order. The user sees the new
 * ring's mminfo before the switch; the rxe provider holds its CQ lock across
 * the command and maps the new ring afterwards.
 *
 * Return: 0, -EINVAL if @cqe is out of range or below the number of
 * pending completions, or another negative errno.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_ucontext *uctx;
	struct sroce_queue nq, oq;
	struct sroce_queue_geom g;
	u32 cons, n;
	size_t esz;
	int err;

	if (cqe <= 0)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct rxe_resize_cq_resp))
		return -EINVAL;
	esz = sroce_cqe_size(cq->user);
	err = sroce_queue_geom(cqe, esz, SROCE_MAX_CQE, &g);
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	err = sroce_queue_init(&nq, uctx ? &uctx->ibuc : NULL, &g);
	if (err)
		return err;
	if (udata) {
		err = sroce_cq_mminfo_to_user(&nq, udata);
		if (err)
			goto err_free;
	}

	spin_lock_irq(&cq->lock);
	cons = sroce_cq_cons(cq);
	n = sroce_q_count(cq->q.prod, cons, cq->q.index_mask);
	if (n > (u32)cqe) {
		spin_unlock_irq(&cq->lock);
		err = -EINVAL;
		goto err_free;
	}
	sroce_queue_transfer(&nq, &cq->q, cons, n);
	oq = cq->q;
	cq->q = nq;
	ibcq->cqe = g.num_slots - 1;
	spin_unlock_irq(&cq->lock);

	sroce_queue_free(&oq);
	return 0;

err_free:
	sroce_queue_free(&nq);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_resize_cq);

/**
 * sroce_cq_arm_fires() - consume the CQ's arm for a new completion
 * @notify: the CQ's arm state (0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP)
 * @solicited: the completion is solicited (or an error)
 *
 * The arm is one-shot: when it fires it is cleared.
 *
 * Return: true when the completion handler must be called.
 */
bool sroce_cq_arm_fires(u8 *notify, bool solicited)
{
	if (*notify == IB_CQ_NEXT_COMP ||
	    (*notify == IB_CQ_SOLICITED && solicited)) {
		*notify = 0;
		return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_cq_arm_fires);

/*
 * A user CQ is only touched from process context and softirqs, so BHs off
 * is enough; kernel consumers may use theirs from any context. irqsave
 * costs far more than BHs off under emulation, and this is per completion.
 */
unsigned long sroce_cq_lock(struct sroce_cq *cq)
	__acquires(&cq->lock)
{
	unsigned long irqf = 0;

	if (cq->user)
		spin_lock_bh(&cq->lock);
	else
		spin_lock_irqsave(&cq->lock, irqf);
	return irqf;
}

void sroce_cq_unlock(struct sroce_cq *cq, unsigned long irqf)
	__releases(&cq->lock)
{
	if (cq->user)
		spin_unlock_bh(&cq->lock);
	else
		spin_unlock_irqrestore(&cq->lock, irqf);
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqf;
	int ret = 0;

	irqf = sroce_cq_lock(cq);
	/* A pending next-completion arm covers a solicited one. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->q.prod != sroce_cq_cons(cq))
		ret = 1;
	sroce_cq_unlock(cq, irqf);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_req_notify_cq);

/* What sroce_fill_res_cq_entry() reports, named as `rdma resource` shows it. */
struct sroce_cq_res {
	u32 queued, arm, parked_qps;
};

#define SROCE_CQ_RES(f) SROCE_RES_FIELD(struct sroce_cq_res, f, false)
static const struct sroce_res_field sroce_cq_res_fields[] = {
	SROCE_CQ_RES(queued), SROCE_CQ_RES(arm), SROCE_CQ_RES(parked_qps),
};

/**
 * sroce_fill_res_cq_entry() - driver details of a CQ for `rdma resource`
 * @msg: the netlink message ib_core builds
 * @ibcq: the CQ
 *
 * What ``rdma resource show cq -dd`` adds to ib_core's attributes (size,
 * users, poll context): the completions written and not yet consumed, the
 * arm (0 none, 1 solicited only, 2 next completion) and how many user QPs
 * in ERR wait for room in it to flush their receive queue.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_cq_res r = {};
	struct list_head *pos;
	unsigned long irqf;

	irqf = sroce_cq_lock(cq);
	r.queued = sroce_q_count(cq->q.prod, sroce_cq_cons(cq),
				 cq->q.index_mask);
	r.arm = cq->notify;
	list_for_each(pos, &cq->parked)
		r.parked_qps++;
	sroce_cq_unlock(cq, irqf);

	return sroce_fill_res(msg, NULL, sroce_cq_res_fields,
			      ARRAY_SIZE(sroce_cq_res_fields), &r);
}

/**
 * sroce_cq_has_room() - whether a completion posted now would fit
 * @cq: the CQ
 *
 * For a flush a full CQ held back: it tries again only once the consumer
 * has made room, so that it does not report the overrun over and over.
 *
 * Return: true when at least one entry is free.
 */
bool sroce_cq_has_room(struct sroce_cq *cq)
{
	unsigned long irqf = sroce_cq_lock(cq);
	bool room = sroce_q_next(cq->q.prod, cq->q.index_mask) !=
		    sroce_cq_cons(cq);

	sroce_cq_unlock(cq, irqf);
	return room;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_cq_has_room);

/**
 * sroce_cq_post() - add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion, in the CQ's form (uwc for a user CQ, ibwc otherwise)
 * @solicited: wake a solicited-only arm too
 *
 * Callable from any context. On overflow the completion is lost, the CQ's
 * owner gets IB_EVENT_CQ_ERR and -EBUSY is returned; the caller moves the QP
 * to the error state.
 *
 * Return: 0 or -EBUSY.
 */
int sroce_cq_post(struct sroce_cq *cq, const union sroce_cqe *cqe,
		  bool solicited)
{
	unsigned long irqf;
	bool fire;

	irqf = sroce_cq_lock(cq);
	if (sroce_q_next(cq->q.prod, cq->q.index_mask) == sroce_cq_cons(cq)) {
		sroce_cq_unlock(cq, irqf);
		sroce_count(to_sdev(cq->ibcq.device), SROCE_CNT_CQ_OVERFLOW, 1);
		ibdev_info_ratelimited(cq->ibcq.device,
				       "cq %u overflowed (%u entries): a completion is lost\n",
				       cq->ibcq.res.id, cq->ibcq.cqe);
		if (cq->ibcq.event_handler) {
			struct ib_event ev = {
				.device = cq->ibcq.device,
				.element.cq = &cq->ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -EBUSY;
	}
	if (cq->user)
		memcpy(sroce_queue_slot(&cq->q, cq->q.prod), &cqe->uwc,
		       sizeof(cqe->uwc));
	else
		memcpy(sroce_queue_slot(&cq->q, cq->q.prod), &cqe->ibwc,
		       sizeof(cqe->ibwc));
	cq->q.prod = sroce_q_next(cq->q.prod, cq->q.index_mask);
	sroce_queue_publish_prod(&cq->q);
	fire = sroce_cq_arm_fires(&cq->notify, solicited);
	sroce_cq_unlock(cq, irqf);

	if (fire && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_cq_post);

/*
 * Only kernel CQs are polled here: user space reads its ring directly, and
 * the legacy POLL_CQ command on a user CQ is refused.
 */
int sroce_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqf;
	int i;

	if (cq->user)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, irqf);
	for (i = 0; i < n && cq->q.cons != cq->q.prod; i++) {
		memcpy(&wc[i], sroce_queue_slot(&cq->q, cq->q.cons),
		       sizeof(*wc));
		cq->q.cons = sroce_q_next(cq->q.cons, cq->q.index_mask);
	}
	spin_unlock_irqrestore(&cq->lock, irqf);
	return i;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_poll_cq);

/**
 * sroce_complete() - post a completion for a QP
 * @qp: the QP
 * @ibcq: its send or receive CQ
 * @wc: the completion
 * @solicited: wakes a solicited-only arm
 *
 * The user form carries the uverbs opcode and flag values, which differ
 * from the kernel's for the invalidate flag.
 *
 * Return: 0, or -EBUSY when the CQ overflowed.
 */
int sroce_complete(struct sroce_qp *qp, struct ib_cq *ibcq,
		   const struct sroce_wc *wc, bool solicited)
{
	struct sroce_cq *cq = to_scq(ibcq);
	union sroce_cqe cqe;

	if (cq->user) {
		struct ib_uverbs_wc *u = &cqe.uwc;

		memset(u, 0, sizeof(*u));
		u->wr_id = wc->wr_id;
		u->status = wc->status;
		u->opcode = wc->opcode;
		u->byte_len = wc->byte_len;
		u->qp_num = wc->qp_num;
		u->src_qp = wc->src_qp;
		u->port_num = 1;
		/* ibv_create_ah_from_wc() needs it to answer a datagram. */
		if (wc->flags & IB_WC_GRH)
			u->wc_flags |= IB_WC_GRH;	/* IBV_WC_GRH */
		/*
		 * The user CQE has no network header type; RoCE RNICs
		 * (mlx5) report it in the SL, and UCX before 1.19 reads a
		 * datagram's GRH area by it: 2 for IPv4, 1 for IPv6.
		 */
		if (wc->flags & IB_WC_WITH_NETWORK_HDR_TYPE)
			u->sl = wc->network_hdr_type == RDMA_NETWORK_IPV4 ?
				2 : 1;
		if (wc->flags & IB_WC_WITH_IMM) {
			u->wc_flags |= IB_WC_WITH_IMM;
			u->ex.imm_data = wc->imm;
		}
		if (wc->flags & IB_WC_WITH_INVALIDATE) {
			u->wc_flags |= 1 << 3;	/* IBV_WC_WITH_INV */
			u->ex.invalidate_rkey = wc->inv_rkey;
		}
	} else {
		struct ib_wc *k = &cqe.ibwc;

		memset(k, 0, sizeof(*k));
		k->wr_id = wc->wr_id;
		k->status = wc->status;
		k->opcode = wc->opcode;
		k->byte_len = wc->byte_len;
		k->qp = &qp->ibqp;
		k->src_qp = wc->src_qp;
		k->wc_flags = wc->flags;
		k->network_hdr_type = wc->network_hdr_type;
		k->vlan_id = wc->vlan_id;
		k->port_num = 1;
		if (wc->flags & IB_WC_WITH_IMM)
			k->ex.imm_data = wc->imm;
		else if (wc->flags & IB_WC_WITH_INVALIDATE)
			k->ex.invalidate_rkey = wc->inv_rkey;
	}
	if (wc->status != IB_WC_SUCCESS)
		trace_sroce_err_cqe(qp, wc);
	return sroce_cq_post(cq, &cqe, solicited ||
			     wc->status != IB_WC_SUCCESS);
}
