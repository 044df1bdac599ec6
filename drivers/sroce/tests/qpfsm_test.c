// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the RC QP state machine sroce_modify_qp() applies, through its
 * check of a modify (sroce_qp_check_attr()): ib_core's transition table
 * (ib_modify_qp_is_ok()) and sroce's own limits on the values. These cases
 * pin down the decisions users of an RC QP see: the attributes each step of
 * the bring-up needs, what each step may also carry, which transitions
 * exist at all, and which values are refused. Also the QP's life around
 * them: its number, and what destroy waits for before ib_core frees it.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "../sroce.h"
#include "sroce_test.h"

#define RESET	IB_QPS_RESET
#define INIT	IB_QPS_INIT
#define RTR	IB_QPS_RTR
#define RTS	IB_QPS_RTS
#define SQD	IB_QPS_SQD
#define SQE	IB_QPS_SQE
#define ERR	IB_QPS_ERR
#define NSTATES	(IB_QPS_ERR + 1)

/* What each step of the RC bring-up must carry. */
#define REQ_RESET_INIT	(IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS)
#define REQ_INIT_RTR	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | \
			 IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_MIN_RNR_TIMER)
#define REQ_RTR_RTS	(IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | \
			 IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC)

static const char *const state_name[NSTATES] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

/* A RoCE v2 source GID, as a path's AV must name. */
static const struct ib_gid_attr fsm_sgid = {
	.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP,
};

/*
 * An RC QP with attributes every field of which sroce accepts. Static: a
 * QP is too big for a KUnit case's stack, and the cases run one by one.
 */
static struct sroce_qp fsm_qp;
static struct ib_qp_attr fsm_attr;

static void fsm_valid(struct sroce_qp *qp, struct ib_qp_attr *a)
{
	memset(qp, 0, sizeof(*qp));
	qp->ibqp.qp_type = IB_QPT_RC;
	memset(a, 0, sizeof(*a));
	a->port_num = 1;
	a->pkey_index = 0;
	a->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			     IB_ACCESS_LOCAL_WRITE;
	a->path_mtu = IB_MTU_1024;
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->min_rnr_timer = 12;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	a->ah_attr.ah_flags = IB_AH_GRH;
	a->ah_attr.grh.sgid_attr = &fsm_sgid;
}

/* Whether sroce lets an RC QP make the transition with valid values. */
static bool rc_ok(enum ib_qp_state cur, enum ib_qp_state next, u32 mask)
{
	fsm_valid(&fsm_qp, &fsm_attr);
	return !sroce_qp_check_attr(&fsm_qp, &fsm_attr, mask, cur, next);
}

/* Required attributes of a transition; 0 for one that needs none. */
static u32 rc_required(enum ib_qp_state cur, enum ib_qp_state next)
{
	if (cur == RESET && next == INIT)
		return REQ_RESET_INIT;
	if (cur == INIT && next == RTR)
		return REQ_INIT_RTR;
	if (cur == RTR && next == RTS)
		return REQ_RTR_RTS;
	return 0;
}

static void qpfsm_bringup(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, rc_ok(RESET, INIT,
				      IB_QP_STATE | REQ_RESET_INIT));
	KUNIT_EXPECT_TRUE(test, rc_ok(INIT, RTR, IB_QP_STATE | REQ_INIT_RTR));
	KUNIT_EXPECT_TRUE(test, rc_ok(RTR, RTS, IB_QP_STATE | REQ_RTR_RTS));
	/* With some of the optional attributes along. */
	KUNIT_EXPECT_TRUE(test, rc_ok(INIT, RTR,
				      IB_QP_STATE | REQ_INIT_RTR |
				      IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX));
	KUNIT_EXPECT_TRUE(test, rc_ok(RTR, RTS,
				      IB_QP_STATE | REQ_RTR_RTS |
				      IB_QP_MIN_RNR_TIMER |
				      IB_QP_ACCESS_FLAGS));
	/* Skipping a step. */
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, RTR, IB_QP_STATE |
				       REQ_RESET_INIT | REQ_INIT_RTR));
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, RTS, IB_QP_STATE |
				       REQ_RESET_INIT | REQ_INIT_RTR |
				       REQ_RTR_RTS));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, RTS, IB_QP_STATE |
				       REQ_INIT_RTR | REQ_RTR_RTS));
}

