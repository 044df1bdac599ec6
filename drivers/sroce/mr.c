// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: pinning (ib_umem), the page list, keys, access and bounds
 * checks, and the copy (optionally with the ICRC in the same pass) between
 * packets and MR pages.
 *
 * Keys are (index << 8) | key8 with the index from a per-device xarray
 * (index 0 is never used, so key 0, the local DMA lkey, never names an MR).
 * The data path finds an MR by key under RCU and takes a user reference;
 * dereg removes the key first, then waits until the last user is gone, so
 * no packet ever touches pages that are being unpinned.
 */
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

/* Access flags an MR may carry. */
#define SROCE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING | \
			 SROCE_ACCESS_FLUSH_GLOBAL | SROCE_ACCESS_ON_DEMAND)

/**
 * sroce_mr_access_ok() - may [@iova, @iova + @len) be used with @need
 * @mr_iova: first address of the MR
 * @mr_len: its length
 * @mr_access: its IB_ACCESS_* flags
 * @iova: first address asked for
 * @len: bytes asked for (0 is always within bounds)
 * @need: IB_ACCESS_* rights asked for; 0 means local read, always granted
 *
 * Overflow-safe: no sum of untrusted values is formed.
 *
 * Return: 0, -EACCES when a right is missing, -ERANGE when out of bounds.
 */
int sroce_mr_access_ok(u64 mr_iova, u64 mr_len, int mr_access, u64 iova,
		       u64 len, int need)
{
	if ((mr_access & need) != need)
		return -EACCES;
	if (!len)
		return 0;
	if (iova < mr_iova || len > mr_len || iova - mr_iova > mr_len - len)
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_access_ok);

/*
 * A fast-registered MR's kernel address for @iova (in bounds), and the
 * bytes to the end of its page.
 */
static void *sroce_fr_va(struct sroce_mr *mr, u64 iova, u32 *room)
{
	u64 psz = 1ULL << mr->fr_shift;
	u64 off = iova - (mr->iova & ~(psz - 1));

	*room = psz - (off & (psz - 1));
	return (void *)(uintptr_t)(mr->fr_pages[off >> mr->fr_shift] +
				   (off & (psz - 1)));
}

/*
 * An MR's kernel address for @iova (in bounds; an ODP MR's page present)
 * and the bytes from there that are contiguous. Undo with kunmap_local(*@map)
 * when *@map is set.
 */
static void *sroce_mr_map(struct sroce_mr *mr, u64 iova, u32 *room, u8 **map)
{
	u64 off = iova - mr->iova + mr->page_off;

	*map = NULL;
	if (mr->dma) {
		*room = U32_MAX;
		return (void *)(uintptr_t)iova;
	}
	if (mr->fr)
		return sroce_fr_va(mr, iova, room);
	*map = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
	*room = PAGE_SIZE - (off & ~PAGE_MASK);
	return *map + (off & ~PAGE_MASK);
}

/* One contiguous piece; the CRC runs over it while it is hot. */
static void sroce_copy_chunk(void *va, void *buf, u32 n, bool to_mr, u32 *crc)
{
	if (to_mr)
		memcpy(va, buf, n);
	else
		memcpy(buf, va, n);
	if (crc)
		*crc = crc32_le(*crc, buf, n);
}

/**
 * sroce_mr_copy() - copy between a buffer and an MR, optionally with CRC
 * @mr: the MR; the caller checked the range with sroce_mr_access_ok()
 * @iova: first MR address
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: copy @buf into the MR (else the MR into @buf)
 * @crc: when not NULL, running CRC-32 continued over the bytes copied,
 *	 computed on each chunk right after it is copied, while it is hot
 */
void sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		   bool to_mr, u32 *crc)
{
	while (len) {
		u32 room, n;
		u8 *map;
		void *va = sroce_mr_map(mr, iova, &room, &map);

		n = min(len, room);
		sroce_copy_chunk(va, buf, n, to_mr, crc);
		if (map)
			kunmap_local(map);
		buf += n;
		iova += n;
		len -= n;
	}
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_copy);

