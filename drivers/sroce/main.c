// SPDX-License-Identifier: GPL-2.0
/*
 * Module init/exit, the `sroce` rdma link type, the netdev notifier and the
 * list of devices.
 *
 * Lifetime: a device is on sroce_devs from `rdma link add` until ib_core
 * calls sroce_dealloc_driver(), the single place that frees what newlink
 * took. Lock order: rtnl -> sroce_devs_lock -> mcg_mutex; ib_core's
 * unregistration lock -> sroce_devs_lock. Nothing waits for an
 * unregistration while holding sroce_devs_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_addr.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"
#include <sroce/wire.h>

static LIST_HEAD(sroce_devs);
static DEFINE_MUTEX(sroce_devs_lock);

/**
 * sroce_mtu_from_netdev() - the IB path MTU a netdev MTU can carry
 * @ndev_mtu: the netdev's MTU (IP packet size)
 *
 * ib_core's iboe_get_mtu() is what rdma_cm uses for RoCE path MTUs, so the
 * port reports the same figure connections will be set up with.
 *
 * Return: the largest of IB_MTU_256..IB_MTU_4096 that fits with ib_core's
 * worst-case headers; IB_MTU_256 when even that does not fit (the IP layer
 * then fragments, as with rdma_rxe).
 */
enum ib_mtu sroce_mtu_from_netdev(unsigned int ndev_mtu)
{
	enum ib_mtu m = iboe_get_mtu(min_t(unsigned int, ndev_mtu, INT_MAX));

	return m ? m : IB_MTU_256;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mtu_from_netdev);

static void sroce_port_event(struct sroce_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ib,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/**
 * sroce_port_update() - follow the netdev's state and MTU
 * @sdev: device
 *
 * Raises PORT_ACTIVE / PORT_ERR when the state changes. Called under rtnl
 * (notifier) or before registration.
 */
void sroce_port_update(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	enum ib_port_state st, old;

	st = netif_running(ndev) && netif_carrier_ok(ndev) ?
	     IB_PORT_ACTIVE : IB_PORT_DOWN;
	spin_lock_bh(&sdev->port_lock);
	old = sdev->port_state;
	sdev->port_state = st;
	sdev->active_mtu = sroce_mtu_from_netdev(READ_ONCE(ndev->mtu));
	spin_unlock_bh(&sdev->port_lock);

	if (old == st || !sdev->registered)
		return;
	if (st == IB_PORT_ACTIVE) {
		sroce_port_event(sdev, IB_EVENT_PORT_ACTIVE);
	} else {
		sroce_count(sdev, SROCE_CNT_LINK_DOWNED, 1);
		sroce_port_event(sdev, IB_EVENT_PORT_ERR);
	}
	ibdev_info(&sdev->ib, "port %s\n",
		   st == IB_PORT_ACTIVE ? "active" : "down");
}

static struct sroce_dev *sroce_find_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devs_lock);
	list_for_each_entry(sdev, &sroce_devs, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* The one place that releases what sroce_newlink() took. */
static void sroce_dealloc_driver(struct ib_device *ib)
{
	struct sroce_dev *sdev = to_sdev(ib);

	mutex_lock(&sroce_devs_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_devs_lock);
	WARN_ON(!xa_empty(&sdev->mr_xa) || !xa_empty(&sdev->ah_xa) ||
		!xa_empty(&sdev->qp_xa) || !xa_empty(&sdev->mw_xa) ||
		!list_empty(&sdev->qcnts));
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->mw_xa);
	xa_destroy(&sdev->ah_xa);
	xa_destroy(&sdev->qp_xa);
	sroce_mcast_cleanup(sdev);
	free_percpu(sdev->cnt);
	sroce_net_put(sdev->sn);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
}

/* The QPs' workers (transmit, ERR polling) of every device. */
static struct workqueue_struct *sroce_wq;

/*
 * One lock class per xarray: xa_init_flags() would give them all the
 * same one, and lockdep would then mix up the MR table's lock (process
 * context) with the AH table's (taken under a QP's lock, any context).
 */
static struct lock_class_key sroce_mr_xa_key, sroce_ah_xa_key,
			     sroce_qp_xa_key, sroce_mw_xa_key;

/*
 * The device's lifetime, here with what it frees; the verbs are verbs.c's
 * (sroce_register()). THIS_MODULE as owner is also how
 * sroce_dev_get_by_netdev() tells a sroce device from an rdma_rxe one.
 */
static const struct ib_device_ops sroce_life_ops = {
	.owner = THIS_MODULE,
	.dealloc_driver = sroce_dealloc_driver,
};

/*
 * The device takes over the use of @sn (sroce_dealloc_driver() releases
 * it), except when this fails.
 */
static struct sroce_dev *sroce_alloc(struct net_device *ndev,
				     struct sroce_net *sn)
{
	struct sroce_dev *sdev;

