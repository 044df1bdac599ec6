/* SPDX-License-Identifier: GPL-2.0 */
/* The KUnit suites of sroce_kunit.ko, registered in kunit_main.c. */
#ifndef SROCE_TEST_H
#define SROCE_TEST_H

#include <kunit/test.h>

extern struct kunit_suite sroce_wire_suite;
extern struct kunit_suite sroce_queue_suite;
extern struct kunit_suite sroce_cq_suite;
extern struct kunit_suite sroce_dev_suite;
extern struct kunit_suite sroce_mr_suite;
extern struct kunit_suite sroce_icrc_suite;
extern struct kunit_suite sroce_req_suite;
extern struct kunit_suite sroce_resp_suite;
extern struct kunit_suite sroce_comp_suite;
extern struct kunit_suite sroce_compqp_suite;
extern struct kunit_suite sroce_qpfsm_suite;

#endif
