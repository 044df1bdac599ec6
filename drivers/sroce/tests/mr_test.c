// SPDX-License-Identifier: GPL-2.0
/* KUnit: MR permission and bounds checks, copies across pages with CRC. */
#include <kunit/test.h>
#include <linux/crc32.h>
#include <linux/highmem.h>

#include "../sroce.h"
#include "sroce_test.h"

static void mr_access(struct kunit *test)
{
	const int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	const u64 base = 0x7f0000001000ULL, len = 0x3000;

	/* Rights. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, 8, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, IB_ACCESS_LOCAL_WRITE,
						 base, 8, IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_READ), -EACCES);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, rw, base, 8,
						 IB_ACCESS_REMOTE_ATOMIC), -EACCES);

	/* Bounds: exactly the MR, one byte past either end, zero length. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, len, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base, len + 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base - 1, 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len - 1, 1,
						 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len, 1, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + len, 0, 0),
			0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, 0, 0, base, 1, 0), -ERANGE);

	/* Wrap-around attempts from a hostile peer. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, U64_MAX, 2, 0),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(base, len, 0, base + 8, U64_MAX,
						 0), -ERANGE);
	/* [0, U64_MAX) ends one byte short of the address space. */
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(0, U64_MAX, 0, U64_MAX - 8, 8,
						 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_mr_access_ok(0, U64_MAX, 0, U64_MAX - 7, 8,
						 0), -ERANGE);
}

struct mr_pages_fixture {
	struct sroce_mr mr;
	struct page *pg[3];
};

static void mr_copy_pages(struct kunit *test)
{
	const u32 n = 5000, at = 4000;
	struct mr_pages_fixture *fx;
	u32 crc_copy, crc_ref;
	u8 *in, *out, *va;
	int i;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	in = kunit_kmalloc(test, n, GFP_KERNEL);
	out = kunit_kzalloc(test, n, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, fx && in && out);
	for (i = 0; i < 3; i++) {
		fx->pg[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, fx->pg[i]);
	}
	fx->mr.pages = fx->pg;
	fx->mr.npages = 3;
	fx->mr.page_off = 100;
	fx->mr.iova = 0x10000;
	fx->mr.length = 3 * PAGE_SIZE - 100;
	for (i = 0; i < n; i++)
		in[i] = (u8)(i * 7 + 3);

	KUNIT_ASSERT_EQ(test, sroce_mr_access_ok(fx->mr.iova, fx->mr.length, 0,
						 fx->mr.iova + at, n, 0), 0);
	crc_copy = ~0U;
	sroce_mr_copy(&fx->mr, fx->mr.iova + at, in, n, true, &crc_copy);
	crc_ref = crc32_le(~0U, in, n);
	KUNIT_EXPECT_EQ(test, crc_copy, crc_ref);

	/* The first byte lands at page_off + at in the page list. */
	va = kmap_local_page(fx->pg[(100 + at) / PAGE_SIZE]);
	KUNIT_EXPECT_EQ(test, va[(100 + at) % PAGE_SIZE], in[0]);
	kunmap_local(va);
	va = kmap_local_page(fx->pg[(100 + at + n - 1) / PAGE_SIZE]);
	KUNIT_EXPECT_EQ(test, va[(100 + at + n - 1) % PAGE_SIZE], in[n - 1]);
	kunmap_local(va);

	crc_copy = ~0U;
	sroce_mr_copy(&fx->mr, fx->mr.iova + at, out, n, false, &crc_copy);
	KUNIT_EXPECT_EQ(test, memcmp(in, out, n), 0);
	KUNIT_EXPECT_EQ(test, crc_copy, crc_ref);

	for (i = 0; i < 3; i++)
		__free_page(fx->pg[i]);
}

static void mr_copy_dma(struct kunit *test)
{
	u8 *dst = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct sroce_mr mr = { .dma = true, .length = U64_MAX };
	static const u8 src[5] = { 1, 2, 3, 4, 5 };

	KUNIT_ASSERT_NOT_NULL(test, dst);
	sroce_mr_copy(&mr, (u64)(uintptr_t)(dst + 7), (void *)src, 5, true,
		      NULL);
	KUNIT_EXPECT_EQ(test, memcmp(dst + 7, src, 5), 0);
	KUNIT_EXPECT_EQ(test, dst[6], 0);
	KUNIT_EXPECT_EQ(test, dst[12], 0);
}

/* The three 8-byte atomics: value before, value after. */
static void mr_atomic_ops(struct kunit *test)
{
	u64 *w = kunit_kzalloc(test, 2 * sizeof(u64), GFP_KERNEL);
	u64 bytes;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w[0] = 5;
	/* CMP_SWAP: swaps only on a match, returns the old value either way. */
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_CMP_SWAP, 4, 9), 5ULL);
	KUNIT_EXPECT_EQ(test, w[0], 5ULL);
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_CMP_SWAP, 5, 9), 5ULL);
	KUNIT_EXPECT_EQ(test, w[0], 9ULL);
	/* FETCH_ADD wraps modulo 2^64. */
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_FETCH_ADD, 3, 0),
			9ULL);
	KUNIT_EXPECT_EQ(test, w[0], 12ULL);
	w[0] = U64_MAX;
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_FETCH_ADD, 2, 0),
			U64_MAX);
	KUNIT_EXPECT_EQ(test, w[0], 1ULL);
	/* ATOMIC WRITE stores the 8 bytes as they are; the next word stays. */
	memcpy(&bytes, "ABCDEFGH", sizeof(bytes));
	w[1] = 77;
	KUNIT_EXPECT_EQ(test, sroce_atomic_op(w, SROCE_OP_ATOMIC_WRITE, bytes,
					      0), 1ULL);
	KUNIT_EXPECT_EQ(test, memcmp(w, "ABCDEFGH", 8), 0);
	KUNIT_EXPECT_EQ(test, w[1], 77ULL);
}

static struct kunit_case mr_cases[] = {
	KUNIT_CASE(mr_access),
	KUNIT_CASE(mr_atomic_ops),
	KUNIT_CASE(mr_copy_pages),
	KUNIT_CASE(mr_copy_dma),
	{}
};

struct kunit_suite sroce_mr_suite = {
	.name = "sroce_mr",
	.test_cases = mr_cases,
};
