// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-stress: concurrent random verbs, valid and invalid, on one device.
 *
 * N threads for S seconds pick random operations over shared tables of
 * objects of every type: PDs, MRs, completion channels, CQs, SRQs, QPs (RC,
 * UC, UD), AHs and MWs (types 1 and 2); they create, destroy, resize,
 * modify, bind, post, poll and query them with random parameters, some
 * valid, some definitely invalid (caps above the device's limits, bad
 * access flags, unmapped addresses, bad ports and GID indexes, opcodes the
 * QP type does not have, SGE counts above the cap, ...). The tables are
 * shared by all threads, so one thread's QP sits on another's CQ and PD,
 * and destroys race with uses of the same objects in the kernel.
 *
 * Each slot has a rwlock: a call that uses an object holds it shared, a
 * destroy holds it exclusive, so the tool never passes a freed object to
 * libibverbs. Each object counts the live objects that reference it in
 * the kernel (a QP its PD, CQs and SRQ, ...); a destroy of an object that
 * is referenced must fail with EBUSY, one of an object that is not must
 * succeed (unless a destroy of a referencing object was in flight).
 *
 * Every call's result is classified: ok; refused with an errno of the
 * allowed set; or unexpected: another errno, a success although the
 * parameters were definitely invalid, a refusal of a call that must
 * succeed. Each unexpected result is printed (call, parameters, errno).
 * At the end every object is destroyed and one line is printed:
 *   sroce-stress: ops=N ok=N refused=N unexpected=N TYPE=ok/refused/unexp...
 * Exit status: 0 when nothing unexpected happened, 1 otherwise, 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define SLOTS		12	/* objects of each type */
#define MAX_THREADS	64
#define MAX_WR		4	/* WRs in one post */
#define MAX_SGE		40	/* SGEs in one WR, above any device's cap */
#define ARENA		(8ull << 20)	/* memory the MRs cover */
#define HOLE		0x100000	/* 1 MiB PROT_NONE: unmapped addresses */
#define PAGE		4096
#define QKEY		0x11111111u
#define MAX_REPORTS	60	/* unexpected results printed in full */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum otype { O_PD, O_CH, O_CQ, O_SRQ, O_MR, O_MW, O_AH, O_QP, NR_OTYPES };

/* Counted categories: the object types, then the other calls. */
enum cat {
	C_PD, C_CH, C_CQ, C_SRQ, C_MR, C_MW, C_AH, C_QP,
	C_MODIFY, C_POST, C_POLL, C_QUERY, NR_CATS
};

static const char * const cat_name[] = {
	"pd", "channel", "cq", "srq", "mr", "mw", "ah", "qp",
	"modify", "post", "poll", "query",
};

enum expect { ANY, MUST_FAIL, MUST_SUCCEED };

struct obj {
	pthread_rwlock_t lock;	/* shared: in use; exclusive: (de)created */
	int live;
	void *h;		/* the ibv_* object */
	int deps;		/* live objects referencing this one */
	int pending;		/* destroys of those in flight */
	struct obj *parent[4];
	int nparents;
	/* copies readable without the lock (plain values, no pointers) */
	uint32_t lkey, rkey, qpn;
	uint64_t addr, len;
	int qpt, mw_type, bind_tried, has_srq, has_ch;
	/*
	 * A CQ or SRQ whose resize failed with ENOMEM under --faults: the
	 * rxe provider (rxe_resize_cq, rxe_modify_srq in rdma-core) unmaps
	 * the ring once the kernel has resized it and, if mapping the new
	 * one fails, leaves its pointer NULL; polling or posting would then
	 * crash in the provider. Such an object is only destroyed.
	 */
	int ringless;
	struct ibv_qp_cap cap;
	uint32_t srq_sge;
};

static struct obj tab[NR_OTYPES][SLOTS];

static struct {
	const char *dev;
	int threads;
	int seconds;
	unsigned long long seed;
	int gid_index;
	int verbose;
	int faults;
} opt = { .threads = 4, .seconds = 10, .seed = 1, .gid_index = -1 };

static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid gid;
static unsigned char *arena;
static unsigned char *hole;
static int stop;		/* read and written atomically */

static unsigned long n_ok[NR_CATS], n_refused[NR_CATS], n_unexp[NR_CATS];
static unsigned long n_completions, n_wc_errors, n_reports;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread unsigned long long rng;

static unsigned long long rnd64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int rnd(unsigned int n)
{
	return n ? rnd64() % n : 0;
}

static void add(unsigned long *v, long d)
{
	__atomic_add_fetch(v, d, __ATOMIC_RELAXED);
}

static int get(int *v)
{
	return __atomic_load_n(v, __ATOMIC_SEQ_CST);
}

static void iadd(int *v, int d)
{
	__atomic_add_fetch(v, d, __ATOMIC_SEQ_CST);
}

/*
 * The errnos a refusal may carry. Each was seen in the guest or is what
 * the kernel's verbs layer documents for the case:
 *   EINVAL      a parameter out of range, a bad QP state transition, an
 *               opcode or SGE count the QP cannot take
 *   ENOMEM      a table or a queue that cannot be allocated (huge caps)
 *   EBUSY       destroy of an object still referenced (CQ under a QP,
 *               PD under an MR, a channel under a CQ)
 *   EOPNOTSUPP  a feature the device does not have (ODP, a QP type)
 *   EPERM       a QP type reserved to privileged users (raw packet)
 *   EAGAIN      a transient refusal (resize while completions pend)
 *   ENOSPC      out of object numbers (QPNs, indexes) for the device
 *   ERANGE      a number out of range of the device (an AH's port)
 * Some calls add one of their own (see judge()'s callers).
 */
static const int allowed_errno[] = {
	EINVAL, ENOMEM, EBUSY, EOPNOTSUPP, EPERM, EAGAIN, ENOSPC, ERANGE,
};

static int allowed(int err, int extra)
{
	unsigned int i;

	if (extra && err == extra)
		return 1;
	for (i = 0; i < ARRAY_SIZE(allowed_errno); i++)
		if (err == allowed_errno[i])
			return 1;
	return 0;
}

/*
 * Classify a call's result: err is 0 on success or a positive errno; e
 * says what the parameters require; extra is one more errno allowed for
 * this call (0: none). The parameters are described by fmt. Returns 1
 * when the call succeeded.
 */
