// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows, types 1 and 2 (IBTA 10.6.7): allocation, binding through
 * a send WQE, remote access through a window's rkey, and invalidation; and
 * every rkey a QP receives resolved to its MR, through a window or not
 * (sroce_rkey_*()), so that mr.c never looks up a window.
 *
 * A window's rkey is (index << 8) | key8 like an MR's, with the index in
 * the upper half of the index space (see SROCE_MIN_MW_INDEX). A binding
 * names an MR of the window's PD; the MR counts the windows bound to it
 * and refuses deregistration while any is, so a bound window's MR pointer
 * stays good. The data path looks a window up under RCU, checks it under
 * its lock and leaves holding a user reference on the MR, exactly as for
 * an MR's own rkey.
 *
 * Locks: mw->lock, then sdev->mw_lock. Neither is taken in hard interrupt
 * context (a post with interrupts off leaves its WQEs to a worker), so
 * BHs off is enough; on the data path they are off already.
 */
#include <linux/slab.h>

#include "sroce.h"
#include <sroce/wire.h>

/*
 * The rights a window may grant. LOCAL_WRITE means nothing for a window
 * but consumers (rdma-core's own tests among them) pass it; it is ignored.
 * Zero-based windows are not supported.
 */
#define SROCE_MW_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE)

static struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_ibmw, ibmw)->mw;
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw;
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = sroce_res_get(sdev, SROCE_RES_MW);
	if (err)
		return err;
	mw = kzalloc_obj(*mw, GFP_KERNEL);
	if (!mw) {
		err = -ENOMEM;
		goto err_res;
	}
	spin_lock_init(&mw->lock);
	INIT_LIST_HEAD(&mw->qp_entry);
	mw->pd = ibmw->pd;
	mw->type = ibmw->type;
	err = xa_alloc_cyclic(&sdev->mw_xa, &index, NULL,
			      XA_LIMIT(SROCE_MIN_MW_INDEX, SROCE_MAX_MW_INDEX),
			      &sdev->mw_next, GFP_KERNEL);
	if (err < 0)
		goto err_free;
	mw->key = sroce_key_make(index, sroce_key_random());
	ibmw->rkey = mw->key;
	container_of(ibmw, struct sroce_ibmw, ibmw)->mw = mw;
	xa_store(&sdev->mw_xa, index, mw, GFP_KERNEL);
	return 0;

err_free:
	kfree(mw);
err_res:
	sroce_res_put(sdev, SROCE_RES_MW);
	return err;
}

/* Drop @mw's binding, if any. Caller holds mw->lock. */
static void sroce_mw_unbind(struct sroce_dev *sdev, struct sroce_mw *mw)
{
	lockdep_assert_held(&mw->lock);
	if (mw->mr) {
		spin_lock(&sdev->mw_lock);
		mw->mr->nr_mw--;
		list_del_init(&mw->qp_entry);
		spin_unlock(&sdev->mw_lock);
	}
	mw->mr = NULL;
	mw->bound = false;
	mw->length = 0;
	mw->access = 0;
}

/*
 * Wait until every access that went through @mw before it was unbound has
 * finished: once a teardown returns (or its WQE completes), the memory
 * behind the window must not change through it any more. An access is a
 * copy of at most one packet with BHs off on another CPU, so a spin is
 * short; none can start meanwhile, since the window is unbound.
 */
static void sroce_mw_wait(struct sroce_mw *mw)
{
	while (atomic_read_acquire(&mw->inflight))
		cpu_relax();
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);

	xa_erase(&sdev->mw_xa, sroce_key_index(ibmw->rkey));
	/* A reader that found it before the erase sees key 0: no match. */
	spin_lock_bh(&mw->lock);
	sroce_mw_unbind(sdev, mw);
	mw->key = 0;
	spin_unlock_bh(&mw->lock);
	sroce_mw_wait(mw);
	kfree_rcu(mw, rcu);
	sroce_res_put(sdev, SROCE_RES_MW);
	return 0;
}

