// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-atomic: RC atomics between two hosts, every result checked.
 *
 * The server exposes one 8-byte word (initially 0) with remote atomic
 * access and gives its address and rkey in the rdma_cm accept. The client
 * runs --ops random atomics on it with up to --depth in flight:
 * FETCH_AND_ADD of a random addend, CMP_AND_SWP whose compare value
 * matches, and CMP_AND_SWP whose compare value does not. The responder
 * executes requests in PSN order, so the value each one must return is
 * known in advance; at the end an RDMA READ must find the value the last
 * one left.
 *
 * Through a lossy link this is the check that the responder executes an
 * atomic once: a retransmitted FETCH_AND_ADD executed again would shift
 * every later result, a CMP_AND_SWP executed again would return its own
 * swap value.
 *
 * Exit status: 0 when every result and the final value are right.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define MAX_DEPTH	16

struct word_info {		/* the accept's private data, little endian */
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

static struct {
	bool server;
	const char *host;
	const char *port;
	unsigned long ops;
	unsigned int depth;
	unsigned long long seed;
	unsigned int timeout;
	int ack_timeout;
} opt = {
	.port = "18778", .ops = 10000, .depth = 8, .seed = 1, .timeout = 60,
	.ack_timeout = -1,
};

static unsigned long long rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: reproducible from --seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct rdma_cm_id *endpoint(bool passive)
{
	struct rdma_addrinfo hints = { 0 }, *res;
	struct ibv_qp_init_attr attr = { 0 };
	struct rdma_cm_id *id;
	int err;

	hints.ai_port_space = RDMA_PS_TCP;
	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	err = rdma_getaddrinfo(passive ? NULL : opt.host, opt.port, &hints,
			       &res);
	if (err) {
		fprintf(stderr, "rdma_getaddrinfo: %s\n", strerror(errno));
		return NULL;
	}
	attr.cap.max_send_wr = MAX_DEPTH + 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	err = rdma_create_ep(&id, res, NULL, passive ? NULL : &attr);
	rdma_freeaddrinfo(res);
	if (err) {
		fprintf(stderr, "rdma_create_ep: %s\n", strerror(errno));
		return NULL;
	}
	if (opt.ack_timeout >= 0) {
		uint8_t t = opt.ack_timeout;

		rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
				&t, sizeof(t));
	}
	return id;
}

/*
 * The side that got the last message waits for the other to disconnect:
 * its ACK of that message may be lost, and a disconnect from this side
 * would flush the sender's retransmission before it is acknowledged.
 */
static void wait_disconnect(struct rdma_cm_id *id)
{
	struct pollfd pfd = { .fd = id->channel->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;

	while (poll(&pfd, 1, opt.timeout * 1000) > 0) {
		if (rdma_get_cm_event(id->channel, &ev))
			return;
		type = ev->event;
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_DISCONNECTED)
			return;
	}
	fprintf(stderr, "server: the client did not disconnect in %u s\n",
		opt.timeout);
}

static int run_server(void)
{
	struct rdma_conn_param param = { 0 };
	struct ibv_qp_init_attr attr = { 0 };
	struct rdma_cm_id *lid, *id;
	struct word_info wi;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint64_t *word;
	int ret = 1;

	lid = endpoint(true);
	if (!lid || rdma_listen(lid, 1)) {
		fprintf(stderr, "listen: %s\n", strerror(errno));
		return 1;
	}
	printf("atomic: server listening on port %s\n", opt.port);
	fflush(stdout);
	if (rdma_get_request(lid, &id)) {
		fprintf(stderr, "rdma_get_request: %s\n", strerror(errno));
		return 1;
	}
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	if (rdma_create_qp(id, NULL, &attr)) {
		fprintf(stderr, "rdma_create_qp: %s\n", strerror(errno));
		return 1;
	}
	word = aligned_alloc(4096, 4096);
	memset(word, 0, 4096);
	mr = ibv_reg_mr(id->pd, word, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr) {
		fprintf(stderr, "ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	/* The client's "done" (a SEND) tells the server to look. */
	if (rdma_post_recv(id, NULL, word + 8, 8, mr)) {
		fprintf(stderr, "rdma_post_recv: %s\n", strerror(errno));
		return 1;
	}
	wi.addr = htole64((uintptr_t)word);
	wi.rkey = htole32(mr->rkey);
	wi.pad = 0;
	param.private_data = &wi;
	param.private_data_len = sizeof(wi);
	param.responder_resources = MAX_DEPTH;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_accept(id, &param)) {
		fprintf(stderr, "rdma_accept: %s\n", strerror(errno));
		return 1;
	}
	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "server: no done message\n");
	} else {
		uint64_t want = le64toh(word[8]);

		printf("atomic: server word 0x%016llx, client expects 0x%016llx\n",
		       (unsigned long long)word[0], (unsigned long long)want);
		ret = word[0] != want;
		wait_disconnect(id);
	}
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lid);
	free(word);
	return ret;
}

enum kind { FADD, CAS, CAS_MISS, NR_KINDS };
static const char *const kind_name[NR_KINDS] = { "fadd", "cas", "cas_miss" };

struct op {
	enum kind kind;
	uint64_t expect;
};

static void mismatch(unsigned long n, const char *what, uint64_t got,
		     uint64_t want)
{
	fprintf(stderr, "MISMATCH: op %lu (%s): 0x%016llx, want 0x%016llx\n",
		n, what, (unsigned long long)got, (unsigned long long)want);
}

