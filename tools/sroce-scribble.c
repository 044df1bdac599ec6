// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-scribble: a hostile process that scribbles over its own queue rings.
 *
 * The rxe provider shares the SQ, RQ, SRQ and CQ rings with the kernel
 * through mmap of the uverbs fd (struct rxe_queue_buf: geometry, producer
 * and consumer index, then the slots). The kernel must never trust them.
 * Each round, in a child process of its own (the provider reads the same
 * shared header and may well crash on what we write; only the kernel's
 * behaviour matters), this tool opens DEV and creates a PD, an MR, CQs, an
 * SRQ, two RC QPs connected to each other over GID --gid-index (loopback:
 * A has its own RQ, B takes its receives from the SRQ) and a UD QP that
 * sends to itself. It finds the rings as the new mappings of
 * /dev/infiniband/uverbs* in /proc/self/maps after each object is created.
 * Then, --steps times, it either posts valid traffic (SEND, WRITE, READ,
 * UD SEND) or scribbles a ring: a random producer or consumer index, random
 * values in WQE fields (opcode, flags, num_sge, lengths, lkeys, rkeys,
 * addresses, ah_num, ...) of the next slot with the producer index moved
 * past it, a whole slot or a whole page of random bytes, or the header's
 * log2_elem_size or index_mask. After a scribble it rings each QP's
 * doorbell itself (the POST_SEND write() with no work requests that the
 * provider's ibv_post_send ends in: the kernel consumes the SQ) so that
 * the kernel sees the ring as scribbled even where the provider would
 * crash on it; then, three times in four, puts the header's geometry back
 * and masks the indexes so that the round can go on; then rings the
 * doorbells through the provider with valid work requests (ibv_post_send,
 * ibv_post_recv, ibv_post_srq_recv: receives are consumed when packets
 * arrive). Every step polls the CQs a bounded number of times. Last it
 * destroys everything. With --faults the child is marked for the
 * kernel's fault injection between setup and teardown.
 *
 * One summary line at the end:
 *   scribble: rounds=R scribbles=S doorbells=D completions=C errors=E
 *   wc_errors=W setup_failures=F destroy_failures=X child_crashes=K
 *   child_alarms=A clean=N
 * errors counts failed verbs calls and error completions. A child killed
 * by a signal is a child crash and is not a failure: the provider may
 * well crash on a scribbled ring, and the process's death then tears its
 * objects down. A child still running at its alarm (--alarm, 60 s by
 * default: a debug guest's round takes seconds) hung, in a verb or in a
 * poll that never ends, and is a failure. clean counts the rounds that
 * destroyed their objects themselves.
 * Exit status: 0 when every round could set its objects up and destroy
 * them and none hung, 1 otherwise, 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#define MAX_RINGS	16
#define MAX_MAPS	256
#define BUF_LEN		65536	/* per MR: A's half, then B's half */
#define HALF		(BUF_LEN / 2)
#define QKEY		0x11111111u
#define DEPTH		16	/* WRs per queue, CQEs per CQ are 4x */
#define PAGE		4096
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum ring_kind { RING_CQ, RING_SQ, RING_RQ, RING_SRQ };

static const char * const kind_name[] = { "CQ", "SQ", "RQ", "SRQ" };

struct ring {
	unsigned char *base;	/* the mapping: header, then the slots */
	size_t len;
	enum ring_kind kind;
	unsigned int log2_elem;	/* geometry as created, not as scribbled */
	unsigned int mask;
};

/* Shared with the parent: a child's counts survive its crash. */
struct counts {
	unsigned long rounds;
	unsigned long scribbles;
	unsigned long doorbells;
	unsigned long raw_doorbells;
	unsigned long completions;
	unsigned long errors;
	unsigned long wc_errors;
	unsigned long setup_failures;
	unsigned long destroy_failures;
	unsigned long child_crashes;
	unsigned long child_alarms;
	unsigned long clean;
	unsigned long by_kind[4];
};

static struct {
	const char *dev;
	int gid_index;
	unsigned long rounds;
	unsigned long steps;
	unsigned long long seed;
	int verbose;
	int faults;
	unsigned int alarm;	/* seconds a round may take */
} opt = { .gid_index = -1, .rounds = 100, .steps = 24, .seed = 1,
	  .alarm = 60 };

static struct counts *cnt;

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct ibv_cq *scq, *rcq, *ucq;
	struct ibv_srq *srq;
	struct ibv_qp *qpa, *qpb, *qpu;
	struct ibv_ah *ah;
	union ibv_gid gid;
	struct ring ring[MAX_RINGS];
	int nr_rings;
	uintptr_t maps[MAX_MAPS];
	int nr_maps;
} c;

static unsigned long long rng;

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

/* A value a field may hold: mostly nasty ones. */
static uint32_t nasty32(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 7, 8, 16, 17, 255, 256, 4095, 4096, 65535, 65536,
		0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 1u << 20,
		1u << 24, 1u << 30,
	};

	if (rnd(3) == 0)
		return (uint32_t)rnd64();
	return v[rnd(ARRAY_SIZE(v))];
}

