// SPDX-License-Identifier: GPL-2.0
/*
 * The ib_device_ops table, query verbs, user contexts, PDs, counters and
 * device registration.
 */
#include <linux/percpu.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>

#include "sroce.h"

static int sroce_query_device(struct ib_device *ib, struct ib_device_attr *a,
			      struct ib_udata *udata)
{
	/*
	 * The rxe ABI carries no driver data here. ib_core passes no udata
	 * at all when it registers the device on newer kernels.
	 */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(a, 0, sizeof(*a));
	a->fw_ver = SROCE_FW_VER;
	a->sys_image_guid = ib->node_guid;
	a->max_mr_size = SROCE_MAX_MR_SIZE;
	a->page_size_cap = SROCE_PAGE_SIZE_CAP;
	a->vendor_id = SROCE_VENDOR_ID;
	a->hw_ver = 0;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	/*
	 * ATOMIC WRITE: IB_UVERBS_DEVICE_ATOMIC_WRITE, unnamed in 6.1. FLUSH
	 * to global visibility, not to persistence: no memory here is
	 * persistent.
	 */
	a->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B | BIT_ULL(40) |
			      SROCE_DEVICE_FLUSH_GLOBAL;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	sroce_odp_caps(a);
	a->max_send_sge = SROCE_MAX_SGE;
	a->max_recv_sge = SROCE_MAX_SGE;
	a->max_sge_rd = SROCE_MAX_SGE_RD;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	a->max_mw = SROCE_MAX_MW;
	a->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	a->max_pd = SROCE_MAX_PD;
	a->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SROCE_MAX_QP_RD_ATOM;
	a->max_res_rd_atom = SROCE_MAX_QP_RD_ATOM * SROCE_MAX_QP;
	/* Done with the CPU's atomic instructions: atomic against all. */
	a->atomic_cap = IB_ATOMIC_GLOB;
	a->max_ah = SROCE_MAX_AH;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP * SROCE_MAX_MCAST_QP;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SGE;
	a->max_pkeys = SROCE_MAX_PKEYS;
	a->local_ca_ack_delay = SROCE_LOCAL_ACK_DELAY;
	return 0;
}

static int sroce_query_port(struct ib_device *ib, u32 port,
			    struct ib_port_attr *a)
{
	struct sroce_dev *sdev = to_sdev(ib);
	int err;