	/*
	 * Born in its netdev's namespace where ib_core can say so: in
	 * exclusive mode `rdma link add` in a container makes a device that
	 * container sees (6.1, 6.12: in init_net, moved with rdma dev set).
	 */
	sdev = sroce_ib_alloc_device(sroce_dev, ib, dev_net(ndev));
	if (!sdev)
		return NULL;
	sdev->cnt = alloc_percpu(struct sroce_counters);
	if (!sdev->cnt) {
		ib_dealloc_device(&sdev->ib);
		return NULL;
	}
	sdev->net = dev_net(ndev);
	sdev->sn = sn;
	sdev->wq = sroce_wq;
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->mw_xa, XA_FLAGS_ALLOC);
	/* The UD send path reads AHs from softirq too. */
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	lockdep_set_class(&sdev->mr_xa.xa_lock, &sroce_mr_xa_key);
	lockdep_set_class(&sdev->ah_xa.xa_lock, &sroce_ah_xa_key);
	lockdep_set_class(&sdev->qp_xa.xa_lock, &sroce_qp_xa_key);
	lockdep_set_class(&sdev->mw_xa.xa_lock, &sroce_mw_xa_key);
	/*
	 * QP numbers start at a random point: a peer may go on sending to
	 * the QPs of the device this one replaces (an NVMe-oF target keeps
	 * an old controller's queues until its keep-alive runs out), and
	 * an RC packet names only its destination QP. Starting at 16 each
	 * time handed the same numbers to the new QPs.
	 */
	sdev->qp_next = 16 + get_random_u32() % (SROCE_MCAST_QPN - 16);
	spin_lock_init(&sdev->mw_lock);
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	spin_lock_init(&sdev->port_lock);
	mutex_init(&sdev->qcnt_lock);
	INIT_LIST_HEAD(&sdev->qcnts);
	mutex_init(&sdev->mcg_mutex);
	spin_lock_init(&sdev->mcg_lock);
	hash_init(sdev->mcg_hash);
	sdev->port_state = IB_PORT_DOWN;
	sroce_port_update(sdev);
	/* Only now: from here ib_dealloc_device() undoes all of the above. */
	ib_set_device_ops(&sdev->ib, &sroce_life_ops);
	return sdev;
}

