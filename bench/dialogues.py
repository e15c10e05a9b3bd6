"""The benchmarks' dialogue workload on Ostinato, driven as a chat channel
drives it (shared by bench/durable.py and bench/peers.py; not a benchmark by
itself).

The program is bench/dialogue.ost: one task per chat thread that waits for
the user's message, counts its words, replies and waits again, ten turns.
A message comes in the way the console and Telegram bring one
(effects/channels/chat.py `receive`): appended to its thread in a transaction of its
own, which wakes the thread's task (or, for a thread's first message, puts
the thread into `new_threads()`, and the program's main task spawns its
dialogue).  The replies go to the durable outbox of a channel named `bench`,
so each reply is a committed outbox entry, as a Telegram reply is before it
is sent; a build of waiting dialogues then takes its replies out of the
outbox as a channel does once they went out, while the measured runs leave
theirs in it (sending is no part of what they measure).

The database is a FileStorage, and every commit is fsynced: ZODB's
FileStorage calls fsync in every `tpc_finish` and has no setting to skip it
(`fsync_count` counts the calls, to show it).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import random
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (ROOT, HERE):      # ostinato, and the LangGraph side beside this file
    if _p not in sys.path:
        sys.path.insert(0, _p)

from ostinato.effects.channels.chat import channels_module, new_user, receive  # noqa: E402
from ostinato.runtime import scheduler as _scheduler  # noqa: E402
from ostinato.runtime.scheduler import Scheduler  # noqa: E402
from ostinato.runtime.store import Store  # noqa: E402
from ostinato.runtime.txn import StoreTransactions, Transactions  # noqa: E402

PROGRAM = os.path.join(HERE, 'dialogue.ost')
CHANNEL = 'bench'
TURNS = 10                 # messages (and replies) in a whole dialogue

# FileStorage fsyncs through this module-level name: counting the calls shows
# that every commit reaches the disk.
_fs = importlib.import_module('ZODB.FileStorage.FileStorage')   # the module, not the class
_fsyncs = [0]
_real_fsync = _fs.fsync


def _counting_fsync(fd):
    _fsyncs[0] += 1
    return _real_fsync(fd)


_fs.fsync = _counting_fsync


def fsync_count():
    """fsync calls FileStorage made in this process so far."""
    return _fsyncs[0]


def message_text(dialogue, turn):
    """The user's message `turn` (1..TURNS) of dialogue number `dialogue`:
    the same text on every system measured."""
    return 'turn %d of dialogue %d: what could I cook tonight with rice, beans and a lime?' % (
        turn, dialogue)


class BatchCommits(StoreTransactions):
    """Building a database, not measured: one commit every `every` turns (a
    transaction of its own, an intake, counts as a turn)."""

    transact = Transactions.transact

    def __init__(self, store, every):
        super().__init__(store)
        self.every = every
        self.turns = 0

    def commit(self):
        self.turns += 1
        if self.turns % self.every == 0:
            self.store.commit()


class OstinatoDialogues:
    """A FileStorage database running bench/dialogue.ost, with the hooks that
    `ostinato run` sets (runtime/runner.py): each scheduler turn is committed,
    a conflict aborts it, and each incoming message is a transaction of its
    own.  Opening a new database starts the program."""

    name = 'ostinato'

    def __init__(self, path):
        self.path = path
        self.turn_times = []      # resume(): intake committed -> reply committed (s)
        # Written to the database file and fsync calls, by the intakes of
        # messages and by the turns that answer them.
        self.written = {'intake': 0, 'turn': 0}
        self.fsyncs = {'intake': 0, 'turn': 0}
        self.cpu = {'intake': 0.0, 'turn': 0.0}   # process CPU time (s)
        self.commits = []         # (tid before, last tid after, what) of each counted block
        self.store = Store(path)
        self.sched = Scheduler(self.store.world, out=io.StringIO(), err=sys.stderr)
        # What runtime/runner.py `run_file` sets (keep them the same).
        self.sched.txn = StoreTransactions(self.store)
        self.sched.recover()
        if channels_module(self.world) is None:
            self.sched.start_main(PROGRAM)
            self.store.commit()
        self.sched.run()

    @property
    def world(self):
        return self.sched.world

    # ------------------------------------------------------------ messages
    def receive(self, dialogue, text):
        """The user of dialogue number `dialogue` says `text` (within the
        caller's transaction)."""
        key = '%s:%d' % (CHANNEL, dialogue)
        thread = channels_module(self.world).ns['threads'].d.get(key)
        if thread is not None:
            user = thread.get('user')
        else:
            name = 'user%d' % dialogue
            user = new_user(self.world, name, name)
        receive(self.sched, key, CHANNEL, str(dialogue), user, text)

    def deliver(self, dialogue, text):
        """One incoming message, committed in a transaction of its own."""
        self.sched.transact(lambda: self.receive(dialogue, text))

    def deliver_many(self, pairs):
        """Several incoming messages in one transaction."""
        def take():
            for dialogue, text in pairs:
                self.receive(dialogue, text)
        self.sched.transact(take)

    def run(self):
        """Run until every task waits (each turn committed)."""
        return self.sched.run()

    # ------------------------------------------------------------ the cases' protocol
    def resume(self, dialogue, text):
        """One message in flight: take it in (its transaction), run until the
        reply is committed.  Keeps the time from the intake's commit to the
        reply's commit (`turn_times`)."""
        before = self.replies()
        self.deliver_all([(dialogue, text)])
        t0 = time.perf_counter()
        self.process()
        self.turn_times.append(time.perf_counter() - t0)
        if self.replies() != before + 1:
            raise RuntimeError('dialogue %d did not reply once' % dialogue)

    def deliver_all(self, pairs):
        """Messages that arrive before they are processed: each taken in by a
        transaction of its own, as a channel takes them."""
        with self.counting('intake'):
            for dialogue, text in pairs:
                self.deliver(dialogue, text)

    def process(self):
        """Answer every message taken in."""
        with self.counting('turn'):
            self.run()

    @contextlib.contextmanager
    def counting(self, what):
        """Add what the block writes and fsyncs to the `what` counters, and
        note its transactions for `records`."""
        size, syncs = self.size(), fsync_count()
        tid = self.store.storage.lastTransaction()
        cpu = time.process_time()
        try:
            yield
        finally:
            self.cpu[what] += time.process_time() - cpu
            self.written[what] += self.size() - size
            self.fsyncs[what] += fsync_count() - syncs
            after = self.store.storage.lastTransaction()
            if after != tid:
                self.commits.append((tid, after, what))

    def records(self):
        """What the counted blocks' commits wrote: {what: (records,
        persistent references)}, read back from the file (counting while
        committing would slow what is timed).  A persistent reference is a
        stored object named inside another's record: ZODB's serializer runs
        its Python `persistent_id` for each, and for every other object
        inside a record too."""
        return count_records(self.store.storage, self.commits)

    def run_replies(self, count):
        """Run until at least `count` more replies are committed, or nothing
        can run; returns the replies committed.  (The run is stopped as
        Ctrl-C stops one: at the next turn boundary, after that turn's
        commit.)"""
        goal = self.replies() + count
        txn = self.sched.txn
        commit = txn.commit

        def commit_and_count():
            commit()
            if self.replies() >= goal:
                _scheduler.request_stop()
        txn.commit = commit_and_count
        start = self.replies()
        try:
            with self.counting('turn'):
                self.sched.run()
        finally:
            del txn.commit
            _scheduler.STOP.clear()
        return self.replies() - start

    def replies(self):
        """Replies ever written to the outbox (committed or not)."""
        return self.world.outbox.last_seq()

    def sent(self):
        """Take the replies out of the outbox as a channel does once they went
        out (effects/channels/telegram.py `confirm`), in the caller's transaction."""
        box = self.world.outbox
        for seq in list(box.pending.keys()):
            box.remove(seq)

    def size(self):
        """Bytes in the database file (FileStorage only appends)."""
        return os.path.getsize(self.path)

    def close(self):
        self.store.close()

    # ------------------------------------------------------------ building
    @classmethod
    def build(cls, path, n):
        """A new database at `path` holding `n` dialogues that each had their
        first message and reply (sent: out of the outbox) and wait for the
        next.  The build is set-up, not what is measured: it takes the first
        messages in twenty transactions or fewer (each rewrites the channel's
        map of all threads, so more would make the build quadratic) and
        commits the turns in batches too."""
        batch = max(500, -(-n // 20))
        d = cls(path)
        try:
            sched, store = d.sched, d.store
            sched.txn = BatchCommits(store, 2000)
            for lo in range(0, n, batch):
                hi = min(n, lo + batch)
                d.deliver_many([(i, message_text(i, 1)) for i in range(lo, hi)])
                # The new threads in a commit of their own: the turns' new
                # objects would otherwise be pickled through the writer of
                # the threads map, and ZODB clears that pickler's memo (as big
                # as the map) for every one of them.
                store.commit()
                d.run()
                d.sent()
                store.commit()
            if d.replies() != n:
                raise RuntimeError('building %d dialogues made %d replies' % (n, d.replies()))
        finally:
            d.close()

    def extra(self):
        """What this system measures beside the common figures."""
        return {'turn_times': self.turn_times, 'written': self.written, 'fsyncs': self.fsyncs,
                'records': self.records()}


def count_records(storage, commits):
    """{what: (records, persistent references)} written by the
    transactions after `before` up to `last`, for each (before, last, what)
    in `commits` (in commit order), read from the FileStorage `storage`."""
    import pickletools
    from ZODB.utils import p64, u64
    out = {}
    if not commits:
        return out
    spans = [(u64(b), u64(a), what) for b, a, what in commits]
    i = 0
    for txn in storage.iterator(p64(spans[0][0] + 1)):
        t = u64(txn.tid)
        while i < len(spans) and t > spans[i][1]:
            i += 1
        if i == len(spans):
            break
        lo, hi, what = spans[i]
        if not lo < t <= hi:
            continue
        records, refs = out.get(what, (0, 0))
        for r in txn:
            records += 1
            if r.data:
                refs += sum(1 for op, _, _ in pickletools.genops(r.data)
                            if op.name in ('BINPERSID', 'PERSID'))
                # A record is two pickles (its class, then its state).
                rest = r.data[_first_pickle_end(r.data):]
                refs += sum(1 for op, _, _ in pickletools.genops(rest)
                            if op.name in ('BINPERSID', 'PERSID'))
        out[what] = (records, refs)
    return out


def _first_pickle_end(data):
    import pickletools
    end = 0
    for op, _, pos in pickletools.genops(data):
        end = pos
        if op.name == 'STOP':
            break
    return end + 1


# ---------------------------------------------------------------- the cases
# Each case runs on an open system (OstinatoDialogues, or LangGraphDialogues in
# bench/langgraph_dialogues.py) whose database holds `dialogues` waiting
# dialogues, numbered from 0, each past its first turn.

def one_at_a_time(system, dialogues):
    """Each dialogue gets its other TURNS - 1 messages, round robin, with one
    message in flight at a time: the time of each (handed in -> reply
    committed) and of the whole."""
    times = []
    start = time.perf_counter()
    for turn in range(2, TURNS + 1):
        for i in range(dialogues):
            t0 = time.perf_counter()
            system.resume(i, message_text(i, turn))
            times.append(time.perf_counter() - t0)
    return {'times': times, 'seconds': time.perf_counter() - start, 'messages': len(times)}


def burst(system, dialogues):
    """Every dialogue gets one message; all arrive before any is processed.
    The time to take them in and the time to answer them all."""
    pairs = [(i, message_text(i, 2)) for i in range(dialogues)]
    t0 = time.perf_counter()
    system.deliver_all(pairs)
    t1 = time.perf_counter()
    before = system.replies()
    system.process()
    t2 = time.perf_counter()
    answered = system.replies() - before
    if answered != dialogues:
        raise RuntimeError('%s answered %d of %d messages' % (system.name, answered, dialogues))
    return {'intake_seconds': t1 - t0, 'seconds': t2 - t1, 'messages': dialogues}


def sample(system, dialogues, resumes, seed=7):
    """`resumes` random dialogues of the `dialogues` waiting get a message,
    one at a time: the time of each."""
    rng = random.Random(seed)
    chosen = rng.sample(range(dialogues), min(resumes, dialogues))
    times = []
    for i in chosen:
        t0 = time.perf_counter()
        system.resume(i, message_text(i, 2))
        times.append(time.perf_counter() - t0)
    return {'times': times, 'messages': len(times)}


def log(*args):
    """Progress, to stderr (stdout has only figures)."""
    print(*args, file=sys.stderr, flush=True)


def figure(name, value, unit, fmt='%.2f'):
    """One figure on stdout: `NAME VALUE UNIT`."""
    print(('%s ' + fmt + ' %s') % (name, value, unit), flush=True)


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]


def peak_rss_mb():
    """This process's peak resident set, in MB: VmHWM of /proc/self/status
    where there is one.  Not ru_maxrss: Linux starts a child's ru_maxrss at
    its parent's peak when the child is spawned with vfork (as Python's
    subprocess does), so a small process started by a big one would report
    the big one's peak."""
    try:
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def system_class(name):
    if name == 'ostinato':
        return OstinatoDialogues
    if name == 'langgraph':
        from langgraph_dialogues import LangGraphDialogues
        return LangGraphDialogues
    raise SystemExit('no system %r (ostinato, langgraph)' % name)


def run_case(system_name, case, db, dialogues, resumes=50):
    """One case in this process: a JSON-able dict of what it measured, with
    the process's peak RSS."""
    cls = system_class(system_name)
    if case == 'build':
        t0 = time.perf_counter()
        cls.build(db, dialogues)
        return {'seconds': time.perf_counter() - t0, 'rss_mb': peak_rss_mb()}
    system = cls(db)
    try:
        if case == 'one':
            out = one_at_a_time(system, dialogues)
        elif case == 'burst':
            out = burst(system, dialogues)
        elif case == 'sample':
            out = sample(system, dialogues, resumes)
        else:
            raise SystemExit('no case %r (build, one, burst, sample)' % case)
        out.update(system.extra())
    finally:
        system.close()
    out['rss_mb'] = peak_rss_mb()
    return out


def run_case_in_subprocess(system_name, case, db, dialogues, resumes=50):
    """run_case in a fresh Python process (what it imports and caches is its
    own, and its RSS is the case's alone)."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), '--system', system_name, '--case', case,
           '--db', db, '--dialogues', str(dialogues), '--resumes', str(resumes)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit('%s %s on %s failed:\n%s' % (system_name, case, db, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description='Run one case of the dialogue workload in this '
                                 'process and print what it measured as one JSON line.')
    ap.add_argument('--system', required=True, help='ostinato or langgraph')
    ap.add_argument('--case', required=True, help='build, one, burst or sample')
    ap.add_argument('--db', required=True, help='the database file')
    ap.add_argument('--dialogues', type=int, required=True, help='dialogues in the database')
    ap.add_argument('--resumes', type=int, default=50, help='messages of the sample case')
    args = ap.parse_args()
    print(json.dumps(run_case(args.system, args.case, args.db, args.dialogues, args.resumes)))


if __name__ == '__main__':
    main()
