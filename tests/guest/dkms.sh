#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module DKMS built and installed for this kernel (scripts/dkms-check.sh
# left it and depmod's index in DIR/<release>): with it over /lib/modules,
# `rdma link add ... type sroce` must load it by its alias, from updates/dkms.
#   dkms.sh DIR
set -u
here=$(dirname "$0")
# shellcheck source=tests/guest/lib.sh
. "$here/lib.sh"
dir=${1:?usage: dkms.sh DIR}
kver=$(uname -r)

# (DKMS compresses it as the kernel's own modules are: sroce.ko.xz on 7.2.)
t "DKMS installed sroce for $kver" \
	bash -c "ls '$dir/$kver'/updates/dkms/sroce.ko*"
mkdir -p /tmp/dk/upper /tmp/dk/work
t "DKMS's module tree over /lib/modules" \
	mount -t overlay overlay \
	-o "lowerdir=$dir:/lib/modules,upperdir=/tmp/dk/upper,workdir=/tmp/dk/work" \
	/lib/modules
t "modprobe finds sroce in updates/dkms" \
	bash -c 'modinfo -n sroce | grep -q "/updates/dkms/sroce.ko"'
t "sroce not loaded yet" bash -c '! lsmod | grep -qw sroce'
modprobe ib_uverbs
t "rdma link add sroce0 autoloads the DKMS module" \
	rdma link add sroce0 type sroce netdev eth0
t "sroce loaded" bash -c 'lsmod | grep -qw sroce'
t "ibv_devices lists sroce0" bash -c 'ibv_devices | grep -qw sroce0'
t "sroce0 port active" bash -c 'ibv_devinfo -d sroce0 | grep -q PORT_ACTIVE'
t "rdma link delete sroce0" rdma link delete sroce0
t "rmmod sroce" rmmod sroce
finish