static int run_client(void)
{
	struct rdma_conn_param param = { 0 };
	unsigned long posted = 0, done = 0, bad = 0, count[NR_KINDS] = { 0 };
	struct op ring[MAX_DEPTH];
	const struct word_info *wi;
	struct ibv_mr *mr;
	struct rdma_cm_id *id;
	uint64_t raddr, shadow = 0, *res;
	uint32_t rkey;
	double t0, deadline;
	struct ibv_wc wc;
	int errors = 0;

	id = endpoint(false);
	if (!id)
		return 1;
	param.responder_resources = 1;
	param.initiator_depth = MAX_DEPTH;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_connect(id, &param)) {
		fprintf(stderr, "rdma_connect: %s\n", strerror(errno));
		return 1;
	}
	wi = id->event->param.conn.private_data;
	if (!wi || id->event->param.conn.private_data_len < sizeof(*wi)) {
		fprintf(stderr, "no word address from the server\n");
		return 1;
	}
	raddr = le64toh(wi->addr);
	rkey = le32toh(wi->rkey);
	res = aligned_alloc(4096, 4096);
	mr = ibv_reg_mr(id->pd, res, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		fprintf(stderr, "ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	rng_state = opt.seed * 0x9e3779b97f4a7c15ULL + 1;
	t0 = now();
	deadline = t0 + opt.timeout;
	while (done < opt.ops) {
		while (posted < opt.ops && posted - done < opt.depth) {
			struct ibv_send_wr wr = { 0 }, *badwr;
			unsigned int slot = posted % opt.depth;
			struct ibv_sge sge = {
				.addr = (uintptr_t)&res[slot], .length = 8,
				.lkey = mr->lkey,
			};
			struct op *o = &ring[slot];
			uint64_t r = rng();

			o->kind = r % NR_KINDS;
			o->expect = shadow;
			res[slot] = ~shadow;	/* never the right answer */
			wr.wr_id = posted;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.atomic.remote_addr = raddr;
			wr.wr.atomic.rkey = rkey;
			r = rng();
			switch (o->kind) {
			case FADD:
				wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				wr.wr.atomic.compare_add = r;
				shadow += r;
				break;
			case CAS:
				wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.compare_add = shadow;
				wr.wr.atomic.swap = r;
				shadow = r;
				break;
			default:
				wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.compare_add = ~shadow;
				wr.wr.atomic.swap = r;
				break;
			}
			if (ibv_post_send(id->qp, &wr, &badwr)) {
				fprintf(stderr, "ibv_post_send: %s\n",
					strerror(errno));
				return 1;
			}
			posted++;
		}
		if (ibv_poll_cq(id->send_cq, 1, &wc) <= 0) {
			if (now() > deadline) {
				fprintf(stderr, "timeout: op %lu not done in %u s\n",
					done, opt.timeout);
				errors++;
				break;
			}
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != done) {
			fprintf(stderr, "op %lu: %s (wr_id %llu)\n", done,
				ibv_wc_status_str(wc.status),
				(unsigned long long)wc.wr_id);
			errors++;
			break;
		}
		{
			unsigned int slot = done % opt.depth;
			struct op *o = &ring[slot];

			if (res[slot] != o->expect) {
				if (bad < 10)
					mismatch(done, kind_name[o->kind],
						 res[slot], o->expect);
				bad++;
			}
			count[o->kind]++;
		}
		done++;
		deadline = now() + opt.timeout;
	}
	if (!errors) {
		/* The final value, read back; then tell the server to look. */
		res[MAX_DEPTH] = ~shadow;
		if (rdma_post_read(id, NULL, &res[MAX_DEPTH], 8, mr, 0, raddr,
				   rkey) ||
		    rdma_get_send_comp(id, &wc) <= 0 ||
		    wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "final READ failed\n");
			errors++;
		} else if (res[MAX_DEPTH] != shadow) {
			mismatch(done, "final value", res[MAX_DEPTH], shadow);
			bad++;
		}
		res[MAX_DEPTH + 1] = htole64(shadow);
		if (rdma_post_send(id, NULL, &res[MAX_DEPTH + 1], 8, mr, 0) ||
		    rdma_get_send_comp(id, &wc) <= 0) {
			fprintf(stderr, "done message not sent: %s\n",
				strerror(errno));
			errors++;
		} else if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "done message: %s\n",
				ibv_wc_status_str(wc.status));
			errors++;
		}
	}
	printf("atomic: ops=%lu mismatches=%lu errors=%d", done, bad, errors);
	printf(" fadd=%lu cas=%lu cas_miss=%lu depth=%u time=%.2fs role=client\n",
	       count[FADD], count[CAS], count[CAS_MISS], opt.depth,
	       now() - t0);
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_ep(id);
	free(res);
	return bad || errors;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-atomic -s [-p PORT]\n"
		"       sroce-atomic -c HOST [-p PORT] [-n OPS] [-d DEPTH] [--seed N]\n"
		"                    [--timeout SECS] [--ack-timeout N]\n"
		"  -n OPS       atomics to run (default 10000)\n"
		"  -d DEPTH     in flight at once, 1..%d (default 8)\n"
		"  --timeout    seconds without a completion before giving up\n"
		"  --ack-timeout N  local ACK timeout 4.096 us * 2^N\n",
		MAX_DEPTH);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 'S' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "ack-timeout", required_argument, NULL, 'A' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "sc:p:n:d:", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.server = true;
			break;
		case 'c':
			opt.host = optarg;
			break;
		case 'p':
			opt.port = optarg;
			break;
		case 'n':
			opt.ops = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			opt.depth = strtoul(optarg, NULL, 0);
			break;
		case 'S':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'T':
			opt.timeout = strtoul(optarg, NULL, 0);
			break;
		case 'A':
			opt.ack_timeout = atoi(optarg);
			break;
		default:
			print_usage();
		}
	}
	if (opt.server == !!opt.host || !opt.depth || opt.depth > MAX_DEPTH ||
	    !opt.ops)
		print_usage();
	return opt.server ? run_server() : run_client();
}
