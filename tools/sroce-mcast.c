// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-mcast: UD multicast through raw verbs, on one device.
 *
 * One sender and three receiver UD QPs of DEV; r1 and r2 are attached to
 * MGID (ibv_attach_mcast), r3 never is. The sender sends to the multicast
 * QPN through an AH whose destination is MGID and whose source is GID
 * --gid-index: the device delivers to its own attached QPs (and sends the
 * datagram on the wire too). Checked, one TAP line each:
 *  - r1 and r2 get one completion each: RECV, 40 + payload bytes, the
 *    sender's QPN, IBV_WC_GRH, MGID as the destination in the GRH area,
 *    the payload after it; r3 gets nothing;
 *  - the netdev of the GID joined the group (`ip maddr`);
 *  - with r1 detached only r2 gets a datagram and the group stays joined;
 *  - a datagram with another Q_Key reaches nobody;
 *  - with r2 detached too the netdev leaves the group and a datagram
 *    reaches nobody.
 * With --late-vlan LOWER.ID, a VLAN netdev of that name is added while
 * r1 and r2 are attached: it must join the group at once (a group is the
 * device's, joined on every VLAN over its netdev), and leave it with
 * the netdev; it is deleted at the end.
 *
 * MGID is an IPv4-mapped address (::ffff:239.1.2.3) for an IPv4 RoCE v2
 * GID, an IPv6 multicast address (ff0e::5:1) for an IPv6 one: Linux 6.1's
 * rdma_cm refuses IPv6 multicast joins on RoCE v2, raw verbs do not.
 *
 * Exit status: 0 when every check passed, 1 when one failed, 2 on usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define QKEY		0x11111111u
#define BAD_QKEY	0x22222222u	/* high bit clear: used as given */
#define MCAST_QPN	0xffffffu
#define GRH_LEN		40
#define PAYLOAD_LEN	64
#define SLOT_LEN	(GRH_LEN + PAYLOAD_LEN)
#define NR_RECV		4	/* posted per receiver: a duplicate shows */
#define NR_RCV		3	/* r1, r2 (attached), r3 (never) */
#define WAIT_MS		5000	/* for a datagram that must arrive */
#define QUIET_MS	300	/* for one that must not */
#define GROUP_MS	3000	/* for the netdev to join or leave */

static struct {
	const char *dev;
	int gid_index;
	const char *mgid;
	const char *late_vlan;	/* LOWER.ID, added while attached */
} opt = { .gid_index = -1 };

struct rcv {
	const char *name;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;	/* NR_RECV slots of SLOT_LEN bytes */
	bool attached;
	bool was_attached;
};

/* What one receiver got from one datagram sent. */
struct got {
	unsigned int n;
	char why[256];		/* what was wrong with the first, if anything */
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_qp *sqp;
	struct ibv_mr *smr;
	unsigned char *sbuf;
	struct ibv_ah *ah;
	struct rcv r[NR_RCV];
	union ibv_gid mgid;
	bool v4;		/* an IPv4-mapped MGID */
	char ndev[64];
	bool late_added;	/* opt.late_vlan exists, to be deleted */
	char maddr_out[1024];	/* the last `ip maddr` output, group lines */
} c = {
	.r = { { .name = "r1" }, { .name = "r2" }, { .name = "r3" } },
};

static unsigned int n_checks, n_failed;
static char detail[2048];

/* Add a line to the detail printed under the next failed check. */
static void note(const char *fmt, ...)
{
	size_t len = strlen(detail);
	va_list ap;

	if (len + 2 >= sizeof(detail))
		return;
	va_start(ap, fmt);
	vsnprintf(detail + len, sizeof(detail) - len - 1, fmt, ap);
	va_end(ap);
	strcat(detail, "\n");
}

/* One TAP line; a failed one gets the detail noted since the last one. */
static bool check(bool pass, const char *fmt, ...)
{
	char *line, *save;
	va_list ap;

	n_checks++;
	printf("%s - ", pass ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		n_failed++;
		for (line = strtok_r(detail, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("#   %s\n", line);
	}
	detail[0] = '\0';
	fflush(stdout);
	return pass;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* /sys/class/infiniband/DEV/ports/1/WHAT/N, first line. */
static bool sysfs_gid_attr(const char *what, char *buf, size_t size)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/%s/%d",
		 opt.dev, what, opt.gid_index);
	f = fopen(path, "r");
	if (!f) {
		note("%s: %s", path, strerror(errno));
		return false;
	}
	if (!fgets(buf, size, f)) {
		note("%s: empty", path);
		fclose(f);
		return false;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static bool ifname_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && !strchr("._-@", *s))
			return false;
	return true;
}

/* The GID is a RoCE v2 one of MGID's family; its netdev's name. */
static bool check_gid(void)
{
	union ibv_gid gid;
	char type[64];
	bool gid_v4;
	int err;

	if (!sysfs_gid_attr("gid_attrs/types", type, sizeof(type)) ||
	    !sysfs_gid_attr("gid_attrs/ndevs", c.ndev, sizeof(c.ndev)))
		return false;
	if (strcmp(type, "RoCE v2")) {
		note("type \"%s\", want \"RoCE v2\"", type);
		return false;
	}
	if (!ifname_ok(c.ndev)) {
		note("netdev name \"%s\"", c.ndev);
		return false;
	}
	err = ibv_query_gid(c.ctx, 1, opt.gid_index, &gid);
	if (err) {
		note("ibv_query_gid: %s", strerror(errno));
		return false;
	}
	gid_v4 = IN6_IS_ADDR_V4MAPPED((struct in6_addr *)gid.raw);
	if (gid_v4 != c.v4) {
		note("an %s GID for an %s MGID", gid_v4 ? "IPv4" : "IPv6",
		     c.v4 ? "IPv4" : "IPv6");
		return false;
	}
	return true;
}

static struct ibv_qp *ud_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = 4, .max_recv_wr = NR_RECV,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp *qp;
	int err;

	qp = ibv_create_qp(c.pd, &ia);
	if (!qp) {
		note("ibv_create_qp: %s", strerror(errno));
		return NULL;
	}
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qkey = QKEY;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (!err) {
		a.qp_state = IBV_QPS_RTR;
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (!err) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (err) {
		note("ibv_modify_qp to state %d: %s", a.qp_state,
		     strerror(err));
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static unsigned char *buf_mr(size_t len, struct ibv_mr **mr)
{
	unsigned char *buf = calloc(1, len);

	if (!buf) {
		note("calloc: %s", strerror(errno));
		return NULL;
	}
	*mr = ibv_reg_mr(c.pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		note("ibv_reg_mr: %s", strerror(errno));
		free(buf);
		return NULL;
	}
	return buf;
}

static bool post_recv(struct rcv *r, unsigned int slot)
{
	unsigned char *p = r->buf + slot * SLOT_LEN;
	struct ibv_sge sge = {
		.addr = (uintptr_t)p, .length = SLOT_LEN, .lkey = r->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot, .sg_list = &sge, .num_sge = 1,
	}, *bad;
	int err;

	memset(p, 0xee, SLOT_LEN);
	err = ibv_post_recv(r->qp, &wr, &bad);
	if (err)
		note("%s: ibv_post_recv: %s", r->name, strerror(err));
	return !err;
}

static bool open_dev(void)
{
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		note("ibv_get_device_list: %s", strerror(errno));
		return false;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), opt.dev))
			break;
	if (i == n) {
		note("no device %s", opt.dev);
	} else {
		c.ctx = ibv_open_device(list[i]);
		if (!c.ctx)
			note("ibv_open_device: %s", strerror(errno));
	}
	ibv_free_device_list(list);
	return c.ctx;
}

static bool setup(void)
{
	struct ibv_ah_attr aa = { 0 };
	int i;

	c.pd = ibv_alloc_pd(c.ctx);
	if (!c.pd) {
		note("ibv_alloc_pd: %s", strerror(errno));
		return false;
	}
	c.scq = ibv_create_cq(c.ctx, 8, NULL, NULL, 0);
	if (!c.scq) {
		note("ibv_create_cq: %s", strerror(errno));
		return false;
	}
	c.sbuf = buf_mr(PAYLOAD_LEN, &c.smr);
	if (!c.sbuf)
		return false;
	c.sqp = ud_qp(c.scq);
	if (!c.sqp)
		return false;
	for (i = 0; i < NR_RCV; i++) {
		struct rcv *r = &c.r[i];
		unsigned int s;

		r->cq = ibv_create_cq(c.ctx, NR_RECV + 4, NULL, NULL, 0);
		if (!r->cq) {
			note("ibv_create_cq: %s", strerror(errno));
			return false;
		}
		r->buf = buf_mr(NR_RECV * SLOT_LEN, &r->mr);
		if (!r->buf)
			return false;
		r->qp = ud_qp(r->cq);
		if (!r->qp)
			return false;
		for (s = 0; s < NR_RECV; s++)
			if (!post_recv(r, s))
				return false;
	}

	aa.is_global = 1;
	aa.grh.dgid = c.mgid;
	aa.grh.sgid_index = opt.gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = 1;
	c.ah = ibv_create_ah(c.pd, &aa);
	if (!c.ah) {
		note("ibv_create_ah: %s", strerror(errno));
		return false;
	}
	return true;
}

/* The payload of datagram N. */
static void payload(unsigned int n, unsigned char *p)
{
	unsigned int i;

	for (i = 0; i < PAYLOAD_LEN; i++)
		p[i] = (unsigned char)(n * 0x9d + i * 7 + 1);
}

static bool send_one(unsigned int n, uint32_t qkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c.sbuf, .length = PAYLOAD_LEN,
		.lkey = c.smr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = n, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	long long deadline;
	struct ibv_wc wc;
	int err, got;

	payload(n, c.sbuf);
	wr.wr.ud.ah = c.ah;
	wr.wr.ud.remote_qpn = MCAST_QPN;
	wr.wr.ud.remote_qkey = qkey;
	err = ibv_post_send(c.sqp, &wr, &bad);
	if (err) {
		note("ibv_post_send: %s", strerror(err));
		return false;
	}
	deadline = now_ms() + WAIT_MS;
	while (!(got = ibv_poll_cq(c.scq, 1, &wc)) && now_ms() < deadline)
		usleep(1000);
	if (got < 0) {
		note("ibv_poll_cq: %d", got);
		return false;
	}
	if (!got) {
		note("no send completion in %d ms", WAIT_MS);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != n) {
		note("send completion: %s, wr_id %llu",
		     ibv_wc_status_str(wc.status),
		     (unsigned long long)wc.wr_id);
		return false;
	}
	return true;
}

/* Judge a receive completion of datagram N; its slot still holds it. */
static void judge(const struct rcv *r, const struct ibv_wc *wc,
		  unsigned int n, struct got *g)
{
	const unsigned char *p = r->buf + wc->wr_id * SLOT_LEN;
	/* The destination address in the GRH area (IPv6 or IPv4 header). */
	const unsigned char *dst = c.v4 ? p + 20 + 16 : p + 24;
	unsigned char want[PAYLOAD_LEN];
	char *w = g->why;
	size_t room = sizeof(g->why);

#define WHY(...) do {							\
		int l_ = snprintf(w, room, __VA_ARGS__);		\
		if (l_ > 0 && (size_t)l_ < room) {			\
			w += l_;					\
			room -= l_;					\
		}							\
	} while (0)

	if (wc->status != IBV_WC_SUCCESS) {
		WHY("status %s", ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->opcode != IBV_WC_RECV)
		WHY("opcode %d; ", wc->opcode);
	if (wc->byte_len != GRH_LEN + PAYLOAD_LEN)
		WHY("byte_len %u, want %u; ", wc->byte_len,
		    GRH_LEN + PAYLOAD_LEN);
	if (wc->src_qp != c.sqp->qp_num)
		WHY("src_qp 0x%x, want 0x%x; ", wc->src_qp, c.sqp->qp_num);
	if (!(wc->wc_flags & IBV_WC_GRH))
		WHY("no IBV_WC_GRH; ");
	if (memcmp(dst, c.v4 ? c.mgid.raw + 12 : c.mgid.raw, c.v4 ? 4 : 16))
		WHY("GRH area: destination is not the MGID; ");
	payload(n, want);
	if (memcmp(p + GRH_LEN, want, PAYLOAD_LEN))
		WHY("payload differs; ");
#undef WHY
}

/*
 * Collect what each receiver gets: wait (up to WAIT_MS) until every one in
 * WANT has something, then QUIET_MS more for anything else.
 */
static void collect(unsigned int want, unsigned int n, struct got *g)
{
	long long deadline = now_ms() + WAIT_MS, quiet = 0;
	struct ibv_wc wc[NR_RECV];
	int i, k, got;

	memset(g, 0, NR_RCV * sizeof(*g));
	for (;;) {
		bool all = true;

		for (i = 0; i < NR_RCV; i++) {
			struct rcv *r = &c.r[i];

			got = ibv_poll_cq(r->cq, NR_RECV, wc);
			if (got < 0)
				snprintf(g[i].why, sizeof(g[i].why),
					 "ibv_poll_cq: %d", got);
			for (k = 0; k < got; k++) {
				if (!g[i].n++)
					judge(r, &wc[k], n, &g[i]);
				post_recv(r, wc[k].wr_id);
			}
			if ((want & 1u << i) && !g[i].n)
				all = false;
		}
		if (!quiet && (all || now_ms() >= deadline))
			quiet = now_ms() + QUIET_MS;
		if (quiet && now_ms() >= quiet)
			break;
		usleep(1000);
	}
}

/* Send datagram N with QKEY; the receivers in WANT must get it. */
static void round_trip(unsigned int n, uint32_t qkey, unsigned int want,
		       const char *what)
{
	struct got g[NR_RCV];
	int i;

	if (!check(send_one(n, qkey), "send %u (%s): sent", n, what))
		return;
	collect(want, n, g);
	for (i = 0; i < NR_RCV; i++) {
		struct rcv *r = &c.r[i];

		if (want & 1u << i) {
			if (g[i].n != 1)
				note("%u completions, want 1", g[i].n);
			if (g[i].why[0])
				note("%s", g[i].why);
			check(g[i].n == 1 && !g[i].why[0],
			      "send %u (%s): %s got it once, intact",
			      n, what, r->name);
		} else {
			if (g[i].n || g[i].why[0])
				note("%u completions%s%s", g[i].n,
				     g[i].why[0] ? "; " : "", g[i].why);
			check(!g[i].n && !g[i].why[0],
			      "send %u (%s): %s (%s) got nothing",
			      n, what, r->name, r->attached ? "attached" :
			      r->was_attached ? "detached" : "never attached");
		}
	}
}

/* 1 when `ip maddr show dev NDEV` lists MGID, 0 when not, -1 on error. */
static int joined(const char *ndev)
{
	char cmd[128], line[256];
	size_t len = 0;
	bool found = false;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "ip maddr show dev %s 2>&1", ndev);
	p = popen(cmd, "r");
	if (!p) {
		note("popen: %s", strerror(errno));
		return -1;
	}
	c.maddr_out[0] = '\0';
	while (fgets(line, sizeof(line), p)) {
		unsigned char a[16];
		char fam[16], addr[64];

		if (sscanf(line, " %15s %63s", fam, addr) != 2 ||
		    strcmp(fam, c.v4 ? "inet" : "inet6"))
			continue;
		len += snprintf(c.maddr_out + len, sizeof(c.maddr_out) - len,
				"%s %s\n", fam, addr);
		if (len >= sizeof(c.maddr_out))
			len = sizeof(c.maddr_out) - 1;
		if (inet_pton(c.v4 ? AF_INET : AF_INET6, addr, a) == 1 &&
		    !memcmp(a, c.v4 ? c.mgid.raw + 12 : c.mgid.raw,
			    c.v4 ? 4 : 16))
			found = true;
	}
	st = pclose(p);
	if (st) {
		note("`%s`: exit status 0x%x", cmd, st);
		return -1;
	}
	return found;
}

