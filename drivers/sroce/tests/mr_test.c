// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: MR permission and bounds checks, copies across pages with CRC,
 * a local packet's payload by reference, invalidation against copies under
 * way, memory window bind rules and rebinding under an access.
 */
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>

#include "../sroce.h"
#include "sroce_test.h"

static void mr_access(struct kunit *test)
{
	const int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	const u64 base = 0x7f0000001000ULL, len = 0x3000;

	/* Rights. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, 8, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, IB_ACCESS_LOCAL_WRITE,
						 base, 8, IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_READ), -EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_ATOMIC), -EACCES);

	/* Bounds: exactly the MR, one byte past either end, zero length. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, len, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, len + 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base - 1, 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len - 1, 1,
						 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len, 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len, 0, 0),
			0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, 0, 0, base, 1, 0), -ERANGE);

	/* Wrap-around attempts from a hostile peer. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, U64_MAX, 2, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + 8, U64_MAX,
						 0), -ERANGE);
	/* [0, U64_MAX) ends one byte short of the address space. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(0, U64_MAX, 0, U64_MAX - 8, 8,
						 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(0, U64_MAX, 0, U64_MAX - 7, 8,
						 0), -ERANGE);
}

struct mr_pages_fixture {
	struct sroce_mr mr;
	struct page *pg[3];
};

static void mr_fixture_pages(struct kunit *test, struct mr_pages_fixture *fx)
{
	int i;

	for (i = 0; i < 3; i++) {
		fx->pg[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, fx->pg[i]);
	}
	fx->mr.pages = fx->pg;
	fx->mr.npages = 3;
	fx->mr.page_off = 100;
	fx->mr.iova = 0x10000;
	fx->mr.length = 3 * PAGE_SIZE - 100;
	refcount_set(&fx->mr.users, 1);
}

static void mr_copy_pages(struct kunit *test)
{
	const u32 n = 5000, at = 4000;
	struct mr_pages_fixture *fx;
	u32 crc_copy, crc_ref;
	u8 *in, *out, *va;
	int i;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	in = kunit_kmalloc(test, n, GFP_KERNEL);
	out = kunit_kzalloc(test, n, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, fx && in && out);
	mr_fixture_pages(test, fx);
	for (i = 0; i < n; i++)
		in[i] = (u8)(i * 7 + 3);

	KUNIT_ASSERT_EQ(test, sroce_mr_access_ok(fx->mr.iova, fx->mr.length, 0,
						 fx->mr.iova + at, n, 0), 0);
	crc_copy = ~0U;
	sroce_mr_copy(&fx->mr, fx->mr.iova + at, in, n, true, &crc_copy);
	crc_ref = crc32_le(~0U, in, n);
	KUNIT_EXPECT_EQ(test, crc_copy, crc_ref);

	/* The first byte lands at page_off + at in the page list. */
	va = kmap_local_page(fx->pg[(100 + at) / PAGE_SIZE]);
	KUNIT_EXPECT_EQ(test, va[(100 + at) % PAGE_SIZE], in[0]);
	kunmap_local(va);
	va = kmap_local_page(fx->pg[(100 + at + n - 1) / PAGE_SIZE]);
	KUNIT_EXPECT_EQ(test, va[(100 + at + n - 1) % PAGE_SIZE], in[n - 1]);
	kunmap_local(va);

	crc_copy = ~0U;
	sroce_mr_copy(&fx->mr, fx->mr.iova + at, out, n, false, &crc_copy);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, n), 0);
	KUNIT_EXPECT_EQ(test, crc_copy, crc_ref);

	for (i = 0; i < 3; i++)
		__free_page(fx->pg[i]);
}

static void mr_copy_dma(struct kunit *test)
{
	u8 *dst = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct sroce_mr mr = { .dma = true, .length = U64_MAX };
	static const u8 src[5] = { 1, 2, 3, 4, 5 };

	KUNIT_ASSERT_NOT_NULL(test, dst);
	sroce_mr_copy(&mr, (u64)(uintptr_t)(dst + 7), (void *)src, 5, true,
		      NULL);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 7, src, 5), 0);
	KUNIT_EXPECT_EQ(test, dst[6], 0);
	KUNIT_EXPECT_EQ(test, dst[12], 0);
}

