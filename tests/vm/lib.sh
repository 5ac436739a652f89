# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Shared by tests/vm/build-image, tests/vm/run and tests/vm/vm.bats: where the
# guest kernel, the image and the build products are, and how to run qemu.
#
# Environment (all optional):
#   RDMAKIT          the host-built binary put into the guest (default: ./rdmakit)
#   RDMAKIT_VM_OUT   build products (default: tests/vm/out, git-ignored)
#   RDMAKIT_VM_KVER  the guest kernel version (default: the newest installed
#                    /boot/vmlinuz-*-amd64 that has /lib/modules/VERSION)
#   RDMAKIT_VM_ACCEL auto (default), tcg or kvm
#   QEMU             the qemu binary (default: qemu-system-x86_64)

# shellcheck disable=SC2034 # used by the scripts that source this file
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_ROOT=$(cd "$VM_DIR/../.." && pwd)
VM_OUT=${RDMAKIT_VM_OUT:-$VM_DIR/out}
QEMU=${QEMU:-qemu-system-x86_64}

# The guest's addresses: 198.18.0.0/15 (RFC 2544) only, inside the namespace
# that tests/vm/run creates.
# shellcheck disable=SC2034
VM_HOST_IP=198.18.0.1
VM_GUEST_IP=198.18.0.2
VM_PREFIX=24

vm_die() {
	echo "${0##*/}: $*" >&2
	exit 125
}

# vm_kver: the guest kernel version; fails with a message when none is usable.
vm_kver() {
	if [[ -n ${RDMAKIT_VM_KVER:-} ]]; then
		echo "$RDMAKIT_VM_KVER"
		return 0
	fi
	local k v best=''
	for k in /boot/vmlinuz-*-amd64; do
		[[ -e $k ]] || continue
		v=${k#/boot/vmlinuz-}
		[[ -d /lib/modules/$v/kernel ]] || continue
		if [[ -z $best ]] || [[ $(printf '%s\n%s\n' "$best" "$v" | sort -V | tail -n 1) == "$v" ]]; then
			best=$v
		fi
	done
	[[ -n $best ]] || return 1
	echo "$best"
}

# vm_missing: prints why the lab cannot run here (one line) and returns 0,
# or prints nothing and returns 1 when everything it needs is installed.
vm_missing() {
	local t
	if ! command -v "$QEMU" >/dev/null 2>&1; then
		echo "$QEMU not installed (Debian package qemu-system-x86)"
		return 0
	fi
	if ! vm_kver >/dev/null; then
		echo "no guest kernel: /boot/vmlinuz-*-amd64 with /lib/modules (Debian package linux-image-amd64)"
		return 0
	fi
	if [[ ! -e /boot/vmlinuz-$(vm_kver) || ! -d /lib/modules/$(vm_kver)/kernel ]]; then
		echo "no kernel $(vm_kver): /boot/vmlinuz-$(vm_kver) and /lib/modules/$(vm_kver) are needed (Debian package linux-image-amd64)"
		return 0
	fi
	if [[ ! -r /boot/vmlinuz-$(vm_kver) ]]; then
		echo "/boot/vmlinuz-$(vm_kver) is not readable by $(id -un) (Debian installs it mode 0600): run as root"
		return 0
	fi
	if [[ ! -x /bin/busybox ]]; then
		echo "/bin/busybox not found (Debian package busybox-static)"
		return 0
	fi
	for t in ib_write_bw:perftest ibv_devices:ibverbs-utils rdma:iproute2 \
		rping:rdmacm-utils cpio:cpio depmod:kmod; do
		if ! command -v "${t%%:*}" >/dev/null 2>&1 &&
			[[ ! -x /usr/sbin/${t%%:*} && ! -x /sbin/${t%%:*} ]]; then
			echo "${t%%:*} not installed (Debian package ${t#*:})"
			return 0
		fi
	done
	if [[ ! -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ]]; then
		echo "the rxe provider is missing (Debian package ibverbs-providers)"
		return 0
	fi
	return 1
}

# vm_kvm_usable: true when /dev/kvm can run the guest.  PVM (kvm_pvm, a
# paravirtualized KVM for nested containers) cannot boot Debian's kernel and
# is never used; another KVM is used only after a probe boot succeeded (the
# result is cached in $VM_OUT/kvm-probe.*).  RDMAKIT_VM_ACCEL=tcg|kvm decides.
vm_kvm_usable() {
	case ${RDMAKIT_VM_ACCEL:-auto} in
	tcg) return 1 ;;
	kvm) return 0 ;;
	esac
	[[ -r /dev/kvm && -w /dev/kvm ]] || return 1
	[[ -d /sys/module/kvm_pvm ]] && return 1
	local key cache
	key=$(uname -r)-$(vm_kver)-$("$QEMU" --version | head -n 1 | tr -c 'A-Za-z0-9.\n' _)
	cache=$VM_OUT/kvm-probe.$key
	if [[ ! -f $cache ]]; then
		mkdir -p "$VM_OUT"
		if "$VM_DIR/run" --accel kvm --timeout 60 --probe >/dev/null 2>&1; then
			echo yes >"$cache"
		else
			echo no >"$cache"
		fi
	fi
	[[ $(cat "$cache") == yes ]]
}

# vm_accel_args: qemu's accelerator and CPU options.
vm_accel_args() {
	if vm_kvm_usable; then
		echo "-accel kvm -cpu host"
	else
		echo "-accel tcg,thread=multi -cpu max"
	fi
}
