#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""The miss-ratio suite (issue 36): replays each shape (shapes.py) through
the protocol against segcached (posix stack, default options, and a row
with --segment-size 1M, the segments the default gives only from -m 256)
and memcached at five or more -m, one
server after the other on the same requests, and records after each
replay the miss ratio (whole run and second half), the RSS, the objects
kept and the avoidable misses (misses beyond an infinite cache's on the
same requests, infinite.py). Writes every row as JSON, a plot of miss
ratio against RSS (plot.py) and, between its markers in
docs/performance.md, per shape the table "memory memcached needs to match
segcached" and "at equal RSS" (compare.py).

Uses tools/protocol-bench's servers.py, replay.py and workload.py.
--quick: tiny shapes at -m 8 and 16 (a smoke run, no file written unless
named).

usage: tools/miss-ratio/missratio.py [--segcached PATH] [--memcached PATH]
           [--shape NAME]... [--extra-segcached ARGS]... [--no-extra]
           [-t N] [--quick] [--note TEXT] [--json FILE] [--png FILE]
           [--out docs/performance.md] [--no-write] [--from-json FILE]
"""
import argparse
import datetime
import json
import os
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, '..', 'protocol-bench'))

import compare   # noqa: E402
import infinite  # noqa: E402
import replay    # noqa: E402
import servers   # noqa: E402
import shapes    # noqa: E402
import workload  # noqa: E402

BEGIN = '<!-- miss-ratio:begin (written by tools/miss-ratio/missratio.py) -->'
END = '<!-- miss-ratio:end -->'
AFTER = '<!-- protocol-bench:end -->'   # where the section goes the first time
# Below -m 256 segcached's segments are the largest that make 256 of them
# (items larger than a segment span several, so -I stays 1 MiB); the row
# with 1 MiB segments says what the small ones buy.
DEFAULT_EXTRA = ['--segment-size 1M']
MIB = 1 << 20


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def replay_args(a):
    """replay.py's options for every replay (its defaults, -t, binaries)."""
    ap = argparse.ArgumentParser()
    replay.add_arguments(ap)
    return ap.parse_args(['--workload', 'zipf', '-t', str(a.threads),
                          '--segcached', a.segcached, '--memcached', a.memcached])


def targets(a):
    """(label, kind, extra arguments), memcached first."""
    out = [('memcached', 'memcached', []), ('segcached', 'segcached', [])]
    for extra in ([] if a.no_extra else (a.extra_segcached or DEFAULT_EXTRA)):
        out.append(('segcached ' + extra, 'segcached', shlex.split(extra)))
    return out


def run_shape(shape, a, ra):
    log('%s: generating %s' % (shape.name, ' '.join(shape.argv())))
    recs = list(workload.requests(shape.kind, **shape.params))
    ttl_fn = replay.Replay(None, 1, ra.window, ra.ttl_scale, ra.default_ttl, ra.max_value,
                           0).ttl
    rows = []
    for mem in shape.sizes:
        for label, kind, extra in targets(a):
            srv = servers.Server(kind, mem, a.threads, extra, segcached=a.segcached,
                                 memcached=a.memcached)
            log('  %s -m %d ...' % (label, mem))
            paced = infinite.Paced(recs)
            try:
                r = replay.replay_one(srv, ra, len(recs), records=paced)
            except RuntimeError as e:
                # A server that refuses the size (e.g. 1 MiB segments
                # need four of them and the table): a row saying why.
                lines = [ln.strip() for ln in str(e).split(' did not start: ', 1)[-1]
                         .splitlines() if ln.strip()] or ['?']
                why = next((ln for ln in lines if 'segcached: ' in ln), lines[0])
                if why[:4].isdigit() and ' ' in why:   # the log line's time stamp
                    why = why.split(' ', 1)[1]
                log('    did not start: %s' % why)
                r = {'server': srv.label(), 'command': srv.cmd,
                     'error': 'did not start: %s' % why}
            r.update(shape=shape.name, target=label, memory_mb=mem)
            if 'error' not in r:
                im, _, im2, _ = infinite.misses(recs, paced.clock, ttl_fn, ra.default_ttl)
                r['infinite_misses'] = im
                r['infinite_misses_2nd_half'] = im2
                r['avoidable_misses'] = r['counters']['misses'] - im
                r['avoidable_misses_2nd_half'] = r['counters']['misses2'] - im2
            rows.append(r)
    return rows


