// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: the server, which checks what the client sends and
 * writes, and serves its READs.
 */
#include "integrity.h"

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
	/* Completions polled while waiting for a reply buffer, in order. */
	struct ibv_wc *held;
	unsigned int nheld, held_head, held_cap;
	u64 reply_waits;
};

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

/*
 * A free reply buffer, waiting for one if need be. A reply's SEND
 * completes when the client's ACK for it is back, and nothing orders that
 * ACK before the client's next message: a client that got its replies
 * sends again at once, while the ACKs wait for their sender (in a loaded
 * VM, a vCPU the host has descheduled). Measured: 20 replies out, none
 * complete, 31 of the client's messages received in those 10 ms, then all
 * 20 SEND completions together. So this waits for a SEND completion, as
 * any consumer of a busy send buffer must, and keeps the other completions
 * it polls meanwhile for the main loop, in their order.
 */
static int srv_reply_buf(struct server *s)
{
	struct ibv_wc wc;
	unsigned int i;
	int n;

	for (i = 0; i < s->nout; i++)
		if (!s->out_busy[i])
			return i;
	s->reply_waits++;
	for (;;) {
		n = next_wcs(&s->c, &wc, 1);
		if (n < 0)
			return -1;
		if (!n) {
			fail("no reply buffer came free: all %u in flight (%s)",
			     s->nout, s->c.peer_gone ? "client gone" :
			     "timeout");
			return -1;
		}
		if (wc.status == IBV_WC_SUCCESS && wc.wr_id >> 32 == WR_CTL) {
			i = (u32)wc.wr_id;
			s->out_busy[i] = false;
			return i;
		}
		/* The CQ holds no more than this; a full one would be a bug. */
		if (s->nheld == s->held_cap) {
			fail("protocol: more completions than the CQ holds");
			return -1;
		}
		s->held[(s->held_head + s->nheld++) % s->held_cap] = wc;
	}
}

static int srv_reply(struct server *s, enum ctl_type type, u16 slot,
		     u64 msg, u64 status)
{
	struct ctl *m;
	int i = srv_reply_buf(s);

	if (i < 0)
		return -1;
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
	s->held_cap = s->nout + s->nrecv;
	s->held = calloc(s->held_cap, sizeof(*s->held));
	if (!s->recv_skew || !s->out_busy || !s->held) {
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

int run_server(void)
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
		if (s.nheld) {
			/* What srv_reply_buf() polled comes first. */
			wc[0] = s.held[s.held_head];
			s.held_head = (s.held_head + 1) % s.held_cap;
			s.nheld--;
			n = 1;
		} else {
			n = next_wcs(c, wc, 16);
		}
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
	if (s.reply_waits)
		printf("integrity: %llu waits for a reply buffer\n",
		       s.reply_waits);
	summary("server");
	teardown(c);
	free_buf(&s.recv);
	free_buf(&s.wreg);
	free_buf(&s.rreg);
	free_buf(&s.out);
	teardown_ids(c);
	free(s.recv_skew);
	free(s.out_busy);
	free(s.held);
	return ret || st.errors || st.mismatches ? 1 : 0;
}