static int judge(enum cat c, const char *call, int err, enum expect e,
		 int extra, const char *fmt, ...)
{
	const char *why = NULL;
	char buf[512];
	va_list ap;

	if (!err && e == MUST_FAIL)
		why = "succeeded although the parameters are invalid";
	else if (err && e == MUST_SUCCEED && !(opt.faults && err == ENOMEM))
		why = "refused although the parameters are valid";
	else if (err && !allowed(err, extra))
		why = "refused with an errno outside the allowed set";
	if (!why) {
		add(err ? &n_refused[c] : &n_ok[c], 1);
		if (opt.verbose > 1) {
			va_start(ap, fmt);
			vsnprintf(buf, sizeof(buf), fmt, ap);
			va_end(ap);
			fprintf(stderr, "%s(%s) = %s\n", call, buf,
				err ? strerror(err) : "ok");
		}
		return !err;
	}
	add(&n_unexp[c], 1);
	if (__atomic_add_fetch(&n_reports, 1, __ATOMIC_RELAXED) > MAX_REPORTS)
		return !err;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&report_lock);
	fprintf(stderr, "UNEXPECTED: %s(%s): %s: %s (%d)\n", call, buf, why,
		err ? strerror(err) : "success", err);
	fflush(stderr);
	pthread_mutex_unlock(&report_lock);
	return !err;
}

/* The errno of a call that returned ret (an errno, or -1 and errno). */
static int rc_err(int ret)
{
	if (ret == 0)
		return 0;
	if (ret < 0)
		return errno ? errno : -ret;
	return ret;
}

/* A NULL-returning create's errno; 0 would read as success. */
static int null_err(void)
{
	return errno ? errno : -1;
}

/* --- slots --------------------------------------------------------- */

/* A slot of type t held shared, live; NULL if none could be had. */
static struct obj *use(enum otype t)
{
	struct obj *o = &tab[t][rnd(SLOTS)];

	if (pthread_rwlock_tryrdlock(&o->lock))
		return NULL;
	if (!o->live) {
		pthread_rwlock_unlock(&o->lock);
		return NULL;
	}
	return o;
}

static void unuse(struct obj *o)
{
	if (o)
		pthread_rwlock_unlock(&o->lock);
}

/* A random slot of type t held exclusive, live or not. */
static struct obj *own(enum otype t)
{
	struct obj *o = &tab[t][rnd(SLOTS)];

	if (pthread_rwlock_trywrlock(&o->lock))
		return NULL;
	return o;
}

static void set_parents(struct obj *o, struct obj *a, struct obj *b,
			struct obj *c, struct obj *d)
{
	struct obj *p[4] = { a, b, c, d };
	int i;

	o->nparents = 0;
	for (i = 0; i < 4; i++) {
		if (!p[i])
			continue;
		o->parent[o->nparents++] = p[i];
		iadd(&p[i]->deps, 1);
	}
}

/*
 * Destroy o (held exclusive) with fn; its parents see a destroy in flight
 * while it runs. Whether it must succeed depends on the objects that
 * reference it, counted before and after.
 */
static int destroy(enum cat c, const char *call, struct obj *o,
		   int (*fn)(void *), int strict)
{
	int i, err, d1, p1, d2, p2;
	enum expect e = ANY;

	for (i = 0; i < o->nparents; i++)
		iadd(&o->parent[i]->pending, 1);
	d1 = get(&o->deps);
	p1 = get(&o->pending);
	err = rc_err(fn(o->h));
	d2 = get(&o->deps);
	p2 = get(&o->pending);
	if (strict && !p1 && !p2 && d1 == d2)
		e = d1 ? MUST_FAIL : MUST_SUCCEED;
	judge(c, call, err, e, 0, "referenced by %d, %d destroys in flight",
	      d1, p1);
	if (!err) {
		o->live = 0;
		o->h = NULL;
		for (i = 0; i < o->nparents; i++)
			iadd(&o->parent[i]->deps, -1);
	}
	for (i = 0; i < o->nparents; i++)
		iadd(&o->parent[i]->pending, -1);
	return err;
}

static int d_pd(void *h) { return ibv_dealloc_pd(h); }
static int d_ch(void *h) { return ibv_destroy_comp_channel(h); }
static int d_cq(void *h) { return ibv_destroy_cq(h); }
static int d_srq(void *h) { return ibv_destroy_srq(h); }
static int d_mr(void *h) { return ibv_dereg_mr(h); }
static int d_mw(void *h) { return ibv_dealloc_mw(h); }
static int d_ah(void *h) { return ibv_destroy_ah(h); }
static int d_qp(void *h) { return ibv_destroy_qp(h); }

/* --- values -------------------------------------------------------- */

/* A count for a cap whose limit is max: mostly valid, sometimes not. */
static uint32_t cap_val(uint32_t max, int *bad)
{
	switch (rnd(8)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return max;
	case 3:
		*bad = 1;
		return max + 1;
	case 4:
		*bad = 1;
		return rnd(2) ? 0xffffffffu : 0x80000000u;
	default:
		return 1 + rnd(max < 64 ? max : 64);
	}
}

static uint32_t nasty32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 5, 6, 7, 8, 31, 32, 255, 256, 0xffffff, 0x1000000,
		0x7fffffff, 0x80000000, 0xffffffff,
	};

	if (rnd(3) == 0)
		return (uint32_t)rnd64();
	return v[rnd(ARRAY_SIZE(v))];
}

/* --- PD, completion channel ------------------------------------------ */

static void *c_pd(void) { return ibv_alloc_pd(ctx); }
static void *c_ch(void) { return ibv_create_comp_channel(ctx); }

/* An object made from the context alone: a PD or a completion channel. */
static void op_plain(enum otype t, enum cat c, const char *create_call,
		     void *(*create)(void), const char *destroy_call,
		     int (*d)(void *))
{
	struct obj *o = own(t);

	if (!o)
		return;
	if (o->live) {
		destroy(c, destroy_call, o, d, 1);
	} else {
		errno = 0;
		o->h = create();
		if (judge(c, create_call, o->h ? 0 : null_err(), ANY, 0, "-"))
			o->live = 1;
	}
	pthread_rwlock_unlock(&o->lock);
}

static void op_pd(void)
{
	op_plain(O_PD, C_PD, "ibv_alloc_pd", c_pd, "ibv_dealloc_pd", d_pd);
}

static void op_ch(void)
{
	op_plain(O_CH, C_CH, "ibv_create_comp_channel", c_ch,
		 "ibv_destroy_comp_channel", d_ch);
}

/* --- CQ --------------------------------------------------------------- */

static int cqe_val(int *bad)
{
	int max = dattr.max_cqe;

	switch (rnd(7)) {
	case 0:
		*bad = 1;
		return 0;
	case 1:
		return 1;
	case 2:
		return max;
	case 3:
		*bad = 1;
		return max + 1;
	case 4:
		*bad = 1;
		return rnd(2) ? 0x7fffffff : -1;
	default:
		return 1 + rnd(256);
	}
}