/* Each required attribute left out, one at a time. */
static void qpfsm_required(struct kunit *test)
{
	static const struct {
		enum ib_qp_state cur, next;
		u32 req;
	} steps[] = {
		{ RESET, INIT, REQ_RESET_INIT },
		{ INIT, RTR, REQ_INIT_RTR },
		{ RTR, RTS, REQ_RTR_RTS },
	};
	unsigned int i, bit;

	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		enum ib_qp_state cur = steps[i].cur, next = steps[i].next;

		for (bit = 0; bit < 32; bit++) {
			u32 b = BIT(bit);

			if (!(steps[i].req & b))
				continue;
			KUNIT_EXPECT_FALSE_MSG(test,
					       rc_ok(cur, next, IB_QP_STATE |
						     (steps[i].req & ~b)),
					       "%s->%s without %#x",
					       state_name[cur],
					       state_name[next], b);
		}
		/* And with nothing but the state. */
		KUNIT_EXPECT_FALSE(test, rc_ok(cur, next, IB_QP_STATE));
	}
}

/* What each transition may carry besides what it needs, and what not. */
static void qpfsm_optional(struct kunit *test)
{
	const u32 s = IB_QP_STATE;

	/* RESET->INIT: nothing else; Q_Key is for UD. */
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, INIT,
				       s | REQ_RESET_INIT | IB_QP_QKEY));
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, INIT,
				       s | REQ_RESET_INIT | IB_QP_AV));
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, INIT,
				       s | REQ_RESET_INIT | IB_QP_SQ_PSN));

	/* INIT->INIT: re-set the RESET->INIT attributes, or nothing. */
	KUNIT_EXPECT_TRUE(test, rc_ok(INIT, INIT, s));
	KUNIT_EXPECT_TRUE(test, rc_ok(INIT, INIT, s | REQ_RESET_INIT));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, INIT, s | IB_QP_QKEY));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, INIT, s | IB_QP_RQ_PSN));

	/* INIT->RTR: no send-side attributes, no port change. */
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, RTR,
				       s | REQ_INIT_RTR | IB_QP_SQ_PSN));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, RTR,
				       s | REQ_INIT_RTR | IB_QP_TIMEOUT));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, RTR,
				       s | REQ_INIT_RTR | IB_QP_PORT));
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, RTR,
				       s | REQ_INIT_RTR | IB_QP_QKEY));

	/* RTR->RTS: of the receive side, only the RNR timer may change. */
	KUNIT_EXPECT_TRUE(test, rc_ok(RTR, RTS,
				      s | REQ_RTR_RTS | IB_QP_CUR_STATE |
				      IB_QP_PATH_MIG_STATE));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTR, RTS,
				       s | REQ_RTR_RTS | IB_QP_RQ_PSN));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTR, RTS,
				       s | REQ_RTR_RTS | IB_QP_PATH_MTU));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTR, RTS,
				       s | REQ_RTR_RTS | IB_QP_DEST_QPN));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTR, RTS,
				       s | REQ_RTR_RTS |
				       IB_QP_MAX_DEST_RD_ATOMIC));

	/* RTS->RTS: access flags and the RNR timer, not the PSNs/timeouts. */
	KUNIT_EXPECT_TRUE(test, rc_ok(RTS, RTS, s));
	KUNIT_EXPECT_TRUE(test, rc_ok(RTS, RTS, s | IB_QP_ACCESS_FLAGS |
				      IB_QP_MIN_RNR_TIMER | IB_QP_CUR_STATE));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTS, RTS, s | IB_QP_SQ_PSN));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTS, RTS, s | IB_QP_TIMEOUT));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTS, RTS, s | IB_QP_RETRY_CNT));

	/* SQ drain and back; SQD->SQD may change the path and timers. */
	KUNIT_EXPECT_TRUE(test, rc_ok(RTS, SQD, s));
	KUNIT_EXPECT_TRUE(test, rc_ok(RTS, SQD,
				      s | IB_QP_EN_SQD_ASYNC_NOTIFY));
	KUNIT_EXPECT_FALSE(test, rc_ok(RTS, SQD, s | IB_QP_TIMEOUT));
	KUNIT_EXPECT_TRUE(test, rc_ok(SQD, RTS, s));
	KUNIT_EXPECT_TRUE(test, rc_ok(SQD, SQD, s | IB_QP_TIMEOUT |
				      IB_QP_RETRY_CNT | IB_QP_AV));
	KUNIT_EXPECT_FALSE(test, rc_ok(SQD, SQD, s | IB_QP_SQ_PSN));

	/* IB_QP_CUR_STATE only from RTR, RTS, SQD and SQE. */
	KUNIT_EXPECT_FALSE(test, rc_ok(INIT, INIT, s | IB_QP_CUR_STATE));
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, INIT, s | REQ_RESET_INIT |
				       IB_QP_CUR_STATE));
	KUNIT_EXPECT_TRUE(test, rc_ok(SQD, RTS, s | IB_QP_CUR_STATE));
}

