"""Peer benchmark: the same chat-dialogue workload on Ostinato and on
LangGraph with its SQLite checkpointer, in the same run on this machine.
`make bench-peers` runs it (LangGraph comes from the `bench-peers` extra of
setup.cfg, pinned).

The workload: a dialogue is ten turns of waiting for the user's message,
counting the words said so far, and replying.  Ostinato runs it as
bench/dialogue.ost, one task per chat thread, with each message taken in as
a chat channel takes one (appended to its thread in a transaction of its
own) and each reply a committed outbox entry (bench/dialogues.py).
LangGraph runs it as a graph whose `wait` node calls `interrupt()`, resumed
with `invoke(Command(resume=TEXT))`, thread id = dialogue, its state
checkpointed by `SqliteSaver` (bench/langgraph_dialogues.py).  Both get the
same message texts.

How, so the numbers can be trusted:
- same machine, same run: each case runs for Ostinato, then for LangGraph,
  one case after the other, each in a fresh Python process (so neither
  pays for the other's imports or caches, and each RSS is its own); each
  case's database is built beforehand in a process of its own;
- fsync on both sides: Ostinato's FileStorage fsyncs every commit (ZODB has
  no setting to skip it); LangGraph's SQLite connection runs with
  `PRAGMA synchronous=FULL` in WAL mode (read back and checked), so each of
  its commits is fsynced; the graph runs with LangGraph's default
  durability ('async': every step's checkpoint is written, and `invoke`
  returns after they are committed; --durability to choose another);
- what is timed: for a resume, from handing the message in to the commit
  of the reply -- for Ostinato its intake transaction and the turn that
  answers, for LangGraph the `invoke(Command(resume=...))` call, which
  records the resume value and every step's checkpoint;
- the databases are files in one temporary folder on the same disk.
The machine is shared: run it when it is quiet, and compare figures of
the same run only.

Figures (`NAME VALUE UNIT`), for SYSTEM = ostinato and langgraph:
  SYSTEM_resume_p50 / _p99      ms     --one dialogues (default 100), each past
                                       its first turn, get their other nine
                                       messages round robin, one message in
                                       flight at a time
  SYSTEM_one_at_a_time_msgs_per_s  msg/s  messages / wall time of that run
  SYSTEM_burst_msgs_per_s       msg/s  --burst dialogues (default 1000) waiting
                                       get one message each: Ostinato's are
                                       taken in (committed) before the clock
                                       starts, and the clock runs until every
                                       reply is committed; LangGraph has no
                                       inbox, so its clock runs over the
                                       `invoke` of each message in turn
                                       (graph.batch was not faster here)
  ostinato_burst_with_intake_msgs_per_s  msg/s  the same, with the clock also
                                       over Ostinato's intake (a transaction
                                       per message)
  SYSTEM_rss_mb_waiting_W       MB     peak RSS (VmHWM) of a fresh process
                                       that opens a database of W waiting
                                       dialogues (W = 10 and --waiting,
                                       default 10000) and resumes 50 random
                                       ones
and the ratios `ratio NAME VALUE`, Ostinato / LangGraph: resume_p50,
resume_p99, rss_mb_waiting_W (below 1: Ostinato is faster, smaller) and
burst_msgs_per_s, burst_with_intake_msgs_per_s (above 1: Ostinato is
faster).

Usage: python bench/peers.py [--one D] [--burst B] [--waiting W] [--keep DIR]
Issue 17's target: burst >= 6x LangGraph's in the same run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dialogues import figure, log, percentile, run_case_in_subprocess  # noqa: E402

SYSTEMS = ('ostinato', 'langgraph')


def ratio(name, ours, theirs):
    print('ratio %s %.3f' % (name, ours / theirs), flush=True)


class Peers:
    def __init__(self, folder):
        self.folder = folder

    def database(self, system, n, name):
        """A new database of n waiting dialogues of `system`, built in a
        process of its own."""
        path = os.path.join(self.folder, '%s-%s.db' % (system, name))
        for suffix in ('', '.index', '.lock', '.tmp', '-wal', '-shm'):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        log('%s: building %d waiting dialogues ...' % (system, n))
        r = run_case_in_subprocess(system, 'build', path, n)
        log('  built in %.1f s' % r['seconds'])
        return path

    def case(self, system, case, n, name, resumes=50):
        return run_case_in_subprocess(system, case, self.database(system, n, name), n, resumes)


def versions():
    import sqlite3
    from importlib.metadata import PackageNotFoundError, version
    found = []
    for dist in ('langgraph', 'langgraph-checkpoint-sqlite', 'ZODB'):
        try:
            found.append('%s %s' % (dist, version(dist)))
        except PackageNotFoundError:
            raise SystemExit('bench/peers.py needs %s: pip install -e ".[bench-peers]" '
                             '(make bench-peers does)' % dist)
    return ', '.join(found + ['SQLite %s' % sqlite3.sqlite_version])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--one', type=int, default=100,
                    help='dialogues of the one-at-a-time case (default 100)')
    ap.add_argument('--burst', type=int, default=1000,
                    help='dialogues of the burst case (default 1000)')
    ap.add_argument('--waiting', type=int, default=10000,
                    help='waiting dialogues for the RSS figure (default 10000)')
    ap.add_argument('--resumes', type=int, default=50,
                    help='dialogues resumed in the RSS processes (default 50)')
    ap.add_argument('--durability', choices=('sync', 'async', 'exit'),
                    help="LangGraph's durability mode (default: the library's, 'async')")
    ap.add_argument('--keep', help='build the databases in this folder and keep them')
    args = ap.parse_args()
    log('peers: %s' % versions())
    if args.durability:
        os.environ['BENCH_LANGGRAPH_DURABILITY'] = args.durability

    folder = args.keep or tempfile.mkdtemp(prefix='ostinato-peers-')
    os.makedirs(folder, exist_ok=True)
    peers = Peers(folder)
    try:
        one = {}
        for system in SYSTEMS:
            r = one[system] = peers.case(system, 'one', args.one, 'one')
            figure('%s_resume_p50' % system, percentile(r['times'], 50) * 1e3, 'ms')
            figure('%s_resume_p99' % system, percentile(r['times'], 99) * 1e3, 'ms')
            figure('%s_one_at_a_time_msgs_per_s' % system, r['messages'] / r['seconds'],
                   'msg/s', '%.0f')
        burst = {}
        for system in SYSTEMS:
            r = burst[system] = peers.case(system, 'burst', args.burst, 'burst')
            figure('%s_burst_msgs_per_s' % system, r['messages'] / r['seconds'], 'msg/s', '%.0f')
        r = burst['ostinato']
        figure('ostinato_burst_with_intake_msgs_per_s',
               r['messages'] / (r['seconds'] + r['intake_seconds']), 'msg/s', '%.0f')
        rss = {}
        sizes = sorted({10, args.waiting})
        for n in sizes:
            for system in SYSTEMS:
                r = peers.case(system, 'sample', n, 'waiting%d' % n, args.resumes)
                rss[system, n] = r['rss_mb']
                figure('%s_rss_mb_waiting_%d' % (system, n), r['rss_mb'], 'MB', '%.1f')
                figure('%s_resume_ms_waiting_%d' % (system, n),
                       statistics.median(r['times']) * 1e3, 'ms')

        ours, theirs = one['ostinato']['times'], one['langgraph']['times']
        ratio('resume_p50', percentile(ours, 50), percentile(theirs, 50))
        ratio('resume_p99', percentile(ours, 99), percentile(theirs, 99))
        for n in sizes:
            ratio('rss_mb_waiting_%d' % n, rss['ostinato', n], rss['langgraph', n])
        rate = {s: burst[s]['messages'] / burst[s]['seconds'] for s in SYSTEMS}
        ratio('burst_msgs_per_s', rate['ostinato'], rate['langgraph'])
        r = burst['ostinato']
        ratio('burst_with_intake_msgs_per_s',
              r['messages'] / (r['seconds'] + r['intake_seconds']), rate['langgraph'])
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == '__main__':
    main()