/* As a lookup leaves an MR for sroce_mr_copy_put(): one more user. */
static int mr_copy_held(struct sroce_mr *mr, u64 va, u32 len,
			struct sroce_copy *c)
{
	refcount_inc(&mr->users);
	return sroce_mr_copy_put(mr, va, len, c);
}

/*
 * A local packet's payload by reference: two pieces recorded (a page MR
 * across a page boundary, a DMA MR), the third copied into the skb once
 * the slots are used up; the receiver places it all, in two calls that
 * cut across a piece, and freeing the packet lets the MRs go.
 */
static void mr_copy_local(struct kunit *test)
{
	const u32 hdr = 20, n1 = 1500, n2 = 700, n3 = 500, n = n1 + n2 + n3;
	struct mr_pages_fixture *src, *dst;
	struct sroce_mr *dma;
	struct sk_buff *skb;
	struct sroce_copy c = {};
	u8 *dbuf, *want, *out, *pay;
	u32 i;

	src = kunit_kzalloc(test, sizeof(*src), GFP_KERNEL);
	dst = kunit_kzalloc(test, sizeof(*dst), GFP_KERNEL);
	dma = kunit_kzalloc(test, sizeof(*dma), GFP_KERNEL);
	dbuf = kunit_kmalloc(test, n2, GFP_KERNEL);
	want = kunit_kmalloc(test, n, GFP_KERNEL);
	out = kunit_kzalloc(test, n, GFP_KERNEL);
	skb = alloc_skb(hdr + n, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, src && dst && dma && dbuf && want && out && skb);
	mr_fixture_pages(test, src);
	mr_fixture_pages(test, dst);
	dma->dma = true;
	dma->length = U64_MAX;
	refcount_set(&dma->users, 1);
	for (i = 0; i < n; i++)
		want[i] = (u8)(i * 13 + 5);
	sroce_mr_copy(&src->mr, src->mr.iova + 4000, want, n1, true, NULL);
	memcpy(dbuf, want + n1, n2);
	sroce_mr_copy(&src->mr, src->mr.iova + 100, want + n1 + n2, n3, true,
		      NULL);

	memset(skb_put(skb, hdr + n), 0, hdr + n);
	pay = skb->data + hdr;
	c.buf = pay;
	c.ref = sroce_payref_start(skb, pay);
	KUNIT_EXPECT_EQ(test, mr_copy_held(&src->mr, src->mr.iova + 4000, n1,
					   &c), 0);
	KUNIT_EXPECT_EQ(test, mr_copy_held(dma, (u64)(uintptr_t)dbuf, n2, &c),
			0);
	KUNIT_EXPECT_EQ(test, mr_copy_held(&src->mr, src->mr.iova + 100, n3,
					   &c), 0);
	/* Held by their pieces; only the third is in the skb. */
	KUNIT_EXPECT_EQ(test, refcount_read(&src->mr.users), 2);
	KUNIT_EXPECT_EQ(test, refcount_read(&dma->users), 2);
	KUNIT_EXPECT_EQ(test, pay[0], 0);
	KUNIT_EXPECT_EQ(test, pay[n1 + n2 - 1], 0);
	KUNIT_EXPECT_EQ(test, memcmp(pay + n1 + n2, want + n1 + n2, n3), 0);

	memset(&c, 0, sizeof(c));
	c.skb = skb;
	c.off = hdr;
	c.to_mr = true;
	KUNIT_EXPECT_EQ(test, mr_copy_held(&dst->mr, dst->mr.iova + 10, 1000,
					   &c), 0);
	KUNIT_EXPECT_EQ(test, mr_copy_held(&dst->mr, dst->mr.iova + 1010,
					   n - 1000, &c), 0);
	sroce_mr_copy(&dst->mr, dst->mr.iova + 10, out, n, false, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(out, want, n), 0);

	kfree_skb(skb);
	KUNIT_EXPECT_EQ(test, refcount_read(&src->mr.users), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&dma->users), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&dst->mr.users), 1);
	for (i = 0; i < 3; i++) {
		__free_page(src->pg[i]);
		__free_page(dst->pg[i]);
	}
}

