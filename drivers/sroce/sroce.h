/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce: the module's shared types. One header for the whole driver; the
 * wire format lives in include/sroce/wire.h.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/spinlock.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/rdma_user_rxe.h>

#include <sroce/wire.h>

#define SROCE_DRV_VERSION	"0.1.0"
/* Shown by ibv_devinfo as fw_ver major.minor.sub (bits 47:32, 31:16, 15:0). */
#define SROCE_FW_VER		(((u64)0 << 32) | ((u64)1 << 16) | 0)
#define SROCE_VENDOR_ID		0xffffff
#define SROCE_UVERBS_ABI	2	/* the rxe provider's */

/*
 * Device limits. Every one is enforced by the object code that uses it;
 * ibv_devinfo shows exactly these.
 */
enum sroce_limits {
	SROCE_MAX_PD		= 0x10000,
	SROCE_MAX_CQ		= 0x4000,
	SROCE_MAX_CQE		= 0xfffff,	/* slots = 0x100000 */
	SROCE_MAX_QP		= 0x4000,
	SROCE_MAX_QP_WR		= 0x7fff,
	SROCE_MAX_SGE		= 32,
	SROCE_MAX_SGE_RD	= 32,
	SROCE_MAX_INLINE	= 512,
	SROCE_MAX_MR		= 0x10000,
	SROCE_MAX_MW		= 0x10000,
	SROCE_MAX_AH		= 0x10000,
	SROCE_MAX_SRQ		= 0x4000,
	SROCE_MAX_SRQ_WR	= 0x7fff,
	SROCE_MAX_QP_RD_ATOM	= 128,
	SROCE_MAX_MCAST_GRP	= 8192,
	SROCE_MAX_MCAST_QP	= 56,
	SROCE_MAX_PKEYS		= 1,
	SROCE_GID_TBL_LEN	= 1024,
	SROCE_MAX_FAST_REG_PAGES = 512,
	SROCE_LOCAL_ACK_DELAY	= 15,
};

#define SROCE_MAX_MR_SIZE	BIT_ULL(40)
/*
 * What an unprivileged process makes the kernel hold for it (rings, the SQ
 * shadow, MR page arrays) is charged to its memory cgroup; asking for too
 * much fails with ENOMEM, without a warning or the OOM killer.
 */
#define SROCE_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)
/*
 * Key indices (24 bits): MRs take the lower half and memory windows the
 * upper half, so one look at a key tells which table to search, and an MW
 * rkey can never be used as an lkey.
 */
#define SROCE_MAX_MR_INDEX	0x7fffff
#define SROCE_MIN_MW_INDEX	0x800000
#define SROCE_MAX_MW_INDEX	0xffffff
#define SROCE_PAGE_SIZE_CAP	0xfffff000ULL

/* Objects counted against the limits above. */
enum sroce_res {
	SROCE_RES_PD,
	SROCE_RES_CQ,
	SROCE_RES_MR,
	SROCE_RES_AH,
	SROCE_RES_QP,
	SROCE_RES_SRQ,
	SROCE_RES_MW,
	SROCE_RES_NUM,
};

/* Per-device counters, shown by `rdma statistic show`. */
enum sroce_counter {
	SROCE_CNT_RX_PKTS,
	SROCE_CNT_RX_BYTES,
	SROCE_CNT_TX_PKTS,
	SROCE_CNT_TX_BYTES,
	SROCE_CNT_RX_DROP_MALFORMED,
	SROCE_CNT_RX_ICRC_ERR,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_CQ_OVERFLOW,
	SROCE_CNT_LINK_DOWNED,
	SROCE_CNT_RETRANSMITS,
	SROCE_CNT_TIMEOUTS,
	SROCE_CNT_TX_NAKS,
	SROCE_CNT_RX_NAKS,
	SROCE_CNT_TX_RNR_NAKS,
	SROCE_CNT_RX_RNR_NAKS,
	SROCE_CNT_RX_DUPLICATES,
	SROCE_CNT_RX_OUT_OF_SEQ,
	SROCE_CNT_TX_DROPS,
	SROCE_CNT_RX_FLUSH_ICRC_RXE,
	SROCE_CNT_RX_DROP_NOT_PEER,
	SROCE_CNT_RX_DROP_PKEY,
	SROCE_CNT_TX_NO_ROUTE,
	SROCE_CNT_TX_BATCHES,
	SROCE_CNT_TX_REFUSED,
	SROCE_CNT_WINDOW_CUTS,
	SROCE_CNT_REWINDS,
	SROCE_CNT_TX_WORK_RUNS,
	SROCE_CNT_NUM,
};

struct sroce_counters {
	u64	c[SROCE_CNT_NUM];
};

/*
 * A counter of `rdma statistic qp`: the traffic of the QPs bound to it,
 * which is then not in the device's counters (ib_core adds the running
 * counters to the port's).
 */
struct sroce_qcnt {
	struct list_head		list;	/* sdev->qcnts, under qcnt_lock */
	const struct rdma_counter	*counter;
	struct sroce_counters __percpu	*cnt;
};

struct sroce_net;	/* net.c */

struct sroce_dev {
	struct ib_device	ib;
	struct net_device	*ndev;
	netdevice_tracker	ndev_tracker;
	struct net		*net;		/* ndev's namespace at newlink */
	struct sroce_net	*sn;		/* its sockets, held */
	struct list_head	list;		/* sroce_devs, under sroce_devs_lock */
	bool			registered;	/* guarded by sroce_devs_lock */
	bool			dying;		/* netdev unregistering (seen once) */
	struct workqueue_struct	*wq;		/* the QPs' workers (main.c) */

	spinlock_t		port_lock;	/* port_state, active_mtu */
	enum ib_port_state	port_state;
	enum ib_mtu		active_mtu;

	atomic_t		res[SROCE_RES_NUM];
	struct sroce_counters __percpu *cnt;

	struct xarray		mr_xa;		/* key index -> MR, RCU readers */
	u32			mr_next;	/* cyclic index allocation */
	atomic_t		odp_mrs;	/* ODP MRs: none, no prefault */
	struct xarray		mw_xa;		/* key index -> MW, RCU readers */
	u32			mw_next;	/* cyclic index allocation */
	spinlock_t		mw_lock;	/* sroce_mr.nr_mw and .dying,
						 * sroce_qp.mw_list
						 */
	struct xarray		ah_xa;		/* ah_num -> AH */
	struct xarray		qp_xa;		/* QPN -> QP, RCU readers */
	u32			qp_next;	/* cyclic QPN allocation */
	atomic64_t		qp_serial;	/* tells a QPN's QPs apart */
	atomic_t		srq_seq;	/* srq_num for the provider */
	atomic_t		pd_seq;		/* each PD's first QP's CPU */

	struct mutex		qcnt_lock;	/* qcnts */
	struct list_head	qcnts;		/* struct sroce_qcnt */
	struct mutex		mcg_mutex;	/* attach/detach, joins; after RTNL */
	spinlock_t		mcg_lock;	/* mcg_hash, members; receive */
	DECLARE_HASHTABLE(mcg_hash, 6);
	u32			mcg_count;	/* under mcg_mutex */
};

