"""Cancelling a task and retrying a parked one (the operator's tools for a
task that waits for something that will not come, or that the runtime
stopped): a cancelled task gets a catchable Error where it waits and its
waiters wake when it ends; a parked task runs again from its last commit."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys

import pytest

from ostinato.runtime.runner import run_file
from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.store import Store

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')

WAITERS = '''\
type Box:
    var n = 0
box = Box()
def stuck(kind):
    try:
        if kind == 'change':
            wait until box.n > 0
        else if kind == 'sleep':
            sleep(100000)
        else:
            take(Queue())
        print("{kind}: not cancelled")
    catch e:
        print("{kind}: {e.message}")
        return kind
t1 = spawn(stuck, 'change')
t2 = spawn(stuck, 'sleep')
t3 = spawn(stuck, 'take')
spawn:
    wait until t1.done and t2.done and t3.done
    print("watcher saw {t1.result}, {t2.result}, {t3.result}")
spawn:
    print("all waiting")
'''


def _run(path, db):
    out, err = io.StringIO(), io.StringIO()
    store = Store(db)
    try:
        status = run_file(str(path), out, err, store=store)
    finally:
        store.close()
    return status, out.getvalue(), err.getvalue()


def _with_world(db, fn):
    store = Store(db)
    try:
        result = fn(store.world, Scheduler(store.world))
        store.commit()
        return result
    finally:
        store.close()


def _run_until_waiting(prog, db):
    """`ostinato run` until every task waits, then Ctrl-C (the tasks stay
    waiting in the database)."""
    p = subprocess.Popen([BIN, 'run', '--db', db, str(prog)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stdout:
            if line == 'all waiting\n':
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err


@pytest.mark.slow
def test_cancel_raises_where_each_task_waits_and_wakes_its_waiters(tmp_path):
    prog = tmp_path / 'w.ost'
    prog.write_text(WAITERS)
    db = str(tmp_path / 'db.fs')
    _run_until_waiting(prog, db)

    def cancel_all(world, sched):
        stuck = [t for t in world.tasks.values() if t.name == 'stuck']
        assert len(stuck) == 3
        return [sched.cancel(t) for t in stuck]
    assert _with_world(db, cancel_all) == [None, None, None]
    status, out, err = _run(prog, db)
    assert status == 0, err
    assert sorted(out.splitlines()) == [
        'change: cancelled by the operator', 'sleep: cancelled by the operator',
        'take: cancelled by the operator', 'watcher saw change, sleep, take']
    r = subprocess.run([BIN, 'db', 'check', '--db', db], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_an_ended_task_cannot_be_cancelled(tmp_path):
    prog = tmp_path / 'p.ost'
    prog.write_text('print("hi")\n')
    db = str(tmp_path / 'db.fs')
    _run(prog, db)
    assert 'has ended already' in _with_world(db, lambda w, s: s.cancel(w.main_task))


@pytest.mark.slow           # a runaway loop runs until its turn limit
def test_a_parked_task_runs_again_when_retried(tmp_path, monkeypatch):
    prog = tmp_path / 'p.ost'
    prog.write_text('''\
type Flag:
    var go = false
flag = Flag()
def loop():
    while not flag.go:
        try:
            while not flag.go:
                x = 1
        catch e:
            x = 2
    print("loop ended")
spawn loop()
''')
    db = str(tmp_path / 'db.fs')
    monkeypatch.setattr(Scheduler, 'TURN_LIMIT', 0.5)
    status, out, err = _run(prog, db)
    assert 'went on after that error' in err, err

    def parked(world, sched):
        (t,) = [t for t in world.tasks.values() if t.name == 'loop']
        assert (t.state, t.parked) == ('failed', True)
        assert sched.retry(world.main_task) is not None     # not parked: refused
        world.modules['p'].ns['flag'].vals['go'] = True
        world.modules['p'].ns['flag']._p_changed = True
        return sched.retry(t)
    assert _with_world(db, parked) is None
    status, out, err = _run(prog, db)
    assert out == 'loop ended\n', err


# ------------------------------------------------------------ the command line

def ost(args, cwd, **kw):
    return subprocess.run([BIN] + args, cwd=cwd, capture_output=True, text=True, timeout=120,
                          **kw)


@pytest.mark.slow          # whole processes
def test_tasks_cancel_on_the_command_line(tmp_path):
    prog = tmp_path / 'w.ost'
    prog.write_text(WAITERS)
    db = str(tmp_path / 'db.fs')
    _run_until_waiting(prog, db)
    store = Store(db)
    try:
        ids = sorted(t.id for t in store.world.tasks.values() if t.name == 'stuck')
    finally:
        store.close()
    for tid in ids:
        r = ost(['tasks', 'cancel', str(tid), '--db', db], tmp_path)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith('task %d (stuck) cancelled' % tid)
        assert 'no serve runs on' in r.stdout
    r = ost(['run', '--db', db, str(prog)], tmp_path)
    assert 'watcher saw change, sleep, take' in r.stdout, r.stdout + r.stderr


@pytest.mark.slow          # whole processes
def test_tasks_cancel_reaches_a_running_serve(tmp_path):
    prog = tmp_path / 'w.ost'
    prog.write_text(WAITERS)
    db = str(tmp_path / 'db.fs')
    serve = subprocess.Popen([BIN, 'serve', '--db', db, str(prog)], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in serve.stdout:
            if line == 'all waiting\n':
                break
        r = ost(['tasks', '--db', db, '--json'], tmp_path)
        import json
        stuck = [t['id'] for t in json.loads(r.stdout) if t['name'] == 'stuck']
        assert len(stuck) == 3, r.stdout
        for tid in stuck:
            r = ost(['tasks', 'cancel', str(tid), '--db', db], tmp_path)
            assert r.returncode == 0 and 'no serve runs' not in r.stdout, r.stdout + r.stderr
        seen = []
        for line in serve.stdout:
            seen.append(line)
            if line.startswith('watcher saw'):
                break
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
    assert seen[-1] == 'watcher saw change, sleep, take\n', seen


@pytest.mark.slow          # whole processes
def test_tasks_cancel_and_retry_say_what_is_wrong(tmp_path):
    prog = tmp_path / 'p.ost'
    prog.write_text('print("hi")\n')
    db = str(tmp_path / 'db.fs')
    ost(['run', '--db', db, str(prog)], tmp_path)
    r = ost(['tasks', 'cancel', '99', '--db', db], tmp_path)
    assert r.returncode == 2 and 'no task with id 99' in r.stderr, r.stderr
    r = ost(['tasks', 'retry', '1', '--db', db], tmp_path)
    assert r.returncode == 2 and 'is not parked' in r.stderr, r.stderr
    r = ost(['tasks', 'cancel', '--db', db], tmp_path)
    assert r.returncode == 2 and 'usage: ostinato tasks' in r.stderr, r.stderr
    r = ost(['tasks', 'cancel', '1', '--db', db], tmp_path)
    assert r.returncode == 2 and 'has ended already' in r.stderr, r.stderr


@pytest.mark.slow          # whole processes
def test_tasks_retry_on_the_command_line(tmp_path):
    prog = tmp_path / 'p.ost'
    prog.write_text('''\
type Flag:
    var go = false
flag = Flag()
def loop():
    while not flag.go:
        try:
            while not flag.go:
                x = 1
        catch e:
            x = 2
    print("loop ended")
spawn loop()
''')
    db = str(tmp_path / 'db.fs')
    r = ost(['run', '--turn-limit', '0.5', '--db', db, str(prog)], tmp_path)
    assert 'went on after that error' in r.stderr, r.stderr
    r = ost(['tasks', '--db', db], tmp_path)
    assert 'loop' in r.stdout and 'failed' in r.stdout, r.stdout
    tid = int([ln for ln in r.stdout.splitlines() if ' loop ' in ln][0].split()[0])
    r = ost(['repl', '--db', db], tmp_path, input='import p\np.flag.go = true\n')
    assert r.returncode == 0, r.stderr
    r = ost(['tasks', 'retry', str(tid), '--db', db], tmp_path)
    assert r.returncode == 0 and 'runs again from its last commit' in r.stdout, r.stderr
    # The run had ended, so this one starts the program again too: its new
    # loop is parked after half a second rather than the default 30.
    r = ost(['run', '--turn-limit', '0.5', '--db', db, str(prog)], tmp_path)
    assert r.stdout == 'loop ended\n', r.stderr



def test_a_stop_request_takes_no_lock_the_interrupted_thread_may_hold(tmp_path):
    """Ctrl-C's handler runs in the main thread between two bytecodes --
    perhaps inside the run loop's `wakeup.wait`, holding that event's lock.
    Had the handler taken a lock, the run would hang for ever (CI once saw a
    Ctrl-C ignored for two minutes): so asking for a stop takes none."""
    import threading
    from ostinato.runtime import scheduler as scheduler_module

    class SignalInsideTheWait:
        """A service whose poll plays the signal arriving while the loop's
        thread holds its wake-up event's lock."""
        def poll(self, sched):
            with sched.wakeup._cond:
                scheduler_module.request_stop()

        def busy(self, sched):
            return True          # the run goes on: a reply is expected

        def wait(self, seconds):
            pass

    store = Store(str(tmp_path / 'db.fs'))
    outcome = []
    try:
        sched = Scheduler(store.world)
        sched.services = [SignalInsideTheWait()]
        t = threading.Thread(target=lambda: outcome.append(sched.run()), daemon=True)
        t.start()
        t.join(60)       # not a speed limit: a deadlock never ends
        assert outcome == ['stopped'], 'the stop request blocked on a lock'
    finally:
        scheduler_module.STOP.clear()
        store.close()