static void fsm_try(struct kunit *test, bool ok, enum ib_qp_state cur,
		    enum ib_qp_state next, u32 mask, const char *what)
{
	KUNIT_EXPECT_EQ_MSG(test, sroce_qp_check_attr(&fsm_qp, &fsm_attr, mask,
						      cur, next),
			    ok ? 0 : -EINVAL, "%s->%s with %s",
			    state_name[cur], state_name[next], what);
}

/* The attributes whose values sroce limits itself (fsm_ranges). */
enum fsm_field {
	FSM_PORT,
	FSM_PKEY_INDEX,
	FSM_ACCESS,
	FSM_PATH_MTU,
	FSM_DEST_RD_ATOMIC,
	FSM_MIN_RNR_TIMER,
	FSM_AH_FLAGS,
	FSM_RD_ATOMIC,
	FSM_TIMEOUT,
	FSM_RETRY_CNT,
	FSM_RNR_RETRY,
};

static void fsm_set(struct ib_qp_attr *a, enum fsm_field f, u32 v)
{
	switch (f) {
	case FSM_PORT:
		a->port_num = v;
		break;
	case FSM_PKEY_INDEX:
		a->pkey_index = v;
		break;
	case FSM_ACCESS:
		a->qp_access_flags = v;
		break;
	case FSM_PATH_MTU:
		a->path_mtu = v;
		break;
	case FSM_DEST_RD_ATOMIC:
		a->max_dest_rd_atomic = v;
		break;
	case FSM_MIN_RNR_TIMER:
		a->min_rnr_timer = v;
		break;
	case FSM_AH_FLAGS:
		a->ah_attr.ah_flags = v;
		break;
	case FSM_RD_ATOMIC:
		a->max_rd_atomic = v;
		break;
	case FSM_TIMEOUT:
		a->timeout = v;
		break;
	case FSM_RETRY_CNT:
		a->retry_cnt = v;
		break;
	case FSM_RNR_RETRY:
		a->rnr_retry = v;
		break;
	}
}

/*
 * One of sroce's limits on a value: @val in @field of a modify from
 * @cur to the next state of the bring-up, refused or not.
 */
struct fsm_range {
	enum fsm_field	field;
	u32		val;
	enum ib_qp_state cur;
	bool		ok;
	const char	*name;
};

#define FSM_RANGE(f, v, c, good) { FSM_##f, v, c, good, #f " = " #v }