/* The three 8-byte atomics: value before, value after. */
static void mr_atomic_ops(struct kunit *test)
{
	u64 *w = kunit_kzalloc(test, 2 * sizeof(u64), GFP_KERNEL);
	u64 bytes;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w[0] = 5;
	/* CMP_SWAP: swaps only on a match, returns the old value either way. */
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_CMP_SWAP, 4, 9), 5ULL);
	KUNIT_EXPECT_EQ(test, w[0], 5ULL);
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_CMP_SWAP, 5, 9), 5ULL);
	KUNIT_EXPECT_EQ(test, w[0], 9ULL);
	/* FETCH_ADD wraps modulo 2^64. */
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_FETCH_ADD, 3, 0),
			9ULL);
	KUNIT_EXPECT_EQ(test, w[0], 12ULL);
	w[0] = U64_MAX;
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_FETCH_ADD, 2, 0),
			U64_MAX);
	KUNIT_EXPECT_EQ(test, w[0], 1ULL);
	/* ATOMIC WRITE stores the 8 bytes as they are; the next word stays. */
	memcpy(&bytes, "ABCDEFGH", sizeof(bytes));
	w[1] = 77;
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_ATOMIC_WRITE, bytes,
					      0), 1ULL);
	KUNIT_EXPECT_EQ(test, memcmp(w, "ABCDEFGH", 8), 0);
	KUNIT_EXPECT_EQ(test, w[1], 77ULL);
}

/*
 * Fast registration: pages from ib_map_mr_sg() (kernel addresses, 4 KiB
 * here), an iova in the middle of the first page, data landing where the
 * page list says; the length never beyond the pages; a valid MR cannot be
 * registered again, nor under another index's key, and only a
 * fast-registration MR of the same PD.
 */
