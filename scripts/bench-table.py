#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-table.py RESULTS [CORE]: the tables of scripts/bench.sh.
bench-table.py --matrix OUT[+OUT...]...: one Markdown table of several
bench.sh results directories (OUT/results.txt, labelled from OUT/conf.txt),
e.g. every kernel at both MTUs, for README.md; a column per argument, which
may join runs of one kernel and MTU that hold different runs (bench.sh
--setups one, then --setups two).
bench-table.py --selftest: both, on made-up results with known answers.

RESULTS holds lines "ROUND TEST SIZE SETUP DRIVER METRIC VALUE" ("fail
CAUSE" for a run without a number, CAUSE "-" when none was given); CORE is
bench.sh's core runs, "TOOL SIZE,..." (the first table; the rest of the
runs are grouped by kind). A cell is the median over rounds, with
(min..max) over rounds when more than one; "fail" unless every round gave
a number, "-" for a driver or run not there. A bandwidth or latency of 0
or less is a failed round too (perftest printing zeros is no result). The
ratio is taken in each round (sroce/rxe for bandwidth, rxe/sroce for
latency, so above 1 sroce is better) and its median shown, with its spread;
it and every target that uses a failed run show "fail", never a number or
"met", and each failed run is listed with its cause.

DRIVER is sroce, rxe (rdma_rxe) or siw (the kernel's soft-iWARP). sroce and
rxe always have their columns; siw only where its results are there: then
it has a column too, and a second ratio, "vs siw" (sroce/siw for
bandwidth, siw/sroce for latency, taken like the one against rxe), a
"; siw RATIO, MEDIAN" in each cell of the matrix, and the targets of being
ahead of siw (ib_write_bw 64 KiB and ib_send_lat 2 B, 1x).
"""
import os
import sys
from collections import OrderedDict

# sroce, then the drivers it is measured against: the first two always
# shown, the rest only in results that have them.
DRIVERS = ('sroce', 'rxe', 'siw')
ALWAYS = DRIVERS[:2]
BASELINES = ('tcp_bw', 'udp_bw', 'udp_lat', 'memcpy')
# The baselines of bench.sh's base set (also in the sweep's table).
BASE_RUNS = (('tcp_bw', '65536'), ('udp_bw', '65507'), ('udp_lat', '2'),
             ('memcpy', '65536'))
# The baselines the matrix shows, beside the perftest runs.
MATRIX_BASE = (('tcp_bw', '65536'), ('udp_lat', '2'))
# Counter metrics of tests/guest/perf.sh, as shown.
COUNTERS = (('retrans', 'retrans'), ('oos', 'oos'), ('drops', 'drops'),
            ('nic_drops', 'nic'), ('rnr', 'rnr'), ('txdrops', 'txdrop'),
            ('timeouts', 'tmo'), ('cuts', 'cut'), ('rewinds', 'rew'),
            ('work', 'work'))
# A run's result: a round where one of these is 0 or less failed.
PRIMARY = ('bw_avg', 'lat_typ', 'conn_per_s')
# tools/sroce-cmscale's runs (bench.sh's scale set): its metrics as
# shown, and whether less is better.
CMSCALE = 'cmscale'
CMSCALE_METRICS = (
    ('conn_per_s', 'connections set up a second', False),
    ('teardown_s', 's to tear them all down', True),
    ('memfree_kib_qp', 'KiB of memory a QP (MemFree)', True),
    ('slab_kib_qp', 'KiB of slab a QP', True),
    ('vmalloc_kib_qp', 'KiB of vmalloc a QP (the rings)', True),
    ('memcg_kib_qp', 'KiB charged to the memory cgroup a QP', True),
)


def is_lat(test):
    """A latency run: the perftest tool's name, less its -qN and -gid
    suffixes, ends in _lat."""
    return test.split('-')[0].endswith('_lat')


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def num(x, digits=4):
    return '%.*g' % (digits, x) if abs(x) < 10 ** digits else '%.0f' % x


def spread(v, digits=4):
    if len(v) == 1:
        return num(v[0], digits)
    return '%s (%s..%s)' % (num(median(v), digits), num(min(v), digits),
                            num(max(v), digits))


class Results:
    def __init__(self, *paths):
        # (test, size, setup) -> driver -> round -> {metric: value} or None
        self.runs = OrderedDict()
        self.rounds = set()
        # (test, size, setup, driver) -> the file it came from: several
        # files make one column only where no run is in two of them (the
        # rounds of two files are different rounds).
        origin = {}
        # (test, size, setup, driver) -> round -> why it failed
        self.causes = OrderedDict()
        for path, (rnd, test, size, setup, drv, metric, value) in (
                (p, w) for p in paths for w in self.lines(p)):
            run = (test, size, setup, drv)
            if origin.setdefault(run, path) != path:
                sys.exit('bench-table: %s is in both %s and %s' %
                         (' '.join(run), origin[run], path))
            self.rounds.add(rnd)
            cell = self.runs.setdefault(run[:3], {}).setdefault(drv, {})
            why = None
            if metric == 'fail':
                why = 'failed' if value == '-' else value
            elif metric in PRIMARY and float(value) <= 0:
                why = '%s %s' % (metric, value)
            if why:
                cell[rnd] = None
                self.causes.setdefault(run, OrderedDict()).setdefault(
                    rnd, why)
            elif cell.get(rnd, {}) is not None:
                cell.setdefault(rnd, {})[metric] = float(value)
        # The drivers shown: sroce and rxe, then any other with results.
        self.drivers = [d for d in DRIVERS if d in ALWAYS or
                        any(d in c for c in self.runs.values())]

    @staticmethod
    def lines(path):
        """The seven words of each result line of path."""
        with open(path, encoding='utf-8') as f:
            return [w for w in (ln.split() for ln in f) if len(w) == 7]

    def failed(self, key, drv):
        """Why the run of drv failed ("round N: cause; ..."), or ''."""
        why = self.causes.get(key + (drv,), {})
        return '; '.join('round %s: %s' % rw for rw in
                         sorted(why.items(), key=lambda rw: int(rw[0])))

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

    def ratio(self, key, metric, lat, other='rxe'):
        """sroce/other (other/sroce if lat) by round: the median and
        spread, 'fail' if a round of either failed, '-' if none."""
        a = self.values(key, 'sroce', metric)
        b = self.values(key, other, metric)
        if a is None or b is None:
            return 'fail'
        if not a or not b:
            return '-'
        r = [(b[k] / a[k] if lat else a[k] / b[k])
             for k in a if k in b and a[k] > 0 and b[k] > 0]
        return spread(r, 3) if r else '-'


def per_round(a, b, f):
    """f(a[r], b[r]) for every round r both have, both above 0; None when
    either side failed."""
    if a is None or b is None:
        return None
    if not a or not b:
        return []
    return [f(a[r], b[r]) for r in a if r in b and a[r] > 0 and b[r] > 0]


# The speed targets (Documentation/testing.rst): what, the runs, the
# least median of the per-round values that meets it.
def with_unit(v, unit, digits=3):
    """A spread with its unit after each number: 5.5x (5x..6x)."""
    m = num(median(v), digits) + unit
    if len(v) == 1:
        return m
    return '%s (%s%s..%s%s)' % (m, num(min(v), digits), unit,
                                num(max(v), digits), unit)


def targets(res):
    """(target, values shown, 'met' or 'MISSED') for each speed target
    the runs in res can judge."""
    out = []

    def judge(what, v, goal, unit):
        if v is None:
            out.append((what, 'a run failed, goal ' + num(goal, 3) + unit,
                        'fail'))
        elif v:
            out.append((what, with_unit(v, unit) + ', goal ' +
                        num(goal, 3) + unit,
                        'met' if median(v) >= goal else 'MISSED'))

    def by_round(key_a, drv_a, key_b, drv_b, metric, f):
        return per_round(res.values(key_a, drv_a, metric),
                         res.values(key_b, drv_b, metric), f)

    for setup in ('one', 'two'):
        where = 'one guest' if setup == 'one' else 'two guests'
        write = ('ib_write_bw', '65536', setup)
        if setup == 'one':
            judge('ib_write_bw 64 KiB, one guest, sroce/rxe',
                  by_round(write, 'sroce', write, 'rxe', 'bw_avg',
                           lambda a, b: a / b), 5, 'x')
        else:
            # Against TCP in the same boot (perftest's MB is 2^20 bytes,
            # like qperf's MiB here).
            judge('ib_write_bw 64 KiB, two guests, % of TCP',
                  by_round(write, 'sroce', ('tcp_bw', '65536', setup),
                           'sroce', 'bw_avg', lambda a, b: 100 * a / b),
                  60, '%')
        lat = ('ib_send_lat', '2', setup)
        judge('ib_send_lat 2 B, %s, rxe/sroce' % where,
              by_round(lat, 'rxe', lat, 'sroce', 'lat_typ',
                       lambda a, b: a / b), 2, 'x')
        judge('sroce ib_write_bw 64 KiB -q 4 / -q 1, %s' % where,
              by_round(('ib_write_bw-q4', '65536', setup), 'sroce',
                       ('ib_write_bw-q1', '65536', setup), 'sroce',
                       'bw_avg', lambda a, b: a / b), 1.6, 'x')
        # Ahead of siw, where it ran.
        if 'siw' in res.runs.get(write, {}):
            judge('ib_write_bw 64 KiB, %s, sroce/siw' % where,
                  by_round(write, 'sroce', write, 'siw', 'bw_avg',
                           lambda a, b: a / b), 1, 'x')
        if 'siw' in res.runs.get(lat, {}):
            judge('ib_send_lat 2 B, %s, siw/sroce' % where,
                  by_round(lat, 'siw', lat, 'sroce', 'lat_typ',
                           lambda a, b: a / b), 1, 'x')
    # The scale set: 4096 QPs moving data, and what a connected QP holds.
    many = ('ib_write_bw-q4096', '4096', 'two')
    conns = (CMSCALE, '4096', 'two')
    for other in DRIVERS[1:]:
        if other in res.runs.get(many, {}):
            judge('ib_write_bw 4 KiB -q 4096, sroce/%s' % other,
                  by_round(many, 'sroce', many, other, 'bw_avg',
                           lambda a, b: a / b), 1, 'x')
    if 'rxe' in res.runs.get(conns, {}):
        judge('memory a QP, 4096 connected, rxe/sroce',
              by_round(conns, 'rxe', conns, 'sroce', 'memfree_kib_qp',
                       lambda a, b: a / b), 1, 'x')
    return out


def target_lines(res):
    return ['%-47s %-38s %s' % g for g in targets(res)]


def ratio_names(vs, lat):
    """What the ratio columns against the drivers vs are."""
    r = ['%s/sroce' % d if lat else 'sroce/%s' % d for d in vs]
    return ('ratio ' if len(r) == 1 else 'ratios ') + ', '.join(r)


def table(res, keys, title, out):
    drv = res.drivers
    vs = drv[1:]
    fmt = ('%-15s %7s %-5s' + ' %26s' * len(drv) + ' %22s' * len(vs) +
           '  %s')
    out.append(title)
    out.append(fmt % (('test', 'size', 'setup') + tuple(drv) +
                      tuple('ratio' if d == 'rxe' else 'vs ' + d
                            for d in vs) + ('',)))
    for key in keys:
        test, size, setup = key
        lat = is_lat(test)
        metric = 'lat_typ' if lat else 'bw_avg'
        if test in BASELINES:
            unit, ratios = ('usec' if lat else 'MiB/s') + \
                '; in the guest booted with each driver', ('-',) * len(vs)
        else:
            unit = ('usec t_typical; ' if lat else 'MB/s average; ') + \
                ratio_names(vs, lat)
            ratios = tuple(res.ratio(key, metric, lat, d) for d in vs)
        out.append(fmt % ((test, size, setup) +
                          tuple(res.cell(key, d, metric) for d in drv) +
                          ratios + (unit,)))
        if not lat and test not in BASELINES and int(size) <= 8192:
            # perftest's Mpps, in thousands of messages a second
            out.append(fmt % (('', '', '') +
                              tuple(res.cell(key, d, 'msg_rate', 1000)
                                    for d in drv) +
                              tuple(res.ratio(key, 'msg_rate', False, d)
                                    for d in vs) +
                              ('1000 messages/s (message rate)',)))
    out.append('')


def scale_table(res, keys, out):
    """tools/sroce-cmscale's runs: a row per metric of each."""
    drv = res.drivers
    vs = drv[1:]
    fmt = ('%-15s %7s %-5s' + ' %22s' * len(drv) + ' %20s' * len(vs) +
           '  %s')
    out.append('rdma_cm connections (tools/sroce-cmscale, VM0 to VM1; '
               'memory: VM0 with all of them connected)')
    out.append(fmt % (('test', 'qps', 'setup') + tuple(drv) +
                      tuple('ratio' if d == 'rxe' else 'vs ' + d
                            for d in vs) + ('',)))
    for key in keys:
        for metric, what, less in CMSCALE_METRICS:
            # (memcg_kib_qp: only where the guest has memory cgroups)
            if not any(m and metric in m
                       for c in res.runs[key].values()
                       for m in c.values()):
                continue
            out.append(fmt % (key + tuple(res.cell(key, d, metric)
                                          for d in drv) +
                              tuple(res.ratio(key, metric, less, d)
                                    for d in vs) +
                              (what + '; ' + ratio_names(vs, less),)))
    out.append('')


def label(d):
    """A column's name from bench.sh's OUT/conf.txt (else the directory)."""
    conf = {}
    try:
        with open(os.path.join(d, 'conf.txt'), encoding='utf-8') as f:
            for line in f:
                k, _, v = line.strip().partition('=')
                conf[k] = v
    except OSError:
        return os.path.basename(os.path.normpath(d)), conf
    name = '%s, MTU %s' % (conf.get('kernel', '?'), conf.get('mtu') or '1500')
    # bench.sh --load: idle unless it says otherwise (older runs do not).
    if conf.get('load', 'idle') != 'idle':
        name += ', ' + conf['load']
    return name, conf


def column(arg):
    """A column: DIR, or DIR+DIR... (bench.sh runs of one kernel and MTU,
    e.g. one per setup) joined."""
    dirs = arg.split('+')
    labels = {label(d)[0] for d in dirs}
    if len(labels) > 1:
        sys.exit('bench-table: %s: one column, several kernels, MTUs or '
                 'loads: %s'
                 % (arg, ', '.join(sorted(labels))))
    return (label(dirs[0]), Results(*[os.path.join(d, 'results.txt')
                                      for d in dirs]))


def times(r):
    """A ratio's spread as the matrix shows it: 5.5x (5..6)."""
    if r in ('-', 'fail'):
        return r
    return r.replace(' ', 'x ', 1) if ' ' in r else r + 'x'


def matrix_cell(res, key, metric, less, no_ratio):
    """A matrix cell: the ratio against rxe (rxe/sroce if less is
    better; "-" for no_ratio), the medians of sroce and rxe, then each
    other driver's ratio and median."""
    drv = res.drivers
    med = [res.median(key, d, metric) for d in drv]
    bad = [res.values(key, d, metric) is None for d in drv]
    if all(m is None for m in med) and not any(bad):
        return '-'
    shown = ['fail' if f else '-' if m is None else num(m, 3)
             for m, f in zip(med, bad)]
    r = ['-' if no_ratio else times(res.ratio(key, metric, less, d))
         for d in drv[1:]]
    c = '%s, %s / %s' % (r[0], shown[0], shown[1])
    for d, ri, v in zip(drv[2:], r[1:], shown[2:]):
        c += '; %s -' % d if v == '-' else '; %s %s, %s' % (d, ri, v)
    return c


def matrix(args):
    """Markdown: ratio (range) then sroce / rxe medians, and with siw
    "; siw" its ratio (range) and median, a column per argument (a
    directory, or several joined with +)."""
    cols = [column(a) for a in args]
    keys = []
    for _, res in cols:
        keys += [k for k in res.runs if k not in keys and
                 (k[0] not in BASELINES or k[:2] in MATRIX_BASE)]
    # By setup; in each the perftest runs, then -q N, then baselines.
    keys.sort(key=lambda k: (k[2], k[0] in BASELINES, '-q' in k[0]))
    cms = sorted((k for k in keys if k[0] == CMSCALE),
                 key=lambda k: int(k[1]))
    keys = [k for k in keys if k[0] != CMSCALE]
    out = ['| test | size | setup | ' +
           ' | '.join(lb for (lb, _), _ in cols) + ' |',
           '|---|---|---|' + '---|' * len(cols)]
    for key in keys:
        lat = is_lat(key[0])
        metric = 'lat_typ' if lat else 'bw_avg'
        cells = [matrix_cell(res, key, metric, lat, key[0] in BASELINES)
                 for _, res in cols]
        out.append('| %s | %s | %s | %s |' % (key + (' | '.join(cells),)))
    out.append('')
    if cms:
        out.append('| connections | qps | metric | ' +
                   ' | '.join(lb for (lb, _), _ in cols) + ' |')
        out.append('|---|---|---|' + '---|' * len(cols))
    for key in cms:
        for metric, what, less in CMSCALE_METRICS:
            cells = [matrix_cell(res, key, metric, less, False)
                     for _, res in cols]
            out.append('| %s | %s | %s | %s |' % (
                'rdma_cm (sroce-cmscale)', key[1], what, ' | '.join(cells)))
    if cms:
        out.append('')
    # The targets, one row each, a column per directory.
    goals = OrderedDict()
    for i, (_, res) in enumerate(cols):
        for what, shown, verdict in targets(res):
            goals.setdefault(what, [''] * len(cols))[i] = (
                'fail' if verdict == 'fail' else
                '%s: %s' % (verdict, shown.split(', goal')[0]))
    if goals:
        out.append('| target | ' + ' | '.join(lb for (lb, _), _ in cols) +
                   ' |')
        out.append('|---|' + '---|' * len(cols))
        for what, cells in goals.items():
            out.append('| %s | %s |' % (what, ' | '.join(c or '-'
                                                        for c in cells)))
        out.append('')
    for (lb, _), res in cols:
        for run in sorted(res.causes):
            out.append('Failed: %s, %s: %s.' % (lb, ' '.join(run),
                                               res.failed(run[:3], run[3])))
    if any(res.causes for _, res in cols):
        out.append('')
    rounds = sorted({len(res.rounds) for _, res in cols})
    out.append('Rounds per column: %s. Cells: median of the per-round '
               'ratios (sroce/rxe for bandwidth, rxe/sroce for latency: '
               'above 1 sroce is better) with its range, then the medians '
               'of sroce and rdma_rxe (MB/s, or usec typical); for qperf\'s '
               'tcp_bw and udp_lat the medians in the guests booted with '
               'each driver.' %
               '/'.join(str(r) for r in rounds) +
               (' With siw (the kernel\'s soft-iWARP), "; siw" then the '
                'median of the per-round sroce/siw (bandwidth) or siw/sroce '
                '(latency) ratios with its range, and the median of siw '
                '("siw -": no siw run).'
                if any('siw' in res.drivers for _, res in cols) else ''))
    print('\n'.join(out))


# Two rounds with known answers: each target's median sits on a side of
# its goal (5.5x met, 58.3% missed, exactly 2x met, 3x met).
SELFTEST = """\
1 ib_write_bw 65536 one sroce bw_avg 500
1 ib_write_bw 65536 one rxe bw_avg 100
2 ib_write_bw 65536 one sroce bw_avg 600
2 ib_write_bw 65536 one rxe bw_avg 100
1 ib_send_lat 2 one sroce lat_typ 10
1 ib_send_lat 2 one rxe lat_typ 25
2 ib_send_lat 2 one sroce lat_typ 10
2 ib_send_lat 2 one rxe lat_typ 15
1 ib_write_bw-q1 65536 one sroce bw_avg 100
1 ib_write_bw-q4 65536 one sroce bw_avg 300
2 ib_write_bw-q1 65536 one sroce bw_avg 100
2 ib_write_bw-q4 65536 one sroce bw_avg 300
1 ib_write_bw 65536 two sroce bw_avg 30
1 tcp_bw 65536 two sroce bw_avg 60
2 ib_write_bw 65536 two sroce bw_avg 40
2 tcp_bw 65536 two sroce bw_avg 60
2 ib_read_bw 65536 two sroce fail -
1 udp_lat 2 two sroce lat_typ 200
2 udp_lat 2 two rxe lat_typ 100
1 ib_read_bw 65536 one sroce bw_avg 500
1 ib_read_bw 65536 one rxe bw_avg 100
2 ib_read_bw 65536 one sroce bw_avg 0
2 ib_read_bw 65536 one rxe bw_avg 100
3 ib_read_bw 65536 one sroce bw_avg 0.00
3 ib_read_bw 65536 one rxe bw_avg 100
1 ib_send_lat 2 two sroce lat_typ 10
1 ib_send_lat 2 two rxe fail vm-timeout
1 cmscale 4096 two sroce conn_per_s 90
1 cmscale 4096 two sroce memfree_kib_qp 180
1 cmscale 4096 two rxe conn_per_s 100
1 cmscale 4096 two rxe memfree_kib_qp 90
"""
SELFTEST_WANT = (
    'ib_write_bw 64 KiB, one guest, sroce/rxe       '
    '5.5x (5x..6x), goal 5x                 met',
    'ib_send_lat 2 B, one guest, rxe/sroce          '
    '2x (1.5x..2.5x), goal 2x               met',
    'sroce ib_write_bw 64 KiB -q 4 / -q 1, one guest '
    '3x (3x..3x), goal 1.6x                 met',
    'ib_write_bw 64 KiB, two guests, % of TCP       '
    '58.3% (50%..66.7%), goal 60%           MISSED',
    '| ib_write_bw | 65536 | one | 5.5x (5..6), 550 / 100 |',
    '| ib_write_bw-q4 | 65536 | one | -, 300 / - |',
    '| ib_write_bw 64 KiB, two guests, % of TCP | MISSED: 58.3% '
    '(50%..66.7%) |',
    '| ib_read_bw | 65536 | two | fail, fail / - |',
    '| udp_lat | 2 | two | -, 200 / 100 |',
    # A round of 0 is a failure, not a round left out: never "met: 5x".
    '| ib_read_bw | 65536 | one | fail, fail / 100 |',
    '| ib_send_lat | 2 | two | fail, 10 / fail |',
    'ib_send_lat 2 B, two guests, rxe/sroce         '
    'a run failed, goal 2x                  fail',
    '| ib_send_lat 2 B, two guests, rxe/sroce | fail |',
    'Failed: 6.1, MTU 9000, ib_read_bw 65536 one sroce: round 2: bw_avg 0; '
    'round 3: bw_avg 0.00.',
    'Failed: 6.1, MTU 9000, ib_send_lat 2 two rxe: round 1: vm-timeout.',
    'Failed: 6.1, MTU 9000, ib_read_bw 65536 two sroce: round 2: failed.',
    # The scale set's connections: less memory is better.
    'memory a QP, 4096 connected, rxe/sroce         '
    '0.5x, goal 1x                          MISSED',
    '| rdma_cm (sroce-cmscale) | 4096 | connections set up a second | '
    '0.9x, 90 / 100 |',
    '| rdma_cm (sroce-cmscale) | 4096 | KiB of memory a QP (MemFree) | '
    '0.5x, 180 / 90 |',
)
# SELFTEST with siw's rounds added: its column, the ratios against it
# (2x bandwidth, 0.85x latency), a target met, one missed, one failed.
SELFTEST_SIW = """\
1 ib_write_bw 65536 one siw bw_avg 200
2 ib_write_bw 65536 one siw bw_avg 400
1 ib_write_bw 65536 one siw nic_drops 4
1 ib_send_lat 2 one siw lat_typ 8
2 ib_send_lat 2 one siw lat_typ 9
1 ib_send_lat 2 two siw fail vm-timeout
1 tcp_bw 65536 one sroce bw_avg 1000
1 tcp_bw 65536 one rxe bw_avg 1000
1 tcp_bw 65536 one siw bw_avg 1000
"""
SELFTEST_SIW_WANT = (
    'ib_write_bw 64 KiB, one guest, sroce/siw       '
    '2x (1.5x..2.5x), goal 1x               met',
    'ib_send_lat 2 B, one guest, siw/sroce          '
    '0.85x (0.8x..0.9x), goal 1x            MISSED',
    'ib_send_lat 2 B, two guests, siw/sroce         '
    'a run failed, goal 1x                  fail',
    'test size setup sroce rxe siw ratio vs siw',
    'ib_write_bw 65536 one 550 (500..600) 100 (100..100) 300 (200..400) '
    '5.5 (5..6) 2 (1.5..2.5) MB/s average; ratios sroce/rxe, sroce/siw',
    'ib_send_lat 2 one 10 (10..10) 20 (15..25) 8.5 (8..9) '
    '2 (1.5..2.5) 0.85 (0.8..0.9) usec t_typical; ratios rxe/sroce, '
    'siw/sroce',
    'ib_write_bw 64 KiB as % of TCP (one guest, TCP over its loopback, '
    '1000 MiB/s): sroce 55%, rxe 10%, siw 30%',
    'ib_write_bw 65536 one sroce: - | rxe: - | siw: nic 4',
    'totals: sroce: - | rxe: - | siw: nic 4',
    '| ib_write_bw | 65536 | one | 5.5x (5..6), 550 / 100; '
    'siw 2x (1.5..2.5), 300 |',
    '| ib_send_lat | 2 | one | 2x (1.5..2.5), 10 / 20; '
    'siw 0.85x (0.8..0.9), 8.5 |',
    '| ib_write_bw-q4 | 65536 | one | -, 300 / -; siw - |',
    '| ib_send_lat | 2 | two | fail, 10 / fail; siw fail, fail |',
    '| tcp_bw | 65536 | one | -, 1000 / 1000; siw -, 1000 |',
    '| ib_write_bw 64 KiB, one guest, sroce/siw | met: 2x (1.5x..2.5x) |',
    '| ib_send_lat 2 B, one guest, siw/sroce | MISSED: 0.85x '
    '(0.8x..0.9x) |',
    'Failed: 6.1, MTU 9000, ib_send_lat 2 two siw: round 1: vm-timeout.',
    'With siw (the kernel\'s soft-iWARP), "; siw" then the median',
)


def selftest():
    """Exit 0 when the tables of SELFTEST say what SELFTEST_WANT says,
    and those of SELFTEST and SELFTEST_SIW what SELFTEST_SIW_WANT says."""
    import contextlib
    import io
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'results.txt'), 'w',
                  encoding='utf-8') as f:
            f.write(SELFTEST)
        with open(os.path.join(d, 'conf.txt'), 'w', encoding='utf-8') as f:
            f.write('kernel=6.1\nmtu=9000\n')
        got = io.StringIO()
        with contextlib.redirect_stdout(got):
            for line in target_lines(Results(os.path.join(d,
                                                          'results.txt'))):
                print(line)
            matrix([d])
        plain = '\n'.join(tables(Results(os.path.join(d, 'results.txt')),
                                 set()))
        core = '\n'.join(tables(Results(os.path.join(d, 'results.txt')),
                                {('cmscale', '4096'), ('ib_send_lat', '2')}))
        # With siw's rounds too.
        sd = os.path.join(d, 'siw')
        os.mkdir(sd)
        with open(os.path.join(sd, 'results.txt'), 'w',
                  encoding='utf-8') as f:
            f.write(SELFTEST + SELFTEST_SIW)
        with open(os.path.join(sd, 'conf.txt'), 'w', encoding='utf-8') as f:
            f.write('kernel=6.1\nmtu=9000\n')
        sres = Results(os.path.join(sd, 'results.txt'))
        siw = io.StringIO()
        with contextlib.redirect_stdout(siw):
            print('\n'.join(target_lines(sres) + tables(sres, set())))
            matrix([sd])
        # The same results as two runs, one per setup, joined into one
        # column: the same table. A run in both files, or two kernels
        # in one column, is refused.
        parts = []
        for setup in ('one', 'two'):
            pd = os.path.join(d, setup)
            os.mkdir(pd)
            parts.append(pd)
            with open(os.path.join(pd, 'results.txt'), 'w',
                      encoding='utf-8') as f:
                f.write(''.join(ln + '\n' for ln in SELFTEST.splitlines()
                                if ln.split()[3] == setup))
            with open(os.path.join(pd, 'conf.txt'), 'w',
                      encoding='utf-8') as f:
                f.write('kernel=6.1\nmtu=9000\n')
        joined = io.StringIO()
        with contextlib.redirect_stdout(joined):
            matrix(['+'.join(parts)])
        refused = []
        for arg, conf in (('+'.join([d] + parts[:1]), None),
                          ('+'.join(parts), 'kernel=7.2\nmtu=9000\n'),
                          ('+'.join(parts),
                           'kernel=6.1\nmtu=9000\nload=host:2\n')):
            if conf:
                with open(os.path.join(parts[1], 'conf.txt'), 'w',
                          encoding='utf-8') as f:
                    f.write(conf)
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    matrix([arg])
            except SystemExit as e:
                refused.append(str(e))
    got = got.getvalue()
    flat = ' '.join(got.split())
    table = got[got.index('| test |'):]
    if joined.getvalue() != table:
        print('bench-table selftest: the joined column differs:\n%s'
              % joined.getvalue())
        flat += ' (join differs)'
    want_refused = ('is in both', '6.1, MTU 9000, 7.2, MTU 9000',
                    '6.1, MTU 9000, 6.1, MTU 9000, host:2')
    for w, r in zip(want_refused, refused + [''] * 3):
        if w not in r:
            print('bench-table selftest: not refused (%s): %r' % (w, r))
            flat += ' (not refused)'
    bad = [w for w in SELFTEST_WANT if ' '.join(w.split()) not in flat]
    for w in bad:
        print('bench-table selftest: missing: %r' % w)
    if '| 6.1, MTU 9000 |' not in flat:
        bad.append('label')
        print('bench-table selftest: no column "6.1, MTU 9000"')
    for what in ('(join differs)', '(not refused)'):
        if what in flat:
            bad.append(what)
    # Results without siw show no siw at all.
    if 'siw' in got + plain:
        bad.append('siw')
        print('bench-table selftest: siw shown without siw results')
    siw = siw.getvalue()
    flat = ' '.join(siw.split())
    bad_siw = [w for w in SELFTEST_SIW_WANT
               if ' '.join(w.split()) not in flat]
    for w in bad_siw:
        print('bench-table selftest: missing (siw): %r' % w)
    # cmscale among the core runs (BENCH_RUNS) is in its own table only,
    # not in perftest's as a run without bandwidth (all "fail").
    if any(ln.startswith('cmscale') and 'MB/s' in ln
           for ln in core.splitlines()):
        bad.append('cmscale')
        print('bench-table selftest: cmscale in the perftest table')
    # A run's kind survives its -qN and -gid suffixes.
    kinds = (('ib_send_lat', True), ('ib_write_lat-gid', True),
             ('ib_read_bw-gid', False), ('ib_write_bw-q4', False))
    for name, lat in kinds:
        if is_lat(name) != lat:
            bad.append(name)
            print('bench-table selftest: %s taken for a %s run'
                  % (name, 'bandwidth' if lat else 'latency'))
    print(got + (siw if bad_siw else '') if bad or bad_siw else
          'bench-table selftest: %d checks passed'
          % (len(SELFTEST_WANT) + len(SELFTEST_SIW_WANT) + 7 + len(kinds)))
    bad += bad_siw
    sys.exit(1 if bad else 0)


