// SPDX-License-Identifier: GPL-2.0
/*
 * On-demand paging (ODP) for user MRs.
 *
 * An ODP MR pins nothing: ib_core's ib_umem_odp faults pages in through
 * HMM, and an MMU interval notifier says when the process's page tables
 * change. sroce copies through its own mirror of what is present
 * (mr->pages, and mr->odp_writable for what may be written):
 *
 * - A copy (any context, mostly softirq) holds mr->odp_lock for reading,
 *   checks that its whole range is present (and writable, to write),
 *   copies and unlocks. It never sleeps and never faults.
 * - A fault runs in process context (a worker, or advise_mr):
 *   ib_umem_odp_map_dma_and_lock() returns with umem_mutex held and the
 *   notifier sequence checked; the pages of the range go into the mirror
 *   under odp_lock for writing, then umem_mutex is dropped.
 * - The notifier takes umem_mutex, clears the mirror for its range under
 *   odp_lock for writing, which waits for the copies in flight and keeps
 *   later ones off the old pages, and only then lets ib_core unmap them.
 *
 * A copy that misses queues a fault on sroce_odp_wq and fails with
 * -EAGAIN; its caller makes the packet come again once the fault is done
 * (enum sroce_odp_kick): the responder answers the request with an RNR
 * NAK (the requester retries after the RNR timer, as with a hardware
 * responder that takes a page fault) or, for a READ response, keeps the
 * job and the worker runs the QP again; the requester pauses (odp_wait)
 * until the worker resumes it; the completer drops the response and the
 * worker sends the requester back to its oldest unacknowledged PSN. A
 * fault that fails makes the next miss on that side of the QP fail with
 * -EACCES, which completes the WQE in error or NAKs the request.
 *
 * A fault may block as long as the memory's owner likes: a file mapping
 * served by the user's own FUSE daemon that never answers parks the
 * worker in hmm_range_fault() for good, and nothing can interrupt it.
 * So a queued fault or prefetch holds no QP reference (it looks the QP
 * up again when it is done) and keeps its MR through odp_refs, not
 * users: destroy_qp and dereg_mr never wait for it, and the last holder
 * frees the MR. It holds the device's memory and the module, so a
 * device can be unregistered under it (the MR outlives it) and rmmod is
 * refused until it ends. Each user context may have SROCE_ODP_QUEUED_MAX
 * of them queued, so that one context's blocked faults leave workers for
 * everyone else's.
 */
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sroce.h"

static struct workqueue_struct *sroce_odp_wq;

/* Faults and prefetches one user context may have queued at a time. */
#define SROCE_ODP_QUEUED_MAX	16

/**
 * struct sroce_odp_budget - what one user context has queued
 * @ref: the context, and each of its ODP MRs
 * @queued: faults and prefetches queued or running
 * @sdev: the device
 */
struct sroce_odp_budget {
	refcount_t		ref;
	atomic_t		queued;
	struct sroce_dev	*sdev;
};

/*
 * A fault for a copy that missed, and the QP to resume after it, found
 * again by number and serial: it may be destroyed meanwhile.
 */
struct sroce_odp_work {
	struct work_struct	work;
	struct sroce_mr		*mr;	/* odp_refs held */
	u64			serial;	/* the QP's, or 0 */
	u32			qpn;
	u64			iova;
	u32			len;
	bool			write;
	u8			kick;	/* enum sroce_odp_kick */
};

/* An asynchronous prefetch (advise_mr without IB_UVERBS_ADVISE_MR_FLAG_FLUSH). */
struct sroce_prefetch_work {
	struct work_struct	work;
	struct sroce_odp_budget	*budget;	/* one slot taken */
	u32			num;
	bool			write;
	bool			fault;
	struct {
		struct sroce_mr	*mr;	/* odp_refs held */
		u64		iova;
		u32		len;
	} frag[];
};

/**
 * sroce_odp_ctx_init() - give a user context its ODP budget
 * @uc: the context being allocated
 * @sdev: its device
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_odp_ctx_init(struct sroce_ucontext *uc, struct sroce_dev *sdev)
{
	uc->odp = kzalloc_obj(*uc->odp, GFP_KERNEL_ACCOUNT);
	if (!uc->odp)
		return -ENOMEM;
	refcount_set(&uc->odp->ref, 1);
	uc->odp->sdev = sdev;
	return 0;
}

void sroce_odp_budget_put(struct sroce_odp_budget *b)
{
	if (b && refcount_dec_and_test(&b->ref))
		kfree(b);
}

/*
 * Take a slot of @b for a fault or prefetch, with the device's memory and
 * the module, which the work uses after a device is gone. Any context.
 */
