#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The segcached authors
"""Draws segcached-mrc-accuracy's outputs: one panel per file, the curve
the -m run predicted beside the miss ratio measured by a run at each size.

  tools/mrc-accuracy/accuracy-plot.py OUT.png RESULT.txt [RESULT.txt ...]

Each RESULT.txt is the tool's stdout (its Markdown table); the panel's
title is the file's name.
"""
import math
import os
import re
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

ROW = re.compile(r'^\| ([0-9.]+) MiB( \(-m\))? \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|')
MAE = re.compile(r'^MAE ([0-9.]+), max ([0-9.]+)')
RATE = re.compile(r'sample rate ([0-9.]+), ([0-9]+) keys')


def read(path):
    sizes, predicted, measured, current, summary = [], [], [], None, ''
    rate = ''
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                sizes.append(float(m.group(1)))
                predicted.append(float(m.group(3)))
                measured.append(float(m.group(4)))
                if m.group(2):
                    current = float(m.group(1))
            m = MAE.match(line)
            if m:
                summary = 'MAE %s, max %s' % m.groups()
            m = RATE.search(line)
            if m:
                rate = 'rate %s, %s keys' % m.groups()
    if not sizes:
        sys.exit('%s: no table (is it segcached-mrc-accuracy output?)' % path)
    return sizes, predicted, measured, current, '%s; %s' % (rate, summary)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, files = sys.argv[1], sys.argv[2:]
    cols = min(3, len(files))
    rows = math.ceil(len(files) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
    for ax, path in zip(axes.flat, files):
        sizes, predicted, measured, current, summary = read(path)
        ax.plot(sizes, measured, 'o-', label='measured (a run at each size)')
        ax.plot(sizes, predicted, 's--', label='predicted by the -m run')
        if current:
            ax.axvline(current, color='grey', linewidth=0.8)
        ax.set_xscale('log', base=2)
        ax.set_xlabel('memory, MiB')
        ax.set_ylabel('miss ratio')
        ax.set_title('%s\n%s' % (os.path.basename(path).replace('.txt', ''), summary),
                     fontsize=9)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(files):]:
        ax.axis('off')
    axes.flat[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == '__main__':
    main()
