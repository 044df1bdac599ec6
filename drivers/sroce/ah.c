// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles. An AH holds a RoCEv2 address vector (the uapi struct
 * rxe_av, the form UD work requests use) and a number, ah_num >= 1, that the
 * rxe provider writes into every UD send WQE; the data path resolves it
 * through a per-device xarray and checks it belongs to the sender's PD.
 * ib_core frees an AH right after destroy_ah, so readers copy the AV out
 * under the xarray's lock rather than under RCU alone. The CM creates and
 * destroys AHs with interrupts off (RDMA_CREATE_AH_SLEEPABLE clear), so the
 * lock is always taken with interrupts saved and disabled.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>

#include "sroce.h"

/**
 * sroce_av_from_attr() - build an address vector
 * @av: result
 * @attr: ib_core's attribute, with the source GID's attributes resolved
 *
 * Return: 0, or -EINVAL for anything but a RoCEv2 (IPv4 or IPv6) GID.
 */
int sroce_av_from_attr(struct rxe_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	int type;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !grh->sgid_attr)
		return -EINVAL;
	type = rdma_gid_attr_network_type(grh->sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->port_num = rdma_ah_get_port_num(attr);
	av->network_type = type == RDMA_NETWORK_IPV4 ? RXE_NETWORK_TYPE_IPV4 :
						       RXE_NETWORK_TYPE_IPV6;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	memcpy(av->grh.dgid.raw, grh->dgid.raw, sizeof(av->grh.dgid.raw));
	av->grh.flow_label = grh->flow_label;
	av->grh.sgid_index = grh->sgid_index;
	av->grh.hop_limit = grh->hop_limit;
	av->grh.traffic_class = grh->traffic_class;
	rdma_gid2ip((struct sockaddr *)&av->sgid_addr, &grh->sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&av->dgid_addr, &grh->dgid);
	return 0;
}

static void sroce_ah_erase(struct sroce_dev *sdev, u32 num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

static int sroce_create_ah(struct ib_ah *ibah,
			   struct rdma_ah_init_attr *init_attr,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	gfp_t gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct sroce_ah *ah = to_sah(ibah);
	struct rxe_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	err = sroce_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		return err;
	err = sroce_res_get(sdev, SROCE_RES_AH);
	if (err)
		return err;
	/* With GFP_KERNEL the xarray may drop the lock (and enable IRQs) to
	 * allocate: only in the sleepable case, where they were on anyway.
	 */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc(&sdev->ah_xa, &ah->num, ah,
			 XA_LIMIT(1, SROCE_MAX_AH), gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err)
		goto err_res;

	/* An old provider passes no response buffer and uses the AV itself. */
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_xa;
	}
	return 0;

err_xa:
	sroce_ah_erase(sdev, ah->num);
err_res:
	sroce_res_put(sdev, SROCE_RES_AH);
	return err;
}

/**
 * sroce_ah_get_av() - copy the address vector of AH number @num
 * @sdev: device
 * @num: ah_num from a UD send WQE
 * @pd: the sender's PD; the AH must belong to it
 * @av: result
 *
 * Any context. Copied under the xarray lock: the AH may be destroyed (and
 * freed by ib_core) as soon as the lock is dropped.
 *
 * Return: 0, or -EINVAL for an unknown or foreign AH.
 */
int sroce_ah_get_av(struct sroce_dev *sdev, u32 num, struct ib_pd *pd,
		    struct rxe_av *av)
{
	struct sroce_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return err;
}

static int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sroce_ah *ah = to_sah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_port_num(attr, ah->av.port_num);
	rdma_ah_set_grh(attr, (union ib_gid *)ah->av.grh.dgid.raw,
			ah->av.grh.flow_label, ah->av.grh.sgid_index,
			ah->av.grh.hop_limit, ah->av.grh.traffic_class);
	memcpy(attr->roce.dmac, ah->av.dmac, ETH_ALEN);
	return 0;
}

static int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	sroce_ah_erase(sdev, ah->num);
	sroce_res_put(sdev, SROCE_RES_AH);
	return 0;
}

const struct ib_device_ops sroce_ah_ops = {
	.create_ah = sroce_create_ah,
	.create_user_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,
	.query_ah = sroce_query_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
};
