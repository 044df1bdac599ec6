/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce-integrity: what its files share (sroce-integrity.c describes the
 * tool and its protocol).
 */
#ifndef SROCE_INTEGRITY_H
#define SROCE_INTEGRITY_H

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

extern const char *const op_names[NR_OPS];

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

extern struct opts opt;
extern struct stats st;

/* A fatal error: count it and say what happened. A macro, so that the
 * compiler checks the format as it does printf's.
 */
#define fail(...) do {						\
	st.errors++;						\
	fputs("ERROR: ", stderr);				\
	fprintf(stderr, __VA_ARGS__);				\
	fputc('\n', stderr);					\
} while (0)

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

/* Buffer ids that key the poison of each buffer. */
#define PZ_RECV(i)	(1000 + (i))
#define PZ_WRITE(i)	(2000 + (i))
#define PZ_LOCAL(i)	(3000 + (i))

/* integrity-pattern.c */
extern u64 rng_state;
struct pattern msg_pattern(u64 msg);
struct pattern poison_pattern(u64 id);
void pat_fill(const struct pattern *p, u8 *buf, u64 idx,
	      size_t len);
size_t pat_check(const struct pattern *p, const u8 *buf,
		 u64 idx, size_t len, size_t *first);
size_t check_area(const char *what, enum op op, u64 msg,
		  u64 size, const struct pattern *p,
		  const u8 *buf, u64 idx, size_t len);
size_t check_message(enum op op, u64 msg, u64 size,
		     const struct pattern *pz, u8 *base,
		     size_t pos);
u64 rng_below(u64 n);
u64 pick_size(u64 max);
u64 pick_skew(void);

/* integrity-verbs.c */
void ctl_le(struct ctl *c);
int established_ms(void);
int alloc_buf(struct conn *c, struct buf *b, size_t len, int access);
void free_buf(struct buf *b);
u64 wr_id(enum wr_kind kind, unsigned int idx);
int post_recv(struct conn *c, void *addr, size_t len, u32 lkey,
	      u64 id);
int post_send(struct conn *c, enum ibv_wr_opcode opcode, void *addr,
	      size_t len, u32 lkey, u64 id, u64 raddr,
	      u32 rkey, u32 imm);
int set_nonblock(int fd);
struct rdma_cm_event *cm_next(struct conn *c, int ms);
struct rdma_cm_event *cm_expect(struct conn *c,
				enum rdma_cm_event_type want, int ms);
int next_wcs(struct conn *c, struct ibv_wc *wc, int max);
const char *wc_op_name(const struct ibv_wc *wc);
int setup_verbs(struct conn *c, struct rdma_cm_id *id,
		unsigned int sq, unsigned int rq);
void teardown(struct conn *c);
void teardown_ids(struct conn *c);
int set_ack_timeout(struct rdma_cm_id *id);
unsigned int rd_atom(unsigned int want, int dev_max);
size_t round64(size_t n);

/* integrity-server.c and integrity-client.c */
int run_server(void);
int run_client(void);

/* sroce-integrity.c */
s64 now_us(void);
s64 now_ms(void);
void summary(const char *who);
void count(enum op op, u64 size, size_t bad);

#endif /* SROCE_INTEGRITY_H */