def tables(res, core):
    """The lines of the tables of res; core: the (test, size) of the
    first table (empty: every perftest run)."""
    drv = res.drivers
    keys = list(res.runs)
    sizes = {}
    for test, size, setup in keys:
        sizes.setdefault((test, setup), set()).add(size)
    out = []

    def is_core(k):
        # (cmscale has its own table, even when a core run)
        return k[0] != CMSCALE and ((k[0], k[1]) in core or not core and
                                    k[0] not in BASELINES)

    def is_sweep(k):
        return len(sizes[(k[0], k[2])]) >= 3

    first = [k for k in keys if is_core(k)]
    qps = [k for k in keys if '-q' in k[0] and k not in first]
    base = [k for k in keys if k[0] in BASELINES and
            ((k[0], k[1]) in BASE_RUNS or not is_sweep(k))]
    sweep = sorted((k for k in keys if is_sweep(k)),
                   key=lambda k: (k[2], k[0], int(k[1])))
    cms = sorted((k for k in keys if k[0] == CMSCALE),
                 key=lambda k: int(k[1]))
    rest = [k for k in keys if k not in first + qps + base + sweep + cms]
    # (the core's runs are in the sweep's table too, if it has their size)
    nr = len(res.rounds)
    if first or rest:
        table(res, first + rest, 'perftest: median (min..max) of %d round(s)'
              % nr, out)

    lat = [k for k in first + rest if is_lat(k[0])]
    if lat:
        fmt = '%-15s %7s %-5s' + ' %12s' * (2 * len(drv))
        out.append('latency tail (usec; median of the rounds)')
        out.append(fmt % (('test', 'size', 'setup') +
                          tuple(d + ' p99' for d in drv) +
                          tuple(d + ' p99.9' for d in drv)))
        for k in lat:
            c = []
            for m in ('lat_p99', 'lat_p999'):
                for d in drv:
                    v = res.median(k, d, m)
                    c.append('-' if v is None else num(v))
            out.append(fmt % (k + tuple(c)))
        out.append('')

    if qps:
        table(res, qps, 'ib_write_bw with -q N (N QPs)', out)

    if cms:
        scale_table(res, cms, out)

    if base:
        table(res, base, 'baselines (qperf: TCP, UDP; tools/sroce-memcpy)',
              out)
        for setup in sorted({k[2] for k in base}):
            tcp = [res.median(('tcp_bw', '65536', setup), d, 'bw_avg')
                   for d in drv]
            if None in tcp:
                continue
            tcp = median(tcp)
            line = []
            for d in drv:
                v = res.median(('ib_write_bw', '65536', setup), d, 'bw_avg')
                if v is not None and tcp > 0:
                    line.append('%s %.0f%%' % (d, 100 * v / tcp))
            if line:
                where = ('between the guests' if setup == 'two'
                         else 'one guest, TCP over its loopback')
                out.append('ib_write_bw 64 KiB as %% of TCP (%s, %.4g '
                           'MiB/s): %s' % (where, tcp, ', '.join(line)))
            udp = [res.median(('udp_lat', '2', setup), d, 'lat_typ')
                   for d in drv]
            lat = [res.median(('ib_send_lat', '2', setup), d, 'lat_typ')
                   for d in drv]
            if None not in udp and None not in lat:
                out.append('ib_send_lat 2 B against qperf udp_lat 2 B (%s, '
                           'usec): %s, UDP %.4g' % (
                               setup, ', '.join('%s %.4g' % dv for dv in
                                                zip(drv, lat)),
                               median(udp)))
        out.append('')

    goals = target_lines(res)
    if goals:
        out.append('speed targets (median (min..max) of per-round values)')
        out.extend(goals)
        out.append('')

    if sweep:
        table(res, sweep, 'size sweep (bandwidth by message size)', out)

    if res.causes:
        out.append('failed runs (a "fail" above; its cause, by round)')
        for run in sorted(res.causes):
            out.append('  %-40s %s' % (' '.join(run),
                                       res.failed(run[:3], run[3])))
        out.append('')

    # Counters: totals over the rounds; only runs where one moved, and in
    # a run only the counters that moved.
    ctr = []
    tot = {d: [0] * len(COUNTERS) for d in drv}
    has = {d: [False] * len(COUNTERS) for d in drv}
    for k in keys:
        row, moved = [], False
        for d in drv:
            c = []
            for i, (m, short) in enumerate(COUNTERS):
                v = [c[m] for c in res.runs[k].get(d, {}).values()
                     if c is not None and m in c]
                s = sum(v)
                tot[d][i] += s
                has[d][i] = has[d][i] or bool(v)
                moved = moved or s != 0
                if s:
                    c.append('%s %d' % (short, s))
            row.append(' '.join(c) or '-')
        if moved:
            ctr.append('%-15s %7s %-5s  ' % k + ' | '.join(
                '%s: %s' % dr for dr in zip(drv, row)))
    out.append('counters over the runs (sum of the rounds; retrans: sroce '
               'packets sent again (retransmits),')
    out.append('  rxe retries, each resending from the first unacked PSN '
               '(completer_retry_err); oos: out-of-sequence')
    out.append('  packets received; rnr: RNR NAKs sent and received; nic: '
               'eth0 drops; sroce only: drops:')
    out.append('  tx_drops + rx_drop_*; txdrop: tx_drops; tmo: '
               'ack_timeouts; cut: window_cuts; rew: rewinds;')
    out.append('  work: tx_work_runs' + ('; siw has no counters but nic)'
                                          if 'siw' in drv else ')'))
    out.extend(ctr or ['  none moved in any run'])
    out.append('  totals: ' + ' | '.join(
        '%s: %s' % (d, ' '.join('%s %d' % (COUNTERS[i][1], tot[d][i])
                                for i in range(len(COUNTERS))
                                if has[d][i]) or '-')
        for d in drv))
    out.append('')
    out.append('ratio%s > 1: sroce is better (more bandwidth, less '
               'latency); every number in results.txt'
               % ''.join(' and vs ' + d for d in drv[2:]))
    return out


def main():
    if sys.argv[1:] == ['--selftest']:
        selftest()
    if len(sys.argv) >= 3 and sys.argv[1] == '--matrix':
        matrix(sys.argv[2:])
        return
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    core = set()
    if len(sys.argv) == 3:
        core = {tuple(r.split()) for r in sys.argv[2].split(',') if r}
    print('\n'.join(tables(Results(sys.argv[1]), core)))


if __name__ == '__main__':
    main()
