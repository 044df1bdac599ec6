// SPDX-License-Identifier: GPL-2.0
/* KUnit: kernel CQs: posting, overflow, polling, arming, resize, limits. */
#include <kunit/test.h>
#include <linux/percpu.h>

#include "../sroce.h"
#include "sroce_test.h"

struct cq_fixture {
	struct sroce_dev *sdev;
	struct sroce_cq *cq;
	int comp_calls;
	int err_events;
};

static void fx_comp(struct ib_cq *ibcq, void *ctx)
{
	struct cq_fixture *fx = ctx;

	fx->comp_calls++;
}

static void fx_event(struct ib_event *ev, void *ctx)
{
	struct cq_fixture *fx = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		fx->err_events++;
}

static int cq_init(struct kunit *test)
{
	struct cq_fixture *fx;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx);
	fx->sdev = kunit_kzalloc(test, sizeof(*fx->sdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev);
	fx->sdev->cnt = alloc_percpu(struct sroce_counters);
	KUNIT_ASSERT_NOT_NULL(test, fx->sdev->cnt);
	fx->cq = kunit_kzalloc(test, sizeof(*fx->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fx->cq);
	fx->cq->ibcq.device = &fx->sdev->ib;
	fx->cq->ibcq.comp_handler = fx_comp;
	fx->cq->ibcq.event_handler = fx_event;
	fx->cq->ibcq.cq_context = fx;
	test->priv = fx;
	return 0;
}

static void cq_exit(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;

	free_percpu(fx->sdev->cnt);
}

static int cq_create(struct cq_fixture *fx, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };

	return sroce_create_cq(&fx->cq->ibcq, &attr, NULL);
}

static int cq_post_id(struct cq_fixture *fx, u64 id, bool solicited)
{
	union sroce_cqe e = {};

	e.ibwc.wr_id = id;
	e.ibwc.status = IB_WC_SUCCESS;
	e.ibwc.opcode = IB_WC_RECV;
	e.ibwc.byte_len = (u32)id;
	return sroce_cq_post(fx->cq, &e, solicited);
}

static void cq_fill_overflow_poll(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;
	struct ib_wc wc[10];
	int i, n;

	KUNIT_ASSERT_EQ(test, cq_create(fx, 4), 0);
	KUNIT_EXPECT_EQ(test, fx->cq->ibcq.cqe, 7);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->sdev->res[SROCE_RES_CQ]), 1);

	for (i = 0; i < 7; i++)
		KUNIT_EXPECT_EQ(test, cq_post_id(fx, i, false), 0);
	KUNIT_EXPECT_EQ(test, cq_post_id(fx, 99, false), -EBUSY);
	KUNIT_EXPECT_EQ(test, fx->err_events, 1);
	KUNIT_EXPECT_EQ(test, sroce_counter_read(fx->sdev, SROCE_CNT_CQ_OVERFLOW), 1);

	n = sroce_poll_cq(&fx->cq->ibcq, 3, wc);
	KUNIT_ASSERT_EQ(test, n, 3);
	n += sroce_poll_cq(&fx->cq->ibcq, 10, wc + 3);
	KUNIT_ASSERT_EQ(test, n, 7);
	for (i = 0; i < 7; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, wc[i].byte_len, (u32)i);
	}
	KUNIT_EXPECT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 10, wc), 0);

	/* The ring is reusable once drained, across the wrap. */
	for (i = 0; i < 7; i++)
		KUNIT_EXPECT_EQ(test, cq_post_id(fx, 100 + i, false), 0);
	KUNIT_EXPECT_EQ(test, sroce_poll_cq(&fx->cq->ibcq, 10, wc), 7);
	KUNIT_EXPECT_EQ(test, wc[6].wr_id, 106);

	KUNIT_EXPECT_EQ(test, sroce_destroy_cq(&fx->cq->ibcq, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->sdev->res[SROCE_RES_CQ]), 0);
}

static void cq_arm_one_shot(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;
	struct ib_cq *ibcq = &fx->cq->ibcq;

	KUNIT_ASSERT_EQ(test, cq_create(fx, 16), 0);

	/* Unarmed: no event. */
	cq_post_id(fx, 1, true);
	KUNIT_EXPECT_EQ(test, fx->comp_calls, 0);

	/* Next completion: fires once. */
	KUNIT_EXPECT_EQ(test, sroce_req_notify_cq(ibcq, IB_CQ_NEXT_COMP), 0);
	cq_post_id(fx, 2, false);
	cq_post_id(fx, 3, false);
	KUNIT_EXPECT_EQ(test, fx->comp_calls, 1);

	/* Solicited only: ignores unsolicited completions. */
	sroce_req_notify_cq(ibcq, IB_CQ_SOLICITED);
	cq_post_id(fx, 4, false);
	KUNIT_EXPECT_EQ(test, fx->comp_calls, 1);
	cq_post_id(fx, 5, true);
	KUNIT_EXPECT_EQ(test, fx->comp_calls, 2);

	/* A solicited arm does not weaken a pending next-completion arm. */
	sroce_req_notify_cq(ibcq, IB_CQ_NEXT_COMP);
	sroce_req_notify_cq(ibcq, IB_CQ_SOLICITED);
	cq_post_id(fx, 6, false);
	KUNIT_EXPECT_EQ(test, fx->comp_calls, 3);

	/* Missed events are reported while completions are pending. */
	KUNIT_EXPECT_EQ(test, sroce_req_notify_cq(ibcq, IB_CQ_NEXT_COMP |
				    IB_CQ_REPORT_MISSED_EVENTS), 1);
	sroce_destroy_cq(ibcq, NULL);
}