static void op_cq(void)
{
	struct obj *o = own(O_CQ), *ch = NULL;
	int bad = 0, cqe, vec, err;
	struct ibv_cq *cq;

	if (!o)
		return;
	if (o->live && rnd(3) == 0) {
		cqe = cqe_val(&bad);
		err = rc_err(ibv_resize_cq(o->h, cqe));
		judge(C_CQ, "ibv_resize_cq", err, bad ? MUST_FAIL : ANY, 0,
		      "cqe=%d max_cqe=%d", cqe, dattr.max_cqe);
		if (opt.faults && err == ENOMEM)
			o->ringless = 1;
	} else if (o->live) {
		destroy(C_CQ, "ibv_destroy_cq", o, d_cq, 1);
	} else {
		cqe = cqe_val(&bad);
		if (rnd(2))
			ch = use(O_CH);
		vec = 0;
		if (rnd(8) == 0) {
			vec = rnd(2) ? ctx->num_comp_vectors : -1;
			bad = 1;
		}
		errno = 0;
		cq = ibv_create_cq(ctx, cqe, NULL, ch ? ch->h : NULL, vec);
		if (judge(C_CQ, "ibv_create_cq", cq ? 0 : null_err(),
			  bad ? MUST_FAIL : ANY, 0,
			  "cqe=%d max_cqe=%d channel=%d comp_vector=%d", cqe,
			  dattr.max_cqe, !!ch, vec)) {
			o->h = cq;
			o->live = 1;
			o->ringless = 0;
			o->has_ch = !!ch;
			set_parents(o, ch, NULL, NULL, NULL);
		}
		unuse(ch);
	}
	pthread_rwlock_unlock(&o->lock);
}

/* --- SRQ -------------------------------------------------------------- */

static void post_srq_recv(struct obj *o);

static void op_srq(void)
{
	struct ibv_srq_init_attr ia = { 0 };
	struct ibv_srq_attr sa = { 0 };
	struct obj *o, *pd;
	int bad = 0, err, mask;
	struct ibv_srq *srq;

	if (rnd(2)) {
		/* use it: shared */
		o = use(O_SRQ);
		if (!o)
			return;
		switch (rnd(3)) {
		case 0:
			err = rc_err(ibv_query_srq(o->h, &sa));
			judge(C_QUERY, "ibv_query_srq", err, MUST_SUCCEED, 0,
			      "-");
			break;
		case 1:
			mask = rnd(4);
			sa.max_wr = cap_val(dattr.max_srq_wr, &bad);
			sa.srq_limit = rnd(2) ? rnd(16) : nasty32();
			if ((mask & IBV_SRQ_MAX_WR) &&
			    sa.max_wr > (uint32_t)dattr.max_srq_wr)
				bad = 1;
			else if (!(mask & IBV_SRQ_MAX_WR))
				bad = 0;
			err = rc_err(ibv_modify_srq(o->h, &sa, mask));
			judge(C_SRQ, "ibv_modify_srq", err,
			      bad ? MUST_FAIL : ANY, 0,
			      "mask=%#x max_wr=%u srq_limit=%u", mask,
			      sa.max_wr, sa.srq_limit);
			if (opt.faults && err == ENOMEM &&
			    (mask & IBV_SRQ_MAX_WR))
				o->ringless = 1;
			break;
		default:
			if (!o->ringless)
				post_srq_recv(o);
		}
		unuse(o);
		return;
	}
	o = own(O_SRQ);
	if (!o)
		return;
	if (o->live) {
		destroy(C_SRQ, "ibv_destroy_srq", o, d_srq, 1);
	} else {
		pd = use(O_PD);
		if (!pd)
			goto out;
		ia.attr.max_wr = cap_val(dattr.max_srq_wr, &bad);
		ia.attr.max_sge = cap_val(dattr.max_srq_sge, &bad);
		ia.attr.srq_limit = rnd(4) ? 0 : nasty32();
		errno = 0;
		srq = ibv_create_srq(pd->h, &ia);
		if (judge(C_SRQ, "ibv_create_srq", srq ? 0 : null_err(),
			  bad ? MUST_FAIL : ANY, 0,
			  "max_wr=%u max_sge=%u srq_limit=%u (max %d, %d)",
			  ia.attr.max_wr, ia.attr.max_sge, ia.attr.srq_limit,
			  dattr.max_srq_wr, dattr.max_srq_sge)) {
			o->h = srq;
			o->live = 1;
			o->ringless = 0;
			o->srq_sge = ia.attr.max_sge;
			set_parents(o, pd, NULL, NULL, NULL);
		}
		unuse(pd);
	}
out:
	pthread_rwlock_unlock(&o->lock);
}

/* --- MR --------------------------------------------------------------- */

static void op_mr(void)
{
	struct obj *o = own(O_MR), *pd;
	int bad = 0, extra = 0, access, err, where;
	unsigned char *addr;
	struct ibv_mr *mr;
	uint64_t len;

	if (!o)
		return;
	if (o->live) {
		/* a bound MW may keep it (the kernel's choice) */
		destroy(C_MR, "ibv_dereg_mr", o, d_mr, !o->bind_tried);
		goto out;
	}
	pd = use(O_PD);
	if (!pd)
		goto out;
	addr = arena + rnd(ARENA / 2);
	where = rnd(9);
	switch (where) {
	case 0:
		len = 0;
		break;
	case 1:
		len = 1;
		break;
	case 2:
		addr = arena + rnd(ARENA / PAGE / 2) * PAGE;
		len = PAGE;
		break;
	case 3:
		len = 1 + rnd(ARENA / 2);
		break;
	case 4:
		len = rnd(2) ? 1ull << 40 : ~0ull - rnd(PAGE);
		bad = 1;
		extra = EFAULT;
		break;
	case 5:
		addr = NULL;	/* no page to pin: EFAULT */
		len = PAGE;
		extra = EFAULT;
		break;
	case 6:
		addr = hole + rnd(HOLE / 2);	/* PROT_NONE */
		len = 1 + rnd(HOLE / 2);
		extra = EFAULT;
		break;
	case 7:
		addr = arena + 1 + 2 * rnd(ARENA / 4);
		len = PAGE + 1;
		break;
	default:
		len = 64 + rnd(65536);
	}
	access = rnd(32);
	if (rnd(8) == 0)
		access |= IBV_ACCESS_ON_DEMAND;	/* a device may lack ODP */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		bad = 1;
	if (rnd(16) == 0) {
		access |= 1 << 13;	/* no such flag */
		bad = 1;
	}
	/*
	 * An ODP MR pins nothing when registered: any address will do. The
	 * core pins a read-only MR with FOLL_FORCE, which reads a PROT_NONE
	 * private mapping: only a writable one must fail there.
	 */
	if (!(access & IBV_ACCESS_ON_DEMAND) &&
	    (where == 5 || (where == 6 &&
			    (access & (IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_ATOMIC |
				       IBV_ACCESS_MW_BIND)))))
		bad = 1;
	errno = 0;
	mr = ibv_reg_mr(pd->h, addr, len, access);
	err = mr ? 0 : null_err();
	if (judge(C_MR, "ibv_reg_mr", err, bad ? MUST_FAIL : ANY, extra,
		  "addr=%p len=%#llx access=%#x", (void *)addr,
		  (unsigned long long)len, access)) {
		o->h = mr;
		o->live = 1;
		o->lkey = mr->lkey;
		o->rkey = mr->rkey;
		o->addr = (uintptr_t)addr;
		o->len = len;
		o->bind_tried = 0;
		set_parents(o, pd, NULL, NULL, NULL);
	}
	unuse(pd);
out:
	pthread_rwlock_unlock(&o->lock);
}

