"""Ostinato on PostgreSQL (`--db postgresql://...`, RelStorage): every
command works on it as on a file, the password never shows, workers that
start at once migrate an older database once, and `db copy` moves a
waiting dialogue from a file to PostgreSQL, where a worker finishes it.

Each test makes a database of its own and drops it (tests/pg_support.py);
no server answering fails them."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from pg_support import _admin

pytestmark = pytest.mark.slow       # whole processes on a database server

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / 'fixtures'
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def env(**extra):
    e = dict(os.environ)
    for k in ('OSTINATO_DB', 'OSTINATO_LLM', 'OSTINATO_LLM_SCRIPT', 'TELEGRAM_BOT_TOKEN',
              'PGPASSWORD'):
        e.pop(k, None)
    e.update(extra)
    return e


def ost(args, cwd, input=None, **extra):
    return subprocess.run([BIN] + args, cwd=cwd, env=env(**extra), input=input,
                          capture_output=True, text=True, timeout=300)


def programs(tmp_path):
    for f in (FIXTURES / 'programs').iterdir():
        shutil.copy(f, tmp_path / f.name)


@pytest.fixture
def pw_role(pg_db):
    """A role with a password that owns the test database, and its address
    over TCP (where the server asks for the password)."""
    role = 'ostinato_pw_' + uuid.uuid4().hex[:8]
    secret = 'Sekr3t' + uuid.uuid4().hex[:10]
    dbname = pg_db.rsplit('/', 1)[1].split('?')[0]
    conn = _admin()
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE ROLE %s LOGIN PASSWORD '%s'" % (role, secret))
            cur.execute('ALTER DATABASE %s OWNER TO %s' % (dbname, role))
            cur.execute('SHOW port')
            port = cur.fetchone()[0]
        yield role, secret, 'postgresql://%s@127.0.0.1:%s/%s' % (role, port, dbname)
    finally:
        with conn.cursor() as cur:
            cur.execute('DROP DATABASE IF EXISTS %s WITH (FORCE)' % dbname)
            cur.execute('DROP ROLE IF EXISTS %s' % role)
        conn.close()


def test_every_command_works_on_postgresql(tmp_path, pg_db):
    programs(tmp_path)
    r = ost(['run', '--db', pg_db, 'sleeper.ost'], tmp_path)
    assert (r.returncode, r.stdout) == (0, 'going to sleep\nwoke up\n'), r.stderr
    r = ost(['db', 'info'], tmp_path, OSTINATO_DB=pg_db)
    assert r.returncode == 0 and 'schema version' in r.stdout, r.stderr
    r = ost(['db', 'check', '--db', pg_db], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith('ok:'), r.stdout + r.stderr
    r = ost(['db', 'verify', '--db', pg_db], tmp_path)
    assert r.returncode == 0 and 'no damage found' in r.stdout, r.stdout + r.stderr
    r = ost(['db', 'pack', '--db', pg_db], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith('packed'), r.stderr
    r = ost(['tasks', '--db', pg_db], tmp_path)
    assert r.returncode == 0, r.stderr
    r = ost(['log', '--db', pg_db], tmp_path)
    assert (r.returncode, r.stdout) == (0, 'no LLM exchanges\n'), r.stderr
    r = ost(['repl', '--db', pg_db], tmp_path, input='x = 41\nprint(x + 1)\n')
    assert (r.returncode, r.stdout) == (0, '42\n'), r.stderr
    r = ost(['repl', '--db', pg_db], tmp_path, input='print(x)\n')
    assert r.stdout == '41\n', r.stderr
    r = ost(['web', 'invite', 'ann', '--db', pg_db], tmp_path)
    assert r.returncode == 0 and 'token=' in r.stdout, r.stderr
    r = ost(['web', 'users', '--db', pg_db], tmp_path)
    assert r.returncode == 0 and 'ann' in r.stdout, r.stderr


def test_the_password_never_shows(tmp_path, pw_role):
    role, secret, address = pw_role
    programs(tmp_path)
    with_password = address.replace(role + '@', '%s:%s@' % (role, secret))
    outputs = []
    r = ost(['run', '--db', with_password, 'sleeper.ost'], tmp_path)
    assert (r.returncode, r.stdout) == (0, 'going to sleep\nwoke up\n'), r.stderr
    outputs.append(r)
    # The password from PGPASSWORD, as with psql.
    r = ost(['db', 'info', '--db', address], tmp_path, PGPASSWORD=secret)
    assert r.returncode == 0, r.stderr
    assert '%s@127.0.0.1' % role in r.stdout
    outputs.append(r)
    r = ost(['db', 'info', '--db', with_password], tmp_path)
    assert r.returncode == 0 and role + ':***@' in r.stdout, r.stdout
    outputs.append(r)
    # ... or ~/.pgpass.
    home = tmp_path / 'home'
    home.mkdir()
    pgpass = home / '.pgpass'
    pgpass.write_text('127.0.0.1:*:*:%s:%s\n' % (role, secret))
    pgpass.chmod(0o600)
    r = ost(['db', 'check', '--db', address], tmp_path, HOME=str(home))
    assert r.returncode == 0, r.stderr
    outputs.append(r)
    # A wrong password and a database that does not exist: one line each.
    r = ost(['db', 'info', '--db', with_password.replace(secret, secret + 'x')], tmp_path)
    assert r.returncode == 2 and 'password authentication failed' in r.stderr, r.stderr
    outputs.append(r)
    r = ost(['db', 'check', '--db', with_password + '_none'], tmp_path)
    assert r.returncode == 2 and 'does not exist' in r.stderr, r.stderr
    outputs.append(r)
    for r in outputs:
        assert secret not in r.stdout + r.stderr
        assert 'Traceback' not in r.stderr, r.stderr


def test_no_server_is_one_line(tmp_path):
    r = ost(['db', 'info', '--db', 'postgresql://nobody:pw12345@127.0.0.1:1/x'], tmp_path)
    assert r.returncode == 2, r.stderr
    assert 'cannot reach the PostgreSQL database postgresql://nobody:***@127.0.0.1:1/x' \
        in r.stderr
    assert 'pw12345' not in r.stderr and 'Traceback' not in r.stderr


def test_workers_starting_at_once_migrate_an_older_database_once(tmp_path, pg_db):
    """schema-5's diet database copied as it is (db copy does not migrate),
    then four processes open it at the same moment: one migrates it."""
    programs(tmp_path)
    old = tmp_path / 'old.fs'
    shutil.copy(FIXTURES / 'schema-5' / 'diet_waiting.fs', old)
    r = ost(['db', 'copy', str(old), pg_db], tmp_path)
    assert r.returncode == 0, r.stderr
    procs = [subprocess.Popen([BIN, 'repl', '--db', pg_db], cwd=tmp_path, env=env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [p.communicate('print("up")\n', timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, results
    assert [out for out, _ in results] == ['up\n'] * 4, results
    upgraded = [err for _, err in results if 'upgraded the database' in err]
    assert len(upgraded) == 1, results
    assert all('Traceback' not in err for _, err in results), results


def test_a_waiting_dialogue_copied_to_postgresql_finishes_there(tmp_path, pg_db):
    """The golden test: the diet dialogue waiting in a file database
    (tests/fixtures) is copied to PostgreSQL and finished by a worker
    there; and back to a file, whole."""
    from ostinato.runtime.world import SCHEMA_VERSION
    programs(tmp_path)
    src = tmp_path / 'diet.fs'
    shutil.copy(FIXTURES / ('schema-%d' % SCHEMA_VERSION) / 'diet_waiting.fs', src)
    r = ost(['db', 'copy', str(src), pg_db], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith('copied '), r.stderr
    # A destination that holds something is refused.
    r = ost(['db', 'copy', str(src), pg_db], tmp_path)
    assert r.returncode == 2 and 'not empty' in r.stderr, r.stderr
    r = ost(['db', 'check', '--db', pg_db], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = ost(['run', '--llm', 'scripted', '--db', pg_db, 'diet.ost'], tmp_path,
            input='around 12:30\nat 14:30 or so\n',
            OSTINATO_LLM_SCRIPT=str(tmp_path / 'diet.json'))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert 'And when did you have the hot chocolate?' in out, out
    # Lunch: the model's ISO answer where the code that asked was older
    # (the dialogue waited in it), else read from the user's words too.
    assert re.search(r'\[\d{4}-\d\d-\d\dT12:30:00[+-]\d\d:\d\d\] '
                     r'\(lunch\) turkey sandwich, apple', out), out
    # The time is the user's words ("at 14:30 or so") on the day they wrote
    # them, as tests/test_fixtures.py says.
    assert re.search(r'\[\d{4}-\d\d-\d\dT14:30:00[+-]\d\d:\d\d\] \(later\) hot chocolate', out), out
    assert 'About what time was lunch?' not in out      # asked before, not again
    r = ost(['db', 'check', '--db', pg_db], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    back = tmp_path / 'back.fs'
    r = ost(['db', 'copy', pg_db, str(back)], tmp_path)
    assert r.returncode == 0, r.stderr
    r = ost(['db', 'verify', '--db', str(back)], tmp_path)
    assert r.returncode == 0 and 'no damage found' in r.stdout, r.stdout + r.stderr
    r = ost(['log', '--db', str(back)], tmp_path)
    assert 'hot chocolate' in r.stdout, r.stderr


def test_db_info_counts_the_objects_on_postgresql(tmp_path, pg_db):
    """`db info` gives the number of objects stored, counted, not the
    planner's estimate (0 until PostgreSQL analyzes the table)."""
    import json

    import psycopg2
    programs(tmp_path)
    r = ost(['run', '--db', pg_db, 'sleeper.ost'], tmp_path)
    assert r.returncode == 0, r.stderr
    conn = psycopg2.connect(pg_db)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT count(*) FROM object_state')
            stored = cur.fetchone()[0]
    finally:
        conn.close()
    assert stored > 10
    r = ost(['db', 'info', '--json', '--db', pg_db], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)['objects'] == stored
    r = ost(['db', 'info', '--db', pg_db], tmp_path)
    assert re.search(r'^objects: +%d$' % stored, r.stdout, re.M), r.stdout