static void sroce_payref_release(struct sk_buff *skb)
{
	struct sroce_payref *ref = (struct sroce_payref *)skb->cb;
	int i;

	for (i = 0; i < SROCE_PAYREF_MAX && ref->mr[i]; i++)
		sroce_mr_put(ref->mr[i]);
}

/**
 * sroce_payref_start() - build a local packet's payload by reference
 * @skb: a packet from sroce_pkt_alloc() whose route stays in the host
 *	 (sroce_pkt_icrc_start() returned NULL)
 * @pay: where its payload goes
 *
 * The MR pieces the copy then meets are recorded, not copied (at most
 * SROCE_PAYREF_MAX of them, and never an ODP or fast-registration MR:
 * the first is only readable under odp_lock, the second may be
 * invalidated by the very packet that carries it, which would wait for
 * the packet's own reference); from the first piece copied on, the rest
 * is copied into the skb as usual. The local receive path hands the
 * packet over synchronously and frees it, which lets the MRs go.
 *
 * Return: what to set as sroce_copy.ref.
 */
struct sroce_payref *sroce_payref_start(struct sk_buff *skb, u8 *pay)
{
	struct sroce_payref *ref = (struct sroce_payref *)skb->cb;

	BUILD_BUG_ON(sizeof(*ref) > sizeof(skb->cb));
	memset(ref, 0, sizeof(*ref));
	ref->pay = pay - skb->head;
	skb->destructor = sroce_payref_release;
	return ref;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_payref_start);

/* Record [@iova, @iova + @len) of @mr as the next piece, if it may be. */
static bool sroce_payref_add(struct sroce_payref *ref, struct sroce_mr *mr,
			     u64 iova, u32 len)
{
	int i;

	if (ref->closed || mr->odp || mr->fr)
		goto closed;
	for (i = 0; i < SROCE_PAYREF_MAX; i++) {
		if (ref->mr[i])
			continue;
		refcount_inc(&mr->users);
		ref->mr[i] = mr;
		ref->va[i] = iova;
		ref->len[i] = len;
		return true;
	}
closed:
	ref->closed = true;
	return false;
}

/* Copy @len bytes of @src at @sva into @dst at @dva: a local packet's. */
static void sroce_mr_copy_mr(struct sroce_mr *dst, u64 dva,
			     struct sroce_mr *src, u64 sva, u32 len)
{
	while (len) {
		u32 room, n;
		u8 *map;
		void *va = sroce_mr_map(src, sva, &room, &map);

		n = min(len, room);
		sroce_mr_copy(dst, dva, va, n, true, NULL);
		if (map)
			kunmap_local(map);
		dva += n;
		sva += n;
		len -= n;
	}
}

/*
 * Place @len bytes of a local packet built with sroce_payref_start(), from
 * @off (as skb->data + @off), into @mr at @iova: from the MRs its pieces
 * name, the rest from the skb.
 */
static void sroce_payref_copy(struct sk_buff *skb, u32 off,
			      struct sroce_mr *mr, u64 iova, u32 len)
{
	const struct sroce_payref *ref = (const struct sroce_payref *)skb->cb;
	u8 *pay = skb->head + ref->pay;
	u32 pos = skb->data + off - pay, start = 0;
	int i;

	for (i = 0; i < SROCE_PAYREF_MAX && ref->mr[i] && len; i++) {
		u32 n;

		if (pos >= start + ref->len[i]) {
			start += ref->len[i];
			continue;
		}
		n = min(start + ref->len[i] - pos, len);
		sroce_mr_copy_mr(mr, iova, ref->mr[i], ref->va[i] + pos - start,
				 n);
		start += ref->len[i];
		iova += n;
		pos += n;
		len -= n;
	}
	if (len)
		sroce_mr_copy(mr, iova, pay + pos, len, true, NULL);
}

