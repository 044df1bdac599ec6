// SPDX-License-Identifier: GPL-2.0
/* KUnit: MTU derivation, key layout and packet heads. */
#include <kunit/test.h>

#include "../sroce.h"
#include "sroce_test.h"

static void dev_mtu(struct kunit *test)
{
	/* iboe_get_mtu(): 96 bytes of worst-case headers per payload. */
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(1500), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(9000), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(4096 + 96), IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(4096 + 95), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(2048 + 96), IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(1024 + 96), IB_MTU_1024);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(1024 + 95), IB_MTU_512);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(512 + 96), IB_MTU_512);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(512 + 95), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(68), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(0), IB_MTU_256);
	KUNIT_EXPECT_EQ(test, sroce_mtu_from_netdev(65535), IB_MTU_4096);
}

static void dev_keys(struct kunit *test)
{
	u32 k = sroce_key_make(0x123456, 0x9a);
	unsigned int i, seq = 0;
	u8 b = 0;

	KUNIT_EXPECT_EQ(test, k, 0x1234569a);
	KUNIT_EXPECT_EQ(test, sroce_key_index(k), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_key_byte(k), 0x9a);
	/* The largest index still fits: 24 bits of index, 8 of key. */
	KUNIT_EXPECT_EQ(test, sroce_key_index(sroce_key_make(0xffffff, 1)),
			0xffffff);

	/*
	 * The key byte is drawn from 1..255, never 0, and not in sequence
	 * (600 draws in a row of +1 would be a counter, not chance).
	 */
	for (i = 0; i < 600; i++) {
		u8 n = sroce_key_random();

		KUNIT_EXPECT_NE(test, n, 0);
		if (b && n == (b == 0xff ? 1 : b + 1))
			seq++;
		b = n;
	}
	KUNIT_EXPECT_LT(test, seq, 100U);
}

/*
 * The err_cqe tracepoint shows a user's wr_id as it is, a kernel
 * consumer's (a pointer, often) hashed: not the value, but the same for
 * the same id.
 */
static void dev_trace_wr_id(struct kunit *test)
{
	u64 p = (u64)(uintptr_t)test;

	KUNIT_EXPECT_EQ(test, sroce_trace_wr_id(true, p), p);
	KUNIT_EXPECT_NE(test, sroce_trace_wr_id(false, p), p);
	KUNIT_EXPECT_EQ(test, sroce_trace_wr_id(false, p),
			sroce_trace_wr_id(false, p));
	KUNIT_EXPECT_NE(test, sroce_trace_wr_id(false, p),
			sroce_trace_wr_id(false, p + 8));
}

/*
 * A head over a page comes from the stream's own page while the last one
 * built there has been freed, from elsewhere while it is out; a packet
 * still out when the stream goes keeps the page.
 */
static void dev_big_head(struct kunit *test)
{
	unsigned int size = SROCE_LOCAL_CHUNK + 256;
	struct sk_buff *a, *b, *c, *d;
	struct page *big = NULL;

	a = sroce_skb_alloc(size, &big, NULL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, big);
	KUNIT_EXPECT_PTR_EQ(test, (void *)a->head, page_address(big));
	KUNIT_EXPECT_EQ(test, page_ref_count(big), 2);

	b = sroce_skb_alloc(size, &big, NULL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_PTR_NE(test, (void *)b->head, page_address(big));
	kfree_skb(a);
	KUNIT_EXPECT_EQ(test, page_ref_count(big), 1);

	c = sroce_skb_alloc(size, &big, NULL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_EXPECT_PTR_EQ(test, (void *)c->head, page_address(big));
	/* A head of a page or less never takes it. */
	d = sroce_skb_alloc(256, &big, NULL);
	KUNIT_ASSERT_NOT_NULL(test, d);
	KUNIT_EXPECT_PTR_NE(test, (void *)d->head, page_address(big));
	KUNIT_EXPECT_EQ(test, page_ref_count(big), 2);
	kfree_skb(d);
	kfree_skb(b);

	sroce_big_head_free(&big);
	KUNIT_EXPECT_NULL(test, big);
	KUNIT_EXPECT_EQ(test, page_ref_count(virt_to_head_page(c->head)), 1);
	kfree_skb(c);
}

static struct kunit_case dev_cases[] = {
	KUNIT_CASE(dev_mtu),
	KUNIT_CASE(dev_keys),
	KUNIT_CASE(dev_trace_wr_id),
	KUNIT_CASE(dev_big_head),
	{}
};

struct kunit_suite sroce_dev_suite = {
	.name = "sroce_dev",
	.test_cases = dev_cases,
};
