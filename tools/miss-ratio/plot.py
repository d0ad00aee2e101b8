# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Draws the miss-ratio suite's curves: miss ratio against RSS after the
replay (MiB, log scale), one line per server, one panel per shape, each
point labelled with its -m. Needs matplotlib (python3-matplotlib)."""
import math

MIB = 1 << 20
STYLE = {'memcached': ('tab:red', 's'), 'segcached': ('tab:blue', 'o')}


def draw(shapes, rows, path, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    n = len(shapes)
    cols = min(3, n)
    nrows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.2 * nrows), squeeze=False)
    targets = []
    for r in rows:
        if r['target'] not in targets:
            targets.append(r['target'])
    extra_colors = ['tab:green', 'tab:purple', 'tab:orange', 'tab:brown']
    for i, shape in enumerate(shapes):
        ax = axes[i // cols][i % cols]
        for j, t in enumerate(targets):
            pts = sorted((r['rss'] / MIB, r['miss_ratio'], r['memory_mb']) for r in rows
                         if r['shape'] == shape.name and r['target'] == t and 'error' not in r)
            if not pts:
                continue
            color, marker = STYLE.get(t, (extra_colors[j % len(extra_colors)], '^'))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                    label=t, linewidth=1.4, markersize=5)
            # Points at the same place (memcached below its floor of one
            # page per slab class) share one label: '4,8,16'.
            labels = []
            for x, y, m in pts:
                if labels and abs(labels[-1][0] - x) <= 0.01 * x and \
                        abs(labels[-1][1] - y) <= 0.002:
                    labels[-1][2].append(m)
                else:
                    labels.append((x, y, [m]))
            for x, y, ms in labels:
                ax.annotate(','.join('%d' % m for m in sorted(ms)), (x, y), textcoords='offset points',
                            xytext=(4, 4), fontsize=7, color=color)
        ax.set_xscale('log')
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: '%g' % v))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: '%g' % v))
        ax.tick_params(axis='x', which='minor', labelsize=7)
        ax.set_title(shape.title, fontsize=10)
        ax.set_xlabel('RSS after the replay, MiB (labels: -m)')
        ax.set_ylabel('get miss ratio')
        ax.grid(True, which='both', alpha=0.3)
        ax.legend(fontsize=7)
    for k in range(n, nrows * cols):
        axes[k // cols][k % cols].axis('off')
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
