# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# apt for another Debian suite (trixie, sid) through a private sources list
# and lists directory under /var/cache/sroce: the host's own apt sources,
# lists and packages are never touched. Sourced by kernel.sh and rootfs.sh.

suite_apt_dir() { echo "${SROCE_CACHE:-/var/cache/sroce}/apt-$1"; }

# suite_apt_mirror: the Debian mirror the host's own apt sources take its
# release's main from, which serves the other suites too; none is written
# into the project. Fails when the host's apt sources name none.
suite_apt_mirror() {
	local codename m
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	# shellcheck disable=SC2016 # apt's format, not the shell's
	m=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(IDENTIFIER)' |
		awk -v r="$codename" '$2 == r && $3 == "main" && $4 == "Packages" {
			sub(/\/$/, "", $1); print $1; exit }')
	[ -n "$m" ] || {
		echo "suite-apt: no $codename main in the host's apt sources" >&2
		return 1
	}
	echo "$m"
}

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
	local a m
	a=$(suite_apt_dir "$1")
	m=$(suite_apt_mirror) || return 1
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	echo "deb $m $1 main" >"$a/sources.list"
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
