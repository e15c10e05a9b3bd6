"""Nothing read from disk at start crashes a start (issue 29, items 1, 2).

What a start reads -- the program's modules, the database's records, its
companion files -- may have been changed or damaged while nothing ran.
Whatever it holds, the start ends in one line that names the file (a
syntax error, a damaged database) or goes on (the module keeps its old
version); never a Python traceback at every start, never an endless loop.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

# Slow (whole runs and serve processes): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')
EXIT_DAMAGED = 74
# A bound for a process that would otherwise never end (the defects here
# were endless loops); a run that passes takes seconds.
HANG = 120

PROGRAM = '''\
import lib
type Box:
    var v
box = Box(v = 0)
spawn:
    wait until box.v == 1
    print("saw {lib.who()}")
print("main {lib.who()}")
'''
LIB = 'def who():\n    return "lib"\n'


def env():
    e = dict(os.environ)
    e.pop('OSTINATO_DB', None)
    return e


def ost(*args, cwd):
    return subprocess.run([BIN, *map(str, args)], cwd=cwd, env=env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=HANG)


def serve_until(cwd, *args, until='serving'):
    """`ostinato serve`, stopped with SIGTERM once it wrote a line with
    `until` on stderr (or when it ended before).  Returns (exit status,
    stderr)."""
    proc = subprocess.Popen([BIN, 'serve', *map(str, args)], cwd=cwd, env=env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(HANG, proc.kill)
    watchdog.start()
    err = []
    try:
        for line in proc.stderr:
            err.append(line)
            if until in line:
                proc.send_signal(signal.SIGTERM)
                break
        err.append(proc.communicate()[1])
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, ''.join(err)


def loaded(tmp_path):
    (tmp_path / 'prog.ost').write_text(PROGRAM)
    (tmp_path / 'lib.ost').write_text(LIB)
    r = ost('run', '--db', 'p.fs', 'prog.ost', cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, 'main lib\n'), r.stderr


@pytest.mark.parametrize('module', ['lib.ost', 'prog.ost'])
def test_a_module_file_no_longer_utf8_is_a_syntax_error_at_serve(tmp_path, module):
    """The file of a loaded module overwritten with bytes that are not
    UTF-8: serve reports it as the syntax error it is, keeps the version it
    has, and serves (before: a UnicodeDecodeError traceback at every start)."""
    loaded(tmp_path)
    (tmp_path / module).write_bytes(b'\xff\n')
    status, err = serve_until(tmp_path, '--db', 'p.fs', until='syntax error')
    assert 'Traceback' not in err, err
    assert status == 0, err
    assert '%s:1:1: syntax error: the source is not valid UTF-8' % module in err, err
    # Said once: the next start serves without a word about it.
    status, err = serve_until(tmp_path, '--db', 'p.fs')
    assert status == 0 and 'Traceback' not in err and 'syntax error' not in err, err


def test_a_module_file_no_longer_utf8_at_run(tmp_path):
    """`run` goes on with the module's old version and says why."""
    loaded(tmp_path)
    (tmp_path / 'lib.ost').write_bytes(b'def who():\n    return "caf\xe9"\n')
    r = ost('run', '--db', 'p.fs', 'prog.ost', cwd=tmp_path)
    assert 'Traceback' not in r.stderr, r.stderr
    assert 'lib.ost:2:16: syntax error: the source is not valid UTF-8' in r.stderr, r.stderr


def test_a_module_file_become_a_fifo_or_a_folder_is_not_read(tmp_path):
    """A FIFO where a module's file was would block the start for ever
    (reading it waits for a writer); a folder is no source either.  Both
    leave the module as it was."""
    loaded(tmp_path)
    os.unlink(tmp_path / 'lib.ost')
    os.mkfifo(tmp_path / 'lib.ost')
    status, err = serve_until(tmp_path, '--db', 'p.fs')
    assert status == 0 and 'Traceback' not in err, err
    os.unlink(tmp_path / 'lib.ost')
    os.mkdir(tmp_path / 'lib.ost')
    status, err = serve_until(tmp_path, '--db', 'p.fs')
    assert status == 0 and 'Traceback' not in err, err