/**
 * sroce_mw_bind_check() - IBTA's rules for one bind, without the lookups
 * @type: the window's type
 * @bound: whether it is bound now
 * @b: the bind request
 * @mr_iova: the MR's first address (unused when @b->length is 0)
 * @mr_len: its length
 * @mr_access: its IB_ACCESS_* rights
 *
 * A type 1 window may be bound again while bound, and a bind of length 0
 * unbinds it. A type 2 window must be free and the bind must be non-empty.
 * The MR must allow window binding, and local write when the window grants
 * remote write or atomics (C10-74); the range must lie inside it (C10-75).
 * The rkey keeps the window's index; only its key byte is the consumer's.
 *
 * Return: 0 or -EINVAL.
 */
int sroce_mw_bind_check(u8 type, bool bound, const struct sroce_mw_bind *b,
			u64 mr_iova, u64 mr_len, int mr_access)
{
	if ((b->access & ~SROCE_MW_ACCESS) ||
	    sroce_key_index(b->rkey) != sroce_key_index(b->mw_rkey))
		return -EINVAL;
	if (type == IB_MW_TYPE_2 && (bound || !b->length))
		return -EINVAL;
	if (!b->length)
		return 0;
	if (!(mr_access & IB_ACCESS_MW_BIND))
		return -EINVAL;
	if ((b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr_access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (sroce_mr_access_ok(mr_iova, mr_len, 0, b->addr, b->length, 0))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_bind_check);

/**
 * sroce_mw_bind() - execute a BIND_MW work request posted on @qp
 * @qp: the posting QP; its PD must be the window's (and the MR's)
 * @b: the request, copied out of the SQ
 *
 * Called in SQ order by the requester, under req.lock.
 *
 * Return: 0, or -EINVAL when the bind breaks a rule (the WQE then
 * completes with IB_WC_MW_BIND_ERR).
 */
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_mw_bind *b)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	int err = -EINVAL;
	bool was_bound;

	if (!sroce_key_is_mw(b->mw_rkey))
		return -EINVAL;
	if (b->length) {
		mr = sroce_mr_get(sdev, b->mr_lkey);
		if (!mr)
			return -EINVAL;
	}
	rcu_read_lock();
	mw = xa_load(&sdev->mw_xa, sroce_key_index(b->mw_rkey));
	if (!mw)
		goto out;
	spin_lock_bh(&mw->lock);
	/*
	 * Found by index only: a consumer that never copied the last type 2
	 * bind's rkey into its ibv_mw still passes the old one.
	 */
	if (!mw->key || mw->pd != qp->ibqp.pd || (mr && mr->ibmr.pd != mw->pd))
		goto unlock;
	err = sroce_mw_bind_check(mw->type, mw->bound, b,
				  mr ? mr->iova : 0, mr ? mr->length : 0,
				  mr ? mr->access : 0);
	if (err)
		goto unlock;
	if (mr) {
		spin_lock(&sdev->mw_lock);
		if (mr->dying) {
			err = -EINVAL;
		} else {
			mr->nr_mw++;
			/* A type 2 window is free here (bind_check). */
			if (mw->type == IB_MW_TYPE_2)
				list_add_tail(&mw->qp_entry, &qp->mw_list);
		}
		spin_unlock(&sdev->mw_lock);
		if (err)
			goto unlock;
	}
	/*
	 * A type 1 window may be bound already: that binding goes, and so
	 * do the accesses still under way through it, as for a dealloc or
	 * an invalidation: once the WQE completes, the old range must not
	 * change through the window any more. New ones wait on mw->lock,
	 * and then see the new binding.
	 */
	was_bound = mw->bound;
	sroce_mw_unbind(sdev, mw);
	if (was_bound)
		sroce_mw_wait(mw);
	mw->mr = mr;
	mw->bound = !!mr;
	mw->iova = b->addr;
	mw->length = b->length;
	mw->access = b->access;
	mw->qpn = qp->ibqp.qp_num;
	mw->key = b->rkey;
unlock:
	spin_unlock_bh(&mw->lock);
out:
	rcu_read_unlock();
	if (mr)
		sroce_mr_put(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mw_bind);

/*
 * sroce_mw_get_mr() - the MR behind a window's rkey, for remote access
 * @qp: the QP the rkey arrived on
 * @rkey: the window's rkey
 * @va: first address
 * @len: bytes
 * @need: IB_ACCESS_REMOTE_* rights
 *
 * Return: the MR, held (sroce_mr_put()); ERR_PTR(-ENOENT) when the key
 * names no bound window (unknown, stale, invalidated), -EACCES (another PD;
 * a type 2 window bound to another QP; a right the window does not grant)
 * or -ERANGE (outside it).
 */
static struct sroce_mr *sroce_mw_get_mr(struct sroce_qp *qp, u32 rkey,
					u64 va, u64 len, int need,
					struct sroce_mw **held)
{
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	int err = 0;

	rcu_read_lock();
	mw = xa_load(&qp->sdev->mw_xa, sroce_key_index(rkey));
	if (!mw)
		goto out;
	spin_lock_bh(&mw->lock);
	if (mw->key == rkey && mw->bound) {
		if (mw->pd != qp->ibqp.pd ||
		    (mw->type == IB_MW_TYPE_2 && mw->qpn != qp->ibqp.qp_num))
			err = -EACCES;
		else
			err = sroce_mr_access_ok(mw->iova, mw->length,
						 mw->access, va, len, need);
		/* Bound: the MR cannot be deregistered, users is not 0. */
		mr = mw->mr;
		refcount_inc(&mr->users);
		/* As sroce_mr_get(): an invalidated MR is no window's. */
		smp_mb__after_atomic();
		/* Acquire: pairs with the release in sroce_mr_fast_reg(). */
		if (!smp_load_acquire(&mr->valid)) {
			sroce_mr_put(mr);
			mr = NULL;
		} else if (!err) {
			atomic_inc(&mw->inflight);
		}
	}
	spin_unlock_bh(&mw->lock);
out:
	rcu_read_unlock();
	if (!mr)
		return ERR_PTR(-ENOENT);
	if (err) {
		sroce_mr_put(mr);
		return ERR_PTR(err);
	}
	*held = mw;
	return mr;
}

/*
 * The MR behind an rkey @qp received, held and checked, or an error as
 * above: an MR's key, or a memory window's, which resolves to the MR it
 * is bound to. Through a window, *@held is set to it, counted as an
 * access under way until sroce_rkey_done(); else to NULL.
 */
static struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				       u32 len, int need,
				       struct sroce_mw **held)
{
	*held = NULL;
	if (sroce_key_is_mw(rkey))
		return sroce_mw_get_mr(qp, rkey, va, len, need, held);
	return sroce_mr_get_for(qp->ibqp.pd, rkey, va, len, need);
}