/* --- MW --------------------------------------------------------------- */

/*
 * Random bind info on a live MR (held shared by the caller). Always an
 * MR: rdma-core 44's rxe provider reads bind_info.mr->lkey even for an
 * unbind (mr NULL), and crashes on it.
 */
static void bind_info(struct ibv_mw_bind_info *bi, struct obj *mr)
{
	memset(bi, 0, sizeof(*bi));
	mr->bind_tried = 1;
	bi->mr = mr->h;
	bi->addr = mr->addr + (rnd(4) ? 0 : rnd(64));
	bi->length = rnd(2) ? mr->len : rnd(1 << 20);
	bi->mw_access_flags = rnd(16) & ~IBV_ACCESS_LOCAL_WRITE;
}

static void op_mw(void)
{
	struct ibv_mw_bind bind = { 0 };
	struct obj *o, *pd, *qp, *mr;
	enum ibv_mw_type type;
	struct ibv_mw *mw;
	int err, bad = 0;

	o = own(O_MW);
	if (!o)
		return;
	if (o->live && rnd(2)) {
		/* type 1: ibv_bind_mw on an RC QP (type 2 in post_send) */
		qp = use(O_QP);
		mr = use(O_MR);
		if (qp && mr && qp->qpt == IBV_QPT_RC) {
			bind_info(&bind.bind_info, mr);
			bind.wr_id = 7;
			bind.send_flags = rnd(2) ? IBV_SEND_SIGNALED : 0;
			err = rc_err(ibv_bind_mw(qp->h, o->h, &bind));
			bad = o->mw_type != IBV_MW_TYPE_1 ||
			      ((struct ibv_mr *)mr->h)->pd !=
			      ((struct ibv_mw *)o->h)->pd;
			judge(C_MW, "ibv_bind_mw", err, bad ? MUST_FAIL : ANY,
			      0, "type=%d mr=%#x addr=%#llx len=%#llx acc=%#x",
			      o->mw_type, mr->lkey,
			      (unsigned long long)bind.bind_info.addr,
			      (unsigned long long)bind.bind_info.length,
			      bind.bind_info.mw_access_flags);
		}
		unuse(mr);
		unuse(qp);
	} else if (o->live) {
		destroy(C_MW, "ibv_dealloc_mw", o, d_mw, 1);
	} else {
		pd = use(O_PD);
		if (!pd)
			goto out;
		type = rnd(2) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2;
		if (rnd(10) == 0) {
			type = rnd(2) ? 0 : 3;
			bad = 1;
		}
		errno = 0;
		mw = ibv_alloc_mw(pd->h, type);
		if (judge(C_MW, "ibv_alloc_mw", mw ? 0 : null_err(),
			  bad ? MUST_FAIL : ANY, 0, "type=%d", type)) {
			o->h = mw;
			o->live = 1;
			o->mw_type = type;
			o->rkey = mw->rkey;
			set_parents(o, pd, NULL, NULL, NULL);
		}
		unuse(pd);
	}
out:
	pthread_rwlock_unlock(&o->lock);
}

/* --- AH --------------------------------------------------------------- */

static void op_ah(void)
{
	struct ibv_ah_attr aa = { 0 };
	struct obj *o = own(O_AH), *pd;
	struct ibv_ah *ah;
	int bad = 0;

	if (!o)
		return;
	if (o->live) {
		destroy(C_AH, "ibv_destroy_ah", o, d_ah, 1);
		goto out;
	}
	pd = use(O_PD);
	if (!pd)
		goto out;
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = gid;
	aa.grh.sgid_index = opt.gid_index;
	aa.grh.hop_limit = 64;
	aa.sl = rnd(16);
	switch (rnd(6)) {
	case 0:
		aa.grh.sgid_index = rnd(2) ? pattr.gid_tbl_len : 255;
		bad = pattr.gid_tbl_len < 256;
		break;
	case 1:
		aa.port_num = rnd(2) ? 0 : dattr.phys_port_cnt + 1;
		bad = 1;
		break;
	default:
		break;
	}
	errno = 0;
	ah = ibv_create_ah(pd->h, &aa);
	/* ENODATA: the provider reads an empty GID entry's type in sysfs */
	if (judge(C_AH, "ibv_create_ah", ah ? 0 : null_err(),
		  bad ? MUST_FAIL : ANY, ENODATA, "port=%u sgid_index=%u sl=%u",
		  aa.port_num, aa.grh.sgid_index, aa.sl)) {
		o->h = ah;
		o->live = 1;
		set_parents(o, pd, NULL, NULL, NULL);
	}
	unuse(pd);
out:
	pthread_rwlock_unlock(&o->lock);
}

/* --- QP --------------------------------------------------------------- */

static void create_qp(struct obj *o)
{
	static const enum ibv_qp_type qp_types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	struct obj *pd, *scq, *rcq, *srq = NULL;
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp *qp;
	int bad = 0;

	pd = use(O_PD);
	scq = use(O_CQ);
	rcq = rnd(2) ? use(O_CQ) : NULL;
	if (!pd || !scq)
		goto out;
	if (rnd(3) == 0)
		srq = use(O_SRQ);
	ia.qp_type = qp_types[rnd(ARRAY_SIZE(qp_types))];
	if (rnd(24) == 0) {
		ia.qp_type = rnd(2) ? IBV_QPT_RAW_PACKET : 0x7f;
		bad = 1;
	}
	ia.send_cq = scq->h;
	ia.recv_cq = rcq ? rcq->h : scq->h;
	ia.srq = srq ? srq->h : NULL;
	ia.sq_sig_all = rnd(2);
	ia.cap.max_send_wr = cap_val(dattr.max_qp_wr, &bad);
	ia.cap.max_send_sge = cap_val(dattr.max_sge, &bad);
	if (srq) {
		ia.cap.max_recv_wr = rnd(4);
		ia.cap.max_recv_sge = rnd(2);
	} else {
		ia.cap.max_recv_wr = cap_val(dattr.max_qp_wr, &bad);
		ia.cap.max_recv_sge = cap_val(dattr.max_sge, &bad);
	}
	ia.cap.max_inline_data = rnd(4) ? rnd(256) : nasty32();
	errno = 0;
	qp = ibv_create_qp(pd->h, &ia);
	if (judge(C_QP, "ibv_create_qp", qp ? 0 : null_err(),
		  bad ? MUST_FAIL : ANY, 0,
		  "type=%d srq=%d send_wr=%u recv_wr=%u send_sge=%u recv_sge=%u inline=%u (max wr %d sge %d)",
		  ia.qp_type, !!srq, ia.cap.max_send_wr, ia.cap.max_recv_wr,
		  ia.cap.max_send_sge, ia.cap.max_recv_sge,
		  ia.cap.max_inline_data, dattr.max_qp_wr, dattr.max_sge)) {
		o->h = qp;
		o->live = 1;
		o->qpt = ia.qp_type;
		o->qpn = qp->qp_num;
		o->cap = ia.cap;	/* as the kernel granted them */
		o->has_srq = !!srq;
		set_parents(o, pd, scq, rcq ? rcq : scq, srq);
	}
out:
	unuse(srq);
	unuse(rcq);
	unuse(scq);
	unuse(pd);
}

