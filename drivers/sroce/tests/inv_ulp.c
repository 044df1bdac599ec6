// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_invtest: a kernel ULP that races invalidations of one
 * fast-registration MR through a live sroce device, as an NVMe-oF or
 * NFS/RDMA server answering on two queues of one PD does while the host
 * invalidates its own keys. Round after round the MR is registered
 * (IB_WR_REG_MR with a new key), then two SEND_WITH_INVs of that key, on
 * two RC QPs of the PD, and a LOCAL_INV on a third QP are posted at once.
 * Exactly one invalidation may win; the others complete in error, and
 * none may wait for the others (a CPU left spinning with BHs off is what
 * the debug kernel's soft-lockup and RCU stall detectors report).
 *
 * All QPs are on the one device, connected over its own IPv4 RoCEv2 GID,
 * so every packet takes the same-host path and each invalidation runs in
 * the thread that posts it. Loading the module runs the test for @secs
 * seconds; it refuses to load (-EIO) if a round went wrong. Built only
 * against a kernel with KUnit (the debug kernel), like sroce_kunit.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "sroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to run on (sroce0)");
static uint secs = 20;
module_param(secs, uint, 0444);
MODULE_PARM_DESC(secs, "how long to race, in seconds (20)");

/* The QPs; also the low byte of a WR's wr_id, above it the round. */
enum { INV_S0, INV_S1, INV_R0, INV_R1, INV_L, INV_NQP, INV_REG = INV_NQP };
#define INV_IDS		(INV_REG + 1)
#define INV_WAIT	(10 * HZ)	/* for one round's completions */
#define INV_ALIGN_US	2000		/* racers wait this long for each other */

struct inv_test {
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	struct ib_qp		*qp[INV_NQP];
	struct ib_mr		*mr;
	void			*page;		/* what the MR maps */
	struct scatterlist	sg;
	bool			sg_mapped;
	union ib_gid		gid;		/* the device's own IPv4 GID */
	u32			sgid_index;
	u8			mac[ETH_ALEN];
	struct task_struct	*sender[2];
	wait_queue_head_t	wq;
	atomic_t		go;		/* the round the racers may post in */
	atomic_t		ready;		/* racers at the line this round */
	atomic_t		post_err;	/* a racer's post failed */
	u32			key;		/* this round's rkey */
	/* One round's completions, by role. */
	struct ib_wc		wc[INV_IDS];
	bool			got[INV_IDS];
	/* Totals: winners by role, and the losers' statuses. */
	unsigned int		rounds, won[INV_NQP], lost_status[IB_WC_GENERAL_ERR + 1];
};

static struct inv_test inv;

static int inv_client_add(struct ib_device *ibdev)
{
	if (strcmp(dev_name(&ibdev->dev), dev) || inv.ibdev)
		return -EOPNOTSUPP;
	if (!ib_device_try_get(ibdev))
		return -EOPNOTSUPP;
	inv.ibdev = ibdev;
	return 0;
}

static struct ib_client inv_client = {
	.name	= "sroce_invtest",
	.add	= inv_client_add,
};

/* The device's IPv4 RoCEv2 GID, and its netdev's MAC for the AVs. */
static int inv_find_gid(struct inv_test *t)
{
	struct ib_port_attr pa;
	u32 i;
	int err;

	err = ib_query_port(t->ibdev, 1, &pa);
	if (err)
		return err;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		const struct ib_gid_attr *a = rdma_get_gid_attr(t->ibdev, 1, i);

		if (IS_ERR(a))
			continue;
		if (a->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)a->gid.raw) &&
		    !rdma_read_gid_l2_fields(a, NULL, t->mac)) {
			t->gid = a->gid;
			t->sgid_index = i;
			rdma_put_gid_attr(a);
			return 0;
		}
		rdma_put_gid_attr(a);
	}
	pr_err("sroce_invtest: %s has no IPv4 RoCEv2 GID\n", dev);
	return -ENODEV;
}