/* The access through @mw (sroce_rkey_get()) is over: its stores are done. */
static void sroce_rkey_done(struct sroce_mw *mw)
{
	if (mw)
		atomic_dec_return_release(&mw->inflight);
}

/**
 * sroce_rkey_check() - may @qp use @rkey for @need on [@va, @va + @len)
 * @qp: the responder's QP
 * @rkey: an MR's or a memory window's rkey
 * @va: first address
 * @len: bytes; 0 is always allowed
 * @need: IB_ACCESS_REMOTE_* rights
 *
 * Return: 0, or -EACCES / -ERANGE (an unknown key is -EACCES).
 */
int sroce_rkey_check(struct sroce_qp *qp, u32 rkey, u64 va, u32 len, int need)
{
	if (!len)
		return 0;
	return sroce_rkey_rights(qp, rkey, va, len, need);
}

/**
 * sroce_rkey_rights() - sroce_rkey_check(), with the key checked at length 0
 * @qp: the responder's QP
 * @rkey: an MR's or a memory window's rkey
 * @va: first address
 * @len: bytes; 0 checks the key and the rights, no range
 * @need: IB_ACCESS_* rights
 *
 * Return: 0, or -EACCES / -ERANGE (an unknown key is -EACCES).
 */
int sroce_rkey_rights(struct sroce_qp *qp, u32 rkey, u64 va, u32 len, int need)
{
	struct sroce_mw *mw;
	struct sroce_mr *mr = sroce_rkey_get(qp, rkey, va, len, need, &mw);

	if (IS_ERR(mr))
		return PTR_ERR(mr) == -ENOENT ? -EACCES : PTR_ERR(mr);
	sroce_mr_put(mr);
	sroce_rkey_done(mw);
	return 0;
}

/**
 * sroce_rkey_copy() - copy between the memory an rkey names and a packet
 * @qp: the QP the rkey arrived on; the MR or window must allow it
 * @rkey: an MR's or a memory window's rkey
 * @va: first address
 * @len: bytes
 * @need: IB_ACCESS_REMOTE_* rights the access needs
 * @c: the other side of the copy
 *
 * Return: as sroce_mr_copy_put(); -EINVAL for an unknown key, -EACCES for
 * a foreign PD or QP or a missing right, -ERANGE when out of bounds.
 * Nothing is copied on error.
 */
