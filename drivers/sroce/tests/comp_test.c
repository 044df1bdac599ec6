// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: what the completer makes of each AETH syndrome: ACK with any
 * credit count, RNR NAK with any timer, the four RC NAK codes, and
 * everything reserved.
 */
#include <kunit/test.h>

#include "../sroce.h"
#include <sroce/wire.h>
#include "sroce_test.h"

/* A status classify() must not touch unless the answer is FATAL. */
#define UNTOUCHED	IB_WC_GENERAL_ERR

static void comp_expect(struct kunit *test, unsigned int syn,
			enum sroce_ack_action want,
			enum ib_wc_status want_st)
{
	enum ib_wc_status st = UNTOUCHED;

	KUNIT_EXPECT_EQ_MSG(test, sroce_comp_classify(syn, &st), want,
			    "syndrome %#x", syn);
	KUNIT_EXPECT_EQ_MSG(test, st, want_st, "syndrome %#x", syn);
}

static void comp_ack(struct kunit *test)
{
	unsigned int credit;

	/* 0x00..0x1e: credit counts; 0x1f: credits invalid. All positive. */
	for (credit = 0; credit <= SROCE_AETH_CREDIT_MASK; credit++)
		comp_expect(test, SROCE_AETH_ACK | credit, SROCE_ACK_OK,
			    UNTOUCHED);
}

static void comp_rnr(struct kunit *test)
{
	unsigned int timer;

	for (timer = 0; timer < 32; timer++)
		comp_expect(test, SROCE_AETH_RNR_NAK | timer, SROCE_ACK_RNR,
			    UNTOUCHED);
}

static void comp_nak(struct kunit *test)
{
	comp_expect(test, 0x60, SROCE_ACK_RETRY, UNTOUCHED);
	comp_expect(test, 0x61, SROCE_ACK_FATAL, IB_WC_REM_INV_REQ_ERR);
	comp_expect(test, 0x62, SROCE_ACK_FATAL, IB_WC_REM_ACCESS_ERR);
	comp_expect(test, 0x63, SROCE_ACK_FATAL, IB_WC_REM_OP_ERR);
}

static void comp_reserved(struct kunit *test)
{
	unsigned int syn;

	/* The reserved NAK codes (0x64 is invalid RD request, not RC). */
	for (syn = 0x64; syn <= 0x7f; syn++)
		comp_expect(test, syn, SROCE_ACK_IGNORE, UNTOUCHED);
	/* The reserved syndrome class 01b, and the top bit set. */
	for (syn = 0x40; syn <= 0x5f; syn++)
		comp_expect(test, syn, SROCE_ACK_IGNORE, UNTOUCHED);
	for (syn = 0x80; syn <= 0xff; syn++)
		comp_expect(test, syn, SROCE_ACK_IGNORE, UNTOUCHED);
}

/* Every syndrome, against the class its top three bits name. */
static void comp_all(struct kunit *test)
{
	unsigned int syn, n[SROCE_ACK_IGNORE + 1] = {};

	for (syn = 0; syn < 256; syn++) {
		enum ib_wc_status st = UNTOUCHED;
		enum sroce_ack_action a = sroce_comp_classify(syn, &st);

		KUNIT_ASSERT_LE(test, a, SROCE_ACK_IGNORE);
		n[a]++;
		if (a != SROCE_ACK_FATAL)
			KUNIT_EXPECT_EQ_MSG(test, st, UNTOUCHED,
					    "syndrome %#x", syn);
		else
			KUNIT_EXPECT_NE_MSG(test, st, UNTOUCHED,
					    "syndrome %#x", syn);
	}
	KUNIT_EXPECT_EQ(test, n[SROCE_ACK_OK], 32);
	KUNIT_EXPECT_EQ(test, n[SROCE_ACK_RNR], 32);
	KUNIT_EXPECT_EQ(test, n[SROCE_ACK_RETRY], 1);
	KUNIT_EXPECT_EQ(test, n[SROCE_ACK_FATAL], 3);
	KUNIT_EXPECT_EQ(test, n[SROCE_ACK_IGNORE], 256 - 68);
}

static struct kunit_case comp_cases[] = {
	KUNIT_CASE(comp_ack),
	KUNIT_CASE(comp_rnr),
	KUNIT_CASE(comp_nak),
	KUNIT_CASE(comp_reserved),
	KUNIT_CASE(comp_all),
	{}
};

struct kunit_suite sroce_comp_suite = {
	.name = "sroce_comp",
	.test_cases = comp_cases,
};