static void mr_fast_reg(struct kunit *test)
{
	struct sroce_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	u8 *pg[3], *buf = kunit_kzalloc(test, 6000, GFP_KERNEL);
	struct ib_pd *pd = (struct ib_pd *)0x1000, *other = pd + 1;
	u64 pages[3];
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < 3; i++) {
		pg[i] = kunit_kzalloc(test, SZ_4K, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pg[i]);
		pages[i] = (uintptr_t)pg[i];
	}
	/* As sroce_alloc_mr() and ib_sg_to_pages() leave it. */
	mr->fr = true;
	mr->fr_max = 3;
	mr->fr_n = 3;
	mr->fr_pages = pages;
	mr->key = sroce_key_make(7, 0x11);
	mr->ibmr.pd = pd;
	mr->ibmr.page_size = SZ_4K;
	mr->ibmr.iova = 0x10000100;
	mr->ibmr.length = 3 * SZ_4K;	/* claims more than the pages hold */

	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(other, mr, sroce_key_make(7, 0x12),
						IB_ACCESS_REMOTE_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(pd, mr, sroce_key_make(8, 0x12),
						IB_ACCESS_REMOTE_WRITE), -EINVAL);
	KUNIT_ASSERT_EQ(test, sroce_mr_fast_reg(pd, mr, sroce_key_make(7, 0x12),
						IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, mr->valid, 1);
	KUNIT_EXPECT_EQ(test, mr->key, sroce_key_make(7, 0x12));
	KUNIT_EXPECT_EQ(test, mr->ibmr.rkey, sroce_key_make(7, 0x12));
	KUNIT_EXPECT_EQ(test, mr->length, 3 * SZ_4K - 0x100);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(mr->iova, mr->length,
						 mr->access, 0x10000100 + 3 * SZ_4K - 0x100, 1,
						 IB_ACCESS_REMOTE_WRITE), -ERANGE);
	/* Already valid: refused until invalidated. */
	KUNIT_EXPECT_EQ(test, sroce_mr_fast_reg(pd, mr, sroce_key_make(7, 0x13),
						IB_ACCESS_REMOTE_WRITE), -EINVAL);

	/* 6000 bytes from iova + 0xe00: the last 0x100 bytes of page 0,
	 * all of page 1, 1648 bytes of page 2.
	 */
	for (i = 0; i < 6000; i++)
		buf[i] = i * 7 + 1;
	sroce_mr_copy(mr, 0x10000100 + 0xe00, buf, 6000, true, NULL);
	KUNIT_EXPECT_EQ(test, pg[0][0], 0);
	KUNIT_EXPECT_EQ(test, pg[0][0xeff], 0);
	KUNIT_EXPECT_EQ(test, pg[0][0xf00], buf[0]);
	KUNIT_EXPECT_EQ(test, pg[0][0xfff], buf[0xff]);
	KUNIT_EXPECT_EQ(test, pg[1][0], buf[0x100]);
	KUNIT_EXPECT_EQ(test, pg[1][SZ_4K - 1], buf[0x100 + SZ_4K - 1]);
	KUNIT_EXPECT_EQ(test, pg[2][0], buf[0x1100]);
	KUNIT_EXPECT_EQ(test, pg[2][1647], buf[5999]);
	KUNIT_EXPECT_EQ(test, pg[2][1648], 0);
	memset(buf, 0, 6000);
	sroce_mr_copy(mr, 0x10000100 + 0xe00, buf, 6000, false, NULL);
	KUNIT_EXPECT_EQ(test, buf[0], (u8)1);
	KUNIT_EXPECT_EQ(test, buf[5999], (u8)(5999 * 7 + 1));
}

/* An MR user that lets go in hard interrupt context, after a delay. */
struct mr_inv_holder {
	struct hrtimer		timer;
	struct sroce_mr		*mr;
	ktime_t			put_at;
};

static enum hrtimer_restart mr_inv_put(struct hrtimer *t)
{
	struct mr_inv_holder *h = container_of(t, struct mr_inv_holder, timer);

	h->put_at = ktime_get();
	sroce_mr_put(h->mr);
	return HRTIMER_NORESTART;
}

/* sroce_mr_inv_rcu() as its callers run it: BHs off, under RCU. */
static int mr_inv(struct sroce_mr *mr, struct ib_pd *pd)
{
	int err;

	local_bh_disable();
	rcu_read_lock();
	err = sroce_mr_inv_rcu(mr, pd);
	rcu_read_unlock();
	local_bh_enable();
	return err;
}

/*
 * An invalidation returns only once a copy under way has let go of the
 * MR (here a user that holds it for 50 ms and puts it from a hard IRQ
 * timer, which runs while the invalidation waits with BHs off, on one CPU
 * too), and no new use finds the MR afterwards; so does the invalidation
 * of a dying MR, whose base reference dereg has dropped. Another PD's MR,
 * one not fast-registered, or one already invalid, is refused.
 */