/* Each value just inside is taken, just outside not. */
static const struct fsm_range fsm_ranges[] = {
	FSM_RANGE(PORT, 2, RESET, false),
	FSM_RANGE(PORT, 0, RESET, false),
	FSM_RANGE(PKEY_INDEX, SROCE_MAX_PKEYS - 1, RESET, true),
	FSM_RANGE(PKEY_INDEX, SROCE_MAX_PKEYS, RESET, false),
	FSM_RANGE(ACCESS, IB_ACCESS_REMOTE_ATOMIC, RESET, true),
	FSM_RANGE(ACCESS, IB_ACCESS_MW_BIND, RESET, false),
	FSM_RANGE(PATH_MTU, IB_MTU_256, INIT, true),
	FSM_RANGE(PATH_MTU, IB_MTU_4096, INIT, true),
	FSM_RANGE(PATH_MTU, 0, INIT, false),
	FSM_RANGE(PATH_MTU, IB_MTU_4096 + 1, INIT, false),
	FSM_RANGE(DEST_RD_ATOMIC, 0, INIT, true),
	FSM_RANGE(DEST_RD_ATOMIC, SROCE_MAX_QP_RD_ATOM, INIT, true),
	FSM_RANGE(DEST_RD_ATOMIC, SROCE_MAX_QP_RD_ATOM + 1, INIT, false),
	FSM_RANGE(MIN_RNR_TIMER, 31, INIT, true),
	FSM_RANGE(MIN_RNR_TIMER, 32, INIT, false),
	FSM_RANGE(AH_FLAGS, 0, INIT, false),
	FSM_RANGE(RD_ATOMIC, SROCE_MAX_QP_RD_ATOM, RTR, true),
	FSM_RANGE(RD_ATOMIC, SROCE_MAX_QP_RD_ATOM + 1, RTR, false),
	FSM_RANGE(TIMEOUT, 31, RTR, true),
	FSM_RANGE(TIMEOUT, 32, RTR, false),
	FSM_RANGE(RETRY_CNT, 0, RTR, true),
	FSM_RANGE(RETRY_CNT, 8, RTR, false),
	FSM_RANGE(RNR_RETRY, 8, RTR, false),
};

/* sroce's own limits on the values of a modify. */
static void qpfsm_ranges(struct kunit *test)
{
	static const struct ib_gid_attr v1 = { .gid_type = IB_GID_TYPE_ROCE };
	const u32 init = IB_QP_STATE | REQ_RESET_INIT;
	const u32 rtr = IB_QP_STATE | REQ_INIT_RTR;
	const u32 rts = IB_QP_STATE | REQ_RTR_RTS;
	struct ib_qp_attr *a = &fsm_attr;
	struct sroce_qp *qp = &fsm_qp;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fsm_ranges); i++) {
		const struct fsm_range *r = &fsm_ranges[i];
		enum ib_qp_state next = r->cur + 1;

		fsm_valid(qp, a);
		fsm_set(a, r->field, r->val);
		fsm_try(test, r->ok, r->cur, next,
			IB_QP_STATE | rc_required(r->cur, next), r->name);
	}

	/* The path's source GID: RoCE v2, and present. */
	fsm_valid(qp, a);
	a->ah_attr.grh.sgid_attr = &v1;
	fsm_try(test, false, INIT, RTR, rtr, "a RoCE v1 source GID");
	fsm_valid(qp, a);
	a->ah_attr.grh.sgid_attr = NULL;
	fsm_try(test, false, INIT, RTR, rtr, "no source GID");

	/* No alternate path on RoCE, no resizing through modify. */
	fsm_valid(qp, a);
	KUNIT_EXPECT_EQ(test, sroce_qp_check_attr(qp, a, rts | IB_QP_ALT_PATH,
						  RTR, RTS), -EINVAL);
	KUNIT_EXPECT_EQ(test, sroce_qp_check_attr(qp, a, IB_QP_STATE |
						  IB_QP_CAP, RTS, RTS),
			-EINVAL);
	/* The transition table follows the QP's type: Q_Key is UD's. */
	KUNIT_EXPECT_EQ(test, sroce_qp_check_attr(qp, a, init | IB_QP_QKEY,
						  RESET, INIT), -EINVAL);
	qp->ibqp.qp_type = IB_QPT_UD;
	KUNIT_EXPECT_EQ(test, sroce_qp_check_attr(qp, a, IB_QP_STATE |
						  IB_QP_PKEY_INDEX |
						  IB_QP_PORT | IB_QP_QKEY,
						  RESET, INIT), 0);
}

/*
 * Which transitions exist for RC, from IBTA's QP state diagram as ib_core
 * implements it. Note there is no RESET->ERR, and no RTR->RTR: a modify
 * of an RTR QP that leaves the state alone is refused.
 */
static const bool rc_valid[NSTATES][NSTATES] = {
	[RESET] = { [RESET] = true, [INIT] = true },
	[INIT]	= { [RESET] = true, [INIT] = true, [RTR] = true,
		    [ERR] = true },
	[RTR]	= { [RESET] = true, [RTS] = true, [ERR] = true },
	[RTS]	= { [RESET] = true, [RTS] = true, [SQD] = true, [ERR] = true },
	[SQD]	= { [RESET] = true, [RTS] = true, [SQD] = true, [ERR] = true },
	[SQE]	= { [RESET] = true, [RTS] = true, [ERR] = true },
	[ERR]	= { [RESET] = true, [ERR] = true },
};