/**
 * sroce_odp_present() - whether an ODP MR's range may be copied now
 * @mr: the MR (its mirror: pages[], NULL where absent, and odp_writable)
 * @iova: first address, in bounds
 * @len: bytes, > 0
 * @write: the copy writes the MR
 *
 * Caller holds odp_lock (or owns a test fixture).
 *
 * Return: true when every page of the range is present, and writable
 * for @write.
 */
bool sroce_odp_present(struct sroce_mr *mr, u64 iova, u32 len, bool write)
{
	u64 off = iova - mr->iova + mr->page_off;
	unsigned long i = off >> PAGE_SHIFT;
	unsigned long last = (off + len - 1) >> PAGE_SHIFT;

	for (; i <= last; i++)
		if (!mr->pages[i] || (write && !test_bit(i, mr->odp_writable)))
			return false;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_odp_present);

/* Move @len bytes between @mr at @iova and @c, and advance @c. */
static void sroce_mr_xfer_pages(struct sroce_mr *mr, u64 iova, u32 len,
				struct sroce_copy *c)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0;

	if (!c->skb) {
		if (!c->ref || c->to_mr || !sroce_payref_add(c->ref, mr, iova, len))
			sroce_mr_copy(mr, iova, c->buf, len, c->to_mr, c->crc);
		c->buf += len;
		return;
	}
	if (c->skb->destructor == sroce_payref_release) {
		sroce_payref_copy(c->skb, c->off, mr, iova, len);
		c->off += len;
		return;
	}
	/* Out of a received packet, fragments and all, without linearizing. */
	skb_prepare_seq_read(c->skb, c->off, c->off + len, &st);
	while (done < len) {
		u32 n = skb_seq_read(done, &data, &st);

		if (!n)
			break;
		n = min(n, len - done);
		sroce_mr_copy(mr, iova + done, (void *)data, n, true, c->crc);
		done += n;
	}
	skb_abort_seq_read(&st);
	c->off += len;
}

/*
 * As sroce_mr_xfer_pages(). An ODP MR's pages must all be there (and
 * writable, to write): the copy runs under odp_lock, which an MMU
 * invalidation takes for writing before the pages may go. Otherwise they
 * are faulted in (sroce_odp_miss()) and its -EAGAIN, -ENOMEM or -EACCES
 * returned, nothing copied.
 */
static int sroce_mr_xfer(struct sroce_mr *mr, u64 iova, u32 len,
			 struct sroce_copy *c)
{
	if (!mr->odp) {
		sroce_mr_xfer_pages(mr, iova, len, c);
		return 0;
	}
	read_lock_bh(&mr->odp_lock);
	if (unlikely(!sroce_odp_present(mr, iova, len, c->to_mr))) {
		read_unlock_bh(&mr->odp_lock);
		return sroce_odp_miss(mr, iova, len, c->to_mr, c->qp, c->kick);
	}
	sroce_mr_xfer_pages(mr, iova, len, c);
	read_unlock_bh(&mr->odp_lock);
	return 0;
}

/**
 * sroce_mr_get_for() - the MR a key names, held, if @pd may use it
 * @pd: the user's PD
 * @key: an MR's key (never a window's)
 * @va: first address
 * @len: bytes
 * @need: IB_ACCESS_* rights
 *
 * Return: the MR, held; ERR_PTR(-ENOENT) for an unknown key, -EACCES for
 * a foreign PD or a missing right, -ERANGE out of bounds.
 */
struct sroce_mr *sroce_mr_get_for(struct ib_pd *pd, u32 key, u64 va, u32 len,
				  int need)
{
	struct sroce_mr *mr = sroce_mr_get(to_sdev(pd->device), key);
	int err;

	if (!mr)
		return ERR_PTR(-ENOENT);
	if (mr->ibmr.pd != pd)
		err = -EACCES;
	else
		err = sroce_mr_access_ok(mr->iova, mr->length, mr->access,
					 va, len, need);
	if (err) {
		sroce_mr_put(mr);
		return ERR_PTR(err);
	}
	return mr;
}

