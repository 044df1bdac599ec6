#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-plot.py RESULTS OUT.svg [TITLE]: the sroce/rdma_rxe table of
scripts/bench.sh as an SVG chart, no plotting library needed.

RESULTS holds lines "ROUND TEST SIZE SETUP DRIVER METRIC VALUE" (METRIC
bw_avg in MB/s, lat_typ in usec; "fail -" for a run without a number).
One row per test, size and setup: a bar for each driver, scaled to the
larger of the two (bandwidth and latency share one chart), the mean over
rounds written on it, and the ratio (above 1: sroce better) at the end.
"""
import sys
from collections import OrderedDict
from xml.sax.saxutils import escape

METRICS = {'bw_avg': 'MB/s', 'lat_typ': 'us'}


def read(path):
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
            elif metric in METRICS:
                cell.append(float(value))
    return rows


def mean(vals):
    if not vals or any(v is None for v in vals):
        return None
    return sum(vals) / len(vals)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    rows = read(sys.argv[1])
    title = sys.argv[3] if len(sys.argv) == 4 else 'sroce / rdma_rxe'
    bar_h, gap, left, width = 14, 12, 230, 420
    height = 60 + len(rows) * (2 * bar_h + gap) + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (left + width + 130,
                                                          height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>'
           % escape(title),
           '<rect x="%d" y="34" width="12" height="10" fill="#1f77b4"/>'
           '<text x="%d" y="43">sroce</text>' % (left, left + 16),
           '<rect x="%d" y="34" width="12" height="10" fill="#ff7f0e"/>'
           '<text x="%d" y="43">rdma_rxe</text>' % (left + 70, left + 86),
           '<text x="%d" y="43">ratio (&gt;1: sroce better)</text>'
           % (left + width + 10)]
    y = 60
    for (test, size, setup), cells in rows.items():
        lat = test.endswith('_lat')
        unit = 'us' if lat else 'MB/s'
        a, b = mean(cells.get('sroce')), mean(cells.get('rxe'))
        top = max(v for v in (a, b, 1e-9) if v is not None)
        out.append('<text x="10" y="%d">%s %s B, %s guest%s</text>'
                   % (y + bar_h + 4, escape(test), size,
                      'one' if setup == 'one' else 'two',
                      '' if setup == 'one' else 's'))
        for i, (v, color) in enumerate(((a, '#1f77b4'), (b, '#ff7f0e'))):
            yy = y + i * bar_h
            if v is None:
                out.append('<text x="%d" y="%d" fill="#b00">fail</text>'
                           % (left + 4, yy + 11))
                continue
            w = max(1, int(width * v / top))
            out.append('<rect x="%d" y="%d" width="%d" height="%d" '
                       'fill="%s"/>' % (left, yy, w, bar_h - 2, color))
            out.append('<text x="%d" y="%d">%.2f %s</text>'
                       % (left + w + 4, yy + 11, v, unit))
        ratio = '-'
        if a and b:
            ratio = '%.2fx' % (b / a if lat else a / b)
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>'
                   % (left + width + 60, y + bar_h + 4, ratio))
        y += 2 * bar_h + gap
    out.append('<text x="10" y="%d" fill="#555">bandwidth: MB/s average; '
               'latency: typical usec; under QEMU TCG, one host</text>'
               % (y + 10))
    out.append('</svg>')
    with open(sys.argv[2], 'w', encoding='utf-8') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
