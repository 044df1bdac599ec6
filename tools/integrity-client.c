// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: the client, which drives the protocol: it picks each
 * message, sends or writes it, and checks what it READs back.
 */
#include "integrity.h"

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

int run_client(void)
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
