"""What the operator and the other users of the machine see (issue 11,
items 3 and 10): the database's files are private to their owner, a
database others can read is pointed out, the serve log does not fill with
clients that left, and a database in use says what holds it."""
from __future__ import annotations

import pytest

import os
import signal
import stat
import subprocess
import sys

from test_serve import wait_for

# Slow (whole runs and serve): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def ost(*args, cwd, input=None, timeout=120, umask=0o022):
    # As a user with the usual umask (022: files readable by everyone).
    return subprocess.run([BIN, *args], cwd=cwd, input=input, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=lambda: os.umask(umask))


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_database_files_are_private_to_their_owner(tmp_path):
    """Created 0600 under a umask of 022: the .fs, .index, .lock and .tmp
    files of run, and the pack files.  Before, another user could run
    `ostinato log` on them and read every chat."""
    (tmp_path / 'p.ost').write_text('x = [1]\nsleep(0)\nprint(x)\n')
    r = ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert 'warning' not in r.stderr
    r = ost('db', 'pack', '--db', 'p.fs', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith('p.fs'))
    assert {'p.fs', 'p.fs.index', 'p.fs.lock', 'p.fs.tmp'} <= set(files), files
    assert {f: oct(mode(tmp_path / f)) for f in files} == {f: oct(0o600) for f in files}


def test_serve_keeps_its_socket_in_a_private_folder(tmp_path):
    (tmp_path / 'w.ost').write_text('while true:\n    sleep(1000)\n')
    serve = subprocess.Popen([BIN, 'serve', '--db', 's.fs', 'w.ost'], cwd=tmp_path, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=lambda: os.umask(0o022))
    try:
        sock = tmp_path / 's.fs.serve' / 'socket'
        assert wait_for(sock.exists), 'serve made no socket'
        assert oct(mode(sock.parent)) == oct(0o700) and oct(mode(sock)) == oct(0o600)
        assert oct(mode(tmp_path / 's.fs')) == oct(0o600)
        # Clients come and go: `tasks` three times, a repl; none is an error.
        for _ in range(3):
            assert ost('tasks', '--db', 's.fs', cwd=tmp_path).returncode == 0
        r = ost('repl', '--db', 's.fs', cwd=tmp_path, input='print(1)\n')
        assert r.stdout == '1\n', r.stderr
        # The database is served: opening the file itself says what to do.
        r = ost('run', '--db', 's.fs', 'w.ost', cwd=tmp_path)
        assert r.returncode == 2
        assert "A running 'ostinato serve' shares it: use 'ostinato repl'" in r.stderr
    finally:
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=60)
    assert serve.returncode == 0, err
    assert 'Disconnected' not in err and 'Error' not in err, err
    assert not (tmp_path / 's.fs.serve').exists()


def test_a_database_others_can_read_is_pointed_out(tmp_path):
    (tmp_path / 'p.ost').write_text('print(1)\n')
    assert ost('run', '--db', 'old.fs', 'p.ost', cwd=tmp_path).returncode == 0
    os.chmod(tmp_path / 'old.fs', 0o644)                # as made by an earlier version
    r = ost('run', '--db', 'old.fs', 'p.ost', cwd=tmp_path)
    assert r.returncode == 0
    assert r.stderr.startswith('ostinato: warning: other users of this machine can read the '
                               'database old.fs (old.fs is 0644); it holds every chat: make it '
                               'private with  chmod 600 old.fs\n'), r.stderr
    assert oct(mode(tmp_path / 'old.fs')) == oct(0o644)     # the owner decides
    os.chmod(tmp_path / 'old.fs', 0o600)
    r = ost('run', '--db', 'old.fs', 'p.ost', cwd=tmp_path)
    assert 'warning' not in r.stderr


# -- the files beside the database (issue 29, item 7) ----------------------------

COMPANIONS = ['p.fs.tmp', 'p.fs.lock', 'p.fs.commits', 'p.fs.index']


