// SPDX-License-Identifier: GPL-2.0
/* KUnit: ring geometry and index arithmetic. */
#include <kunit/test.h>

#include "../sroce.h"
#include "sroce_test.h"

static void queue_geom_sizes(struct kunit *test)
{
	struct sroce_queue_geom g;
	size_t hdr = sizeof(struct rxe_queue_buf);

	KUNIT_EXPECT_EQ(test, hdr, 384);

	/* A 48-byte CQE takes a 64-byte slot; one slot always stays empty. */
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(1, 48, 100, &g), 0);
	KUNIT_EXPECT_EQ(test, g.num_slots, 2);
	KUNIT_EXPECT_EQ(test, g.log2_elem, 6);
	KUNIT_EXPECT_EQ(test, g.buf_size, PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, sroce_queue_geom(3, 48, 100, &g), 0);
	KUNIT_EXPECT_EQ(test, g.num_slots, 4);
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(4, 48, 100, &g), 0);
	KUNIT_EXPECT_EQ(test, g.num_slots, 8);

	/* SQ slot: 208-byte WQE + 32 SGEs = 720 bytes -> 1024. */
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(100, 720, 1000, &g), 0);
	KUNIT_EXPECT_EQ(test, g.log2_elem, 10);
	KUNIT_EXPECT_EQ(test, g.num_slots, 128);
	KUNIT_EXPECT_EQ(test, g.buf_size, PAGE_ALIGN(hdr + 128 * 1024));

	/* The largest CQ. */
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(SROCE_MAX_CQE, 48,
					       SROCE_MAX_CQE, &g), 0);
	KUNIT_EXPECT_EQ(test, g.num_slots, SROCE_MAX_CQE + 1);
	KUNIT_EXPECT_EQ(test, g.buf_size, PAGE_ALIGN(hdr + (SROCE_MAX_CQE + 1) * 64));

	/* Tiny elements still get a full cache line. */
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(1, 1, 1, &g), 0);
	KUNIT_EXPECT_EQ(test, 1U << g.log2_elem, SMP_CACHE_BYTES);
}

