// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: push randomized RDMA traffic (SEND, WRITE, WRITE with
 * immediate, READ) over one RC QP set up with rdma_cm, and check every byte
 * on the side that receives it.
 *
 * Each message n carries a pattern computed from (seed, n, byte offset), so
 * either side can check any byte on its own. Every buffer a message lands
 * in holds a poison pattern before the message arrives, and bytes of the
 * pattern always have bit 0 set while poison bytes never do: a byte that was
 * never written cannot pass, even in a one-byte message.
 *
 * Protocol (client drives; "ctl" is a small SEND of struct ctl):
 *   send:      ctl SEND,      data SEND          -> server checks, ctl ACK
 *   write:     RDMA WRITE,    ctl WRITTEN        -> server checks, ctl ACK
 *   write_imm: ctl WRITE_IMM, WRITE_WITH_IMM(n)  -> server checks, ctl ACK
 *   read:      ctl READ -> server fills its read slot, ctl READY;
 *              client RDMA READs and checks
 *   end:       ctl DONE with the client's totals -> server compares, DONE_ACK
 * RC executes requests in order at the responder, which is what lets a ctl
 * that follows a WRITE vouch for the written data being in place.
 *
 * Up to --depth messages are in flight, each in its own slot of every buffer;
 * a slot is reused only once its message is fully acknowledged.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Kernel-style names; u64 is unsigned long long, printed with %llu. */
typedef unsigned long long u64;
typedef long long s64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

#define DEFAULT_PORT		18777
#define DEFAULT_BYTES		(64ULL << 20)
#define DEFAULT_MAX_SIZE	(4ULL << 20)
#define DEFAULT_TIMEOUT		30
#define MAX_DEPTH		64
#define MAX_MSG_SIZE		(1024ULL * 1024 * 1024)
#define CM_TIMEOUT_MS		10000
/* Poison checked on each side of every message, to catch overruns. */
#define GUARD			64
/* Data starts at a random offset below this in write/read slots ... */
#define SKEW			4096
/* ... and below this in receive buffers. */
#define RECV_SKEW		64
#define MAX_REPORTS		10

#define MAGIC			0x53524954	/* "SRIT" */
#define PROTO_VERSION		1
#define LOW_BITS		0x0101010101010101ULL

enum op { OP_SEND, OP_WRITE, OP_WRITE_IMM, OP_READ, NR_OPS };

static const char *const op_names[NR_OPS] = {
	[OP_SEND] = "send",
	[OP_WRITE] = "write",
	[OP_WRITE_IMM] = "write_imm",
	[OP_READ] = "read",
};

enum ctl_type {
	CTL_SEND = 1,	/* the next SEND is message msg */
	CTL_WRITTEN,	/* message msg was written to write slot at off */
	CTL_WRITE_IMM,	/* the next WRITE_WITH_IMM is message msg */
	CTL_READ,	/* fill read slot at off with msg, then READY */
	CTL_DONE,	/* no more messages; client totals in count/bytes */
	CTL_ACK,	/* server: msg checked, status = bad bytes */
	CTL_READY,	/* server: read slot holds msg */
	CTL_DONE_ACK,	/* server: totals agree, status = its mismatches */
};

/* Little endian on the wire; ctl_le() converts both ways. */
struct ctl {
	u32 magic;
	u16 type;
	u16 slot;
	u64 msg;
	u64 size;
	u64 off;
	u64 status;
	u64 count[NR_OPS];
	u64 bytes;
};

/* Client -> server in the connect request (at most 56 bytes there). */
struct hello {
	u32 magic;
	u16 version;
	u16 depth;
	u64 seed;
	u64 max_size;
};

/* Server -> client in the accept. */
struct welcome {
	u32 magic;
	u32 wkey;
	u32 rkey;
	u32 pad;
	u64 waddr;
	u64 raddr;
	u64 slot_len;
};

/* What a wr_id's upper half says the work request was. */
enum wr_kind { WR_CTL, WR_DATA, WR_READ, WR_RECV };

struct buf {
	u8 *p;
	size_t len;
	struct ibv_mr *mr;
};

struct stats {
	u64 ops;
	u64 bytes;
	u64 mismatches;
	u64 errors;
	u64 count[NR_OPS];
	unsigned int reports;
	struct timespec start;
};

struct opts {
	bool server;
	const char *addr;
	const char *bind;
	unsigned int port;
	u64 bytes;
	u64 seed;
	u64 max_size;
	u64 max_read;
	unsigned int ops_mask;
	unsigned int depth;
	unsigned int timeout;
	unsigned int listen_timeout;
	int ack_timeout;
	bool inject;
	bool verbose;
};

/* Everything one end of the connection owns. */
struct conn {
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_ch;
	struct ibv_cq *cq;
	unsigned int cq_events;
	bool armed;
	bool qp;
	bool peer_gone;
	struct ibv_device_attr dev;
};

static struct opts opt = {
	.port = DEFAULT_PORT,
	.bytes = DEFAULT_BYTES,
	.max_size = DEFAULT_MAX_SIZE,
	.ops_mask = (1 << NR_OPS) - 1,
	.depth = 1,
	.timeout = DEFAULT_TIMEOUT,
	.ack_timeout = -1,
};

static struct stats st;

/* ---- patterns ---------------------------------------------------------- */

static inline u64 mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

struct pattern {
	u64 key;
	u64 set;
	u64 clear;
};

static inline u64 pat_word(const struct pattern *p, u64 w)
{
	return (mix64(p->key + w * 0x9e3779b97f4a7c15ULL) | p->set) & ~p->clear;
}

static inline u8 pat_byte(const struct pattern *p, u64 idx)
{
	return pat_word(p, idx / 8) >> (8 * (idx % 8));
}

static struct pattern msg_pattern(u64 msg)
{
	return (struct pattern){
		.key = mix64(opt.seed ^ mix64(msg + 1)),
		.set = LOW_BITS,
	};
}

/* One poison per buffer id, indexed by position in that buffer. */
static struct pattern poison_pattern(u64 id)
{
	return (struct pattern){
		.key = mix64(~opt.seed ^ mix64(id + 0x5a5a5a5a)),
		.clear = LOW_BITS,
	};
}

/* buf[k] = byte idx + k of pattern p */
static void pat_fill(const struct pattern *p, u8 *buf, u64 idx,
		     size_t len)
{
	u64 v;

	while (len && idx % 8) {
		*buf++ = pat_byte(p, idx++);
		len--;
	}
	for (; len >= 8; len -= 8, buf += 8, idx += 8) {
		v = htole64(pat_word(p, idx / 8));
		memcpy(buf, &v, 8);
	}
	while (len--)
		*buf++ = pat_byte(p, idx++);
}

/* Number of bytes of buf that are not pattern p from idx; *first, the first. */
static size_t pat_check(const struct pattern *p, const u8 *buf,
			u64 idx, size_t len, size_t *first)
{
	size_t bad = 0, k = 0;
	u64 v;

	*first = SIZE_MAX;
	while (k < len) {
		if ((idx + k) % 8 == 0 && len - k >= 8) {
			v = htole64(pat_word(p, (idx + k) / 8));
			if (!memcmp(buf + k, &v, 8)) {
				k += 8;
				continue;
			}
		}
		if (buf[k] != pat_byte(p, idx + k)) {
			if (!bad)
				*first = k;
			bad++;
		}
		k++;
	}
	return bad;
}