def test_loose_modes_of_the_files_beside_the_database_are_pointed_out(tmp_path):
    """The .tmp (a commit while it is written), .lock, .commits and .index,
    and the --log file, get the warning the .fs gets."""
    (tmp_path / 'p.ost').write_text('print(1)\n')
    assert ost('run', '--db', 'p.fs', '--log', 'ops.log', 'p.ost', cwd=tmp_path).returncode == 0
    (tmp_path / 'ops.log').write_text('')
    for name in COMPANIONS + ['ops.log']:
        os.chmod(tmp_path / name, 0o644)
    r = ost('run', '--db', 'p.fs', '--log', 'ops.log', 'p.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith("ostinato: warning: other users of this machine can read the "
                               "operator's log ops.log (ops.log is 0644)"), r.stderr
    assert lines[1].startswith('ostinato: warning: other users of this machine can read the '
                               'database p.fs (p.fs.index is 0644, p.fs.tmp is 0644, p.fs.lock '
                               'is 0644, p.fs.commits is 0644)'), r.stderr
    for name in COMPANIONS + ['ops.log']:
        if name != 'p.fs.index':        # ZODB writes a new index at every clean close
            assert oct(mode(tmp_path / name)) == oct(0o644), name   # the owner decides
        os.chmod(tmp_path / name, 0o600)
    os.chmod(tmp_path / 'p.fs.commits', 0o622)             # others may change it
    r = ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path)
    assert 'can change the database p.fs (p.fs.commits is 0622)' in r.stderr, r.stderr


@pytest.mark.parametrize('name', COMPANIONS + ['p.fs.pack', 'p.fs.index.index_tmp', 'ops.log'])
def test_a_planted_symlink_beside_the_database_is_refused_not_followed(tmp_path, name):
    """A symlink at the name of a file the database (or the log) writes
    would have the target overwritten with transaction data: refused in one
    line, the target untouched (as PostgreSQL refuses to follow links in a
    data directory it did not make)."""
    (tmp_path / 'p.ost').write_text('print(1)\n')
    assert ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path).returncode == 0
    target = tmp_path / 'precious.txt'
    target.write_text('keep me\n')
    if os.path.lexists(tmp_path / name):
        os.unlink(tmp_path / name)
    os.symlink(target, tmp_path / name)
    commands = [['run', '--db', 'p.fs', '--log', 'ops.log', 'p.ost']]
    if name != 'ops.log':
        commands += [['tasks', '--db', 'p.fs'], ['db', 'pack', '--db', 'p.fs'],
                     ['db', 'verify', '--db', 'p.fs']]
    for cmd in commands:
        r = ost(*cmd, cwd=tmp_path)
        assert r.returncode == 2 and 'Traceback' not in r.stderr, (cmd, r.stderr)
        assert len(r.stderr.splitlines()) == 1, (cmd, r.stderr)
        assert r.stderr.startswith('ostinato: %s is a symbolic link (to %s): ' % (name, target)), \
            (cmd, r.stderr)
        assert 'remove the link -- the link holds nothing' in r.stderr, r.stderr
    assert target.read_text() == 'keep me\n'
    assert os.path.islink(tmp_path / name)


def test_what_is_no_file_beside_the_database_is_one_line(tmp_path):
    (tmp_path / 'p.ost').write_text('print(1)\n')
    assert ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path).returncode == 0
    os.unlink(tmp_path / 'p.fs.lock')
    os.mkdir(tmp_path / 'p.fs.lock')
    r = ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith('ostinato: p.fs.lock is a folder, not a file (a file of the '
                               'database p.fs, which holds the lock'), r.stderr