/* A random live QP's number, or a random number. */
static uint32_t some_qpn(void)
{
	struct obj *o = &tab[O_QP][rnd(SLOTS)];
	uint32_t n = __atomic_load_n(&o->qpn, __ATOMIC_RELAXED);

	return n && rnd(4) ? n : nasty32() & 0xffffff;
}

static void fill_av(struct ibv_ah_attr *av)
{
	memset(av, 0, sizeof(*av));
	av->is_global = 1;
	av->port_num = 1;
	av->grh.dgid = gid;
	av->grh.sgid_index = opt.gid_index;
	av->grh.hop_limit = 64;
}

static int modify(struct obj *o, struct ibv_qp_attr *a, int mask,
		  enum expect e, const char *what)
{
	int err = rc_err(ibv_modify_qp(o->h, a, mask)), extra = 0;

	/*
	 * With an AV, the core looks the source GID up (ENODATA: no GID at
	 * sgid_index) and resolves the destination's MAC (ENETUNREACH: no
	 * route to dgid, e.g. ::).
	 */
	if ((mask & IBV_QP_AV) && (err == ENODATA || err == ENETUNREACH))
		extra = err;
	return judge(C_MODIFY, "ibv_modify_qp", err, e, extra,
		     "%s: type=%d qpn=%#x mask=%#x state=%d", what, o->qpt,
		     o->qpn, mask, a->qp_state);
}

/* RESET, INIT, RTR, RTS with valid attributes: each must succeed. */
static void connect_qp(struct obj *o)
{
	struct ibv_qp_attr a = { 0 };
	int t = o->qpt;

	a.qp_state = IBV_QPS_RESET;
	if (!modify(o, &a, IBV_QP_STATE, MUST_SUCCEED, "to RESET"))
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	if (t == IBV_QPT_UD) {
		a.qkey = QKEY;
		if (!modify(o, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY, MUST_SUCCEED,
			    "RESET to INIT"))
			return;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		if (t == IBV_QPT_UC)
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (!modify(o, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, MUST_SUCCEED,
			    "RESET to INIT"))
			return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (t == IBV_QPT_UD) {
		if (!modify(o, &a, IBV_QP_STATE, MUST_SUCCEED, "INIT to RTR"))
			return;
	} else {
		fill_av(&a.ah_attr);
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = some_qpn();
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		if (!modify(o, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (t == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER : 0), MUST_SUCCEED,
			    "INIT to RTR"))
			return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (t == IBV_QPT_RC) {
		a.timeout = 8 + rnd(4);
		a.retry_cnt = rnd(3);
		a.rnr_retry = rnd(3);
		a.max_rd_atomic = 1;
		modify(o, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC, MUST_SUCCEED, "RTR to RTS");
	} else {
		modify(o, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, MUST_SUCCEED,
		       "RTR to RTS");
	}
}

/* Any transition, any attributes: only some values are judged. */
static void modify_random(struct obj *o)
{
	static const int masks[] = {
		IBV_QP_CUR_STATE, IBV_QP_EN_SQD_ASYNC_NOTIFY,
		IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT,
		IBV_QP_QKEY, IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_TIMEOUT,
		IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY, IBV_QP_RQ_PSN,
		IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_ALT_PATH,
		IBV_QP_MIN_RNR_TIMER, IBV_QP_SQ_PSN,
		IBV_QP_MAX_DEST_RD_ATOMIC, IBV_QP_PATH_MIG_STATE,
		IBV_QP_CAP, IBV_QP_DEST_QPN, IBV_QP_RATE_LIMIT,
	};
	struct ibv_qp_attr a = { 0 };
	unsigned int i, bad = 0;
	int mask = 0;

	if (rnd(8))
		mask |= IBV_QP_STATE;
	for (i = 0; i < ARRAY_SIZE(masks); i++)
		if (rnd(5) == 0)
			mask |= masks[i];
	/*
	 * uverbs carries the state in a u8: 256 arrives as 0 (RESET), a
	 * valid state, so the invalid ones stop at 255.
	 */
	a.qp_state = rnd(8) ? rnd(7) : 7 + rnd(249);
	a.cur_qp_state = rnd(7);
	a.qp_access_flags = rnd(16);
	a.pkey_index = rnd(4) ? 0 : nasty32();
	a.port_num = rnd(4) ? 1 : rnd(4);
	a.qkey = nasty32();
	if (rnd(2))
		fill_av(&a.ah_attr);
	else
		a.ah_attr.grh.sgid_index = rnd(256);
	a.ah_attr.port_num = rnd(4) ? 1 : rnd(4);
	a.ah_attr.is_global = rnd(4) != 0;
	a.path_mtu = rnd(4) ? 1 + rnd(5) : rnd(256);
	a.timeout = rnd(2) ? rnd(32) : rnd(256);	/* huge ones too */
	a.retry_cnt = rnd(2) ? rnd(8) : rnd(256);
	a.rnr_retry = rnd(2) ? rnd(8) : rnd(256);
	a.rq_psn = nasty32();
	a.sq_psn = nasty32();
	a.max_rd_atomic = rnd(2) ? rnd(dattr.max_qp_rd_atom + 1) : rnd(256);
	a.max_dest_rd_atomic = rnd(2) ? rnd(dattr.max_qp_init_rd_atom + 1) :
		rnd(256);
	a.min_rnr_timer = rnd(256);
	a.path_mig_state = rnd(4);
	a.cap.max_send_wr = nasty32();
	a.cap.max_recv_wr = nasty32();
	a.dest_qp_num = some_qpn();
	a.rate_limit = nasty32();
	a.alt_port_num = rnd(4);
	a.alt_timeout = rnd(256);

	/* Values no device can take, whatever the state. */
	if ((mask & IBV_QP_STATE) && a.qp_state > IBV_QPS_ERR)
		bad = 1;
	if ((mask & IBV_QP_PORT) &&
	    (a.port_num < 1 || a.port_num > dattr.phys_port_cnt))
		bad = 1;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
	    a.max_rd_atomic > dattr.max_qp_rd_atom)
		bad = 1;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
	    a.max_dest_rd_atomic > dattr.max_qp_init_rd_atom)
		bad = 1;
	if ((mask & IBV_QP_PATH_MTU) &&
	    (a.path_mtu < IBV_MTU_256 || a.path_mtu > IBV_MTU_4096))
		bad = 1;
	if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > 7)
		bad = 1;
	if ((mask & IBV_QP_RNR_RETRY) && a.rnr_retry > 7)
		bad = 1;
	if ((mask & IBV_QP_AV) && a.ah_attr.is_global &&
	    a.ah_attr.grh.sgid_index >= pattr.gid_tbl_len)
		bad = 1;
	modify(o, &a, mask, bad ? MUST_FAIL : ANY, "random");
}