/* An MR lookup's error as a copy reports it: an unknown key is -EINVAL. */
static int sroce_mr_lookup_err(const struct sroce_mr *mr)
{
	return PTR_ERR(mr) == -ENOENT ? -EINVAL : PTR_ERR(mr);
}

/**
 * sroce_mr_copy_put() - copy between a looked-up MR and @c, and let it go
 * @mr: the lookup's result: the MR, held and checked for [@va, @va + @len);
 *	or its error, and nothing is copied
 * @va: first address
 * @len: bytes
 * @c: the other side of the copy
 *
 * Return: 0; the lookup's error (an unknown key is -EINVAL); for an ODP MR
 * -EAGAIN while its pages are faulted in (-ENOMEM when that could not even
 * be asked for), then -EACCES if that failed.
 */
int sroce_mr_copy_put(struct sroce_mr *mr, u64 va, u32 len,
		      struct sroce_copy *c)
{
	int err = 0;

	if (IS_ERR(mr))
		return sroce_mr_lookup_err(mr);
	if (len)
		err = sroce_mr_xfer(mr, va, len, c);
	sroce_mr_put(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_copy_put);

/* Copy between the memory an lkey of @pd names and @c: never a window's. */
static int sroce_mr_copy_lkey(struct ib_pd *pd, u32 lkey, u64 va, u32 len,
			      int need, struct sroce_copy *c)
{
	return sroce_mr_copy_put(sroce_mr_get_for(pd, lkey, va, len, need), va,
				 len, c);
}

/**
 * sroce_atomic_op() - one 8-byte atomic operation on memory
 * @p: the 8-byte aligned word
 * @op: SROCE_OP_CMP_SWAP, SROCE_OP_FETCH_ADD or SROCE_OP_ATOMIC_WRITE
 * @a: the compare value, the addend, or the 8 bytes to write
 * @b: the swap value (CMP_SWAP)
 *
 * With the CPU's own atomic instructions, so it is atomic against other
 * sroce atomics on any device and against the CPUs (IB_ATOMIC_GLOB).
 *
 * Return: the word before.
 */
u64 sroce_atomic_op(u64 *p, u8 op, u64 a, u64 b)
{
	u64 old;

	switch (op) {
	case SROCE_OP_CMP_SWAP:
		return cmpxchg64(p, a, b);
	case SROCE_OP_FETCH_ADD:
		do {
			old = READ_ONCE(*p);
		} while (cmpxchg64(p, old, old + a) != old);
		return old;
	default:
		old = READ_ONCE(*p);
		/* Ordered after everything the QP executed before it. */
		smp_store_release(p, a);
		return old;
	}
}
EXPORT_SYMBOL_IF_KUNIT(sroce_atomic_op);

/* The atomic on the word at @va of @mr (in bounds); -EFAULT if unaligned. */
static int sroce_mr_atomic_word(struct sroce_mr *mr, u64 va, u8 op, u64 a,
				u64 b, u64 *orig)
{
	u8 *map = NULL;
	int err = 0;
	u64 *p, off;

	if (mr->dma) {
		p = (u64 *)(uintptr_t)va;
	} else if (mr->fr) {
		u32 room;

		p = sroce_fr_va(mr, va, &room);
	} else {
		off = va - mr->iova + mr->page_off;
		map = kmap_local_page(mr->pages[off >> PAGE_SHIFT]);
		p = (u64 *)(map + (off & ~PAGE_MASK));
	}
	if ((uintptr_t)p & (sizeof(u64) - 1))
		err = -EFAULT;
	else
		*orig = sroce_atomic_op(p, op, a, b);
	if (map)
		kunmap_local(map);
	return err;
}

/**
 * sroce_mr_atomic_put() - an 8-byte atomic operation on a looked-up MR
 * @mr: the lookup's result: the MR, held and checked for the word, let go
 *	here; or its error, and nothing is done
 * @qp: the QP the request arrived on (ODP: no QP is resumed, see below)
 * @va: the address, 8-byte aligned
 * @op: as for sroce_atomic_op()
 * @a: as for sroce_atomic_op()
 * @b: as for sroce_atomic_op()
 * @orig: set to the word before
 *
 * Return: 0; the lookup's error (an unknown key is -EINVAL); -EAGAIN or
 * -ENOMEM as for
 * sroce_mr_copy_put() (an ODP fault is resolved with no QP to resume: the
 * caller sends an RNR NAK); -EFAULT when the word is not 8-byte aligned in
 * memory (an MR whose iova and pages disagree in their low bits).
 */
int sroce_mr_atomic_put(struct sroce_mr *mr, struct sroce_qp *qp, u64 va,
			u8 op, u64 a, u64 b, u64 *orig)
{
	int err;

	if (IS_ERR(mr))
		return sroce_mr_lookup_err(mr);
	if (!mr->odp) {
		err = sroce_mr_atomic_word(mr, va, op, a, b, orig);
		goto out;
	}
	/* ODP: under odp_lock, as a copy (sroce_mr_xfer()). */
	read_lock_bh(&mr->odp_lock);
	if (sroce_odp_present(mr, va, sizeof(u64), true)) {
		err = sroce_mr_atomic_word(mr, va, op, a, b, orig);
		read_unlock_bh(&mr->odp_lock);
	} else {
		read_unlock_bh(&mr->odp_lock);
		err = sroce_odp_miss(mr, va, sizeof(u64), true, qp,
				     SROCE_ODP_KICK_NONE);
	}
out:
	sroce_mr_put(mr);
	return err;
}

/**
 * sroce_sge_copy() - copy part of a message between an SGE list and @c
 * @pd: the QP's PD
 * @sge: the list, validated lengths
 * @num_sge: entries
 * @off: first message byte
 * @len: bytes
 * @need: IB_ACCESS_* rights (IB_ACCESS_LOCAL_WRITE to scatter)
 * @c: the other side
 *
 * Return: 0, or the error of the first SGE that fails (see
 * sroce_mr_copy_put()); -ERANGE when the list is shorter than asked.
 * Window keys are never lkeys: they are unknown here.
 */
int sroce_sge_copy(struct ib_pd *pd, const struct ib_sge *sge, u32 num_sge,
		   u32 off, u32 len, int need, struct sroce_copy *c)
{
	u32 i;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		u32 n;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(sge[i].length - off, len);
		err = sroce_mr_copy_lkey(pd, sge[i].lkey, sge[i].addr + off, n,
					 need, c);
		if (err)
			return err;
		len -= n;
		off = 0;
	}
	return len ? -ERANGE : 0;
}

