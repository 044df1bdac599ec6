// SPDX-License-Identifier: GPL-2.0
/* KUnit: MTU derivation and key layout. */
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
	unsigned int i;
	u8 b = 0;

	KUNIT_EXPECT_EQ(test, k, 0x1234569a);
	KUNIT_EXPECT_EQ(test, sroce_key_index(k), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_key_byte(k), 0x9a);
	/* The largest index still fits: 24 bits of index, 8 of key. */
	KUNIT_EXPECT_EQ(test, sroce_key_index(sroce_key_make(0xffffff, 1)),
			0xffffff);

	/* The key byte cycles through 1..255, never 0. */
	for (i = 0; i < 600; i++) {
		u8 n = sroce_key_next(b);

		KUNIT_EXPECT_NE(test, n, 0);
		if (b)
			KUNIT_EXPECT_EQ(test, n, b == 0xff ? 1 : b + 1);
		b = n;
	}
}

static struct kunit_case dev_cases[] = {
	KUNIT_CASE(dev_mtu),
	KUNIT_CASE(dev_keys),
	{}
};

struct kunit_suite sroce_dev_suite = {
	.name = "sroce_dev",
	.test_cases = dev_cases,
};