static inline struct sroce_dev *to_sdev(struct ib_device *ib)
{
	return container_of(ib, struct sroce_dev, ib);
}

static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c,
			       u64 n)
{
	this_cpu_add(sdev->cnt->c[c], n);
}

static inline u64 sroce_cnt_sum(struct sroce_counters __percpu *cnt,
				enum sroce_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(cnt, cpu)->c[c];
	return sum;
}

/* A ring shared with (or, for kernel consumers, shaped like) user space. */
struct sroce_queue_geom {
	u32	num_slots;	/* power of two; capacity is num_slots - 1 */
	u32	log2_elem;
	size_t	buf_size;	/* header + slots, page aligned */
};

struct sroce_mmap;

struct sroce_queue {
	struct rxe_queue_buf	*buf;
	struct sroce_mmap	*mmap;	/* NULL for kernel consumers */
	u32			index_mask;
	u32			log2_elem;
	u32			prod;	/* private copy when the kernel produces */
	u32			cons;	/* private copy when the kernel consumes */
	size_t			buf_size;
};

struct sroce_odp_budget;

struct sroce_ucontext {
	struct ib_ucontext	ibuc;
	struct sroce_odp_budget	*odp;	/* its ODP faults in flight (odp.c) */
};

static inline struct sroce_ucontext *to_suc(struct ib_ucontext *uc)
{
	return container_of(uc, struct sroce_ucontext, ibuc);
}

struct sroce_pd {
	struct ib_pd		ibpd;
	atomic_t		qp_seq;		/* its QPs' CPUs in turn */
};

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

struct sroce_cq {
	struct ib_cq		ibcq;
	spinlock_t		lock;		/* q producer side, notify */
	struct sroce_queue	q;
	u8			notify;		/* 0 or IB_CQ_SOLICITED/NEXT_COMP */
	bool			user;
	/* User QPs in ERR that stopped polling their RQ; under lock. */
	struct list_head	parked;
};