/**
 * sroce_sge_prefault() - have a local ODP destination faulted in early
 * @qp: the requester's QP, paused (odp_wait) on -EAGAIN until it is
 * @sge: where a READ's or an atomic's response goes
 * @num_sge: entries
 * @len: bytes from the start of the list
 *
 * The completer places responses in softirq context, where a missing page
 * costs a dropped response and a resend; asking for the pages before the
 * request goes out avoids that in the common case. Only a check: a bad
 * SGE is left for the placement to report.
 *
 * Return: 0, or -EAGAIN, -ENOMEM or -EACCES as for sroce_mr_copy_put().
 */
int sroce_sge_prefault(struct sroce_qp *qp, const struct ib_sge *sge,
		       u32 num_sge, u32 len)
{
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		u32 n = min(sge[i].length, len);
		struct sroce_mr *mr;
		int err = 0;

		len -= n;
		mr = sroce_mr_get_for(qp->ibqp.pd, sge[i].lkey, sge[i].addr, n,
				      IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(mr))
			continue;
		if (n && mr->odp) {
			bool there;

			read_lock_bh(&mr->odp_lock);
			there = sroce_odp_present(mr, sge[i].addr, n, true);
			read_unlock_bh(&mr->odp_lock);
			err = there ? 0 : sroce_odp_miss(mr, sge[i].addr, n, true,
							 qp, SROCE_ODP_KICK_REQ);
		}
		sroce_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}

