"""Workers on PostgreSQL that die or vanish under load: a host that is lost
without its connections closing (here: a worker stopped with SIGSTOP, its
sessions alive) gives its task and the Telegram poller back to the others
within seconds (runtime/pg.py's heartbeat); and one run of a mixed workload
-- queues, sleeps, agent() calls, Telegram and web intake -- with workers
killed at random and PostgreSQL restarted, after which nothing is lost,
orphaned or done twice."""
from __future__ import annotations

import random
import re
import shutil
import signal
import time
from pathlib import Path

import pytest
import requests

from test_postgres_workers import Worker, ost, restart_postgresql, wait_for

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
            wait_for(lambda: 'it stops polling' in w1.err(), 'w1 to stop polling')
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


def _unique_in_order(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def test_a_mixed_workload_survives_kills_and_a_postgresql_restart(tmp_path, pg_db):
    """Three workers share queued jobs with sleeps, agent() calls, Telegram
    and web intake; workers are killed (-9) at random moments and started
    again, and PostgreSQL restarts in the middle.  After: every step, answer
    and message handled exactly once, `db check` clean, and no process
    wrote a Python traceback."""
    from fakes.ollama import FakeOllama
    from fakes.telegram import TOKEN, FakeTelegram
    from ostinato.runtime.store import Store
    from web_support import Client, free_port
    rnd = random.Random()
    seed = rnd.randrange(10 ** 6)
    rnd.seed(seed)
    shutil.copy(HERE / 'pg' / 'mix.ost', tmp_path)
    shutil.copy(HERE / 'telegram' / 'counter.ost', tmp_path)
    for program in ('mix.ost', 'counter.ost'):
        r = ost('run', '--db', pg_db, program, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    answer = {'action': 'answer', 'text': 'ok'}
    names = ('w1', 'w2', 'w3')
    ports = {name: free_port() for name in names}
    procs: list = []            # every worker process started, in order
    live = {}
    started = time.time()
    with FakeOllama() as model, FakeTelegram() as tg:
        for _ in range(6):
            model.delay(1.0, answer)        # the model thinks while workers die
        model.always(answer)
        envs = dict(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_URL=tg.url,
                    TELEGRAM_ALLOWED_USERS='42', TZ='UTC', USER='ann', OLLAMA_HOST=model.url)

        def start(name):
            w = Worker(tmp_path, pg_db, name, '--telegram', '--web', '127.0.0.1:%d' % ports[name],
                       '--llm', 'ollama', **envs)
            # Each process's own files (Worker names them by the worker).
            n = sum(1 for p in procs if p.name == name)
            for path in (w.err_path, w.out_path):
                own = path.with_name('%s-%d%s' % (name, n, path.suffix))
                path.rename(own)
            w.err_path = w.err_path.with_name('%s-%d.err' % (name, n))
            w.out_path = w.out_path.with_name('%s-%d.out' % (name, n))
            procs.append(w)
            live[name] = w
            return w

        def repl(code):
            return ost('repl', '--db', pg_db, cwd=tmp_path, input=code)

        def counts():
            out = repl('import mix\nprint(length(mix.log))\nprint(length(mix.answers))\n').stdout
            parts = out.split()
            return tuple(int(p) for p in parts) if len(parts) == 2 and \
                all(p.isdigit() for p in parts) else (-1, -1)

        def tg_texts():
            return [s['text'] for s in list(tg.sent) if s['chat_id'] == 42]

        store = Store(pg_db)        # to see who holds a claim
        store_open = [True]

        def close_store():
            if store_open:
                store_open.clear()
                store.close()

        def claims():
            store.abort()           # the database as of now
            return {name: task.name for name, task in store.world.running.items()}

        def claimant(names, tries=100):
            """A worker among `names` in a turn of a task now (or None)."""
            for _ in range(tries):
                held = [n for n in claims() if n in names]
                if held:
                    return held[0]
                time.sleep(0.05)
            return None

        web = Client('http://127.0.0.1:%d' % ports['w1'])

        def to_live_worker(request):
            """Run `request` on a worker that answers (the web page's
            retries, with the same idempotency key)."""
            end = time.time() + 300
            last = None
            while time.time() < end:
                for name in rnd.sample(names, len(names)):
                    web.base = 'http://127.0.0.1:%d' % ports[name]
                    try:
                        r = request()
                    except requests.RequestException:
                        continue
                    if r.status_code == 200:
                        return r
                    last = (r.status_code, r.text)
                time.sleep(0.2)
            pytest.fail('no worker answered the web page: %s' % (last,))

        def web_texts():
            r = to_live_worker(lambda: web.get('/api/conversations/1'))
            return [m['text'] for m in r.json()['messages']]
        try:
            for name in names:
                start(name)
            for w in list(live.values()):
                wait_for(lambda w=w: 'serving' in w.err(), 'the workers to start')
            out = ost('web', 'invite', 'ann', '--db', pg_db, cwd=tmp_path)
            assert out.returncode == 0, out.stderr
            link = out.stdout.strip()
            web.login('http://127.0.0.1:%d/login?%s' % (ports['w1'], link.split('/login?', 1)[1]))
            r = repl('import mix\nmix.flag.go = true\n')
            assert r.returncode == 0, r.stderr
            kills = 0
            dead = orphaned = None
            for i in range(8):
                tg.user_writes(42, 'tg%d' % i)
                key = 'message-%d' % i
                to_live_worker(lambda i=i, key=key: web.send(
                    'web%d' % i, key=key, conversation=None if i == 0 else 1))
                time.sleep(rnd.uniform(0.3, 1.5))
                if i % 2 == 1:
                    # The second kill is of a worker in a turn, and it stays
                    # dead until the end, so the others take its claim back;
                    # the third is the Telegram poller's; the rest anyone's.
                    victim = live[rnd.choice(sorted(live))]
                    if i == 3:
                        victim = live.get(claimant(live), victim)
                    if i == 5:
                        victim = next((w for w in live.values()
                                       if 'holds the telegram lock' in w.err()), victim)
                    victim.proc.kill()
                    victim.proc.wait()
                    kills += 1
                    if i == 3:
                        if victim.name in claims():
                            orphaned = victim.name      # died holding a claim
                        close_store()               # before PostgreSQL restarts
                    if i == 3:
                        dead = victim.name
                        del live[dead]
                    else:
                        start(victim.name)
                if i == 4:
                    restart_postgresql()
                    restarted = time.time() - started
            want_tg = ['%d: tg%d' % (n + 1, n) for n in range(8)]
            want_web = ['%d: web%d' % (n + 1, n) for n in range(8)]
            wait_for(lambda: counts() == (48, 6), 'every step and every answer')
            wait_for(lambda: set(want_tg) <= set(tg_texts()), 'every Telegram reply')
            wait_for(lambda: set(want_web) <= set(web_texts()), 'every web reply')
            # The worker killed second comes back after the others did its work.
            back = start(dead)
            wait_for(lambda: 'serving' in back.err(), 'the last worker to start again')
            r = repl('import mix\nprint(sjoin(sorted(mix.log), " "))\n'
                     'print(sjoin(sorted(mix.answers), " "))\n')
            logged, answered = r.stdout.splitlines()
            web_final = web_texts()
        finally:
            for w in procs:
                w.stop()
            close_store()
        took = time.time() - started
        r = ost('db', 'check', '--db', pg_db, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.startswith('ok:'), r.stdout + r.stderr
        r = ost('tasks', '--db', pg_db, cwd=tmp_path)
        assert not re.search(r'\b(job|ask) ', r.stdout), r.stdout      # all of them ended
    context = 'seed %d' % seed
    # Nothing lost, nothing done twice.
    assert logged.split() == sorted('%d.%d' % (n, s) for n in range(12) for s in range(4)), \
        context
    assert answered.split() == sorted('%d:ok' % n for n in range(6)), context
    assert [t for t in web_final if re.match(r'\d+: ', t)] == want_web, (context, web_final)
    numbered = [t for t in tg_texts() if re.match(r'\d+: ', t)]
    # A worker killed while it sent a reply may send it again (README:
    # Limits); a message handled twice would be numbered twice.
    assert _unique_in_order(numbered) == want_tg, (context, numbered)
    if orphaned is not None:
        # The others gave its claim back to the queue (it stayed dead).
        assert any('worker %s is gone' % orphaned in w.err() for w in procs), context
    for w in procs:
        err = w.err()
        assert 'Traceback' not in err and 'internal error' not in err, (context, w.err_path, err)
        assert err.count('PostgreSQL does not answer') <= 1, err
        assert err.count('PostgreSQL does not answer') >= err.count('answers again'), err
    print('%s: %d kills (one holding a claim the others took back: %s), PostgreSQL '
          'restarted at %.0f s, all done in %.0f s; %d Telegram replies sent again, %d model '
          'requests for 6 answers' % (context, kills, orphaned is not None, restarted, took,
                                      len(numbered) - len(want_tg), len(model.bodies)))
