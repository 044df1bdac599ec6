# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# apt for another Debian suite (trixie, sid) through a private sources list
# and lists directory under /var/cache/sroce: the host's own apt sources,
# lists and packages are never touched. Sourced by kernel.sh and rootfs.sh.

suite_apt_dir() { echo "${SROCE_CACHE:-/var/cache/sroce}/apt-$1"; }

suite_apt_opts() {
	local a
	a=$(suite_apt_dir "$1")
	echo "-o Dir::Etc::SourceList=$a/sources.list -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$a/lists -o Dir::Cache=$a/cache" \
		"-o Debug::NoLocking=1 -o APT::Sandbox::User=root" \
		"-o Acquire::Check-Valid-Until=false"
}

# suite_apt_update SUITE: refresh the suite's lists once a day at most.
suite_apt_update() {
	local a
	a=$(suite_apt_dir "$1")
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	echo "deb http://deb.debian.org/debian $1 main" >"$a/sources.list"
	if [ -f "$a/stamp" ] && [ -z "$(find "$a/stamp" -mmin +1440)" ]; then
		return 0
	fi
	# shellcheck disable=SC2046 # options are words
	apt-get $(suite_apt_opts "$1") -qq update >&2
	touch "$a/stamp"
}

suite_apt_get() {
	local s=$1
	shift
	# shellcheck disable=SC2046
	apt-get $(suite_apt_opts "$s") -qq "$@"
}

suite_apt_cache() {
	local s=$1
	shift
	# shellcheck disable=SC2046
	apt-cache $(suite_apt_opts "$s") "$@"
}

# suite_apt_candidate SUITE PKG: the version apt would pick, or nothing.
suite_apt_candidate() {
	suite_apt_cache "$1" policy "$2" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}