static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!opt.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* The start addresses of this process's mappings of a uverbs device. */
static int uverbs_maps(uintptr_t *start, size_t *len, int max)
{
	unsigned long s, e;
	char line[512];
	FILE *f;
	int n = 0;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx", &s, &e) != 2)
			continue;
		start[n] = s;
		if (len)
			len[n] = e - s;
		n++;
	}
	fclose(f);
	return n;
}

/*
 * Take the uverbs mappings that are new since the last call as the rings
 * of the object just created; of a QP's two, the one with the larger slots
 * is the SQ.
 */
static void new_rings(enum ring_kind kind)
{
	uintptr_t start[MAX_MAPS];
	size_t len[MAX_MAPS];
	int n, i, j, first = c.nr_rings;

	n = uverbs_maps(start, len, MAX_MAPS);
	for (i = 0; i < n; i++) {
		struct rxe_queue_buf *q = (struct rxe_queue_buf *)start[i];
		struct ring *r;

		for (j = 0; j < c.nr_maps; j++)
			if (c.maps[j] == start[i])
				break;
		if (j < c.nr_maps)
			continue;
		if (c.nr_maps < MAX_MAPS)
			c.maps[c.nr_maps++] = start[i];
		if (c.nr_rings == MAX_RINGS || len[i] < sizeof(*q))
			continue;
		r = &c.ring[c.nr_rings++];
		r->base = (unsigned char *)start[i];
		r->len = len[i];
		r->kind = kind;
		r->log2_elem = q->log2_elem_size;
		r->mask = q->index_mask;
		if (r->log2_elem > 16 ||
		    sizeof(*q) + (((size_t)r->mask + 1) << r->log2_elem) > r->len) {
			/* not a ring after all: leave it alone */
			c.nr_rings--;
			continue;
		}
	}
	if (kind == RING_SQ && c.nr_rings - first == 2) {
		struct ring *a = &c.ring[first], *b = &c.ring[first + 1];

		if (a->log2_elem > b->log2_elem)
			b->kind = RING_RQ;
		else
			a->kind = RING_RQ;
	}
	for (i = first; i < c.nr_rings; i++)
		vlog("ring %d: %s at %p, %zu bytes, slots %u x %u\n", i,
		     kind_name[c.ring[i].kind], c.ring[i].base, c.ring[i].len,
		     c.ring[i].mask + 1, 1u << c.ring[i].log2_elem);
}

static void failed(const char *what, int err)
{
	cnt->errors++;
	vlog("%s: %s\n", what, strerror(err));
}

static struct ibv_cq *make_cq(void)
{
	struct ibv_cq *cq = ibv_create_cq(c.ctx, DEPTH * 4, NULL, NULL, 0);

	if (cq)
		new_rings(RING_CQ);
	return cq;
}

static struct ibv_qp *make_qp(enum ibv_qp_type type, struct ibv_cq *cq,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = {
			.max_send_wr = DEPTH,
			.max_recv_wr = DEPTH,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 64,
		},
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(c.pd, &ia);

	if (qp)
		new_rings(RING_SQ);
	return qp;
}

