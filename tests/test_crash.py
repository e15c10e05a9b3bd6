"""Crash safety of the durable runtime, tested the hard way: the real
`ostinato run` command on a real FileStorage file, killed with SIGKILL at
random moments and started again until a run ends by itself.

The programs in tests/crash/ do their work in steps (sleeps, spawned tasks,
queues, `wait until`, long computations that are checkpointed mid-turn, a
module import whose top level waits, a reactive `for` loop).  Every step
prints a line `step ...` and appends to the module list `log`; the main task
waits for the others and ends by printing `summary N [...]` of that list.
Their steps happen in an order that does not depend on timing (tasks hand
over to each other; two tasks never sleep side by side, since overdue timers
all fire at once after a restart), so every run prints the same lines in the
same order.

What must hold after any number of kills (DESIGN.md §2-§3, docs/language.md §17):
- the database did every step exactly once: the final summary (and the list
  as stored in the database) equals the uninterrupted run's;
- printing is at most once: no step line appears twice across all the runs;
- nothing else is lost or reordered: the runs' outputs, concatenated, are the
  expected output with a few lines missing, each gap right before a kill
  (a line produced between a commit and its write can be lost: FileStorage
  makes the transaction final before its fsync, so the window is an fsync,
  a few ms), and no more gaps than kills (a gap is the lines of one turn);
- no run ends on its own with an error or a Python traceback.

The kill delays are random but seeded (CRASH_SEED, default 1234), so a run
of the test can be replayed with the same delays (where in the program they
land still depends on timing); a failure names the seed, the cycle and every
run's output and stderr.  Each program goes through crash cycles (fresh
database each) until it has seen WANT_KILLS kills; kills are placed by the
lines a run printed, so a loaded machine makes the test slower, not weaker.

Also here: timers that passed while the program was down fire at once on
restart; and a task that prints and then fails prints its output and its
error report at most once (both are written after the turn's commit).
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Slow (kills whole runs again and again): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
CRASH = HERE / 'crash'
_EXE = os.path.join(os.path.dirname(sys.executable), 'ostinato')
OSTINATO = [_EXE] if os.path.exists(_EXE) else [sys.executable, '-m', 'ostinato']
SEED = int(os.environ.get('CRASH_SEED', '1234'))

# Each program is taken through crash cycles (a fresh database, runs killed
# until one ends by itself) until it has seen WANT_KILLS kills; a cycle stops
# killing after MAX_KILLS kills and leaves its last run to finish.  Kills are
# placed by observed progress (lines printed), never by the clock alone, so
# the test means the same on an idle and on a fully loaded machine.
WANT_KILLS = 16
MAX_KILLS = 8
RUN_TIMEOUT = 120        # an uninterrupted run of any program here takes ~3 s idle

PROGRAMS = ['relay', 'pipeline', 'compute', 'reactive', 'burst']


def command(prog, db, mode='run'):
    """`ostinato run` (or `serve`, with the scripted model) of a program in
    tests/crash/ (a name) or of a path."""
    path = prog if isinstance(prog, Path) else CRASH / (prog + '.ost')
    if mode == 'serve':
        return OSTINATO + ['serve', '--llm', 'scripted', '--db', str(db), str(path)]
    return OSTINATO + ['run', '--db', str(db), str(path)]


def env(prog=None):
    e = dict(os.environ)
    e.pop('OSTINATO_DB', None)
    e.pop('PYTHONUNBUFFERED', None)   # output to a file or pipe as a user's would be
    # Kills here are the test's, not crashes of a task: never park one.
    e['OSTINATO_MAX_CRASHES'] = '1000000'
    if prog is not None and not isinstance(prog, Path):
        e['OSTINATO_LLM_SCRIPT'] = str(CRASH / (prog + '.json'))
    return e


class Run:
    """One start of `ostinato run`, its output going to files."""

    def __init__(self, prog, db, folder, n, mode='run'):
        self.out_path = folder / ('run%03d.out' % n)
        self.err_path = folder / ('run%03d.err' % n)
        self.db = db
        self.mode = mode
        with open(self.out_path, 'wb') as out, open(self.err_path, 'wb') as err:
            self.proc = subprocess.Popen(command(prog, db, mode), stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, cwd=folder, env=env(prog))
        self.started = time.monotonic()
        self.killed = False
        _live.append(self)

    def wait(self, timeout):
        """True if the process ended within `timeout` seconds."""
        try:
            self.proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def finish(self, what):
        """Wait for the run to end by itself (`serve` never does: it is
        stopped with SIGTERM once the program's work is complete in the
        database); a hung run is killed and fails the test."""
        if self.mode == 'serve':
            self.serve_until_done(what)
        if not self.wait(RUN_TIMEOUT):
            self.kill()
            raise AssertionError('%s did not end within %d s; output so far:\n%s%s'
                                 % (what, RUN_TIMEOUT, self.out, self.err))

    def serve_until_done(self, what):
        end = time.monotonic() + RUN_TIMEOUT
        while time.monotonic() < end and self.proc.poll() is None:
            if 'summary ' in self.out:
                break
            time.sleep(0.05)
        else:
            if self.proc.poll() is None:
                self.kill()
            raise AssertionError('%s did not complete the program within %d s; output so far:'
                                 '\n%s%s' % (what, RUN_TIMEOUT, self.out, self.err))
        self.proc.send_signal(signal.SIGTERM)

    def printed(self, n, what):
        """Wait until this run has printed `n` lines; False if it ended first.
        A run that neither prints nor ends fails the test."""
        end = time.monotonic() + RUN_TIMEOUT
        while time.monotonic() < end:
            if self.out.count('\n') >= n:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.005)
        self.kill()
        raise AssertionError('%s printed nothing new for %d s; output so far:\n%s%s'
                             % (what, RUN_TIMEOUT, self.out, self.err))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.killed = True

    @property
    def out(self):
        return self.out_path.read_text(encoding='utf-8', errors='replace')

    @property
    def err(self):
        return self.err_path.read_text(encoding='utf-8', errors='replace')


_live = []


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    """A failing test must not leave `ostinato` processes behind."""
    yield
    while _live:
        r = _live.pop()
        if r.proc.poll() is None:
            r.proc.kill()
            r.proc.wait()


def db_state(db):
    """(the run is complete, the module list `log` as the program prints it in
    its summary line) as stored in the FileStorage `db`, opened read-only;
    (False, None) if there is no such state yet.  Complete: the main task
    ended and the run that ended it was not interrupted (a later start would
    run the top level again)."""
    from ZODB import DB
    from ZODB.FileStorage import FileStorage

    from ostinato.runtime.store import ROOT_KEY
    from ostinato.vm.printing import to_str
    if not os.path.exists(db) or os.path.getsize(db) == 0:
        return False, None
    storage = FileStorage(str(db), read_only=True)
    zdb = DB(storage)
    try:
        conn = zdb.open()
        world = conn.root().get(ROOT_KEY)
        if world is None:
            return False, None
        main = world.main_task
        done = bool(main is not None and main.done and not getattr(world, 'run_open', False))
        log = None
        if world.main_path:
            name = os.path.splitext(os.path.basename(world.main_path))[0]
            m = world.modules.get(name) or world.loading.get(name)
            if m is not None and m.ns.get('log') is not None:
                items = m.ns['log']
                log = 'summary %d %s' % (len(items.items), to_str(items))
        conn.close()
        return done, log
    finally:
        zdb.close()


def lines(text):
    return text.splitlines()


def expected_run(prog, tmp_path, mode='run'):
    folder = tmp_path / ('clean-' + prog)
    folder.mkdir()
    r = Run(prog, folder / 'db.fs', folder, 0, mode)
    r.finish('%s: the uninterrupted run' % prog)
    assert r.proc.returncode == 0, (r.out, r.err)
    assert quiet(r), r.err
    out = lines(r.out)
    steps = [l for l in out if l.startswith('step ')]
    assert len(steps) == len(set(steps)) >= 5, out
    assert out[-1].startswith('summary '), out
    return out


def db_check(db):
    """`ostinato db check` on a database no process holds: every live task is
    ready, running, waiting or done."""
    r = subprocess.run(OSTINATO + ['db', 'check', '--db', str(db)], capture_output=True,
                       text=True, env=env(), timeout=RUN_TIMEOUT)
    return r.returncode, r.stdout + r.stderr


def crash_runs(prog, folder, rng, mode='run'):
    """Start the program again and again on one database, killing each run,
    until a run ends by itself; after MAX_KILLS kills the last run is left
    to finish.

    Three kills in four come after the run printed 1-3 lines of its own
    (so after it recovered and made progress), plus a random 0-0.3 s that
    lands them inside later turns, checkpoints and commits; one in four
    comes 0.02-0.5 s after the process started, often during start-up or
    recovery."""
    folder.mkdir()
    db = folder / 'db.fs'
    runs = []
    while True:
        kills = sum(r.killed for r in runs)
        r = Run(prog, db, folder, len(runs), mode)
        runs.append(r)
        if kills >= MAX_KILLS:
            r.finish('%s: the last run' % prog)
            return runs, db
        what = '%s: run %d' % (prog, len(runs) - 1)
        if rng.random() < 0.25:
            delay = rng.uniform(0.02, 0.5)
        elif r.printed(rng.randint(1, 3), what):
            delay = rng.uniform(0.0, 0.3)
        else:
            return runs, db          # it ended by itself
        if r.wait(delay):
            return runs, db
        r.kill()
        if db.exists():
            status, report = db_check(db)
            assert status == 0, 'after kill %d: %s\n%s' % (
                sum(r.killed for r in runs), report, describe(prog, -1, runs))
        # Killed after the run had ended (and committed that): the program is
        # complete, and another start would run its top level again.  (Killed
        # after the main task ended but before the run did: another start
        # resumes the remaining tasks, so the loop goes on.)
        try:
            done = db_state(db)[0]
        except Exception:      # not readable yet; the next run will say more
            done = False
        if done:
            return runs, db


def describe(prog, cycle, runs):
    parts = ['%s, seed %d, cycle %d: %d runs, %d kills' % (
        prog, SEED, cycle, len(runs), sum(r.killed for r in runs))]
    for i, r in enumerate(runs):
        parts.append('--- run %d (%s, exit %s)\n%s%s' % (
            i, 'killed' if r.killed else 'ended', r.proc.returncode, r.out,
            ('stderr:\n' + r.err) if r.err else ''))
    return '\n'.join(parts)


def check_outputs(expected, outputs, kills):
    """The runs' outputs, in order, are consecutive pieces of `expected` with
    gaps only where one run stops and the next starts, at most one per kill
    (the lines of one turn are written together after its commit, so a kill
    there loses all of them); returns the number of missing lines (or raises
    AssertionError saying what is wrong)."""
    pos = 0
    missing = gaps = 0
    for i, out in enumerate(outputs):
        if not out:
            continue
        try:
            start = expected.index(out[0], pos)
        except ValueError:
            raise AssertionError('run %d printed %r, which is not expected after line %d '
                                 '(printed twice, out of order, or unknown)' % (i, out[0], pos))
        missing += start - pos
        gaps += start > pos
        got = expected[start:start + len(out)]
        assert got == out, 'run %d: printed %r where %r was expected' % (i, out, got)
        pos = start + len(out)
    missing += len(expected) - pos
    gaps += len(expected) > pos
    assert gaps <= kills, '%d gaps in the output with only %d kills' % (gaps, kills)
    return missing


@pytest.mark.parametrize('prog,mode', [(p, 'run') for p in PROGRAMS] + [('serve_mix', 'serve')])
def test_crash_and_resume(prog, mode, tmp_path):
    expected = expected_run(prog, tmp_path, mode)
    kills = progressed = cycle = 0
    while kills < WANT_KILLS:
        assert cycle < 40, 'only %d kills in %d cycles' % (kills, cycle)
        rng = random.Random('%d-%s-%d' % (SEED, prog, cycle))
        runs, db = crash_runs(prog, tmp_path / ('crash-%s-%d' % (prog, cycle)), rng, mode)
        check_cycle(prog, cycle, expected, runs, db)
        kills += sum(r.killed for r in runs)
        progressed += sum(1 for r in runs if r.killed and r.out)
        cycle += 1
    # The test did test something: runs killed after they had made progress.
    assert kills >= 10 and progressed >= 5, (kills, progressed)


def quiet(run):
    """Nothing on stderr but serve's own notes (`ostinato: serving ...`)."""
    return all(line.startswith('ostinato: ') and 'error' not in line
               for line in run.err.splitlines())


