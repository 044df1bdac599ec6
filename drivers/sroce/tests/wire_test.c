// SPDX-License-Identifier: GPL-2.0
/* KUnit: RoCEv2 header layouts, encode/decode and PSN arithmetic. */
#include <kunit/test.h>
#include <sroce/wire.h>

#include "sroce_test.h"

static void wire_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_bth), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_reth), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_atmeth), 28);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_aeth), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_atmack), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_deth), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_immdt), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_ieth), 4);
}

static void wire_bth_encode(struct kunit *test)
{
	static const u8 want[12] = {
		0x04, 0xf0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct sroce_bth b;

	/* RC SEND_ONLY, SE, pad 3, default P_Key, QP 0x123456, AckReq. */
	sroce_bth_init(&b, 0x04, 1, 3, 0xffff, 0x123456, 1, 0xabcdef);
	KUNIT_EXPECT_EQ(test, memcmp(&b, want, sizeof(want)), 0);

	/* Out-of-range QPN and PSN bits never leak into other fields. */
	sroce_bth_init(&b, 0x11, 0, 0, 0x8001, 0xff000001, 0, 0xff000002);
	KUNIT_EXPECT_EQ(test, sroce_bth_qpn(&b), 1);
	KUNIT_EXPECT_EQ(test, sroce_bth_psn(&b), 2);
	KUNIT_EXPECT_FALSE(test, sroce_bth_ackreq(&b));
	KUNIT_EXPECT_FALSE(test, sroce_bth_fecn(&b));
	KUNIT_EXPECT_FALSE(test, sroce_bth_becn(&b));
	KUNIT_EXPECT_EQ(test, sroce_bth_pkey(&b), 0x8001);
	KUNIT_EXPECT_EQ(test, sroce_bth_pad(&b), 0);
	KUNIT_EXPECT_TRUE(test, sroce_bth_mig(&b));
}

static void wire_bth_decode(struct kunit *test)
{
	/* RC ACK, no SE, MigReq, pad 2, TVer 5, FECN+BECN, resv bits set. */
	static const u8 raw[12] = {
		0x11, 0x65, 0x12, 0x34, 0xff, 0xab, 0xcd, 0xef,
		0x7f, 0x00, 0x00, 0x07,
	};
	const struct sroce_bth *b = (const void *)raw;

	KUNIT_EXPECT_EQ(test, sroce_bth_opcode(b), 0x11);
	KUNIT_EXPECT_FALSE(test, sroce_bth_se(b));
	KUNIT_EXPECT_TRUE(test, sroce_bth_mig(b));
	KUNIT_EXPECT_EQ(test, sroce_bth_pad(b), 2);
	KUNIT_EXPECT_EQ(test, sroce_bth_tver(b), 5);
	KUNIT_EXPECT_EQ(test, sroce_bth_pkey(b), 0x1234);
	KUNIT_EXPECT_TRUE(test, sroce_bth_fecn(b));
	KUNIT_EXPECT_TRUE(test, sroce_bth_becn(b));
	KUNIT_EXPECT_EQ(test, sroce_bth_qpn(b), 0xabcdef);
	KUNIT_EXPECT_FALSE(test, sroce_bth_ackreq(b));
	KUNIT_EXPECT_EQ(test, sroce_bth_psn(b), 7);
}

/* Header length per opcode, written out from IBTA table 38 + RoCEv2. */
static unsigned int expected_hdr_len(unsigned int opc)
{
	static const u8 rc[32] = {
		[0x00] = 12, [0x01] = 12, [0x02] = 12, [0x03] = 16,
		[0x04] = 12, [0x05] = 16, [0x06] = 28, [0x07] = 12,
		[0x08] = 12, [0x09] = 16, [0x0a] = 28, [0x0b] = 32,
		[0x0c] = 28, [0x0d] = 16, [0x0e] = 12, [0x0f] = 16,
		[0x10] = 16, [0x11] = 16, [0x12] = 24, [0x13] = 40,
		[0x14] = 40, [0x16] = 16, [0x17] = 16, [0x1c] = 32,
		[0x1d] = 28,
	};

	switch (opc & 0xe0) {
	case 0x00:
		return rc[opc & 0x1f];
	case 0x20:
		return (opc & 0x1f) <= 0x0b ? rc[opc & 0x1f] : 0;
	case 0x60:
		if (opc == 0x64)
			return 20;
		if (opc == 0x65)
			return 24;
		return 0;
	default:
		return 0;
	}
}

static void wire_opcode_table(struct kunit *test)
{
	unsigned int opc;

	for (opc = 0; opc < 256; opc++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_opcode_hdr_len(opc),
				    expected_hdr_len(opc), "opcode %#x", opc);

	KUNIT_EXPECT_TRUE(test, sroce_opcode_hdrs(0x0b) & SROCE_HDR_IMM);
	KUNIT_EXPECT_TRUE(test, sroce_opcode_hdrs(0x0b) & SROCE_HDR_RETH);
	KUNIT_EXPECT_FALSE(test, sroce_opcode_hdrs(0x0c) & SROCE_HDR_PAYLOAD);
	KUNIT_EXPECT_TRUE(test, sroce_opcode_hdrs(0x0e) & SROCE_HDR_PAYLOAD);
	KUNIT_EXPECT_FALSE(test, sroce_opcode_hdrs(0x0e) & SROCE_HDR_AETH);
	KUNIT_EXPECT_TRUE(test, sroce_opcode_hdrs(0x65) & SROCE_HDR_DETH);
	KUNIT_EXPECT_TRUE(test, sroce_opcode_hdrs(0x17) & SROCE_HDR_IETH);
	/* FLUSH: FETH and RETH, no payload; RC only. */
	KUNIT_EXPECT_EQ(test, sroce_opcode_hdrs(0x1c) &
			(SROCE_HDR_FETH | SROCE_HDR_RETH | SROCE_HDR_PAYLOAD),
			SROCE_HDR_FETH | SROCE_HDR_RETH);
	KUNIT_EXPECT_EQ(test, sroce_opcode_hdrs(0x3c), 0);
	KUNIT_EXPECT_EQ(test, sroce_opcode_hdrs(SROCE_OPCODE_CNP), 0);
}

static void wire_ext_headers(struct kunit *test)
{
	static const u8 atm_want[28] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xde, 0xad, 0xbe, 0xef,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00,
	};
	static const u8 reth_want[16] = {
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x50, 0x00,
		0x00, 0x00, 0x12, 0x01, 0x00, 0x01, 0x00, 0x00,
	};
	static const u8 feth_want[4] = { 0x00, 0x00, 0x00, 0x12 };
	struct sroce_atmeth atm;
	struct sroce_atmack ack;
	struct sroce_feth feth;
	struct sroce_reth reth;
	struct sroce_aeth aeth;
	struct sroce_deth deth;

	sroce_atmeth_init(&atm, 0x0102030405060708ULL, 0xdeadbeef,
			  0x1122334455667788ULL, 0x99aabbccddeeff00ULL);
	KUNIT_EXPECT_EQ(test, memcmp(&atm, atm_want, sizeof(atm_want)), 0);
	KUNIT_EXPECT_EQ(test, sroce_atmeth_va(&atm), 0x0102030405060708ULL);
	KUNIT_EXPECT_EQ(test, sroce_atmeth_rkey(&atm), 0xdeadbeef);
	KUNIT_EXPECT_EQ(test, sroce_atmeth_swap_add(&atm), 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, sroce_atmeth_comp(&atm), 0x99aabbccddeeff00ULL);

	sroce_reth_init(&reth, 0x7fff12345000ULL, 0x1201, 0x10000);
	KUNIT_EXPECT_EQ(test, memcmp(&reth, reth_want, sizeof(reth_want)), 0);
	KUNIT_EXPECT_EQ(test, sroce_reth_va(&reth), 0x7fff12345000ULL);
	KUNIT_EXPECT_EQ(test, sroce_reth_rkey(&reth), 0x1201);
	KUNIT_EXPECT_EQ(test, sroce_reth_len(&reth), 0x10000);

	/* Selectivity 1 (the whole MR) in bits 5..4, type 2 in bits 3..0. */
	sroce_feth_init(&feth, SROCE_FLUSH_PERSISTENT, SROCE_FLUSH_MR);
	KUNIT_EXPECT_EQ(test, memcmp(&feth, feth_want, sizeof(feth_want)), 0);
	KUNIT_EXPECT_EQ(test, sroce_feth_plt(&feth), SROCE_FLUSH_PERSISTENT);
	KUNIT_EXPECT_EQ(test, sroce_feth_sel(&feth), SROCE_FLUSH_MR);
	feth.bits = cpu_to_be32(0xffffffc1);
	KUNIT_EXPECT_EQ(test, sroce_feth_plt(&feth), SROCE_FLUSH_GLOBAL);
	KUNIT_EXPECT_EQ(test, sroce_feth_sel(&feth), 0);

	sroce_aeth_init(&aeth, SROCE_AETH_NAK_REM_ACC, 0x1abcdef);
	KUNIT_EXPECT_EQ(test, sroce_aeth_syn(&aeth), SROCE_AETH_NAK_REM_ACC);
	KUNIT_EXPECT_EQ(test, sroce_aeth_msn(&aeth), 0xabcdef);
	KUNIT_EXPECT_EQ(test, ((u8 *)&aeth)[0], 0x62);

	sroce_atmack_init(&ack, 0xfedcba9876543210ULL);
	KUNIT_EXPECT_EQ(test, sroce_atmack_orig(&ack), 0xfedcba9876543210ULL);
	KUNIT_EXPECT_EQ(test, ((u8 *)&ack)[0], 0xfe);

	sroce_deth_init(&deth, SROCE_GSI_QKEY, 0xff000001);
	KUNIT_EXPECT_EQ(test, sroce_deth_qkey(&deth), SROCE_GSI_QKEY);
	KUNIT_EXPECT_EQ(test, sroce_deth_sqp(&deth), 1);
	KUNIT_EXPECT_EQ(test, ((u8 *)&deth)[4], 0);
}