static int rc_connect(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = c.gid;
	a.ah_attr.grh.sgid_index = opt.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 8;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.sq_psn = 0;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int open_dev(void)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return -1;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), opt.dev))
			break;
	if (i < n)
		c.ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return c.ctx ? 0 : -1;
}

/* Every object of a round; 0 when all of them are there. */
static int setup(void)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = DEPTH, .max_sge = 2 },
	};
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = 1,
	};

	c.nr_maps = uverbs_maps(c.maps, NULL, MAX_MAPS);
	if (c.nr_maps < 0)
		c.nr_maps = 0;
	if (open_dev()) {
		fprintf(stderr, "scribble: cannot open %s\n", opt.dev);
		return -1;
	}
	if (ibv_query_gid(c.ctx, 1, opt.gid_index, &c.gid)) {
		fprintf(stderr, "scribble: no GID %d\n", opt.gid_index);
		return -1;
	}
	c.pd = ibv_alloc_pd(c.ctx);
	c.buf = aligned_alloc(PAGE, BUF_LEN);
	if (!c.pd || !c.buf)
		return -1;
	memset(c.buf, 0, BUF_LEN);
	c.mr = ibv_reg_mr(c.pd, c.buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC);
	c.scq = make_cq();
	c.rcq = make_cq();
	c.ucq = make_cq();
	if (!c.mr || !c.scq || !c.rcq || !c.ucq)
		return -1;
	c.srq = ibv_create_srq(c.pd, &sa);
	if (!c.srq)
		return -1;
	new_rings(RING_SRQ);
	c.qpa = make_qp(IBV_QPT_RC, c.scq, NULL);
	c.qpb = make_qp(IBV_QPT_RC, c.rcq, c.srq);
	c.qpu = make_qp(IBV_QPT_UD, c.ucq, NULL);
	if (!c.qpa || !c.qpb || !c.qpu)
		return -1;
	if (rc_connect(c.qpa, c.qpb->qp_num) ||
	    rc_connect(c.qpb, c.qpa->qp_num) || ud_ready(c.qpu))
		return -1;
	aa.grh.dgid = c.gid;
	aa.grh.sgid_index = opt.gid_index;
	aa.grh.hop_limit = 64;
	c.ah = ibv_create_ah(c.pd, &aa);
	return c.ah ? 0 : -1;
}

static void destroy(void)
{
	int bad = 0;

	if (c.qpa)
		bad |= ibv_destroy_qp(c.qpa);
	if (c.qpb)
		bad |= ibv_destroy_qp(c.qpb);
	if (c.qpu)
		bad |= ibv_destroy_qp(c.qpu);
	if (c.ah)
		bad |= ibv_destroy_ah(c.ah);
	if (c.srq)
		bad |= ibv_destroy_srq(c.srq);
	if (c.scq)
		bad |= ibv_destroy_cq(c.scq);
	if (c.rcq)
		bad |= ibv_destroy_cq(c.rcq);
	if (c.ucq)
		bad |= ibv_destroy_cq(c.ucq);
	if (c.mr)
		bad |= ibv_dereg_mr(c.mr);
	if (c.pd)
		bad |= ibv_dealloc_pd(c.pd);
	if (c.ctx)
		bad |= ibv_close_device(c.ctx);
	if (bad)
		cnt->destroy_failures++;
}

static void sge(struct ibv_sge *s, unsigned int off, unsigned int len)
{
	s->addr = (uintptr_t)c.buf + off;
	s->length = len;
	s->lkey = c.mr->lkey;
}

static void post_recv(struct ibv_qp *qp, unsigned int off)
{
	struct ibv_recv_wr wr = { .num_sge = 1 }, *bad;
	struct ibv_sge s;
	int err;

	sge(&s, off, 4096);
	wr.sg_list = &s;
	wr.wr_id = off;
	err = qp ? ibv_post_recv(qp, &wr, &bad) :
		   ibv_post_srq_recv(c.srq, &wr, &bad);
	if (err)
		failed(qp ? "ibv_post_recv" : "ibv_post_srq_recv", err);
}

