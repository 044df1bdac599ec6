// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast: groups named by their MGID (an IPv4-mapped or IPv6
 * multicast address), each with the UD QPs attached to it. The first
 * attach joins the group on the netdev and the VLAN netdevs over it the
 * way a socket would (IGMP or MLD reports, the MAC filter), the last
 * detach leaves it. A datagram to
 * the multicast QPN goes to every QP attached to the group its IP
 * destination names.
 */
#include <linux/hash.h>
#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>

#include "sroce.h"

struct sroce_mcg {
	struct hlist_node	node;		/* in sdev->mcg_hash */
	union ib_gid		mgid;
	u32			nqp;
	struct sroce_qp		*qp[SROCE_MAX_MCAST_QP];
};

static u32 sroce_mcg_hash(const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), 0);
}

/* Caller holds mcg_lock or mcg_mutex. */
static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const union ib_gid *mgid)
{
	struct sroce_mcg *g;

	hash_for_each_possible(sdev->mcg_hash, g, node, sroce_mcg_hash(mgid))
		if (!memcmp(g->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return g;
	return NULL;
}

/*
 * Join or leave the group on one netdev: IGMP for IPv4, MLD for IPv6, and
 * the MAC filter, the way a socket would.
 */
static int sroce_mcg_dev_member(struct net_device *dev,
				const union ib_gid *mgid, bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;

	ASSERT_RTNL();
	if (!ipv6_addr_v4mapped(a6)) {
		if (join)
			return ipv6_dev_mc_inc(dev, a6);
		ipv6_dev_mc_dec(dev, a6);
		return 0;
	}
	/* Gone with its netdev's IPv4 state: nothing left to leave. */
	in_dev = __in_dev_get_rtnl(dev);
	if (!in_dev)
		return join ? -ENODEV : 0;
	if (join)
		ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
	else
		ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
	return 0;
}

/*
 * A VLAN netdev over the device's own in its namespace: its addresses are
 * GIDs of the device and its RoCE packets the device's (net.c maps them
 * the same way). One in another namespace delivers to that namespace's
 * sockets, never to this device.
 */
static bool sroce_mcg_vlan_of(const struct sroce_dev *sdev,
			      struct net_device *dev)
{
	return is_vlan_dev(dev) && vlan_dev_real_dev(dev) == sdev->ndev &&
	       net_eq(dev_net(dev), dev_net(sdev->ndev));
}

/*
 * Join or leave the group on the device's netdev and on every VLAN netdev
 * over it. An attach names only the MGID, no VLAN, so a group is the
 * device's, as on an RNIC that steers multicast by MGID: its datagrams
 * reach the attached QPs from whichever of them they come (a kernel
 * consumer sees which in wc.vlan_id). The joins are what lets them come:
 * the IP stack drops a multicast datagram that arrives on a netdev not in
 * its group, and a snooping switch forwards a VLAN's group only to ports
 * that reported it on that VLAN. A VLAN without IP state of the group's
 * family is left out (it delivers no datagrams of that family); any other
 * failure undoes the joins made. Under RTNL, which also orders this
 * against sroce_mcast_netdev_added(): every VLAN present at the leave was
 * joined, here or there.
 */
static int sroce_mcg_member(struct sroce_dev *sdev, const union ib_gid *mgid,
			    bool join)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;
	struct net_device *dev, *failed = NULL;
	int err;

	ASSERT_RTNL();
	if (ipv6_addr_v4mapped(a6) && !ipv4_is_multicast(a6->s6_addr32[3]))
		return -EINVAL;
	err = sroce_mcg_dev_member(sdev->ndev, mgid, join);
	if (err)
		return err;
	for_each_netdev(dev_net(sdev->ndev), dev) {
		if (!sroce_mcg_vlan_of(sdev, dev))
			continue;
		err = sroce_mcg_dev_member(dev, mgid, join);
		if (err && err != -ENODEV && err != -EINVAL) {
			failed = dev;
			break;
		}
	}
	if (!failed)
		return 0;
	for_each_netdev(dev_net(sdev->ndev), dev) {
		if (dev == failed)
			break;
		if (sroce_mcg_vlan_of(sdev, dev))
			sroce_mcg_dev_member(dev, mgid, false);
	}
	sroce_mcg_dev_member(sdev->ndev, mgid, false);
	return err;
}

/**
 * sroce_mcast_netdev_added() - a VLAN netdev over the device's appeared
 * @sdev: the device
 * @dev: the VLAN netdev, just registered in (or moved into) a namespace
 *
 * Joins it to every group the device has, as sroce_mcg_member() would have
 * had it been there at the attach. Called from the netdev notifier, under
 * RTNL and sroce_devs_lock.
 */
void sroce_mcast_netdev_added(struct sroce_dev *sdev, struct net_device *dev)
{
	struct sroce_mcg *g;
	int b, err;

	ASSERT_RTNL();
	if (!sroce_mcg_vlan_of(sdev, dev))
		return;
	mutex_lock(&sdev->mcg_mutex);
	hash_for_each(sdev->mcg_hash, b, g, node) {
		err = sroce_mcg_dev_member(dev, &g->mgid, true);
		if (err && err != -ENODEV && err != -EINVAL)
			ibdev_warn(&sdev->ib, "%s: cannot join group %pI6: %d\n",
				   netdev_name(dev), g->mgid.raw, err);
	}
	mutex_unlock(&sdev->mcg_mutex);
}

static bool sroce_mcg_has(const struct sroce_mcg *g, const struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; i < g->nqp; i++)
		if (g->qp[i] == qp)
			return true;
	return false;
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcg *g;
	int err = 0;

	/* Lock order: RTNL (the joins), then mcg_mutex. */
	rtnl_lock();
	mutex_lock(&sdev->mcg_mutex);
	g = sroce_mcg_find(sdev, mgid);
	if (!g) {
		if (sdev->mcg_count >= SROCE_MAX_MCAST_GRP) {
			err = -ENOMEM;
			goto out;
		}
		g = kzalloc(sizeof(*g), GFP_KERNEL);
		if (!g) {
			err = -ENOMEM;
			goto out;
		}
		g->mgid = *mgid;
		err = sroce_mcg_member(sdev, mgid, true);
		if (err) {
			kfree(g);
			goto out;
		}
		spin_lock_bh(&sdev->mcg_lock);
		hash_add(sdev->mcg_hash, &g->node, sroce_mcg_hash(mgid));
		spin_unlock_bh(&sdev->mcg_lock);
		sdev->mcg_count++;
	}
	if (sroce_mcg_has(g, qp))
		goto out;
	if (g->nqp >= SROCE_MAX_MCAST_QP) {
		err = -ENOMEM;
		goto out;
	}
	spin_lock_bh(&sdev->mcg_lock);
	g->qp[g->nqp++] = qp;
	spin_unlock_bh(&sdev->mcg_lock);
out:
	mutex_unlock(&sdev->mcg_mutex);
	rtnl_unlock();
	return err;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcg *g;
	int err = -EINVAL;
	u32 i;

	rtnl_lock();
	mutex_lock(&sdev->mcg_mutex);
	g = sroce_mcg_find(sdev, mgid);
	if (!g)
		goto out;
	for (i = 0; i < g->nqp && g->qp[i] != qp; i++)
		;
	if (i == g->nqp)
		goto out;
	err = 0;
	/* No receive path sees the QP in the group once this is done. */
	spin_lock_bh(&sdev->mcg_lock);
	g->qp[i] = g->qp[--g->nqp];
	if (!g->nqp)
		hash_del(&g->node);
	spin_unlock_bh(&sdev->mcg_lock);
	if (!g->nqp) {
		sdev->mcg_count--;
		sroce_mcg_member(sdev, mgid, false);
		kfree(g);
	}
out:
	mutex_unlock(&sdev->mcg_mutex);
	rtnl_unlock();
	return err;
}

/**
 * sroce_mcast_rcv() - a datagram to the multicast QPN
 * @sdev: the receiving device
 * @pkt: the packet, its ICRC checked already (several QPs may take it)
 *
 * Return: the number of QPs it went to.
 */
u32 sroce_mcast_rcv(struct sroce_dev *sdev, struct sroce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	struct sroce_mcg *g;
	union ib_gid mgid;
	u32 i, n = 0;

	if (skb->protocol == htons(ETH_P_IPV6))
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid.raw));
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	/* QPs stay attached, and so alive, while this lock is held. */
	spin_lock_bh(&sdev->mcg_lock);
	g = sroce_mcg_find(sdev, &mgid);
	for (i = 0; g && i < g->nqp; i++, n++)
		sroce_resp_ud(g->qp[i], pkt);
	spin_unlock_bh(&sdev->mcg_lock);
	return n;
}

/* At device teardown every QP is gone, and so every group. */
void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct hlist_node *tmp;
	struct sroce_mcg *g;
	int b;

	hash_for_each_safe(sdev->mcg_hash, b, tmp, g, node) {
		hash_del(&g->node);
		kfree(g);
	}
}