struct sroce_ah {
	struct ib_ah		ibah;
	struct rxe_av		av;
	u32			num;		/* ah_num, >= 1 */
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

struct sroce_mr {
	struct ib_mr		ibmr;
	struct ib_umem		*umem;
	struct page		**pages;	/* pinned pages, in order */
	/*
	 * On-demand paging: pages[] mirrors what ib_core has faulted in
	 * (NULL: not present) and odp_writable which of them may be
	 * written. Copies read both under odp_lock, the fault path and the
	 * MMU notifier write them under it (and umem_mutex). See odp.c.
	 */
	struct ib_umem_odp	*odp;
	unsigned long		*odp_writable;
	rwlock_t		odp_lock;
	/*
	 * 1 until dereg, + each fault or prefetch queued: the last frees
	 * the MR, so that dereg never waits for a fault (odp.c).
	 */
	refcount_t		odp_refs;
	struct sroce_odp_budget	*odp_budget;	/* its context's, held */
	unsigned long		npages;
	u32			page_off;	/* offset of iova in pages[0] */
	bool			dma;		/* kernel DMA MR: iova is a VA */
	/*
	 * Fast registration: ib_map_mr_sg() fills fr_pages (kernel virtual
	 * addresses: sroce's DMA addresses are virtual) and IB_WR_REG_MR
	 * makes the MR valid under a key; an invalidation makes it invalid.
	 */
	bool			fr;
	u8			valid;		/* usable: release/acquire */
	u8			fr_shift;	/* log2 of the page size */
	u32			fr_n;		/* pages mapped */
	u32			fr_max;
	u64			*fr_pages;
	u32			key;		/* the key that names it now */
	int			access;
	u64			iova;
	u64			length;
	refcount_t		users;		/* 1 + in-flight users */
	struct completion	idle;		/* users reached 0 */
	/* Under sdev->mw_lock: windows bound to it refuse its dereg. */
	u32			nr_mw;
	bool			dying;
	struct rcu_head		rcu;
};

/*
 * A memory window. ib_core frees the ib_mw as soon as dealloc_mw returns,
 * so the state the data path looks up under RCU lives apart and is freed
 * after a grace period.
 */
struct sroce_mw {
	spinlock_t		lock;		/* everything below */
	struct ib_pd		*pd;
	u32			key;		/* its rkey now; 0 once freed */
	u8			type;		/* IB_MW_TYPE_1 or IB_MW_TYPE_2 */
	bool			bound;		/* a binding with length > 0 */
	u32			qpn;		/* type 2: the QP it is bound to */
	struct list_head	qp_entry;	/* type 2 bound: in its QP's mw_list,
						 * under sdev->mw_lock
						 */
	struct sroce_mr		*mr;		/* bound: counted in mr->nr_mw */
	atomic_t		inflight;	/* accesses through it under way */
	u64			iova;
	u64			length;
	int			access;
	struct rcu_head		rcu;
};

struct sroce_ibmw {
	struct ib_mw		ibmw;
	struct sroce_mw		*mw;
};

/* A bind work request, as copied out of the SQ (rxe's wr.mw). */
struct sroce_mw_bind {
	u64			addr;
	u64			length;
	u32			mr_lkey;
	u32			mw_rkey;	/* names the window (index) */
	u32			rkey;		/* its key after the bind */
	int			access;
};

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

struct sroce_srq {
	struct ib_srq		ibsrq;
	spinlock_t		lock;		/* q's consumer side, limit */
	raw_spinlock_t		post_lock;	/* q's producer side, kernel */
	struct mutex		resize_lock;	/* one modify at a time */
	struct sroce_queue	q;
	u32			max_sge;
	u32			limit;		/* armed limit, 0: none */
	bool			user;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

/* What the completer hands to a CQ: the user or kernel form of a WC. */
union sroce_cqe {
	struct ib_uverbs_wc	uwc;
	struct ib_wc		ibwc;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

/*
 * ATOMIC WRITE (IBTA 1.5): its work request and completion opcodes, fixed
 * by the uverbs ABI (6.1's ib_verbs.h has no name for them yet).
 */
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_ATOMIC_WRITE	9

/*
 * FLUSH (IBTA 1.5): the same, for its work request and completion, and
 * its form of the send WQE's wr union (6.1's rdma_user_rxe.h lacks it;
 * a 6.1 requester still sends FLUSH to a peer that executes it). The rxe
 * provider leaves remote_addr and length unset and puts the range in the
 * WQE's iova and dma.length, where rdma_rxe reads it: so does sroce; the
 * two fields only keep the layout.
 */
#define SROCE_WR_FLUSH		14
#define SROCE_WC_FLUSH		8

struct sroce_flush_uwr {
	__aligned_u64	remote_addr;
	__u32		length;
	__u32		rkey;
	__u8		type;
	__u8		level;
};

/*
 * The operations that wait for a response (READ responses, an ATOMIC
 * ACKNOWLEDGE, the empty READ RESPONSE to an ATOMIC WRITE or a FLUSH) and
 * hold one of
 * the responder's max_rd_atomic resources while they do.
 */
static inline bool sroce_wr_local(u32 wr_opcode)
{
	return wr_opcode == IB_WR_REG_MR || wr_opcode == IB_WR_LOCAL_INV ||
	       wr_opcode == IB_WR_BIND_MW;
}

static inline bool sroce_wr_waits(u32 wr_opcode)
{
	return wr_opcode == IB_WR_RDMA_READ ||
	       wr_opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       wr_opcode == SROCE_WR_ATOMIC_WRITE ||
	       wr_opcode == SROCE_WR_FLUSH;
}

/*
 * A send WQE as the kernel keeps it: copied out of the user's ring and
 * validated once, never read back from shared memory. Followed by the SGE
 * list or the inline data.
 */
struct sroce_swqe {
	u64		wr_id;
	u32		opcode;		/* IB_WR_* (same values as IBV_WR_*) */
	u32		flags;		/* IB_SEND_* */
	u64		raddr;
	u32		rkey;
	__be32		imm;		/* immediate data, network order */
	u32		length;		/* message bytes */
	u32		num_sge;	/* 0 for inline data */
	/* CMP_AND_SWP: compare, swap; FETCH_AND_ADD: add; ATOMIC WRITE:
	 * the 8 bytes to write, in memory order.
	 */
	u64		cmp_add;
	u64		swap;
	u32		flush_len;	/* FLUSH: the RETH's length */
	u8		flush_type;	/* FLUSH: SROCE_FLUSH_GLOBAL, ... */
	u8		flush_level;	/* FLUSH: SROCE_FLUSH_RANGE or _MR */
	/* Requester progress, under req.lock. */
	u32		first_psn;	/* PSN of the first packet */
	u32		last_psn;	/* PSN of the last packet */
	u32		rd_done;	/* READ: bytes placed so far */
	/* READ and the atomics, which wait for a response and hold one of
	 * the responder's max_rd_atomic resources per request.
	 */
	u32		rd_chunk;	/* READ: bytes per request on the wire */
	u32		rd_reqs;	/* READ: requests sent at least once */
	u32		rd_answered;	/* READ: requests fully answered */
	u8		started;	/* first packet sent at least once */
	u8		sent;		/* every packet sent at least once */
	u8		inl;		/* data is inline */
	u8		done;		/* READ, atomics: every response placed */
	u8		bad;		/* failed validation: WC status */
	struct sroce_mr	*reg_mr;	/* REG_MR (kernel QPs): the MR */
	int		reg_access;	/* REG_MR: its rights; key in rkey */
	union {
		struct {
			u32		dqpn;	/* UD: destination QP */
			u32		qkey;	/* UD: Q_Key to send */
			struct rxe_av	av;	/* UD: where to */
		};
		struct sroce_mw_bind	bind;	/* BIND_MW */
	};
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/* A receive WQE, copied out of the RQ ring and validated. */
struct sroce_rwqe {
	u64		wr_id;
	u32		length;		/* sum of the SGE lengths */
	u32		num_sge;
	struct ib_sge	sge[SROCE_MAX_SGE];
};

/* A READ or atomic request the responder executed (resp.rd_hist). */
struct sroce_rd_hist {
	u32		psn;
	u32		npkts;
	u64		orig;
	u8		atomic;	/* 0, or the request's opcode */
};

/* What the responder owes the requester, in PSN order. */
enum sroce_rjob_type {
	SROCE_RJOB_ACK,		/* ACK or NAK: one packet */
	SROCE_RJOB_READ,	/* READ response: one or more packets; with
				 * len 0, the response to an ATOMIC WRITE
				 */
	SROCE_RJOB_ATOMIC,	/* ATOMIC ACKNOWLEDGE, the value in va */
};

struct sroce_rjob {
	u32		psn;		/* ACK: its PSN; READ: the request's */
	u32		msn;
	u64		va;		/* READ: as requested; ATOMIC: the
					 * original value
					 */
	u32		rkey;
	u32		len;
	u32		off;		/* READ: bytes sent so far */
	u8		type;
	u8		syn;		/* AETH syndrome of an ACK/NAK */
	bool		mid;		/* READ: replays part of a request */
	bool		big;		/* READ: over SROCE_RD_CHUNK_MAX packets */
};

/*
 * Responder jobs a QP can owe: a READ or atomic per max_dest_rd_atomic
 * (at least one) with an ACK after each and one before. A power of two,
 * so that the free-running u32 ring positions stay in step with the
 * slots when they wrap (2^32 is a multiple of it). The ring is sized
 * when max_dest_rd_atomic is set (sroce_modify_qp()), from 4 jobs at
 * create up to SROCE_RJOBS, and never shrinks.
 */
#define SROCE_RJOBS	512
static_assert(SROCE_RJOBS >= 2 * SROCE_MAX_QP_RD_ATOM + 2);
static_assert((SROCE_RJOBS & (SROCE_RJOBS - 1)) == 0);

static inline u32 sroce_rjobs_for(u32 max_dest_rd_atomic)
{
	return roundup_pow_of_two(2 * max(max_dest_rd_atomic, 1U) + 2);
}

/*
 * A job ring and READ history for a max_dest_rd_atomic, allocated apart:
 * together, 16 READs' 2432 bytes took a 4 KiB object, apart 2 KiB and
 * 512 bytes (sroce_resp_jobs_alloc()).
 */
struct sroce_rjobs_mem {
	struct sroce_rjob	*jobs;
	struct sroce_rd_hist	*hist;
};

/*
 * Unacknowledged PSNs in flight per QP, at most; to a QP in the same
 * host; and bytes, to a peer across a wire (sroce_wire_window()).
 */
#define SROCE_WINDOW		256

/*
 * Send WQEs copied out of the SQ ring at a time, at most (a power of two).
 * A copy lives until its WQE completes, as a retransmission rebuilds the
 * packets from it, so this bounds the WQEs in flight, not the queue's
 * depth: the rest wait in the ring, unread, until copies are free. 64
 * messages of one packet are a quarter of the PSN window; 64 of 4 KiB
 * at IB MTU 1024 fill it.
 */
#define SROCE_SWQE_WINDOW	64
/*
 * A user QP's copies at create: one with a send or two in flight (a
 * ping-pong, or one of many idle connections) keeps these; a doorbell
 * that finds more posted than copies grows them, up to the window
 * (sroce_qp_swqe_grow()).
 */
#define SROCE_SWQE_START	2
#define SROCE_WINDOW_LOCAL	64
#define SROCE_WINDOW_BYTES	262144
/* A new QP's window, grown from there as ACKs come (sroce_cwnd_grow()). */
#define SROCE_WINDOW_INIT	64
/* The most response packets one READ request of sroce's asks for. */
#define SROCE_RD_CHUNK_MAX	64
/*
 * A WRITE, a SEND or READ responses to a QP in the same host go in pieces
 * of up to this many bytes, each one packet standing for the PSNs of the
 * path-MTU packets it replaces (req.c, resp_tx.c). Its head (about
 * 17 KiB) is built in the sending stream's own page (sroce_pkt_alloc()).
 */
#define SROCE_LOCAL_CHUNK	16384
/* The page a send stream keeps for packet heads over a page (net.c). */
#define SROCE_BIG_HEAD_ORDER	3
static_assert(SROCE_LOCAL_CHUNK + 2048 <= PAGE_SIZE << SROCE_BIG_HEAD_ORDER);
/*
 * The ACK timer's period (sroce_rto_ns()): never under SROCE_RTO_MIN_NS,
 * SROCE_RTO_INIT_NS until a round trip was measured, doubled per timeout
 * in a row up to 2^SROCE_RTO_BACKOFF_MAX times.
 */
#define SROCE_RTO_MIN_NS	(20ULL * NSEC_PER_MSEC)
#define SROCE_RTO_INIT_NS	(200ULL * NSEC_PER_MSEC)
#define SROCE_RTO_BACKOFF_MAX	3
/* The window after an ACK timeout; it grows back as PSNs are acknowledged. */
#define SROCE_WINDOW_MIN	16

/* Bits of sroce_qp.flags. */
enum {
	SROCE_QP_RESP_RUNNING,	/* one context sends the responder's stream */
	SROCE_QP_RESP_AGAIN,	/* more for it: the owner loops */
	SROCE_QP_REQ_RUNNING,	/* one context sends the requester's stream */
	SROCE_QP_REQ_AGAIN,	/* more for it: the owner loops */
	/* An ODP fault failed: the next miss of that side fails instead. */
	SROCE_QP_ODP_ERR_REQ,	/* requester */
	SROCE_QP_ODP_ERR_COMP,	/* completer */
	SROCE_QP_ODP_ERR_RESP,	/* responder placing or executing a request */
	SROCE_QP_ODP_ERR_READ,	/* responder reading for a READ response */
	/* An ODP fault for that side is queued: a miss meanwhile waits for it. */
	SROCE_QP_ODP_BUSY_REQ,
	SROCE_QP_ODP_BUSY_COMP,
	SROCE_QP_ODP_BUSY_RESP,
	SROCE_QP_ODP_BUSY_READ,
	SROCE_QP_RQ_KICK,	/* a verb woke the ERR poll: poll as if new */
	SROCE_QP_ODP_RESEND,	/* the completer's fault is in: go back to una */
};

/* A smoothed round-trip time and its mean deviation (RFC 6298), in us. */
struct sroce_rtt {
	u32			srtt_us;	/* 0: nothing measured yet */
	u32			rttvar_us;
};

/*
 * The send side of a QP: the requester (req.c) and the completer (comp.c),
 * which retires what the requester sent as its answers arrive. They share
 * it under one lock: ACKs are processed inline in softirq, and the
 * window, the timer and the WQE positions move together (design.rst).
 */
struct sroce_req_state {
	spinlock_t		lock;		/* also the SQ ring's consumer */
	u32			head;		/* SQ slots copied out up to here */
	u32			cur;		/* WQE being sent */
	u32			off;		/* its next byte */
	u32			psn;		/* next PSN to send */
	u32			max_psn;	/* beyond anything sent */
	u32			una_psn;	/* oldest unacknowledged PSN */
	u32			rd_outstanding;	/* READ/atomic PSNs in flight */
	u16			cwnd;		/* window, 0: SROCE_WINDOW */
	u16			ssthresh;	/* slow start's end, 0: none */
	u32			recover_psn;	/* a NAK cuts again from here */
	u8			retry_left;
	u8			rnr_left;
	bool			rnr_wait;	/* paused by an RNR NAK */
	bool			odp_wait;	/* paused for an ODP fault */
	bool			rd_gap;		/* rewound for a READ gap */
	bool			recovering;	/* cut, una before recover_psn */
	bool			peer_local;	/* last route stayed in the host */
	u8			err;		/* WC status once failed */
	struct page		*big_head;	/* sroce_pkt_alloc()'s */
	struct hrtimer		timer;		/* retransmit and RNR */
	u64			timer_ns;	/* IBTA's ACK timeout, 0 = none */
	ktime_t			ack_deadline;	/* the ACK timeout expires then */
	/*
	 * The stream went back after a local drop (sroce_req_tx_dropped()):
	 * building the oldest PSN again keeps ack_deadline while the timer
	 * is pending, so a device that refuses every packet still runs down
	 * the retry count.
	 */
	bool			keep_deadline;
	struct sroce_rtt	rtt;		/* measured round trips */
	ktime_t			rtt_start;	/* when rtt_psn was sent */
	u32			rtt_psn;	/* timed until acknowledged */
	bool			rtt_on;		/* rtt_psn is being timed */
	u8			backoff;	/* ACK timeouts in a row */
};

/*
 * The receive side of an RC or UC QP: the responder (resp.c, uc_ud.c) and
 * its send stream (resp_tx.c), under one lock, also the RQ ring's
 * consumer. UD uses the lock and the receive WQE only.
 */
struct sroce_resp_state {
	spinlock_t		lock;		/* all of this, the RQ's consumer */
	u32			epsn;		/* expected PSN */
	u32			msn;
	u8			in_msg;		/* 0, or the op of a message in progress */
	bool			nak_seq;	/* a sequence NAK is outstanding */
	bool			have_rwqe;
	bool			rwqe_failed;	/* UC: one completed in error */
	u32			rcv_off;	/* bytes of the message placed */
	struct sroce_rwqe	rwqe;
	u32			wr_rkey;	/* WRITE in progress */
	u64			wr_va;
	u32			wr_len;
	u32			rd_pending;	/* READ jobs queued */
	u32			job_head, job_tail;
	struct sroce_rjob	rjob_last;	/* READ job sent out last */
	/*
	 * The last READ and atomic requests, as many as max_dest_rd_atomic
	 * (at least one; jobs_mask + 1 = sroce_rjobs_for() of it, in the
	 * allocation of the jobs, after them): PSN ranges, to tell a replay,
	 * and the atomics' results, to answer a replay without executing it
	 * again. A requester has no more outstanding, so a replay is of one
	 * of these.
	 */
	struct sroce_rd_hist	*rd_hist;
	u32			rd_hist_n;
	u32			rd_hist_next;
	/* Pacing of READ responses after the requester lost some. */
	u16			rd_pace;	/* packets per jiffy, 0: unpaced */
	u16			rd_pace_sent;	/* in the jiffy rd_pace_tick */
	unsigned long		rd_pace_tick;
	bool			rd_loss;	/* asked again since the last READ */
	bool			peer_local;	/* last route stayed in the host */
	struct sroce_rjob	*jobs;		/* jobs_mask + 1 of them */
	u32			jobs_mask;
	struct page		*big_head;	/* sroce_pkt_alloc()'s */
};

/*
 * What the QP number lookup (sdev->qp_xa) holds for a QP: its references,
 * apart from the QP, because ib_core frees the QP as soon as destroy
 * returns, while a receive path that loaded the entry just before it was
 * erased may still try to take a reference. This one is freed after an
 * RCU grace period (kfree_rcu()), so destroy need not wait for one, and
 * a teardown of thousands of QPs does not wait a grace period each.
 */
struct sroce_qp_ref {
	refcount_t		users;		/* 1 + receive paths in flight */
	struct completion	idle;		/* users reached 0 */
	struct sroce_qp		*qp;
	struct rcu_head		rcu;
};

struct sroce_qp {
	struct ib_qp		ibqp;
	struct sroce_dev	*sdev;
	struct sroce_qcnt __rcu	*qcnt;		/* bound counter, or NULL */
	struct sroce_qp_ref	*ref;		/* what qp_xa holds */
	unsigned long		flags;
	bool			user;
	bool			dying;		/* under both locks */
	struct list_head	mw_list;	/* type 2 windows bound through it */

