// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_kunit.ko: KUnit suites for sroce's pure logic. It links against
 * sroce.ko through symbols exported only to KUnit builds.
 */
#include <linux/module.h>

#include "../sroce.h"
#include "sroce_test.h"

kunit_test_suites(&sroce_wire_suite, &sroce_queue_suite, &sroce_cq_suite,
		  &sroce_dev_suite, &sroce_mr_suite, &sroce_icrc_suite,
		  &sroce_req_suite, &sroce_resp_suite, &sroce_comp_suite,
		  &sroce_compqp_suite, &sroce_qpfsm_suite);

MODULE_DESCRIPTION("KUnit tests for sroce");
MODULE_LICENSE("GPL");
SROCE_IMPORT_KUNIT_NS();