def check_cycle(prog, cycle, expected, runs, db):
    info = describe(prog, cycle, runs)
    kills = sum(r.killed for r in runs)
    last = runs[-1]
    outputs = [lines(r.out) for r in runs]
    everything = [l for out in outputs for l in out]

    # No run ended on its own with an error; no Python traceback anywhere.
    for r in runs:
        assert 'Traceback' not in r.err and 'internal error' not in r.err, info
    if not last.killed:
        assert last.proc.returncode == 0, info
        assert quiet(last), info
    status, report = db_check(db)
    assert status == 0, report + '\n' + info

    # The database did every step exactly once.
    done, log = db_state(db)
    assert done, 'the run is not complete in the database\n' + info
    summary = expected[-1]
    assert log == summary, 'the database holds %r, want %r\n%s' % (log, summary, info)
    printed = [l for l in everything if l.startswith('summary ')]
    assert len(printed) <= 1, info
    if printed:
        assert printed[0] == summary, info

    # Printing is at most once.
    steps = [l for l in everything if l.startswith('step ')]
    twice = sorted({l for l in steps if steps.count(l) > 1})
    assert not twice, 'printed twice: %r\n%s' % (twice, info)

    # Nothing else lost or out of order.
    try:
        check_outputs(expected, outputs, kills)
    except AssertionError as e:
        raise AssertionError('%s\n%s' % (e, info)) from None