	/* Attributes, written under both sides' locks, read under either. */
	enum ib_qp_state	state;
	/*
	 * Modifies to RESET, counted: a failure decided before one is stale
	 * after it (sroce_qp_error()).
	 */
	u32			resets;
	int			access;
	u32			dest_qpn;
	u32			qkey;
	enum ib_mtu		path_mtu;
	u32			pmtu;		/* bytes */
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;
	u8			sq_sig_all;
	struct rxe_av		av;
	u16			sport;
	struct dst_cache	dst_cache;
	struct ib_qp_cap	cap;

	/* The rings and what the QP's life does with them (qp.c). */
	struct sroce_queue	sq;		/* sq.cons: oldest incomplete */
	u8			*swqe;		/* kernel copies, under req.lock */
	size_t			swqe_size;
	u32			swqe_mask;	/* copies - 1 */
	u32			swqe_max;	/* copies it may grow to */
	struct sroce_queue	rq;
	struct delayed_work	tx_work;	/* the transmit loop (tx.c) */
	struct mem_cgroup	*memcg;		/* a user QP's creator's, held */
	u64			serial;		/* sroce_dev.qp_serial at create */
	/*
	 * tx.c, each by its stream's owner: jiffies of the first of the
	 * local drops in a row (0: the last packet went).
	 */
	unsigned long		tx_drops_req, tx_drops_resp;
	unsigned int		cpu;		/* where tx_work runs */
	/*
	 * A kernel consumer's receive posts: the RQ ring's producer side,
	 * apart from resp.lock so that a post may come from any context:
	 * raw, as a hard interrupt may take it.
	 */
	raw_spinlock_t		rq_post_lock;
	struct delayed_work	rq_err_work;	/* flushes the RQ while in ERR */
	unsigned long		rq_err_delay;	/* its next period, jiffies */
	unsigned long		rq_err_last;	/* jiffies it last flushed */
	struct list_head	rq_parked;	/* on recv CQ's list, cq->lock */