static void mr_inv_waits(struct kunit *test)
{
	struct sroce_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	struct ib_pd *pd = (struct ib_pd *)0x1000, *other = pd + 1;
	struct mr_inv_holder *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	ktime_t t0, t1;
	int err, dying;

	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_NOT_NULL(test, h);
	mr->fr = true;
	mr->valid = 1;
	mr->ibmr.pd = pd;
	init_completion(&mr->idle);
	KUNIT_EXPECT_EQ(test, mr_inv(mr, other), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr->valid, 1);

	h->mr = mr;
	for (dying = 0; dying < 2; dying++) {
		mr->valid = 1;
		mr->dying = dying;
		/* The base reference (unless dying) and a copy's. */
		refcount_set(&mr->users, dying ? 1 : 2);
		h->put_at = 0;
		sroce_hrtimer_setup(&h->timer, mr_inv_put, CLOCK_MONOTONIC,
				    HRTIMER_MODE_REL_HARD);
		t0 = ktime_get();
		hrtimer_start(&h->timer, ms_to_ktime(50), HRTIMER_MODE_REL_HARD);
		err = mr_inv(mr, pd);
		t1 = ktime_get();
		hrtimer_cancel(&h->timer);
		KUNIT_EXPECT_EQ(test, err, 0);
		KUNIT_EXPECT_EQ(test, mr->valid, 0);
		KUNIT_EXPECT_NE(test, ktime_to_ns(h->put_at), 0);
		KUNIT_EXPECT_GE(test, ktime_to_ns(t1), ktime_to_ns(h->put_at));
		KUNIT_EXPECT_GE(test, ktime_ms_delta(t1, t0), 50);
		KUNIT_EXPECT_EQ(test, refcount_read(&mr->users), dying ? 0 : 1);
		/* Already invalid: refused at once. */
		KUNIT_EXPECT_EQ(test, mr_inv(mr, pd), -EINVAL);
	}

	mr->dying = false;
	refcount_set(&mr->users, 1);
	mr->fr = false;
	mr->valid = 1;
	KUNIT_EXPECT_EQ(test, mr_inv(mr, pd), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr->valid, 1);
}

/* Invalidations of one MR, run at once; the test thread re-arms it. */
struct mr_inv_race {
	struct ib_pd		*pd;
	struct sroce_mr		*mr;
	u32			key;
	int			rounds;
	atomic_t		round;		/* the round now open */
	atomic_t		done;		/* racers through it */
	atomic_t		won;		/* invalidations that returned 0 */
};

static int mr_inv_racer(void *arg)
{
	struct mr_inv_race *r = arg;
	int i;

	for (i = 1; i <= r->rounds; i++) {
		while (atomic_read_acquire(&r->round) < i &&
		       !kthread_should_stop())
			cond_resched();
		if (kthread_should_stop())
			break;
		local_bh_disable();
		if (!sroce_mr_invalidate(r->pd, r->key))
			atomic_inc(&r->won);
		local_bh_enable();
		atomic_inc(&r->done);
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

#define MR_INV_RACERS	3
#define MR_INV_ROUNDS	500

/*
 * Invalidations that overlap (a SEND_WITH_INV racing a LOCAL_INV of the
 * same key; SEND_WITH_INVs on two QPs of one PD) all return, and exactly
 * one of each round's wins: none may wait for the others' references.
 * Three kthreads, one per CPU where there are as many, invalidate the
 * same MR through its key with BHs off, round after round; in every
 * tenth round a copy holds the MR for 2 ms, so the others arrive while
 * the winner waits. A racer stuck for 10 s fails the test (and a CPU
 * stuck with BHs off trips the soft-lockup detector too).
 */
static void mr_inv_overlap(struct kunit *test)
{
	/* Not kunit_kzalloc(): racers that never return must not see it freed. */
	struct sroce_dev *sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	struct sroce_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	struct mr_inv_holder *h = kzalloc(sizeof(*h), GFP_KERNEL);
	struct mr_inv_race *r = kzalloc(sizeof(*r), GFP_KERNEL);
	struct ib_pd *pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	struct task_struct *t[MR_INV_RACERS];
	unsigned long deadline;
	int i, cpu = -1, stuck = 0;

	if (!sdev || !mr || !h || !r || !pd) {
		KUNIT_FAIL(test, "no memory");
		goto out;
	}
	pd->device = &sdev->ib;
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	mr->fr = true;
	mr->ibmr.pd = pd;
	mr->key = sroce_key_make(9, 0x42);
	init_completion(&mr->idle);
	refcount_set(&mr->users, 1);
	if (xa_err(xa_store(&sdev->mr_xa, 9, mr, GFP_KERNEL))) {
		KUNIT_FAIL(test, "no memory");
		goto out;
	}
	r->pd = pd;
	r->mr = mr;
	r->key = mr->key;
	r->rounds = MR_INV_ROUNDS;
	h->mr = mr;
	sroce_hrtimer_setup(&h->timer, mr_inv_put, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_HARD);

	for (i = 0; i < MR_INV_RACERS; i++) {
		t[i] = kthread_create(mr_inv_racer, r, "sroce-kunit-inv%d", i);
		if (IS_ERR(t[i])) {
			KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t[i]));
			while (i--)
				kthread_stop(t[i]);
			goto out;
		}
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
		kthread_bind(t[i], cpu);
		wake_up_process(t[i]);
	}
	for (i = 1; i <= MR_INV_ROUNDS && !stuck; i++) {
		/* Valid again, as a fast registration makes it. */
		smp_store_release(&mr->valid, 1);
		if (i % 10 == 0) {
			refcount_inc(&mr->users);
			hrtimer_start(&h->timer, ms_to_ktime(2),
				      HRTIMER_MODE_REL_HARD);
		}
		atomic_set(&r->done, 0);
		/* Release: the racers see it valid. */
		atomic_set_release(&r->round, i);
		deadline = jiffies + 10 * HZ;
		while (atomic_read(&r->done) < MR_INV_RACERS) {
			if (time_after(jiffies, deadline)) {
				stuck = i;
				break;
			}
			cond_resched();
		}
		hrtimer_cancel(&h->timer);
	}
	KUNIT_EXPECT_EQ_MSG(test, stuck, 0, "invalidations still waiting");
	if (stuck)
		return;		/* the racers spin on: leak them */
	for (i = 0; i < MR_INV_RACERS; i++)
		kthread_stop(t[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->won), MR_INV_ROUNDS);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->users), 1);
	KUNIT_EXPECT_EQ(test, mr->valid, 0);