static void hexdump(const char *label, const u8 *b, size_t n)
{
	fprintf(stderr, "  %s", label);
	while (n--)
		fprintf(stderr, " %02x", *b++);
	fputc('\n', stderr);
}

/*
 * Check buf against pattern p and print the first bad byte if any. what
 * names the area; returns the number of bad bytes.
 */
static size_t check_area(const char *what, enum op op, u64 msg,
			 u64 size, const struct pattern *p,
			 const u8 *buf, u64 idx, size_t len)
{
	u8 want[16];
	const char *hint = "";
	size_t bad, first, n;

	bad = pat_check(p, buf, idx, len, &first);
	if (!bad || st.reports >= MAX_REPORTS) {
		if (bad && st.reports++ == MAX_REPORTS)
			fprintf(stderr, "MISMATCH: further reports suppressed\n");
		return bad;
	}
	st.reports++;
	n = len - first < sizeof(want) ? len - first : sizeof(want);
	pat_fill(p, want, idx + first, n);
	/* Bit 0 tells message bytes from poison. */
	if (p->set && !(buf[first] & 1))
		hint = " (looks like poison: not written?)";
	else if (p->clear && (buf[first] & 1))
		hint = " (looks like message data)";
	fprintf(stderr, "MISMATCH: op=%s msg=%llu size=%llu %s: %zu bad byte(s),",
		op_names[op], msg, size, what, bad);
	fprintf(stderr, " first at offset %zu: expected 0x%02x got 0x%02x%s\n",
		first, want[0], buf[first], hint);
	hexdump("expected:", want, n);
	hexdump("got:     ", buf + first, n);
	return bad;
}

/*
 * The receiving side's check of one message: data at pos in a buffer whose
 * poison is pz, with GUARD poison bytes on each side. --inject-mismatch
 * corrupts the first message checked, to prove that checking works.
 */
static size_t check_message(enum op op, u64 msg, u64 size,
			    const struct pattern *pz, u8 *base,
			    size_t pos)
{
	struct pattern p = msg_pattern(msg);
	static bool injected;
	size_t bad;

	if (opt.inject && !injected) {
		injected = true;
		base[pos + size / 2] ^= 0x10;
		fprintf(stderr, "inject: flipped byte %llu of msg %llu\n",
			size / 2, msg);
	}
	bad = check_area("data", op, msg, size, &p, base + pos, 0, size);
	bad += check_area("guard before", op, msg, size, pz,
			  base + pos - GUARD, pos - GUARD, GUARD);
	bad += check_area("guard after", op, msg, size, pz,
			  base + pos + size, pos + size, GUARD);
	return bad;
}

/* ---- small helpers ----------------------------------------------------- */

static u64 rng_state;

static u64 rng_next(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return mix64(rng_state);
}

static u64 rng_below(u64 n)
{
	return rng_next() % n;
}

/* Log-uniform: each power of two up to max is as likely as any other. */
static u64 pick_size(u64 max)
{
	int top = 63 - __builtin_clzll(max);
	u64 lo = 1ULL << rng_below(top + 1);
	u64 hi = 2 * lo - 1;

	if (hi > max)
		hi = max;
	return lo + rng_below(hi - lo + 1);
}

/* Half the messages start page aligned, the rest anywhere in a page. */
static u64 pick_skew(void)
{
	return rng_below(2) ? 0 : rng_below(SKEW);
}

static void ctl_le(struct ctl *c)
{
	int i;

	c->magic = htole32(c->magic);
	c->type = htole16(c->type);
	c->slot = htole16(c->slot);
	c->msg = htole64(c->msg);
	c->size = htole64(c->size);
	c->off = htole64(c->off);
	c->status = htole64(c->status);
	for (i = 0; i < NR_OPS; i++)
		c->count[i] = htole64(c->count[i]);
	c->bytes = htole64(c->bytes);
}

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - st.start.tv_sec) +
	       (now.tv_nsec - st.start.tv_nsec) / 1e9;
}

static s64 now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}

static s64 now_ms(void)
{
	return now_us() / 1000;
}

static void summary(const char *who)
{
	double secs = elapsed();

	printf("integrity: ops=%llu bytes=%llu mismatches=%llu errors=%llu",
	       st.ops, st.bytes, st.mismatches, st.errors);
	for (int i = 0; i < NR_OPS; i++)
		printf(" %s=%llu", op_names[i], st.count[i]);
	printf(" time=%.2fs rate=%.2fMB/s role=%s\n", secs,
	       secs > 0 ? st.bytes / secs / 1e6 : 0.0, who);
}

/*
 * How long the CM exchange may take once the REQ or REP is out: at least
 * CM_TIMEOUT_MS, and as long as --timeout allows for anything else. A
 * busy KASAN guest took over 10 s (a lost REP is resent after ~4 s).
 */
static int established_ms(void)
{
	return opt.timeout * 1000 > CM_TIMEOUT_MS ? (int)opt.timeout * 1000 :
						   CM_TIMEOUT_MS;
}

/* A fatal error: count it and say what happened. A macro, so that the
 * compiler checks the format as it does printf's.
 */
#define fail(...) do {						\
	st.errors++;						\
	fputs("ERROR: ", stderr);				\
	fprintf(stderr, __VA_ARGS__);				\
	fputc('\n', stderr);					\
} while (0)