/*
 * RESET, then INIT, RTR and RTS towards @peer, both starting at @psn.
 * Return: 0, or the error of the first transition refused (into *@step).
 */
static int inv_connect(struct inv_test *t, struct ib_qp *qp, u32 peer, u32 psn,
		       enum ib_qp_state *step)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int err;

	*step = IB_QPS_RESET;
	err = ib_modify_qp(qp, &a, IB_QP_STATE);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	*step = a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	*step = a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &t->gid, 0, t->sgid_index, 64, 0);
	/* A kernel caller's AV comes resolved: the device's own MAC. */
	memcpy(a.ah_attr.roce.dmac, t->mac, ETH_ALEN);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	*step = a.qp_state = IB_QPS_RTS;
	a.sq_psn = psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static u64 inv_wr_id(u32 round, int role)
{
	return (u64)round << 8 | role;
}

/* Wait (bounded) until every racer of @round is at the line. */
static void inv_align(struct inv_test *t)
{
	int us;

	atomic_inc(&t->ready);
	for (us = 0; us < INV_ALIGN_US && atomic_read(&t->ready) < 3; us++)
		udelay(1);
}

/* Post one invalidation of this round's key: @role's SEND_WITH_INV or LOCAL_INV. */
static int inv_post(struct inv_test *t, int role, u32 round)
{
	struct ib_send_wr wr = {
		.wr_id = inv_wr_id(round, role),
		.opcode = role == INV_L ? IB_WR_LOCAL_INV : IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = READ_ONCE(t->key),
	};

	return ib_post_send(t->qp[role], &wr, NULL);
}

static bool inv_round_open(struct inv_test *t, u32 seen)
{
	return atomic_read_acquire(&t->go) != seen || kthread_should_stop();
}

/* A SEND_WITH_INV racer: one post per round, on its own QP. */
static int inv_sender(void *arg)
{
	struct inv_test *t = &inv;
	int role = (long)arg;
	u32 seen = 0;

	while (!kthread_should_stop()) {
		wait_event_interruptible(t->wq, inv_round_open(t, seen));
		if (kthread_should_stop())
			break;
		seen = atomic_read_acquire(&t->go);
		inv_align(t);
		if (inv_post(t, role, seen))
			atomic_inc(&t->post_err);
	}
	return 0;
}

/* Collect this round's completions of @want (a mask of roles), ≤ 10 s. */
static int inv_collect(struct inv_test *t, u32 round, unsigned int want)
{
	unsigned long deadline = jiffies + INV_WAIT;
	unsigned int got = 0;
	struct ib_wc wc[8];
	int i, n;

	while ((got & want) != want) {
		n = ib_poll_cq(t->cq, ARRAY_SIZE(wc), wc);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			int role = wc[i].wr_id & 0xff;

			/* A late flush of an earlier round's QP: not this one's. */
			if (wc[i].wr_id >> 8 != round || role >= INV_IDS)
				continue;
			t->wc[role] = wc[i];
			t->got[role] = true;
			got |= BIT(role);
		}
		if (n)
			continue;
		if (time_after(jiffies, deadline)) {
			pr_err("sroce_invtest: round %u: completions %#x of %#x after %d s\n",
			       round, got, want, INV_WAIT / HZ);
			return -ETIMEDOUT;
		}
		usleep_range(20, 50);
	}
	return 0;
}