	struct sroce_req_state	req;
	struct sroce_resp_state	resp;
};

/* The responder job at free-running ring position @pos. */
static inline struct sroce_rjob *sroce_rjob_at(struct sroce_qp *qp, u32 pos)
{
	return &qp->resp.jobs[pos & qp->resp.jobs_mask];
}

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/*
 * Count a QP's traffic: in the `rdma statistic qp` counter it is bound
 * to, else in the device's. The counter outlives every reader
 * (sroce_counter_dealloc() waits for a grace period).
 */
static inline void sroce_qp_count(struct sroce_qp *qp, enum sroce_counter c,
				  u64 n)
{
	struct sroce_qcnt *q;

	rcu_read_lock();
	q = rcu_dereference(qp->qcnt);
	if (q)
		this_cpu_add(q->cnt->c[c], n);
	else
		sroce_count(qp->sdev, c, n);
	rcu_read_unlock();
}

/* One packet of @bytes sent (@tx) or received: one counter lookup for both. */
static inline void sroce_qp_count_pkt(struct sroce_qp *qp, bool tx, u64 bytes)
{
	struct sroce_counters __percpu *cnt;
	struct sroce_qcnt *q;

	rcu_read_lock();
	q = rcu_dereference(qp->qcnt);
	cnt = q ? q->cnt : qp->sdev->cnt;
	this_cpu_inc(cnt->c[tx ? SROCE_CNT_TX_PKTS : SROCE_CNT_RX_PKTS]);
	this_cpu_add(cnt->c[tx ? SROCE_CNT_TX_BYTES : SROCE_CNT_RX_BYTES],
		     bytes);
	rcu_read_unlock();
}

/*
 * The QP numbered @qpn on @sdev, with a reference (sroce_qp_put()), or
 * NULL. Inline: the receive path and the ODP worker look QPs up, and
 * neither should import qp.c for it.
 */
static inline struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp_ref *ref;
	struct sroce_qp *qp = NULL;