/* Wait up to GROUP_MS for NDEV to have joined (or left) the group. */
static bool group_on(const char *ndev, bool want)
{
	long long deadline = now_ms() + GROUP_MS;
	int j;

	for (;;) {
		j = joined(ndev);
		if (j < 0)
			return false;
		if (j == want || now_ms() >= deadline)
			break;
		usleep(100000);
	}
	if (j != want) {
		char *line, *save;

		note("after %d ms `ip maddr show dev %s` %s it; its groups:",
		     GROUP_MS, ndev, want ? "does not list" : "still lists");
		for (line = strtok_r(c.maddr_out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			note("  %s", line);
	}
	return j == want;
}

static bool group_is(bool want)
{
	return group_on(c.ndev, want);
}

static bool run_cmd(const char *cmd)
{
	int st = system(cmd);

	if (st)
		note("`%s`: exit status 0x%x", cmd, st);
	return !st;
}

/* Add VLAN netdev opt.late_vlan (LOWER.ID) and bring it up. */
static bool late_vlan_add(void)
{
	const char *dot = strrchr(opt.late_vlan, '.');
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "ip link add link %.*s name %s type vlan id %s",
		 (int)(dot - opt.late_vlan), opt.late_vlan, opt.late_vlan,
		 dot + 1);
	c.late_added = run_cmd(cmd);
	snprintf(cmd, sizeof(cmd), "ip link set %s up", opt.late_vlan);
	return c.late_added && run_cmd(cmd);
}

static bool attach(struct rcv *r, bool on)
{
	int err;

	if (on)
		err = ibv_attach_mcast(r->qp, &c.mgid, 0);
	else
		err = ibv_detach_mcast(r->qp, &c.mgid, 0);
	if (err) {
		note("ibv_%s_mcast: %s", on ? "attach" : "detach",
		     strerror(err));
		return false;
	}
	r->attached = on;
	r->was_attached |= on;
	return true;
}

static bool freed_all = true;

static void freed(int err, const char *what)
{
	if (err) {
		note("%s: %s", what, strerror(err > 0 ? err : errno));
		freed_all = false;
	}
}

/* Free everything; a failure to is a failed check. */
static void teardown(void)
{
	int i;

	for (i = 0; i < NR_RCV; i++)
		if (c.r[i].attached && !attach(&c.r[i], false))
			freed_all = false;
	if (c.sqp)
		freed(ibv_destroy_qp(c.sqp), "ibv_destroy_qp (sender)");
	for (i = 0; i < NR_RCV; i++)
		if (c.r[i].qp)
			freed(ibv_destroy_qp(c.r[i].qp), "ibv_destroy_qp");
	if (c.ah)
		freed(ibv_destroy_ah(c.ah), "ibv_destroy_ah");
	if (c.scq)
		freed(ibv_destroy_cq(c.scq), "ibv_destroy_cq (sender)");
	if (c.smr)
		freed(ibv_dereg_mr(c.smr), "ibv_dereg_mr (sender)");
	for (i = 0; i < NR_RCV; i++) {
		if (c.r[i].cq)
			freed(ibv_destroy_cq(c.r[i].cq), "ibv_destroy_cq");
		if (c.r[i].mr)
			freed(ibv_dereg_mr(c.r[i].mr), "ibv_dereg_mr");
		free(c.r[i].buf);
	}
	free(c.sbuf);
	if (c.pd)
		freed(ibv_dealloc_pd(c.pd), "ibv_dealloc_pd");
	if (c.ctx)
		freed(ibv_close_device(c.ctx), "ibv_close_device");
	check(freed_all, "QPs, AH, CQs, MRs, PD and device freed");
	if (c.late_added) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "ip link del %s", opt.late_vlan);
		check(run_cmd(cmd), "%s deleted", opt.late_vlan);
	}
}