static int alloc_buf(struct conn *c, struct buf *b, size_t len, int access)
{
	b->len = len;
	if (posix_memalign((void **)&b->p, 4096, len)) {
		fail("cannot allocate %zu bytes", len);
		return -1;
	}
	memset(b->p, 0, len);
	b->mr = ibv_reg_mr(c->pd, b->p, len, access);
	if (!b->mr) {
		fail("ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
		return -1;
	}
	return 0;
}

static void free_buf(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static u64 wr_id(enum wr_kind kind, unsigned int idx)
{
	return (u64)kind << 32 | idx;
}

static int post_recv(struct conn *c, void *addr, size_t len, u32 lkey,
		     u64 id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	errno = ibv_post_recv(c->id->qp, &wr, &bad);
	if (errno) {
		fail("ibv_post_recv: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int post_send(struct conn *c, enum ibv_wr_opcode opcode, void *addr,
		     size_t len, u32 lkey, u64 id, u64 raddr,
		     u32 rkey, u32 imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;

	errno = ibv_post_send(c->id->qp, &wr, &bad);
	if (errno) {
		fail("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- rdma_cm and completion plumbing ----------------------------------- */

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Next rdma_cm event within ms (negative: no limit), or NULL. */
static struct rdma_cm_event *cm_next(struct conn *c, int ms)
{
	struct pollfd pfd = { .fd = c->cm_ch->fd, .events = POLLIN };
	s64 end = now_ms() + ms;
	struct rdma_cm_event *ev;
	int left;

	for (;;) {
		if (!rdma_get_cm_event(c->cm_ch, &ev))
			return ev;
		if (errno != EAGAIN) {
			fail("rdma_get_cm_event: %s", strerror(errno));
			return NULL;
		}
		left = ms < 0 ? -1 : (int)(end - now_ms());
		if (ms >= 0 && left <= 0)
			return NULL;
		if (poll(&pfd, 1, left) < 0 && errno != EINTR) {
			fail("poll: %s", strerror(errno));
			return NULL;
		}
	}
}

/* Wait for event want on id; anything else is an error. */
static struct rdma_cm_event *cm_expect(struct conn *c,
				       enum rdma_cm_event_type want, int ms)
{
	struct rdma_cm_event *ev = cm_next(c, ms);

	if (!ev) {
		if (!st.errors)
			fail("timeout waiting for %s", rdma_event_str(want));
		return NULL;
	}
	if (ev->event != want) {
		fail("expected %s, got %s (status %d)", rdma_event_str(want),
		     rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
		return NULL;
	}
	return ev;
}

/* An rdma_cm event in the middle of the transfer. */
static void cm_event(struct conn *c)
{
	struct rdma_cm_event *ev = cm_next(c, 0);
	struct rdma_cm_id *id;

	if (!ev)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* One client at a time; turn others away. */
		id = ev->id;
		rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		c->peer_gone = true;
		break;
	default:
		if (opt.verbose)
			fprintf(stderr, "cm event %s\n",
				rdma_event_str(ev->event));
		break;
	}
	rdma_ack_cm_event(ev);
}

/*
 * Up to max completions. Sleeps on the completion and rdma_cm channels when
 * the CQ is empty. Returns the count, 0 when nothing completed within
 * opt.timeout seconds or the peer disconnected, -1 on error.
 */
static int next_wcs(struct conn *c, struct ibv_wc *wc, int max)
{
	struct pollfd pfd[2] = {
		{ .fd = c->comp_ch->fd, .events = POLLIN },
		{ .fd = c->cm_ch->fd, .events = POLLIN },
	};
	s64 end = now_ms() + opt.timeout * 1000LL;
	struct ibv_cq *cq;
	void *cq_ctx;
	int n, left;

	for (;;) {
		n = ibv_poll_cq(c->cq, max, wc);
		if (n < 0) {
			fail("ibv_poll_cq failed");
			return -1;
		}
		if (n)
			return n;
		if (c->peer_gone)
			return 0;
		/* Arm, then look again: a completion may have slipped in. */
		if (!c->armed) {
			if (ibv_req_notify_cq(c->cq, 0)) {
				fail("ibv_req_notify_cq failed");
				return -1;
			}
			c->armed = true;
			continue;
		}
		left = (int)(end - now_ms());
		if (left <= 0)
			return 0;
		if (poll(pfd, 2, left) < 0 && errno != EINTR) {
			fail("poll: %s", strerror(errno));
			return -1;
		}
		if (pfd[1].revents)
			cm_event(c);
		if (pfd[0].revents && !ibv_get_cq_event(c->comp_ch, &cq,
							&cq_ctx)) {
			c->cq_events++;
			c->armed = false;
		}
	}
}

static const char *wc_op_name(const struct ibv_wc *wc)
{
	switch (wc->opcode) {
	case IBV_WC_SEND: return "send";
	case IBV_WC_RDMA_WRITE: return "rdma_write";
	case IBV_WC_RDMA_READ: return "rdma_read";
	case IBV_WC_RECV: return "recv";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "recv_rdma_with_imm";
	default: return "other";
	}
}

/* Protection domain, CQ with its channel, QP: the same for both ends. */
static int setup_verbs(struct conn *c, struct rdma_cm_id *id,
		       unsigned int sq, unsigned int rq)
{
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = sq, .max_recv_wr = rq,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	c->id = id;
	if (ibv_query_device(id->verbs, &c->dev)) {
		fail("ibv_query_device failed");
		return -1;
	}
	c->pd = ibv_alloc_pd(id->verbs);
	c->comp_ch = ibv_create_comp_channel(id->verbs);
	if (!c->pd || !c->comp_ch || set_nonblock(c->comp_ch->fd)) {
		fail("cannot create PD or completion channel: %s",
		     strerror(errno));
		return -1;
	}
	c->cq = ibv_create_cq(id->verbs, sq + rq, NULL, c->comp_ch, 0);
	if (!c->cq) {
		fail("ibv_create_cq(%u): %s", sq + rq, strerror(errno));
		return -1;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(id, c->pd, &qa)) {
		fail("rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	c->qp = true;
	return 0;
}

static void teardown(struct conn *c)
{
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		ibv_ack_cq_events(c->cq, c->cq_events);
		ibv_destroy_cq(c->cq);
	}
	if (c->comp_ch)
		ibv_destroy_comp_channel(c->comp_ch);
}

static void teardown_ids(struct conn *c)
{
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->listen_id)
		rdma_destroy_id(c->listen_id);
	if (c->cm_ch)
		rdma_destroy_event_channel(c->cm_ch);
}

/*
 * The local ACK timeout, if asked for: the requester's retransmit timer,
 * which is what recovers from a lost packet at the end of a burst.
 */
static int set_ack_timeout(struct rdma_cm_id *id)
{
	u8 t = opt.ack_timeout;

	if (opt.ack_timeout < 0)
		return 0;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &t, sizeof(t))) {
		fail("cannot set the ACK timeout: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static unsigned int rd_atom(unsigned int want, int dev_max)
{
	if (dev_max <= 0)
		return 1;
	return want < (unsigned int)dev_max ? want : (unsigned int)dev_max;
}

static size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* ---- server ------------------------------------------------------------ */

struct server {
	struct conn c;
	struct buf recv;	/* nrecv receive buffers of recv_slot bytes */
	struct buf wreg;	/* depth write slots of slot_len bytes */
	struct buf rreg;	/* depth read slots of slot_len bytes */
	struct buf out;		/* nout ctl replies */
	bool *out_busy;
	unsigned int nrecv, nout, depth;
	size_t recv_len, recv_slot, slot_len;
	u64 *recv_skew;
	u64 max_size, next_msg;
	struct ctl expect;	/* the ctl announcing the next data, if any */
	bool expecting, done;
};

/* Buffer ids that key the poison of each buffer. */
#define PZ_RECV(i)	(1000 + (i))
#define PZ_WRITE(i)	(2000 + (i))
#define PZ_LOCAL(i)	(3000 + (i))

static u8 *recv_at(struct server *s, unsigned int i)
{
	return s->recv.p + (size_t)i * s->recv_slot;
}

/* Poisoned receive buffer i, at a fresh random offset, back on the RQ. */
static int srv_post_recv(struct server *s, unsigned int i)
{
	s->recv_skew[i] = rng_below(RECV_SKEW);
	return post_recv(&s->c, recv_at(s, i) + GUARD + s->recv_skew[i],
			 s->recv_len, s->recv.mr->lkey, wr_id(WR_RECV, i));
}

static int srv_reply(struct server *s, enum ctl_type type, u16 slot,
		     u64 msg, u64 status)
{
	struct ctl *m;
	unsigned int i;

	for (i = 0; i < s->nout && s->out_busy[i]; i++)
		;
	if (i == s->nout) {
		fail("protocol: no free reply buffer");
		return -1;
	}
	m = (struct ctl *)(s->out.p + i * sizeof(*m));
	*m = (struct ctl){
		.magic = MAGIC, .type = type, .slot = slot, .msg = msg,
		.status = status,
	};
	ctl_le(m);
	s->out_busy[i] = true;
	return post_send(&s->c, IBV_WR_SEND, m, sizeof(*m), s->out.mr->lkey,
			 wr_id(WR_CTL, i), 0, 0, 0);
}

/* Count a message the server has checked (or served, for a read). */
static void count(enum op op, u64 size, size_t bad)
{
	st.ops++;
	st.bytes += size;
	st.count[op]++;
	if (bad)
		st.mismatches++;
}

/* A message written into write slot m->slot: check it, re-poison. */
static size_t srv_check_write(struct server *s, const struct ctl *m,
			      enum op op)
{
	u8 *base = s->wreg.p + (size_t)m->slot * s->slot_len;
	struct pattern pz = poison_pattern(PZ_WRITE(m->slot));
	size_t pos = GUARD + m->off, bad;

	bad = check_message(op, m->msg, m->size, &pz, base, pos);
	/* Overruns are poison again too, so they are not reported twice. */
	pat_fill(&pz, base + pos - GUARD, pos - GUARD, m->size + 2 * GUARD);
	return bad;
}

static int srv_ctl(struct server *s, const struct ctl *m)
{
	u8 *base;
	struct pattern p;
	size_t bad;
	unsigned int i;
	u64 total = 0;

	if (m->type == CTL_DONE) {
		for (i = 0; i < NR_OPS; i++)
			total += m->count[i] != st.count[i];
		if (total || m->bytes != st.bytes) {
			fail("totals differ: client bytes=%llu %s=%llu %s=%llu %s=%llu %s=%llu",
			     m->bytes, op_names[0], m->count[0], op_names[1],
			     m->count[1], op_names[2], m->count[2],
			     op_names[3], m->count[3]);
			return -1;
		}
		s->done = true;
		return srv_reply(s, CTL_DONE_ACK, 0, 0, st.mismatches);
	}
	if (m->slot >= s->depth || !m->size || m->size > s->max_size ||
	    m->off >= SKEW || m->msg != s->next_msg) {
		fail("protocol: bad ctl type %u slot %u msg %llu (want %llu) size %llu off %llu",
		     m->type, m->slot, m->msg, s->next_msg, m->size, m->off);
		return -1;
	}
	s->next_msg++;
	if (opt.verbose)
		fprintf(stderr, "msg %llu ctl %u size %llu off %llu\n",
			m->msg, m->type, m->size, m->off);
	switch (m->type) {
	case CTL_SEND:
	case CTL_WRITE_IMM:
		s->expect = *m;
		s->expecting = true;
		return 0;
	case CTL_WRITTEN:
		bad = srv_check_write(s, m, OP_WRITE);
		count(OP_WRITE, m->size, bad);
		return srv_reply(s, CTL_ACK, m->slot, m->msg, bad);
	case CTL_READ:
		base = s->rreg.p + (size_t)m->slot * s->slot_len;
		p = msg_pattern(m->msg);
		pat_fill(&p, base + GUARD + m->off, 0, m->size);
		count(OP_READ, m->size, 0);
		return srv_reply(s, CTL_READY, m->slot, m->msg, 0);
	default:
		fail("protocol: unknown ctl type %u", m->type);
		return -1;
	}
}

static int srv_recv(struct server *s, const struct ibv_wc *wc)
{
	unsigned int i = (u32)wc->wr_id;
	u8 *base = recv_at(s, i);
	size_t pos = GUARD + s->recv_skew[i], bad, first, dirty;
	struct pattern pz = poison_pattern(PZ_RECV(i));
	struct ctl *m = &s->expect, in;
	u32 imm;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		if (!s->expecting || m->type != CTL_WRITE_IMM) {
			fail("protocol: unannounced write_imm");
			return -1;
		}
		s->expecting = false;
		bad = 0;
		imm = ntohl(wc->imm_data);
		if (imm != (u32)m->msg) {
			fprintf(stderr, "MISMATCH: op=write_imm msg=%llu imm: expected %u got %u\n",
				m->msg, (u32)m->msg, imm);
			bad++;
		}
		if (wc->byte_len != m->size) {
			fprintf(stderr, "MISMATCH: op=write_imm msg=%llu byte_len %u, want %llu\n",
				m->msg, wc->byte_len, m->size);
			bad++;
		}
		/* The consumed receive buffer must not have been touched. */
		bad += check_area("receive buffer", OP_WRITE_IMM, m->msg,
				  m->size, &pz, base + pos, pos,
				  s->recv_len < GUARD ? s->recv_len : GUARD);
		bad += srv_check_write(s, m, OP_WRITE_IMM);
		count(OP_WRITE_IMM, m->size, bad);
		if (srv_reply(s, CTL_ACK, m->slot, m->msg, bad))
			return -1;
		return srv_post_recv(s, i);
	}
	if (wc->opcode != IBV_WC_RECV || (wc->wc_flags & IBV_WC_WITH_IMM)) {
		fail("protocol: unexpected completion %s", wc_op_name(wc));
		return -1;
	}
	if (s->expecting) {
		s->expecting = false;
		if (m->type != CTL_SEND) {
			fail("protocol: SEND where write_imm was announced");
			return -1;
		}
		bad = 0;
		if (wc->byte_len != m->size) {
			fprintf(stderr, "MISMATCH: op=send msg=%llu byte_len %u, want %llu\n",
				m->msg, wc->byte_len, m->size);
			bad++;
		}
		bad += check_message(OP_SEND, m->msg, m->size, &pz, base,
				     pos);
		count(OP_SEND, m->size, bad);
		if (srv_reply(s, CTL_ACK, m->slot, m->msg, bad))
			return -1;
	} else {
		if (wc->byte_len != sizeof(in)) {
			fail("protocol: ctl of %u bytes", wc->byte_len);
			return -1;
		}
		memcpy(&in, base + pos, sizeof(in));
		ctl_le(&in);
		if (in.magic != MAGIC) {
			fail("protocol: ctl with bad magic 0x%08x", in.magic);
			return -1;
		}
		if (pat_check(&pz, base + pos + sizeof(in), pos + sizeof(in),
			      GUARD, &first)) {
			fail("receive buffer overrun after a ctl");
			return -1;
		}
		if (srv_ctl(s, &in))
			return -1;
	}
	dirty = pos + (wc->byte_len < s->recv_len ? wc->byte_len : s->recv_len);
	pat_fill(&pz, base, 0, dirty + GUARD);
	return srv_post_recv(s, i);
}

static int srv_wc(struct server *s, const struct ibv_wc *wc)
{
	enum wr_kind kind = wc->wr_id >> 32;
	unsigned int i = (u32)wc->wr_id;

	if (wc->status != IBV_WC_SUCCESS) {
		/* Once the client is done, flushed receives are expected. */
		if (s->done && wc->status == IBV_WC_WR_FLUSH_ERR)
			return 0;
		fail("completion error: %s (%s, vendor_err 0x%x) on %s%s",
		     ibv_wc_status_str(wc->status), wc_op_name(wc),
		     wc->vendor_err, kind == WR_RECV ? "receive" : "reply",
		     s->expecting ? " while expecting data" : "");
		return -1;
	}
	if (kind == WR_CTL) {
		s->out_busy[i] = false;
		return 0;
	}
	return srv_recv(s, wc);
}

static int srv_listen(struct conn *c)
{
	struct sockaddr_in6 any6 = {
		.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(opt.port),
	};
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	}, *ai = NULL;
	struct sockaddr *sa = (struct sockaddr *)&any6;
	char port[16], host[NI_MAXHOST];
	int err;

	if (opt.bind) {
		snprintf(port, sizeof(port), "%u", opt.port);
		err = getaddrinfo(opt.bind, port, &hints, &ai);
		if (err) {
			fail("%s: %s", opt.bind, gai_strerror(err));
			return -1;
		}
		sa = ai->ai_addr;
	}
	/* An IPv6 wildcard takes IPv4 connections too (not AF-only). */
	err = rdma_bind_addr(c->listen_id, sa);
	if (!err)
		err = rdma_listen(c->listen_id, 4);
	if (err) {
		fail("cannot listen on %s port %u: %s",
		     opt.bind ? opt.bind : "[::]", opt.port, strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	if (getnameinfo(sa, ai ? ai->ai_addrlen : sizeof(any6), host,
			sizeof(host), NULL, 0, NI_NUMERICHOST))
		strcpy(host, "?");
	printf("integrity: server listening on %s port %u\n", host, opt.port);
	freeaddrinfo(ai);
	return 0;
}

/* Take the client's connect request: resources sized to its hello. */
static int srv_accept(struct server *s)
{
	struct conn *c = &s->c;
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct welcome w;
	struct hello h;
	unsigned int i, init_depth, resp_res;

	ev = cm_expect(c, RDMA_CM_EVENT_CONNECT_REQUEST,
		       opt.listen_timeout ? (int)opt.listen_timeout * 1000 :
		       -1);
	if (!ev)
		return -1;
	id = ev->id;
	memset(&h, 0, sizeof(h));
	memcpy(&h, ev->param.conn.private_data,
	       ev->param.conn.private_data_len < sizeof(h) ?
	       ev->param.conn.private_data_len : sizeof(h));
	init_depth = ev->param.conn.initiator_depth;
	resp_res = ev->param.conn.responder_resources;
	rdma_ack_cm_event(ev);

	opt.seed = le64toh(h.seed);
	s->max_size = le64toh(h.max_size);
	s->depth = le16toh(h.depth);
	if (le32toh(h.magic) != MAGIC ||
	    le16toh(h.version) != PROTO_VERSION || !s->depth ||
	    s->depth > MAX_DEPTH || !s->max_size ||
	    s->max_size > MAX_MSG_SIZE) {
		fail("rejecting a connect request without a valid hello");
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -1;
	}
	rng_state = opt.seed ^ 0x5e5e5e5e;
	/* Two receives per message in flight, plus room for DONE. */
	s->nrecv = 2 * s->depth + 4;
	s->nout = 2 * s->depth + 4;
	s->recv_len = s->max_size > sizeof(struct ctl) ?
		      s->max_size : sizeof(struct ctl);
	s->recv_slot = round64(GUARD + RECV_SKEW + s->recv_len + GUARD);
	s->slot_len = round64(GUARD + SKEW + s->max_size + GUARD);
	s->recv_skew = calloc(s->nrecv, sizeof(*s->recv_skew));
	s->out_busy = calloc(s->nout, sizeof(*s->out_busy));
	if (!s->recv_skew || !s->out_busy) {
		fail("out of memory");
		return -1;
	}
	printf("integrity: client connected: seed=%llu max_size=%llu depth=%u\n",
	       opt.seed, s->max_size, s->depth);

	if (setup_verbs(c, id, s->nout, s->nrecv) ||
	    alloc_buf(c, &s->recv, s->nrecv * s->recv_slot,
		      IBV_ACCESS_LOCAL_WRITE) ||
	    alloc_buf(c, &s->wreg, s->depth * s->slot_len,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    alloc_buf(c, &s->rreg, s->depth * s->slot_len,
		      IBV_ACCESS_REMOTE_READ) ||
	    alloc_buf(c, &s->out, s->nout * sizeof(struct ctl), 0)) {
		rdma_reject(id, NULL, 0);
		return -1;
	}
	for (i = 0; i < s->nrecv; i++) {
		struct pattern pz = poison_pattern(PZ_RECV(i));

		pat_fill(&pz, recv_at(s, i), 0, s->recv_slot);
		if (srv_post_recv(s, i))
			return -1;
	}
	for (i = 0; i < s->depth; i++) {
		struct pattern pz = poison_pattern(PZ_WRITE(i));

		pat_fill(&pz, s->wreg.p + i * s->slot_len, 0, s->slot_len);
	}

	w = (struct welcome){
		.magic = htole32(MAGIC),
		.wkey = htole32(s->wreg.mr->rkey),
		.rkey = htole32(s->rreg.mr->rkey),
		.waddr = htole64((uintptr_t)s->wreg.p),
		.raddr = htole64((uintptr_t)s->rreg.p),
		.slot_len = htole64(s->slot_len),
	};
	param.private_data = &w;
	param.private_data_len = sizeof(w);
	param.responder_resources = rd_atom(init_depth, c->dev.max_qp_rd_atom);
	param.initiator_depth = rd_atom(resp_res, c->dev.max_qp_init_rd_atom);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (set_ack_timeout(id))
		return -1;
	if (rdma_accept(id, &param)) {
		fail("rdma_accept: %s", strerror(errno));
		return -1;
	}
	ev = cm_expect(c, RDMA_CM_EVENT_ESTABLISHED, established_ms());
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	/* (tests wait for this line before they disturb the connection) */
	printf("integrity: established\n");
	return 0;
}

static int run_server(void)
{
	struct server s = { 0 };
	struct conn *c = &s.c;
	struct ibv_wc wc[16];
	int n, i, ret = -1;

	c->cm_ch = rdma_create_event_channel();
	if (!c->cm_ch || set_nonblock(c->cm_ch->fd) ||
	    rdma_create_id(c->cm_ch, &c->listen_id, NULL, RDMA_PS_TCP)) {
		fail("rdma_cm: %s", strerror(errno));
		goto out;
	}
	if (srv_listen(c) || srv_accept(&s))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &st.start);

	while (!(s.done && c->peer_gone)) {
		n = next_wcs(c, wc, 16);
		if (n < 0)
			goto out;
		if (!n) {
			if (s.done && c->peer_gone)
				break;
			if (s.done)
				fputs("warning: no disconnect from the client\n",
				      stderr);
			else if (c->peer_gone)
				fail("client disconnected after %llu messages, before it was done",
				     s.next_msg);
			else
				fail("timeout: nothing from the client for %u s (next msg %llu%s)",
				     opt.timeout, s.next_msg,
				     s.expecting ? ", data announced" : "");
			break;
		}
		for (i = 0; i < n; i++)
			if (srv_wc(&s, &wc[i]))
				goto out;
	}
	ret = 0;
out:
	summary("server");
	teardown(c);
	free_buf(&s.recv);
	free_buf(&s.wreg);
	free_buf(&s.rreg);
	free_buf(&s.out);
	teardown_ids(c);
	free(s.recv_skew);
	free(s.out_busy);
	return ret || st.errors || st.mismatches ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */

struct slot {
	bool busy;
	enum op op;
	u64 msg;
	u64 size;
	u64 loff;		/* data at GUARD + loff in the local slot */
	u64 roff;		/* and at GUARD + roff in the remote one */
	unsigned int pending;	/* our work requests not yet completed */
	bool need_ack;		/* waiting for the server's ACK */
	bool need_read;		/* waiting for READY, then the READ */
	u64 bad;		/* bad bytes found by either side */
	s64 start_us;
};

struct client {
	struct conn c;
	struct buf data;	/* depth local slots of slot_len bytes */
	struct buf out;		/* a ctl per slot, one more for DONE */
	struct buf in;		/* nin ctl receive buffers */
	unsigned int nin;
	size_t slot_len;
	struct welcome w;
	struct slot *slots;
	unsigned int busy;
	u64 next_msg, issued;
	enum op ops[NR_OPS];
	unsigned int nops;
	struct slot slowest;	/* for spotting stalls (retransmissions) */
	bool done_posted, done_sent, done_acked;
};

static u8 *local_at(struct client *cl, unsigned int i)
{
	return cl->data.p + (size_t)i * cl->slot_len;
}

static int cli_ctl(struct client *cl, unsigned int i, enum ctl_type type)
{
	struct ctl *m = (struct ctl *)(cl->out.p + i * sizeof(*m));
	struct slot *sl = &cl->slots[i];

	*m = (struct ctl){
		.magic = MAGIC, .type = type, .slot = i, .msg = sl->msg,
		.size = sl->size, .off = sl->roff,
	};
	ctl_le(m);
	sl->pending++;
	return post_send(&cl->c, IBV_WR_SEND, m, sizeof(*m), cl->out.mr->lkey,
			 wr_id(WR_CTL, i), 0, 0, 0);
}

static int cli_data(struct client *cl, unsigned int i,
		    enum ibv_wr_opcode opcode, enum wr_kind kind)
{
	struct slot *sl = &cl->slots[i];
	bool read = opcode == IBV_WR_RDMA_READ;
	u64 raddr = (read ? cl->w.raddr : cl->w.waddr) + i * cl->slot_len +
		    GUARD + sl->roff;
	u32 rkey = read ? cl->w.rkey : cl->w.wkey;

	sl->pending++;
	return post_send(&cl->c, opcode, local_at(cl, i) + GUARD + sl->loff,
			 sl->size, cl->data.mr->lkey, wr_id(kind, i),
			 raddr, rkey, (u32)sl->msg);
}

/* Start the next message in free slot i. */
static int cli_issue(struct client *cl, unsigned int i)
{
	struct slot *sl = &cl->slots[i];
	u8 *base = local_at(cl, i);
	struct pattern p, pz;
	u64 left = opt.bytes - cl->issued;

	*sl = (struct slot){
		.busy = true,
		.op = cl->ops[rng_below(cl->nops)],
		.msg = cl->next_msg++,
		.loff = pick_skew(),
		.roff = pick_skew(),
		.start_us = now_us(),
	};
	sl->size = pick_size(sl->op == OP_READ && opt.max_read ?
			     opt.max_read : opt.max_size);
	if (sl->size > left)
		sl->size = left;
	cl->issued += sl->size;
	cl->busy++;
	if (opt.verbose)
		fprintf(stderr, "msg %llu %s size %llu loff %llu roff %llu\n",
			sl->msg, op_names[sl->op], sl->size, sl->loff,
			sl->roff);

	p = msg_pattern(sl->msg);
	if (sl->op != OP_READ)
		pat_fill(&p, base + GUARD + sl->loff, 0, sl->size);
	sl->need_ack = sl->op != OP_READ;
	switch (sl->op) {
	case OP_SEND:
		return cli_ctl(cl, i, CTL_SEND) ||
		       cli_data(cl, i, IBV_WR_SEND, WR_DATA);
	case OP_WRITE:
		return cli_data(cl, i, IBV_WR_RDMA_WRITE, WR_DATA) ||
		       cli_ctl(cl, i, CTL_WRITTEN);
	case OP_WRITE_IMM:
		return cli_ctl(cl, i, CTL_WRITE_IMM) ||
		       cli_data(cl, i, IBV_WR_RDMA_WRITE_WITH_IMM, WR_DATA);
	default:
		/* Poison where the READ lands, guards included. */
		pz = poison_pattern(PZ_LOCAL(i));
		pat_fill(&pz, base + sl->loff, sl->loff,
			 sl->size + 2 * GUARD);
		sl->need_read = true;
		return cli_ctl(cl, i, CTL_READ);
	}
}

/* Free the slot once nothing of its message is outstanding. */
static void cli_maybe_retire(struct client *cl, struct slot *sl)
{
	if (!sl->busy || sl->pending || sl->need_ack || sl->need_read)
		return;
	sl->start_us = now_us() - sl->start_us;	/* now the duration */
	if (opt.verbose)
		fprintf(stderr, "msg %llu %s size %llu done in %.3f ms\n",
			sl->msg, op_names[sl->op], sl->size,
			sl->start_us / 1e3);
	if (sl->start_us > cl->slowest.start_us)
		cl->slowest = *sl;
	count(sl->op, sl->size, sl->bad);
	sl->busy = false;
	cl->busy--;
}

static int cli_recv(struct client *cl, const struct ibv_wc *wc)
{
	unsigned int i = (u32)wc->wr_id;
	struct ctl *m = (struct ctl *)(cl->in.p + i * sizeof(*m)), in;
	struct slot *sl;

	if (wc->opcode != IBV_WC_RECV || wc->byte_len != sizeof(in)) {
		fail("protocol: unexpected %s of %u bytes from the server",
		     wc_op_name(wc), wc->byte_len);
		return -1;
	}
	in = *m;
	ctl_le(&in);
	if (post_recv(&cl->c, m, sizeof(*m), cl->in.mr->lkey,
		      wr_id(WR_RECV, i)))
		return -1;
	if (in.magic != MAGIC) {
		fail("protocol: reply with bad magic 0x%08x", in.magic);
		return -1;
	}
	if (in.type == CTL_DONE_ACK) {
		cl->done_acked = true;
		return 0;
	}
	sl = &cl->slots[in.slot < opt.depth ? in.slot : 0];
	if (in.slot >= opt.depth || !sl->busy || sl->msg != in.msg ||
	    (in.type == CTL_ACK && !sl->need_ack) ||
	    (in.type == CTL_READY && !sl->need_read) ||
	    (in.type != CTL_ACK && in.type != CTL_READY)) {
		fail("protocol: unexpected reply type %u slot %u msg %llu",
		     in.type, in.slot, in.msg);
		return -1;
	}
	if (in.type == CTL_READY) {
		/* need_read stays set until the READ itself completes */
		return cli_data(cl, in.slot, IBV_WR_RDMA_READ, WR_READ);
	}
	sl->need_ack = false;
	sl->bad += in.status;
	if (in.status)
		fprintf(stderr, "MISMATCH: server: %llu bad byte(s) in msg %llu (%s, size %llu)\n",
			in.status, sl->msg, op_names[sl->op], sl->size);
	cli_maybe_retire(cl, sl);
	return 0;
}

static int cli_wc(struct client *cl, const struct ibv_wc *wc)
{
	enum wr_kind kind = wc->wr_id >> 32;
	unsigned int i = (u32)wc->wr_id;
	struct slot *sl = &cl->slots[i < opt.depth ? i : 0];
	struct pattern pz;

	if (wc->status != IBV_WC_SUCCESS) {
		fail("completion error: %s (%s, vendor_err 0x%x)",
		     ibv_wc_status_str(wc->status), wc_op_name(wc),
		     wc->vendor_err);
		if (kind == WR_RECV || i >= opt.depth)
			fprintf(stderr, "  on a %s\n",
				kind == WR_RECV ? "receive" : "DONE");
		else
			fprintf(stderr, "  in msg %llu op=%s size=%llu loff=%llu roff=%llu\n",
				sl->msg, op_names[sl->op], sl->size, sl->loff,
				sl->roff);
		return -1;
	}
	if (kind == WR_RECV)
		return cli_recv(cl, wc);
	if (i == opt.depth) {		/* the DONE message */
		cl->done_sent = true;
		return 0;
	}
	if (!sl->busy || !sl->pending) {
		fail("protocol: stray completion for slot %u", i);
		return -1;
	}
	sl->pending--;
	if (kind == WR_READ) {
		pz = poison_pattern(PZ_LOCAL(i));
		sl->bad += check_message(OP_READ, sl->msg, sl->size, &pz,
					 local_at(cl, i), GUARD + sl->loff);
		sl->need_read = false;
	}
	cli_maybe_retire(cl, sl);
	return 0;
}

/* Oldest message still in flight, for a timeout report. */
static void cli_stuck(struct client *cl)
{
	struct slot *old = NULL;
	unsigned int i;

	for (i = 0; i < opt.depth; i++)
		if (cl->slots[i].busy && (!old || cl->slots[i].msg < old->msg))
			old = &cl->slots[i];
	if (!old) {
		fail("timeout: no reply to DONE within %u s", opt.timeout);
		return;
	}
	fail("timeout: no completion within %u s", opt.timeout);
	fprintf(stderr, "  msg %llu op=%s size=%llu waits for %s\n", old->msg,
		op_names[old->op], old->size,
		old->pending ? "its own work requests" :
		old->need_read ? "the READ" : "the server's ACK");
}

static int cli_connect(struct client *cl)
{
	struct conn *c = &cl->c;
	struct rdma_conn_param param = { 0 };
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM,
	}, *ai;
	struct rdma_cm_event *ev;
	struct hello h;
	char port[16];
	int err;
	unsigned int i;

	snprintf(port, sizeof(port), "%u", opt.port);
	err = getaddrinfo(opt.addr, port, &hints, &ai);
	if (err) {
		fail("%s: %s", opt.addr, gai_strerror(err));
		return -1;
	}
	err = rdma_resolve_addr(c->id, NULL, ai->ai_addr, CM_TIMEOUT_MS);
	freeaddrinfo(ai);
	if (err) {
		fail("rdma_resolve_addr(%s): %s", opt.addr, strerror(errno));
		return -1;
	}
	ev = cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED, CM_TIMEOUT_MS + 1000);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(c->id, CM_TIMEOUT_MS)) {
		fail("rdma_resolve_route: %s", strerror(errno));
		return -1;
	}
	ev = cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED, CM_TIMEOUT_MS + 1000);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);

	/* Per slot: a ctl, a data request and a READ; plus DONE. */
	cl->nin = opt.depth + 4;
	cl->slot_len = round64(GUARD + SKEW + opt.max_size + GUARD);
	if (setup_verbs(c, c->id, 3 * opt.depth + 4, cl->nin) ||
	    alloc_buf(c, &cl->data, opt.depth * cl->slot_len,
		      IBV_ACCESS_LOCAL_WRITE) ||
	    alloc_buf(c, &cl->out, (opt.depth + 1) * sizeof(struct ctl), 0) ||
	    alloc_buf(c, &cl->in, cl->nin * sizeof(struct ctl),
		      IBV_ACCESS_LOCAL_WRITE))
		return -1;
	for (i = 0; i < cl->nin; i++)
		if (post_recv(c, cl->in.p + i * sizeof(struct ctl),
			      sizeof(struct ctl), cl->in.mr->lkey,
			      wr_id(WR_RECV, i)))
			return -1;

	h = (struct hello){
		.magic = htole32(MAGIC),
		.version = htole16(PROTO_VERSION),
		.depth = htole16(opt.depth),
		.seed = htole64(opt.seed),
		.max_size = htole64(opt.max_size),
	};
	param.private_data = &h;
	param.private_data_len = sizeof(h);
	param.initiator_depth = rd_atom(opt.depth, c->dev.max_qp_init_rd_atom);
	param.responder_resources = rd_atom(1, c->dev.max_qp_rd_atom);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (set_ack_timeout(c->id))
		return -1;
	if (rdma_connect(c->id, &param)) {
		fail("rdma_connect: %s", strerror(errno));
		return -1;
	}
	ev = cm_expect(c, RDMA_CM_EVENT_ESTABLISHED, established_ms());
	if (!ev)
		return -1;
	memcpy(&cl->w, ev->param.conn.private_data,
	       ev->param.conn.private_data_len < sizeof(cl->w) ?
	       ev->param.conn.private_data_len : sizeof(cl->w));
	rdma_ack_cm_event(ev);
	cl->w.magic = le32toh(cl->w.magic);
	cl->w.wkey = le32toh(cl->w.wkey);
	cl->w.rkey = le32toh(cl->w.rkey);
	cl->w.waddr = le64toh(cl->w.waddr);
	cl->w.raddr = le64toh(cl->w.raddr);
	cl->w.slot_len = le64toh(cl->w.slot_len);
	if (cl->w.magic != MAGIC || cl->w.slot_len != cl->slot_len) {
		fail("the server's accept does not match this client");
		return -1;
	}
	printf("integrity: established\n");
	return 0;
}

static int run_client(void)
{
	struct client cl = { 0 };
	struct conn *c = &cl.c;
	struct rdma_cm_event *ev;
	struct ibv_wc wc[16];
	struct ctl *m;
	unsigned int i;
	int n, ret = -1;

	for (i = 0; i < NR_OPS; i++)
		if (opt.ops_mask & 1 << i)
			cl.ops[cl.nops++] = i;
	rng_state = opt.seed;
	printf("integrity: client seed=%llu bytes=%llu max_size=%llu depth=%u\n",
	       opt.seed, opt.bytes, opt.max_size, opt.depth);
	cl.slots = calloc(opt.depth, sizeof(*cl.slots));
	c->cm_ch = rdma_create_event_channel();
	if (!cl.slots || !c->cm_ch || set_nonblock(c->cm_ch->fd) ||
	    rdma_create_id(c->cm_ch, &c->id, NULL, RDMA_PS_TCP)) {
		fail("rdma_cm: %s", strerror(errno));
		goto out;
	}
	if (cli_connect(&cl))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &st.start);

	while (!cl.done_sent || !cl.done_acked) {
		for (i = 0; i < opt.depth && cl.issued < opt.bytes; i++)
			if (!cl.slots[i].busy && cli_issue(&cl, i))
				goto out;
		if (!cl.busy && cl.issued >= opt.bytes && !cl.done_posted) {
			/* Everything checked: hand the server our totals. */
			m = (struct ctl *)(cl.out.p + opt.depth * sizeof(*m));
			*m = (struct ctl){
				.magic = MAGIC, .type = CTL_DONE,
				.bytes = st.bytes,
			};
			memcpy(m->count, st.count, sizeof(m->count));
			ctl_le(m);
			if (post_send(c, IBV_WR_SEND, m, sizeof(*m),
				      cl.out.mr->lkey,
				      wr_id(WR_CTL, opt.depth), 0, 0, 0))
				goto out;
			cl.done_posted = true;
		}
		n = next_wcs(c, wc, 16);
		if (n < 0)
			goto out;
		if (!n) {
			if (c->peer_gone)
				fail("the server disconnected");
			else
				cli_stuck(&cl);
			goto out;
		}
		for (i = 0; i < (unsigned int)n; i++)
			if (cli_wc(&cl, &wc[i]))
				goto out;
	}
	ret = 0;
	printf("integrity: slowest msg=%llu op=%s size=%llu ms=%.1f\n",
	       cl.slowest.msg, op_names[cl.slowest.op], cl.slowest.size,
	       cl.slowest.start_us / 1e3);
	summary("client");
	if (!rdma_disconnect(c->id) && !c->peer_gone) {
		ev = cm_next(c, CM_TIMEOUT_MS);
		if (ev)
			rdma_ack_cm_event(ev);
	}
out:
	if (ret)
		summary("client");
	teardown(c);
	free_buf(&cl.data);
	free_buf(&cl.out);
	free_buf(&cl.in);
	teardown_ids(c);
	free(cl.slots);
	return ret || st.errors || st.mismatches ? 1 : 0;
}

/* ---- command line ------------------------------------------------------ */

static const char help_fmt[] =
	"usage: sroce-integrity -s [-p PORT] [-b BIND_ADDR] [options]\n"
	"       sroce-integrity -c SERVER_ADDR [-p PORT] [options]\n"
	"\n"
	"Move randomized RDMA traffic over one RC QP (connected with rdma_cm) and\n"
	"check every byte on the receiving side. Exits 0 only without mismatches\n"
	"and errors; both sides end with one 'integrity: ...' summary line.\n"
	"\n"
	"  -s, --server            serve one client, exit when it disconnects\n"
	"  -c, --client ADDR       connect to the server at ADDR (IPv4 or IPv6)\n"
	"  -p, --port PORT         rdma_cm TCP port space (default %u)\n"
	"  -b, --bind ADDR         server: listen on ADDR only (default all)\n"
	"      --bytes N           client: total payload (default 64M)\n"
	"      --seed S            client: pattern and choice seed (default random)\n"
	"      --max-size N        client: largest message (default 4M)\n"
	"      --max-read N        client: largest READ (default: --max-size);\n"
	"                          READ responses are not paced by ACKs, so big\n"
	"                          ones suffer most on a lossy link\n"
	"      --ops LIST          client: any of send,write,write_imm,read\n"
	"                          (comma separated; default all)\n"
	"      --depth N           client: messages in flight (default 1, max %u)\n"
	"      --timeout SEC       give up when nothing completes, or the\n"
	"                          connection is not up, for SEC s (default %u)\n"
	"      --ack-timeout N     local ACK timeout 4.096 us * 2^N, N 0..31\n"
	"                          (default: what rdma_cm picks)\n"
	"      --listen-timeout SEC  server: give up when no client comes\n"
	"                          (default: wait forever)\n"
	"      --inject-mismatch   flip one byte of the first message this side\n"
	"                          checks (server: send/write/write_imm, client:\n"
	"                          read), to test that mismatches are caught\n"
	"  -v, --verbose           print every message\n"
	"  -h, --help              this text\n"
	"Sizes take a K, M or G suffix (powers of 1024).\n";

static void print_help(FILE *f)
{
	fprintf(f, help_fmt, DEFAULT_PORT, MAX_DEPTH, DEFAULT_TIMEOUT);
}

static int parse_u64(const char *s, u64 *v, bool suffix)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	if (suffix && *end) {
		switch (*end++) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return -1;
		}
	}
	if (*end || (shift && n > (ULLONG_MAX >> shift)))
		return -1;
	*v = n << shift;
	return 0;
}

static int parse_ops(char *list)
{
	char *tok, *save;
	int i;

	opt.ops_mask = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_OPS && strcmp(tok, op_names[i]); i++)
			;
		if (i == NR_OPS)
			return -1;
		opt.ops_mask |= 1 << i;
	}
	return opt.ops_mask ? 0 : -1;
}