	rcu_read_lock();
	ref = xa_load(&sdev->qp_xa, qpn);
	if (ref && refcount_inc_not_zero(&ref->users))
		qp = ref->qp;
	rcu_read_unlock();
	return qp;
}

/* Drop a reference from sroce_qp_get(); the last one wakes destroy. */
static inline void sroce_qp_put(struct sroce_qp *qp)
{
	struct sroce_qp_ref *ref = qp->ref;

	if (refcount_dec_and_test(&ref->users))
		complete(&ref->idle);
}

/*
 * Have the QP's worker send what it has to send after @delay jiffies
 * (sooner if it is already due), on the QP's own CPU while it is online.
 * Any context; a dying QP is left alone.
 */
static inline void sroce_qp_schedule(struct sroce_qp *qp, unsigned long delay)
{
	if (!READ_ONCE(qp->dying))
		mod_delayed_work_on(cpu_online(qp->cpu) ? qp->cpu :
				    WORK_CPU_UNBOUND, qp->sdev->wq,
				    &qp->tx_work, delay);
}

/*
 * The copy of SQ slot @i. The ring's slots are a multiple of the copies,
 * and at most that many WQEs are copied and not completed, so the slots
 * from sq.cons to req.head each have a copy of their own.
 */
static inline struct sroce_swqe *sroce_swqe(struct sroce_qp *qp, u32 i)
{
	return (struct sroce_swqe *)(qp->swqe +
				     (size_t)(i & qp->swqe_mask) *
				     qp->swqe_size);
}

/* A received packet, parsed and bounds-checked. */
struct sroce_pkt {
	struct sk_buff		*skb;
	struct sroce_dev	*sdev;
	u8			opcode;
	u32			hdrs;		/* enum sroce_hdr_bits */
	u32			psn;
	u32			qpn;
	u16			pkey;
	bool			ackreq;
	bool			se;
	u32			paylen;		/* payload bytes, no pad */
	u32			more_psns;	/* a local chunk's PSNs after its own */
	bool			mtu_mismatch;	/* a local chunk, other path MTU */
	u32			payoff;		/* payload offset from skb->data */
	u32			padlen;
	struct sroce_feth	feth;
	struct sroce_reth	reth;
	struct sroce_aeth	aeth;
	struct sroce_atmeth	atmeth;
	struct sroce_atmack	atmack;
	struct sroce_deth	deth;
	__be32			imm;
	u32			ieth;
	u32			hcrc;		/* ICRC state after the headers */
	u32			icrc;		/* the ICRC it carries */
	bool			icrc_todo;	/* not checked yet: see net.c */
};

/* A completion, before it takes the user or kernel form. */
struct sroce_wc {
	u64			wr_id;
	enum ib_wc_status	status;
	enum ib_wc_opcode	opcode;
	u32			byte_len;
	u32			qp_num;
	u32			src_qp;
	int			flags;		/* IB_WC_WITH_IMM, ... */
	u8			network_hdr_type;
	u16			vlan_id;	/* with IB_WC_WITH_VLAN */
	union {
		__be32		imm;
		u32		inv_rkey;
	};
};

/*
 * What an ODP fault resolved in process context does for the QP whose
 * packet missed the page (see odp.c).
 */
enum sroce_odp_kick {
	SROCE_ODP_KICK_NONE,	/* responder: it sent an RNR NAK, or dropped
				 * a datagram; the peer tries again
				 */
	SROCE_ODP_KICK_RUN,	/* responder: a READ job waits, run the QP */
	SROCE_ODP_KICK_REQ,	/* requester: paused (odp_wait), resume it */
	SROCE_ODP_KICK_RESEND,	/* completer: it dropped a response, go back */
};

/* Source or destination of a copy between SGEs and a packet. */
struct sroce_copy {
	struct sk_buff	*skb;		/* skb at @off, else @buf */
	u32		off;
	u8		*buf;
	bool		to_mr;
	u32		*crc;		/* running CRC, or NULL */
	/* Building a local packet: MR pieces left in place (mr.c). */
	struct sroce_payref *ref;
	struct sroce_qp	*qp;		/* ODP: whose copy it is, or NULL */
	u8		kick;		/* ODP: enum sroce_odp_kick */
};

#define SROCE_PAYREF_MAX	2

/*
 * The payload of a packet that stays in the host, or its first part, left
 * in the MRs it comes from (sroce_payref_start()): the receiver copies it
 * from there, so the payload is copied once, MR to MR. The rest, past the
 * pieces, is in the skb. Lives in skb->cb; each piece holds its MR until
 * the skb is freed.
 */
struct sroce_payref {
	u32		pay;		/* payload, as an offset from skb->head */
	u32		len[SROCE_PAYREF_MAX];
	bool		closed;		/* a piece was copied: no more refs */
	struct sroce_mr	*mr[SROCE_PAYREF_MAX];
	u64		va[SROCE_PAYREF_MAX];
};

/* main.c */
enum ib_mtu sroce_mtu_from_netdev(unsigned int ndev_mtu);
void sroce_port_update(struct sroce_dev *sdev);

/* trace.c */
u64 sroce_trace_wr_id(bool user, u64 wr_id);

/* verbs.c */
int sroce_register(struct sroce_dev *sdev, const char *name);
u64 sroce_counter_read(struct sroce_dev *sdev, enum sroce_counter c);
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int sroce_counter_unbind_qp(struct ib_qp *ibqp);

/* res.c */
int sroce_res_get(struct sroce_dev *sdev, enum sroce_res r);
void sroce_res_put(struct sroce_dev *sdev, enum sroce_res r);
/* One driver attribute of `rdma resource -dd`: a u32 of a snapshot struct. */
struct sroce_res_field {
	const char	*name;
	size_t		off;
	bool		hex;
};

#define SROCE_RES_FIELD(type, f, hex) { #f, offsetof(type, f), hex }

int sroce_fill_res(struct sk_buff *msg, const char *kind,
		   const struct sroce_res_field *f, unsigned int n,
		   const void *snap);

/* queue.c */
int sroce_queue_geom(u32 req, size_t elem_size, u32 max,
		     struct sroce_queue_geom *g);
int sroce_queue_init(struct sroce_queue *q, struct ib_ucontext *uctx,
		     const struct sroce_queue_geom *g);
void sroce_queue_free(struct sroce_queue *q);
int sroce_queue_mminfo(struct sroce_queue *q, struct mminfo *mi);
void sroce_queue_transfer(struct sroce_queue *dst,
			  const struct sroce_queue *src, u32 from, u32 n);
u32 sroce_queue_cons(struct sroce_queue *q);
u32 sroce_queue_prod(struct sroce_queue *q);
void sroce_queue_publish_prod(struct sroce_queue *q);
void sroce_queue_publish_cons(struct sroce_queue *q);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);
u32 sroce_sge_to_ring(struct rxe_sge *dst, const struct ib_sge *src, int n);
int sroce_rq_post_one(struct sroce_queue *q, const struct ib_recv_wr *wr,
		      u32 max_sge);
int sroce_rwqe_copy(const struct rxe_recv_wqe *u, struct sroce_rwqe *r,
		    u32 max_sge);

static inline u32 sroce_q_count(u32 prod, u32 cons, u32 mask)
{
	return (prod - cons) & mask;
}

static inline u32 sroce_q_next(u32 i, u32 mask)
{
	return (i + 1) & mask;
}

static inline void *sroce_queue_slot(const struct sroce_queue *q, u32 i)
{
	return q->buf->data + ((size_t)(i & q->index_mask) << q->log2_elem);
}

/* The size of a receive WQE (RQ or SRQ slot) with @max_sge SGEs. */
static inline size_t sroce_recv_elem(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

/* The SGEs a receive slot of @g holds, capped at the device limit. */
static inline u32 sroce_recv_slot_sge(const struct sroce_queue_geom *g)
{
	return min_t(size_t, SROCE_MAX_SGE,
		     ((1UL << g->log2_elem) - sizeof(struct rxe_recv_wqe)) /
		     sizeof(struct rxe_sge));
}

/* cq.c */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
bool sroce_cq_has_room(struct sroce_cq *cq);
int sroce_cq_post(struct sroce_cq *cq, const union sroce_cqe *cqe,
		  bool solicited);
bool sroce_cq_arm_fires(u8 *notify, bool solicited);
unsigned long sroce_cq_lock(struct sroce_cq *cq);
void sroce_cq_unlock(struct sroce_cq *cq, unsigned long irqf);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_complete(struct sroce_qp *qp, struct ib_cq *ibcq,
		   const struct sroce_wc *wc, bool solicited);

/* mr.c */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int sroce_mr_access_ok(u64 mr_iova, u64 mr_len, int mr_access, u64 iova,
		       u64 len, int need);
bool sroce_odp_present(struct sroce_mr *mr, u64 iova, u32 len, bool write);
void sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		   bool to_mr, u32 *crc);
struct sroce_payref *sroce_payref_start(struct sk_buff *skb, u8 *pay);
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
struct ib_mr *sroce_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_fast_reg(struct ib_pd *pd, struct sroce_mr *mr, u32 key,
		      int access);
int sroce_mr_invalidate(struct ib_pd *pd, u32 key);
int sroce_mr_inv_rcu(struct sroce_mr *mr, struct ib_pd *pd);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

int sroce_sge_copy(struct ib_pd *pd, const struct ib_sge *sge, u32 num_sge,
		   u32 off, u32 len, int need, struct sroce_copy *c);
int sroce_sge_prefault(struct sroce_qp *qp, const struct ib_sge *sge,
		       u32 num_sge, u32 len);
struct sroce_mr *sroce_mr_get_for(struct ib_pd *pd, u32 key, u64 va, u32 len,
				  int need);
u64 sroce_atomic_op(u64 *p, u8 op, u64 a, u64 b);
int sroce_mr_atomic_put(struct sroce_mr *mr, struct sroce_qp *qp, u64 va,
			u8 op, u64 a, u64 b, u64 *orig);
int sroce_mr_copy_put(struct sroce_mr *mr, u64 va, u32 len,
		      struct sroce_copy *c);
void sroce_mr_free(struct sroce_dev *sdev, struct sroce_mr *mr);

/* odp.c */
#ifdef SROCE_ODP
#define SROCE_ACCESS_ON_DEMAND	IB_ACCESS_ON_DEMAND
#define sroce_op_advise_mr	sroce_advise_mr
int sroce_odp_init(void);
void sroce_odp_exit(void);
void sroce_odp_caps(struct ib_device_attr *a);
int sroce_odp_ctx_init(struct sroce_ucontext *uc, struct sroce_dev *sdev);
void sroce_odp_budget_put(struct sroce_odp_budget *b);
bool sroce_odp_dereg(struct sroce_mr *mr);
int sroce_odp_reg(struct sroce_mr *mr, struct ib_pd *pd, u64 start,
		  u64 length, int access, struct ib_udata *udata);
int sroce_odp_miss(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		   struct sroce_qp *qp, u8 kick);
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);
#else
#define SROCE_ACCESS_ON_DEMAND	0
#define sroce_op_advise_mr	NULL
static inline int sroce_odp_init(void)
{
	return 0;
}

static inline void sroce_odp_exit(void)
{
}

static inline void sroce_odp_caps(struct ib_device_attr *a)
{
}

static inline int sroce_odp_ctx_init(struct sroce_ucontext *uc,
				     struct sroce_dev *sdev)
{
	return 0;
}

static inline void sroce_odp_budget_put(struct sroce_odp_budget *b)
{
}

static inline bool sroce_odp_dereg(struct sroce_mr *mr)
{
	return true;
}

static inline int sroce_odp_reg(struct sroce_mr *mr, struct ib_pd *pd,
				u64 start, u64 length, int access,
				struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static inline int sroce_odp_miss(struct sroce_mr *mr, u64 iova, u32 len,
				 bool write, struct sroce_qp *qp, u8 kick)
{
	return -EACCES;
}
#endif

/* mw.c */
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind_check(u8 type, bool bound, const struct sroce_mw_bind *b,
			u64 mr_iova, u64 mr_len, int mr_access);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_mw_bind *b);
int sroce_rkey_check(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		     int need);
int sroce_rkey_rights(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		      int need);
int sroce_rkey_copy(struct sroce_qp *qp, u32 rkey, u64 va, u32 len,
		    int need, struct sroce_copy *c);
int sroce_rkey_atomic(struct sroce_qp *qp, u32 rkey, u64 va, u8 op, u64 a,
		      u64 b, u64 *orig);
int sroce_invalidate(struct sroce_qp *qp, u32 key, bool remote);
void sroce_mw_qp_gone(struct sroce_qp *qp);

static inline bool sroce_key_is_mw(u32 key)
{
	return (key >> 8) >= SROCE_MIN_MW_INDEX;
}

/* ah.c */
extern const struct ib_device_ops sroce_ah_ops;
int sroce_av_from_attr(struct rxe_av *av, const struct rdma_ah_attr *attr);
int sroce_ah_get_av(struct sroce_dev *sdev, u32 num, struct ib_pd *pd,
		    struct rxe_av *av);

static inline bool sroce_qp_is_ud(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* UD and UC: no ACKs, a send WQE is done once its last packet is sent. */
static inline bool sroce_qp_unacked(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type != IB_QPT_RC;
}

/* icrc.c */
u32 sroce_icrc_hdr(const void *l3, bool ipv6);
u32 sroce_icrc_packet(const void *l3, bool ipv6, size_t len);

/* net.c */
typedef void (*sroce_rx_fn)(struct sroce_dev *sdev, struct sk_buff *skb,
			    u32 local_pmtu);
void sroce_net_set_rx(sroce_rx_fn rx);
/* A network namespace's sockets, shared by its devices. */
struct sroce_net {
	struct socket	*sk4;
	struct socket	*sk6;		/* NULL with ipv6.disable=1 */
	unsigned int	users;		/* devices, +1: init_net's pin */
};

extern unsigned int sroce_net_id;
struct sroce_net *sroce_net_get(struct net *net);
void sroce_net_put(struct sroce_net *sn);
void sroce_net_close(struct net *net);
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp, const struct rxe_av *av,
				u16 sport, unsigned int len, struct page **big);
void sroce_big_head_free(struct page **big);
struct sk_buff *sroce_skb_alloc(unsigned int size, struct page **big,
				struct mem_cgroup *memcg);
int sroce_pkt_xmit(struct sroce_qp *qp, struct sk_buff *skb);
/* Packets of one send stream handed to the IP stack as one (net.c). */
struct sroce_pkt_batch {
	struct sk_buff	*head;	/* the first; the others on its frag_list */
	struct sk_buff	*tail;	/* the last on that list */
	unsigned int	n;
	u32		psn;	/* the first packet's */
};

bool sroce_pkt_batch_add(struct sroce_qp *qp, struct sroce_pkt_batch *b,
			 struct sk_buff *skb, u32 psn);
int sroce_pkt_batch_xmit(struct sroce_qp *qp, struct sroce_pkt_batch *b);

/* A packet of sroce_pkt_alloc() whose route stays in this host. */
static inline bool sroce_pkt_is_local(const struct sk_buff *skb)
{
	const struct dst_entry *dst = skb_dst(skb);

	return dst && (dst->dev->flags & IFF_LOOPBACK);
}

u32 *sroce_pkt_icrc_start(struct sk_buff *skb, const u8 *end, u32 *crc);
void sroce_pkt_icrc_end(struct sk_buff *skb, u32 *crc, unsigned int pad);
bool sroce_pkt_icrc_begin(struct sk_buff *skb, struct sroce_pkt *pkt);
bool sroce_rx_corrupt(struct sk_buff *skb);
bool sroce_pkt_icrc_ok(struct sroce_pkt *pkt);
bool sroce_pkt_from_peer(struct sroce_qp *qp, struct sroce_pkt *pkt);
u32 *sroce_pkt_icrc_copy(struct sroce_pkt *pkt, u32 *crc);
bool sroce_pkt_icrc_placed(struct sroce_pkt *pkt, u32 crc);

/* rx.c */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb, u32 local_pmtu);
void sroce_rx_local_psns(struct sroce_pkt *pkt, u32 sender_pmtu, u32 pmtu);