	/* ib_core has zeroed *a. */
	spin_lock_bh(&sdev->port_lock);
	a->state = sdev->port_state;
	a->active_mtu = sdev->active_mtu;
	spin_unlock_bh(&sdev->port_lock);
	a->phys_state = a->state == IB_PORT_ACTIVE ?
			IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	a->max_mtu = IB_MTU_4096;
	a->gid_tbl_len = SROCE_GID_TBL_LEN;
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = 1U << 31;
	a->pkey_tbl_len = SROCE_MAX_PKEYS;
	a->max_vl_num = 1;
	a->ip_gids = true;
	/*
	 * A netdev on its way out (a veth deleted with its namespace) has no
	 * speed to tell; the port still answers, or ib_core's cache update
	 * on the last port event fails with a warning.
	 */
	err = ib_get_eth_speed(ib, port, &a->active_speed, &a->active_width);
	if (err) {
		a->active_speed = IB_SPEED_SDR;
		a->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_query_pkey(struct ib_device *ib, u32 port, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int sroce_modify_device(struct ib_device *ib, int mask,
			       struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ib->node_desc, attr->node_desc, IB_DEVICE_NODE_DESC_MAX);
	/* sys_image_guid is derived from the node GUID; nothing to keep. */
	return 0;
}

static int sroce_port_immutable(struct ib_device *ib, u32 port,
				struct ib_port_immutable *im)
{
	struct ib_port_attr a = {};
	int err;

	err = ib_query_port(ib, port, &a);
	if (err)
		return err;
	im->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	im->pkey_tbl_len = a.pkey_tbl_len;
	im->gid_tbl_len = a.gid_tbl_len;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_link_layer(struct ib_device *ib, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * User contexts are not counted against a device limit: a context holds
 * no device resource until objects are made in it (each counted, and
 * charged to the user's memory cgroup), and a device-wide count let one
 * user lock every other out. Each needs an open file, so RLIMIT_NOFILE
 * bounds them per process, and the rdma cgroup's hca_handle per cgroup
 * (Documentation/design.rst, Limits).
 */
static int sroce_alloc_ucontext(struct ib_ucontext *uc, struct ib_udata *udata)
{
	return sroce_odp_ctx_init(to_suc(uc), to_sdev(uc->device));
}

static void sroce_dealloc_ucontext(struct ib_ucontext *uc)
{
	sroce_odp_budget_put(to_suc(uc)->odp);
}

/*
 * The device is going away under an open context. ib_core destroys the
 * context's objects next; the rings' pages are held by the mappings
 * themselves and no mapping points into this module, so there is nothing to
 * zap. Having this op lets unregistration (and rmmod) proceed without
 * waiting for every process to close the device.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *uc)
{
}

static int sroce_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(pd->device);

	/* Successive PDs' first QPs on successive CPUs (sroce_qp_cpu()). */
	atomic_set(&to_spd(pd)->qp_seq, atomic_inc_return(&sdev->pd_seq));
	return sroce_res_get(sdev, SROCE_RES_PD);
}

static int sroce_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	sroce_res_put(to_sdev(pd->device), SROCE_RES_PD);
	return 0;
}

static const struct rdma_stat_desc sroce_counter_desc[SROCE_CNT_NUM] = {
	[SROCE_CNT_RX_PKTS].name		= "rx_packets",
	[SROCE_CNT_RX_BYTES].name		= "rx_bytes",
	[SROCE_CNT_TX_PKTS].name		= "tx_packets",
	[SROCE_CNT_TX_BYTES].name		= "tx_bytes",
	[SROCE_CNT_RX_DROP_MALFORMED].name	= "rx_drop_malformed",
	[SROCE_CNT_RX_ICRC_ERR].name		= "rx_icrc_errors",
	[SROCE_CNT_RX_DROP_NO_QP].name		= "rx_drop_no_qp",
	[SROCE_CNT_CQ_OVERFLOW].name		= "cq_overflow",
	[SROCE_CNT_LINK_DOWNED].name		= "link_downed",
	[SROCE_CNT_RETRANSMITS].name		= "retransmits",
	[SROCE_CNT_TIMEOUTS].name		= "ack_timeouts",
	[SROCE_CNT_TX_NAKS].name		= "tx_naks",
	[SROCE_CNT_RX_NAKS].name		= "rx_naks",
	[SROCE_CNT_TX_RNR_NAKS].name		= "tx_rnr_naks",
	[SROCE_CNT_RX_RNR_NAKS].name		= "rx_rnr_naks",
	[SROCE_CNT_RX_DUPLICATES].name		= "rx_duplicates",
	[SROCE_CNT_RX_OUT_OF_SEQ].name		= "rx_out_of_sequence",
	[SROCE_CNT_TX_DROPS].name		= "tx_drops",
	[SROCE_CNT_RX_FLUSH_ICRC_RXE].name	= "rx_flush_icrc_rxe",
	[SROCE_CNT_RX_DROP_NOT_PEER].name	= "rx_drop_not_peer",
	[SROCE_CNT_RX_DROP_PKEY].name		= "rx_drop_pkey",
	[SROCE_CNT_TX_NO_ROUTE].name		= "tx_no_route",
	[SROCE_CNT_TX_BATCHES].name		= "tx_batches",
	[SROCE_CNT_TX_REFUSED].name		= "tx_refused",
	[SROCE_CNT_WINDOW_CUTS].name		= "window_cuts",
	[SROCE_CNT_REWINDS].name		= "rewinds",
	[SROCE_CNT_TX_WORK_RUNS].name		= "tx_work_runs",
};

static struct rdma_hw_stats *sroce_alloc_port_stats(struct ib_device *ib,
						    u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_desc, SROCE_CNT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int sroce_get_hw_stats(struct ib_device *ib, struct rdma_hw_stats *st,
			      u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ib);
	int c;

	for (c = 0; c < SROCE_CNT_NUM; c++)
		st->value[c] = sroce_counter_read(sdev, c);
	return SROCE_CNT_NUM;
}

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ib);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_attrs[] = {
	&dev_attr_parent.attr,
	NULL
};

static const struct attribute_group sroce_attr_group = {
	.attrs = sroce_attrs,
};

/**
 * sroce_counter_read() - a device counter, summed over the CPUs
 * @sdev: the device
 * @c: the counter
 *
 * Return: its value.
 */
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c)
{
	return sroce_cnt_sum(sdev->cnt, c);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_counter_read);

/*
 * Per-QP counters (`rdma statistic qp`): ib_core allocates a counter,
 * binds QPs to it (by hand, or automatically by QP type or process) and
 * reads it; sroce keeps each counter's values per CPU, and a bound QP
 * counts its traffic there instead of in the device's. These are counted
 * before a packet reaches a QP, and so never in a QP's counter.
 */
#define SROCE_CNT_DEV_ONLY (BIT(SROCE_CNT_RX_ICRC_ERR) |		\
			    BIT(SROCE_CNT_RX_DROP_NO_QP) |		\
			    BIT(SROCE_CNT_CQ_OVERFLOW) |		\
			    BIT(SROCE_CNT_LINK_DOWNED) |		\
			    BIT(SROCE_CNT_RX_FLUSH_ICRC_RXE) |	\
			    BIT(SROCE_CNT_RX_DROP_PKEY))

