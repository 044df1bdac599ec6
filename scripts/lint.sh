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
fail=0
for cp in "${cps[@]}"; do
	for f in "${files[@]}"; do
		if ! out=$("$cp" --strict --no-tree --quiet --show-types \
				--ignore FILE_PATH_CHANGES -f "$f" 2>&1); then
			echo "$cp: $out"
			fail=1
		fi
	done
done
[ $fail -eq 0 ] && echo "lint: checkpatch --strict (6.1 and 7.2) clean on ${#files[@]} files"
exit $fail