static bool sroce_odp_slot_get(struct sroce_odp_budget *b)
{
	if (atomic_inc_return(&b->queued) > SROCE_ODP_QUEUED_MAX) {
		atomic_dec(&b->queued);
		return false;
	}
	get_device(&b->sdev->ib.dev);
	__module_get(THIS_MODULE);
	return true;
}

/*
 * Gives back what sroce_odp_slot_get() took. The device reference may be
 * the last once the device is unregistered: only a work calls this then.
 */
static void sroce_odp_slot_put(struct sroce_odp_budget *b)
{
	struct sroce_dev *sdev = b->sdev;

	atomic_dec(&b->queued);
	put_device(&sdev->ib.dev);
	module_put(THIS_MODULE);
}

/* Hold @mr, which the caller holds through users, past its dereg. */
static void sroce_odp_mr_hold(struct sroce_mr *mr)
{
	refcount_inc(&mr->odp_refs);
}

/* Process context: the last holder frees the MR. */
static void sroce_odp_mr_drop(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->odp_refs))
		sroce_mr_free(mr->odp_budget->sdev, mr);
}

/**
 * sroce_odp_dereg() - dereg drops the MR's own hold
 * @mr: an MR whose users are gone
 *
 * Return: true when the caller frees @mr now; false when a fault still
 * holds it and frees it when it ends.
 */
bool sroce_odp_dereg(struct sroce_mr *mr)
{
	return !mr->odp || refcount_dec_and_test(&mr->odp_refs);
}

/*
 * Fault [@va, @va + @len) of the owner's memory in with a mmap lock the
 * fault may drop: one that waits for a file system (slow, or a FUSE daemon
 * that never answers) then waits without it, and the process can still
 * unmap, destroy its QPs and exit. ib_umem_odp_map_dma_and_lock() would
 * hold it throughout; after this it finds the pages present.
 */
static int sroce_odp_prefault(struct ib_umem_odp *odp, u64 va, u64 len,
			      bool write)
{
	struct mm_struct *mm = odp->umem.owning_mm;
	unsigned long a = va & PAGE_MASK;
	int err = 0;

	if (!mmget_not_zero(mm))
		return -EFAULT;		/* its process has exited */
	mmap_read_lock(mm);
	for (; a < va + len && !err; a += PAGE_SIZE) {
		bool unlocked = false;

		err = fixup_user_fault(mm, a, write ? FAULT_FLAG_WRITE : 0,
				       &unlocked);
	}
	mmap_read_unlock(mm);
	mmput(mm);
	return err;
}

/**
 * sroce_odp_fault() - fault a range of an ODP MR in and mirror it
 * @mr: the ODP MR, held
 * @iova: first address (in bounds)
 * @len: bytes (in bounds)
 * @write: the pages must be writable
 * @fault: fault missing pages in; else mirror only what is present
 *	   (IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
 *
 * Process context: may sleep in the page fault.
 *
 * Return: 0 or a negative errno from ib_core.
 */