/* Connect the QPs, post the receives, register the MR with a new key. */
static int inv_arm(struct inv_test *t, u32 round)
{
	static const int peer[INV_NQP] = { INV_R0, INV_R1, INV_S0, INV_S1, INV_L };
	u32 psn = (round * 16) & 0xffffff;
	struct ib_reg_wr reg = {};
	enum ib_qp_state step;
	int i, err;

	for (i = 0; i < INV_NQP; i++) {
		err = inv_connect(t, t->qp[i], t->qp[peer[i]]->qp_num, psn,
				  &step);
		if (err) {
			pr_err("sroce_invtest: round %u: QP %d: to state %d: %d\n",
			       round, i, step, err);
			return err;
		}
	}
	for (i = INV_R0; i <= INV_R1; i++) {
		struct ib_recv_wr rwr = { .wr_id = inv_wr_id(round, i) };

		err = ib_post_recv(t->qp[i], &rwr, NULL);
		if (err) {
			pr_err("sroce_invtest: round %u: post_recv: %d\n", round, err);
			return err;
		}
	}
	/* As a ULP does before each registration: the MR is invalid now. */
	err = ib_map_mr_sg(t->mr, &t->sg, 1, NULL, PAGE_SIZE);
	if (err != 1) {
		pr_err("sroce_invtest: round %u: map_mr_sg: %d\n", round, err);
		return err < 0 ? err : -EIO;
	}
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	WRITE_ONCE(t->key, t->mr->rkey);
	reg.wr.wr_id = inv_wr_id(round, INV_REG);
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = t->mr;
	reg.key = t->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	err = ib_post_send(t->qp[INV_L], &reg.wr, NULL);
	if (err) {
		pr_err("sroce_invtest: round %u: post REG_MR: %d\n", round, err);
		return err;
	}
	err = inv_collect(t, round, BIT(INV_REG));
	if (err)
		return err;
	if (t->wc[INV_REG].status != IB_WC_SUCCESS) {
		pr_err("sroce_invtest: round %u: REG_MR: %s\n", round,
		       ib_wc_status_msg(t->wc[INV_REG].status));
		return -EIO;
	}
	return 0;
}

/* Did @role's invalidation win? Also checks that a win looks like one. */
static int inv_judge(struct inv_test *t, u32 round, int role, bool *won)
{
	const struct ib_wc *wc = &t->wc[role];
	const struct ib_wc *send = &t->wc[role - INV_R0 + INV_S0];
	bool sent;

	*won = wc->status == IB_WC_SUCCESS;
	if (role == INV_L)
		return 0;
	if (*won && (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
		     wc->ex.invalidate_rkey != t->key)) {
		pr_err("sroce_invtest: round %u: receive %d completed without invalidating %#x (flags %#x, key %#x)\n",
		       round, role, t->key, wc->wc_flags, wc->ex.invalidate_rkey);
		return -EIO;
	}
	/* The sender learns the responder's verdict. */
	sent = send->status == IB_WC_SUCCESS;
	if (*won != sent) {
		pr_err("sroce_invtest: round %u: receive %s, its SEND_WITH_INV %s\n",
		       round, ib_wc_status_msg(wc->status),
		       ib_wc_status_msg(send->status));
		return -EIO;
	}
	return 0;
}

static int inv_round(struct inv_test *t, u32 round)
{
	static const int roles[] = { INV_R0, INV_R1, INV_L };
	int i, err, winners = 0;

	memset(t->got, 0, sizeof(t->got));
	err = inv_arm(t, round);
	if (err)
		return err;
	atomic_set(&t->ready, 0);
	atomic_set_release(&t->go, round);
	wake_up_all(&t->wq);
	inv_align(t);
	err = inv_post(t, INV_L, round);
	if (err || atomic_read(&t->post_err)) {
		pr_err("sroce_invtest: round %u: a post failed (%d)\n", round, err);
		return err ?: -EIO;
	}
	err = inv_collect(t, round, GENMASK(INV_L, INV_S0));
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(roles); i++) {
		int status = t->wc[roles[i]].status;
		bool won;

		err = inv_judge(t, round, roles[i], &won);
		if (err)
			return err;
		if (won) {
			winners++;
			t->won[roles[i]]++;
		} else if (status < ARRAY_SIZE(t->lost_status)) {
			t->lost_status[status]++;
		}
	}
	if (winners != 1) {
		pr_err("sroce_invtest: round %u: %d invalidations of %#x won (%s, %s, %s)\n",
		       round, winners, t->key,
		       ib_wc_status_msg(t->wc[INV_R0].status),
		       ib_wc_status_msg(t->wc[INV_R1].status),
		       ib_wc_status_msg(t->wc[INV_L].status));
		return -EIO;
	}
	t->rounds++;
	return 0;
}

