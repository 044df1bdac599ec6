// SPDX-License-Identifier: GPL-2.0
/*
 * Rings shared with user space (SQ, RQ, SRQ, CQ): geometry, allocation,
 * index publication and the mmap machinery; and the receive WQE's slot
 * format, the same in an RQ and an SRQ: a kernel consumer's WR written
 * into a slot, a slot copied out and validated before it is used.
 *
 * The layout is the rxe provider's: a struct rxe_queue_buf header (geometry,
 * producer index and consumer index on their own cache lines) followed by
 * power-of-two slots. Indices are stored masked. The kernel keeps its own
 * copy of the geometry and of the index it owns, and masks every index it
 * reads back from the shared page, so a hostile process can corrupt only its
 * own view of the ring.
 *
 * Mappings use ib_core's rdma_user_mmap_entry cookies (per ucontext). A
 * user's buffer comes from vmalloc charged to its memory cgroup and is
 * mapped page by page with vm_insert_page(), which takes a reference on
 * every page: a mapping that outlives the object keeps its pages, and the
 * buffer is freed once both the object has dropped its entry and no mmap()
 * of it is in progress.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sroce.h"

struct sroce_mmap {
	struct rdma_user_mmap_entry	entry;
	void				*buf;
};

/**
 * sroce_queue_geom() - size a ring
 * @req: number of entries the consumer asked for, >= 1
 * @elem_size: bytes one entry needs
 * @max: the device limit for @req
 * @g: result
 *
 * A slot is @elem_size rounded up to a cache line and to a power of two; the
 * slot count is (@req + 1) rounded up to a power of two, because one slot
 * always stays empty. The usable capacity, num_slots - 1, is what the caller
 * reports back (cq->cqe, max_wr).
 *
 * Return: 0, or -EINVAL when @req is 0 or above @max.
 */
int sroce_queue_geom(u32 req, size_t elem_size, u32 max,
		     struct sroce_queue_geom *g)
{
	size_t slot;

	if (!req || req > max || !elem_size || elem_size > PAGE_SIZE)
		return -EINVAL;
	slot = roundup_pow_of_two(max_t(size_t, elem_size, SMP_CACHE_BYTES));
	g->log2_elem = ilog2(slot);
	g->num_slots = roundup_pow_of_two((unsigned long)req + 1);
	g->buf_size = PAGE_ALIGN(sizeof(struct rxe_queue_buf) +
				 ((size_t)g->num_slots << g->log2_elem));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_geom);

/**
 * sroce_queue_init() - allocate a ring
 * @q: the ring
 * @uctx: user context that will map it, or NULL for a kernel consumer
 * @g: geometry from sroce_queue_geom()
 *
 * Return: 0 or a negative errno; on error nothing is held.
 */
int sroce_queue_init(struct sroce_queue *q, struct ib_ucontext *uctx,
		     const struct sroce_queue_geom *g)
{
	struct sroce_mmap *m = NULL;
	int err;

	/*
	 * A user's ring stays as long as its process wants: charge it to
	 * the process's memory cgroup, and fail quietly rather than call the
	 * OOM killer or warn when the user asks for too much.
	 */
	q->buf = uctx ? __vmalloc(g->buf_size, SROCE_GFP_USER | __GFP_ZERO) :
		 vzalloc(g->buf_size);
	if (!q->buf)
		return -ENOMEM;
	q->buf_size = g->buf_size;
	q->index_mask = g->num_slots - 1;
	q->log2_elem = g->log2_elem;
	q->prod = 0;
	q->cons = 0;
	q->buf->log2_elem_size = g->log2_elem;
	q->buf->index_mask = q->index_mask;
	q->mmap = NULL;
	if (!uctx)
		return 0;

	m = kzalloc_obj(*m, GFP_KERNEL);
	if (!m) {
		err = -ENOMEM;
		goto err_buf;
	}
	m->buf = q->buf;
	err = rdma_user_mmap_entry_insert(uctx, &m->entry, g->buf_size);
	if (err)
		goto err_m;
	q->mmap = m;
	return 0;

err_m:
	kfree(m);
err_buf:
	vfree(q->buf);
	q->buf = NULL;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_init);

/**
 * sroce_queue_free() - drop the object's hold on a ring
 * @q: the ring
 *
 * For a user ring the buffer goes when ib_core drops the last reference to
 * its mmap entry (sroce_mmap_free()); pages already mapped stay with the
 * mapping until munmap.
 */
void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->entry);
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mmap = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_free);

