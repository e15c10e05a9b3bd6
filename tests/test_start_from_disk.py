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


# -- a record whose header names another transaction ---------------------------

STEPS = '''\
log = []
for i in 0..30:
    append(log, i)
    print("step {i}")
    if i == 20:
        sleep(1.5)
    else:
        sleep(0)
print("done {length(log)} {log == list(0..30)}")
'''


def stopped_at_step_20(folder):
    (folder / 'steps.ost').write_text(STEPS)
    proc = subprocess.Popen([BIN, 'run', '--db', 'base.fs', 'steps.ost'], cwd=folder, env=env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if line.startswith('step 20'):
                proc.send_signal(signal.SIGTERM)
                break
        proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130


def first_data_record_of_last_transaction(path):
    from ZODB.FileStorage import FileStorage
    fs = FileStorage(str(path), read_only=True)
    try:
        last = None
        for txn in fs.iterator():
            last = next(iter(txn)).pos
        return last
    finally:
        fs.close()


def copy_of(folder, name):
    import shutil
    for ext in ('', '.index', '.commits'):
        shutil.copy(folder / ('base.fs' + ext), folder / (name + ext))
    return folder / name


def test_a_flipped_serial_in_the_last_transaction_is_damage_not_a_loop(tmp_path):
    """One flipped bit in the serial (the transaction id) of a data record
    header: ZODB then loads an older revision of the object (its serial
    looks newer than the database) and every commit of it conflicts -- an
    endless loop of conflicts under `run`, an "internal error" with a
    ConflictError traceback elsewhere, at every start.  Now the header is
    checked against its transaction whenever it is read: exit 74 and one
    line naming the file; `db check` finds it too."""
    stopped_at_step_20(tmp_path)
    at = first_data_record_of_last_transaction(tmp_path / 'base.fs') + 8
    for byte in range(8):
        db = copy_of(tmp_path, 'flip.fs')
        with open(db, 'r+b') as f:
            f.seek(at + byte)
            b = f.read(1)[0]
            f.seek(at + byte)
            f.write(bytes([b ^ 0x10]))
        what = 'serial byte %d at offset %d' % (byte, at + byte)
        r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
        assert 'Traceback' not in r.stderr and 'internal error' not in r.stderr, (what, r.stderr)
        assert r.returncode == EXIT_DAMAGED, (what, r.returncode, r.stdout, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            'ostinato: the database %s is damaged: object ' % db), (what, r.stderr)
        assert 'names another transaction' in lines[0], (what, r.stderr)
        check = ost('db', 'check', '--db', db, cwd=tmp_path)
        assert 'Traceback' not in check.stderr, (what, check.stderr)
        assert check.returncode == EXIT_DAMAGED, (what, check.stdout, check.stderr)
        assert 'names another transaction' in check.stdout + check.stderr, (what, check.stdout)