int sroce_rkey_copy(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		    int need, struct sroce_copy *c)
{
	struct sroce_mw *mw;
	int err;

	err = sroce_mr_copy_put(sroce_rkey_get(qp, rkey, va, len, need, &mw),
				va, len, c);
	sroce_rkey_done(mw);
	return err;
}

/**
 * sroce_rkey_atomic() - an 8-byte atomic operation on the memory an rkey names
 * @qp: the QP the request arrived on
 * @rkey: an MR's or a memory window's rkey
 * @va: the address, 8-byte aligned
 * @op: as for sroce_atomic_op(); ATOMIC WRITE needs remote write, the
 *	others remote atomic access
 * @a: as for sroce_atomic_op()
 * @b: as for sroce_atomic_op()
 * @orig: set to the word before
 *
 * Return: as sroce_mr_atomic_put(), with the errors of sroce_rkey_copy().
 */
int sroce_rkey_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 op, u64 a,
		      u64 b, u64 *orig)
{
	int need = op == SROCE_OP_ATOMIC_WRITE ? IB_ACCESS_REMOTE_WRITE :
						 IB_ACCESS_REMOTE_ATOMIC;
	struct sroce_mw *mw;
	struct sroce_mr *mr = sroce_rkey_get(qp, rkey, va, sizeof(u64), need,
					     &mw);
	int err = sroce_mr_atomic_put(mr, qp, va, op, a, b, orig);

	sroce_rkey_done(mw);
	return err;
}

/**
 * sroce_mw_qp_gone() - free the type 2 windows bound through a dying QP
 * @qp: the QP, past its last packet
 *
 * A type 2 window is bound to a QP; once the QP is gone the window is free
 * again (for a bind through another QP), and no QP that later gets the
 * same number inherits it.
 */
void sroce_mw_qp_gone(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mw *mw;

	/* Entries are freed after a grace period: keep them while we look. */
	rcu_read_lock();
	for (;;) {
		spin_lock_bh(&sdev->mw_lock);
		mw = list_first_entry_or_null(&qp->mw_list, struct sroce_mw,
					      qp_entry);
		spin_unlock_bh(&sdev->mw_lock);
		if (!mw)
			break;
		/*
		 * Only under mw->lock does a window join or leave a list. If
		 * it left ours meanwhile (freed, invalidated), look again.
		 */
		spin_lock_bh(&mw->lock);
		if (mw->qpn == qp->ibqp.qp_num && !list_empty(&mw->qp_entry))
			sroce_mw_unbind(sdev, mw);
		spin_unlock_bh(&mw->lock);
	}
	rcu_read_unlock();
}

/* Invalidate the type 2 window @key names, for @qp. */
static int sroce_mw_invalidate(struct sroce_qp *qp, u32 key, bool remote)
{
	struct sroce_mw *mw;
	int err = -EINVAL;

	rcu_read_lock();
	mw = xa_load(&qp->sdev->mw_xa, sroce_key_index(key));
	if (!mw)
		goto out;
	spin_lock_bh(&mw->lock);
	/*
	 * Type 1 windows cannot be invalidated. A remote invalidation must
	 * come over the QP a type 2 window is bound to.
	 */
	if (mw->key == key && mw->type == IB_MW_TYPE_2 && mw->bound &&
	    mw->pd == qp->ibqp.pd && (!remote || mw->qpn == qp->ibqp.qp_num)) {
		sroce_mw_unbind(qp->sdev, mw);
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	if (!err)
		sroce_mw_wait(mw);	/* freed only after rcu_read_unlock() */
out:
	rcu_read_unlock();
	return err;
}

/**
 * sroce_invalidate() - LOCAL_INV, or the IETH of a SEND_WITH_INV
 * @qp: the QP that executes it
 * @key: an MR's or a type 2 window's key
 * @remote: it came with a SEND_WITH_INV
 *
 * Return: 0 or -EINVAL.
 */
int sroce_invalidate(struct sroce_qp *qp, u32 key, bool remote)
{
	if (sroce_key_is_mw(key))
		return sroce_mw_invalidate(qp, key, remote);
	return sroce_mr_invalidate(qp->ibqp.pd, key);
}