static struct sroce_qcnt *sroce_qcnt_find(struct sroce_dev *sdev,
					  const struct rdma_counter *counter)
{
	struct sroce_qcnt *q;

	lockdep_assert_held(&sdev->qcnt_lock);
	list_for_each_entry(q, &sdev->qcnts, list)
		if (q->counter == counter)
			return q;
	return NULL;
}

static struct rdma_hw_stats *
sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct rdma_hw_stats *st;
	struct sroce_qcnt *q;
	int c;

	/* The port's layout: ib_core adds them up index by index. */
	st = rdma_alloc_hw_stats_struct(sroce_counter_desc, SROCE_CNT_NUM,
					RDMA_HW_STATS_DEFAULT_LIFESPAN);
	q = kzalloc_obj(*q, GFP_KERNEL);
	if (!st || !q)
		goto err;
	q->cnt = alloc_percpu(struct sroce_counters);
	if (!q->cnt)
		goto err;
	for (c = 0; c < SROCE_CNT_NUM; c++)
		if (SROCE_CNT_DEV_ONLY & BIT(c))
			set_bit(c, st->is_disabled);
	q->counter = counter;
	mutex_lock(&sdev->qcnt_lock);
	list_add(&q->list, &sdev->qcnts);
	mutex_unlock(&sdev->qcnt_lock);
	return st;
err:
	kfree(q);
	rdma_free_hw_stats_struct(st);
	return NULL;
}

static int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qcnt *q;
	int c;

	mutex_lock(&sdev->qcnt_lock);
	q = sroce_qcnt_find(sdev, counter);
	if (q)
		for (c = 0; c < SROCE_CNT_NUM; c++)
			counter->stats->value[c] = sroce_cnt_sum(q->cnt, c);
	mutex_unlock(&sdev->qcnt_lock);
	return q ? 0 : -EINVAL;
}

/**
 * sroce_counter_bind_qp() - count a QP's traffic in a counter from now on
 * @counter: the counter, made by sroce_counter_alloc_stats()
 * @ibqp: the QP, bound to no other counter (ib_core unbinds first)
 *
 * Return: 0, or -EINVAL for a counter sroce does not know.
 */
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qcnt *q;

	mutex_lock(&sdev->qcnt_lock);
	q = sroce_qcnt_find(sdev, counter);
	if (q) {
		rcu_assign_pointer(to_sqp(ibqp)->qcnt, q);
		ibqp->counter = counter;	/* the driver sets it */
	}
	mutex_unlock(&sdev->qcnt_lock);
	return q ? 0 : -EINVAL;
}

