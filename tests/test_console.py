"""The console channel of `ostinato run`: piped lines are user messages of
the thread `console`, taken one at a time when the program is idle; bot
messages are printed; at end of input the run ends and the waiting dialogue
stays in the database, so running again continues it."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# Slow (whole runs on the console): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent / 'channels'
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def run(tmp_path, text):
    env = dict(os.environ, OSTINATO_DB=str(tmp_path / 'db.fs'), USER='ann')
    return subprocess.run([BIN, 'run', 'echo.ost'], cwd=tmp_path, env=env, input=text,
                          capture_output=True, text=True, timeout=60)


def test_piped_session_and_resume(tmp_path):
    shutil.copy(HERE / 'echo.ost', tmp_path)
    r = run(tmp_path, 'hi\nthere\nlog\n')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ['hello ann, say something', 'you said: there', 'you said: log']
    stamp = r'\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d\] '
    assert [re.sub(stamp, '', ln) for ln in lines[3:]] == [
        'bot: you said: there', 'ann: log', 'bot: you said: log']
    assert all(re.match(stamp, ln) for ln in lines[3:])
    r = run(tmp_path, 'again\n')
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'you said: again\n'


def test_program_without_channels_ignores_the_console(tmp_path):
    (tmp_path / 'plain.ost').write_text('print("no chat here")\n')
    env = dict(os.environ, OSTINATO_DB=str(tmp_path / 'db.fs'))
    p = subprocess.Popen([BIN, 'run', 'plain.ost'], cwd=tmp_path, env=env, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # stdin stays open: a program that does not chat must not wait for it.
    try:
        code = p.wait(timeout=60)
    finally:
        p.stdin.close()
    assert (code, p.stdout.read()) == (0, 'no chat here\n'), p.stderr.read()


def test_messages_queued_while_no_console_listened_are_shown_by_the_next_run(tmp_path):
    """A process without a console (`serve`, a script) that continues a
    console dialogue queues the bot's messages in the outbox; the next run on
    the console shows them first, once."""
    import io
    from ostinato.effects.channels.chat import receive
    from ostinato.runtime.scheduler import Scheduler
    from ostinato.runtime.store import Store
    shutil.copy(HERE / 'echo.ost', tmp_path)
    assert run(tmp_path, 'hi\n').returncode == 0
    store = Store(str(tmp_path / 'db.fs'))
    try:
        out = io.StringIO()
        sched = Scheduler(store.world, out=out)
        from ostinato.effects.channels.chat import channels_module
        user = channels_module(store.world).ns['threads'].d['console'].get('user')
        sched.transact(lambda: receive(sched, 'console', 'console', 'console', user,
                                       'from elsewhere'))
        sched.run()
        store.commit()
        assert out.getvalue() == ''
        queued = [m.text for m in store.world.outbox.messages()]
        assert queued == ['you said: from elsewhere']
    finally:
        store.close()
    r = run(tmp_path, '')
    assert (r.returncode, r.stdout) == (0, 'you said: from elsewhere\n'), r.stderr
    assert run(tmp_path, '').stdout == ''
