#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-plot.py RESULTS OUT.svg [TITLE]: scripts/bench.sh's results as an
SVG chart, no plotting library needed.

RESULTS holds lines "ROUND TEST SIZE SETUP DRIVER METRIC VALUE" (METRIC
bw_avg in MB/s, lat_typ in usec; "fail -" for a run without a number).
When the results hold a size sweep (a bandwidth test at 3 sizes or more in
one setup), the chart is bandwidth by message size, both axes log: a line
for each such test and driver (sroce, rdma_rxe, siw; qperf's tcp_bw as
TCP, the median of the guests booted with any driver), a point per size at
the median over rounds (a size where a round failed left out).
Else one row per test, size and setup: a bar for each driver that ran,
scaled to the largest (bandwidth and latency share one chart), the mean
over rounds written on it, and the ratio to rdma_rxe (above 1: sroce
better) at the end.
"""
import math
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

METRICS = {'bw_avg': 'MB/s', 'lat_typ': 'us'}
DRIVERS = ('sroce', 'rxe', 'siw')
NAMES = {'sroce': 'sroce', 'rxe': 'rdma_rxe', 'siw': 'siw'}
COLORS = {'sroce': '#1f77b4', 'rxe': '#ff7f0e', 'siw': '#d62728',
          'tcp': '#2ca02c'}


def is_lat(test):
    """A latency run: the perftest tool's name, less its -qN and -gid
    suffixes, ends in _lat."""
    return test.split('-')[0].endswith('_lat')


def read(path, metrics=METRICS):
    rows = OrderedDict()
    with open(path, encoding='utf-8') as f:
        for line in f:
            w = line.split()
            if len(w) != 7:
                continue
            _, test, size, setup, drv, metric, value = w
            key = (test, size, setup)
            cell = rows.setdefault(key, {}).setdefault(drv, [])
            if metric == 'fail':
                cell.append(None)
            elif metric in metrics:
                cell.append(float(value))
    return rows


def mean(vals):
    if not vals or any(v is None for v in vals):
        return None
    return sum(vals) / len(vals)


def median(vals):
    if not vals or any(v is None for v in vals):
        return None
    v = sorted(vals)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def sweep_chart(rows, rates, title):
    """The lines of bandwidth by size, or None without a sweep. Below 1 KiB
    the bandwidth is perftest's message rate times the size: perftest
    prints MB/s with two decimals only (0.01 at 2 bytes)."""
    sizes = {}
    for (test, size, setup) in rows:
        if not is_lat(test):
            sizes.setdefault((test, setup), set()).add(int(size))
    swept = [k for k, v in sizes.items() if len(v) >= 3]
    if not swept:
        return None
    setup = 'two' if any(k[1] == 'two' for k in swept) else swept[0][1]
    lines = []     # (label, color, dashed, [(size, MB/s)])
    for test, st in sorted(swept):
        if st != setup:
            continue
        drivers = ['tcp'] if test == 'tcp_bw' else list(DRIVERS)
        for drv in drivers:
            pts = []
            for size in sorted(sizes[(test, st)]):
                cells = rows.get((test, str(size), st), {})
                if drv == 'tcp':
                    v = median([x for d in DRIVERS for x in cells.get(d, [])])
                else:
                    v = median(cells.get(drv))
                    r = median(rates.get((test, str(size), st), {}).get(drv))
                    if size < 1024 and r:
                        v = r * 1e6 * size / 1048576
                if v and v > 0:
                    pts.append((size, v))
            if pts:
                label = ('TCP (qperf tcp_bw)' if drv == 'tcp' else
                         '%s %s' % (NAMES[drv], test))
                lines.append((label, COLORS[drv], test == 'ib_send_bw', pts))
    if not lines:
        return None
    allx = [x for *_, p in lines for x, _ in p]
    ally = [y for *_, p in lines for _, y in p]
    x0, x1 = math.log2(min(allx)), math.log2(max(allx))
    y0 = math.floor(math.log10(min(ally)))
    y1 = math.ceil(math.log10(max(ally)))
    if y1 == y0:
        y1 += 1
    left, top, w, h = 70, 50, 560, 340

    def px(x):
        return left + w * (math.log2(x) - x0) / max(x1 - x0, 1)

    def py(y):
        return top + h - h * (math.log10(y) - y0) / (y1 - y0)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + w + 230,
                                                          top + h + 70),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>'
           % escape('%s: bandwidth by message size (%s guest%s)' % (
               title, setup, 's' if setup == 'two' else '')),
           '<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
           'stroke="#888"/>' % (left, top, w, h)]
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" '
                   'stroke="#ddd"/>' % (left, y, left + w, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                   % (left - 4, y + 4, 10 ** e))
    for size in sorted(set(allx)):
        x = px(size)
        lab = ('%d M' % (size >> 20) if size >= 1 << 20 else
               '%d K' % (size >> 10) if size >= 1 << 10 else '%d' % size)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" '
                   'stroke="#eee"/>' % (x, top, x, top + h))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x, top + h + 16, lab))
    out.append('<text x="%d" y="%d" text-anchor="middle">message size '
               '(bytes, log)</text>' % (left + w / 2, top + h + 36))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" '
               'text-anchor="middle">MB/s (log)</text>'
               % (top + h / 2, top + h / 2))
    for i, (label, color, dashed, pts) in enumerate(lines):
        d = ' '.join('%.1f,%.1f' % (px(x), py(y)) for x, y in pts)
        dash = ' stroke-dasharray="6,4"' if dashed else ''
        out.append('<polyline points="%s" fill="none" stroke="%s" '
                   'stroke-width="2"%s/>' % (d, color, dash))
        for x, y in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>'
                       % (px(x), py(y), color))
        ly = top + 10 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                   'stroke-width="2"%s/>' % (left + w + 12, ly, left + w + 40,
                                             ly, color, dash))
        out.append('<text x="%d" y="%d">%s</text>'
                   % (left + w + 46, ly + 4, escape(label)))
    out.append('<text x="10" y="%d" fill="#555">median over rounds; '
               'perftest MB/s (MiB/s), qperf converted to MiB/s; under QEMU '
               'TCG, one host</text>' % (top + h + 60))
    out.append('</svg>')
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    rows = read(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) == 4 else 'sroce / rdma_rxe'
    out = sweep_chart(rows, read(sys.argv[1], ('msg_rate',)), title)
    if out:
        with open(sys.argv[2], 'w', encoding='utf-8') as f:
            f.write('\n'.join(out) + '\n')
        return
    drivers = [d for d in DRIVERS if any(d in c for c in rows.values())]
    bar_h, gap, left, width = 14, 12, 230, 420
    height = 60 + len(rows) * (len(drivers) * bar_h + gap) + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + width + 130,
                                                          height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>'
           % escape(title)]
    for i, d in enumerate(drivers):
        out.append('<rect x="%d" y="34" width="12" height="10" fill="%s"/>'
                   '<text x="%d" y="43">%s</text>'
                   % (left + 80 * i, COLORS[d], left + 80 * i + 16, NAMES[d]))
    out.append('<text x="%d" y="43">sroce / rdma_rxe (&gt;1: sroce '
               'better)</text>' % (left + width + 10 - 60))
    y = 60
    for (test, size, setup), cells in rows.items():
        lat = is_lat(test)
        unit = 'us' if lat else 'MB/s'
        v = {d: mean(cells.get(d)) for d in drivers}
        top = max(x for x in list(v.values()) + [1e-9] if x is not None)
        out.append('<text x="10" y="%d">%s %s B, %s guest%s</text>'
                   % (y + bar_h + 4, escape(test), size,
                      'one' if setup == 'one' else 'two',
                      '' if setup == 'one' else 's'))
        for i, d in enumerate(drivers):
            yy = y + i * bar_h
            if v[d] is None:
                out.append('<text x="%d" y="%d" fill="#b00">%s</text>'
                           % (left + 4, yy + 11,
                              'fail' if d in cells else '-'))
                continue
            w = max(1, int(width * v[d] / top))
            out.append('<rect x="%d" y="%d" width="%d" height="%d" '
                       'fill="%s"/>' % (left, yy, w, bar_h - 2, COLORS[d]))
            out.append('<text x="%d" y="%d">%.2f %s</text>'
                       % (left + w + 4, yy + 11, v[d], unit))
        a, b = v.get('sroce'), v.get('rxe')
        ratio = '-'
        if a and b:
            ratio = '%.2fx' % (b / a if lat else a / b)
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>'
                   % (left + width + 60, y + bar_h + 4, ratio))
        y += len(drivers) * bar_h + gap
    out.append('<text x="10" y="%d" fill="#555">bandwidth: MB/s average; '
               'latency: typical usec; under QEMU TCG, one host</text>'
               % (y + 10))
    out.append('</svg>')
    with open(sys.argv[2], 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