/* One valid send WR on QP: the doorbell for the kernel to read the SQ. */
static void post_send(struct ibv_qp *qp, enum ibv_wr_opcode op)
{
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = op }, *bad;
	unsigned int len = 1 + rnd(qp == c.qpu ? 900 : 4096);
	int a = qp == c.qpa;
	struct ibv_sge s;
	int err;

	/* from our half, to the peer's */
	sge(&s, a ? 0 : HALF, len);
	wr.sg_list = &s;
	wr.wr_id = rnd64();
	wr.send_flags = IBV_SEND_SIGNALED;
	if (len <= 64 && op != IBV_WR_RDMA_READ && rnd(2))
		wr.send_flags |= IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)c.buf + (a ? HALF : 0) + 8192;
	wr.wr.rdma.rkey = c.mr->rkey;
	if (qp == c.qpu) {
		wr.wr.ud.ah = c.ah;
		wr.wr.ud.remote_qpn = c.qpu->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	err = ibv_post_send(qp, &wr, &bad);
	cnt->doorbells++;
	if (err)
		failed("ibv_post_send", err);
}

static void poll_all(void)
{
	struct ibv_cq *cqs[] = { c.scq, c.rcq, c.ucq };
	struct ibv_wc wc[8];
	int i, j, k, n;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 8; j++) {
			n = ibv_poll_cq(cqs[i], 8, wc);
			if (n < 0) {
				failed("ibv_poll_cq", EIO);
				break;
			}
			if (n == 0)
				break;
			if (n > 8)	/* garbage: bound it */
				n = 8;
			cnt->completions += n;
			for (k = 0; k < n; k++)
				if (wc[k].status != IBV_WC_SUCCESS)
					cnt->wc_errors++;
		}
	}
}

static void traffic(void)
{
	switch (rnd(6)) {
	case 0:
		post_recv(NULL, HALF + 4096 * rnd(4));
		post_send(c.qpa, IBV_WR_SEND);
		break;
	case 1:
		post_recv(c.qpa, 4096 * rnd(4));
		post_send(c.qpb, IBV_WR_SEND);
		break;
	case 2:
		post_send(rnd(2) ? c.qpa : c.qpb, IBV_WR_RDMA_WRITE);
		break;
	case 3:
		post_send(rnd(2) ? c.qpa : c.qpb, IBV_WR_RDMA_READ);
		break;
	case 4:
		post_recv(c.qpu, HALF + 16384);
		post_send(c.qpu, IBV_WR_SEND);
		break;
	default:
		post_send(c.qpa, IBV_WR_SEND_WITH_IMM);
		break;
	}
}

#define SQF(f)	offsetof(struct rxe_send_wqe, f)
#define RQF(f)	offsetof(struct rxe_recv_wqe, f)

/* Fields of a send WQE worth lying about: offset and size. */
static const unsigned short sq_fields[][2] = {
	{ SQF(wr.opcode), 4 }, { SQF(wr.send_flags), 4 },
	{ SQF(wr.ex.imm_data), 4 }, { SQF(wr.wr.rdma.remote_addr), 8 },
	{ SQF(wr.wr.rdma.rkey), 4 }, { SQF(wr.wr.ud.remote_qpn), 4 },
	{ SQF(wr.wr.ud.ah_num), 4 }, { SQF(wr.wr.ud.remote_qkey), 4 },
	{ SQF(wr.wr.mw.length), 8 }, { SQF(wr.wr.mw.mr_lkey), 4 },
	{ SQF(wr.wr.mw.access), 4 }, { SQF(status), 4 }, { SQF(state), 4 },
	{ SQF(iova), 8 }, { SQF(mask), 4 }, { SQF(dma.length), 4 },
	{ SQF(dma.resid), 4 }, { SQF(dma.cur_sge), 4 },
	{ SQF(dma.num_sge), 4 }, { SQF(dma.sge_offset), 4 },
	{ SQF(dma.sge[0].addr), 8 }, { SQF(dma.sge[0].length), 4 },
	{ SQF(dma.sge[0].lkey), 4 }, { SQF(dma.sge[1].addr), 8 },
	{ SQF(dma.sge[1].length), 4 }, { SQF(dma.sge[1].lkey), 4 },
};