static void cq_missed_events_empty(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;

	enum ib_cq_notify_flags f = IB_CQ_SOLICITED | IB_CQ_REPORT_MISSED_EVENTS;

	KUNIT_ASSERT_EQ(test, cq_create(fx, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_req_notify_cq(&fx->cq->ibcq, f), 0);
	sroce_destroy_cq(&fx->cq->ibcq, NULL);
}

static void cq_arm_table(struct kunit *test)
{
	u8 n;

	n = 0;
	KUNIT_EXPECT_FALSE(test, sroce_cq_arm_fires(&n, true));
	n = IB_CQ_SOLICITED;
	KUNIT_EXPECT_FALSE(test, sroce_cq_arm_fires(&n, false));
	KUNIT_EXPECT_EQ(test, n, IB_CQ_SOLICITED);
	KUNIT_EXPECT_TRUE(test, sroce_cq_arm_fires(&n, true));
	KUNIT_EXPECT_EQ(test, n, 0);
	n = IB_CQ_NEXT_COMP;
	KUNIT_EXPECT_TRUE(test, sroce_cq_arm_fires(&n, false));
	KUNIT_EXPECT_EQ(test, n, 0);
}

static void cq_resize(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;
	struct ib_cq *ibcq = &fx->cq->ibcq;
	struct ib_wc wc[16];
	int i;

	KUNIT_ASSERT_EQ(test, cq_create(fx, 7), 0);
	/* Move the indices off zero so the copy has to wrap. */
	for (i = 0; i < 6; i++)
		cq_post_id(fx, i, false);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(ibcq, 6, wc), 6);
	for (i = 0; i < 5; i++)
		cq_post_id(fx, 10 + i, false);

	KUNIT_EXPECT_EQ(test, sroce_resize_cq(ibcq, 4, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_resize_cq(ibcq, 0, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_resize_cq(ibcq, SROCE_MAX_CQE + 1, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ibcq->cqe, 7);

	KUNIT_ASSERT_EQ(test, sroce_resize_cq(ibcq, 9, NULL), 0);
	KUNIT_EXPECT_EQ(test, ibcq->cqe, 15);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, cq_post_id(fx, 20 + i, false), 0);
	KUNIT_EXPECT_EQ(test, cq_post_id(fx, 30, false), -EBUSY);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(ibcq, 16, wc), 15);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, 10 + i);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, wc[5 + i].wr_id, 20 + i);

	/* Shrink to exactly the pending count. */
	for (i = 0; i < 3; i++)
		cq_post_id(fx, 40 + i, false);
	KUNIT_ASSERT_EQ(test, sroce_resize_cq(ibcq, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, ibcq->cqe, 3);
	KUNIT_ASSERT_EQ(test, sroce_poll_cq(ibcq, 16, wc), 3);
	KUNIT_EXPECT_EQ(test, wc[2].wr_id, 42);
	sroce_destroy_cq(ibcq, NULL);
}

static void cq_create_limits(struct kunit *test)
{
	struct cq_fixture *fx = test->priv;
	struct ib_cq_init_attr attr = { .cqe = 1, .flags = 1 };

	KUNIT_EXPECT_EQ(test, cq_create(fx, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, cq_create(fx, -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, cq_create(fx, SROCE_MAX_CQE + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_create_cq(&fx->cq->ibcq, &attr, NULL),
			-EOPNOTSUPP);

	/* The device-wide CQ count is enforced. */
	atomic_set(&fx->sdev->res[SROCE_RES_CQ], SROCE_MAX_CQ);
	KUNIT_EXPECT_EQ(test, cq_create(fx, 1), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->sdev->res[SROCE_RES_CQ]),
			SROCE_MAX_CQ);
	atomic_set(&fx->sdev->res[SROCE_RES_CQ], SROCE_MAX_CQ - 1);
	KUNIT_ASSERT_EQ(test, cq_create(fx, SROCE_MAX_CQE), 0);
	KUNIT_EXPECT_EQ(test, fx->cq->ibcq.cqe, SROCE_MAX_CQE);
	sroce_destroy_cq(&fx->cq->ibcq, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->sdev->res[SROCE_RES_CQ]),
			SROCE_MAX_CQ - 1);
}

static struct kunit_case cq_cases[] = {
	KUNIT_CASE(cq_fill_overflow_poll),
	KUNIT_CASE(cq_arm_one_shot),
	KUNIT_CASE(cq_missed_events_empty),
	KUNIT_CASE(cq_arm_table),
	KUNIT_CASE(cq_resize),
	KUNIT_CASE(cq_create_limits),
	{}
};

struct kunit_suite sroce_cq_suite = {
	.name = "sroce_cq",
	.init = cq_init,
	.exit = cq_exit,
	.test_cases = cq_cases,
};