static int inv_setup(struct inv_test *t)
{
	struct ib_qp_init_attr ia = {
		.cap = {
			.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	int i, err;

	err = inv_find_gid(t);
	if (err)
		return err;
	t->pd = ib_alloc_pd(t->ibdev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	t->cq = ib_alloc_cq(t->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(t->cq))
		return PTR_ERR(t->cq);
	ia.send_cq = t->cq;
	ia.recv_cq = t->cq;
	for (i = 0; i < INV_NQP; i++) {
		t->qp[i] = ib_create_qp(t->pd, &ia);
		if (IS_ERR(t->qp[i]))
			return PTR_ERR(t->qp[i]);
	}
	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(t->mr))
		return PTR_ERR(t->mr);
	t->page = (void *)get_zeroed_page(GFP_KERNEL);
	if (!t->page)
		return -ENOMEM;
	sg_init_one(&t->sg, t->page, PAGE_SIZE);
	if (ib_dma_map_sg(t->ibdev, &t->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	t->sg_mapped = true;
	for (i = 0; i < 2; i++) {
		t->sender[i] = kthread_run(inv_sender, (void *)(long)(INV_S0 + i),
					   "sroce-invtest%d", i);
		if (IS_ERR(t->sender[i]))
			return PTR_ERR(t->sender[i]);
	}
	return 0;
}

/* Frees what inv_setup() took; pointers not yet set are NULL or ERR_PTR. */
static void inv_teardown(struct inv_test *t)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!IS_ERR_OR_NULL(t->sender[i]))
			kthread_stop(t->sender[i]);
	if (t->sg_mapped)
		ib_dma_unmap_sg(t->ibdev, &t->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(t->mr))
		ib_dereg_mr(t->mr);
	for (i = 0; i < INV_NQP; i++)
		if (!IS_ERR_OR_NULL(t->qp[i]))
			ib_destroy_qp(t->qp[i]);
	if (!IS_ERR_OR_NULL(t->cq))
		ib_free_cq(t->cq);
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
	free_page((unsigned long)t->page);
}

static int __init inv_init(void)
{
	struct inv_test *t = &inv;
	unsigned long end;
	u32 round = 0;
	int err;

	init_waitqueue_head(&t->wq);
	err = ib_register_client(&inv_client);
	if (err)
		return err;
	if (!t->ibdev) {
		pr_err("sroce_invtest: no RDMA device %s\n", dev);
		ib_unregister_client(&inv_client);
		return -ENODEV;
	}
	err = inv_setup(t);
	if (err) {
		pr_err("sroce_invtest: setup on %s: %d\n", dev, err);
		goto out;
	}
	end = jiffies + secs * HZ;
	while (time_before(jiffies, end) && !err)
		err = inv_round(t, ++round);
	pr_info("sroce_invtest: %s: %u rounds in %u s; won by SEND_WITH_INV %u + %u, LOCAL_INV %u; losers: %u remote invalid request, %u local protection, %u other\n",
		dev, t->rounds, secs, t->won[INV_R0], t->won[INV_R1],
		t->won[INV_L], t->lost_status[IB_WC_REM_INV_REQ_ERR],
		t->lost_status[IB_WC_LOC_PROT_ERR],
		2 * t->rounds - t->lost_status[IB_WC_REM_INV_REQ_ERR] -
		t->lost_status[IB_WC_LOC_PROT_ERR]);
out:
	inv_teardown(t);
	ib_device_put(t->ibdev);
	ib_unregister_client(&inv_client);
	return err ? -EIO : 0;
}

static void __exit inv_exit(void)
{
}

module_init(inv_init);
module_exit(inv_exit);
MODULE_DESCRIPTION("sroce: invalidations racing through a live device");
MODULE_LICENSE("GPL");