def summary(shape_list, rows, comps):
    """One line per shape: segcached (default options) at -m 16."""
    out = ['| shape | segcached -m 16: RSS MiB | miss ratio | memcached at that RSS '
           '| vs memcached | memcached RSS MiB for that miss ratio | RSS ratio '
           '| share of memcached\'s avoidable misses |',
           '|---|---:|---:|---:|---:|---:|---:|---:|']
    for s in shape_list:
        c = next((c for c in comps[s.name] if c['target'] == 'segcached'
                  and c['memory_mb'] == 16), None)
        if c is None:
            continue
        need = c['memcached_rss_for_miss_ratio']
        need_s = ('%s %.1f' % (need[0], need[1] / MIB) if isinstance(need, (tuple, list))
                  else '%.1f' % (need / MIB) if need else '-')
        f = compare._f
        out.append('| %s | %.1f | %s | %s | %s | %s | %s | %s |' % (
            s.name, c['rss'] / MIB, f(c['miss_ratio']), f(c['memcached_miss_ratio_at_rss']),
            f(c['miss_ratio_vs_memcached'], '%.2f×'), need_s, f(c['rss_ratio'], '%.2f×'),
            f(c.get('avoidable_share'), '%.2f') if s.twitter else 'n/a'))
    return out


def section(a, shape_list, rows, comps, meta, png_rel, json_rel):
    cmd = 'tools/miss-ratio/missratio.py --segcached %s' % meta.get(
        'segcached', 'build/app/segcached/segcached')
    if a.quick:
        cmd += ' --quick'
    md = [BEGIN, '## Miss ratio against RSS (issue 36)', '',
          'What an operator compares is RAM, not a `-m` flag: this section puts segcached '
          '(posix stack, default options%s) and memcached %s on one axis, the resident memory (RSS, `/proc/PID/smaps_rollup`) each process '
          'holds after the replay. Each shape is one seeded workload (tools/protocol-bench/'
          'workload.py), generated once and replayed over loopback to every server at every '
          '`-m`, the servers one after the other (never two at once), `-t %d`, a '
          'look-aside client (a get miss is followed by a set of the key), as '
          'tools/protocol-bench/replay.py does. Written by `tools/miss-ratio/missratio.py`; '
          'rerun it to refresh everything between its markers, the plot and the JSON.' % (
              ''.join('; and `%s`' % ' '.join(t[2]) for t in targets(a)[2:]),
              meta['memcached_version'], a.threads), '',
          'Below `-m 256` segcached\'s default segment size is the largest that gives 256 '
          'segments, at least 64 KiB (`-m 16`: 64 KiB, `-m 32`: 128 KiB), and `-I` stays '
          'memcached\'s 1 MiB: an item larger than a segment spans several. The '
          '`--segment-size 1M` rows are the segments the default gives from `-m 256` up. A '
          'store the server refuses '
          '(an item larger than its `-I`) is counted in *stores refused*; the miss that '
          'follows counts as avoidable.', '']
    if a.note:
        md += ['**%s**' % a.note, '']
    md += ['Host: %s; commit %s; %s; the suite took %.0f s; load average (1 min) %s at the '
           'start, %s at the end. The host was shared with other work: the counts are '
           'counts, but the replay runs as fast as it can, and how many items with TTLs '
           'of seconds expire during it depends on its pace (the infinite cache\'s count '
           'is taken at each replay\'s own pace, so the avoidable misses are not).' % (
               meta['host'], meta['commit'], meta['date'], meta['seconds'], meta['load0'],
               meta['load1']), '']
    if png_rel:
        md += ['![miss ratio against RSS, one panel per shape](%s)' % png_rel, '']
    md += ['How to read the tables:', '',
           '* *Miss ratio*: get misses / gets over the whole replay (cold start included); '
           '*2nd half*: over its second half (warm). The plot shows the whole-run miss ratio, '
           'each point labelled with its `-m`.',
           '* *Memory memcached needs to match segcached* (*memcached RSS MiB at this miss '
           'ratio*): the RSS at which memcached\'s curve reaches the segcached point\'s miss '
           'ratio, memcached\'s points joined linearly in log RSS; *RSS memcached / '
           'segcached* divides it by segcached\'s RSS (above 1: memcached needs more RAM for '
           'the same misses). Outside memcached\'s measured points the cell says on which '
           'side, nothing is extrapolated; *at most* where segcached kept every key it was '
           'asked for (no avoidable misses): memcached\'s first point that did too, its '
           'curve may get there at less RSS between its points.',
           '* memcached\'s `-m` bounds its slab pages but every slab class in use gets one '
           '1 MiB page beyond it, and its hash table is outside it: on the Twitter shapes '
           '(values from 1 B to 64 KiB, some 30 classes) its RSS stays at the same floor '
           'for every `-m` up to about 24, so its points there coincide and segcached\'s '
           'smaller points have no memcached point at their RSS (the cells say *below its '
           'smallest*).',
           '* *At equal RSS*: memcached\'s miss ratio interpolated the same way at the '
           'segcached point\'s RSS, and segcached\'s divided by it (below 1: fewer misses '
           'than memcached in the same RAM).',
           '* *Avoidable misses* (Twitter shapes, which have TTLs and deletes): a server\'s '
           'misses minus those an infinite cache would have on the same requests: the get '
           'misses of a key never stored, deleted, or expired (its TTL counted from its '
           'last store at the replay\'s own pace, as the server counts it), with the same '
           'look-aside fills (tools/miss-ratio/infinite.py). On these shapes every object '
           'is created by a set, so almost all of a server\'s misses are avoidable. '
           '*Share of memcached\'s*: segcached\'s avoidable misses over memcached\'s '
           '(interpolated at segcached\'s RSS).',
           '* The size shift\'s second half is its 900-byte phase. memcached 1.6.18 runs '
           'with its default `slab_reassign` and `slab_automove=1`, which moves pages '
           'between classes over tens of seconds; a replay here lasts seconds.',
           '* *Memory used*: what the server says it holds (memcached: slab pages + hash '
           'table; segcached: heap, table and segment headers); *objects kept*: curr_items '
           'at the end.', '',
           '### Summary: segcached at `-m 16` against memcached\'s curve', '']
    md += summary(shape_list, rows, comps) + ['']
    for s in shape_list:
        srows = [r for r in rows if r['shape'] == s.name]
        md += ['### %s' % s.title, '', '%s; `-m` %s.' % (
            s.describe(), ', '.join(str(m) for m in s.sizes)), '']
        md += compare.table(comps[s.name], s.twitter) + ['']
        md += compare.rows_table(srows) + ['']
    md += ['### Command (miss-ratio suite)', '', 'From the repository root, segcached built '
           'by meson; every row is in %s (each shape\'s requests: '
           '`tools/protocol-bench/workload.py` with the arguments given there):' % (
               '[%s](%s)' % (os.path.basename(a.json), json_rel) if json_rel
               else 'the JSON (`--json`)'),
           '', '```sh', cmd, '```', END]
    return '\n'.join(md) + '\n'