static void post_send(struct obj *qp);
static void post_recv(struct obj *qp);

static void op_qp(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct obj *o;
	int err;

	switch (rnd(8)) {
	case 0:
	case 1:
		o = use(O_QP);
		if (!o)
			return;
		switch (rnd(4)) {
		case 0:
			/* every attribute up to IBV_QP_DEST_QPN */
			err = rc_err(ibv_query_qp(o->h, &a,
						  (IBV_QP_DEST_QPN << 1) - 1,
						  &ia));
			judge(C_QUERY, "ibv_query_qp", err, MUST_SUCCEED, 0,
			      "qpn=%#x", o->qpn);
			break;
		case 1:
			post_recv(o);
			break;
		default:
			post_send(o);
		}
		unuse(o);
		return;
	case 2:
		o = use(O_QP);
		if (o)
			post_send(o);
		unuse(o);
		return;
	}
	/* Modifies exclusive: connect_qp's path is not interleaved. */
	o = own(O_QP);
	if (!o)
		return;
	if (!o->live)
		create_qp(o);
	else if (rnd(4) == 0)
		destroy(C_QP, "ibv_destroy_qp", o, d_qp, 1);
	else if (rnd(3) == 0)
		connect_qp(o);
	else
		modify_random(o);
	if (!o->live)
		o->qpn = 0;
	pthread_rwlock_unlock(&o->lock);
}

/* --- posts ------------------------------------------------------------ */

/* SGEs on random MRs (their keys, valid or not), n of them. */
static void fill_sges(struct ibv_sge *sg, int n)
{
	struct obj *mr;
	int i;

	for (i = 0; i < n; i++) {
		mr = &tab[O_MR][rnd(SLOTS)];
		sg[i].lkey = rnd(4) ? __atomic_load_n(&mr->lkey,
						      __ATOMIC_RELAXED) :
			nasty32();
		sg[i].addr = (uintptr_t)arena + rnd(ARENA - 65536);
		sg[i].length = rnd(4) ? rnd(4096) : nasty32();
		if (rnd(16) == 0)
			sg[i].addr = rnd(2) ? 0 : (uintptr_t)hole;
	}
}

/* One SGE inside a random MR as registered (it may be gone since). */
static void clean_sge(struct ibv_sge *sg)
{
	struct obj *mr = &tab[O_MR][rnd(SLOTS)];
	uint64_t len = __atomic_load_n(&mr->len, __ATOMIC_RELAXED);
	uint64_t off = len > 1 ? rnd(len / 2) : 0;

	sg->lkey = __atomic_load_n(&mr->lkey, __ATOMIC_RELAXED);
	sg->addr = __atomic_load_n(&mr->addr, __ATOMIC_RELAXED) + off;
	sg->length = len - off < 1024 ? len - off : 1 + rnd(1024);
}

/* Half the posts are valid work: traffic between the QPs. */
static void clean_send(struct ibv_send_wr *wr, int qpt, uint32_t max_sge)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	struct obj *mr = &tab[O_MR][rnd(SLOTS)];

	wr->opcode = ops[rnd(qpt == IBV_QPT_UD ? 2 : qpt == IBV_QPT_UC ?
				 4 : 5)];
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->num_sge = max_sge ? 1 : 0;
	if (wr->num_sge)
		clean_sge(wr->sg_list);
	wr->wr.rdma.rkey = __atomic_load_n(&mr->rkey, __ATOMIC_RELAXED);
	wr->wr.rdma.remote_addr = __atomic_load_n(&mr->addr,
						  __ATOMIC_RELAXED);
}

static int sge_count(uint32_t cap, int *bad)
{
	int n = rnd(cap + 1);

	if (rnd(8) == 0) {
		n = cap + 1 + rnd(MAX_SGE - cap - 1);
		*bad = 1;
	}
	return n;
}

static int opcode_ok(int qpt, int op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return qpt != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_BIND_MW:
		return qpt == IBV_QPT_RC;
	}
	return -1;	/* one the device need not have (TSO, ...) */
}

static void post_send(struct obj *qp)
{
	struct ibv_send_wr wr[MAX_WR], *badwr = NULL;
	struct ibv_sge sg[MAX_WR][MAX_SGE];
	struct obj *ah = NULL, *mw = NULL, *mr = NULL, *mro;
	int i, n = 1 + rnd(MAX_WR), bad = 0, err, ok, op0 = -1, inl;
	int clean = rnd(2);
	uint32_t total, j;

	memset(wr, 0, sizeof(wr));
	if (qp->qpt == IBV_QPT_UD) {
		ah = use(O_AH);
		if (!ah)
			return;
	}
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].opcode = rnd(16) ? rnd(IBV_WR_BIND_MW + 1) : rnd(256);
		if (wr[i].opcode == IBV_WR_BIND_MW) {
			/* Needs a live MW: at most one per post. */
			if (!mw)
				mw = use(O_MW);
			if (mw && !mr)
				mr = use(O_MR);
			if (!mw || !mr) {
				wr[i].opcode = IBV_WR_SEND;
			} else {
				wr[i].bind_mw.mw = mw->h;
				wr[i].bind_mw.rkey = mw->rkey + 1 + rnd(3);
				bind_info(&wr[i].bind_mw.bind_info, mr);
			}
		}
		/*
		 * The provider writes any known opcode to the ring: the
		 * kernel refuses one the QP type lacks when it executes
		 * it (checked in op_poll), not here.
		 */
		ok = opcode_ok(qp->qpt, wr[i].opcode);
		wr[i].num_sge = sge_count(qp->cap.max_send_sge, &bad);
		wr[i].sg_list = sg[i];
		fill_sges(sg[i], wr[i].num_sge);
		wr[i].send_flags = rnd(16);
		inl = wr[i].send_flags & IBV_SEND_INLINE;
		if (inl) {
			/* inline data is read from the SGEs: real memory */
			total = 0;
			for (j = 0; j < (uint32_t)wr[i].num_sge; j++) {
				sg[i][j].addr = (uintptr_t)arena + rnd(4096);
				sg[i][j].length = rnd(512);
				total += sg[i][j].length;
			}
			if (total > qp->cap.max_inline_data &&
			    wr[i].num_sge <= (int)qp->cap.max_send_sge &&
			    ok > 0)
				bad = 1;
		}
		wr[i].imm_data = nasty32();
		wr[i].wr.rdma.remote_addr = (uintptr_t)arena + rnd(ARENA);
		mro = &tab[O_MR][rnd(SLOTS)];
		wr[i].wr.rdma.rkey = __atomic_load_n(&mro->rkey,
						     __ATOMIC_RELAXED);
		if (wr[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr =
				((uintptr_t)arena + rnd(ARENA)) & ~7ul;
			wr[i].wr.atomic.rkey = wr[i].wr.rdma.rkey;
			wr[i].wr.atomic.compare_add = rnd64();
			wr[i].wr.atomic.swap = rnd64();
		}
		if (wr[i].opcode == IBV_WR_LOCAL_INV ||
		    wr[i].opcode == IBV_WR_SEND_WITH_INV)
			wr[i].invalidate_rkey = wr[i].wr.rdma.rkey;
		if (clean)
			clean_send(&wr[i], qp->qpt, qp->cap.max_send_sge);
		if (ah) {
			wr[i].wr.ud.ah = ah->h;
			wr[i].wr.ud.remote_qpn = some_qpn();
			wr[i].wr.ud.remote_qkey = rnd(4) ? QKEY : nasty32();
		}
	}
	if (clean)
		bad = 0;
	op0 = wr[0].opcode;
	err = rc_err(ibv_post_send(qp->h, wr, &badwr));
	judge(C_POST, "ibv_post_send", err, bad ? MUST_FAIL : ANY, 0,
	      "clean=%d type=%d qpn=%#x wrs=%d opcode[0]=%d num_sge[0]=%d flags[0]=%#x max_sge=%u max_inline=%u",
	      clean, qp->qpt, qp->qpn, n, op0, wr[0].num_sge, wr[0].send_flags,
	      qp->cap.max_send_sge, qp->cap.max_inline_data);
	unuse(mr);
	unuse(mw);
	unuse(ah);
}