out:
	if (sdev)
		xa_destroy(&sdev->mr_xa);
	kfree(pd);
	kfree(r);
	kfree(h);
	kfree(mr);
	kfree(sdev);
}

/* An access through a window, under way until the timer ends it. */
struct mw_access {
	struct hrtimer		timer;
	struct sroce_mw		*mw;
};

static enum hrtimer_restart mw_access_end(struct hrtimer *t)
{
	struct mw_access *a = container_of(t, struct mw_access, timer);

	atomic_dec_return_release(&a->mw->inflight);
	return HRTIMER_NORESTART;
}

/*
 * A type 1 window bound again, or unbound, while an access through the
 * old binding is under way: the bind completes only once that access has
 * ended, as a dealloc or an invalidation does.
 */
static void mw_rebind_waits(struct kunit *test)
{
	const u64 base = 0x7f0000010000ULL;
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	struct sroce_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);
	struct sroce_mw *mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct ib_pd *pd = kunit_kzalloc(test, sizeof(*pd), GFP_KERNEL);
	/* Not on the stack: debugobjects wants timers there annotated. */
	struct mw_access *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct sroce_mw_bind b = {
		.addr = base, .length = 0x1000,
		.access = IB_ACCESS_REMOTE_WRITE,
	};
	int round, err;

	KUNIT_ASSERT_TRUE(test, sdev && mr && mw && qp && pd && a);
	pd->device = &sdev->ib;
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->mw_xa, XA_FLAGS_ALLOC1);
	spin_lock_init(&sdev->mw_lock);
	mr->ibmr.pd = pd;
	mr->key = sroce_key_make(3, 0x11);
	mr->iova = base;
	mr->length = 0x4000;
	mr->access = IB_ACCESS_MW_BIND | IB_ACCESS_LOCAL_WRITE;
	mr->valid = 1;
	init_completion(&mr->idle);
	refcount_set(&mr->users, 1);
	spin_lock_init(&mw->lock);
	INIT_LIST_HEAD(&mw->qp_entry);
	mw->pd = pd;
	mw->type = IB_MW_TYPE_1;
	mw->key = sroce_key_make(SROCE_MIN_MW_INDEX, 0x22);
	qp->sdev = sdev;
	qp->ibqp.pd = pd;
	qp->ibqp.qp_num = 5;
	INIT_LIST_HEAD(&qp->mw_list);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&sdev->mr_xa, 3, mr,
					      GFP_KERNEL)), 0);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&sdev->mw_xa, SROCE_MIN_MW_INDEX,
					      mw, GFP_KERNEL)), 0);
	a->mw = mw;
	sroce_hrtimer_setup(&a->timer, mw_access_end, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_HARD);

	b.mr_lkey = mr->key;
	b.mw_rkey = mw->key;
	b.rkey = sroce_key_make(SROCE_MIN_MW_INDEX, 0x23);
	KUNIT_ASSERT_EQ(test, sroce_mw_bind(qp, &b), 0);
	KUNIT_ASSERT_TRUE(test, mw->bound);
	KUNIT_EXPECT_EQ(test, mr->nr_mw, 1);

	/* Round 0 binds it elsewhere in the MR, round 1 unbinds it. */
	for (round = 0; round < 2; round++) {
		b.mw_rkey = b.rkey;
		b.rkey = sroce_key_make(SROCE_MIN_MW_INDEX, 0x24 + round);
		b.addr = base + 0x2000;
		b.length = round ? 0 : 0x1000;
		atomic_inc(&mw->inflight);
		/* No preemption between the start and the bind. */
		local_bh_disable();
		hrtimer_start(&a->timer, ms_to_ktime(100), HRTIMER_MODE_REL_HARD);
		err = sroce_mw_bind(qp, &b);
		local_bh_enable();
		KUNIT_EXPECT_EQ(test, err, 0);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&mw->inflight), 0,
				    "round %d: the bind completed with an access through the old binding under way",
				    round);
		hrtimer_cancel(&a->timer);
		atomic_set(&mw->inflight, 0);
		KUNIT_EXPECT_EQ(test, mw->key, b.rkey);
		KUNIT_EXPECT_EQ(test, mw->bound, !round);
		KUNIT_EXPECT_EQ(test, mr->nr_mw, round ? 0 : 1);
	}
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->users), 1);
	xa_destroy(&sdev->mw_xa);
	xa_destroy(&sdev->mr_xa);
}