static void queue_geom_invalid(struct kunit *test)
{
	struct sroce_queue_geom g;

	KUNIT_EXPECT_EQ(test, sroce_queue_geom(0, 48, 100, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_geom(101, 48, 100, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_geom(U32_MAX, 48, 100, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_geom(1, 0, 100, &g), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_queue_geom(1, PAGE_SIZE + 1, 100, &g),
			-EINVAL);
}

static void queue_index_math(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_q_count(0, 0, 7), 0);
	KUNIT_EXPECT_EQ(test, sroce_q_count(5, 2, 7), 3);
	KUNIT_EXPECT_EQ(test, sroce_q_count(2, 6, 7), 4);	/* wrapped */
	KUNIT_EXPECT_EQ(test, sroce_q_count(6, 7, 7), 7);	/* full */
	KUNIT_EXPECT_EQ(test, sroce_q_next(6, 7), 7);
	KUNIT_EXPECT_EQ(test, sroce_q_next(7, 7), 0);
	/* Garbage high bits (from user memory) never escape the mask. */
	KUNIT_EXPECT_EQ(test, sroce_q_next(0xfffffff7, 7), 0);
	KUNIT_EXPECT_LE(test, sroce_q_count(0x12345678, 0x9abcdef0, 7), 7);
}

static void queue_kernel_ring(struct kunit *test)
{
	struct sroce_queue_geom g;
	struct sroce_queue q;
	u8 *s0, *s1, *last;

	KUNIT_ASSERT_EQ(test, sroce_queue_geom(5, 100, 100, &g), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&q, NULL, &g), 0);
	KUNIT_EXPECT_NULL(test, q.mmap);
	KUNIT_EXPECT_EQ(test, q.buf->index_mask, 7);
	KUNIT_EXPECT_EQ(test, q.buf->log2_elem_size, 7);
	KUNIT_EXPECT_EQ(test, q.buf->producer_index, 0);
	KUNIT_EXPECT_EQ(test, q.buf->consumer_index, 0);

	s0 = sroce_queue_slot(&q, 0);
	s1 = sroce_queue_slot(&q, 1);
	last = sroce_queue_slot(&q, 7);
	KUNIT_EXPECT_PTR_EQ(test, s0, (u8 *)q.buf->data);
	KUNIT_EXPECT_EQ(test, s1 - s0, 128);
	/* Slot indices wrap rather than run off the buffer. */
	KUNIT_EXPECT_PTR_EQ(test, sroce_queue_slot(&q, 8), s0);
	KUNIT_EXPECT_LE(test, (size_t)(last + 128 - (u8 *)q.buf), q.buf_size);

	q.prod = 3;
	sroce_queue_publish_prod(&q);
	KUNIT_EXPECT_EQ(test, q.buf->producer_index, 3);
	q.buf->consumer_index = 0xffffff02;	/* as a hostile user could */
	KUNIT_EXPECT_EQ(test, sroce_queue_cons(&q), 2);

	sroce_queue_free(&q);
	KUNIT_EXPECT_NULL(test, q.buf);
}

/*
 * An SRQ of kernel WQEs: taken in posting order, each WQE leaves the ring
 * when taken, the armed limit fires once, a bad WQE is refused with its
 * wr_id, and a resize moves what is posted in order.
 */
static void queue_srq_take(struct kunit *test)
{
	struct sroce_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	struct sroce_rwqe *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct ib_sge sge = { .addr = 0x1000, .length = 100, .lkey = 7 };
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct sroce_queue_geom g;
	struct sroce_queue nq, oq;
	struct rxe_recv_wqe *u;
	bool hit;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	KUNIT_ASSERT_NOT_NULL(test, r);
	spin_lock_init(&srq->lock);
	srq->max_sge = 2;
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(7, 80, 100, &g), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&srq->q, NULL, &g), 0);

	KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, r, &hit), -EAGAIN);
	for (i = 0; i < 7; i++) {
		wr.wr_id = 100 + i;
		KUNIT_EXPECT_EQ(test, sroce_rq_post_one(&srq->q, &wr, 2), 0);
	}
	KUNIT_EXPECT_EQ(test, sroce_rq_post_one(&srq->q, &wr, 2), -ENOMEM);
	wr.num_sge = 3;
	srq->q.cons = 1;	/* room for one, but too many SGEs */
	sroce_queue_publish_cons(&srq->q);
	KUNIT_EXPECT_EQ(test, sroce_rq_post_one(&srq->q, &wr, 2), -EINVAL);
	srq->q.cons = 0;
	sroce_queue_publish_cons(&srq->q);
	wr.num_sge = 1;
	sroce_queue_publish_prod(&srq->q);

	srq->limit = 5;
	/* 7 posted: taking two leaves 5, not below; the third fires. */
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, r, &hit), 0);
		KUNIT_EXPECT_EQ(test, r->wr_id, 100 + i);
		KUNIT_EXPECT_EQ(test, r->length, 100);
		KUNIT_EXPECT_EQ(test, r->num_sge, 1);
		KUNIT_EXPECT_EQ(test, hit, i == 2);
	}
	KUNIT_EXPECT_EQ(test, srq->limit, 0);

	/* A WQE with more SGEs than a slot holds is refused, wr_id kept. */
	u = sroce_queue_slot(&srq->q, srq->q.cons);
	u->dma.num_sge = 3;
	KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, r, &hit), -EINVAL);
	KUNIT_EXPECT_EQ(test, r->wr_id, 104);
	KUNIT_EXPECT_FALSE(test, hit);

	/* Resize: the two left move to the front of a bigger ring. */
	KUNIT_ASSERT_EQ(test, sroce_queue_geom(20, 80, 100, &g), 0);
	KUNIT_ASSERT_EQ(test, sroce_queue_init(&nq, NULL, &g), 0);
	sroce_queue_transfer(&nq, &srq->q, srq->q.cons,
			     sroce_q_count(srq->q.prod, srq->q.cons,
					   srq->q.index_mask));
	oq = srq->q;
	srq->q = nq;
	sroce_queue_free(&oq);
	KUNIT_EXPECT_EQ(test, srq->q.prod, 2);
	for (i = 5; i < 7; i++) {
		KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, r, &hit), 0);
		KUNIT_EXPECT_EQ(test, r->wr_id, 100 + i);
	}
	KUNIT_EXPECT_EQ(test, sroce_srq_take(srq, r, &hit), -EAGAIN);
	sroce_queue_free(&srq->q);
}

static struct kunit_case queue_cases[] = {
	KUNIT_CASE(queue_geom_sizes),
	KUNIT_CASE(queue_geom_invalid),
	KUNIT_CASE(queue_index_math),
	KUNIT_CASE(queue_kernel_ring),
	KUNIT_CASE(queue_srq_take),
	{}
};

struct kunit_suite sroce_queue_suite = {
	.name = "sroce_queue",
	.test_cases = queue_cases,
};
