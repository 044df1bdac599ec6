#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-table.py RESULTS [CORE]: the tables of scripts/bench.sh.

RESULTS holds lines "ROUND TEST SIZE SETUP DRIVER METRIC VALUE" ("fail -"
for a run without a number); CORE is bench.sh's core runs, "TOOL SIZE,..."
(the first table; the rest of the runs are grouped by kind). A cell is the
median over rounds, with (min..max) over rounds when more than one; "fail"
unless every round gave a number, "-" for a driver or run not there. The
ratio is taken in each round (sroce/rxe for bandwidth, rxe/sroce for
latency, so above 1 sroce is better) and its median shown, with its spread.
"""
import sys
from collections import OrderedDict

DRIVERS = ('sroce', 'rxe')
BASELINES = ('tcp_bw', 'udp_bw', 'memcpy')
# The baselines of bench.sh's base set (also in the sweep's table).
BASE_RUNS = (('tcp_bw', '65536'), ('udp_bw', '65507'), ('memcpy', '65536'))
# Counter metrics of tests/guest/perf.sh, as shown.
COUNTERS = (('retrans', 'retrans'), ('oos', 'oos'), ('drops', 'drops'),
            ('nic_drops', 'nic'))


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def num(x, digits=4):
    return '%.*g' % (digits, x) if abs(x) < 1e5 else '%.0f' % x


def spread(v, digits=4):
    if len(v) == 1:
        return num(v[0], digits)
    return '%s (%s..%s)' % (num(median(v), digits), num(min(v), digits),
                            num(max(v), digits))


class Results:
    def __init__(self, path):
        # (test, size, setup) -> driver -> round -> {metric: value} or None
        self.runs = OrderedDict()
        self.rounds = set()
        with open(path, encoding='utf-8') as f:
            for line in f:
                w = line.split()
                if len(w) != 7:
                    continue
                rnd, test, size, setup, drv, metric, value = w
                self.rounds.add(rnd)
                cell = self.runs.setdefault((test, size, setup), {}) \
                    .setdefault(drv, {})
                if metric == 'fail':
                    cell[rnd] = None
                elif cell.get(rnd, {}) is not None:
                    cell.setdefault(rnd, {})[metric] = float(value)

    def values(self, key, drv, metric):
        """The metric's values by round, or None if a round failed."""
        cell = self.runs.get(key, {}).get(drv)
        if cell is None:
            return {}
        if any(m is None or metric not in m for m in cell.values()):
            return None
        return {r: m[metric] for r, m in cell.items()}

    def cell(self, key, drv, metric, scale=1):
        v = self.values(key, drv, metric)
        if v is None:
            return 'fail'
        return spread([x * scale for x in v.values()]) if v else '-'

    def median(self, key, drv, metric):
        v = self.values(key, drv, metric)
        return median(list(v.values())) if v else None

    def ratio(self, key, metric, lat):
        a = self.values(key, 'sroce', metric)
        b = self.values(key, 'rxe', metric)
        if not a or not b:
            return '-'
        r = [(b[k] / a[k] if lat else a[k] / b[k])
             for k in a if k in b and a[k] > 0 and b[k] > 0]
        return spread(r, 3) if r else '-'


