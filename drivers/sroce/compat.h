/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few interfaces that differ between the kernels sroce builds for
 * (Debian 12's 6.1 to 7.2). Kbuild probes the target tree for each
 * difference and passes a SROCE_HAVE_* switch (see Kbuild); this header
 * keeps one shim per difference, so the driver's own files have no
 * version tests. Included at the end of sroce.h: the ib_device_ops
 * adapters below call the driver's own entry points.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#ifdef SROCE_ODP
#include <linux/hmm.h>
#include <rdma/ib_umem_odp.h>
#endif

/* <asm/unaligned.h> moved to <linux/unaligned.h> in 6.12. */
#ifdef SROCE_HAVE_LINUX_UNALIGNED
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* <kunit/visibility.h> arrived in 6.2. */
#ifdef SROCE_HAVE_KUNIT_VISIBILITY
#include <kunit/visibility.h>
#elif IS_ENABLED(CONFIG_KUNIT)
#define EXPORT_SYMBOL_IF_KUNIT(sym) \
	EXPORT_SYMBOL_NS(sym, EXPORTED_FOR_KUNIT_TESTING)
#else
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#endif

/* vm_area_struct.vm_flags is written through vm_flags_set() from 6.3. */
#ifndef SROCE_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma,
				vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* Typed allocation (7.x), which 7.x's checkpatch asks for. */
#ifndef kzalloc_obj
#define kzalloc_obj(p, gfp) kzalloc(sizeof(p), gfp)
#endif

/* Symbol namespaces became string literals in 6.13. */
#ifdef SROCE_HAVE_NS_STRING
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING")
#else
#define SROCE_IMPORT_KUNIT_NS() MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING)
#endif

/*
 * The IBTA 1.5 FLUSH rights (6.2), kept by value where missing. 6.1's
 * ib_core refuses them on an MR, so sroce offers FLUSH only where they
 * exist; a QP may still be asked for them (newer providers always do).
 */
#ifdef SROCE_HAVE_ACCESS_FLUSH
#define SROCE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#define SROCE_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#else
#define SROCE_ACCESS_FLUSH_GLOBAL	BIT(8)
#define SROCE_ACCESS_FLUSH_PERSISTENT	BIT(9)
#define SROCE_DEVICE_FLUSH_GLOBAL	0
#endif
#define SROCE_ACCESS_FLUSH (SROCE_ACCESS_FLUSH_GLOBAL | \
			    SROCE_ACCESS_FLUSH_PERSISTENT)

/*
 * ODP capabilities of the IBTA 1.5 operations (uAPI values), unnamed in
 * ib_verbs.h before 6.15; a provider that knows them reads them anyway.
 */
#define SROCE_ODP_SUPPORT_FLUSH		BIT(6)
#define SROCE_ODP_SUPPORT_ATOMIC_WRITE	BIT(7)

#ifdef SROCE_ODP
/*
 * The page an ODP umem maps at PAGE_SIZE index @i, or NULL, and in
 * *@writable whether it may be written. Valid under umem_mutex after
 * ib_umem_odp_map_dma_and_lock(). Since 6.15 (hmm_dma_map) the pfn list
 * holds that state; before, the DMA list did, in its low bits.
 */
static inline struct page *sroce_odp_page(struct ib_umem_odp *odp,
					  unsigned long i, bool *writable)
{
#ifdef SROCE_HAVE_HMM_DMA_MAP
	unsigned long pfn = odp->map.pfn_list[i];

	if (!(pfn & HMM_PFN_VALID))
		return NULL;
	*writable = pfn & HMM_PFN_WRITE;
	return hmm_pfn_to_page(pfn);
#else
	dma_addr_t dma = odp->dma_list[i];

	if (!(dma & ODP_READ_ALLOWED_BIT))
		return NULL;
	*writable = dma & ODP_WRITE_ALLOWED_BIT;
	return hmm_pfn_to_page(odp->pfn_list[i]);
#endif
}

/* ib_umem_odp_map_dma_and_lock()'s access mask: HMM bits since 6.15. */
static inline u64 sroce_odp_access(bool write)
{
#ifdef SROCE_HAVE_HMM_DMA_MAP
	return write ? HMM_PFN_WRITE : 0;
#else
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
#endif
}
#endif /* SROCE_ODP */

/* The UDP tunnel helpers take the struct sock, not the socket, in 7.x. */
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
#define sroce_udp_tunnel_arg(sock) ((sock)->sk)
#else
#define sroce_udp_tunnel_arg(sock) (sock)
#endif

