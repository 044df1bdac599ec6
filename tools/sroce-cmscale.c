// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-cmscale: many RC connections through rdma_cm, what they cost.
 *
 * The client opens --qps connections to the server, at most --window of
 * them being set up at a time, each with the QP an MPI rank or an NVMe-oF
 * queue would have (128 send and 128 receive WRs, one SGE, 16 READs and
 * atomics in flight each way), all sharing one PD and one CQ per side.
 * With every connection established, each side prints what its kernel
 * holds more than before its first connection, per QP: the slab, vmalloc
 * and free-memory figures of /proc/meminfo and the memory cgroup's
 * memory.current (the process's own cgroup, when it has that file). Then
 * the client disconnects them all and waits until every QP and cm_id is
 * destroyed.
 *
 * The client prints "NAME VALUE" lines: qps, connect_s (first cm_id to
 * the last ESTABLISHED), conn_per_s, teardown_s (first DREQ to the last
 * cm_id destroyed) and the memory figures slab_kib_qp, vmalloc_kib_qp,
 * memfree_kib_qp, memcg_kib_qp; as root, also "slab_cache NAME KIB" for
 * each slab cache that grew by a tenth of a KiB a QP or more, and
 * slab_pages_kib_qp, what Slab: grew beyond the caches (large kmalloc
 * allocations). The server prints its own memory
 * figures, prefixed "server_", and ends when every connection it accepted
 * is gone.
 *
 * Nothing is posted: what the figures show is the cost of a connected,
 * idle QP and of the connection's setup and teardown.
 *
 * Exit status: 0 when every connection was established and torn down.
 */
#define _GNU_SOURCE
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

static struct {
	bool server;
	const char *host;
	const char *bind;
	const char *port;
	unsigned int qps;
	unsigned int window;
	unsigned int timeout;
} opt = {
	.port = "18779", .qps = 256, .window = 32, .timeout = 300,
};

static struct rdma_event_channel *chan;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct rdma_cm_id **ids;	/* the client's, by index */
static double deadline;

struct mem {
	long long slab, vmalloc, memfree, memcg;	/* KiB; memcg -1: none */
};

static struct mem before;

/* /proc/slabinfo's caches (readable by root): name, bytes in objects. */
#define MAX_CACHES 512
struct caches {
	unsigned int n;
	char name[MAX_CACHES][64];
	long long bytes[MAX_CACHES];
};

static struct caches caches_before;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "sroce-cmscale: %s\n", what);
	exit(1);
}

/* The memory cgroup this process is in, as a path to its memory.current. */
static long long memcg_kib(void)
{
	char line[512], path[600];
	long long bytes = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	path[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = 0;
			snprintf(path, sizeof(path),
				 "/sys/fs/cgroup%s/memory.current", line + 3);
			break;
		}
	}
	fclose(f);
	if (!path[0])
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &bytes) != 1)
		bytes = -1;
	fclose(f);
	return bytes < 0 ? -1 : bytes / 1024;
}

static struct mem mem_now(void)
{
	struct mem m = { 0, 0, 0, -1 };
	char key[64];
	long long v;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("cannot read /proc/meminfo");
	while (fscanf(f, "%63s %lld kB\n", key, &v) == 2) {
		if (!strcmp(key, "Slab:"))
			m.slab = v;
		else if (!strcmp(key, "VmallocUsed:"))
			m.vmalloc = v;
		else if (!strcmp(key, "MemFree:"))
			m.memfree = v;
	}
	fclose(f);
	m.memcg = memcg_kib();
	return m;
}

static void caches_now(struct caches *c)
{
	char line[512], name[64];
	long long active, num, size;
	FILE *f = fopen("/proc/slabinfo", "r");

	c->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && c->n < MAX_CACHES) {
		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &num,
			   &size) != 4)
			continue;
		snprintf(c->name[c->n], sizeof(c->name[0]), "%s", name);
		c->bytes[c->n++] = num * size;
	}
	fclose(f);
}

/*
 * The caches that grew by a tenth of a KiB a QP or more, for the log:
 * where the slab figure goes. What Slab: counts beyond the caches is
 * kmalloc's large allocations, whole pages.
 */
