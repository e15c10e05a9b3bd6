"""Durable-runtime benchmark: what a turn, a waiting task and a start cost on a
real FileStorage.  Prints one figure per line as `NAME VALUE UNIT`
(progress goes to stderr):

  durable_turn_p50 / _p99   ms  from the commit of a wake-up for a task waiting
                                in `wait until b.n > seen` to the commit of its
                                next wait (300 rounds, one waiting task)
  durable_turn_cpu_p50      ms  the CPU time of that turn (everything but
                                waiting for the disk)
  fsync_ms                  ms  median fsync of a small write in the same
                                folder: the floor under every durable turn
  bytes_per_waiting_task    B   database file size / waiting tasks, for N tasks
                                each waiting on its own object, after
                                `db pack` (the live data)
  bytes_per_waiting_task_unpacked  B  the same before packing (as built, with
                                the history of the building transactions)
  peak_rss_mb               MB  ru_maxrss of a fresh process that opens the
                                N-task database, serves it (recover + run) and
                                wakes 50 of the tasks
  wake_one_ms_10 / _N       ms  median time to wake one random task (change its
                                object and commit) and run it to its next wait
                                (committed), with 10 and with N tasks waiting,
                                each in a fresh process
  cold_start_s              s   wall time of `ostinato run` on a one-line
                                program, fresh database, best of 5

Usage: python bench/durable.py [--tasks N] [--keep DIR]
Targets (for information, not checked): p50 <= 5 ms, <= 2 KB per waiting
task, <= 200 MB RSS, wake time flat in N, cold start <= 0.5 s.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, ROOT)

from ostinato.runtime.scheduler import Scheduler  # noqa: E402
from ostinato.runtime.txn import StoreTransactions  # noqa: E402
from ostinato.runtime.store import Store  # noqa: E402
from ostinato.vm import ops  # noqa: E402

# N tasks, each in a loop waiting for its own box to change.  The box is a
# local of the task (not a module variable), so a waiting task watches that
# one object only.  The main task spawns in batches and lets each batch run
# to its first wait (sleep(0)), so the ready queue stays short.
WAITERS = '''\
type Box:
    var n = 0

def waiter(b):
    seen = 0
    while true:
        wait until b.n > seen
        seen = b.n

for i in 0..{n}:
    spawn waiter(Box())
    if i % 500 == 499:
        sleep(0)
'''

BUILD_COMMIT_EVERY = 2000   # turns per commit while building a big database


class _BatchCommits(StoreTransactions):
    """Building the database: one commit every BUILD_COMMIT_EVERY turns."""

    turns = 0

    def commit(self):
        self.turns += 1
        if self.turns % BUILD_COMMIT_EVERY == 0:
            self.store.commit()


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def figure(name, value, unit, fmt='%.2f'):
    print(('%s ' + fmt + ' %s') % (name, value, unit), flush=True)


# ------------------------------------------------------------------ building

def build(folder, n):
    """A FileStorage `folder/waiters.fs` holding n tasks, each waiting on its
    own Box.  Built in-process with the runtime's own scheduler; to keep the
    build within seconds, turns are committed in batches (a build is not what
    is measured)."""
    prog = os.path.join(folder, 'waiters.ost')
    with open(prog, 'w') as f:
        f.write(WAITERS.format(n=n))
    db = os.path.join(folder, 'waiters.fs')
    store = Store(db)
    try:
        sched = Scheduler(store.world, out=io.StringIO(), err=sys.stderr)
        sched.txn = _BatchCommits(store)
        sched.recover()
        sched.start_main(os.path.abspath(prog))
        store.commit()
        sched.run()
        store.commit()
        w = store.world
        assert w.main_task.done and w.main_task.state == 'done', w.main_task.state
        waiting = len(w.watches)
        assert waiting == n, (waiting, n)
    finally:
        store.close()
    return db


def pack(db):
    store = Store(db)
    try:
        store.db.pack(days=0)
    finally:
        store.close()
    for suffix in ('.old',):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


# ------------------------------------------------------------------ waking

def poke(store, sched, task):
    """Change the box `task` waits on, as `b.n = b.n + 1` in another task
    would, and commit that: the wake-up."""
    box = task.waiting.objs[0]
    ops.set_field(box, 'n', box.get('n') + 1)
    sched.changed(box)
    store.commit()


def serving(db):
    """Open `db` as a server would: a store, a scheduler committing each turn,
    recovery, and a run of whatever is ready."""
    store = Store(db)
    sched = Scheduler(store.world, out=io.StringIO(), err=sys.stderr)
    # What `ostinato run` sets (runtime/runner.py).
    sched.txn = StoreTransactions(store)
    sched.recover()
    sched.run()
    return store, sched


def turn_times(db, rounds):
    """Seconds from each wake-up's commit to the commit of the next wait:
    (wall times, CPU times of this process)."""
    store, sched = serving(db)
    try:
        tid = max(store.world.tasks.keys())
        times, cpu = [], []
        for _ in range(rounds):
            task = store.world.tasks[tid]
            before = task.waiting
            poke(store, sched, task)
            t0, c0 = time.perf_counter(), time.process_time()
            sched.run()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            assert task.state == 'waiting' and task.waiting is not before, task.state
        return times, cpu
    finally:
        store.close()


def serve_and_wake(db, wakes, seed):
    """In this (fresh) process: serve `db`, wake `wakes` random tasks one at a
    time; returns the wake times (s) and the peak RSS (MB)."""
    rng = random.Random(seed)
    store, sched = serving(db)
    try:
        tasks = store.world.tasks
        lo, hi = tasks.minKey(), tasks.maxKey()
        times = []
        while len(times) < wakes:
            tid = rng.randint(lo, hi)
            if tid not in tasks:
                continue
            t0 = time.perf_counter()
            task = tasks[tid]
            before = task.waiting
            poke(store, sched, task)
            sched.run()
            times.append(time.perf_counter() - t0)
            assert task.state == 'waiting' and task.waiting is not before, task.state
    finally:
        store.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return times, rss_mb


def serve_in_subprocess(db, wakes):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), '--serve', db,
                        '--wakes', str(wakes)], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit('serving %s failed:\n%s' % (db, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ the rest

def fsync_ms(folder, rounds=50):
    path = os.path.join(folder, 'fsync.probe')
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        times = []
        for _ in range(rounds):
            os.write(fd, b'x' * 512)
            t0 = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.remove(path)
    return statistics.median(times) * 1e3


def cold_start(folder, tries=5):
    prog = os.path.join(folder, 'one.ost')
    with open(prog, 'w') as f:
        f.write("print('hello')\n")
    exe = os.path.join(os.path.dirname(sys.executable), 'ostinato')
    cmd = [exe] if os.path.exists(exe) else [sys.executable, '-m', 'ostinato']
    best = None
    for i in range(tries):
        db = os.path.join(folder, 'one%d.fs' % i)
        t0 = time.perf_counter()
        p = subprocess.run(cmd + ['run', '--db', db, prog], capture_output=True, text=True,
                           cwd=folder)
        t = time.perf_counter() - t0
        assert p.returncode == 0 and p.stdout == 'hello\n', (p.stdout, p.stderr)
        best = t if best is None else min(best, t)
    return best


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tasks', type=int, default=100000, help='waiting tasks (default 100000)')
    ap.add_argument('--rounds', type=int, default=300, help='rounds of durable_turn')
    ap.add_argument('--wakes', type=int, default=50, help='wake-ups per wake_one figure')
    ap.add_argument('--keep', help='build the databases in this folder and keep them')
    ap.add_argument('--serve', help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.serve:
        times, rss = serve_and_wake(args.serve, args.wakes, seed=7)
        print(json.dumps({'times': times, 'rss_mb': rss}))
        return

    folder = args.keep or tempfile.mkdtemp(prefix='ostinato-bench-')
    os.makedirs(folder, exist_ok=True)
    try:
        # One waiting task: the cost of a durable turn.
        small = os.path.join(folder, 'turn')
        os.makedirs(small, exist_ok=True)
        db = build(small, 1)
        times, cpu = turn_times(db, args.rounds)
        figure('durable_turn_p50', percentile(times, 50) * 1e3, 'ms')
        figure('durable_turn_p99', percentile(times, 99) * 1e3, 'ms')
        figure('durable_turn_cpu_p50', percentile(cpu, 50) * 1e3, 'ms')
        figure('fsync_ms', fsync_ms(folder), 'ms')

        # Waking one of 10, then one of N, each in a fresh process.
        wake = {}
        rss = {}
        for n in (10, args.tasks):
            sub = os.path.join(folder, 'waiters%d' % n)
            os.makedirs(sub, exist_ok=True)
            log('building a database of %d waiting tasks ...' % n)
            t0 = time.time()
            db = build(sub, n)
            log('  built in %.1f s, %d bytes' % (time.time() - t0, os.path.getsize(db)))
            if n == args.tasks:
                unpacked = os.path.getsize(db)
                pack(db)
                packed = os.path.getsize(db)
                figure('bytes_per_waiting_task', packed / n, 'B', '%.0f')
                figure('bytes_per_waiting_task_unpacked', unpacked / n, 'B', '%.0f')
            r = serve_in_subprocess(db, args.wakes)
            wake[n] = statistics.median(r['times']) * 1e3
            rss[n] = r['rss_mb']
        figure('peak_rss_mb', rss[args.tasks], 'MB', '%.1f')
        figure('peak_rss_mb_10', rss[10], 'MB', '%.1f')
        figure('wake_one_ms_10', wake[10], 'ms')
        figure('wake_one_ms_%d' % args.tasks, wake[args.tasks], 'ms')

        figure('cold_start_s', cold_start(folder), 's', '%.3f')
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == '__main__':
    main()