static void run(void)
{
	struct rcv *r1 = &c.r[0], *r2 = &c.r[1];

	if (!check(attach(r1, true) && attach(r2, true),
		   "attach r1 and r2 to %s", opt.mgid))
		return;
	check(group_is(true), "%s joined %s", c.ndev, opt.mgid);
	round_trip(1, QKEY, 1u << 0 | 1u << 1, "r1, r2 attached");
	if (opt.late_vlan)
		check(late_vlan_add() && group_on(opt.late_vlan, true),
		      "%s, added with r1 and r2 attached, joined %s",
		      opt.late_vlan, opt.mgid);

	if (!check(attach(r1, false), "detach r1"))
		return;
	round_trip(2, QKEY, 1u << 1, "r2 attached");
	check(group_is(true), "%s still in %s with r2 attached", c.ndev,
	      opt.mgid);
	round_trip(3, BAD_QKEY, 0, "wrong Q_Key");

	if (!check(attach(r2, false), "detach r2"))
		return;
	check(group_is(false), "%s left %s with nobody attached", c.ndev,
	      opt.mgid);
	if (c.late_added)
		check(group_on(opt.late_vlan, false),
		      "%s left %s with nobody attached", opt.late_vlan,
		      opt.mgid);
	round_trip(4, QKEY, 0, "nobody attached");
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: sroce-mcast DEV --gid-index N --mgid MGID [--late-vlan LOWER.ID]\n"
		"  N     index of a RoCE v2 GID of DEV's port 1\n"
		"  MGID  ::ffff:A.B.C.D (IPv4 group, IPv4 GID) or an IPv6\n"
		"        multicast address (IPv6 GID), e.g. ff0e::5:1\n"
		"  LOWER.ID  a VLAN netdev to add while QPs are attached\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "gid-index", required_argument, NULL, 'g' },
		{ "mgid", required_argument, NULL, 'm' },
		{ "late-vlan", required_argument, NULL, 'l' },
		{ 0 }
	};
	struct in6_addr *a = (struct in6_addr *)c.mgid.raw;
	char *end;
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'g':
			opt.gid_index = strtol(optarg, &end, 0);
			if (*end || !*optarg || opt.gid_index < 0)
				print_usage();
			break;
		case 'm':
			opt.mgid = optarg;
			break;
		case 'l':
			end = strrchr(optarg, '.');
			if (!ifname_ok(optarg) || !end || end == optarg ||
			    !end[1] || strlen(optarg) > 15 ||
			    strspn(end + 1, "0123456789") != strlen(end + 1))
				print_usage();
			opt.late_vlan = optarg;
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc - 1 || opt.gid_index < 0 || !opt.mgid)
		print_usage();
	opt.dev = argv[optind];
	if (inet_pton(AF_INET6, opt.mgid, a) != 1)
		print_usage();
	c.v4 = IN6_IS_ADDR_V4MAPPED(a);
	if (c.v4 ? (a->s6_addr[12] & 0xf0) != 0xe0 : !IN6_IS_ADDR_MULTICAST(a))
		print_usage();

	printf("# sroce-mcast %s gid %d mgid %s\n", opt.dev, opt.gid_index,
	       opt.mgid);
	if (check(open_dev(), "open %s", opt.dev) &&
	    check(check_gid(), "gid %d of %s: RoCE v2, %s, netdev %s",
		  opt.gid_index, opt.dev, c.v4 ? "IPv4" : "IPv6", c.ndev) &&
	    check(setup(), "setup: PD, CQs, MRs, AH, 4 UD QPs in RTS"))
		run();
	teardown();
	printf("# sroce-mcast: %u checks, %u failed\n", n_checks, n_failed);
	return n_failed ? 1 : 0;
}
