"""A damaged database is never used silently, and never ends in a Python
traceback (issue 11: finding 7, and the flipped byte of finding 9).

Real FileStorage files made by real `ostinato run` processes, then cut
short or given a flipped bit, and opened again by the command:
- a file cut to half, in the middle of its last transaction, or just before
  it (a whole transaction gone, which only the record of commits
  `DB.commits` and ZODB's index `DB.index` can tell) is refused with exit 74
  and a report of what was lost: how many transactions, how many bytes, the
  time of the last good one; also after `kill -9`, when ZODB's index is
  stale.  With --accept-truncation the run goes on from the last good
  transaction and ends as an uninterrupted run would (every step in the
  stored list once), and the next run opens the file without a word;
- an uncommitted transaction left at the end by a crash is no damage;
- a flipped bit anywhere in the file (seeded random positions, and chosen
  ones: the file header, transaction and data record headers, current
  records) never gives a Python traceback: the run exits 0 with exactly the
  output of the undamaged file, or 74 with lines that start 'ostinato: ' and
  name the file; `db verify` finds at least what the run found;
- a text file or a folder given as --db is one line and exit 2 for every
  command, and the file is left as it was.
"""
from __future__ import annotations

import datetime
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# Slow (whole runs on damaged files): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
_EXE = os.path.join(os.path.dirname(sys.executable), 'ostinato')
OSTINATO = [_EXE] if os.path.exists(_EXE) else [sys.executable, '-m', 'ostinato']
TIMEOUT = 180
EXIT_DAMAGED = 74
SEED = int(os.environ.get('DAMAGE_SEED', '7'))
RANDOM_FLIPS = int(os.environ.get('DAMAGE_FLIPS', '24'))

# Forty steps, each a turn of its own; after step 20 the program sleeps a
# while, so a kill there never lands in the middle of a commit.
STEPS = '''\
log = []
for i in 0..40:
    append(log, i)
    print("step {i}")
    if i == 20:
        sleep(1.5)
    else:
        sleep(0)
print("done {length(log)} {log == list(0..40)}")
'''
DONE = 'done 40 true'


def env():
    e = dict(os.environ)
    e.pop('OSTINATO_DB', None)
    return e


def ost(*args, cwd):
    return subprocess.run(OSTINATO + [str(a) for a in args], cwd=cwd, env=env(),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=TIMEOUT)