/**
 * sroce_counter_unbind_qp() - count a QP's traffic in the device's again
 * @ibqp: the QP
 *
 * Its counter stays until sroce_counter_dealloc(), so a packet counted in
 * it just now is not lost.
 *
 * Return: 0.
 */
int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	RCU_INIT_POINTER(to_sqp(ibqp)->qcnt, NULL);
	ibqp->counter = NULL;
	return 0;
}

static struct sroce_qcnt *sroce_qcnt_unlink(struct sroce_dev *sdev,
					    const struct rdma_counter *counter)
{
	struct sroce_qcnt *q;

	mutex_lock(&sdev->qcnt_lock);
	q = sroce_qcnt_find(sdev, counter);
	if (q)
		list_del(&q->list);
	mutex_unlock(&sdev->qcnt_lock);
	return q;
}

/*
 * ib_core took the counter's last values into the port's history just
 * before; what its QPs counted since (they were unbound, but a packet
 * already on its way may still have counted there) goes to the device's
 * counters, so the port's totals lose nothing.
 */
static int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qcnt *q = sroce_qcnt_unlink(sdev, counter);
	int c;

	if (!q)
		return 0;
	synchronize_rcu();	/* no packet counts in it any more */
	for (c = 0; c < SROCE_CNT_NUM; c++) {
		u64 v = sroce_cnt_sum(q->cnt, c);

		if (v > counter->stats->value[c])
			this_cpu_add(sdev->cnt->c[c],
				     v - counter->stats->value[c]);
	}
	free_percpu(q->cnt);
	kfree(q);
	return 0;
}

static int sroce_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	int ret = sroce_req_notify_cq(ibcq, flags);

	sroce_qp_cq_armed(to_scq(ibcq));
	return ret;
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SROCE_UVERBS_ABI,

	.advise_mr = sroce_op_advise_mr,
	.alloc_hw_port_stats = sroce_alloc_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.attach_mcast = sroce_attach_mcast,
	.create_cq = sroce_op_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dereg_mr = sroce_dereg_mr,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.device_group = &sroce_attr_group,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_bind_qp = sroce_counter_bind_qp_op,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_unbind_qp = sroce_counter_unbind_qp_op,
	.counter_update_stats = sroce_counter_update_stats,
	SROCE_COUNTER_OBJ_OPS
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.get_dma_mr = sroce_get_dma_mr,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_link_layer,
	.get_port_immutable = sroce_port_immutable,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.map_mr_sg = sroce_map_mr_sg,
	.modify_device = sroce_modify_device,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_user_mr = sroce_op_reg_user_mr,
	.req_notify_cq = sroce_req_notify,
	.SROCE_OP_RESIZE_CQ = sroce_op_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_ibmw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};

/**
 * sroce_register() - register a prepared device with ib_core
 * @sdev: device with ndev set
 * @name: ib_device name from `rdma link add`
 *
 * Return: 0 or a negative errno; on error the caller still owns @sdev and
 * frees it with ib_dealloc_device().
 */
int sroce_register(struct sroce_dev *sdev, const char *name)
{
	struct ib_device *ib = &sdev->ib;
	int err;

	strscpy(ib->node_desc, "sroce", sizeof(ib->node_desc));
	ib->node_type = RDMA_NODE_IB_CA;
	ib->phys_port_cnt = 1;
	ib->num_comp_vectors = num_possible_cpus();
	ib->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ib->node_guid,
			    sdev->ndev->dev_addr);
	/* The rxe provider rings the SQ doorbell and arms CQs with these. */
	ib->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
			       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ib, &sroce_dev_ops);
	ib_set_device_ops(ib, &sroce_ah_ops);

	err = ib_device_set_netdev(ib, sdev->ndev, 1);
	if (err)
		return err;
	return ib_register_device(ib, name, NULL);
}