static void qpfsm_matrix(struct kunit *test)
{
	const u32 all = REQ_RESET_INIT | REQ_INIT_RTR | REQ_RTR_RTS;
	unsigned int cur, next;

	for (cur = 0; cur < NSTATES; cur++) {
		for (next = 0; next < NSTATES; next++) {
			const char *c = state_name[cur], *n = state_name[next];
			u32 req = IB_QP_STATE | rc_required(cur, next);

			if (rc_valid[cur][next]) {
				KUNIT_EXPECT_TRUE_MSG(test,
						      rc_ok(cur, next, req),
						      "%s->%s", c, n);
				continue;
			}
			/* Refused whatever comes with it. */
			KUNIT_EXPECT_FALSE_MSG(test,
					       rc_ok(cur, next, IB_QP_STATE),
					       "%s->%s", c, n);
			KUNIT_EXPECT_FALSE_MSG(test,
					       rc_ok(cur, next,
						     IB_QP_STATE | all),
					       "%s->%s", c, n);
		}
	}
}

/* Tearing down: to ERR or RESET from anywhere a QP can be. */
static void qpfsm_err_reset(struct kunit *test)
{
	unsigned int cur;

	for (cur = 0; cur < NSTATES; cur++) {
		const char *c = state_name[cur];

		KUNIT_EXPECT_TRUE_MSG(test, rc_ok(cur, RESET, IB_QP_STATE),
				      "%s->RESET", c);
		/* Nothing may ride along. */
		KUNIT_EXPECT_FALSE_MSG(test,
				       rc_ok(cur, RESET,
					     IB_QP_STATE | IB_QP_TIMEOUT),
				       "%s->RESET with TIMEOUT", c);
		KUNIT_EXPECT_FALSE_MSG(test,
				       rc_ok(cur, ERR,
					     IB_QP_STATE | IB_QP_ACCESS_FLAGS),
				       "%s->ERR with ACCESS_FLAGS", c);
		if (cur == RESET)
			continue;
		KUNIT_EXPECT_TRUE_MSG(test, rc_ok(cur, ERR, IB_QP_STATE),
				      "%s->ERR", c);
	}
	/* ib_core has no RESET->ERR (a RESET QP has nothing to flush). */
	KUNIT_EXPECT_FALSE(test, rc_ok(RESET, ERR, IB_QP_STATE));
	/* Out of ERR only through RESET. */
	KUNIT_EXPECT_FALSE(test, rc_ok(ERR, INIT,
				       IB_QP_STATE | REQ_RESET_INIT));
	KUNIT_EXPECT_FALSE(test, rc_ok(ERR, RTS, IB_QP_STATE | REQ_RTR_RTS));
}

struct qp_holder {
	struct sroce_qp *qp;
	bool put;
};

