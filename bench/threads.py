"""What a new dialogue costs as the threads grow (issue 28, item 3): the
channel's map of threads (`threads` in stdlib/channels.ost) among 1,000
and among 100,000 threads, in one run, and the ratio.

Each database runs bench/dialogue.ost (bench/dialogues.py) with a few real
dialogues (--dialogues, default 10) past their first turn; the other
threads are put into the channel's map directly, each with its user and
one message, as a channel's intake makes them, in commits of 5,000 (the
build is set-up, not measured).  Those threads have no task: a new
dialogue touches no other dialogue's task, only the map that holds every
thread, so the figure is the map's.  (bench/durable.py's `waiting`
section builds real waiting dialogues; at 100,000 that takes many
minutes.)  Then, in a fresh process per size, one new dialogue to warm
up, and --new (default 21) new dialogues one after the other, each its
first message's intake and the turns up to its reply, every commit
fsynced.  Prints `NAME VALUE UNIT` (progress to stderr):

  new_dialogue_ms_N       ms  median wall time of a new dialogue among N threads
  new_dialogue_cpu_ms_N   ms  median CPU time of it (all but waiting for the disk)
  new_dialogue_records_N  -   records it wrote (intake and turns), mean
  new_dialogue_bytes_N    B   bytes it wrote, mean
  new_dialogue_ratio      x   new_dialogue_ms of the largest size / the smallest
  new_dialogue_cpu_ratio  x   the same for the CPU time (less noisy on a
                              shared machine; the goal is at most 1.5)

Usage: python bench/threads.py [--sizes 1000,100000] [--new 21] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from dialogues import OstinatoDialogues, figure, log, message_text  # noqa: E402

BATCH = 5000


def build(path, n, dialogues):
    """A database of `n` threads, `dialogues` of them with a waiting task."""
    from ostinato.effects.channels.chat import channels_module, new_user
    from ostinato.vm import ops
    from ostinato.vm.values import OList
    OstinatoDialogues.build(path, dialogues)
    d = OstinatoDialogues(path)
    try:
        ns = channels_module(d.world).ns
        threads = ns['threads']
        for lo in range(dialogues, n, BATCH):
            for i in range(lo, min(n, lo + BATCH)):
                user = new_user(d.world, 'user%d' % i, 'user%d' % i)
                msg = ops.construct(ns['Message'], {'when': '2026-01-01T00:00:00+00:00',
                                                    'sender': user, 'text': message_text(i, 1)})
                threads.d['bench:%d' % i] = ops.construct(
                    ns['Thread'], {'id': str(i), 'channel': 'bench', 'user': user,
                                   'messages': OList([msg])})
            threads.changed()
            d.store.commit()
    finally:
        d.close()


def measure(path, n, new):
    """In this process: the new dialogues among the `n` threads of `path`."""
    d = OstinatoDialogues(path)
    try:
        d.resume(n, message_text(n, 1))          # warm: imports, caches, the map loaded
        d.commits.clear()
        d.written = {'intake': 0, 'turn': 0}
        wall, cpu = [], []
        for i in range(n + 1, n + 1 + new):
            t0, c0 = time.perf_counter(), time.process_time()
            d.resume(i, message_text(i, 1))
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        records = sum(r for r, _ in d.records().values())
    finally:
        d.close()
    return {'ms': statistics.median(wall) * 1e3, 'cpu_ms': statistics.median(cpu) * 1e3,
            'records': records / new, 'bytes': (d.written['intake'] + d.written['turn']) / new}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sizes', default='1000,100000', help='thread counts (default 1000,100000)')
    ap.add_argument('--new', type=int, default=21, help='new dialogues timed per size')
    ap.add_argument('--dialogues', type=int, default=10, help='real waiting dialogues in each')
    ap.add_argument('--keep', help='build the databases in DIR and keep them')
    ap.add_argument('--measure', nargs=2, metavar=('DB', 'N'), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]), args.new)))
        return
    sizes = sorted(int(s) for s in args.sizes.split(','))
    folder = args.keep or tempfile.mkdtemp(prefix='ostinato-threads-')
    os.makedirs(folder, exist_ok=True)
    try:
        got = {}
        for n in sizes:
            path = os.path.join(folder, 'threads%d.fs' % n)
            for suffix in ('', '.index', '.lock', '.tmp', '.commits'):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)
            log('building %d threads ...' % n)
            t0 = time.time()
            build(path, n, min(args.dialogues, n))
            log('  built in %.1f s, %d bytes' % (time.time() - t0, os.path.getsize(path)))
            p = subprocess.run([sys.executable, os.path.abspath(__file__), '--new', str(args.new),
                                '--measure', path, str(n)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                raise SystemExit('measuring %d threads failed:\n%s' % (n, p.stderr))
            r = got[n] = json.loads(p.stdout.strip().splitlines()[-1])
            figure('new_dialogue_ms_%d' % n, r['ms'], 'ms')
            figure('new_dialogue_cpu_ms_%d' % n, r['cpu_ms'], 'ms')
            figure('new_dialogue_records_%d' % n, r['records'], '-', '%.1f')
            figure('new_dialogue_bytes_%d' % n, r['bytes'], 'B', '%.0f')
        lo, hi = got[sizes[0]], got[sizes[-1]]
        figure('new_dialogue_ratio', hi['ms'] / lo['ms'], 'x')
        figure('new_dialogue_cpu_ratio', hi['cpu_ms'] / lo['cpu_ms'], 'x')
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == '__main__':
    main()
