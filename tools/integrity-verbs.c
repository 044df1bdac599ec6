// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: the verbs and rdma_cm plumbing both ends share: buffers,
 * posting, rdma_cm events, waiting for completions, the QP and its CQ.
 */
#include "integrity.h"

void ctl_le(struct ctl *c)
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

/*
 * How long the CM exchange may take once the REQ or REP is out: at least
 * CM_TIMEOUT_MS, and as long as --timeout allows for anything else. A
 * busy KASAN guest took over 10 s (a lost REP is resent after ~4 s).
 */
int established_ms(void)
{
	return opt.timeout * 1000 > CM_TIMEOUT_MS ? (int)opt.timeout * 1000 :
						   CM_TIMEOUT_MS;
}

int alloc_buf(struct conn *c, struct buf *b, size_t len, int access)
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

void free_buf(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

u64 wr_id(enum wr_kind kind, unsigned int idx)
{
	return (u64)kind << 32 | idx;
}

/* The result err of ibv_post_recv or ibv_post_send (verb): 0, or -1 failed. */
static int posted(int err, const char *verb)
{
	errno = err;
	if (errno) {
		fail("%s: %s", verb, strerror(errno));
		return -1;
	}
	return 0;
}

int post_recv(struct conn *c, void *addr, size_t len, u32 lkey,
	      u64 id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return posted(ibv_post_recv(c->id->qp, &wr, &bad), "ibv_post_recv");
}

int post_send(struct conn *c, enum ibv_wr_opcode opcode, void *addr,
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

	return posted(ibv_post_send(c->id->qp, &wr, &bad), "ibv_post_send");
}

int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Next rdma_cm event within ms (negative: no limit), or NULL. */
struct rdma_cm_event *cm_next(struct conn *c, int ms)
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
struct rdma_cm_event *cm_expect(struct conn *c,
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
int next_wcs(struct conn *c, struct ibv_wc *wc, int max)
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

const char *wc_op_name(const struct ibv_wc *wc)
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
int setup_verbs(struct conn *c, struct rdma_cm_id *id,
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

void teardown(struct conn *c)
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

void teardown_ids(struct conn *c)
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
int set_ack_timeout(struct rdma_cm_id *id)
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

unsigned int rd_atom(unsigned int want, int dev_max)
{
	if (dev_max <= 0)
		return 1;
	return want < (unsigned int)dev_max ? want : (unsigned int)dev_max;
}

size_t round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}
