// SPDX-License-Identifier: GPL-2.0
/*
 * What every object type shares: its count against the device's limit,
 * and its driver attributes in `rdma resource show -dd`. A leaf that the
 * object files use without depending on the ops table (verbs.c).
 */
#include <rdma/rdma_netlink.h>

#include "sroce.h"

static const u32 sroce_res_max[SROCE_RES_NUM] = {
	[SROCE_RES_PD]		= SROCE_MAX_PD,
	[SROCE_RES_CQ]		= SROCE_MAX_CQ,
	[SROCE_RES_MR]		= SROCE_MAX_MR,
	[SROCE_RES_AH]		= SROCE_MAX_AH,
	[SROCE_RES_QP]		= SROCE_MAX_QP,
	[SROCE_RES_SRQ]		= SROCE_MAX_SRQ,
	[SROCE_RES_MW]		= SROCE_MAX_MW,
};

/**
 * sroce_res_get() - count one more object against the device limit
 * @sdev: device
 * @r: object type
 *
 * Return: 0, or -ENOMEM when the device already has the maximum.
 */
int sroce_res_get(struct sroce_dev *sdev, enum sroce_res r)
{
	if (atomic_inc_return(&sdev->res[r]) > sroce_res_max[r]) {
		atomic_dec(&sdev->res[r]);
		return -ENOMEM;
	}
	return 0;
}

void sroce_res_put(struct sroce_dev *sdev, enum sroce_res r)
{
	atomic_dec(&sdev->res[r]);
}

/**
 * sroce_fill_res() - driver attributes for ``rdma resource show ... -dd``
 * @msg: the netlink message ib_core builds
 * @kind: a string attribute "kind" to put first, or NULL
 * @f: the fields, each a u32 of @snap shown in hex or decimal
 * @n: how many
 * @snap: the object's state, copied under its locks by the caller
 *
 * Return: 0, or -EMSGSIZE when the message is full.
 */
int sroce_fill_res(struct sk_buff *msg, const char *kind,
		   const struct sroce_res_field *f, unsigned int n,
		   const void *snap)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	if (kind && rdma_nl_put_driver_string(msg, "kind", kind))
		goto full;
	for (i = 0; i < n; i++) {
		u32 v = *(const u32 *)((const u8 *)snap + f[i].off);

		if (f[i].hex ? rdma_nl_put_driver_u32_hex(msg, f[i].name, v) :
		    rdma_nl_put_driver_u32(msg, f[i].name, v))
			goto full;
	}
	nla_nest_end(msg, nest);
	return 0;
full:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}