/* IBTA's bind rules, one broken at a time from a bind that passes. */
static void mw_bind_rules(struct kunit *test)
{
	const int mra = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND;
	const u64 base = 0x10000, len = 0x4000;
	const u32 key = sroce_key_make(SROCE_MIN_MW_INDEX + 5, 0x17);
	struct sroce_mw_bind ok = {
		.addr = base + 0x1000, .length = 0x1000, .mw_rkey = key,
		.rkey = key + 1,
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC,
	};
	struct sroce_mw_bind b;

	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, false, &ok,
						  base, len, mra), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &ok,
						  base, len, mra), 0);
	/* Type 1 binds again while bound; type 2 must be free. */
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, true, &ok,
						  base, len, mra), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, true, &ok,
						  base, len, mra), -EINVAL);
	/* Length 0: a type 1 unbind, whatever the MR; type 2 refuses. */
	b = ok;
	b.length = 0;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, true, &b,
						  0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	/* The MR must allow binding (C10-73). */
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, false, &ok,
						  base, len,
						  IB_ACCESS_LOCAL_WRITE),
			-EINVAL);
	/* Remote write or atomic needs the MR's local write (C10-74)... */
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, false, &ok,
						  base, len,
						  IB_ACCESS_MW_BIND), -EINVAL);
	b = ok;
	b.access = IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len,
						  IB_ACCESS_MW_BIND), -EINVAL);
	/* ...remote read does not. */
	b.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len,
						  IB_ACCESS_MW_BIND), 0);
	/* Inside the MR (C10-75), at both ends, overflow-safe. */
	b = ok;
	b.addr = base;
	b.length = len;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), 0);
	b.length = len + 1;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	b.addr = base - 1;
	b.length = 2;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	b.addr = base + 8;
	b.length = U64_MAX;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	/* Rights a window cannot grant, zero-based included... */
	b = ok;
	b.access |= IB_ACCESS_MW_BIND;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	b.access = IB_ZERO_BASED;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, false, &b,
						  base, len, mra), -EINVAL);
	/* ...while LOCAL_WRITE, meaningless for a window, is ignored. */
	b.access = IB_ACCESS_LOCAL_WRITE;
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_1, false, &b,
						  base, len, mra), 0);
	/* The new rkey keeps the window's index. */
	b = ok;
	b.rkey = sroce_key_make(SROCE_MIN_MW_INDEX + 6, 0x18);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), -EINVAL);
	b.rkey = sroce_key_make(SROCE_MIN_MW_INDEX + 5, 0);
	KUNIT_EXPECT_EQ(test, sroce_mw_bind_check(IB_MW_TYPE_2, false, &b,
						  base, len, mra), 0);
	/* Window keys and MR keys live in separate halves. */
	KUNIT_EXPECT_TRUE(test, sroce_key_is_mw(key));
	KUNIT_EXPECT_FALSE(test,
			   sroce_key_is_mw(sroce_key_make(SROCE_MAX_MR_INDEX,
							  0xff)));
}

