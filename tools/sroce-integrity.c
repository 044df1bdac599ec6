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
 *
 * The files: integrity-pattern.c, the patterns and the checks against them;
 * integrity-verbs.c, the verbs and rdma_cm plumbing; integrity-server.c and
 * integrity-client.c, the two ends; this one, the statistics and the command
 * line; integrity.h, what they share.
 */
#include "integrity.h"

const char *const op_names[NR_OPS] = {
	[OP_SEND] = "send",
	[OP_WRITE] = "write",
	[OP_WRITE_IMM] = "write_imm",
	[OP_READ] = "read",
};

struct opts opt = {
	.port = DEFAULT_PORT,
	.bytes = DEFAULT_BYTES,
	.max_size = DEFAULT_MAX_SIZE,
	.ops_mask = (1 << NR_OPS) - 1,
	.depth = 1,
	.timeout = DEFAULT_TIMEOUT,
	.ack_timeout = -1,
};

struct stats st;

/* ---- statistics and time ---------------------------------------------- */

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - st.start.tv_sec) +
	       (now.tv_nsec - st.start.tv_nsec) / 1e9;
}

s64 now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}

s64 now_ms(void)
{
	return now_us() / 1000;
}

void summary(const char *who)
{
	double secs = elapsed();

	printf("integrity: ops=%llu bytes=%llu mismatches=%llu errors=%llu",
	       st.ops, st.bytes, st.mismatches, st.errors);
	for (int i = 0; i < NR_OPS; i++)
		printf(" %s=%llu", op_names[i], st.count[i]);
	printf(" time=%.2fs rate=%.2fMB/s role=%s\n", secs,
	       secs > 0 ? st.bytes / secs / 1e6 : 0.0, who);
}

/* Count a message the server has checked (or served, for a read). */
void count(enum op op, u64 size, size_t bad)
{
	st.ops++;
	st.bytes += size;
	st.count[op]++;
	if (bad)
		st.mismatches++;
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
