# SPDX-License-Identifier: GPL-2.0
# Out-of-tree build of sroce.ko. `make` builds against the newest installed
# Debian kernel headers (found under /lib/modules, not from uname -r);
# `make KDIR=/path/to/tree` builds against any other kernel tree.

KVER ?= $(shell ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
KDIR ?= /lib/modules/$(KVER)/build
PWD := $(shell pwd)

.PHONY: all modules modules_install clean lint sparse check check-all demo deps \
	debug-kernel bench bench-matrix profile dkms-deb

all: modules

modules:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)': run scripts/deps.sh or set KDIR"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	rm -rf build

# checkpatch --strict (from linux-source-6.1) over every source file.
lint:
	scripts/lint.sh

# sparse over every file (C=2 checks even up-to-date objects).
sparse:
	$(MAKE) -C $(KDIR) M=$(PWD) C=2 W=1 modules

deps:
	scripts/deps.sh

debug-kernel:
	scripts/debug-kernel.sh

# The README's test command: everything, ending in "N passed, N failed".
check:
	scripts/check.sh

# The whole suite on every kernel of the matrix, not only the primary one.
check-all:
	SROCE_CHECK_ALL=1 scripts/check.sh

# perftest with sroce and with rdma_rxe of the same kernel in the same VM
# setups, alternating, and the sroce/rxe ratio of each figure:
# make bench KERNEL=6.1|6.12|7.2 [MTU=N] [LOAD=idle|host:N|guest:N].
bench:
	scripts/bench.sh --kernel $(or $(KERNEL),6.1) $(if $(MTU),--mtu $(MTU)) \
		$(if $(LOAD),--load $(LOAD))

# make bench on every kernel at netdev MTU 1500 and 9000 (hours under TCG:
# BENCH_SET and --rounds as for make bench), then one Markdown table of
# them all in build/bench/matrix.md (scripts/bench-table.py --matrix).
BENCH_MATRIX := 6.1-1500 6.1-9000 6.12-1500 6.12-9000 7.2-1500 7.2-9000
bench-matrix:
	set -e; for c in $(BENCH_MATRIX); do \
		scripts/bench.sh --kernel $${c%-*} --mtu $${c#*-} \
			--out build/bench/$$c; \
	done
	python3 scripts/bench-table.py --matrix $(addprefix build/bench/,$(BENCH_MATRIX)) \
		| tee build/bench/matrix.md

# Where a guest's time goes in one perftest run, sampled from the host:
# make profile [KERNEL=6.1|6.12|7.2] [DRIVER=sroce|rxe|siw] [SETUP=one|two]
# [MTU=N] [LOAD=idle|host:N|guest:N] [RUN="ib_write_bw 65536"].
profile:
	scripts/profile.sh --kernel $(or $(KERNEL),6.1) \
		--driver $(or $(DRIVER),sroce) --setup $(or $(SETUP),one) \
		$(if $(MTU),--mtu $(MTU)) $(if $(LOAD),--load $(LOAD)) \
		$(or $(RUN),ib_write_bw 65536)

# sroce-dkms_<version>_all.deb in build/: DKMS builds the module for every
# installed kernel with headers, and again after kernel upgrades.
dkms-deb:
	scripts/dkms-deb.sh

# Build, boot two VMs, move RDMA traffic with sroce and with rdma_rxe:
# make demo [KERNEL=6.1|6.12|7.2] [MTU=N] [LOAD=idle|host:N|guest:N].
demo:
	scripts/demo.sh --kernel $(or $(KERNEL),6.1) $(if $(MTU),--mtu $(MTU)) \
		$(if $(LOAD),--load $(LOAD))
