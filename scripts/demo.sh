#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The README's first command: install what is missing, build sroce, boot two
# VMs on a private link, create sroce0 on each, show it through stock
# rdma-core and show RoCEv2 packets crossing between them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=$top/build/demo

"$here/deps.sh"
"$here/build.sh" 6.1 >/dev/null
echo "demo: built $top/build/6.1/sroce.ko; booting two VMs (QEMU, ~1-2 min under TCG)"
rm -rf "$out"
status=0
"$here/vm-run.sh" --kernel 6.1 --vms 2 --out "$out" --timeout 900 -- \
	"$top/tests/guest/demo.sh" || status=$?
for i in 0 1; do
	echo "==================== VM $i ===================="
	tr -d '\r' <"$out/vm$i/demo.log" 2>/dev/null || echo "(no output)"
done
exit $status