static void print_caches(const char *prefix, unsigned int n,
			 long long slab_kib)
{
	static struct caches c;
	long long sum = 0;
	unsigned int i, j;

	caches_now(&c);
	if (!c.n || !caches_before.n)
		return;
	for (i = 0; i < c.n; i++) {
		long long d = c.bytes[i];

		for (j = 0; j < caches_before.n; j++)
			if (!strcmp(caches_before.name[j], c.name[i])) {
				d -= caches_before.bytes[j];
				break;
			}
		sum += d;
		if (d >= (long long)n * 1024 / 10)
			printf("%sslab_cache %s %.2f\n", prefix, c.name[i],
			       (double)d / 1024 / n);
	}
	printf("%sslab_pages_kib_qp %.2f\n", prefix,
	       ((double)slab_kib - sum / 1024.0) / n);
}

/* What this side holds more than at the start, per QP. */
static void print_mem(const char *prefix, unsigned int n)
{
	struct mem m = mem_now();

	print_caches(prefix, n, m.slab - before.slab);

	printf("%sslab_kib_qp %.2f\n", prefix, (double)(m.slab - before.slab) / n);
	printf("%svmalloc_kib_qp %.2f\n", prefix,
	       (double)(m.vmalloc - before.vmalloc) / n);
	printf("%smemfree_kib_qp %.2f\n", prefix,
	       (double)(before.memfree - m.memfree) / n);
	if (m.memcg >= 0 && before.memcg >= 0)
		printf("%smemcg_kib_qp %.2f\n", prefix,
		       (double)(m.memcg - before.memcg) / n);
	fflush(stdout);
}

/* The next event, or exit when none comes before the deadline. */
static struct rdma_cm_event *next_event(void)
{
	struct rdma_cm_event *ev;
	struct pollfd p = { .fd = chan->fd, .events = POLLIN };

	for (;;) {
		int left = (int)((deadline - now()) * 1000);

		if (left <= 0)
			return NULL;
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			die("poll on the event channel failed");
		if (!(p.revents & POLLIN))
			continue;
		if (rdma_get_cm_event(chan, &ev) == 0)
			return ev;
		if (errno != EAGAIN && errno != EINTR)
			die("rdma_get_cm_event failed");
	}
}

/* One PD and one CQ on the device the first connection resolved to. */
static void shared_res(struct ibv_context *verbs)
{
	if (pd)
		return;
	pd = ibv_alloc_pd(verbs);
	if (!pd)
		die("ibv_alloc_pd failed");
	cq = ibv_create_cq(verbs, 1024, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq failed");
}

static int make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 128, .max_recv_wr = 128,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	shared_res(id->verbs);
	return rdma_create_qp(id, pd, &a);
}

static struct rdma_conn_param conn_param = {
	.responder_resources = 16, .initiator_depth = 16,
	.retry_count = 7, .rnr_retry_count = 7,
};

static int run_server(void)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *ai;
	struct rdma_cm_id *listen_id;
	unsigned int accepted = 0, established = 0, gone = 0;

	if (rdma_getaddrinfo(opt.bind, opt.port, &hints, &ai))
		die("rdma_getaddrinfo of the bind address failed");
	if (rdma_create_id(chan, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, ai->ai_src_addr) ||
	    rdma_listen(listen_id, 1024))
		die("cannot listen");
	rdma_freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	while (gone < opt.qps) {
		struct rdma_cm_event *ev = next_event();
		struct rdma_cm_id *id;
		enum rdma_cm_event_type type;

		if (!ev) {
			fprintf(stderr,
				"sroce-cmscale: timed out: %u accepted, %u established, %u gone\n",
				accepted, established, gone);
			return 1;
		}
		id = ev->id;
		type = ev->event;
		switch (type) {
		case RDMA_CM_EVENT_CONNECT_REQUEST:
			if (make_qp(id) || rdma_accept(id, &conn_param)) {
				fprintf(stderr, "sroce-cmscale: accept %u failed: %s\n",
					accepted, strerror(errno));
				rdma_ack_cm_event(ev);
				return 1;
			}
			accepted++;
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			if (++established == opt.qps)
				print_mem("server_", opt.qps);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			rdma_ack_cm_event(ev);
			rdma_disconnect(id);
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			gone++;
			continue;
		default:
			fprintf(stderr, "sroce-cmscale: server: unexpected %s (status %d)\n",
				rdma_event_str(type), ev->status);
			rdma_ack_cm_event(ev);
			return 1;
		}
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(listen_id);
	return 0;
}

