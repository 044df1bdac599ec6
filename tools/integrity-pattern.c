// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: the patterns every message and every poisoned buffer
 * hold, the check of a received message against them, and the random
 * choices of sizes and offsets (sroce-integrity.c says how they are used).
 */
#include "integrity.h"

u64 rng_state;

static inline u64 pat_word(const struct pattern *p, u64 w)
{
	return (mix64(p->key + w * 0x9e3779b97f4a7c15ULL) | p->set) & ~p->clear;
}

static inline u8 pat_byte(const struct pattern *p, u64 idx)
{
	return pat_word(p, idx / 8) >> (8 * (idx % 8));
}

struct pattern msg_pattern(u64 msg)
{
	return (struct pattern){
		.key = mix64(opt.seed ^ mix64(msg + 1)),
		.set = LOW_BITS,
	};
}

/* One poison per buffer id, indexed by position in that buffer. */
struct pattern poison_pattern(u64 id)
{
	return (struct pattern){
		.key = mix64(~opt.seed ^ mix64(id + 0x5a5a5a5a)),
		.clear = LOW_BITS,
	};
}

/* buf[k] = byte idx + k of pattern p */
void pat_fill(const struct pattern *p, u8 *buf, u64 idx,
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
size_t pat_check(const struct pattern *p, const u8 *buf,
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
size_t check_area(const char *what, enum op op, u64 msg,
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
size_t check_message(enum op op, u64 msg, u64 size,
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

static u64 rng_next(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return mix64(rng_state);
}

u64 rng_below(u64 n)
{
	return rng_next() % n;
}

/* Log-uniform: each power of two up to max is as likely as any other. */
u64 pick_size(u64 max)
{
	int top = 63 - __builtin_clzll(max);
	u64 lo = 1ULL << rng_below(top + 1);
	u64 hi = 2 * lo - 1;

	if (hi > max)
		hi = max;
	return lo + rng_below(hi - lo + 1);
}

/* Half the messages start page aligned, the rest anywhere in a page. */
u64 pick_skew(void)
{
	return rng_below(2) ? 0 : rng_below(SKEW);
}
