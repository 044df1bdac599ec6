// SPDX-License-Identifier: GPL-2.0
/*
 * The tracepoints of trace.h, instantiated once. An object of their own,
 * so that every stage that fires one depends on this leaf and not on
 * main.o, which sits above them all.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