static void post_recv(struct obj *qp)
{
	struct ibv_recv_wr wr[MAX_WR], *badwr = NULL;
	struct ibv_sge sg[MAX_WR][MAX_SGE];
	int i, n = 1 + rnd(MAX_WR), bad = 0, err, clean = rnd(2);

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].num_sge = sge_count(qp->cap.max_recv_sge, &bad);
		wr[i].sg_list = sg[i];
		fill_sges(sg[i], wr[i].num_sge);
		if (clean) {
			wr[i].num_sge = qp->cap.max_recv_sge ? 1 : 0;
			clean_sge(sg[i]);
		}
	}
	if (clean)
		bad = 0;
	err = rc_err(ibv_post_recv(qp->h, wr, &badwr));
	judge(C_POST, "ibv_post_recv", err, bad ? MUST_FAIL : ANY, 0,
	      "clean=%d type=%d qpn=%#x srq=%d wrs=%d num_sge[0]=%d max_sge=%u",
	      clean, qp->qpt, qp->qpn, qp->has_srq, n, wr[0].num_sge,
	      qp->cap.max_recv_sge);
}

static void post_srq_recv(struct obj *o)
{
	struct ibv_recv_wr wr[MAX_WR], *badwr = NULL;
	struct ibv_sge sg[MAX_WR][MAX_SGE];
	int i, n = 1 + rnd(MAX_WR), bad = 0, err;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].num_sge = sge_count(o->srq_sge, &bad);
		wr[i].sg_list = sg[i];
		fill_sges(sg[i], wr[i].num_sge);
	}
	err = rc_err(ibv_post_srq_recv(o->h, wr, &badwr));
	judge(C_POST, "ibv_post_srq_recv", err, bad ? MUST_FAIL : ANY, 0,
	      "wrs=%d num_sge[0]=%d max_sge=%u", n, wr[0].num_sge,
	      o->srq_sge);
}

/* --- poll, query ------------------------------------------------------ */

/*
 * A successful completion of an operation the QP's type does not have:
 * the kernel executed a WQE it must have refused.
 */
static void check_wc(struct ibv_wc *wc)
{
	struct obj *q;
	int i, t = -1;

	if (wc->status != IBV_WC_SUCCESS)
		return;
	for (i = 0; i < SLOTS; i++) {
		q = &tab[O_QP][i];
		if (__atomic_load_n(&q->qpn, __ATOMIC_RELAXED) == wc->qp_num)
			t = __atomic_load_n(&q->qpt, __ATOMIC_RELAXED);
	}
	if (t < 0 || t == IBV_QPT_RC)
		return;
	switch (wc->opcode) {
	case IBV_WC_RDMA_READ:
	case IBV_WC_COMP_SWAP:
	case IBV_WC_FETCH_ADD:
		break;
	case IBV_WC_RDMA_WRITE:
	case IBV_WC_RECV_RDMA_WITH_IMM:
		if (t == IBV_QPT_UD)
			break;
		return;
	default:
		return;
	}
	judge(C_POLL, "ibv_poll_cq", 0, MUST_FAIL, 0,
	      "completion of opcode %d with success on a QP of type %d, qpn %#x",
	      wc->opcode, t, wc->qp_num);
}

static void op_poll(void)
{
	struct ibv_wc wc[16];
	struct obj *o = use(O_CQ);
	int n, i;

	if (!o)
		return;
	if (o->ringless) {
		unuse(o);
		return;
	}
	n = ibv_poll_cq(o->h, 1 + rnd(16), wc);
	if (judge(C_POLL, "ibv_poll_cq", n < 0 ? EIO : 0, ANY, 0,
		  "returned %d", n)) {
		add(&n_completions, n);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				add(&n_wc_errors, 1);
			check_wc(&wc[i]);
		}
	}
	if (!o->has_ch && rnd(4) == 0)
		judge(C_POLL, "ibv_req_notify_cq",
		      rc_err(ibv_req_notify_cq(o->h, rnd(2))), MUST_SUCCEED, 0,
		      "-");
	unuse(o);
}

static void op_query(void)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g;
	int port, err;

	switch (rnd(3)) {
	case 0:
		err = rc_err(ibv_query_device(ctx, &da));
		judge(C_QUERY, "ibv_query_device", err, MUST_SUCCEED, 0, "-");
		break;
	case 1:
		port = rnd(4) ? 1 : rnd(2) ? 0 : dattr.phys_port_cnt + 1;
		err = rc_err(ibv_query_port(ctx, port, &pa));
		judge(C_QUERY, "ibv_query_port", err,
		      port == 1 ? MUST_SUCCEED : MUST_FAIL, 0, "port=%d",
		      port);
		break;
	default:
		err = rc_err(ibv_query_gid(ctx, 1, opt.gid_index, &g));
		judge(C_QUERY, "ibv_query_gid", err, MUST_SUCCEED, 0,
		      "index=%d", opt.gid_index);
	}
}