def until_step_20(folder, stop, program=STEPS):
    """`ostinato run` of STEPS into folder/db.fs, stopped by signal `stop`
    once it printed step 20 (while it sleeps).  Returns the lines printed."""
    (folder / 'steps.ost').write_text(program)
    proc = subprocess.Popen(OSTINATO + ['run', '--db', 'db.fs', 'steps.ost'], cwd=folder,
                            env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        printed = []
        for line in proc.stdout:
            printed.append(line.rstrip('\n'))
            if line.startswith('step 20'):
                proc.send_signal(stop)
                break
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert printed[-1:] == ['step 20'], (printed, err)
    assert 'Traceback' not in err, err
    return printed + out.splitlines()


def transactions(path):
    """(start, end, tid) of every whole committed transaction, by ZODB's
    fstest record checks."""
    from ZODB.scripts import fstest
    found = []
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        pos, ltid = 4, b'\0' * 8
        while pos < size:
            f.seek(pos)
            try:
                nxt, tid = fstest.check_trec(str(path), f, pos, ltid, size)
            except fstest.FormatError:
                break
            if nxt is None:
                break
            found.append((pos, nxt, tid))
            pos, ltid = nxt, tid
    return found


def utc(tid):
    from ZODB.TimeStamp import TimeStamp
    return datetime.datetime.fromtimestamp(TimeStamp(tid).timeTime(), datetime.timezone.utc) \
        .strftime('%Y-%m-%d %H:%M:%S UTC')


def continued(out):
    """The steps a run printed, checked to go on to the end: consecutive
    steps up to 39, then the summary of a list that holds every step once."""
    lines = out.splitlines()
    assert lines and lines[-1] == DONE, out
    steps = [int(l.split()[1]) for l in lines[:-1]]
    assert steps and steps == list(range(steps[0], 40)), out
    return steps


def no_traceback(*results):
    for r in results:
        assert 'Traceback' not in r.stderr + r.stdout, r.stderr


# -- cut short ---------------------------------------------------------------

# After kill -9 ZODB's index is stale and only DB.commits knows the end;
# after a clean stop both know it.
@pytest.mark.parametrize('cut,stop', [('half', 'SIGKILL'), ('mid-record', 'SIGKILL'),
                                      ('last transaction', 'SIGKILL'),
                                      ('last transaction', 'SIGTERM')])
def test_a_file_cut_short_is_refused_then_accepted(tmp_path, cut, stop):
    printed = until_step_20(tmp_path, getattr(signal, stop))
    db = tmp_path / 'db.fs'
    txns = transactions(db)
    size = os.path.getsize(db)
    assert txns[-1][1] == size          # the run left no partial transaction
    last = txns[-1]
    at = {'half': size // 2,
          'mid-record': (last[0] + last[1]) // 2,
          'last transaction': last[0]}[cut]
    good = [t for t in txns if t[1] <= at]
    lost = len(txns) - len(good)
    os.truncate(db, at)

    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == EXIT_DAMAGED, (r.stdout, r.stderr)
    assert r.stdout == ''
    err = r.stderr
    assert all(l.startswith('ostinato: ') for l in err.splitlines()), err
    assert 'the database %s is damaged' % db in err, err
    what = 'the last transaction' if lost == 1 else 'the last %d transactions' % lost
    assert 'Lost: %s, %s bytes' % (what, '{:,}'.format(size - good[-1][1])) in err, err
    assert 'Its last good transaction is of %s' % utc(good[-1][2]) in err, err
    assert '--accept-truncation' in err and 'backup' in err and 'db check' in err, err
    assert os.path.getsize(db) == at    # refused: the file is as it was

    # Reading commands show it as of the last good transaction, and say so.
    r = ost('tasks', '--db', db, cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0 and 'warning: the database' in r.stderr, r.stderr

    r = ost('run', '--accept-truncation', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert 'accepted the damage to %s' % db in r.stderr, r.stderr
    steps = continued(r.stdout)
    last_printed = int(printed[-1].split()[1])
    # The lost steps are done again: at least the last one.
    assert steps[0] <= last_printed, (printed, r.stdout)
    if cut == 'half':
        assert steps[0] < last_printed, (printed, r.stdout)

    # Accepted once: later opens are quiet.
    r = ost('db', 'verify', '--db', db, cwd=tmp_path)
    assert r.returncode == 0 and 'no damage found' in r.stdout, (r.stdout, r.stderr)
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0 and r.stderr == '', r.stderr


def test_without_the_record_of_commits_the_index_still_tells(tmp_path):
    """A file copied without DB.commits (or made by an older Ostinato): ZODB's
    index, saved at the last clean stop, still says how long the file was."""
    until_step_20(tmp_path, signal.SIGTERM)
    db = tmp_path / 'db.fs'
    os.unlink(str(db) + '.commits')
    last = transactions(db)[-1]
    os.truncate(db, last[0])
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == EXIT_DAMAGED, r.stderr
    assert 'Lost: %s bytes' % '{:,}'.format(last[1] - last[0]) in r.stderr, r.stderr


def test_an_uncommitted_transaction_left_by_a_crash_is_no_damage(tmp_path):
    """kill -9 in the middle of a commit leaves a transaction whose status
    still says 'checkpoint': it was never committed, ZODB drops it, and the
    run goes on as after any crash."""
    until_step_20(tmp_path, signal.SIGKILL)
    db = tmp_path / 'db.fs'
    start, end, tid = transactions(db)[-1]
    with open(db, 'rb') as f:
        f.seek(start)
        record = bytearray(f.read(end - start))
    later = (int.from_bytes(tid, 'big') + 1).to_bytes(8, 'big')
    record[:8] = later
    record[16:17] = b'c'
    with open(db, 'ab') as f:
        f.write(bytes(record[:len(record) * 2 // 3]))     # cut while it was written
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0, r.stderr
    assert 'damaged' not in r.stderr, r.stderr
    assert continued(r.stdout)[0] == 21, r.stdout


KILLED_BEFORE_THE_FIRST_COMMIT = """\
import os, sys
from ostinato.runtime.store import open_storage
open_storage(sys.argv[1])
os.kill(os.getpid(), 9)
"""


def test_a_new_database_killed_before_its_first_commit_is_no_damage(tmp_path):
    """A kill -9 of the first start between the database's creation and its
    first commit left a record of commits ending at offset 4 (the empty
    file every database begins as) with no transaction, and every later
    start refused the file as 'replaced or rewritten': a start that could
    not go on until the operator accepted a cut of nothing (found by
    killing `ostinato run` the moment its new file appeared: 8 of 10)."""
    (tmp_path / 'steps.ost').write_text(STEPS)
    db = tmp_path / 'db.fs'
    r = subprocess.run([sys.executable, '-c', KILLED_BEFORE_THE_FIRST_COMMIT, str(db)],
                       cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert os.path.getsize(db) == 4
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0 and r.stderr == '', r.stderr
    assert r.stdout.splitlines()[-1] == DONE, r.stdout


def test_a_new_database_closed_before_its_first_commit_opens_again(tmp_path):
    from ostinato.runtime.filestore import CheckedFileStorage
    db = str(tmp_path / 'db.fs')
    CheckedFileStorage(db).close()
    storage = CheckedFileStorage(db)
    assert storage.end_report is None and storage.notes == []
    storage.close()


def test_serve_refuses_a_file_cut_short_too(tmp_path):
    until_step_20(tmp_path, signal.SIGTERM)
    db = tmp_path / 'db.fs'
    os.truncate(db, os.path.getsize(db) - 10)
    for args in (['serve', '--db', db], ['repl', '--db', db], ['db', 'pack', '--db', db]):
        r = ost(*args, cwd=tmp_path)
        no_traceback(r)
        assert r.returncode == EXIT_DAMAGED, (args, r.stderr)
        assert 'is damaged' in r.stderr and '--accept-truncation' in r.stderr, r.stderr
    r = ost('db', 'verify', '--db', db, cwd=tmp_path)
    assert r.returncode == EXIT_DAMAGED and 'cut short' in r.stdout, r.stdout


# -- flipped bits --------------------------------------------------------------

@pytest.fixture(scope='module')
def stopped_pipeline(tmp_path_factory):
    """A database of tests/crash/pipeline.ost (queues, objects, several
    tasks) stopped half-way, and what the rest of its run prints."""
    folder = tmp_path_factory.mktemp('pipeline')
    shutil.copy(HERE / 'crash' / 'pipeline.ost', folder / 'pipeline.ost')
    proc = subprocess.Popen(OSTINATO + ['run', '--db', 'base.fs', 'pipeline.ost'], cwd=folder,
                            env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        for n, line in enumerate(proc.stdout):
            if n == 15:
                proc.send_signal(signal.SIGTERM)
                break
        proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    ref = copy_db(folder, 'ref')
    r = ost('run', '--db', ref, 'pipeline.ost', cwd=folder)
    assert r.returncode == 0 and r.stdout.splitlines()[-1].startswith('summary'), r.stderr
    return folder, r.stdout


def copy_db(folder, name, index=True):
    for ext in ('', '.index', '.tr0'):
        if os.path.exists(folder / (name + '.fs' + ext)):
            os.unlink(folder / (name + '.fs' + ext))
    for ext in ('', '.index') if index else ('',):
        shutil.copy(folder / ('base.fs' + ext), folder / (name + '.fs' + ext))
    return folder / (name + '.fs')


def chosen_offsets(path):
    """Bytes whose damage each needs its own handling: the file header, the
    first transaction's status, the last transaction's length and redundant
    length, a data record header's oid and length, current records (the
    world, a frame)."""
    from ZODB.FileStorage import FileStorage
    from ZODB.utils import p64
    txns = transactions(path)
    first, last = txns[0], txns[-1]
    fs = FileStorage(str(path), read_only=True)
    try:
        world = fs._index[p64(1)]
        newest = max(fs._index.values())
    finally:
        fs.close()
    middle = txns[len(txns) // 2]
    with open(path, 'rb') as f:
        f.seek(middle[0] + 17)
        ul, dl, el = (int.from_bytes(f.read(2), 'big') for _ in range(3))
    drec = middle[0] + 23 + ul + dl + el
    return [1, first[0] + 16, last[0] + 12, last[1] - 1, drec + 5, drec + 41,
            world + 42 + 20, newest + 42 + 10, middle[0] + 3]


def test_a_flipped_bit_never_gives_a_traceback(stopped_pipeline):
    folder, expected = stopped_pipeline
    base = folder / 'base.fs'
    size = os.path.getsize(base)
    rng = random.Random(SEED)
    flips = [(off, rng.randrange(8)) for off in chosen_offsets(base)]
    flips += [(rng.randrange(size), rng.randrange(8)) for _ in range(RANDOM_FLIPS)]
    outcomes = {}
    for n, (off, bit) in enumerate(flips):
        # Every other one without ZODB's index: then ZODB reads every
        # transaction header as it opens the file (and, left alone, cuts the
        # file at the first bad one).
        db = copy_db(folder, 'flip', index=n % 2 == 0)
        with open(db, 'r+b') as f:
            f.seek(off)
            b = f.read(1)[0]
            f.seek(off)
            f.write(bytes([b ^ (1 << bit)]))
        what = 'bit %d of the byte at offset %d (seed %d, %s)' % (
            bit, off, SEED, 'with its index' if n % 2 == 0 else 'without an index')
        verify = ost('db', 'verify', '--db', db, cwd=folder)
        run = ost('run', '--db', db, 'pipeline.ost', cwd=folder)
        no_traceback(verify, run)
        assert verify.returncode in (0, EXIT_DAMAGED), (what, verify.stdout, verify.stderr)
        if run.returncode == 0:
            assert run.stdout == expected, (what, run.stdout, run.stderr)
            outcomes[what] = 'unharmed' if verify.returncode == 0 else 'found by verify only'
        else:
            assert run.returncode == EXIT_DAMAGED, (what, run.returncode, run.stderr)
            lines = run.stderr.splitlines()
            assert lines and all(l.startswith('ostinato: ') for l in lines), (what, run.stderr)
            assert ('database %s is damaged' % db) in run.stderr, (what, run.stderr)
            assert verify.returncode == EXIT_DAMAGED, (what, run.stderr, verify.stdout)
            outcomes[what] = 'refused'
    # The chosen bytes are all found, by the run or by verify.
    chosen = len(chosen_offsets(base))
    assert all(o != 'unharmed' for o in list(outcomes.values())[:chosen]), outcomes


# -- not a database ------------------------------------------------------------

COMMANDS = [['run', '--db', None, 'prog.ost'], ['serve', '--db', None], ['repl', '--db', None],
            ['tasks', '--db', None], ['log', '--db', None], ['db', 'info', '--db', None],
            ['db', 'pack', '--db', None], ['db', 'verify', '--db', None]]


@pytest.mark.parametrize('kind', ['text file', 'folder', 'short file'])
def test_what_is_no_database_is_one_line(tmp_path, kind):
    (tmp_path / 'prog.ost').write_text('print("hello")\n')
    if kind == 'folder':
        target = tmp_path / 'dir'
        target.mkdir()
    else:
        target = tmp_path / 'notes.txt'
        target.write_bytes(b'my notes\nabout things\n' if kind == 'text file' else b'FS')
    before = sorted(os.listdir(tmp_path))
    for cmd in COMMANDS:
        r = ost(*[target if a is None else a for a in cmd], cwd=tmp_path)
        no_traceback(r)
        assert len(r.stderr.splitlines()) == 1, (cmd, r.stderr)
        if kind == 'short file':
            assert r.returncode == EXIT_DAMAGED, (cmd, r.stderr)
            assert 'is damaged: it is cut short to 2 bytes' in r.stderr, (cmd, r.stderr)
        else:
            assert r.returncode == 2, (cmd, r.returncode, r.stderr)
            expect = 'is a folder' if kind == 'folder' else 'is not an Ostinato database'
            assert expect in r.stderr and str(target) in r.stderr, (cmd, r.stderr)
    assert sorted(os.listdir(tmp_path)) == before
    if kind == 'text file':
        assert target.read_bytes() == b'my notes\nabout things\n'


def flip(path, off, mask=0x10):
    with open(path, 'r+b') as f:
        f.seek(off)
        b = f.read(1)[0]
        f.seek(off)
        f.write(bytes([b ^ mask]))


def current_record(path, oid):
    """The offset of the pickle of object `oid`'s current record."""
    from ZODB.FileStorage import FileStorage
    from ZODB.utils import p64
    fs = FileStorage(str(path), read_only=True)
    try:
        return fs._index[p64(oid)] + 42       # after the data record header
    finally:
        fs.close()


def test_serve_reports_a_damaged_record_in_one_line(stopped_pipeline):
    """Under serve the record is read by the ZEO server in the same process
    and the failure reaches the scheduler's connection as ZEO's
    ServerException: still one line, naming the file, and exit 74."""
    folder, _ = stopped_pipeline
    db = copy_db(folder, 'served')
    flip(db, current_record(db, 1) + 20)        # the world
    r = ost('serve', '--db', db, cwd=folder)
    no_traceback(r)
    assert r.returncode == EXIT_DAMAGED, r.stderr
    lines = [l for l in r.stderr.splitlines() if 'serving' not in l]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith('ostinato: the database %s is damaged: object 0x01 (World; '
                               'its current record at offset' % db), r.stderr
    assert 'fails its checksum' in lines[0] and 'backup' in lines[0], r.stderr
    assert not os.path.exists(str(db) + '.sock')


def test_a_damaged_index_is_rebuilt_not_used(stopped_pipeline):
    """ZODB checks only the last entries of its index: one damaged in the
    middle would send reads to wrong records of a sound file."""
    folder, expected = stopped_pipeline
    db = copy_db(folder, 'index')
    shutil.copy(folder / 'base.fs.commits', str(db) + '.commits')   # knows the index's CRC
    flip(str(db) + '.index', os.path.getsize(str(db) + '.index') // 2)
    r = ost('run', '--db', db, 'pipeline.ost', cwd=folder)
    no_traceback(r)
    assert r.returncode == 0 and r.stdout == expected, r.stderr
    assert r.stderr == ('ostinato: the index %s.index is not the one saved last (it is damaged, '
                        'or an older one): it is rebuilt from the file\n' % db), r.stderr


def test_records_are_sealed_and_plain_zodb_still_reads_them(tmp_path):
    """The checksum after each pickle is invisible to every ZODB reader (an
    older Ostinato, ZODB's scripts); a changed byte is caught on load."""
    import ZODB
    import transaction
    from persistent.mapping import PersistentMapping
    from ZODB.FileStorage import FileStorage

    from ostinato.runtime.store import DamagedDatabase, Store
    db = tmp_path / 'db.fs'
    store = Store(str(db))
    try:
        store.conn.root()['box'] = PersistentMapping(text='hello, world')
        store.commit()
    finally:
        store.close()
    plain = ZODB.DB(FileStorage(str(db), read_only=True))
    try:
        conn = plain.open(transaction.TransactionManager())
        assert conn.root()['box']['text'] == 'hello, world'
        box = conn.root()['box']._p_oid
        conn.close()
    finally:
        plain.close()
    with open(db, 'rb') as f:
        data = f.read()
    at = data.rindex(b'hello, world')
    assert data[at:].index(b'OCRC') < 40           # the seal right after the pickle
    flip(db, at, 0x01)                             # 'hello' -> 'iello': still a valid pickle
    store = Store(str(db))
    try:
        with pytest.raises(DamagedDatabase) as e:
            store.conn.root()['box']['text']
        assert 'object %s' % ('0x%02x' % int.from_bytes(box, 'big')) in str(e.value)
        assert 'fails its checksum' in str(e.value)
    finally:
        store.close()


# -- a copy keeps its protection (issue 29, item 3) ------------------------------

# STEPS, each step committed on its own: a real wait between two steps.
SLOW_STEPS = STEPS.replace('sleep(0)', 'sleep(0.05)')

def cp(folder, src, dst):
    """What `cp` of a database does: new files (new inodes) with the same
    bytes, companions included."""
    for ext in ('', '.index', '.commits'):
        if os.path.exists(folder / (src + ext)):
            shutil.copyfile(folder / (src + ext), folder / (dst + ext))
            os.chmod(folder / (dst + ext), 0o600)
    return folder / dst


@pytest.mark.parametrize('back', [1, 5, 10])
def test_a_copy_cut_short_is_refused_as_the_original_is(tmp_path, back):
    """The record of commits is checked by what the file holds (the
    transactions it names, where they end), not by which file it is: a
    copy made after kill -9 and cut is refused like the original, and the
    message suggests deleting nothing without saying what is then lost."""
    until_step_20(tmp_path, signal.SIGKILL, SLOW_STEPS)
    if back == 1:       # a whole copy goes on without a word
        whole = cp(tmp_path, 'db.fs', 'whole.fs')
        r = ost('run', '--db', whole, 'steps.ost', cwd=tmp_path)
        assert r.returncode == 0 and r.stderr == '', r.stderr
        assert continued(r.stdout)[0] == 21, r.stdout
    copy = cp(tmp_path, 'db.fs', 'copy.fs')
    txns = transactions(copy)
    cut = txns[-back]
    os.truncate(copy, cut[0])
    r = ost('run', '--db', copy, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == EXIT_DAMAGED, (r.stdout, r.stderr)
    what = 'the last transaction' if back == 1 else 'the last %d transactions' % back
    assert 'Lost: %s, %s bytes' % (what, '{:,}'.format(txns[-1][1] - cut[0])) in r.stderr, \
        r.stderr
    assert 'delete' not in r.stderr.lower(), r.stderr
    assert os.path.getsize(copy) == cut[0]


def test_without_the_record_of_commits_the_index_does_not_say_delete_it(tmp_path):
    """Where only ZODB's index witnesses the length, the message says what
    moving the index away costs: this check, and the lost work done again."""
    until_step_20(tmp_path, signal.SIGTERM, SLOW_STEPS)
    db = tmp_path / 'db.fs'
    os.unlink(str(db) + '.commits')
    os.truncate(db, transactions(db)[-3][0])
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    assert r.returncode == EXIT_DAMAGED, r.stderr
    assert 'delete' not in r.stderr.lower(), r.stderr
    assert 'done again' in r.stderr, r.stderr


def test_a_record_of_another_database_is_not_applied(tmp_path):
    """DB.commits of another database (copied over, or the file replaced by
    another database): nothing of it applies; it is said and started again."""
    until_step_20(tmp_path, signal.SIGTERM, SLOW_STEPS)
    (tmp_path / 'other.ost').write_text('print("other")\n')
    r = ost('run', '--db', 'other.fs', 'other.ost', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    shutil.copyfile(tmp_path / 'db.fs.commits', tmp_path / 'other.fs.commits')
    r = ost('run', '--db', 'other.fs', 'other.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0 and r.stdout == 'other\n', r.stderr
    assert 'records another database' in r.stderr, r.stderr
    r = ost('run', '--db', 'other.fs', 'other.ost', cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == '', r.stderr


def test_an_old_record_of_commits_is_still_read(tmp_path):
    """A DB.commits written before the record named the database's first
    transaction (header b'OSTC'): its commits still witness the end."""
    import struct
    import zlib
    until_step_20(tmp_path, signal.SIGKILL, SLOW_STEPS)
    db = tmp_path / 'db.fs'
    with open(str(db) + '.commits', 'r+b') as f:
        head = b'OSTC' + struct.pack('>QI', 0, 0)
        f.write((head + struct.pack('>I', zlib.crc32(head))).ljust(40, b'\0'))
    txns = transactions(db)
    os.truncate(db, txns[-2][0])
    r = ost('run', '--db', db, 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == EXIT_DAMAGED, r.stderr
    assert 'Lost: the last 2 transactions' in r.stderr, r.stderr


def test_a_database_deleted_to_start_again_is_not_judged_by_its_old_record(tmp_path):
    """rm db.fs (the record of commits left beside it): the new database
    starts, told so, instead of being refused as the old one cut short."""
    until_step_20(tmp_path, signal.SIGTERM, SLOW_STEPS)
    os.unlink(tmp_path / 'db.fs')
    r = ost('run', '--db', 'db.fs', 'steps.ost', cwd=tmp_path)
    no_traceback(r)
    assert r.returncode == 0 and continued(r.stdout)[0] == 0, r.stderr
    assert 'db.fs.commits records a database deleted since' in r.stderr, r.stderr