def _tagged_session(address, application):
    import psycopg2
    conn = psycopg2.connect(address, application_name=application)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute('SELECT 1')
    return conn


def _alive(conn):
    import psycopg2
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT 1')
        return True
    except psycopg2.Error:
        return False


def test_the_sessions_of_a_silent_worker_are_ended_and_a_beating_one_is_left(pg_db):
    """runtime/pg.py's heartbeat: a worker none of whose sessions did
    anything for STALE_AFTER seconds has them all ended; one whose
    heartbeat runs, or a session of any other program, is left alone."""
    import psycopg2

    from ostinato.runtime import pg
    silent = [_tagged_session(pg_db, 'ostinato/aaaa/w1') for _ in range(2)]
    other = _tagged_session(pg_db, 'psql')
    beating = _tagged_session(pg_db, 'ostinato/bbbb/w2')
    mine = psycopg2.connect(pg_db)
    mine.autocommit = True
    try:
        end = time.time() + 1.5
        while time.time() < end:        # w2 beats; w1 says nothing
            _alive(beating)
            time.sleep(0.1)
        ended = pg.end_stale_workers(mine, 'ostinato/cccc/', stale_after=1.0)
        assert [(name, sessions) for name, _, sessions in ended] == [('w1', 2)]
        time.sleep(0.5)                 # the server ends them (a signal)
        assert [_alive(c) for c in silent] == [False, False]
        assert _alive(beating) and _alive(other)
    finally:
        for c in silent + [other, beating, mine]:
            c.close()


