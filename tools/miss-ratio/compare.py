# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Reads segcached's points against memcached's curve: the RSS memcached
needs to reach each segcached point's miss ratio, and memcached's miss
ratio (and avoidable misses) at each segcached point's RSS.

memcached's curve is its measured points joined log-linearly in RSS
(miss ratio linear in log RSS between neighbouring points); nothing is
extrapolated beyond its smallest and largest RSS: such a cell says which
side it lies on instead of a number.
"""
import math

MIB = 1 << 20


def curve(rows, key='miss_ratio'):
    """[(rss, value)] of rows, by RSS."""
    return sorted((r['rss'], r[key]) for r in rows if r.get(key) is not None and r['rss'])


def rss_for_ratio(pts, ratio):
    """The smallest RSS at which the curve pts reaches ratio (interpolated),
    or ('<', smallest RSS) when even its first point is at or below ratio,
    or ('>', largest RSS) when no point gets there."""
    if not pts:
        return None
    if pts[0][1] <= ratio:
        return ('<', pts[0][0]) if pts[0][1] < ratio else pts[0][0]
    for (r1, m1), (r2, m2) in zip(pts, pts[1:]):
        if m2 <= ratio <= m1:
            if m1 == m2:
                return r1
            f = (m1 - ratio) / (m1 - m2)
            return math.exp(math.log(r1) + f * (math.log(r2) - math.log(r1)))
    return ('>', pts[-1][0])


def value_at_rss(pts, rss):
    """The curve's value at rss (linear in log RSS), None outside it."""
    if not pts or rss < pts[0][0] or rss > pts[-1][0]:
        return None
    for (r1, v1), (r2, v2) in zip(pts, pts[1:]):
        if r1 <= rss <= r2:
            if r2 == r1:
                return v1
            f = (math.log(rss) - math.log(r1)) / (math.log(r2) - math.log(r1))
            return v1 + f * (v2 - v1)
    return pts[-1][1]


def compare_rows(seg_rows, mc_rows, twitter):
    """One dict per segcached row: its point, memcached's RSS at its miss
    ratio, memcached's miss ratio (whole and second half) and avoidable
    misses at its RSS."""
    mc_mr = curve(mc_rows)
    mc_mr2 = curve(mc_rows, 'miss_ratio_2nd_half')
    mc_av = curve(mc_rows, 'avoidable_misses')
    out = []
    for r in sorted(seg_rows, key=lambda r: r['memory_mb']):
        need = rss_for_ratio(mc_mr, r['miss_ratio'])
        c = {'target': r['target'], 'memory_mb': r['memory_mb'], 'rss': r['rss'],
             'avoidable_misses': r['avoidable_misses'],
             'miss_ratio': r['miss_ratio'], 'miss_ratio_2nd_half': r['miss_ratio_2nd_half'],
             'memcached_rss_for_miss_ratio': need,
             'rss_ratio': need / r['rss'] if need is not None and not isinstance(need, tuple)
             else None,
             'memcached_miss_ratio_at_rss': value_at_rss(mc_mr, r['rss']),
             'memcached_miss_ratio_2nd_half_at_rss': value_at_rss(mc_mr2, r['rss'])}
        m = c['memcached_miss_ratio_at_rss']
        c['miss_ratio_vs_memcached'] = r['miss_ratio'] / m if m else None
        if twitter:
            a = value_at_rss(mc_av, r['rss'])
            c['memcached_avoidable_at_rss'] = a
            c['avoidable_share'] = r['avoidable_misses'] / a if a and a > 0 else None
        out.append(c)
    return out


def _f(x, fmt='%.4f'):
    return fmt % x if x is not None else '-'


def table(comps, twitter):
    """The markdown table of compare_rows' output."""
    head = ('| segcached | -m | RSS MiB | miss ratio | memcached RSS MiB at this miss ratio '
            '| RSS memcached / segcached | memcached miss ratio at this RSS '
            '| miss ratio vs memcached | 2nd half: segcached, memcached at this RSS |')
    sep = '|---|---:|---:|---:|---:|---:|---:|---:|---:|'
    if twitter:
        head += ' avoidable misses: segcached, memcached at this RSS | share of memcached\'s |'
        sep += '---:|---:|'
    out = [head, sep]
    for c in comps:
        need = c['memcached_rss_for_miss_ratio']
        if isinstance(need, tuple):
            need_s = ('below its smallest, %.1f' if need[0] == '<' else
                      'beyond its largest, %.1f') % (need[1] / MIB)
        else:
            need_s = _f(need / MIB if need else None, '%.1f')
            if c['avoidable_misses'] <= 0 and need:
                # Nothing left to miss: memcached's first point that
                # also kept everything, its curve may get there sooner.
                need_s = 'at most ' + need_s
        ln = '| %s | %d | %.1f | %s | %s | %s | %s | %s | %s, %s |' % (
            c['target'], c['memory_mb'], c['rss'] / MIB, _f(c['miss_ratio']), need_s,
            _f(c['rss_ratio'], '%.2f×'), _f(c['memcached_miss_ratio_at_rss']),
            _f(c['miss_ratio_vs_memcached'], '%.2f×'), _f(c['miss_ratio_2nd_half']),
            _f(c['memcached_miss_ratio_2nd_half_at_rss']))
        if twitter:
            ln += ' %d, %s | %s |' % (c['avoidable_misses'],
                                      _f(c['memcached_avoidable_at_rss'], '%.0f'),
                                      _f(c['avoidable_share'], '%.2f'))
        out.append(ln)
    return out


def rows_table(rows):
    """Every replay of a shape, by target and -m."""
    out = ['| server | -m | RSS MiB | memory used MiB | objects kept | miss ratio '
           '| 2nd half | misses | infinite cache\'s | avoidable | stores refused |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        if 'error' in r:
            out.append('| %s | %d | not measured: %s | | | | | | | | |' % (
                r['target'], r['memory_mb'], r['error']))
            continue
        out.append('| %s | %d | %.1f | %.1f | %d | %.4f | %.4f | %d | %d | %d | %d |' % (
            r['target'], r['memory_mb'], r['rss'] / MIB, r['memory_used'] / MIB,
            r['curr_items'], r['miss_ratio'], r['miss_ratio_2nd_half'],
            r['counters']['misses'], r['infinite_misses'], r['avoidable_misses'],
            r['counters']['write_errors']))
    return out
