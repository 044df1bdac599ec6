#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Open MPI's remote launcher in the guests, in place of ssh: "mpi-agent.sh
# [options] HOST COMMAND..." hands COMMAND to the other guest through the
# shared directory (middleware.sh's mpi_agent_serve runs it there) and
# waits for its exit status. HOST is always the other guest.
set -u
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
shift
d=${MPI_DIR:?}
mkdir -p "$d"
exec 8>"$d/lock"
flock 8
n=0
while [ -e "$d/$n.cmd" ]; do n=$((n + 1)); done
echo "$*" >"$d/$n.cmd.tmp" && mv "$d/$n.cmd.tmp" "$d/$n.cmd"
flock -u 8
while [ ! -e "$d/$n.rc" ]; do sleep 0.1; done
exit "$(cat "$d/$n.rc")"