static void start_conn(unsigned int i, struct rdma_addrinfo *ai)
{
	if (rdma_create_id(chan, &ids[i], (void *)(uintptr_t)i, RDMA_PS_TCP))
		die("rdma_create_id failed");
	if (rdma_resolve_addr(ids[i], ai->ai_src_addr, ai->ai_dst_addr, 2000))
		die("rdma_resolve_addr failed");
}

static int run_client(void)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	unsigned int started = 0, established = 0, gone = 0, i;
	double t0, t1, t2;

	if (rdma_getaddrinfo(opt.host, opt.port, &hints, &ai))
		die("rdma_getaddrinfo of the server failed");
	ids = calloc(opt.qps, sizeof(*ids));
	if (!ids)
		die("out of memory");
	t0 = now();
	while (started < opt.qps && started < opt.window)
		start_conn(started++, ai);
	while (established < opt.qps) {
		struct rdma_cm_event *ev = next_event();
		struct rdma_cm_id *id;
		int err = 0;

		if (!ev) {
			fprintf(stderr, "sroce-cmscale: timed out with %u of %u established\n",
				established, opt.qps);
			return 1;
		}
		id = ev->id;
		i = (uintptr_t)id->context;
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			err = rdma_resolve_route(id, 2000);
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			err = make_qp(id) || rdma_connect(id, &conn_param);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			established++;
			if (started < opt.qps)
				start_conn(started++, ai);
			break;
		default:
			fprintf(stderr,
				"sroce-cmscale: connection %u: %s (status %d), %u established\n",
				i, rdma_event_str(ev->event), ev->status,
				established);
			rdma_ack_cm_event(ev);
			return 1;
		}
		rdma_ack_cm_event(ev);
		if (err) {
			fprintf(stderr, "sroce-cmscale: connection %u: %s\n", i,
				strerror(errno));
			return 1;
		}
	}
	t1 = now();
	printf("qps %u\nconnect_s %.3f\nconn_per_s %.1f\n", opt.qps, t1 - t0,
	       opt.qps / (t1 - t0));
	print_mem("", opt.qps);

	t1 = now();
	for (i = 0; i < opt.qps; i++)
		if (rdma_disconnect(ids[i]))
			die("rdma_disconnect failed");
	while (gone < opt.qps) {
		struct rdma_cm_event *ev = next_event();
		struct rdma_cm_id *id;

		if (!ev) {
			fprintf(stderr, "sroce-cmscale: timed out with %u of %u torn down\n",
				gone, opt.qps);
			return 1;
		}
		id = ev->id;
		if (ev->event != RDMA_CM_EVENT_DISCONNECTED) {
			fprintf(stderr, "sroce-cmscale: teardown: unexpected %s\n",
				rdma_event_str(ev->event));
			rdma_ack_cm_event(ev);
			return 1;
		}
		rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
		rdma_destroy_id(id);
		gone++;
	}
	t2 = now();
	printf("teardown_s %.3f\n", t2 - t1);
	rdma_freeaddrinfo(ai);
	free(ids);
	return 0;
}

static void help(void)
{
	fprintf(stderr,
		"usage: sroce-cmscale -s [-b BIND_ADDR] [-p PORT] [-n QPS] [-t SECS]\n"
		"       sroce-cmscale -c SERVER [-p PORT] [-n QPS] [-w WINDOW] [-t SECS]\n"
		"  -n  connections (default 256)   -w  set up at a time (default 32)\n"
		"  -t  limit of the whole run in seconds (default 300)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c, rc;

	while ((c = getopt(argc, argv, "sb:c:p:n:w:t:")) != -1) {
		switch (c) {
		case 's':
			opt.server = true;
			break;
		case 'b':
			opt.bind = optarg;
			break;
		case 'c':
			opt.host = optarg;
			break;
		case 'p':
			opt.port = optarg;
			break;
		case 'n':
			opt.qps = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			opt.window = strtoul(optarg, NULL, 0);
			break;
		case 't':
			opt.timeout = strtoul(optarg, NULL, 0);
			break;
		default:
			help();
		}
	}
	if (opt.server == !!opt.host || !opt.qps || !opt.window || !opt.timeout)
		help();
	caches_now(&caches_before);
	before = mem_now();
	deadline = now() + opt.timeout;
	chan = rdma_create_event_channel();
	if (!chan)
		die("rdma_create_event_channel failed (is rdma_ucm loaded?)");
	rc = opt.server ? run_server() : run_client();
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(chan);
	return rc;
}
