#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict over every C file, twice: Debian 12's (from
# linux-source-6.1) and the newest one's (the debug kernel's 7.2 tree),
# whose rules differ.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
cache=${SROCE_CACHE:-/var/cache/sroce}
tarball=/usr/src/linux-source-6.1.tar.xz
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
cp_dir=$cache/checkpatch-$ver

if [ ! -x "$cp_dir/scripts/checkpatch.pl" ]; then
	mkdir -p "$cp_dir.tmp"
	tar -xJf "$tarball" -C "$cp_dir.tmp" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
	rm -rf "$cp_dir" && mv "$cp_dir.tmp" "$cp_dir"
fi

cps=("$cp_dir/scripts/checkpatch.pl")
new=$("$here/debug-kernel.sh")/src/scripts/checkpatch.pl
[ -x "$new" ] || { echo "lint: no $new" >&2; exit 1; }
cps+=("$new")

cd "$top"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '\.mod\.c$')
# One checkpatch run per file and version, as many at once as there are
# cores (the check waits for it). xargs runs it in a child bash.
# shellcheck disable=SC2317
lint_one() {
	local out
	if ! out=$("$1" --strict --no-tree --quiet --show-types \
			--ignore FILE_PATH_CHANGES -f "$2" 2>&1); then
		echo "$1: $out"
		return 1
	fi
}
export -f lint_one
fail=0
# shellcheck disable=SC2016
for cp in "${cps[@]}"; do
	for f in "${files[@]}"; do
		printf '%s\0%s\0' "$cp" "$f"
	done
done | xargs -0 -n 2 -P "$(nproc)" bash -c 'lint_one "$1" "$2"' lint || fail=1
[ $fail -eq 0 ] && echo "lint: checkpatch --strict (6.1 and 7.2) clean on ${#files[@]} files"
exit $fail