/**
 * sroce_mr_get() - find an MR by key and hold it for use
 * @sdev: device
 * @key: lkey or rkey
 *
 * Any context. Release with sroce_mr_put().
 *
 * Return: the MR, or NULL for an unknown, stale or dying key.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, sroce_key_index(key));
	if (mr && !refcount_inc_not_zero(&mr->users))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;
	/*
	 * Counted first, then checked: pairs with the barrier in
	 * sroce_mr_inv_rcu(), so an invalidation either sees this use and
	 * waits for it, or this sees the MR invalid.
	 */
	smp_mb__after_atomic();
	/* Acquire: what made it valid (a fast registration) is visible. */
	if (!smp_load_acquire(&mr->valid) || READ_ONCE(mr->key) != key) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->users))
		complete(&mr->idle);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_put);

/* Give @mr an index and key; it becomes visible to sroce_mr_get(). */
static int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	u32 index;
	u8 key8;
	int err;

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR_INDEX), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		return err;
	key8 = sroce_key_random();
	mr->ibmr.lkey = sroce_key_make(index, key8);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	/* A fast-registration MR waits for IB_WR_REG_MR. */
	mr->valid = !mr->fr;
	refcount_set(&mr->users, 1);
	init_completion(&mr->idle);
	xa_store(&sdev->mr_xa, index, mr, GFP_KERNEL);
	return 0;
}