static const unsigned short rq_fields[][2] = {
	{ RQF(dma.length), 4 }, { RQF(dma.resid), 4 },
	{ RQF(dma.cur_sge), 4 }, { RQF(dma.num_sge), 4 },
	{ RQF(dma.sge_offset), 4 }, { RQF(dma.sge[0].addr), 8 },
	{ RQF(dma.sge[0].length), 4 }, { RQF(dma.sge[0].lkey), 4 },
	{ RQF(dma.sge[1].addr), 8 }, { RQF(dma.sge[1].length), 4 },
	{ RQF(dma.sge[1].lkey), 4 },
};

/* Opcodes a send WQE could claim, valid or not. */
static uint32_t nasty_opcode(void)
{
	if (rnd(4) == 0)
		return nasty32();
	return rnd(20);	/* IB_WR_RDMA_WRITE .. past the last one */
}

static void set_field(unsigned char *slot, size_t elem, unsigned int off,
		      unsigned int size, uint64_t v)
{
	uint32_t v32 = v;

	if (off + size > elem)
		return;
	if (size == 8)
		memcpy(slot + off, &v, 8);
	else
		memcpy(slot + off, &v32, 4);
}

static uint32_t *prod_of(struct ring *r)
{
	return &((struct rxe_queue_buf *)r->base)->producer_index;
}

static uint32_t *cons_of(struct ring *r)
{
	return &((struct rxe_queue_buf *)r->base)->consumer_index;
}

static unsigned char *slot_of(struct ring *r, uint32_t idx)
{
	return r->base + sizeof(struct rxe_queue_buf) +
	       ((size_t)(idx & r->mask) << r->log2_elem);
}

/* Lie in the next slot of a ring we produce, then publish it. */
static void bad_wqe(struct ring *r, int whole)
{
	size_t elem = (size_t)1 << r->log2_elem;
	uint32_t p = __atomic_load_n(prod_of(r), __ATOMIC_RELAXED) & r->mask;
	unsigned char *slot = slot_of(r, p);
	unsigned int i, n;

	if (whole) {
		for (i = 0; i < elem; i++)
			slot[i] = rnd64();
	} else if (r->kind == RING_SQ) {
		n = 1 + rnd(4);
		for (i = 0; i < n; i++) {
			unsigned int f = rnd(ARRAY_SIZE(sq_fields));
			uint64_t v = nasty32();

			if (sq_fields[f][0] == SQF(wr.opcode))
				v = nasty_opcode();
			else if (sq_fields[f][1] == 8 && rnd(2))
				v = (uintptr_t)c.buf + rnd(2 * BUF_LEN) -
				    BUF_LEN / 2;
			set_field(slot, elem, sq_fields[f][0],
				  sq_fields[f][1], v);
		}
		if (rnd(4) == 0)	/* inline, with a length to match */
			set_field(slot, elem, SQF(wr.send_flags), 4,
				  IBV_SEND_INLINE | rnd(16));
	} else if (r->kind == RING_CQ) {
		/* a garbage CQE for the provider to read */
		for (i = 0; i < elem; i++)
			slot[i] = rnd64();
	} else {
		n = 1 + rnd(4);
		for (i = 0; i < n; i++) {
			unsigned int f = rnd(ARRAY_SIZE(rq_fields));

			set_field(slot, elem, rq_fields[f][0],
				  rq_fields[f][1], nasty32());
		}
	}
	if (r->kind != RING_CQ)
		__atomic_store_n(prod_of(r), (p + 1) & r->mask,
				 __ATOMIC_RELEASE);
}

