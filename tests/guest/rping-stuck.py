#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for rping left in its exit race, for rping.sh's own test.

Installed as "rping" in a directory of its own, it prints its argument (if
any) to stderr, as rping prints an error, then waits in rdma_get_cm_event()
on a new event channel that nothing will ever post to: no QP, no cm_id, a
thread in ucma_get_event, which is where rping's CM thread stays when its
teardown discarded the event that woke it. rping.sh looks for the
eventfd's message in the binary it runs: Failed to signal CM thread.
"""
import ctypes
import sys

if len(sys.argv) > 1:
    print(sys.argv[1], file=sys.stderr, flush=True)
cm = ctypes.CDLL("librdmacm.so.1")
cm.rdma_create_event_channel.restype = ctypes.c_void_p
channel = ctypes.c_void_p(cm.rdma_create_event_channel())
event = ctypes.c_void_p()
cm.rdma_get_cm_event(channel, ctypes.byref(event))
sys.exit(3)