/* --- threads ---------------------------------------------------------- */

static int fault_mark_failed;

/*
 * Make this thread one the kernel's fault injection may fail allocations
 * for (with CONFIG_FAULT_INJECTION; the test sets the rest up in
 * debugfs). The main thread stays unmarked: opening the device and the
 * final teardown must not fail.
 */
static int mark_for_faults(void)
{
	int fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
	int n = fd < 0 ? -1 : write(fd, "1\n", 2);

	if (fd >= 0)
		close(fd);
	if (n != 2) {
		perror("sroce-stress: /proc/thread-self/make-it-fail");
		__atomic_store_n(&fault_mark_failed, 1, __ATOMIC_RELAXED);
		return -1;
	}
	return 0;
}

static void *worker(void *arg)
{
	static void (* const ops[])(void) = {
		op_pd, op_ch, op_cq, op_cq, op_srq, op_srq, op_mr, op_mr,
		op_mw, op_ah, op_qp, op_qp, op_qp, op_qp, op_poll, op_poll,
		op_query,
	};

	rng = opt.seed * 0x9e3779b97f4a7c15ull + (uintptr_t)arg + 1;
	rnd64();
	if (opt.faults && mark_for_faults())
		return NULL;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		ops[rnd(ARRAY_SIZE(ops))]();
	return NULL;
}

/* Destroy what is left, referencing objects first: all must go. */
static int teardown(void)
{
	static const struct {
		enum otype t;
		enum cat c;
		const char *call;
		int (*fn)(void *h);
	} order[] = {
		{ O_QP, C_QP, "ibv_destroy_qp", d_qp },
		{ O_MW, C_MW, "ibv_dealloc_mw", d_mw },
		{ O_AH, C_AH, "ibv_destroy_ah", d_ah },
		{ O_SRQ, C_SRQ, "ibv_destroy_srq", d_srq },
		{ O_MR, C_MR, "ibv_dereg_mr", d_mr },
		{ O_CQ, C_CQ, "ibv_destroy_cq", d_cq },
		{ O_CH, C_CH, "ibv_destroy_comp_channel", d_ch },
		{ O_PD, C_PD, "ibv_dealloc_pd", d_pd },
	};
	unsigned int i, j;
	int left = 0;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		for (j = 0; j < SLOTS; j++) {
			struct obj *o = &tab[order[i].t][j];

			if (!o->live)
				continue;
			/* the last one standing: no reason to refuse */
			if (destroy(order[i].c, order[i].call, o, order[i].fn,
				    1)) {
				fprintf(stderr, "%s: %s failed\n", __func__,
					order[i].call);
				left++;
			}
		}
	}
	return left;
}

static int open_dev(void)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), opt.dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "sroce-stress: cannot open %s\n", opt.dev);
		return -1;
	}
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pattr) ||
	    ibv_query_gid(ctx, 1, opt.gid_index, &gid)) {
		fprintf(stderr, "sroce-stress: cannot query %s\n", opt.dev);
		return -1;
	}
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-stress -d DEV --gid-index I [--threads N]\n"
		"                    [--seconds S] [--seed X] [--faults] [-v]\n"
		"  I  index of a RoCE v2 GID of DEV's port 1\n"
		"  --faults  mark the worker threads for the kernel's fault\n"
		"            injection (make-it-fail); ENOMEM is then allowed\n"
		"            from any call\n");
	exit(2);
}

static long num_arg(const char *s, long min, long max)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*end || !*s || v < min || v > max)
		print_usage();
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 's' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "faults", no_argument, NULL, 'f' },
		{ 0 }
	};
	unsigned long ops = 0, ok = 0, refused = 0, unexp = 0;
	pthread_t th[MAX_THREADS];
	double t0, t1, t2;
	int ch, i, j, left;

	while ((ch = getopt_long(argc, argv, "d:v", lo, NULL)) != -1) {
		switch (ch) {
		case 'd':
			opt.dev = optarg;
			break;
		case 't':
			opt.threads = num_arg(optarg, 1, MAX_THREADS);
			break;
		case 'S':
			opt.seconds = num_arg(optarg, 0, 86400);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'g':
			opt.gid_index = num_arg(optarg, 0, 65535);
			break;
		case 'v':
			opt.verbose++;
			break;
		case 'f':
			opt.faults = 1;
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc || !opt.dev || opt.gid_index < 0)
		print_usage();
	arena = mmap(NULL, ARENA + HOLE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	hole = arena + ARENA;
	if (mprotect(hole, HOLE, PROT_NONE)) {
		perror("mprotect");
		return 1;
	}
	memset(arena, 0x5a, ARENA);
	if (open_dev())
		return 1;
	for (i = 0; i < NR_OTYPES; i++)
		for (j = 0; j < SLOTS; j++)
			pthread_rwlock_init(&tab[i][j].lock, NULL);
	printf("# %s: max_qp_wr=%d max_sge=%d max_cqe=%d", opt.dev,
	       dattr.max_qp_wr, dattr.max_sge, dattr.max_cqe);
	printf(" max_srq_wr=%d max_srq_sge=%d max_qp_rd_atom=%d gid_tbl_len=%d\n",
	       dattr.max_srq_wr, dattr.max_srq_sge, dattr.max_qp_rd_atom,
	       pattr.gid_tbl_len);
	fflush(stdout);
	for (i = 0; i < opt.threads; i++)
		if (pthread_create(&th[i], NULL, worker,
				   (void *)(uintptr_t)i)) {
			perror("pthread_create");
			return 1;
		}
	sleep(opt.seconds);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	t0 = now();
	for (i = 0; i < opt.threads; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	left = teardown();
	t2 = now();
	if (ibv_close_device(ctx)) {
		fprintf(stderr, "sroce-stress: ibv_close_device failed\n");
		left++;
	}
	for (i = 0; i < NR_CATS; i++) {
		ok += n_ok[i];
		refused += n_refused[i];
		unexp += n_unexp[i];
	}
	ops = ok + refused + unexp;
	printf("sroce-stress: ops=%lu ok=%lu refused=%lu unexpected=%lu",
	       ops, ok, refused, unexp);
	for (i = 0; i < NR_CATS; i++)
		printf(" %s=%lu/%lu/%lu", cat_name[i], n_ok[i], n_refused[i],
		       n_unexp[i]);
	printf(" completions=%lu wc_errors=%lu left=%d\n", n_completions,
	       n_wc_errors, left);
	printf("# per type: ok/refused/unexpected; threads=%d seconds=%d seed=%llu\n",
	       opt.threads, opt.seconds, opt.seed);
	printf("# the threads stopped in %.1f s, the teardown took %.1f s\n",
	       t1 - t0, t2 - t1);
	return unexp || left || fault_mark_failed ? 1 : 0;
}
