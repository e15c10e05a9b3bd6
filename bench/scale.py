"""Scale benchmark: the same work on 1, 2 and 4 `ostinato serve` worker
processes on PostgreSQL (RelStorage), beside FileStorage (one serve
process) and ZEO (1, 2 and 4 workers on `python -m ostinato.zeo`), in one
run, with ratios.  Prints one figure per line as `NAME VALUE UNIT`
(progress goes to stderr).  The workload is bench/scale.ost.

  STORE_wN_burst_turns_per_s   turns/s  J jobs (--jobs) of S turns each
                                (--steps) all start at once: J*S / the wall
                                time from the go's commit until a driver
                                process sees every turn committed
  STORE_wN_resume_p50 / _p99   ms  one message at a time (--rounds): from the
                                commit of a change the responder waits on to
                                the driver seeing its answer committed
                                (polling every millisecond)
  STORE_wN_bytes_per_turn      B   the storage's growth during the burst / turns
                                (a file appends; PostgreSQL history-free grows
                                in 8 KiB pages and reuses freed rows)
  pg_wN_vs_file_burst / zeo_wN_vs_file_burst   ratio of burst throughput
  pg_wN_vs_pg_w1_burst / zeo_wN_vs_zeo_w1_burst  how it scales with workers

On a 2-core machine four workers share two cores with the database server
and the driver: the figures show the cost of coordination, not the speed-up
more hosts would give.  PostgreSQL: OSTINATO_BENCH_PG (an administrator's
address; default postgresql:///postgres) -- a database is made and dropped.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def say(text):
    sys.stderr.write(text + '\n')
    sys.stderr.flush()


def figure(name, value, unit):
    print('%s %s %s' % (name, ('%.3g' % value) if isinstance(value, float) else value, unit))
    sys.stdout.flush()


def _admin_url():
    return os.environ.get('OSTINATO_BENCH_PG') or 'postgresql:///postgres'


def _pg_admin():
    import psycopg2
    conn = psycopg2.connect(_admin_url(), connect_timeout=10)
    conn.autocommit = True
    return conn


def make_pg_database():
    name = 'ostinato_bench_' + uuid.uuid4().hex[:10]
    conn = _pg_admin()
    with conn.cursor() as cur:
        cur.execute('CREATE DATABASE %s' % name)
    conn.close()
    base, _, rest = _admin_url().partition('://')
    netloc, _, tail = rest.partition('/')
    _, _, query = tail.partition('?')
    return name, '%s://%s/%s%s' % (base, netloc, name, '?' + query if query else '')


def drop_pg_database(name):
    conn = _pg_admin()
    with conn.cursor() as cur:
        cur.execute('DROP DATABASE IF EXISTS %s WITH (FORCE)' % name)
    conn.close()


class Setup:
    """One store kind with N workers: its database made, the program loaded,
    the workers started; `address` is where the driver attaches."""

    def __init__(self, kind, workers, folder, args):
        self.kind, self.workers, self.folder = kind, workers, folder
        self.procs, self.zeo, self.pg_name = [], None, None
        shutil.copy(os.path.join(HERE, 'scale.ost'), folder)
        if kind == 'file':
            db = os.path.join(folder, 'scale.fs')
            self.address = db
        elif kind == 'zeo':
            sock = os.path.join(folder, 'zeo.sock')
            self.zeo = subprocess.Popen([sys.executable, '-m', 'ostinato.zeo', '-a', sock, '-f',
                                         os.path.join(folder, 'shared.fs')], cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait(lambda: os.path.exists(sock), 'the ZEO server')
            db = self.address = 'zeo:' + sock
        else:
            self.pg_name, db = make_pg_database()
            self.address = db
        self.db = db
        with open(os.path.join(folder, 'load.ost'), 'w') as f:
            f.write('import scale\nscale.start(%d, %d)\n' % (args.jobs, args.steps))
        r = subprocess.run([BIN, 'run', '--db', db, 'load.ost'], cwd=folder,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit('loading the workload failed: %s' % r.stderr)
        for i in range(workers):
            cmd = [BIN, 'serve', '--db', db]
            if kind != 'file':
                cmd += ['--worker', 'w%d' % (i + 1)]
            err = open(os.path.join(folder, 'w%d.err' % i), 'w+')
            self.procs.append((subprocess.Popen(cmd, cwd=folder, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=err), err))
        for p, err in self.procs:
            def started(p=p, err=err):
                text = open(err.name).read()
                if p.poll() is not None:
                    self.close()
                    raise SystemExit('a worker stopped at its start:\n' + text)
                return 'serving' in text
            _wait(started, 'a worker to start')
        if kind == 'file':
            self.address = db       # the driver attaches through serve's socket

    def close(self):
        for p, _ in self.procs:
            p.send_signal(signal.SIGTERM)
        for p, _ in self.procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.zeo is not None:
            self.zeo.terminate()
            self.zeo.wait(30)
        if self.pg_name:
            drop_pg_database(self.pg_name)


def _wait(pred, what, timeout=600):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.02)
    raise SystemExit('timed out waiting for %s' % what)


def measure(setup, args):
    from ostinato.repl import Repl
    from ostinato.runtime.serve import attach
    store = attach(setup.address)
    try:
        repl = Repl(store, out=open(os.devnull, 'w'), err=sys.stderr, standalone=False)
        ns = store.world.modules['scale'].ns
        turns = args.jobs * args.steps

        def counted():
            store.abort()
            return sum(c.get('n') for c in ns['counters'].items)
        before = store.size() or 0
        start = time.perf_counter()
        repl.execute('import scale\nscale.flag.go = true')
        while counted() < turns:
            time.sleep(0.005)
        took = time.perf_counter() - start
        grown = (store.size() or 0) - before
        lat = []
        box = ns['box']
        for i in range(1, args.rounds + 1):
            t0 = time.perf_counter()
            repl.execute('import scale\nscale.box.n = %d' % i)
            while True:
                store.abort()
                if box.get('done') >= i:
                    break
                time.sleep(0.001)
            lat.append((time.perf_counter() - t0) * 1000)
        lat.sort()
        p99 = lat[min(len(lat) - 1, int(round(0.99 * (len(lat) - 1))))]
        return turns / took, statistics.median(lat), p99, grown / turns
    finally:
        store.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--jobs', type=int, default=40)
    ap.add_argument('--steps', type=int, default=10)
    ap.add_argument('--rounds', type=int, default=50)
    ap.add_argument('--workers', default='1,2,4', help='worker counts for ZEO and PostgreSQL')
    ap.add_argument('--stores', default='file,zeo,pg')
    ap.add_argument('--keep', metavar='DIR', default=None,
                    help='make the databases in DIR and keep them (default: a temporary folder)')
    args = ap.parse_args(argv)
    counts = [int(n) for n in args.workers.split(',')]
    runs = [(kind, n) for kind in args.stores.split(',')
            for n in ([1] if kind == 'file' else counts)]
    burst = {}
    for kind, n in runs:
        keep = args.keep
        if keep is not None and len(os.path.abspath(keep)) > 60:
            # A unix socket's path has at most 107 bytes (serve's and ZEO's
            # sockets are made in the folder).
            say('%s is too deep for unix sockets: using a temporary folder' % keep)
            keep = None
        folder = tempfile.mkdtemp(prefix='ostinato-scale-', dir=keep)
        say('%s with %d worker%s ...' % (kind, n, '' if n == 1 else 's'))
        setup = Setup(kind, n, folder, args)
        try:
            rate, p50, p99, per_turn = measure(setup, args)
        finally:
            setup.close()
            if keep is None:
                shutil.rmtree(folder, ignore_errors=True)
        name = '%s_w%d' % (kind, n)
        burst[name] = rate
        figure(name + '_burst_turns_per_s', rate, 'turns/s')
        figure(name + '_resume_p50', p50, 'ms')
        figure(name + '_resume_p99', p99, 'ms')
        figure(name + '_bytes_per_turn', per_turn, 'B')
    for name, rate in burst.items():
        kind = name.split('_')[0]
        if kind != 'file' and 'file_w1' in burst:
            figure('%s_vs_file_burst' % name, rate / burst['file_w1'], 'ratio')
        if kind != 'file' and name != kind + '_w1' and kind + '_w1' in burst:
            figure('%s_vs_%s_w1_burst' % (name, kind), rate / burst[kind + '_w1'], 'ratio')


if __name__ == '__main__':
    main()
