#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.pl --strict (from Debian's linux-source-6.1) over every C file.
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

cd "$top"
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '\.mod\.c$')
fail=0
for f in "${files[@]}"; do
	if ! out=$("$cp_dir/scripts/checkpatch.pl" --strict --no-tree --quiet \
			--show-types --ignore FILE_PATH_CHANGES -f "$f" 2>&1); then
		echo "$out"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "lint: checkpatch --strict clean on ${#files[@]} files"
exit $fail
