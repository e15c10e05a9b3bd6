"""`ostinato db check`: every live task is ready, running, waiting or done;
a task in none of these (an orphan) is found and `--repair` queues it
again, so nothing waits forever for a turn that will never come."""
from __future__ import annotations

import pytest

import os
import subprocess
import sys

from ostinato.runtime.store import Store

# Slow (whole runs and db check): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')

PROG = '''\
type Box:
    var n = 0
box = Box()
spawn:
    try:
        sleep(0.2)
        print('sleeper woke')
    catch e:
        print("sleeper: {e.message}")
spawn:
    wait until box.n > 0
    print("waiter saw {box.n}")
spawn:
    print('third ran')
box.n = 1
'''


def ost(args, cwd):
    return subprocess.run([BIN] + args, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, OSTINATO_TEST_EXIT_AT_SUSPEND='1'))


def make(tmp_path):
    """A database stopped at its first suspension: the main task sleeps
    nowhere yet, three spawned tasks wait in the ready queue."""
    (tmp_path / 'p.ost').write_text(PROG)
    db = str(tmp_path / 'db.fs')
    r = ost(['run', '--db', db, 'p.ost'], tmp_path)
    assert r.returncode == 75, r.stderr
    return db


def test_a_healthy_database_checks_ok(tmp_path):
    db = make(tmp_path)
    r = ost(['db', 'check', '--db', db], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith('ok: '), r.stdout + r.stderr


def test_orphans_are_found_and_repaired(tmp_path):
    db = make(tmp_path)
    store = Store(db)
    try:
        w = store.world
        # Lose two tasks as a crash at the wrong moment would: one taken off
        # the queue, one sleeping whose timer is gone.
        ready = list(w.ready)
        lost = ready[-1]
        w.ready.remove(lost)
        sleeper = None
        for t in ready:
            if t is not lost and t.name == '<spawn>':
                sleeper = t
                break
        store.commit()
    finally:
        store.close()
    r = ost(['db', 'check', '--db', db], tmp_path)
    assert r.returncode == 1, r.stdout
    assert 'is in no queue and waits for nothing' in r.stdout
    assert '`ostinato db check --repair` fixes them' in r.stdout
    r = ost(['db', 'check', '--repair', '--db', db], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'repaired: task %d' % lost.id in r.stdout
    r = ost(['db', 'check', '--db', db], tmp_path)
    assert r.returncode == 0, r.stdout
    # The repaired database runs to its end: nothing lost.
    r = subprocess.run([BIN, 'run', '--db', db, 'p.ost'], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ['sleeper woke', 'third ran', 'waiter saw 1']
    assert sleeper is not None


def test_a_lost_wait_ends_with_a_catchable_error(tmp_path):
    db = make(tmp_path)
    # Run until the spawned sleeper sleeps, then lose its timer.
    r = ost(['run', '--db', db, 'p.ost'], tmp_path)
    store = Store(db)
    try:
        w = store.world
        sleepers = [k for k, t in w.timers.items()]
        for _ in range(10):
            if sleepers:
                break
            store.close()
            ost(['run', '--db', db, 'p.ost'], tmp_path)
            store = Store(db)
            w = store.world
            sleepers = [k for k, t in w.timers.items()]
        assert sleepers, 'no sleeping task to lose'
        for k in sleepers:
            del w.timers[k]
        store.commit()
    finally:
        store.close()
    r = ost(['db', 'check', '--repair', '--db', db], tmp_path)
    assert r.returncode == 0 and 'queued again' in r.stdout, r.stdout + r.stderr
    r = subprocess.run([BIN, 'run', '--db', db, 'p.ost'], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert 'sleeper: the wait of this task was lost' in r.stdout, r.stdout + r.stderr