def table(res, keys, title, out):
    fmt = '%-15s %7s %-5s %26s %26s %22s  %s'
    out.append(title)
    out.append(fmt % ('test', 'size', 'setup', 'sroce', 'rxe', 'ratio', ''))
    for key in keys:
        test, size, setup = key
        lat = test.endswith('_lat')
        metric = 'lat_typ' if lat else 'bw_avg'
        if test in BASELINES:
            unit, ratio = 'MiB/s; in the guest booted with each driver', '-'
        else:
            unit = ('usec t_typical; ratio rxe/sroce' if lat
                    else 'MB/s average; ratio sroce/rxe')
            ratio = res.ratio(key, metric, lat)
        out.append(fmt % (test, size, setup, res.cell(key, 'sroce', metric),
                          res.cell(key, 'rxe', metric), ratio, unit))
        if not lat and test not in BASELINES and int(size) <= 8192:
            # perftest's Mpps, in thousands of messages a second
            out.append(fmt % ('', '', '',
                              res.cell(key, 'sroce', 'msg_rate', 1000),
                              res.cell(key, 'rxe', 'msg_rate', 1000),
                              res.ratio(key, 'msg_rate', False),
                              '1000 messages/s (message rate)'))
    out.append('')


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    res = Results(sys.argv[1])
    core = set()
    if len(sys.argv) == 3:
        core = {tuple(r.split()) for r in sys.argv[2].split(',') if r}
    keys = list(res.runs)
    sizes = {}
    for test, size, setup in keys:
        sizes.setdefault((test, setup), set()).add(size)
    out = []

    def is_core(k):
        return (k[0], k[1]) in core or not core and k[0] not in BASELINES

    def is_sweep(k):
        return len(sizes[(k[0], k[2])]) >= 3

    first = [k for k in keys if is_core(k)]
    qps = [k for k in keys if '-q' in k[0] and k not in first]
    base = [k for k in keys if k[0] in BASELINES and
            ((k[0], k[1]) in BASE_RUNS or not is_sweep(k))]
    sweep = sorted((k for k in keys if is_sweep(k)),
                   key=lambda k: (k[2], k[0], int(k[1])))
    rest = [k for k in keys if k not in first + qps + base + sweep]
    # (the core's runs are in the sweep's table too, if it has their size)
    nr = len(res.rounds)
    if first or rest:
        table(res, first + rest, 'perftest: median (min..max) of %d round(s)'
              % nr, out)

    lat = [k for k in first + rest if k[0].endswith('_lat')]
    if lat:
        fmt = '%-15s %7s %-5s %12s %12s %12s %12s'
        out.append('latency tail (usec; median of the rounds)')
        out.append(fmt % ('test', 'size', 'setup', 'sroce p99', 'rxe p99',
                          'sroce p99.9', 'rxe p99.9'))
        for k in lat:
            c = []
            for m in ('lat_p99', 'lat_p999'):
                for d in DRIVERS:
                    v = res.median(k, d, m)
                    c.append('-' if v is None else num(v))
            out.append(fmt % (k + tuple(c)))
        out.append('')

    if qps:
        table(res, qps, 'ib_write_bw with -q N (N QPs)', out)

    if base:
        table(res, base, 'baselines (qperf: TCP, UDP; tools/sroce-memcpy)',
              out)
        for setup in sorted({k[2] for k in base}):
            tcp = [res.median(('tcp_bw', '65536', setup), d, 'bw_avg')
                   for d in DRIVERS]
            if None in tcp:
                continue
            tcp = median(tcp)
            line = []
            for d in DRIVERS:
                v = res.median(('ib_write_bw', '65536', setup), d, 'bw_avg')
                if v is not None and tcp > 0:
                    line.append('%s %.0f%%' % (d, 100 * v / tcp))
            if line:
                where = ('between the guests' if setup == 'two'
                         else 'one guest, TCP over its loopback')
                out.append('ib_write_bw 64 KiB as %% of TCP (%s, %.4g '
                           'MiB/s): %s' % (where, tcp, ', '.join(line)))
        out.append('')

    if sweep:
        table(res, sweep, 'size sweep (bandwidth by message size)', out)

    # Counters: totals over the rounds; only runs where one moved.
    ctr = []
    tot = {d: [0] * len(COUNTERS) for d in DRIVERS}
    for k in keys:
        row, moved = [], False
        for d in DRIVERS:
            c = []
            for i, (m, _) in enumerate(COUNTERS):
                v = [c[m] for c in res.runs[k].get(d, {}).values()
                     if c is not None and m in c]
                s = sum(v)
                tot[d][i] += s
                moved = moved or s != 0
                c.append('%s %d' % (COUNTERS[i][1], s) if v else '')
            row.append(' '.join(x for x in c if x) or '-')
        if moved:
            ctr.append('%-15s %7s %-5s  sroce: %s | rxe: %s'
                       % (k + tuple(row)))
    out.append('counters over the runs (sum of the rounds; retrans: sroce '
               'packets sent again (retransmits),')
    out.append('  rxe retries, each resending from the first unacked PSN '
               '(completer_retry_err); oos: out-of-sequence')
    out.append('  packets received; drops: sroce tx_drops + rx_drop_*; '
               'nic: eth0 drops)')
    out.extend(ctr or ['  none moved in any run'])
    out.append('  totals: ' + ' | '.join(
        '%s: %s' % (d, ' '.join('%s %d' % (COUNTERS[i][1], tot[d][i])
                                for i in range(len(COUNTERS))
                                if d == 'sroce' or COUNTERS[i][0] != 'drops'))
        for d in DRIVERS))
    out.append('')
    out.append('ratio > 1: sroce is better (more bandwidth, less latency); '
               'every number in results.txt')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