/*
 * Since 7.x a workqueue must say whether it is per-CPU or unbound (7.2
 * warns and assumes per-CPU); sroce's is per-CPU, to keep a QP's work on
 * the CPU that queued it.
 */
#ifdef SROCE_HAVE_WQ_PERCPU
#define SROCE_WQ_PERCPU WQ_PERCPU
#else
#define SROCE_WQ_PERCPU 0
#endif

/* hrtimer_setup() replaced hrtimer_init() plus ->function in 6.13. */
static inline void
sroce_hrtimer_setup(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *),
		    clockid_t clock, enum hrtimer_mode mode)
{
#ifdef SROCE_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* ib_umem_get() of a user address became ib_umem_get_va() in 7.x. */
static inline struct ib_umem *sroce_umem_get(struct ib_device *dev,
					     unsigned long addr, size_t size,
					     int access)
{
#ifdef SROCE_HAVE_UMEM_GET_VA
	return ib_umem_get_va(dev, addr, size, access);
#else
	return ib_umem_get(dev, addr, size, access);
#endif
}

/*
 * ib_device_ops entries whose shape changed. Each adapter only converts
 * arguments; verbs.c puts them in the ops table.
 */

/* create_cq takes the uverbs attribute bundle (NULL in kernel) since 6.11. */
#ifdef SROCE_HAVE_CREATE_CQ_ATTRS
static inline int sroce_op_create_cq(struct ib_cq *cq,
				     const struct ib_cq_init_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	return sroce_create_cq(cq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define sroce_op_create_cq sroce_create_cq
#endif

/* resize_cq became resize_user_cq with an unsigned size in 7.x. */
#ifdef SROCE_HAVE_RESIZE_USER_CQ
#define SROCE_OP_RESIZE_CQ resize_user_cq
static inline int sroce_op_resize_cq(struct ib_cq *cq, unsigned int cqe,
				     struct ib_udata *udata)
{
	return cqe > INT_MAX ? -EINVAL : sroce_resize_cq(cq, cqe, udata);
}
#else
#define SROCE_OP_RESIZE_CQ resize_cq
#define sroce_op_resize_cq sroce_resize_cq
#endif

/* reg_user_mr gained a DMA handle (unused by a software device) in 7.x. */
#ifdef SROCE_HAVE_REG_MR_DMAH
static inline struct ib_mr *sroce_op_reg_user_mr(struct ib_pd *pd, u64 start,
						 u64 length, u64 iova,
						 int access,
						 struct ib_dmah *dmah,
						 struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return sroce_reg_user_mr(pd, start, length, iova, access, udata);
}
#else
#define sroce_op_reg_user_mr sroce_reg_user_mr
#endif

/* counter_bind_qp and counter_unbind_qp are told the port (7.2; not 6.12). */
#ifdef SROCE_HAVE_COUNTER_PORT
static inline int sroce_counter_bind_qp_op(struct rdma_counter *counter,
					   struct ib_qp *qp, u32 port)
{
	return sroce_counter_bind_qp(counter, qp);
}

static inline int sroce_counter_unbind_qp_op(struct ib_qp *qp, u32 port)
{
	return sroce_counter_unbind_qp(qp);
}
#else
#define sroce_counter_bind_qp_op sroce_counter_bind_qp
#define sroce_counter_unbind_qp_op sroce_counter_unbind_qp
#endif

/*
 * ib_core allocates a counter at the driver's object size and calls
 * counter_init unconditionally where it has counter_init (7.2; 6.12
 * allocates a bare struct rdma_counter): sroce keeps nothing in it.
 */
#ifdef SROCE_HAVE_COUNTER_INIT
struct sroce_rdma_counter {
	struct rdma_counter	ibcounter;
};

static inline void sroce_counter_init(struct rdma_counter *counter)
{
}

#define SROCE_COUNTER_OBJ_OPS						\
	.counter_init = sroce_counter_init,				\
	INIT_RDMA_OBJ_SIZE(rdma_counter, sroce_rdma_counter, ibcounter),
#else
#define SROCE_COUNTER_OBJ_OPS
#endif

/*
 * A device born in a given network namespace (7.2; Debian's 6.1 and 6.12
 * make every device in init_net, from where `rdma dev set DEV netns NS`
 * moves it).
 */
#ifdef SROCE_HAVE_ALLOC_DEVICE_WITH_NET
#define sroce_ib_alloc_device(drv, member, net)				\
	ib_alloc_device_with_net(drv, member, net)
#else
#define sroce_ib_alloc_device(drv, member, net)				\
	((void)(net), ib_alloc_device(drv, member))
#endif

#endif /* SROCE_COMPAT_H */
