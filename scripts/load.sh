# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# The --load option of bench.sh, profile.sh and demo.sh (sourced): what
# else the machine does while the guests run.
#   idle     nothing
#   host:N   N CPU-bound processes on the host: the guests' vCPUs lose
#            time to them (steal time, as on an oversubscribed hypervisor)
#   guest:N  N CPU-bound processes in each guest (tests/guest/perf.sh's
#            BENCH_LOAD_GUEST): a busy machine

# load_ok LOAD: LOAD is one of the above, N from 1 to 99.
load_ok() { [[ $1 =~ ^(idle|(host|guest):[1-9][0-9]?)$ ]]; }

# load_suffix LOAD: what an output directory's name gets ("-host-2").
load_suffix() { [ "$1" = idle ] || echo "-${1/:/-}"; }

# load_guest LOAD: the busy processes each guest runs (0 unless guest:N).
load_guest() {
	if [[ $1 == guest:* ]]; then echo "${1#guest:}"; else echo 0; fi
}

# load_host_start LOAD: for host:N, start the N processes; they stop with
# load_host_stop or, however the script ends, on its exit.
load_hogs=()
load_host_stop() {
	[ ${#load_hogs[@]} = 0 ] || kill "${load_hogs[@]}" 2>/dev/null
	load_hogs=()
}
load_host_start() {
	local h
	trap load_host_stop EXIT
	trap 'exit 130' INT TERM
	[[ $1 == host:* ]] || return 0
	for ((h = 0; h < ${1#host:}; h++)); do
		sh -c 'while :; do :; done' &
		load_hogs+=($!)
	done
}
