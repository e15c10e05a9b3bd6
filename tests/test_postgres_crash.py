"""Workers on PostgreSQL that die or vanish under load: a host that is lost
without its connections closing (here: a worker stopped with SIGSTOP, its
sessions alive) gives its task and the Telegram poller back to the others
within seconds (runtime/pg.py's heartbeat); and one run of a mixed workload
-- queues, sleeps, agent() calls, Telegram and web intake -- with workers
killed at random and PostgreSQL restarted, after which nothing is lost,
orphaned or done twice."""
from __future__ import annotations

import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from test_postgres_workers import Worker, ost, wait_for

pytestmark = pytest.mark.slow       # whole processes on a database server

HERE = Path(__file__).resolve().parent


def test_a_worker_stopped_with_its_sessions_alive_gives_back_its_task_and_telegram(
        tmp_path, pg_db):
    from fakes.telegram import TOKEN, FakeTelegram
    shutil.copy(HERE / 'pg' / 'spin.ost', tmp_path)
    shutil.copy(HERE / 'telegram' / 'counter.ost', tmp_path)
    for program in ('spin.ost', 'counter.ost'):
        r = ost('run', '--db', pg_db, program, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    with FakeTelegram() as tg:
        tel = dict(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=tg.url,
                   TELEGRAM_ALLOWED_USERS='42', TZ='UTC')

        def texts():
            return [s['text'] for s in list(tg.sent) if s['chat_id'] == 42]
        w1 = Worker(tmp_path, pg_db, 'w1', '--telegram', **tel)
        w2 = None
        stopped = False
        try:
            wait_for(lambda: 'holds the telegram lock' in w1.err(), 'w1 to poll Telegram')
            tg.user_writes(42, 'one')
            wait_for(lambda: '1: one' in texts(), 'the first reply')
            r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import spin\nspin.flag.go = true\n')
            assert r.returncode == 0, r.stderr
            wait_for(lambda: re.search(r'spin +running', ost('tasks', '--db', pg_db,
                                                                cwd=tmp_path).stdout),
                     'w1 to claim the spinning task')
            w2 = Worker(tmp_path, pg_db, 'w2', '--telegram', **tel)
            wait_for(lambda: 'serving' in w2.err(), 'w2 to start')
            # The host is lost: nothing runs, nothing closes.
            w1.proc.send_signal(signal.SIGSTOP)
            stopped = True
            lost = time.time()
            tg.user_writes(42, 'two')
            r = ost('repl', '--db', pg_db, cwd=tmp_path, input='import spin\nspin.flag.stop = true\n')
            assert r.returncode == 0, r.stderr
            wait_for(lambda: 'worker w1 is gone' in w2.err(), 'w2 to take the claim back')
            gone = time.time() - lost
            wait_for(lambda: 'stopped spinning' in w2.out(), 'w2 to finish the task')
            wait_for(lambda: '2: two' in texts(), 'the reply by the worker that took over')
            answered = time.time() - lost
            assert 'holds the telegram lock' in w2.err()
            # The lost host comes back: it runs nothing again.
            w1.proc.send_signal(signal.SIGCONT)
            stopped = False
            tg.user_writes(42, 'three')
            wait_for(lambda: '3: three' in texts(), 'the reply after w1 came back')
            r = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
            assert r.returncode == 0, r.stdout
        finally:
            if stopped:
                w1.proc.send_signal(signal.SIGCONT)
            w1.stop()
            if w2 is not None:
                w2.stop()
    assert texts() == ['1: one', '2: two', '3: three']
    assert (w1.out() + w2.out()).count('stopped spinning') == 1
    for w in (w1, w2):
        assert 'Traceback' not in w.err() and 'internal error' not in w.err(), w.err()
    print('after SIGSTOP: the task came back in %.1f s, Telegram answered in %.1f s'
          % (gone, answered))