static void wire_psn(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_cmp(5, 5), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(1, 0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0, 1), 0);
	/* Across the 24-bit wrap. */
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0, 0xffffff), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xfffffe, 3), 0);
	/* The window is half the space. */
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0x7fffff, 0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0x800000, 0), 0);
	/* Bits above 24 are ignored. */
	KUNIT_EXPECT_EQ(test, sroce_psn_cmp(0x1000005, 5), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 3), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(7, 0), 7);
}

static void wire_psn_wrap(struct kunit *test)
{
	static const u32 psns[] = {
		0, 1, 2, 0x123456, 0x7ffffe, 0x7fffff, 0x800000, 0x800001,
		0xfffffe, 0xffffff,
	};
	unsigned int i, j;

	/* Addition stays in 24 bits. */
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 0xffffff), 0xffffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x800000, 0x800000), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x123456, 0x1000000), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x1000005, 1), 6);

	/* Signed distance, across the wrap and at the half-window edges. */
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(5, 5), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0, 0xffffff), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0xffffff, 0), -1);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(2, 0xfffffe), 4);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0xfffffe, 2), -4);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x800001, 0), -0x7fffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0, 0x7fffff), -0x7fffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x1000000, 0xffffff), 1);
	/* Exactly half the space apart: older, whichever way round. */
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0, 0x800000), -0x800000);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0x800000, 0), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0, 0x800000), 0);
	KUNIT_EXPECT_GT(test, sroce_psn_cmp(0xffffff, 0x800000), 0);
	KUNIT_EXPECT_LT(test, sroce_psn_cmp(0xffffff, 0x7ffffe), 0);

	/*
	 * For every pair: the sign of cmp is the sign of diff, diff is in
	 * range, and stepping diff from b lands on a.
	 */
	for (i = 0; i < ARRAY_SIZE(psns); i++) {
		for (j = 0; j < ARRAY_SIZE(psns); j++) {
			u32 a = psns[i], b = psns[j];
			int c = sroce_psn_cmp(a, b), d = sroce_psn_diff(a, b);

			KUNIT_EXPECT_EQ_MSG(test, c > 0, d > 0, "%#x %#x",
					    a, b);
			KUNIT_EXPECT_EQ_MSG(test, c < 0, d < 0, "%#x %#x",
					    a, b);
			KUNIT_EXPECT_GE(test, d, -0x800000);
			KUNIT_EXPECT_LE(test, d, 0x7fffff);
			KUNIT_EXPECT_EQ_MSG(test, sroce_psn_add(b, (u32)d), a,
					    "%#x %#x", a, b);
		}
	}
}

static void wire_pad(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_pad_len(0), 0);
	KUNIT_EXPECT_EQ(test, sroce_pad_len(1), 3);
	KUNIT_EXPECT_EQ(test, sroce_pad_len(2), 2);
	KUNIT_EXPECT_EQ(test, sroce_pad_len(3), 1);
	KUNIT_EXPECT_EQ(test, sroce_pad_len(4096), 0);
	KUNIT_EXPECT_EQ(test, sroce_pad_len(4097), 3);
}

static struct kunit_case wire_cases[] = {
	KUNIT_CASE(wire_sizes),
	KUNIT_CASE(wire_bth_encode),
	KUNIT_CASE(wire_bth_decode),
	KUNIT_CASE(wire_opcode_table),
	KUNIT_CASE(wire_ext_headers),
	KUNIT_CASE(wire_psn),
	KUNIT_CASE(wire_psn_wrap),
	KUNIT_CASE(wire_pad),
	{}
};

struct kunit_suite sroce_wire_suite = {
	.name = "sroce_wire",
	.test_cases = wire_cases,
};