/* qp.c */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *a, int mask,
			enum ib_qp_state cur, enum ib_qp_state next);
int sroce_qp_ref_init(struct sroce_qp *qp);
int sroce_qpn_alloc(struct sroce_dev *sdev, struct sroce_qp *qp, u32 *qpn);
void sroce_qp_unlist(struct sroce_dev *sdev, struct sroce_qp *qp);
void sroce_qp_quiesce(struct sroce_qp *qp);
void sroce_qp_cq_armed(struct sroce_cq *cq);
void sroce_qp_flush_later(struct sroce_qp *qp);
void sroce_rq_err_work(struct work_struct *w);
void sroce_qp_error(struct sroce_qp *qp, u32 resets);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad);

/* tx.c */
void sroce_qp_run(struct sroce_qp *qp);
void sroce_qp_run_req(struct sroce_qp *qp);
void sroce_qp_run_resp(struct sroce_qp *qp);
void sroce_tx_work(struct work_struct *w);

/* mcast.c */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
u32 sroce_mcast_rcv(struct sroce_dev *sdev, struct sroce_pkt *pkt);
void sroce_mcast_netdev_added(struct sroce_dev *sdev, struct net_device *dev);
void sroce_mcast_cleanup(struct sroce_dev *sdev);

/* srq.c */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *a,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *a);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad);
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe,
		   bool *limit_hit);
