"""`ostinato serve` with `ostinato repl` attached over its socket, and two
serve workers sharing one database through a real ZEO server."""
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# Slow (serve and ZEO processes): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def ost(*args, cwd, input=None, timeout=60):
    return subprocess.run([BIN, *args], cwd=cwd, input=input, capture_output=True,
                          text=True, timeout=timeout)


def wait_for(pred, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def test_serve_and_repl(tmp_path):
    shutil.copy(HERE / 'serve' / 'waiter.ost', tmp_path)
    r = ost('run', '--db', 'x.fs', 'waiter.ost', cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == 'main done\n', r.stderr
    serve = subprocess.Popen([BIN, 'serve', '--db', 'x.fs'], cwd=tmp_path, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        sock = tmp_path / 'x.fs.serve' / 'socket'
        assert wait_for(sock.exists), 'serve made no socket'
        assert oct(sock.stat().st_mode & 0o777) == oct(0o600)
        assert oct(sock.parent.stat().st_mode & 0o777) == oct(0o700)   # its folder too
        # A second server on the same file is refused with a clear message.
        r = ost('serve', '--db', 'x.fs', cwd=tmp_path, timeout=30)
        assert r.returncode == 2 and 'already served' in r.stderr
        r = ost('repl', '--db', 'x.fs', cwd=tmp_path,
                input='import waiter\nwaiter.box.v\nkept = [1, 2]\nwaiter.box.v = 1\n')
        assert r.returncode == 0, r.stderr
        assert r.stdout == '0\n'
        # Variables of the REPL module survive between sessions.
        r = ost('repl', '--db', 'x.fs', cwd=tmp_path, input='kept\nif kept?:\n    print("block")\n\n')
        assert r.stdout == '[1, 2]\nblock\n', r.stderr
    finally:
        out, err = stop(serve)
    assert out == 'waiter saw 1\n', err
    assert not (tmp_path / 'x.fs.serve').exists()


def test_repl_on_the_file_when_nothing_serves(tmp_path):
    r = ost('repl', '--db', 'r.fs', cwd=tmp_path, input='n = 41\nn + 1\nprint(n)\nundefined_fn()\n[1,\n 2]\n')
    assert r.stdout == '42\n41\n[1, 2]\n'
    assert "<repl>:1:1: error: name 'undefined_fn' is not defined" in r.stderr
    r = ost('repl', '--db', 'r.fs', cwd=tmp_path, input='n\nx = (\n')
    assert r.stdout == '41\n'


def free_unix_socket(tmp_path):
    return str(tmp_path / 'zeo.sock')


def test_two_workers_share_the_tasks(tmp_path):
    """Every step of every job runs exactly once, split between two workers."""
    shutil.copy(HERE / 'serve' / 'workers.ost', tmp_path)
    sock = free_unix_socket(tmp_path)
    zeo = subprocess.Popen([sys.executable, '-m', 'ostinato.zeo', '-a', sock, '-f',
                            str(tmp_path / 'shared.fs')], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = []
    try:
        assert wait_for(lambda: os.path.exists(sock)), 'ZEO did not start'
        db = 'zeo:' + sock
        r = ost('run', '--db', db, 'workers.ost', cwd=tmp_path)
        assert r.stdout == 'queued\n', r.stderr
        for name in ('w1', 'w2'):
            workers.append(subprocess.Popen([BIN, 'serve', '--db', db, '--worker', name],
                                            cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE))
        # Both workers must be up before the work starts, or the first one
        # may well do all of it.
        for w in workers:
            assert 'serving' in w.stderr.readline()
        r = ost('repl', '--db', db, cwd=tmp_path, input='import workers\nworkers.flag.go = true\n')
        assert r.returncode == 0, r.stderr
        check = 'import workers\nprint(length(workers.log))\n'
        # Generous: under a full test run on a loaded machine this took more
        # than a minute (about one second of work when the machine is idle).
        assert wait_for(lambda: ost('repl', '--db', db, cwd=tmp_path, input=check)
                        .stdout.strip() == '48', timeout=300)
        r = ost('repl', '--db', db, cwd=tmp_path,
                input='import workers\nprint(sjoin(sorted(workers.log), " "))\n')
        logged = r.stdout.split()
    finally:
        outs = [stop(w) for w in workers]
        zeo.terminate()
        zeo.wait(20)
    want = sorted('%d.%d' % (n, s) for n in range(12) for s in range(4))
    assert logged == want
    lines = [ln for out, _ in outs for ln in out.splitlines()]
    assert sorted(lines) == sorted('job %d step %d' % (n, s) for n in range(12) for s in range(4))
    assert all(out for out, _ in outs), 'one worker did nothing: %r' % [e for _, e in outs]


def test_serve_upgrades_a_module_whose_file_changes(tmp_path):
    """serve notices an edited module file; the waiting loop's next step calls
    the new code, without a restart."""
    shutil.copy(HERE / 'serve' / 'watched.ost', tmp_path)
    r = ost('run', '--db', 'x.fs', 'watched.ost', cwd=tmp_path)
    assert r.stdout == 'v1 0\n', r.stderr
    printed = tmp_path / 'serve.out'
    with open(printed, 'w') as out_file:
        serve = subprocess.Popen([BIN, 'serve', '--db', 'x.fs'], cwd=tmp_path, text=True,
                                 stdout=out_file, stderr=subprocess.PIPE)
    try:
        assert wait_for((tmp_path / 'x.fs.serve' / 'socket').exists)
        ost('repl', '--db', 'x.fs', cwd=tmp_path, input='import watched\nwatched.box.n = 1\n')
        src = (tmp_path / 'watched.ost').read_text().replace("'v1'", "'v2'")
        (tmp_path / 'watched.ost').write_text(src)
        # `db info` only looks (an import would upgrade the module itself).
        assert wait_for(lambda: 'unchanged' in ost('db', 'info', '--db', 'x.fs', cwd=tmp_path)
                        .stdout.split('watched.ost')[-1].split('\n')[0], timeout=30)
        ost('repl', '--db', 'x.fs', cwd=tmp_path, input='import watched\nwatched.box.n = 2\n')
        wait_for(lambda: 'v2 2' in printed.read_text(), timeout=120)
    finally:
        _, err = stop(serve)
    assert printed.read_text() == 'v1 1\nv2 2\n', err


def test_repl_without_serve_runs_no_other_task(tmp_path):
    """A statement that wakes a waiting task does not run it in the REPL
    (where its model and chat calls would fail): it stays ready for serve
    or the next run, and the REPL says so."""
    shutil.copy(HERE / 'serve' / 'waiter.ost', tmp_path)
    r = ost('run', '--db', 'x.fs', 'waiter.ost', cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == 'main done\n', r.stderr
    r = ost('repl', '--db', 'x.fs', cwd=tmp_path, input='import waiter\nwaiter.box.v = 1\n')
    assert r.returncode == 0, r.stderr
    assert 'waiter saw' not in r.stdout
    assert 'no serve runs on this database' in r.stderr
    r = ost('tasks', '--db', 'x.fs', cwd=tmp_path)
    assert ' ready ' in r.stdout or ' ready' in r.stdout, r.stdout
    r = ost('run', '--db', 'x.fs', 'waiter.ost', cwd=tmp_path)
    assert 'waiter saw 1' in r.stdout, r.stdout + r.stderr


def test_a_users_escape_codes_never_reach_the_operators_terminal_raw(tmp_path):
    """A user's text with terminal escape codes (here a title change and a
    C1 CSI), printed by a skill under serve and quoted by an error report,
    is shown escaped: it retitled the operator's terminal (issue 29, item 9)."""
    (tmp_path / 'p.ost').write_text(
        'text = parse_json(\'"Ann \\\\u001b]0;pwned\\\\u0007 \\\\u009b31m red"\')\n'
        'print(text)\n'
        'def fails():\n    raise(Error(message = text))\n'
        'spawn fails()\n')
    text_printed = 'Ann \x1b]0;pwned\x07 \x9b31m red'
    shown = 'Ann \\x1b]0;pwned\\x07 \\x9b31m red'
    r = ost('run', '--db', 'r.fs', 'p.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert shown in r.stderr, r.stderr                   # the failed task's report
    with open(tmp_path / 'out.txt', 'w') as out, open(tmp_path / 'err.txt', 'w') as err:
        serve = subprocess.Popen([BIN, 'serve', '--db', 'x.fs', 'p.ost'], cwd=tmp_path,
                                 text=True, stdout=out, stderr=err)
        try:
            assert wait_for(lambda: shown in (tmp_path / 'err.txt').read_text()
                            and shown in (tmp_path / 'out.txt').read_text())
        finally:
            stop(serve)
    assert r.stdout == text_printed + '\n'   # run's output to a file or pipe: exactly the text
    for text in (r.stderr, (tmp_path / 'out.txt').read_text(),
                 (tmp_path / 'err.txt').read_text()):
        assert '\x1b' not in text and '\x07' not in text and '\x9b' not in text, repr(text)
