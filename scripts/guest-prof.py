#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Profile a TCG guest from the host, by sampling its vCPUs' RIP.

perf inside a TCG guest is no use here: its timer samples land almost all
in the idle loop (the guest's timer interrupt is taken at the next halt,
not while translated code runs). QEMU's monitor can stop a vCPU between
two translated blocks at any time and show its registers, so sampling
"info registers -a" at a steady rate gives a flat profile of where each
vCPU spends its time, kernel and user, halted or not.

  guest-prof.py sample SOCK... --start FILE --stop FILE --out SAMPLES
      wait for FILE --start to exist, then sample every monitor socket
      (one per guest, SROCE_QEMU_MONITOR=1 of scripts/vm-run.sh) at
      --hz per second until FILE --stop exists or --secs have passed.
      Each sample is a line: GUEST CPU RIP CPL HALTED.
  guest-prof.py report SAMPLES KALLSYMS [--top N]
      the share of samples per kernel symbol (and module), user space and
      halted, from the guest's /proc/kallsyms (read as root).
"""
import argparse
import bisect
import collections
import os
import re
import socket
import sys
import time

REG = re.compile(r'CPU#(\d+)|RIP=([0-9a-f]{16})|RSP=([0-9a-f]{16})|'
                 r'CPL=(\d)|HLT=(\d)')
# Words on a kernel stack that may be return addresses: the kernel's text
# and modules live in the top 2 GiB.
TEXT = re.compile(r'0x(ffffffff[89a-f][0-9a-f]{7})')
STACK_WORDS = 32


class Monitor:
    """One QEMU human monitor over a unix socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.settimeout(10)
        self.read_prompt()

    def read_prompt(self):
        buf = b''
        while not buf.endswith(b'(qemu) '):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError('monitor closed')
            buf += chunk
        return buf.decode('ascii', 'replace')

    def cmd(self, line):
        self.sock.sendall(line.encode() + b'\n')
        return self.read_prompt()


def parse_regs(text):
    """[(cpu, rip, rsp, cpl, halted)] from "info registers -a" output."""
    out, cur = [], None
    for m in REG.finditer(text):
        cpu, rip, rsp, cpl, hlt = m.groups()
        if cpu is not None:
            cur = [int(cpu), None, None, None]
        elif cur is None:
            continue
        elif rip is not None:
            cur[1] = int(rip, 16)
        elif rsp is not None:
            cur[2] = int(rsp, 16)
        elif cpl is not None:
            cur[3] = int(cpl)
        elif hlt is not None and None not in cur:
            out.append((cur[0], cur[1], cur[2], cur[3], int(hlt)))
            cur = None
    return out


def stack_text(mon, rsp):
    """The words at the top of a kernel stack that may be return addresses.

    Debian's kernels unwind with ORC, not frame pointers, so there is no
    chain to follow: what looks like kernel text is kept, in stack order,
    and the report takes it as a likely caller list. The vCPU runs on
    while the monitor reads, so a word may be newer than the sample.
    """
    text = mon.cmd('x/%dgx 0x%x' % (STACK_WORDS, rsp))
    words = []
    for line in text.splitlines():
        if ':' in line:
            words += TEXT.findall(line.split(':', 1)[1])
    return words


def sample(args):
    deadline = time.time() + args.wait
    while not os.path.exists(args.start):
        if time.time() > deadline:
            sys.exit('guest-prof: %s never appeared' % args.start)
        time.sleep(0.2)
    mons = [Monitor(s) for s in args.socks]
    period = 1.0 / args.hz
    end = time.time() + args.secs
    n = 0
    with open(args.out, 'w') as f:
        nxt = time.time()
        while time.time() < end and not os.path.exists(args.stop):
            for g, mon in enumerate(mons):
                try:
                    text = mon.cmd('info registers -a')
                    for cpu, rip, rsp, cpl, hlt in parse_regs(text):
                        stack = []
                        if cpl == 0 and not hlt:
                            stack = stack_text(mon, rsp)
                        f.write('%d %d %x %d %d %s\n' %
                                (g, cpu, rip, cpl, hlt,
                                 ','.join(stack) or '-'))
                except (OSError, EOFError):
                    return	# the guest is gone
            n += 1
            nxt += period
            time.sleep(max(0.0, nxt - time.time()))
    print('guest-prof: %d rounds over %d guest(s)' % (n, len(mons)))