# ------------------------------------------------------------ timers and downtime

DOWNTIME = '''\
spawn:
    sleep(6)
    print("sentinel")
print("start")
sleep(3)
print("woke")
'''


def _wait_for_line(run, text, timeout):
    """Poll the run's output until a line `text` appears; the time it was seen."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in lines(run.out):
            return time.monotonic()
        if run.proc.poll() is not None:
            break
        time.sleep(0.01)
    if text in lines(run.out):
        return time.monotonic()
    raise AssertionError('%r never printed; output %r, stderr %r' % (text, run.out, run.err))


def test_timers_that_passed_during_downtime_fire_at_once(tmp_path):
    """A task sleeping 3 s is killed once it has started sleeping and
    restarted 4 s later: its timer has passed, so it wakes at once on
    restart.  The proof needs no assumption about how fast the machine is:
    a sentinel task's timer is due 6 s after the first start, so the
    sleeper wakes before it (deadlines in order) -- unless its timer were
    started again on restart (then it would be due 7 s or more after the
    first start, after the sentinel's)."""
    prog = tmp_path / 'downtime.ost'
    prog.write_text(DOWNTIME)
    db = tmp_path / 'db.fs'
    first = Run(prog, db, tmp_path, 0)
    _wait_for_line(first, 'start', RUN_TIMEOUT)   # printed: the sleep is committed
    first.kill()
    assert lines(first.out) == ['start'], first.out
    time.sleep(4)                                  # the 3 s timer is overdue

    second = Run(prog, db, tmp_path, 1)
    second.finish('the restarted run')
    assert second.proc.returncode == 0 and second.err == '', second.err
    assert lines(second.out) == ['woke', 'sentinel'], second.out



# ------------------------------------------------------------ a task that fails

FAILING_TASK = '''\
big = list(0..500000)
sleep(0.05)
def doomed():
    print("doomed task printed this")
    append(big, 1)
    raise('boom')
spawn doomed()
sleep(0.3)
print("main end")
'''


def test_failing_task_prints_at_most_once(tmp_path):
    """A task prints a line, changes a big list (so its turn's commit takes a
    moment) and fails.  The run is killed the instant the line appears; the
    next run must not print the line, nor the error report, again."""
    prog = tmp_path / 'failing.ost'
    prog.write_text(FAILING_TASK)
    tried = 0
    for attempt in range(10):
        if tried == 5:
            break
        folder = tmp_path / ('attempt%d' % attempt)
        folder.mkdir()
        db = folder / 'db.fs'
        first = subprocess.Popen(command(prog, db), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                 text=True, cwd=folder, env=env())
        try:
            out1 = []
            for line in first.stdout:
                out1.append(line.rstrip('\n'))
                if line.startswith('doomed'):
                    first.send_signal(signal.SIGKILL)
                    break
        finally:
            if first.poll() is None:
                first.kill()
            first.wait()
        err1 = first.stderr.read()
        first.stdout.close()
        first.stderr.close()
        if db_state(db)[0]:
            # On a loaded machine the run may end before the kill lands: a
            # new run would run the program again, which tests nothing.
            continue
        tried += 1
        second = subprocess.run(command(prog, db), capture_output=True, text=True,
                                cwd=folder, env=env(), timeout=RUN_TIMEOUT)
        out = out1 + lines(second.stdout)
        reports = (err1 + second.stderr).count('error: boom')
        assert out.count('doomed task printed this') == 1 and reports <= 1, (
            'attempt %d: printed %r, stderr %r then %r' % (attempt, out, err1, second.stderr))
    assert tried, 'every run ended before it could be killed'