static struct sroce_mr *sroce_mr_alloc(struct ib_pd *pd, int access)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_mr *mr;

	if (access & ~SROCE_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (sroce_res_get(sdev, SROCE_RES_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr) {
		sroce_res_put(sdev, SROCE_RES_MR);
		return ERR_PTR(-ENOMEM);
	}
	mr->access = access;
	return mr;
}

/*
 * Process context. For an ODP MR dereg has returned already when the
 * last fault (odp.c) calls this: it holds the device's memory, not its
 * registration.
 */
void sroce_mr_free(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	/* For ODP, ib_core removes the MMU notifier: pages[] is quiet. */
	if (mr->umem)
		ib_umem_release(mr->umem);
	if (mr->odp)
		atomic_dec(&sdev->odp_mrs);
	sroce_odp_budget_put(mr->odp_budget);
	kvfree(mr->odp_writable);
	kvfree(mr->pages);
	kfree(mr->fr_pages);
	kfree_rcu(mr, rcu);
	sroce_res_put(sdev, SROCE_RES_MR);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sroce_mr *mr = sroce_mr_alloc(pd, access);
	int err;

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->dma = true;
	mr->iova = 0;
	mr->length = U64_MAX;
	err = sroce_mr_publish(to_sdev(pd->device), mr);
	if (err) {
		sroce_mr_free(to_sdev(pd->device), mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* The pinned pages, one pointer per PAGE_SIZE page, in order. */
static int sroce_mr_pages(struct sroce_mr *mr)
{
	struct sg_table *sgt = &mr->umem->sgt_append.sgt;
	struct sg_page_iter it;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   SROCE_GFP_USER);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(sgt, &it, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	return i == mr->npages ? 0 : -EFAULT;
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_mr *mr;
	int err;

	if (length > SROCE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(pd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = iova;
	mr->length = length;
	mr->page_off = start & ~PAGE_MASK;

	/* A zero-length MR pins nothing; every non-empty access is out of range. */
	if (length && (access & IB_ACCESS_ON_DEMAND)) {
		err = sroce_odp_reg(mr, pd, start, length, access, udata);
		if (err)
			goto err;
	} else if (length) {
		mr->umem = sroce_umem_get(pd->device, start, length, access);
		if (IS_ERR(mr->umem)) {
			err = PTR_ERR(mr->umem);
			mr->umem = NULL;
			goto err;
		}
		err = sroce_mr_pages(mr);
		if (err)
			goto err;
	}
	err = sroce_mr_publish(sdev, mr);
	if (err)
		goto err;
	return &mr->ibmr;

err:
	sroce_mr_free(sdev, mr);
	return ERR_PTR(err);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	/* IBTA: not while windows are bound to it; no bind starts after. */
	spin_lock_bh(&sdev->mw_lock);
	if (mr->nr_mw) {
		spin_unlock_bh(&sdev->mw_lock);
		return -EBUSY;
	}
	WRITE_ONCE(mr->dying, true);	/* sroce_mr_inv_rcu() */
	spin_unlock_bh(&sdev->mw_lock);

	xa_erase(&sdev->mr_xa, sroce_key_index(mr->ibmr.lkey));
	sroce_mr_put(mr);
	/* In-flight packets hold references; they finish, then we unpin. */
	wait_for_completion(&mr->idle);
	/* A fault still queued or blocked frees it when it ends. */
	if (sroce_odp_dereg(mr))
		sroce_mr_free(sdev, mr);
	return 0;
}

/* What sroce_fill_res_mr_entry() reports, named as `rdma resource` shows it. */
struct sroce_mr_res {
	u32 pages, page_shift, valid, in_use, windows, access;
};

#define SROCE_MR_RES(f, hex) SROCE_RES_FIELD(struct sroce_mr_res, f, hex)
static const struct sroce_res_field sroce_mr_res_fields[] = {
	SROCE_MR_RES(pages, false), SROCE_MR_RES(page_shift, false),
	SROCE_MR_RES(valid, false), SROCE_MR_RES(in_use, false),
	SROCE_MR_RES(windows, false), SROCE_MR_RES(access, true),
};

/**
 * sroce_fill_res_mr_entry() - driver details of an MR for `rdma resource`
 * @msg: the netlink message ib_core builds
 * @ibmr: the MR
 *
 * What ``rdma resource show mr -dd`` adds to ib_core's attributes (keys,
 * length, IOVA): its kind (user, odp, dma or fast_reg), the pages it maps
 * (pinned, faultable, or mapped by the last registration) and their size,
 * whether it is valid (a fast-registration MR between REG_MR and
 * invalidation), the copies using it now, the memory windows bound to it
 * and its access flags. A snapshot: the fields may change as it is taken.
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_mr_res r = {
		.pages = mr->fr ? READ_ONCE(mr->fr_n) : mr->npages,
		.page_shift = mr->fr ? READ_ONCE(mr->fr_shift) : PAGE_SHIFT,
		.valid = READ_ONCE(mr->valid),
		.in_use = refcount_read(&mr->users) - 1,
		.windows = READ_ONCE(mr->nr_mw),
		.access = mr->access,
	};
	const char *kind = mr->fr ? "fast_reg" : mr->dma ? "dma" :
			   mr->odp ? "odp" : "user";

	if (mr->dma)
		r.page_shift = 0;
	return sroce_fill_res(msg, kind, sroce_mr_res_fields,
			      ARRAY_SIZE(sroce_mr_res_fields), &r);
}

/**
 * sroce_alloc_mr() - an MR for fast registration by a kernel consumer
 * @pd: its PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: pages ib_map_mr_sg() may map into it
 *
 * Return: the MR, invalid until an IB_WR_REG_MR, or an ERR_PTR.
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sroce_mr_alloc(pd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr = true;
	mr->fr_max = max_num_sg;
	mr->fr_pages = kcalloc(max_num_sg, sizeof(*mr->fr_pages), GFP_KERNEL);
	err = mr->fr_pages ? sroce_mr_publish(sdev, mr) : -ENOMEM;
	if (err) {
		sroce_mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->fr_n >= mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_n++] = addr;
	return 0;
}

int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);

	mr->fr_n = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
}

/**
 * sroce_mr_fast_reg() - execute an IB_WR_REG_MR
 * @pd: the posting QP's PD
 * @mr: the MR the WR names (a kernel consumer's pointer)
 * @key: its new key: same index, any key byte
 * @access: IB_ACCESS_* rights
 *
 * The MR takes the pages, iova and length ib_map_mr_sg() gave it.
 *
 * Return: 0, or -EINVAL (not a fast-registration MR of this PD, still
 * valid, a key of another index, bad rights).
 */
int sroce_mr_fast_reg(struct ib_pd *pd, struct sroce_mr *mr, u32 key,
		      int access)
{
	u32 psz_shift;
	u64 covered;

	if (!mr->fr || mr->ibmr.pd != pd || READ_ONCE(mr->valid) ||
	    sroce_key_index(key) != sroce_key_index(mr->key) ||
	    (access & ~SROCE_MR_ACCESS) || !is_power_of_2(mr->ibmr.page_size))
		return -EINVAL;
	psz_shift = ilog2(mr->ibmr.page_size);
	mr->fr_shift = psz_shift;
	mr->iova = mr->ibmr.iova;
	/* Never beyond the pages mapped, whatever the consumer wrote. */
	covered = ((u64)mr->fr_n << psz_shift) -
		  (mr->iova & (mr->ibmr.page_size - 1));
	mr->length = min_t(u64, mr->ibmr.length, mr->fr_n ? covered : 0);
	mr->access = access;
	WRITE_ONCE(mr->key, key);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* Release: everything above is seen by whoever sees it valid. */
	smp_store_release(&mr->valid, 1);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_fast_reg);

/**
 * sroce_mr_invalidate() - a local or remote invalidation of @key
 * @pd: the QP's PD; the MR must belong to it
 * @key: the key to invalidate
 *
 * Packets already using the MR finish; no new use finds it. BHs off, as
 * sroce_mr_inv_rcu() needs.
 *
 * Return: 0, or -EINVAL for an unknown or stale key, an MR that is
 * already invalid, another PD's MR or an MR that is not fast-registered
 * (those cannot be invalidated).
 */
int sroce_mr_invalidate(struct ib_pd *pd, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = xa_load(&to_sdev(pd->device)->mr_xa, sroce_key_index(key));
	if (mr && READ_ONCE(mr->key) == key)
		err = sroce_mr_inv_rcu(mr, pd);
	rcu_read_unlock();
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_invalidate);

/**
 * sroce_mr_inv_rcu() - invalidate a fast-registered MR found under RCU
 * @mr: the MR; the caller holds no reference, only the RCU read lock (the
 *	MR is freed after a grace period, so it stays readable)
 * @pd: the invalidating QP's PD; the MR must belong to it
 *
 * Of invalidations that overlap, exactly one wins (the one that turns
 * valid from 1 to 0); the others find the MR invalid, as they would had
 * they come after it. The winner returns only once no copy through the
 * MR is under way: the consumer may remap or free its pages as soon as
 * the invalidation completes, and a copy that started before must not
 * write through the old page list afterwards (nor read a page index off a
 * new iova). No new use finds the MR once it is invalid. Every user holds
 * an MR with BHs off, as the caller must, so the users it waits for run
 * on other CPUs (or in hard IRQs) and finish their copy of one packet.
 * Holding no reference itself, the winner waits for the base reference
 * alone, or for none once dereg has dropped it, whoever else waits too.
 *
 * Return: 0, or -EINVAL for another PD's MR, an MR that is not
 * fast-registered (those cannot be invalidated) or one already invalid.
 */
int sroce_mr_inv_rcu(struct sroce_mr *mr, struct ib_pd *pd)
{
	unsigned int base;

	WARN_ON_ONCE(!in_softirq());
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "no RCU read lock");
	if (!mr->fr || mr->ibmr.pd != pd || cmpxchg(&mr->valid, 1, 0) != 1)
		return -EINVAL;
	/* Full barrier (cmpxchg): pairs with sroce_mr_get()'s. */
	for (;;) {
		unsigned int n = refcount_read(&mr->users);

		/*
		 * users first, then dying: dereg sets dying before it drops
		 * the base reference (release), so a count without the base
		 * is never taken for one with it.
		 */
		smp_rmb();
		base = !READ_ONCE(mr->dying);
		if (n <= base)
			return 0;
		cpu_relax();
	}
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_inv_rcu);
