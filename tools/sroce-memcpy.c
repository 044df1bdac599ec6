// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-memcpy SIZE [SECS]: how fast this machine copies memory with
 * memcpy(3) in blocks of SIZE bytes, as a baseline for scripts/bench.sh
 * (sroce and rdma_rxe copy every payload byte at least once on each side).
 * The blocks walk through two buffers of 64 MiB each (or 4 blocks, if
 * more), so large blocks come from memory rather than the cache. Prints
 * "MiB/s N" (bytes copied per second, in MiB) after SECS (default 2) s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size, total, off = 0;
	double secs = 2, t0, t;
	unsigned long long copied = 0;
	unsigned char *src, *dst;
	unsigned int sum = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sroce-memcpy SIZE [SECS]\n");
		return 2;
	}
	size = strtoul(argv[1], NULL, 0);
	if (argc == 3)
		secs = strtod(argv[2], NULL);
	if (!size || secs <= 0) {
		fprintf(stderr, "sroce-memcpy: bad SIZE or SECS\n");
		return 2;
	}
	total = 64UL << 20;
	if (total < 4 * size)
		total = 4 * size;
	total -= total % size;
	src = malloc(total);
	dst = malloc(total);
	if (!src || !dst) {
		perror("malloc");
		return 1;
	}
	/* Touch every page first, so that no page fault is timed. */
	memset(src, 0x5a, total);
	memset(dst, 0, total);

	t0 = now();
	do {
		/* The clock is read every 1 MiB at most (or every block). */
		size_t chunk = 0;

		while (chunk < (1UL << 20)) {
			memcpy(dst + off, src + off, size);
			off = (off + size) % total;
			chunk += size;
			copied += size;
		}
		t = now();
	} while (t - t0 < secs);
	/* Read the copies, so that none may be left out. */
	for (off = 0; off < total; off += 4096)
		sum += dst[off];
	printf("MiB/s %.2f\n", copied / (t - t0) / (1 << 20));
	fprintf(stderr, "# %llu bytes in %.3f s, blocks of %zu, check %u\n",
		copied, t - t0, size, sum);
	return 0;
}
