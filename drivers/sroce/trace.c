// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of trace.h, instantiated once. An object of their own,
 * so that every stage that fires one depends on this leaf and not on
 * main.o, which sits above them all.
 */
#include <linux/once.h>
#include <linux/siphash.h>

#define CREATE_TRACE_POINTS
#include "trace.h"

/**
 * sroce_trace_wr_id() - a completion's wr_id as a tracepoint may show it
 * @user: the QP is a user QP
 * @wr_id: the work request's id
 *
 * A user QP's wr_id is the process's own cookie. A kernel consumer's is
 * most often a pointer (its request, or its ib_cqe), which a trace must
 * not hand to whoever reads the trace buffer: it is shown hashed with a
 * key drawn once per load, so that equal ids still look equal.
 *
 * Return: what the tracepoint records.
 */
u64 sroce_trace_wr_id(bool user, u64 wr_id)
{
	static siphash_key_t key;

	if (user)
		return wr_id;
	get_random_once(&key, sizeof(key));
	return siphash_1u64(wr_id, &key);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_trace_wr_id);