static void scribble(void)
{
	struct ring *r;
	struct rxe_queue_buf *q;
	unsigned int pg;
	size_t i;

	if (!c.nr_rings)
		return;
	r = &c.ring[rnd(c.nr_rings)];
	q = (struct rxe_queue_buf *)r->base;
	cnt->scribbles++;
	cnt->by_kind[r->kind]++;
	switch (rnd(8)) {
	case 0:
		__atomic_store_n(prod_of(r),
				 rnd(2) ? rnd(r->mask + 1) : nasty32(),
				 __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(cons_of(r),
				 rnd(2) ? rnd(r->mask + 1) : nasty32(),
				 __ATOMIC_RELEASE);
		break;
	case 2:
	case 3:
	case 4:
		bad_wqe(r, 0);
		break;
	case 5:
		bad_wqe(r, 1);
		break;
	case 6:
		pg = rnd(r->len / PAGE);
		for (i = 0; i < PAGE; i += 8) {
			uint64_t v = rnd64();

			memcpy(r->base + pg * PAGE + i, &v, 8);
		}
		break;
	default:
		if (rnd(2))
			q->log2_elem_size = rnd(3) ? rnd(40) : nasty32();
		else
			q->index_mask = nasty32();
		break;
	}
}

/*
 * The provider's doorbell without the provider: a POST_SEND write() with
 * no work requests, so that the kernel reads a ring whose header the
 * provider itself could not survive.
 */
static void raw_doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} w = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(w) / 4,
			.out_words = sizeof(struct ib_uverbs_post_send_resp) / 4,
		},
	};
	struct ib_uverbs_post_send_resp resp;

	w.cmd.response = (uintptr_t)&resp;
	w.cmd.qp_handle = qp->handle;
	w.cmd.wqe_size = sizeof(struct ibv_send_wr);
	cnt->raw_doorbells++;
	if (write(qp->context->cmd_fd, &w, sizeof(w)) != sizeof(w))
		failed("POST_SEND write()", errno);
}

/*
 * Put the geometry back and the indexes in range (they stay wherever the
 * scribble put them), so that the round can go on through the provider.
 */
static void repair(void)
{
	int i;

	for (i = 0; i < c.nr_rings; i++) {
		struct ring *r = &c.ring[i];
		struct rxe_queue_buf *q = (struct rxe_queue_buf *)r->base;

		q->log2_elem_size = r->log2_elem;
		q->index_mask = r->mask;
		__atomic_store_n(prod_of(r), *prod_of(r) & r->mask,
				 __ATOMIC_RELEASE);
		__atomic_store_n(cons_of(r), *cons_of(r) & r->mask,
				 __ATOMIC_RELEASE);
	}
}

static void doorbells(void)
{
	post_recv(c.qpa, 4096 * rnd(4));
	post_recv(NULL, HALF + 4096 * rnd(4));
	post_recv(c.qpu, HALF + 16384);
	post_send(c.qpa, IBV_WR_RDMA_WRITE);
	post_send(c.qpb, IBV_WR_SEND);
	post_send(c.qpu, IBV_WR_SEND);
}

/*
 * Mark this process for the kernel's fault injection (make-it-fail; the
 * test sets the rest up in debugfs), or unmark it. Exits on failure.
 */
static void fault_mark(int on)
{
	int fd = open("/proc/self/make-it-fail", O_WRONLY);
	int n = fd < 0 ? -1 : write(fd, on ? "1\n" : "0\n", 2);

	if (fd >= 0)
		close(fd);
	if (n != 2) {
		perror("scribble: /proc/self/make-it-fail");
		exit(1);
	}
}