/*
 * ODP: a copy goes ahead only when every page of its range is in the
 * mirror, and writable to write; one missing page anywhere in the range,
 * at either edge, stops it.
 */
static void mr_odp_present(struct kunit *test)
{
	static struct page dummy[4];
	struct page *pg[4] = { &dummy[0], &dummy[1], NULL, &dummy[3] };
	unsigned long wr = BIT(0) | BIT(3);
	struct sroce_mr mr = {
		.pages = pg, .npages = 4, .page_off = 0x100,
		.iova = 0x10000100, .length = 4 * PAGE_SIZE - 0x100,
		.odp_writable = &wr,
	};
	const u64 p1 = mr.iova + PAGE_SIZE - 0x100;	/* first byte of page 1 */
	const u64 p2 = p1 + PAGE_SIZE, p3 = p2 + PAGE_SIZE;

	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, mr.iova, 16, true));
	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, mr.iova, p1 - mr.iova,
						  true));
	/* Into page 1: readable, not writable. */
	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, p1 - 8, 16, false));
	KUNIT_EXPECT_FALSE(test, sroce_odp_present(&mr, p1 - 8, 16, true));
	/* Page 2 is absent: its first and last byte, and across it. */
	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, p2 - 1, 1, false));
	KUNIT_EXPECT_FALSE(test, sroce_odp_present(&mr, p2 - 1, 2, false));
	KUNIT_EXPECT_FALSE(test, sroce_odp_present(&mr, p3 - 1, 1, false));
	KUNIT_EXPECT_FALSE(test, sroce_odp_present(&mr, p1, 2 * PAGE_SIZE + 8,
						   false));
	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, p3, 8, true));
	KUNIT_EXPECT_TRUE(test, sroce_odp_present(&mr, p3 + PAGE_SIZE - 1, 1,
						  true));
}

static struct kunit_case mr_cases[] = {
	KUNIT_CASE(mr_access),
	KUNIT_CASE(mr_atomic_ops),
	KUNIT_CASE(mr_copy_pages),
	KUNIT_CASE(mr_copy_dma),
	KUNIT_CASE(mr_copy_local),
	KUNIT_CASE(mr_fast_reg),
	KUNIT_CASE(mr_inv_waits),
	KUNIT_CASE(mr_inv_overlap),
	KUNIT_CASE(mr_odp_present),
	KUNIT_CASE(mw_bind_rules),
	KUNIT_CASE(mw_rebind_waits),
	{}
};

struct kunit_suite sroce_mr_suite = {
	.name = "sroce_mr",
	.test_cases = mr_cases,
};
