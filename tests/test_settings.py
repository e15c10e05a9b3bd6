"""Settings are parsed in one place with a range (issue 29, item 6).

A bad value in the environment or on the command line is one line that
names the setting, and exit 2 -- never a Python traceback, and never a
value that switches a guard off (`nan` compares false with everything: a
turn limit of nan, inf or 1e400 let an endless loop run for ever).  What is
no regular file given as --db is refused the same way, before any of the
database's companion files is made beside it.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ostinato.runtime import settings
from ostinato.runtime.settings import SettingError

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')
BAD_NUMBERS = ['abc', '', 'nan', 'inf', '-inf', '1e400', '-5', '0x10', '1_0_0' * 20]


def ost(*args, cwd, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith(('OSTINATO_', 'TELEGRAM_'))}
    e.update(env)
    return subprocess.run([BIN, *map(str, args)], cwd=cwd, env=e, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


def one_line(r, *words):
    assert 'Traceback' not in r.stderr, r.stderr
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith('ostinato: '), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


@pytest.mark.parametrize('name', sorted(settings.SETTINGS))
def test_every_setting_refuses_what_is_no_number_in_its_range(name):
    s = settings.SETTINGS[name]
    assert settings.value(name, environ={}) == s.default
    assert settings.value(name, environ={name: ' '}) == s.default
    assert settings.value(name, environ={name: str(s.high)}) == s.high
    for raw in [b for b in BAD_NUMBERS if b] + [str(s.high * 10), str(s.low - 1)]:
        with pytest.raises(SettingError) as e:
            settings.value(name, environ={name: raw})
        assert str(e.value).startswith(name + ' must be '), e.value
        # Read at import (the scheduler's class attributes): the default.
        assert settings.value(name, strict=False, environ={name: raw}) == s.default
    with pytest.raises(SettingError):
        settings.parse(name, 'nan', '--flag')


def test_a_switch_is_yes_or_no_and_nothing_else():
    for raw, want in (('1', True), ('On', True), ('', False), ('off', False)):
        assert settings.switch('TELEGRAM_GROUPS', {'TELEGRAM_GROUPS': raw}) is want
    with pytest.raises(SettingError):
        settings.switch('TELEGRAM_GROUPS', {'TELEGRAM_GROUPS': 'yes please'})


@pytest.mark.slow
@pytest.mark.parametrize('name,raw', [('OSTINATO_TURN_LIMIT', 'abc'), ('OSTINATO_TURN_LIMIT', 'nan'),
                                      ('OSTINATO_MAX_DEPTH', 'abc'), ('OSTINATO_MAX_DEPTH', '-5'),
                                      ('OSTINATO_MAX_CRASHES', 'abc'),
                                      ('OSTINATO_CACHE_OBJECTS', '1e400'),
                                      ('OSTINATO_LLM_TIMEOUT', 'inf'),
                                      ('TELEGRAM_POLL_TIMEOUT', '-1'),
                                      ('TELEGRAM_GROUPS', 'maybe')])
def test_a_bad_setting_in_the_environment_is_one_line_for_every_command(tmp_path, name, raw):
    (tmp_path / 'p.ost').write_text('print(1)\n')
    for cmd in (['run', '--memory', 'p.ost'], ['tasks', '--memory'], ['db', 'check', '--memory']):
        r = ost(*cmd, cwd=tmp_path, **{name: raw})
        one_line(r, name, repr(raw))


@pytest.mark.slow
@pytest.mark.parametrize('raw', ['nan', 'inf', '1e400', '-1', '0', 'abc'])
def test_a_turn_limit_that_would_switch_the_guard_off_is_refused(tmp_path, raw):
    (tmp_path / 'loop.ost').write_text('while true:\n    pass\n')
    r = ost('run', '--memory', '--turn-limit', raw, 'loop.ost', cwd=tmp_path)
    one_line(r, '--turn-limit must be a number of seconds', repr(raw))
    r = ost('run', '--memory', 'loop.ost', cwd=tmp_path, OSTINATO_TURN_LIMIT=raw)
    one_line(r, 'OSTINATO_TURN_LIMIT must be')


@pytest.mark.slow
def test_pack_days_must_be_finite(tmp_path):
    one_line(ost('db', 'pack', '--memory', '--days', 'nan', cwd=tmp_path), '--days')


@pytest.mark.slow
def test_no_regular_file_as_db_is_one_line_and_makes_no_files(tmp_path):
    (tmp_path / 'p.ost').write_text('print(1)\n')
    os.mkfifo(tmp_path / 'fifo.fs')
    before = sorted(os.listdir(tmp_path))
    for db, kind in (('/dev/null', 'a character device'), ('fifo.fs', 'a FIFO')):
        for cmd in (['run', '--db', db, 'p.ost'], ['serve', '--db', db], ['repl', '--db', db],
                    ['tasks', '--db', db], ['db', 'check', '--db', db],
                    ['db', 'verify', '--db', db], ['db', 'pack', '--db', db]):
            r = ost(*cmd, cwd=tmp_path)
            one_line(r, '%s is %s, not a database file' % (db, kind))
    assert sorted(os.listdir(tmp_path)) == before
    assert not any(os.path.exists('/dev/null' + ext)
                   for ext in ('.commits', '.index', '.lock', '.tmp'))