def test_sessions_this_role_may_not_end_are_said_so_not_a_crash(pg_db):
    """A worker whose role may see but not signal another's sessions gets
    the reason back (serve says it once), never an exception."""
    from ostinato.runtime import pg
    role = 'ostinato_see_' + uuid.uuid4().hex[:8]
    conn = _admin()
    silent = _tagged_session(pg_db, 'ostinato/aaaa/w1')     # the administrator's
    try:
        with conn.cursor() as cur:
            cur.execute('CREATE ROLE %s' % role)
            cur.execute('GRANT pg_read_all_stats TO %s' % role)
        watcher = _tagged_session(pg_db, 'ostinato/cccc/w2')
        try:
            with watcher.cursor() as cur:
                cur.execute('SET ROLE %s' % role)
            time.sleep(1.5)
            ended = pg.end_stale_workers(watcher, 'ostinato/cccc/', stale_after=1.0)
        finally:
            watcher.close()
        assert len(ended) == 1 and ended[0][0] == 'w1', ended
        why = ended[0][2]
        assert isinstance(why, str) and ('permission' in why.lower() or 'must be' in why), ended
        assert _alive(silent)
    finally:
        silent.close()
        with conn.cursor() as cur:
            cur.execute('DROP ROLE IF EXISTS %s' % role)
        conn.close()
