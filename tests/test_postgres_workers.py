"""Several `serve` workers, as separate processes, on one PostgreSQL
database: a worker that dies holding a task's claim (kill -9 in its turn)
gives it back to the others within seconds (runtime/serve.py's reclaim:
its advisory lock is free once the server ended its session); a worker
killed at any moment under load loses and repeats nothing; exactly one
worker polls Telegram, and another takes over when it dies."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow       # whole processes on a database server

HERE = Path(__file__).resolve().parent
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def env(**extra):
    e = dict(os.environ)
    for k in ('OSTINATO_DB', 'OSTINATO_LLM', 'OSTINATO_LLM_SCRIPT', 'TELEGRAM_BOT_TOKEN',
              'OSTINATO_TEST_DIE_IN_TURN'):
        e.pop(k, None)
    e.update(extra)
    return e


def ost(*args, cwd, input=None):
    return subprocess.run([BIN, *args], cwd=cwd, env=env(), input=input, capture_output=True,
                          text=True, timeout=300)


def wait_for(pred, what, timeout=300):
    # Generous: the machine may be loaded; only a hang fails.
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.1)
    pytest.fail('timed out waiting for %s' % what)


class Worker:
    def __init__(self, tmp_path, db, name, *extra, **envs):
        self.name = name
        self.err_path = tmp_path / ('%s.err' % name)
        self.out_path = tmp_path / ('%s.out' % name)
        self.proc = subprocess.Popen(
            [BIN, 'serve', '--db', db, '--worker', name, *extra], cwd=tmp_path,
            env=env(**envs), stdin=subprocess.DEVNULL,
            stdout=open(self.out_path, 'w'), stderr=open(self.err_path, 'w'))

    def err(self):
        return self.err_path.read_text()

    def out(self):
        return self.out_path.read_text()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def test_the_claim_of_a_worker_killed_in_its_turn_returns(tmp_path, pg_db):
    shutil.copy(HERE / 'pg' / 'crunch.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'crunch.ost', cwd=tmp_path)
    assert r.stdout == 'queued\n', r.stderr
    w1 = Worker(tmp_path, pg_db, 'w1', OSTINATO_TEST_DIE_IN_TURN='crunch')
    w2 = None
    try:
        wait_for(lambda: 'serving' in w1.err(), 'w1 to start')
        r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import crunch\ncrunch.flag.go = true\n')
        assert r.returncode == 0, r.stderr
        assert w1.proc.wait(300) == 137          # died in the turn, as kill -9 would
        r = ost('tasks', '--db', pg_db, cwd=tmp_path)
        assert 'running' in r.stdout, r.stdout      # still claimed by the dead worker
        started = time.time()
        w2 = Worker(tmp_path, pg_db, 'w2')
        wait_for(lambda: 'worker w1 is gone' in w2.err(), 'w2 to take the claim back')
        took = time.time() - started
        wait_for(lambda: 'crunched' in w2.out(), 'w2 to finish the task')
        r = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
        assert r.returncode == 0, r.stdout
    finally:
        w1.stop()
        if w2 is not None:
            w2.stop()
    assert 'Traceback' not in w2.err(), w2.err()
    print('the claim came back %.1f s after the second worker started' % took)


def test_workers_killed_at_random_lose_and_repeat_nothing(tmp_path, pg_db):
    """Two workers share 12 jobs of 4 steps; one is killed (-9) at a random
    moment and started again: each step is logged exactly once."""
    shutil.copy(HERE / 'serve' / 'workers.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'workers.ost', cwd=tmp_path)
    assert r.stdout == 'queued\n', r.stderr
    workers = [Worker(tmp_path, pg_db, 'w1'), Worker(tmp_path, pg_db, 'w2')]
    check = 'import workers\nprint(length(workers.log))\n'

    def logged():
        out = ost('repl', '--db', pg_db, cwd=tmp_path, input=check).stdout.strip()
        return int(out) if out.isdigit() else -1
    try:
        for w in workers:
            wait_for(lambda w=w: 'serving' in w.err(), 'the workers to start')
        r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import workers\nworkers.flag.go = true\n')
        assert r.returncode == 0, r.stderr
        wait_for(lambda: logged() >= random.randint(4, 16), 'some steps')
        workers[0].proc.kill()
        workers[0].proc.wait()
        wait_for(lambda: logged() >= 24, 'more steps by the other worker')
        workers[0] = Worker(tmp_path, pg_db, 'w1')
        wait_for(lambda: logged() == 48, 'every step')
        r = ost('repl', '--db', pg_db, cwd=tmp_path,
                input='import workers\nprint(sjoin(sorted(workers.log), " "))\n')
        r2 = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
    finally:
        for w in workers:
            w.stop()
    assert r.stdout.split() == sorted('%d.%d' % (n, s) for n in range(12) for s in range(4))
    assert r2.returncode == 0, r2.stdout
    for w in workers:
        assert 'Traceback' not in w.err(), w.err()


def test_one_worker_polls_telegram_and_another_takes_over(tmp_path, pg_db):
    from fakes.telegram import TOKEN, FakeTelegram
    shutil.copy(HERE / 'telegram' / 'counter.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'counter.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with FakeTelegram() as tg:
        tel = dict(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=tg.url,
                   TELEGRAM_ALLOWED_USERS='42', TZ='UTC')
        workers = [Worker(tmp_path, pg_db, name, '--telegram', **tel) for name in ('w1', 'w2')]

        def texts():
            return [s['text'] for s in list(tg.sent) if s['chat_id'] == 42]

        def pollers():
            return [w for w in workers if 'holds the telegram lock' in w.err()]
        try:
            for w in workers:
                wait_for(lambda w=w: 'serving' in w.err(), 'the workers to start')
            tg.user_writes(42, 'one')
            wait_for(lambda: '1: one' in texts(), 'the first reply')
            holders = pollers()
            assert len(holders) == 1, [w.err() for w in workers]
            holder = holders[0]
            other = workers[1 - workers.index(holder)]
            # Both look for a while: still only one polls.
            time.sleep(2)
            assert pollers() == [holder]
            holder.proc.kill()
            holder.proc.wait()
            tg.user_writes(42, 'two')
            wait_for(lambda: '2: two' in texts(), 'the reply after the takeover')
            assert 'holds the telegram lock' in other.err()
        finally:
            for w in workers:
                w.stop()
    assert texts() == ['1: one', '2: two']          # nothing lost, nothing twice
    assert 'Traceback' not in other.err(), other.err()


def restart_postgresql():
    """Restart the local PostgreSQL cluster the tests use (Debian's
    pg_ctlcluster; OSTINATO_TEST_PG_RESTART names another command)."""
    command = os.environ.get('OSTINATO_TEST_PG_RESTART')
    if not command:
        listed = subprocess.run(['pg_lsclusters', '-h'], capture_output=True, text=True)
        online = [ln.split() for ln in listed.stdout.splitlines() if 'online' in ln]
        if not online:
            pytest.fail('no online PostgreSQL cluster to restart (pg_lsclusters): %s'
                        % listed.stdout)
        command = 'pg_ctlcluster %s %s restart' % (online[0][0], online[0][1])
    r = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_workers_wait_for_a_restarted_postgresql_and_go_on(tmp_path, pg_db):
    shutil.copy(HERE / 'serve' / 'workers.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'workers.ost', cwd=tmp_path)
    assert r.stdout == 'queued\n', r.stderr
    workers = [Worker(tmp_path, pg_db, 'w1'), Worker(tmp_path, pg_db, 'w2')]
    check = 'import workers\nprint(length(workers.log))\n'

    def logged():
        out = ost('repl', '--db', pg_db, cwd=tmp_path, input=check).stdout.strip()
        return int(out) if out.isdigit() else -1
    try:
        for w in workers:
            wait_for(lambda w=w: 'serving' in w.err(), 'the workers to start')
        r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import workers\nworkers.flag.go = true\n')
        assert r.returncode == 0, r.stderr
        wait_for(lambda: logged() >= 8, 'some steps')
        restart_postgresql()
        wait_for(lambda: logged() == 48, 'every step after the restart')
        r = ost('repl', '--db', pg_db, cwd=tmp_path,
                input='import workers\nprint(sjoin(sorted(workers.log), " "))\n')
        r2 = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
    finally:
        for w in workers:
            w.stop()
    assert r.stdout.split() == sorted('%d.%d' % (n, s) for n in range(12) for s in range(4))
    assert r2.returncode == 0, r2.stdout
    for w in workers:
        err = w.err()
        assert w.proc.returncode == 0, err
        assert 'Traceback' not in err and 'internal error' not in err, err
        # A worker that was between two looks at the database may not have
        # noticed; one that did says so once, and once that it goes on.
        assert err.count('PostgreSQL does not answer') <= 1, err
        assert err.count('PostgreSQL does not answer') == err.count('answers again'), err
        lines = [ln for ln in err.splitlines() if ln.startswith('ostinato: worker')]
        assert all('serving' in ln or 'PostgreSQL' in ln or 'holds' in ln for ln in lines), err


def test_any_worker_serves_the_web_page(tmp_path, pg_db):
    """Two workers with --web on one database: a user signed in on either
    is answered (by whichever worker runs the turn); one killed, the other
    still serves."""
    from web_support import Client, free_port
    shutil.copy(HERE / 'telegram' / 'counter.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'counter.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ports = [free_port(), free_port()]
    workers = [Worker(tmp_path, pg_db, 'w%d' % i, '--web', '127.0.0.1:%d' % port,
                      USER='ann', TZ='UTC')
               for i, port in enumerate(ports)]

    def signed_in(port, name):
        out = ost('web', 'invite', name, '--db', pg_db, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        link = out.stdout.strip()
        link = 'http://127.0.0.1:%d/login?%s' % (port, link.split('/login?', 1)[1])
        c = Client('http://127.0.0.1:%d' % port)
        c.login(link)
        return c

    def replied(c, want):
        def look():
            r = c.get('/api/conversations/1')
            return r.status_code == 200 and want in [m['text'] for m in r.json()['messages']]
        return look
    try:
        for w in workers:
            wait_for(lambda w=w: 'serving' in w.err(), 'the workers to start')
        ann = signed_in(ports[0], 'ann')
        bo = signed_in(ports[1], 'bo')
        assert ann.send('hello').status_code == 200
        assert bo.send('hi').status_code == 200
        wait_for(replied(ann, '1: hello'), 'the reply on the first worker')
        wait_for(replied(bo, '1: hi'), 'the reply on the second worker')
        workers[0].proc.kill()
        workers[0].proc.wait()
        assert bo.send('again', conversation=1).status_code == 200
        wait_for(replied(bo, '2: again'), 'the reply after the other worker died')
    finally:
        for w in workers:
            w.stop()
    assert 'Traceback' not in workers[1].err(), workers[1].err()


def test_a_model_request_of_a_killed_worker_is_asked_again_by_another(tmp_path, pg_db):
    from fakes.ollama import FakeOllama
    shutil.copy(HERE / 'pg' / 'ask.ost', tmp_path)
    r = ost('run', '--db', pg_db, 'ask.ost', cwd=tmp_path)
    assert r.stdout == 'queued\n', r.stderr
    answer = {'action': 'answer', 'text': 'Paris'}
    with FakeOllama() as fake:
        fake.hold(answer)           # the first worker's request: never answered
        w1 = Worker(tmp_path, pg_db, 'w1', '--llm', 'ollama', OLLAMA_HOST=fake.url)
        w2 = None
        try:
            wait_for(lambda: 'serving' in w1.err(), 'w1 to start')
            r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import ask\nask.flag.go = true\n')
            assert r.returncode == 0, r.stderr
            wait_for(lambda: len(fake.bodies) == 1, 'w1 to ask the model')
            w1.proc.kill()
            w1.proc.wait()
            fake.always(answer)
            w2 = Worker(tmp_path, pg_db, 'w2', '--llm', 'ollama', OLLAMA_HOST=fake.url)
            wait_for(lambda: 'the model says: Paris' in w2.out(), 'w2 to ask again and go on')
            r = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
            assert r.returncode == 0, r.stdout
        finally:
            fake.release()
            w1.stop()
            if w2 is not None:
                w2.stop()
    assert len(fake.bodies) == 2
    assert w2.out() == 'the model says: Paris\n'
    assert 'Traceback' not in w2.err(), w2.err()