static void child(unsigned long round)
{
	unsigned long i;

	alarm(opt.alarm);
	rng = opt.seed * 0x9e3779b97f4a7c15ull + round + 1;
	if (!rng)
		rng = 1;
	if (setup()) {
		cnt->setup_failures++;
		fprintf(stderr, "scribble: round %lu: setup failed: %s\n",
			round, strerror(errno));
		destroy();
		exit(1);
	}
	/* Setup and teardown must work; what happens in between may fail. */
	if (opt.faults)
		fault_mark(1);
	for (i = 0; i < opt.steps; i++) {
		if (rnd(2)) {
			traffic();
		} else {
			scribble();
			raw_doorbell(c.qpa);
			raw_doorbell(c.qpb);
			raw_doorbell(c.qpu);
			usleep(rnd(1000));
			if (rnd(4))
				repair();
			doorbells();
		}
		if (rnd(3) == 0)
			usleep(rnd(2000));
		poll_all();
	}
	usleep(rnd(5000));
	poll_all();
	if (opt.faults)
		fault_mark(0);
	destroy();
	exit(0);
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-scribble DEV --gid-index N [--rounds R] [--seed S]\n"
		"                      [--steps K] [--faults] [--alarm SECS] [-v]\n"
		"  N  index of a RoCE v2 GID of DEV's port 1 (the QPs talk to\n"
		"     each other over it)\n"
		"  --faults  mark each round's process for the kernel's fault\n"
		"            injection (make-it-fail) between setup and teardown\n"
		"  --alarm   seconds a round may take (60); one still running\n"
		"            then hung, and fails the run\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "gid-index", required_argument, NULL, 'g' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "steps", required_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "faults", no_argument, NULL, 'f' },
		{ "alarm", required_argument, NULL, 'a' },
		{ 0 }
	};
	unsigned long r;
	char *end;
	int ch, st;
	pid_t pid;

	while ((ch = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (ch) {
		case 'g':
			opt.gid_index = strtol(optarg, &end, 0);
			if (*end || !*optarg || opt.gid_index < 0)
				print_usage();
			break;
		case 'r':
			opt.rounds = strtoul(optarg, &end, 0);
			if (*end || !*optarg)
				print_usage();
			break;
		case 's':
			opt.seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				print_usage();
			break;
		case 'k':
			opt.steps = strtoul(optarg, &end, 0);
			if (*end || !*optarg)
				print_usage();
			break;
		case 'v':
			opt.verbose = 1;
			break;
		case 'f':
			opt.faults = 1;
			break;
		case 'a':
			opt.alarm = strtoul(optarg, &end, 0);
			if (*end || !*optarg || !opt.alarm)
				print_usage();
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc - 1 || opt.gid_index < 0)
		print_usage();
	opt.dev = argv[optind];

	cnt = mmap(NULL, sizeof(*cnt), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(cnt, 0, sizeof(*cnt));
	for (r = 0; r < opt.rounds; r++) {
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			child(r);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		cnt->rounds++;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
			cnt->child_alarms++;
			fprintf(stderr, "scribble: round %lu: still running after %u s: hung\n",
				r, opt.alarm);
		} else if (WIFSIGNALED(st)) {
			cnt->child_crashes++;
			vlog("round %lu: child killed by signal %d\n", r,
			     WTERMSIG(st));
		} else if (WIFEXITED(st) && !WEXITSTATUS(st)) {
			cnt->clean++;
		}
	}
	printf("scribble: rounds=%lu scribbles=%lu doorbells=%lu",
	       cnt->rounds, cnt->scribbles,
	       cnt->doorbells + cnt->raw_doorbells);
	printf(" completions=%lu errors=%lu wc_errors=%lu", cnt->completions,
	       cnt->errors + cnt->wc_errors, cnt->wc_errors);
	printf(" setup_failures=%lu destroy_failures=%lu child_crashes=%lu",
	       cnt->setup_failures, cnt->destroy_failures, cnt->child_crashes);
	printf(" child_alarms=%lu clean=%lu\n", cnt->child_alarms, cnt->clean);
	printf("# doorbells: %lu through the provider, %lu raw write()s\n",
	       cnt->doorbells, cnt->raw_doorbells);
	printf("# scribbles by ring: CQ %lu SQ %lu RQ %lu SRQ %lu\n",
	       cnt->by_kind[RING_CQ], cnt->by_kind[RING_SQ],
	       cnt->by_kind[RING_RQ], cnt->by_kind[RING_SRQ]);
	return cnt->setup_failures || cnt->destroy_failures ||
	       cnt->child_alarms ? 1 : 0;
}