static int sroce_newlink(const char *name, struct net_device *ndev)
{
	struct sroce_dev *sdev, *other;
	struct sroce_net *sn;
	struct net *net;
	bool dying;
	int err;

	if (ndev->type != ARPHRD_ETHER || is_vlan_dev(ndev)) {
		pr_err("%s is not a plain Ethernet device (add sroce to the real device; its VLANs' addresses become GIDs)\n",
		       netdev_name(ndev));
		return -EINVAL;
	}

	/*
	 * The sockets of the netdev's namespace, set up outside rtnl; the
	 * namespace held until the device holds its sockets instead.
	 */
	rtnl_lock();
	net = maybe_get_net(dev_net(ndev));
	rtnl_unlock();
	if (!net)
		return -ENODEV;	/* moved into a namespace on its way out */
	sn = sroce_net_get(net);
	if (IS_ERR(sn)) {
		put_net(net);
		return PTR_ERR(sn);
	}

	/* Under rtnl the netdev cannot start unregistering before it is listed. */
	rtnl_lock();
	mutex_lock(&sroce_devs_lock);
	if (ndev->reg_state != NETREG_REGISTERED ||
	    !net_eq(dev_net(ndev), net)) {
		err = -ENODEV;
		goto out_unlock;
	}
	other = sroce_find_locked(ndev);
	if (other) {
		pr_err("%s already carries %s; one device per netdev\n",
		       netdev_name(ndev), dev_name(&other->ib.dev));
		err = -EEXIST;
		goto out_unlock;
	}
	sdev = sroce_alloc(ndev, sn);
	if (!sdev) {
		err = -ENOMEM;
		goto out_unlock;
	}
	list_add_tail(&sdev->list, &sroce_devs);
	mutex_unlock(&sroce_devs_lock);
	rtnl_unlock();
	/*
	 * From here the namespace's exit waits for the device
	 * (sroce_pernet_exit()), so sdev->net stays valid without a
	 * reference, which would keep the namespace from ever going.
	 */
	put_net(net);

	err = sroce_register(sdev, name);
	if (err) {
		pr_err("registering %s on %s failed: %d\n", name,
		       netdev_name(ndev), err);
		ib_dealloc_device(&sdev->ib);	/* calls sroce_dealloc_driver() */
		return err;
	}

	rtnl_lock();
	mutex_lock(&sroce_devs_lock);
	sdev->registered = true;
	dying = sdev->dying;
	if (!dying)
		sroce_port_update(sdev);
	mutex_unlock(&sroce_devs_lock);
	rtnl_unlock();
	if (dying)
		ib_unregister_device_queued(&sdev->ib);
	else
		ibdev_info(&sdev->ib, "added on %s\n", netdev_name(ndev));
	return 0;

out_unlock:
	mutex_unlock(&sroce_devs_lock);
	rtnl_unlock();
	sroce_net_put(sn);
	put_net(net);
	return err;
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	mutex_lock(&sroce_devs_lock);
	sdev = sroce_find_locked(ndev);
	if (!sdev) {
		/* A VLAN over a device's netdev joins its groups. */
		if (event == NETDEV_REGISTER && is_vlan_dev(ndev)) {
			sdev = sroce_find_locked(vlan_dev_real_dev(ndev));
			if (sdev && !sdev->dying)
				sroce_mcast_netdev_added(sdev, ndev);
		}
		goto out;
	}

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * Repeated every second while the netdev is still referenced
		 * (netdev_wait_allrefs), and ib_core holds it until the
		 * queued unregistration is done: act on the first one only.
		 */
		if (sdev->dying)
			break;
		sdev->dying = true;
		if (sdev->registered)
			ib_unregister_device_queued(&sdev->ib);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_port_update(sdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&sroce_devs_lock);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

/*
 * Unregister every device whose netdev was in @net at newlink (any, for
 * NULL), one at a time: never by driver id, which rdma_rxe shares. A device
 * whose unregistration is already queued is handled here too:
 * ib_unregister_device() waits for it. One already in
 * sroce_dealloc_driver() is off the list but may still hold its
 * namespace's sockets; sroce_net_close() waits for those.
 */
static void sroce_remove(struct net *net)
{
	struct sroce_dev *sdev, *found;

	for (;;) {
		found = NULL;
		mutex_lock(&sroce_devs_lock);
		list_for_each_entry(sdev, &sroce_devs, list) {
			if (!net || net_eq(sdev->net, net)) {
				found = sdev;
				get_device(&found->ib.dev);
				break;
			}
		}
		mutex_unlock(&sroce_devs_lock);
		if (!found)
			break;
		ib_unregister_device(&found->ib);
		put_device(&found->ib.dev);
	}
}

/*
 * A namespace goes: its devices, then its sockets. A netdev deleted with
 * it took its device along before this runs (the netdev's unregistration
 * waited for sroce's reference), but a physical one handed back to the
 * initial namespace only queued its device's unregistration: wait for it
 * here, as the device still uses this namespace's sockets.
 */
static void __net_exit sroce_pernet_exit(struct net *net)
{
	sroce_remove(net);
	sroce_net_close(net);
}

static struct pernet_operations sroce_net_ops = {
	.exit = sroce_pernet_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

/* init_net's sockets, bound at load: rdma_rxe holding the port fails it. */
static struct sroce_net *sroce_init_net_pin;

static int __init sroce_net_init(void)
{
	struct sroce_net *sn;
	int err;

	sroce_net_set_rx(sroce_rcv);
	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		return err;
	sn = sroce_net_get(&init_net);
	if (IS_ERR(sn)) {
		unregister_pernet_subsys(&sroce_net_ops);
		return PTR_ERR(sn);
	}
	sroce_init_net_pin = sn;
	return 0;
}

/* After every device is gone. */
static void sroce_net_exit(void)
{
	sroce_net_put(sroce_init_net_pin);
	unregister_pernet_subsys(&sroce_net_ops);
	/* encap_rcv runs under RCU: let every caller leave before unload. */
	synchronize_net();
}

static int __init sroce_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_MEM_RECLAIM |
				   SROCE_WQ_PERCPU, 0);
	if (!sroce_wq)
		return -ENOMEM;
	err = sroce_odp_init();
	if (err)
		goto err_wq;
	err = sroce_net_init();
	if (err)
		goto err_odp;
	err = register_netdevice_notifier(&sroce_netdev_nb);
	if (err)
		goto err_net;
	rdma_link_register(&sroce_link_ops);
	pr_info("loaded, version %s\n", SROCE_DRV_VERSION);
	return 0;

err_net:
	sroce_net_exit();
err_odp:
	sroce_odp_exit();
err_wq:
	destroy_workqueue(sroce_wq);
	return err;
}

static void __exit sroce_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	sroce_remove(NULL);
	unregister_netdevice_notifier(&sroce_netdev_nb);
	sroce_net_exit();
	sroce_odp_exit();
	destroy_workqueue(sroce_wq);
	pr_info("unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce developers");
MODULE_DESCRIPTION("sroce: software RoCEv2 RDMA device over any Ethernet interface");
MODULE_LICENSE("GPL");
MODULE_VERSION(SROCE_DRV_VERSION);
MODULE_ALIAS_RDMA_LINK("sroce");