void sroce_srq_event(struct sroce_srq *srq);

/* req.c */
/**
 * sroce_req_npkts() - packets (PSNs) a message of @len bytes takes
 * @opcode: the WR opcode (IB_WR_*, SROCE_WR_*)
 * @len: message length
 * @pmtu: path MTU in bytes
 *
 * A zero-length message is still one packet. A compare-and-swap or
 * fetch-and-add is one packet whatever the length of its WQE, which is
 * that of the local buffer for the result (any size from 8 bytes).
 *
 * Return: the count, >= 1.
 */
static inline u32 sroce_req_npkts(u32 opcode, u32 len, u32 pmtu)
{
	if (opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    opcode == IB_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return len ? DIV_ROUND_UP(len, pmtu) : 1;
}

u32 sroce_req_fetch(struct sroce_qp *qp);
u32 sroce_req_swqe_want(struct sroce_qp *qp);
u8 *sroce_req_swqe_swap(struct sroce_qp *qp, u8 *swqe, u32 n);
struct sk_buff *sroce_req_next(struct sroce_qp *qp, u32 *psn);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
void sroce_req_tx_dropped(struct sroce_qp *qp, u32 psn);
void sroce_req_arm_timer(struct sroce_qp *qp);
enum hrtimer_restart sroce_req_timer(struct hrtimer *t);
u8 sroce_req_opcode(u32 wr_opcode, bool first, bool last);
u32 sroce_rd_chunk_pkts(u8 max_rd_atomic);
u16 sroce_cwnd_grow(u16 cwnd, u16 ssthresh, u32 acked);
u16 sroce_cwnd_cut(u32 win, bool timeout, u16 *ssthresh);
void sroce_req_loss(struct sroce_qp *qp, bool timeout);
u32 sroce_wire_window(u32 pmtu);
u32 sroce_req_chunk(struct sroce_qp *qp, const struct sroce_swqe *w);
u64 sroce_ack_timeout_ns(u8 timeout);
void sroce_rtt_sample(struct sroce_rtt *r, u32 us);
u64 sroce_rto_ns(u64 ibta_ns, const struct sroce_rtt *r, u8 backoff);
u64 sroce_req_rto_ns(struct sroce_qp *qp);
u64 sroce_rnr_timer_ns(u8 code);

/* resp.c */
/* qp->resp.in_msg: the kind of multi-packet message in progress. */
enum {
	SROCE_MSG_NONE,
	SROCE_MSG_SEND,
	SROCE_MSG_WRITE,
};

int sroce_resp_get_rwqe(struct sroce_qp *qp, struct sroce_pkt *pkt);
int sroce_resp_complete(struct sroce_qp *qp, struct sroce_wc *wc,
			bool solicited);
void sroce_resp_fail_rwqe(struct sroce_qp *qp, enum ib_wc_status st);
int sroce_resp_send(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 *nak);
int sroce_resp_write(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 *nak);

/*
 * An ODP MR is being faulted in (odp.c): the packet gets an RNR NAK and
 * comes again, the receive WQE stays taken.
 */
static inline bool sroce_resp_odp_miss(int err)
{
	return err == -EAGAIN || err == -ENOMEM;
}

void sroce_resp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);
bool sroce_resp_push(struct sroce_qp *qp, const struct sroce_rjob *j);
int sroce_resp_jobs_alloc(struct sroce_rjobs_mem *m, u32 max_dest_rd_atomic);
void sroce_resp_jobs_free(struct sroce_rjobs_mem *m);
void sroce_resp_jobs_init(struct sroce_qp *qp, struct sroce_rjobs_mem *m,
			  u32 max_dest_rd_atomic);
void sroce_resp_jobs_swap(struct sroce_qp *qp, struct sroce_rjobs_mem *m,
			  u32 max_dest_rd_atomic);
void sroce_resp_replay(struct sroce_qp *qp, const struct sroce_rjob *j);
void sroce_resp_reset(struct sroce_qp *qp);

enum sroce_psn_class {
	SROCE_PSN_EXPECTED,
	SROCE_PSN_DUPLICATE,
	SROCE_PSN_AHEAD,
};

enum sroce_psn_class sroce_resp_classify(u32 epsn, u32 psn);
int sroce_resp_opseq(u8 in_msg, u8 opcode, u8 *next);
u16 sroce_rd_pace_next(u16 pace, bool loss);
int sroce_flush_need(u32 plt, u32 sel);

/* resp_tx.c */
struct sk_buff *sroce_resp_next(struct sroce_qp *qp, u32 *psn);
void sroce_resp_rewind(struct sroce_qp *qp, u32 psn);

/* uc_ud.c */
void sroce_resp_ud(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_resp_uc(struct sroce_qp *qp, struct sroce_pkt *pkt);
bool sroce_resp_uc_accept(u8 in_msg, u32 epsn, u32 psn, u8 opcode,
			  bool *abandon);

/* comp.c */
void sroce_comp_rcv(struct sroce_qp *qp, struct sroce_pkt *pkt);
void sroce_comp_fail_head(struct sroce_qp *qp);
int sroce_comp_ack(struct sroce_qp *qp, u32 psn, bool implied);
int sroce_comp_nak_seq(struct sroce_qp *qp, u32 psn);
void sroce_comp_flush(struct sroce_qp *qp);
void sroce_comp_sent(struct sroce_qp *qp);

enum sroce_ack_action {
	SROCE_ACK_OK,		/* positive ACK */
	SROCE_ACK_RNR,		/* wait the RNR timer, then retry */
	SROCE_ACK_RETRY,	/* go back N from the NAK's PSN */
	SROCE_ACK_FATAL,	/* complete in error, QP to ERR */
	SROCE_ACK_IGNORE,	/* reserved syndrome: drop */
};

enum sroce_ack_action sroce_comp_classify(u8 syn, enum ib_wc_status *st);

/*
 * Keys of MRs and MWs: (index << 8) | key8, the layout the rxe provider
 * relies on for memory windows. The key byte changes on every reuse of an
 * index so that a stale key does not match a new object.
 */
static inline u32 sroce_key_make(u32 index, u8 key8)
{
	return (index << 8) | key8;
}

static inline u32 sroce_key_index(u32 key)
{
	return key >> 8;
}

static inline u8 sroce_key_byte(u32 key)
{
	return key & 0xff;
}

/*
 * A new MR's or window's key byte: at random, as rdma_rxe draws its keys,
 * so that one rkey a peer learns does not tell it the next; never 0, so
 * that key 0 never names an MR.
 */
static inline u8 sroce_key_random(void)
{
	return get_random_u32() % 255 + 1;
}

#include "compat.h"

#endif /* SROCE_H */