static int qp_holder_fn(void *arg)
{
	struct qp_holder *h = arg;

	msleep(100);
	WRITE_ONCE(h->put, true);
	sroce_qp_put(h->qp);
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

struct qp_reader {
	struct sroce_dev *sdev;
	struct completion loaded;
	bool quiesced;		/* set once sroce_qp_quiesce() returned */
	bool timed_out;
	bool got;
};

/*
 * A receive path that loaded the lookup entry just before the erase: in
 * its RCU read-side section until the destroy is over, then trying for a
 * reference. A destroy that waited for a grace period would wait for it.
 */
static int qp_reader_fn(void *arg)
{
	struct qp_reader *r = arg;
	struct sroce_qp_ref *ref;
	int i;

	rcu_read_lock();
	ref = xa_load(&r->sdev->qp_xa, 17);
	complete(&r->loaded);
	for (i = 0; i < 500 && !READ_ONCE(r->quiesced); i++)
		mdelay(10);
	r->timed_out = !READ_ONCE(r->quiesced);
	r->got = ref && refcount_inc_not_zero(&ref->users);
	rcu_read_unlock();
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/*
 * Destroying a QP: once sroce_qp_unlist() and sroce_qp_quiesce() return,
 * ib_core frees the QP. By then the QP must be out of the lookup and
 * every reference taken before must be dropped; a receive path that
 * loaded the lookup entry before the erase, and has not yet taken its
 * reference, must find the entry still there with no reference to take,
 * and the destroy must not wait for it to leave its RCU read-side section
 * (a grace period a destroy: tearing down thousands of connections).
 */
static void qp_destroy_waits(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct qp_holder h = {};
	struct qp_reader r = { .sdev = sdev };
	struct task_struct *t, *rt;

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	KUNIT_ASSERT_EQ(test, sroce_qp_ref_init(qp), 0);
	qp->ibqp.qp_num = 17;
	KUNIT_ASSERT_EQ(test, xa_insert_bh(&sdev->qp_xa, 17, qp->ref,
					   GFP_KERNEL), 0);

	/* A reference held a while longer by someone else. */
	h.qp = sroce_qp_get(sdev, 17);
	KUNIT_ASSERT_PTR_EQ(test, h.qp, qp);
	t = kthread_run(qp_holder_fn, &h, "sroce-kunit-qp");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	init_completion(&r.loaded);
	rt = kthread_run(qp_reader_fn, &r, "sroce-kunit-rcu");
	KUNIT_ASSERT_FALSE(test, IS_ERR(rt));
	wait_for_completion(&r.loaded);

	sroce_qp_unlist(sdev, qp);
	KUNIT_EXPECT_NULL(test, sroce_qp_get(sdev, 17));
	sroce_qp_quiesce(qp);
	WRITE_ONCE(r.quiesced, true);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(h.put));
	KUNIT_EXPECT_NULL(test, qp->ref);
	kthread_stop(rt);
	KUNIT_EXPECT_FALSE_MSG(test, r.timed_out,
			       "the destroy waited for an RCU reader");
	KUNIT_EXPECT_FALSE(test, r.got);
	kthread_stop(t);

	/* With no other reference: at once. */
	KUNIT_ASSERT_EQ(test, sroce_qp_ref_init(qp), 0);
	KUNIT_ASSERT_EQ(test, xa_insert_bh(&sdev->qp_xa, 17, qp->ref,
					   GFP_KERNEL), 0);
	sroce_qp_unlist(sdev, qp);
	sroce_qp_quiesce(qp);
	KUNIT_EXPECT_TRUE(test, xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
}

/* QP numbers go round below 0xffffff, the multicast QPN, and skip 0..15. */
static void qp_number_wrap(struct kunit *test)
{
	struct sroce_dev *sdev = kunit_kzalloc(test, sizeof(*sdev), GFP_KERNEL);
	struct sroce_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	u32 qpn[3];
	int i;

	KUNIT_ASSERT_NOT_NULL(test, sdev);
	KUNIT_ASSERT_NOT_NULL(test, qp);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	sdev->qp_next = SROCE_MCAST_QPN - 1;
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_GE(test, sroce_qpn_alloc(sdev, qp, &qpn[i]), 0);
	KUNIT_EXPECT_EQ(test, qpn[0], SROCE_MCAST_QPN - 1);
	KUNIT_EXPECT_EQ(test, qpn[1], 16U);
	KUNIT_EXPECT_EQ(test, qpn[2], 17U);
	xa_destroy(&sdev->qp_xa);
}

static struct kunit_case qpfsm_cases[] = {
	KUNIT_CASE(qpfsm_bringup),
	KUNIT_CASE(qpfsm_required),
	KUNIT_CASE(qpfsm_optional),
	KUNIT_CASE(qpfsm_matrix),
	KUNIT_CASE(qpfsm_err_reset),
	KUNIT_CASE(qpfsm_ranges),
	KUNIT_CASE(qp_destroy_waits),
	KUNIT_CASE(qp_number_wrap),
	{}
};

/*
 * "sroce_qpfsm", not "sroce_qp_fsm": scripts/check.sh tells suite lines
 * from case lines by the pattern sroce_[a-z]*.
 */
struct kunit_suite sroce_qpfsm_suite = {
	.name = "sroce_qpfsm",
	.test_cases = qpfsm_cases,
};