enum {
	OPT_BYTES = 256, OPT_SEED, OPT_MAX_SIZE, OPT_MAX_READ, OPT_OPS,
	OPT_DEPTH, OPT_TIMEOUT, OPT_LISTEN_TIMEOUT, OPT_ACK_TIMEOUT,
	OPT_INJECT,
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, 's' },
	{ "client", required_argument, NULL, 'c' },
	{ "port", required_argument, NULL, 'p' },
	{ "bind", required_argument, NULL, 'b' },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "max-read", required_argument, NULL, OPT_MAX_READ },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "listen-timeout", required_argument, NULL, OPT_LISTEN_TIMEOUT },
	{ "ack-timeout", required_argument, NULL, OPT_ACK_TIMEOUT },
	{ "inject-mismatch", no_argument, NULL, OPT_INJECT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int bad_arg(const char *name, const char *val)
{
	fprintf(stderr, "sroce-integrity: bad %s '%s'\n", name, val);
	return 2;
}

int main(int argc, char **argv)
{
	bool have_seed = false;
	u64 v;
	int ch;

	/* Scripts wait for the "listening" line in a log file. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt_long(argc, argv, "sc:p:b:vh", long_opts,
				 NULL)) != -1) {
		switch (ch) {
		case 's':
			opt.server = true;
			break;
		case 'c':
			opt.addr = optarg;
			break;
		case 'b':
			opt.bind = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, &v, false) || !v || v > 65535)
				return bad_arg("port", optarg);
			opt.port = v;
			break;
		case OPT_BYTES:
			if (parse_u64(optarg, &opt.bytes, true) || !opt.bytes)
				return bad_arg("--bytes", optarg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &opt.seed, false))
				return bad_arg("--seed", optarg);
			have_seed = true;
			break;
		case OPT_MAX_SIZE:
			if (parse_u64(optarg, &opt.max_size, true) ||
			    !opt.max_size || opt.max_size > MAX_MSG_SIZE)
				return bad_arg("--max-size (1 to 1G)", optarg);
			break;
		case OPT_MAX_READ:
			if (parse_u64(optarg, &opt.max_read, true) ||
			    !opt.max_read)
				return bad_arg("--max-read", optarg);
			break;
		case OPT_OPS:
			if (parse_ops(optarg))
				return bad_arg("--ops", optarg);
			break;
		case OPT_DEPTH:
			if (parse_u64(optarg, &v, false) || !v ||
			    v > MAX_DEPTH)
				return bad_arg("--depth", optarg);
			opt.depth = v;
			break;
		case OPT_TIMEOUT:
			if (parse_u64(optarg, &v, false) || !v || v > 86400)
				return bad_arg("--timeout", optarg);
			opt.timeout = v;
			break;
		case OPT_LISTEN_TIMEOUT:
			if (parse_u64(optarg, &v, false) || v > 86400)
				return bad_arg("--listen-timeout", optarg);
			opt.listen_timeout = v;
			break;
		case OPT_ACK_TIMEOUT:
			if (parse_u64(optarg, &v, false) || v > 31)
				return bad_arg("--ack-timeout", optarg);
			opt.ack_timeout = v;
			break;
		case OPT_INJECT:
			opt.inject = true;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return 2;
		}
	}
	if (optind != argc || opt.server == !!opt.addr) {
		print_help(stderr);
		return 2;
	}
	if (opt.max_read > opt.max_size) {
		fputs("sroce-integrity: --max-read above --max-size\n", stderr);
		return 2;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt.seed = mix64(ts.tv_sec ^ ts.tv_nsec ^
				 (u64)getpid() << 32) >> 16;
	}
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	return opt.server ? run_server() : run_client();
}