static int sroce_odp_fault(struct sroce_mr *mr, u64 iova, u64 len, bool write,
			   bool fault)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 va = mr->umem->address + (iova - mr->iova);
	unsigned long i, last;
	int np;

	if (!len)
		return 0;
	if (fault) {
		np = sroce_odp_prefault(odp, va, len, write);
		if (np)
			return np;
	}
	np = ib_umem_odp_map_dma_and_lock(odp, va, len, sroce_odp_access(write),
					  fault);
	if (np < 0)
		return np;
	/* umem_mutex held: no invalidation until the mirror is updated. */
	lockdep_assert_held(&odp->umem_mutex);
	i = (va - ib_umem_start(odp)) >> PAGE_SHIFT;
	last = (va + len - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
	write_lock_bh(&mr->odp_lock);
	for (; i <= last; i++) {
		bool wr = false;

		mr->pages[i] = sroce_odp_page(odp, i, &wr);
		__assign_bit(i, mr->odp_writable, mr->pages[i] && wr);
	}
	write_unlock_bh(&mr->odp_lock);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/*
 * The MMU notifier: the pages of [range->start, range->end) are about to
 * change. Sleeps (umem_mutex); a caller that may not sleep is told to
 * try again later, as ib_core's drivers do.
 */
static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	unsigned long start, end, i, last;
	struct sroce_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(ib_umem_start(odp), range->start);
	end = min(ib_umem_end(odp), range->end);
	mr = odp->private;
	if (start >= end)
		goto out;
	/* Set under umem_mutex once the mirror exists. */
	if (mr) {
		i = (start - ib_umem_start(odp)) >> PAGE_SHIFT;
		last = (end - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
		write_lock_bh(&mr->odp_lock);
		for (; i <= last; i++) {
			mr->pages[i] = NULL;
			__clear_bit(i, mr->odp_writable);
		}
		write_unlock_bh(&mr->odp_lock);
	}
	ib_umem_odp_unmap_dma_pages(odp, start, end);
out:
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_mn_ops = {
	.invalidate = sroce_odp_invalidate,
};

/**
 * sroce_odp_reg() - make @mr an ODP MR over user memory
 * @mr: the MR being registered, with iova, length and page_off set
 * @pd: its PD
 * @start: user address
 * @length: bytes, > 0
 * @access: IB_ACCESS_* flags, IB_ACCESS_ON_DEMAND among them
 *
 * @udata: the user's call; its context pays for the MR's faults
 *
 * What the process has mapped already is mirrored at once (no fault).
 * On error the caller frees @mr with what was set up.
 *
 * Return: 0 or a negative errno.
 */
int sroce_odp_reg(struct sroce_mr *mr, struct ib_pd *pd, u64 start,
		  u64 length, int access, struct ib_udata *udata)
{
	struct sroce_ucontext *uc;
	struct ib_umem_odp *odp;

	/* Faults are paid for by a user context: none for a kernel MR. */
	uc = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	if (!uc)
		return -EOPNOTSUPP;
	refcount_inc(&uc->odp->ref);
	mr->odp_budget = uc->odp;
	refcount_set(&mr->odp_refs, 1);

	odp = ib_umem_odp_get(pd->device, start, length, access,
			      &sroce_odp_mn_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->umem = &odp->umem;
	mr->npages = ib_umem_odp_num_pages(odp);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), SROCE_GFP_USER);
	mr->odp_writable = kvcalloc(BITS_TO_LONGS(mr->npages),
				    sizeof(unsigned long), SROCE_GFP_USER);
	if (!mr->pages || !mr->odp_writable)
		return -ENOMEM;
	rwlock_init(&mr->odp_lock);
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	mr->odp = odp;
	atomic_inc(&to_sdev(pd->device)->odp_mrs);
	return sroce_odp_fault(mr, mr->iova, length, false, false);
}

/*
 * Which part of a QP a miss is in: 0 requester, 1 completer, 2 responder
 * placing or executing, 3 responder reading (each waits differently).
 */
static int sroce_odp_side(u8 kick)
{
	switch (kick) {
	case SROCE_ODP_KICK_REQ:
		return 0;
	case SROCE_ODP_KICK_RESEND:
		return 1;
	case SROCE_ODP_KICK_RUN:
		return 3;
	default:
		return 2;
	}
}

/* The qp->flags bit that remembers a failed fault of a side of the QP. */
static int sroce_odp_err_bit(u8 kick)
{
	return SROCE_QP_ODP_ERR_REQ + sroce_odp_side(kick);
}

/* The qp->flags bit that says a fault for a side of the QP is queued. */
static int sroce_odp_busy_bit(u8 kick)
{
	return SROCE_QP_ODP_BUSY_REQ + sroce_odp_side(kick);
}

/* A fault for @qp is done: let the packet that missed come again. */
static void sroce_odp_kick(struct sroce_qp *qp, u8 kick)
{
	switch (kick) {
	case SROCE_ODP_KICK_REQ:
		spin_lock_bh(&qp->req.lock);
		qp->req.odp_wait = false;
		spin_unlock_bh(&qp->req.lock);
		break;
	case SROCE_ODP_KICK_RESEND:
		/* The requester goes back itself, on its next pass. */
		set_bit(SROCE_QP_ODP_RESEND, &qp->flags);
		break;
	case SROCE_ODP_KICK_RUN:
		break;
	default:
		return;
	}
	sroce_qp_schedule(qp, 0);
}

/* The QP a fault was for, if it still exists, held. */
static struct sroce_qp *sroce_odp_work_qp(struct sroce_dev *sdev,
					  struct sroce_odp_work *ow)
{
	struct sroce_qp *qp;

	if (!ow->serial)
		return NULL;
	/* Held, the QP is there to check: not a later one of that number. */
	qp = sroce_qp_get(sdev, ow->qpn);
	if (qp && READ_ONCE(qp->serial) != ow->serial) {
		sroce_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

static void sroce_odp_work_fn(struct work_struct *w)
{
	struct sroce_odp_work *ow = container_of(w, struct sroce_odp_work,
						 work);
	struct sroce_odp_budget *b = ow->mr->odp_budget;
	struct sroce_qp *qp;
	int err;

	/* May block for as long as the memory's owner likes. */
	err = sroce_odp_fault(ow->mr, ow->iova, ow->len, ow->write, true);
	qp = sroce_odp_work_qp(b->sdev, ow);
	if (qp) {
		/*
		 * -EBUSY: the range kept changing under hmm_range_fault()
		 * for ib_core's whole timeout (a process remapping it in a
		 * loop). Not the peer's fault: the packet comes again and
		 * faults again.
		 */
		if (err && err != -EBUSY && err != -EAGAIN)
			set_bit(sroce_odp_err_bit(ow->kick), &qp->flags);
		clear_bit(sroce_odp_busy_bit(ow->kick), &qp->flags);
		sroce_odp_kick(qp, ow->kick);
		sroce_qp_put(qp);
	}
	/* The MR's budget outlives it: hold the budget over the drop. */
	refcount_inc(&b->ref);
	sroce_odp_mr_drop(ow->mr);
	kfree(ow);
	sroce_odp_slot_put(b);
	sroce_odp_budget_put(b);
}

/**
 * sroce_odp_miss() - a copy found part of an ODP MR missing
 * @mr: the MR, held by the caller
 * @iova: first address of the copy
 * @len: its bytes
 * @write: it writes the MR
 * @qp: the QP whose copy it is, or NULL
 * @kick: what to do for @qp once the pages are there
 *
 * Any context. Queues a fault of the range in process context, unless
 * one for that side of @qp is queued already: that one's kick brings the
 * packet back, and a miss then queues the next (a requester retrying
 * after an RNR NAK would otherwise queue one per retry). A context with
 * SROCE_ODP_QUEUED_MAX faults queued gets none more until one ends: its
 * packets come again as when no memory could be had.
 *
 * Return: -EAGAIN (try again once faulted in); -ENOMEM when no fault could
 * be queued for a paused requester (it retries by itself); -EACCES when
 * the last fault for that side of @qp failed.
 */
int sroce_odp_miss(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		   struct sroce_qp *qp, u8 kick)
{
	struct sroce_odp_work *ow;

	if (qp && test_and_clear_bit(sroce_odp_err_bit(kick), &qp->flags))
		return -EACCES;
	if (qp && test_and_set_bit(sroce_odp_busy_bit(kick), &qp->flags))
		return -EAGAIN;
	ow = kzalloc_obj(*ow, GFP_ATOMIC);
	if (ow && !sroce_odp_slot_get(mr->odp_budget)) {
		kfree(ow);
		ow = NULL;
	}
	if (!ow) {
		if (qp) {
			clear_bit(sroce_odp_busy_bit(kick), &qp->flags);
			if (kick == SROCE_ODP_KICK_RUN)
				sroce_qp_schedule(qp, 1);
		}
		return kick == SROCE_ODP_KICK_REQ ? -ENOMEM : -EAGAIN;
	}
	sroce_odp_mr_hold(mr);
	INIT_WORK(&ow->work, sroce_odp_work_fn);
	ow->mr = mr;
	if (qp) {
		ow->serial = qp->serial;
		ow->qpn = qp->ibqp.qp_num;
	}
	ow->iova = iova;
	ow->len = len;
	ow->write = write;
	ow->kick = kick;
	queue_work(sroce_odp_wq, &ow->work);
	return -EAGAIN;
}

/*
 * The ODP MR an advise_mr SGE names, held. -EPERM: a prefetch for writing
 * of an MR that may not be written locally; -EINVAL otherwise.
 */
static int sroce_prefetch_get(struct ib_pd *pd, const struct ib_sge *sge,
			      bool write, struct sroce_mr **mrp)
{
	struct sroce_mr *mr;

	/*
	 * BHs off while any MR may be held: an invalidation of a fast-
	 * registered MR, in a softirq, waits for its users (see
	 * sroce_mr_inv_rcu()). Only ODP MRs, which are never invalidated,
	 * are held on.
	 */
	local_bh_disable();
	mr = sroce_mr_get_for(pd, sge->lkey, sge->addr, sge->length,
			      write ? IB_ACCESS_LOCAL_WRITE : 0);
	if (!IS_ERR(mr) && !mr->odp) {
		sroce_mr_put(mr);
		mr = ERR_PTR(-EINVAL);
	} else if (!IS_ERR(mr)) {
		/* Kept past a dereg: it must not wait for this fault. */
		sroce_odp_mr_hold(mr);
		sroce_mr_put(mr);
	}
	local_bh_enable();
	if (IS_ERR(mr))
		return PTR_ERR(mr) == -EACCES && write ? -EPERM : -EINVAL;
	*mrp = mr;
	return 0;
}

static void sroce_prefetch_work_fn(struct work_struct *w)
{
	struct sroce_prefetch_work *pw =
		container_of(w, struct sroce_prefetch_work, work);
	u32 i;

	/* Best effort: nobody hears of a failure. */
	for (i = 0; i < pw->num; i++) {
		sroce_odp_fault(pw->frag[i].mr, pw->frag[i].iova,
				pw->frag[i].len, pw->write, pw->fault);
		sroce_odp_mr_drop(pw->frag[i].mr);
	}
	sroce_odp_slot_put(pw->budget);
	sroce_odp_budget_put(pw->budget);
	kvfree(pw);
}

/**
 * sroce_advise_mr() - ibv_advise_mr(): prefetch ranges of ODP MRs
 * @pd: the PD the MRs must belong to
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH (to read), _PREFETCH_WRITE,
 *	    or _PREFETCH_NO_FAULT (mirror only what is mapped already)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before returning; else in a
 *	   worker, best effort
 * @sg_list: the ranges, each in one ODP MR
 * @num_sge: entries
 * @attrs: the call's; its context pays for an asynchronous prefetch
 *
 * A synchronous prefetch faults in the caller's own context; it too keeps
 * its MRs through odp_refs, so that a dereg from another thread does not
 * wait for it.
 *
 * Return: 0; -EOPNOTSUPP for another advice; -EINVAL for an unknown key,
 * a range out of bounds or an MR without ODP; -EPERM for a write prefetch
 * of an MR without local write; -EBUSY for an asynchronous prefetch when
 * the context has SROCE_ODP_QUEUED_MAX queued; for a synchronous
 * prefetch, the fault's error.
 */
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sroce_prefetch_work *pw;
	struct sroce_odp_budget *b;
	struct sroce_mr *mr;
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH) {
		for (i = 0; i < num_sge && !err; i++) {
			err = sroce_prefetch_get(pd, &sg_list[i], write, &mr);
			if (err)
				break;
			err = sroce_odp_fault(mr, sg_list[i].addr,
					      sg_list[i].length, write, fault);
			sroce_odp_mr_drop(mr);
		}
		return err;
	}
	if (!num_sge || !pd->uobject)
		return 0;
	b = to_suc(pd->uobject->context)->odp;
	pw = kvzalloc(struct_size(pw, frag, num_sge), GFP_KERNEL_ACCOUNT);
	if (!pw)
		return -ENOMEM;
	if (!sroce_odp_slot_get(b)) {
		kvfree(pw);
		return -EBUSY;
	}
	refcount_inc(&b->ref);
	pw->budget = b;
	for (i = 0; i < num_sge; i++) {
		err = sroce_prefetch_get(pd, &sg_list[i], write,
					 &pw->frag[i].mr);
		if (err)
			goto undo;
		pw->frag[i].iova = sg_list[i].addr;
		pw->frag[i].len = sg_list[i].length;
	}
	INIT_WORK(&pw->work, sroce_prefetch_work_fn);
	pw->num = num_sge;
	pw->write = write;
	pw->fault = fault;
	queue_work(sroce_odp_wq, &pw->work);
	return 0;

undo:
	while (i--)
		sroce_odp_mr_drop(pw->frag[i].mr);
	sroce_odp_slot_put(b);
	sroce_odp_budget_put(b);
	kvfree(pw);
	return err;
}

/**
 * sroce_odp_caps() - what query_device reports for ODP
 * @a: the attributes being filled in
 *
 * Only what faults in correctly: RC in every direction (FLUSH where the
 * kernel lets an MR have the right), UD only to send (a datagram whose
 * receive buffer misses is dropped: UD has no RNR NAK), no implicit ODP.
 */
void sroce_odp_caps(struct ib_device_attr *a)
{
	struct ib_odp_caps *c = &a->odp_caps;

	a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	c->general_caps = IB_ODP_SUPPORT;
	c->per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV | SROCE_ODP_SUPPORT_ATOMIC_WRITE |
		(SROCE_DEVICE_FLUSH_GLOBAL ? SROCE_ODP_SUPPORT_FLUSH : 0);
	c->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}

int sroce_odp_init(void)
{
	/*
	 * Unbound: a fault may sleep long, and nothing here is per-CPU. As
	 * many workers as a workqueue may have: each context has its bound.
	 */
	sroce_odp_wq = alloc_workqueue("sroce_odp", WQ_UNBOUND, WQ_MAX_ACTIVE);
	return sroce_odp_wq ? 0 : -ENOMEM;
}

void sroce_odp_exit(void)
{
	destroy_workqueue(sroce_odp_wq);
}