def write_doc(path, text):
    doc = ''
    if os.path.exists(path):
        with open(path) as f:
            doc = f.read()
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END) + 1:]
    elif AFTER in doc:
        i = doc.index(AFTER) + len(AFTER) + 1
        doc = doc[:i] + '\n' + text + doc[i:]
    else:
        doc = (doc.rstrip('\n') + '\n\n' if doc else '') + text
    with open(path, 'w') as f:
        f.write(doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--segcached', default=servers.DEFAULT_SEGCACHED)
    ap.add_argument('--memcached', default=servers.DEFAULT_MEMCACHED)
    ap.add_argument('--shape', action='append', help='only this shape (repeat): %s' %
                    ', '.join(s.name for s in shapes.SHAPES))
    ap.add_argument('--extra-segcached', action='append',
                    help="another segcached row's arguments (repeat; default %r)" %
                    DEFAULT_EXTRA[0])
    ap.add_argument('--no-extra', action='store_true', help='segcached with default options only')
    ap.add_argument('-t', '--threads', type=int, default=4, help='-t of every server (4)')
    ap.add_argument('--quick', action='store_true', help='tiny shapes at -m 8 and 16')
    ap.add_argument('--note', default='')
    ap.add_argument('--json', help='every row (default docs/bench/miss-ratio.json)')
    ap.add_argument('--png', help='the plot (default docs/bench/miss-ratio.png)')
    ap.add_argument('--out', help='the doc to write the section into (default '
                    'docs/performance.md)')
    ap.add_argument('--no-write', action='store_true', help='print the section, write no doc')
    ap.add_argument('--from-json', metavar='FILE',
                    help="an earlier run's JSON: draw the plot and write the section from "
                    "its rows, replaying nothing")
    a = ap.parse_args()
    for b in ([] if a.from_json else [a.segcached, a.memcached]):
        if not os.access(b, os.X_OK):
            raise SystemExit('miss-ratio suite: %s is not an executable' % b)
    if not a.quick:
        a.json = a.json or os.path.join(servers.ROOT, 'docs', 'bench', 'miss-ratio.json')
        a.png = a.png or os.path.join(servers.ROOT, 'docs', 'bench', 'miss-ratio.png')
        a.out = a.out or os.path.join(servers.ROOT, 'docs', 'performance.md')
    if a.from_json:
        # An earlier run's rows: the plot and the section again, no replay.
        with open(a.from_json) as f:
            old = json.load(f)
        a.quick, a.threads, a.json = old['meta']['quick'], old['meta']['threads'], a.from_json
        a.extra_segcached = [t[len('segcached '):] for t in dict.fromkeys(
            r['target'] for r in old['rows']) if t.startswith('segcached ')]
        a.no_extra = not a.extra_segcached
        a.shape = [s['name'] for s in old['shapes']]
    shape_list = shapes.by_name(a.shape)
    if a.quick:
        shape_list = [s.quick() for s in shape_list]
    ra = replay_args(a)
    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = servers.loadavg()
    t0 = time.monotonic()
    rows = []
    if a.from_json:
        rows = old['rows']
    else:
        for s in shape_list:
            rows += run_shape(s, a, ra)
    comps = {}
    for s in shape_list:
        ok = [r for r in rows if r['shape'] == s.name and 'error' not in r]
        comps[s.name] = compare.compare_rows(
            [r for r in ok if r['target'].startswith('segcached')],
            [r for r in ok if r['target'] == 'memcached'], s.twitter)
    meta = {'host': servers.host_description(), 'commit': servers.tree_commit(),
            'date': started.strftime('%Y-%m-%d %H:%M UTC'),
            'seconds': time.monotonic() - t0, 'load0': load0, 'load1': servers.loadavg(),
            'memcached_version': servers.version_of(a.memcached, 'memcached').split()[-1],
            'segcached_version': servers.version_of(a.segcached, 'segcached'),
            'threads': a.threads, 'quick': a.quick,
            # as the command was given: the doc's command line shows it
            'segcached': os.path.relpath(a.segcached, servers.ROOT)
            if os.path.abspath(a.segcached).startswith(servers.ROOT + os.sep) else a.segcached}
    if a.from_json:
        meta = old['meta']
    result = {'meta': meta,
              'shapes': [{'name': s.name, 'title': s.title, 'twitter': s.twitter,
                          'sizes': s.sizes, 'workload': s.argv()} for s in shape_list],
              'rows': rows, 'comparison': comps}
    if a.json and not a.from_json:
        with open(a.json, 'w') as f:
            json.dump(result, f, indent=1)
            f.write('\n')
        log('wrote %s' % a.json)
    png_rel = None
    if a.png:
        try:
            import plot
            plot.draw(shape_list, [r for r in rows if 'error' not in r], a.png,
                      'get miss ratio against RSS after the replay: segcached and memcached %s'
                      % meta['memcached_version'])
            log('wrote %s' % a.png)
            doc_dir = os.path.dirname(os.path.abspath(a.out or os.path.join(
                servers.ROOT, 'docs', 'performance.md')))
            png_rel = os.path.relpath(os.path.abspath(a.png), doc_dir)
        except ImportError as e:
            log('no plot: %s (install python3-matplotlib: tools/install-deps.sh)' % e)
    json_rel = None
    if a.json:
        doc_dir = os.path.dirname(os.path.abspath(a.out or os.path.join(
            servers.ROOT, 'docs', 'performance.md')))
        json_rel = os.path.relpath(os.path.abspath(a.json), doc_dir)
    text = section(a, shape_list, rows, comps, meta, png_rel, json_rel)
    if a.out and not a.no_write:
        write_doc(a.out, text)
        log('wrote %s' % a.out)
    else:
        print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