def test_the_file_an_accepted_cut_goes_to_is_no_planted_link(tmp_path):
    """--accept-truncation keeps the cut-off bytes in the first DB.trN that
    does not exist; ZODB opens it following a dangling symlink."""
    (tmp_path / 'p.ost').write_text('x = [1]\nsleep(0)\nprint(x)\n')
    assert ost('run', '--db', 'p.fs', 'p.ost', cwd=tmp_path).returncode == 0
    os.truncate(tmp_path / 'p.fs', os.path.getsize(tmp_path / 'p.fs') - 10)
    os.symlink(tmp_path / 'elsewhere', tmp_path / 'p.fs.tr0')
    r = ost('run', '--accept-truncation', '--db', 'p.fs', 'p.ost', cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith('ostinato: p.fs.tr0 is a symbolic link'), r.stderr
    assert not os.path.exists(tmp_path / 'elsewhere')


# A link planted after the start-up check (preflight, in runtime/store.py)
# and before ZODB's own open of the file -- or before a later open: the
# index saved at close, a pack, an accepted cut -- is met by the open
# itself.  CheckedFileStorage is made here directly, as store.open makes it
# right after preflight: the link is planted in that window.

def _a_database(tmp_path):
    from ostinato.runtime.filestore import CheckedFileStorage
    db = str(tmp_path / 'p.fs')
    _commit(CheckedFileStorage(db)).close()
    target = tmp_path / 'precious.txt'
    target.write_text('keep me\n')
    return db, target


@pytest.mark.parametrize('ext', ['.tmp', '.lock', '.index', '.commits'])
def test_a_link_planted_after_the_start_up_check_is_not_followed_by_the_open(tmp_path, ext):
    from ostinato.runtime.filestore import CheckedFileStorage, StoreError
    db, target = _a_database(tmp_path)
    if os.path.lexists(db + ext):
        os.unlink(db + ext)
    os.symlink(target, db + ext)
    with pytest.raises(StoreError) as e:
        CheckedFileStorage(db).close()
    assert str(e.value).startswith('%s%s is a symbolic link (to %s): ' % (db, ext, target)), e.value
    assert target.read_text() == 'keep me\n'
    assert os.path.islink(db + ext)


def _commit(storage):
    import transaction
    from ZODB import DB
    zdb = DB(storage)
    conn = zdb.open()
    conn.root()['x'] = [1, 2, 3]
    transaction.commit()
    conn.close()
    return zdb


def test_a_link_planted_while_the_database_is_open_is_not_followed_at_close(tmp_path):
    """ZODB writes its index at close to DB.index.index_tmp, opened by name."""
    from ostinato.runtime.filestore import CheckedFileStorage
    db, target = _a_database(tmp_path)
    zdb = _commit(CheckedFileStorage(db))
    os.symlink(target, db + '.index.index_tmp')
    zdb.close()
    assert target.read_text() == 'keep me\n'
    assert os.path.islink(db + '.index.index_tmp')    # the next start refuses it in one line


def test_a_link_planted_while_the_database_is_open_is_not_followed_by_a_pack(tmp_path):
    import time
    from ostinato.runtime.filestore import CheckedFileStorage
    db, target = _a_database(tmp_path)
    zdb = _commit(CheckedFileStorage(db))
    os.symlink(target, db + '.pack')
    try:
        with pytest.raises(OSError):
            zdb.pack(time.time() + 1)
    finally:
        zdb.close()
    assert target.read_text() == 'keep me\n'


def test_a_link_planted_after_the_look_at_the_trn_names_is_not_followed(tmp_path, monkeypatch):
    """--accept-truncation looks for the first free DB.trN, then ZODB opens it
    by name: a link planted in between (here: the look is made blind)."""
    from ostinato.runtime import filestore
    db, target = _a_database(tmp_path)
    os.truncate(db, os.path.getsize(db) - 10)
    os.symlink(tmp_path / 'elsewhere', db + '.tr0')
    monkeypatch.setattr(os.path, 'lexists', lambda p: False)
    with pytest.raises(filestore.StoreError) as e:
        filestore.CheckedFileStorage(db, damage='accept').close()
    assert str(e.value).startswith('%s.tr0 is a symbolic link' % db), e.value
    assert not os.path.exists(tmp_path / 'elsewhere')