int sroce_queue_mminfo(struct sroce_queue *q, struct mminfo *mi)
{
	if (!q->mmap)
		return -EINVAL;
	mi->offset = rdma_user_mmap_get_offset(&q->mmap->entry);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/**
 * sroce_queue_transfer() - move entries into a new ring (a resize)
 * @dst: the new ring, empty, slots at least as large as @src's
 * @src: the old ring
 * @from: index of the first entry to move
 * @n: entries to move; they land at 0..@n-1 and @dst's producer is @n
 */
void sroce_queue_transfer(struct sroce_queue *dst,
			  const struct sroce_queue *src, u32 from, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		memcpy(sroce_queue_slot(dst, i), sroce_queue_slot(src, from + i),
		       1UL << src->log2_elem);
	dst->prod = n;
	sroce_queue_publish_prod(dst);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_transfer);

/*
 * The consumer index as its consumer published it (user space, or the
 * kernel for a ring a kernel consumer posts to), made safe to use.
 */
u32 sroce_queue_cons(struct sroce_queue *q)
{
	/* Acquire: slots the consumer read are free before we reuse them. */
	return smp_load_acquire(&q->buf->consumer_index) & q->index_mask;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_cons);

/*
 * The producer index as its producer published it (user space, or a
 * kernel poster), made safe to use.
 */
u32 sroce_queue_prod(struct sroce_queue *q)
{
	/* Acquire: pairs with the producer's release; slot contents are in. */
	return smp_load_acquire(&q->buf->producer_index) & q->index_mask;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_prod);

/* Make slots written up to q->prod visible to the consumer. */
void sroce_queue_publish_prod(struct sroce_queue *q)
{
	/* Release: the slots are written before the index says so. */
	smp_store_release(&q->buf->producer_index, q->prod);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_publish_prod);

/* Hand slots consumed up to q->cons back to the producer. */
void sroce_queue_publish_cons(struct sroce_queue *q)
{
	/* Release: we are done reading the slots before handing them back. */
	smp_store_release(&q->buf->consumer_index, q->cons);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_queue_publish_cons);

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct sroce_mmap *m;
	unsigned long off;
	int err = 0;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct sroce_mmap, entry);
	/*
	 * Page by page: remap_vmalloc_range() wants a vmalloc_user() buffer,
	 * which cannot be charged to a memory cgroup. ib_core checked that
	 * the mapping is as long as the entry, so within the buffer's pages.
	 */
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(m->buf + off));
		if (err)
			break;
	}
	rdma_user_mmap_entry_put(entry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct sroce_mmap *m = container_of(entry, struct sroce_mmap, entry);

	vfree(m->buf);
	kfree(m);
}

/* A kernel consumer's SGE list in the ring's form. Return: total bytes. */
u32 sroce_sge_to_ring(struct rxe_sge *dst, const struct ib_sge *src, int n)
{
	u32 len = 0;
	int i;

	for (i = 0; i < n; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
		len += src[i].length;
	}
	return len;
}

/**
 * sroce_rq_post_one() - write a kernel consumer's receive WR into a ring
 * @q: an RQ or SRQ ring the kernel produces into; caller holds its
 *	poster's lock
 * @wr: the WR
 * @max_sge: SGEs a slot holds
 *
 * Return: 0, -ENOMEM when the ring is full, -EINVAL for too many SGEs.
 */
int sroce_rq_post_one(struct sroce_queue *q, const struct ib_recv_wr *wr,
		      u32 max_sge)
{
	struct rxe_recv_wqe *w;

	/* The consumer runs under another lock: its published index. */
	if (sroce_q_next(q->prod, q->index_mask) == sroce_queue_cons(q))
		return -ENOMEM;
	if (wr->num_sge > max_sge)
		return -EINVAL;
	w = sroce_queue_slot(q, q->prod);
	w->wr_id = wr->wr_id;
	w->dma.num_sge = wr->num_sge;
	w->dma.length = sroce_sge_to_ring(w->dma.sge, wr->sg_list, wr->num_sge);
	q->prod = sroce_q_next(q->prod, q->index_mask);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_rq_post_one);

/**
 * sroce_rwqe_copy() - copy a receive WQE out of a ring slot and validate it
 * @u: the slot, possibly shared with user space
 * @r: the copy
 * @max_sge: SGEs the ring's slots hold
 *
 * Return: 0, or -EINVAL for a WQE to complete in error (@r->wr_id is set).
 */
int sroce_rwqe_copy(const struct rxe_recv_wqe *u, struct sroce_rwqe *r,
		    u32 max_sge)
{
	u32 num, i;
	u64 sum = 0;

	r->wr_id = READ_ONCE(u->wr_id);
	num = READ_ONCE(u->dma.num_sge);
	if (num > max_sge)
		return -EINVAL;
	memcpy(r->sge, u->dma.sge, num * sizeof(struct ib_sge));
	for (i = 0; i < num; i++)
		sum += r->sge[i].length;
	if (sum > (1ULL << 31))
		return -EINVAL;
	r->num_sge = num;
	r->length = sum;
	return 0;
}