def load_kallsyms(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in 'tTwW':
                continue
            mod = p[3].strip('[]') if len(p) > 3 else 'vmlinux'
            syms.append((int(p[0], 16), p[2], mod))
    syms.sort()
    return [s[0] for s in syms], syms


def callers(stack, leaf, lookup, depth=3):
    """The first @depth distinct symbols on the stack other than the leaf,
    leaving out the lock and copy wrappers that would hide the caller."""
    out = []
    for w in stack.split(','):
        if w == '-':
            break
        name = lookup(int(w, 16))
        if name in out or name == leaf or WRAPPER.match(name):
            continue
        out.append(name)
        if len(out) == depth:
            break
    return ' < '.join(out) or '?'


WRAPPER = re.compile(r'_raw_spin_|_raw_read_|_raw_write_|queued_spin|'
                     r'__x86_return_thunk|__x86_indirect_thunk|'
                     r'srso_|retbleed_|ret_from_fork|\?')


def report(args):
    addrs, syms = load_kallsyms(args.kallsyms)

    def lookup(addr):
        i = bisect.bisect_right(addrs, addr) - 1
        return '%s [%s]' % (syms[i][1], syms[i][2]) if i >= 0 else '?'
    by_sym = collections.Counter()
    by_mod = collections.Counter()
    kinds = collections.Counter()
    chains = collections.defaultdict(collections.Counter)
    total = 0
    with open(args.samples) as f:
        for line in f:
            g, cpu, rip, cpl, hlt, stack = line.split()
            if args.guest is not None and int(g) != args.guest:
                continue
            total += 1
            if hlt == '1':
                kinds['halted'] += 1
                continue
            if cpl == '3':
                kinds['user'] += 1
                continue
            kinds['kernel'] += 1
            sym = lookup(int(rip, 16))
            by_sym[sym] += 1
            by_mod[sym.rsplit('[', 1)[-1].rstrip(']')] += 1
            chains[sym][callers(stack, sym, lookup)] += 1
    if not total:
        sys.exit('guest-prof: no samples')

    def pct(n):
        return '%5.1f%%' % (100.0 * n / total)
    print('%d samples: kernel %s, user %s, halted %s' %
          (total, pct(kinds['kernel']), pct(kinds['user']),
           pct(kinds['halted'])))
    print('\nby module (share of all samples):')
    for mod, n in by_mod.most_common(8):
        print('  %s  %s' % (pct(n), mod))
    print('\nby kernel symbol (share of all samples):')
    for sym, n in by_sym.most_common(args.top):
        print('  %s  %s' % (pct(n), sym))
    print('\nlikely callers of the top %d (words on the stack that look like'
          ' return addresses):' % args.callers)
    for sym, n in by_sym.most_common(args.callers):
        print('  %s  %s' % (pct(n), sym))
        for chain, m in chains[sym].most_common(4):
            print('      %s  < %s' % (pct(m), chain))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='what', required=True)
    s = sub.add_parser('sample')
    s.add_argument('socks', nargs='+')
    s.add_argument('--start', required=True)
    s.add_argument('--stop', required=True)
    s.add_argument('--out', required=True)
    s.add_argument('--hz', type=float, default=200)
    s.add_argument('--secs', type=float, default=30)
    s.add_argument('--wait', type=float, default=600,
                   help='seconds to wait for --start')
    r = sub.add_parser('report')
    r.add_argument('samples')
    r.add_argument('kallsyms')
    r.add_argument('--top', type=int, default=40)
    r.add_argument('--guest', type=int, help='only this guest (0, 1)')
    r.add_argument('--callers', type=int, default=10,
                   help='show the likely callers of this many symbols')
    args = ap.parse_args()
    sample(args) if args.what == 'sample' else report(args)


if __name__ == '__main__':
    main()
