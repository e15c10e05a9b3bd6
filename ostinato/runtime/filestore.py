"""FileStorage files: opening one safely, and checking one through.

ZODB's FileStorage repairs its file on its own when it opens it for
writing: reading the transactions its index does not cover (all of them
without an index), it cuts the file at the first one that is not whole and
committed -- moved to PATH.trN, said only in its log -- and goes on from
there.  That is right after a crash in the middle of a commit (that
transaction was never committed: its status byte still says "checkpoint"),
and wrong when committed data is gone or damaged -- a truncated copy, a bad
disk, a flipped byte in a transaction header: going on from an older state
silently redoes work whose effects (printed lines, sent messages) happened.
And a file cut at a transaction boundary looks whole to ZODB.

So every open first walks what ZODB is about to read, with ZODB's own
record checks (`fstest`): nothing after a clean stop (the index covers the
file), the transactions since the last clean stop after a crash, all of
them only without an index.  Then it compares the end with what the file is
known to have held:
- `PATH.commits` (ours) records where each of the last RING commits ended
  and its transaction id, written after the commit -- the way PostgreSQL's
  pg_control records its last checkpoint -- so a file that lost whole
  transactions at its end is noticed at start instead of used;
- `PATH.index` (ZODB's index, saved at each clean close) records the
  file's length then; it speaks only where PATH.commits cannot.
When what ZODB would read is not whole committed transactions (other than
one uncommitted transaction at the very end, left by a crash), or the file
ends before what these record, the open is refused with what was lost
(`DamagedDatabase`), unless the operator accepts going on from the last
good transaction (the cut-off bytes are kept in PATH.trN, by ZODB's own
truncation).  PATH.commits also keeps the size and CRC of the index ZODB
saved last: ZODB checks only an index's last entries, and a damaged one
sends reads to wrong records of a sound file, so another one is rebuilt.

Damage in the middle of the file is found when a record is read, or by
`verify`, the thorough check (`ostinato db verify`): every transaction and
data record header (ZODB's fstest), then every current object loaded and
unpickled, and every reference resolved (as ZODB's fsrefs).

FileStorage keeps no checksum of an object's data, and a flipped byte in a
pickle often still unpickles -- into a frame without its stack, an opcode
that does not exist, a different letter -- which the VM would then trip
over.  So each record this storage writes is sealed: after the pickle
(whose STOP opcode ends what any unpickler reads, so every reader of ZODB
records, an older Ostinato included, reads it as before) come SEAL and the
CRC-32 of the pickle, checked whenever the record is loaded.  Records
written before (or by another program) have no seal and are read unchecked.
A record that fails its check raises DamagedRecord, which the store's
connection reports as `DamagedDatabase` with the object and offset.
"""
from __future__ import annotations

import datetime
import os
import pickle
import struct
import zlib

from ZODB.FileStorage import FileStorage
from ZODB.FileStorage.FileStorage import packed_version as MAGIC
from ZODB.FileStorage.format import TRANS_HDR_LEN, CorruptedError
from ZODB.TimeStamp import TimeStamp
from ZODB.utils import z64

STATUS_AT = 16          # offset of the status byte in a transaction header


class StoreError(Exception):
    """A database that cannot be opened; the message says what to do."""


class DamagedDatabase(BaseException):
    """The database file is damaged: its end is missing or not whole, or a
    record cannot be read.  The message says what was lost and what to do.

    A BaseException, like SystemExit: the scheduler fails a task on any
    Exception and goes on, and going on here means building on a damaged
    file; this one must reach the command, which ends with EXIT_DAMAGED."""

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


EXIT_DAMAGED = 74       # sysexits EX_IOERR: the database file is damaged

WHAT_TO_DO = ("restore the database from a backup; 'ostinato db verify --db {path}' "
              "checks every record (and 'ostinato db check' the tasks)")


def when(tid):
    """A transaction id as the UTC time it was committed."""
    t = TimeStamp(tid).timeTime()
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        '%Y-%m-%d %H:%M:%S UTC')


def _tid_text(tid):
    """A transaction id in words, even a damaged one."""
    try:
        return 'of %s' % when(tid)
    except Exception:
        return tid.hex()


def plural(n, word):
    return '%s %s%s' % ('{:,}'.format(n), word, '' if n == 1 else 's')


# -- sealed records -----------------------------------------------------------

SEAL = b'OCRC'
_CRC = struct.Struct('>I')


class DamagedRecord(Exception):
    """A record that fails its checksum (picklable: ZEO sends it to clients).
    args: the object's oid, where its record is, what is wrong."""

    def describe(self, kind=None):
        oid, where, problem = (tuple(self.args) + ('', '', ''))[:3]
        details = '; '.join(x for x in (kind, where) if x)
        return 'object %s%s %s' % (oid, ' (%s)' % details if details else '', problem)

    def __str__(self):
        return self.describe()


def seal(data):
    """A pickle record with its checksum after it."""
    return data + SEAL + _CRC.pack(zlib.crc32(data))


def unseal(data):
    """The pickle of a record read back, its checksum checked when it has
    one; what is wrong with it raises ValueError."""
    if len(data) > 9 and data[-8:-4] == SEAL and data[-9:-8] == b'.':
        body = data[:-8]
        if _CRC.pack(zlib.crc32(body)) != data[-4:]:
            raise ValueError('fails its checksum')
        return body
    if data[-1:] != b'.':
        raise ValueError('does not end as a record does')
    return data


# -- what a path holds ------------------------------------------------------

def preflight(path):
    """Refuse what is no FileStorage before ZODB opens it (and, writable,
    would write its header into it): a folder, a text file, a file whose
    header is damaged."""
    if os.path.isdir(path):
        raise StoreError('%s is a folder, not a database file (give --db the path of '
                         'a file, e.g. %s)' % (path, os.path.join(path, 'ostinato.fs')))
    for ext, held in COMPANIONS:
        check_own_file(path + ext, 'a file of the database %s' % path, held)
    kind = _not_regular(path)
    if kind:
        # /dev/null reads as an empty file: ZODB would take it for a new
        # database and make DEV.commits, .index, .lock and .tmp beside it.
        raise StoreError('%s is %s, not a database file (give --db the path of a regular '
                         'file)' % (path, kind))
    try:
        with open(path, 'rb') as f:
            head = f.read(4)
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreError('cannot open the database %s: %s' % (path, e.strerror or e)) from None
    if not head or head == MAGIC:
        return
    if len(head) < 4 and MAGIC.startswith(head):
        raise DamagedDatabase('the database %s is damaged: it is cut short to %s (a database '
                              'has at least 4); %s' % (path, plural(len(head), 'byte'),
                                                       WHAT_TO_DO.format(path=path)))
    if len(head) == 4 and sum(a != b for a, b in zip(head, MAGIC)) == 1:
        raise DamagedDatabase('the database %s is damaged: its header at offset 0 reads %r '
                              'instead of %r; %s' % (path, head, MAGIC,
                                                     WHAT_TO_DO.format(path=path)))
    raise StoreError('%s is not an Ostinato database (a database file starts with %r; '
                     'this one with %s)' % (path, MAGIC.decode(), repr(head)[1:]))


# The files beside a database, and what each holds (what moving it away
# loses).  ZODB opens most of them for writing, following symlinks.
COMPANIONS = (
    ('.index', "ZODB's index, which it rebuilds from the database file"),
    ('.index.index_tmp', "ZODB's index while it is saved, nothing once it is"),
    ('.tmp', 'a commit while it is written, nothing between commits'),
    ('.lock', "the lock's process id, nothing once that process ended"),
    ('.commits', 'the record of the last commits: without it a cut in the database file '
                 'made before now may go unnoticed'),
    ('.pack', 'a pack while it runs, nothing once it ended'),
)


def check_own_file(path, whose, held):
    """Refuse a symlink (not followed: the target would be overwritten with
    the database's data, or the log's) or anything but a regular file at
    the name of a file Ostinato writes (`whose`: which, in words), in one
    line saying what moving it away loses (`held`: what the file holds)."""
    import stat
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreError('cannot look at %s, %s: %s' % (path, whose, e.strerror or e)) from None
    if stat.S_ISLNK(mode):
        try:
            target = ' (to %s)' % os.readlink(path)
        except OSError:
            target = ''
        raise StoreError('%s is a symbolic link%s: %s is never reached through a link '
                         'Ostinato did not make (its target would be overwritten); remove the '
                         'link -- the link holds nothing, and its target is left as it is'
                         % (path, target, whose))
    kind = _not_regular(path)
    if kind:
        raise StoreError('%s is %s, not a file (%s, which holds %s); move it away: nothing '
                         'of it is in there' % (path, kind, whose, held))


def _refuse_if_link(e, path):
    """The open of `path` met a symlink (planted after preflight looked):
    refused as preflight refuses one."""
    import errno
    if isinstance(e, OSError) and e.errno == errno.ELOOP and os.path.islink(path):
        for ext, held in COMPANIONS:
            if path.endswith(ext):
                check_own_file(path, 'a file of the database %s' % path[:-len(ext)], held)
        check_own_file(path, 'a file Ostinato writes', 'nothing')


def _not_regular(path):
    """What the existing `path` is when it is no regular file (following
    symlinks), in words; None for a regular file or nothing."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    for test, words in ((stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
                        (stat.S_ISFIFO, 'a FIFO'), (stat.S_ISSOCK, 'a socket'),
                        (stat.S_ISDIR, 'a folder')):
        if test(mode):
            return words
    return 'not a regular file'


def index_end(path):
    """The file length recorded in ZODB's index PATH.index at its last save,
    or None.  Only the first pickle of the file is read (fsIndex.save writes
    the length first), with an unpickler that builds no objects."""
    class Plain(pickle.Unpickler):
        def find_class(self, module, name):
            raise pickle.UnpicklingError('no classes here')
    try:
        with open(path + '.index', 'rb', opener=_nofollow) as f:
            pos = Plain(f).load()
    except Exception:
        return None
    return pos if isinstance(pos, int) and pos >= 4 else None


# -- the record of the last commits -------------------------------------------

def file_crc(path):
    """(size, CRC-32) of a file, or None if it cannot be read."""
    crc, size = 0, 0
    try:
        with open(path, 'rb', opener=_nofollow) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    return size, crc
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
    except OSError:
        return None


class Commits:
    """PATH.commits: where each of the last RING commits ended, which
    database they are of, and which index file ZODB saved last.

    A header names the database by its first transaction (id and end: `db
    pack` starts a new one) and seals PATH.index as ZODB last saved it (size
    and CRC-32); then a ring of fixed slots (sequence number, the file's
    inode, end offset, transaction id, CRC-32), one pwrite per commit after
    ZODB's fsync; a slot torn by a crash fails its CRC and is ignored.

    The record applies to a file by what the file holds, not by which file
    it is: a copy (`cp`, a backup restored) holds the same first transaction,
    so it keeps the protection -- cut short, it is refused as the original
    would be.  A file whose first transaction is another is another
    database: the record is not applied to it, and starts again.  A record
    written before the header named the database (b'OSTC') applies to the
    file of the inode in its slots, or to a file that holds one of the
    transactions it records where it records it.  (The inode is still
    written, so an older Ostinato reads the record as before.)

    The index is ZODB's cache of where every object is: a damaged one sends
    reads to the wrong records while the file is fine, so one that is not
    the one saved last is not used (ZODB rebuilds it from the file)."""

    SLOT = struct.Struct('>QQQ8sI4x')
    # b'OSTD', index size, index CRC, first transaction's id and end, CRC of these
    HEAD = struct.Struct('>4sQI8sQI')
    HEAD_MAGIC = b'OSTD'
    OLD_HEAD = struct.Struct('>4sQII')  # b'OSTC', index size, index CRC, CRC of these
    OLD_HEAD_MAGIC = b'OSTC'
    RING = 1024

    def __init__(self, path, writable):
        self.path = path + '.commits'
        self.entries = []           # (seq, ino, end, tid), oldest first
        self.index_seal = None      # (size, CRC) of PATH.index as last saved
        self.first = None           # (tid, end) of the database's first transaction
        self.foreign = False        # the record is of another database than the file
        self.applied = None         # the entries about the file, once judged (about)
        self.fd = None
        self.failed = None          # why the record can no longer be written
        self._read()
        self.seq = self.entries[-1][0] if self.entries else 0
        if writable:
            try:
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
            except OSError as e:
                _refuse_if_link(e, self.path)
                self.failed = e.strerror or str(e)

    def _read(self):
        size = self.SLOT.size
        try:
            with open(self.path, 'rb', opener=_nofollow) as f:
                data = f.read(size * (self.RING + 1))
        except OSError as e:
            _refuse_if_link(e, self.path)
            return
        if len(data) >= self.HEAD.size and data[:4] == self.HEAD_MAGIC:
            magic, isize, icrc, ftid, fend, crc = self.HEAD.unpack_from(data)
            if crc == zlib.crc32(data[:self.HEAD.size - 4]):
                self.index_seal = (isize, icrc) if isize else None
                self.first = (ftid, fend) if fend else None
        elif len(data) >= self.OLD_HEAD.size and data[:4] == self.OLD_HEAD_MAGIC:
            magic, isize, icrc, crc = self.OLD_HEAD.unpack_from(data)
            if crc == zlib.crc32(data[:self.OLD_HEAD.size - 4]):
                self.index_seal = (isize, icrc)
        for at in range(size, len(data) - size + 1, size):
            seq, ino, end, tid, crc = self.SLOT.unpack_from(data, at)
            if seq and crc == zlib.crc32(data[at:at + size - 8]):
                self.entries.append((seq, ino, end, tid))
        self.entries.sort()

    def about(self, f):
        """The commits recorded of the database in the open file `f`; sets
        `foreign` when the record is of another database.  Judged once."""
        if self.applied is None:
            self.applied = self._about(f)
        return self.applied

    def disown(self):
        """The record is of a database that is not this one."""
        self.foreign, self.applied = True, []

    def _about(self, f):
        first = first_transaction(f)
        if self.first is not None:
            # A file cut to less than its first transaction is still judged
            # by the record: all of it was lost.
            self.foreign = first is not None and first != self.first
            return [] if self.foreign else list(self.entries)
        ino = os.fstat(f.fileno()).st_ino
        mine = [e for e in self.entries if e[1] == ino]
        if mine:
            return mine
        if any(_committed_tid_ending_at(f, e[2]) == e[3] for e in self.entries):
            return list(self.entries)
        self.foreign = bool(self.entries)
        return []

    def index_matches(self, index_path):
        """Whether PATH.index is the one ZODB saved last (None: not known)."""
        if self.index_seal is None or self.foreign or not os.path.exists(index_path):
            return None
        return file_crc(index_path) == self.index_seal

    def _write(self, data, at):
        if self.fd is None:
            return
        try:
            os.pwrite(self.fd, data, at)
        except OSError as e:
            # The commit itself is done; only the check at the next open
            # loses precision.  Stop trying (a full disk fails every time).
            self.failed = e.strerror or str(e)
            self.close()

    def note(self, ino, end, tid):
        self.seq += 1
        body = struct.pack('>QQQ8s', self.seq, ino, end, tid)
        slot = self.SLOT.pack(self.seq, ino, end, tid, zlib.crc32(body))
        self._write(slot, (1 + self.seq % self.RING) * self.SLOT.size)

    def _write_head(self):
        size, crc = self.index_seal or (0, 0)
        tid, end = self.first or (z64, 0)
        head = self.HEAD.pack(self.HEAD_MAGIC, size, crc, tid, end, 0)[:self.HEAD.size - 4]
        self._write(head + struct.pack('>I', zlib.crc32(head)), 0)

    def name(self, first):
        """The database's first transaction (tid, end), once it has one."""
        if first is not None and first != self.first:
            self.first = first
            self._write_head()

    def seal_index(self, index_path):
        self.index_seal = file_crc(index_path)
        self._write_head()

    def reset(self, ino, end, tid, first=None):
        """Forget every slot: the file was rewritten (packed), its damaged
        end accepted, or the record was of another database; the record
        starts again at its new end."""
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, self.SLOT.size)
        except OSError as e:
            self.failed = e.strerror or str(e)
            self.close()
            return
        self.entries = []
        self.foreign, self.applied = False, None
        self.first = first
        self.index_seal = None
        self._write_head()
        self.note(ino, end, tid)

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# O_NOFOLLOW where the system has it: a companion file is never reached
# through a symlink.  preflight refuses one in words before the open; the
# flag closes the window between that look and the open itself.
_NOFOLLOW = getattr(os, 'O_NOFOLLOW', 0)


def _nofollow(path, flags):
    return os.open(path, flags | _NOFOLLOW, 0o666)


# ZODB and zc.lockfile open a database's companions by name with the
# built-in open(), which follows a symlink: .lock and .tmp when the storage
# opens, .index when it reads it and (through .index.index_tmp) at every
# close, .pack in a pack, .trN in an accepted cut -- all after preflight
# looked, some long after.  Their modules' open() is this one, which adds
# O_NOFOLLOW for the companions of a database a CheckedFileStorage opened
# (the database file itself may be a link the operator made; any other file
# they open is left as it was).  A link planted at any time is then an
# error at the open (ELOOP), never a write to its target.
_GUARDED: set = set()
_COMPANION_EXTS = ('.index', '.index.index_tmp', '.tmp', '.lock', '.pack', '.commits')


def _is_companion(name):
    if not isinstance(name, str):
        return False
    for ext in _COMPANION_EXTS:
        if name.endswith(ext) and name[:-len(ext)] in _GUARDED:
            return True
    base, dot, n = name.rpartition('.tr')
    return bool(dot) and n.isdigit() and base in _GUARDED


def _open(file, mode='r', *args, **kw):
    if not args and 'opener' not in kw and _is_companion(file):
        kw['opener'] = _nofollow
    return open(file, mode, *args, **kw)


def _guard_zodb_opens():
    import importlib
    for name in ('ZODB.FileStorage.FileStorage', 'ZODB.FileStorage.fspack', 'ZODB.fsIndex',
                 'zc.lockfile'):
        importlib.import_module(name).open = _open     # type: ignore[attr-defined]


_guard_zodb_opens()


def first_transaction(f):
    """(id, end) of the first transaction of the FileStorage file `f` when it
    is whole and committed, else None.  Read with pread: the file's position
    is ZODB's."""
    fd = f.fileno()
    h = os.pread(fd, TRANS_HDR_LEN, 4)
    if len(h) < TRANS_HDR_LEN:
        return None
    end = 4 + int.from_bytes(h[8:16], 'big') + 8
    tail = os.pread(fd, 8, end - 8)
    if h[STATUS_AT:STATUS_AT + 1] not in (b' ', b'p', b'u') or tail != h[8:16]:
        return None
    return h[:8], end


# -- the end of the file ------------------------------------------------------

class EndReport:
    """What the end of a file holds compared with what it is known to have
    held.  `damaged` is None when all is well."""

    def __init__(self, path, size):
        self.path = path
        self.size = size
        self.good_end = size        # just after the last whole committed transaction
        self.last_tid = None        # that transaction's id
        self.damaged = None         # why the end is not what it should be
        self.lost_bytes = 0
        self.lost = None            # committed transactions lost, if known
        self.lost_more = False      # ... or at least that many
        self.lost_last_tid = None   # the last of them, if known
        self.debris = 0             # bytes of an uncommitted transaction (a crash)
        self.kept_in = None         # where the cut-off bytes went, once accepted

    def message(self):
        lost = []
        if self.lost == 1 and not self.lost_more:
            lost.append('the last transaction')
        elif self.lost:
            lost.append('the last %s%s' % ('at least ' if self.lost_more else '',
                                           plural(self.lost, 'transaction')))
        if self.lost_bytes:
            lost.append(plural(self.lost_bytes, 'byte'))
        if self.lost_last_tid:
            lost.append('committed up to %s' % when(self.lost_last_tid))
        lost = ' Lost: %s.' % ', '.join(lost) if lost else ''
        good = (' Its last good transaction is of %s (it ends at offset %s).'
                % (when(self.last_tid), '{:,}'.format(self.good_end))
                if self.last_tid else ' No transaction of it is left.')
        return ('the database %s is damaged: %s.%s%s\n'
                'to go on from its last good transaction (the work done after it is done '
                'again), pass --accept-truncation; or %s.'
                % (self.path, self.damaged, lost, good, WHAT_TO_DO.format(path=self.path)))

    def warning(self):
        """For a command that only reads: it reads the file as of its last
        good transaction."""
        return '%s Shown as of that transaction.' % self.message().split('\n')[0]

    def accepted(self):
        trunc = ''
        if self.kept_in:
            trunc = ' (the %s after it are kept in %s)' % (
                plural(self.size - self.good_end, 'byte'), self.kept_in)
        return ('accepted the damage to %s: going on from %s%s'
                % (self.path, 'its transaction of %s' % when(self.last_tid)
                   if self.last_tid else 'an empty database', trunc))


class CheckedFileStorage(FileStorage):
    """A FileStorage that looks at the end of its file before ZODB reads it,
    and records where each commit ended (PATH.commits).

    damage: 'refuse' (raise DamagedDatabase), 'accept' (cut the file at the
    last good transaction and go on), or 'warn' (read-only: open as of the
    last good transaction; the report is in `self.end_report`)."""

    def __init__(self, file_name, read_only=False, damage='refuse', **kw):
        self._damage = damage
        _GUARDED.update((file_name, os.path.abspath(file_name)))
        self._commits = Commits(file_name, writable=not read_only)
        # No file: a new database, and a record beside it is of one deleted.
        self._new = not os.path.exists(file_name)
        self.end_report = None
        self.notes = []         # what the opener should tell the operator
        try:
            super().__init__(file_name, read_only=read_only, **kw)
        except OSError as e:
            self._close_all()
            for ext, _ in COMPANIONS:
                _refuse_if_link(e, file_name + ext)
            raise
        except BaseException:
            self._close_all()
            raise
        self._inode = os.fstat(self._file.fileno()).st_ino
        first = first_transaction(self._file)
        if read_only:
            pass
        elif self._damage == 'accept' and self.end_report is not None:
            self._commits.reset(self._inode, self._pos, self._ltid, first)
        elif self._commits.foreign:
            self.notes.append('%s.commits records %s: it is started again for this one'
                              % (self.__name__, 'a database deleted since' if self._new else
                                 'another database (its first transaction is not the one '
                                 'of %s)' % self.__name__))
            self._commits.reset(self._inode, self._pos, self._ltid, first)
        else:
            self._commits.name(first)
            ring = self._commits.entries
            if not ring or ring[-1][2] != self._pos:
                self._commits.note(self._inode, self._pos, self._ltid)

    # ZODB calls this once the file is open (and locked, when writable) and
    # before it reads the transactions after what its index covers -- which,
    # opened for writing, it would cut at the first bad one, wherever that is:
    # the place to look first.
    def _restore_index(self):
        # ZODB reads the index without following a link (_open), and on any
        # error rebuilds it; one planted since preflight is refused as there.
        try:
            check_own_file(self.__name__ + '.index', 'a file of the database %s'
                           % self.__name__, dict(COMPANIONS)['.index'])
        except StoreError:
            self._close_all()
            raise
        if self._new and self._commits.entries:
            self._commits.disown()
        self._commits.about(self._file)         # of this database, or of another?
        index_ok = self._commits.index_matches(self.__name__ + '.index')
        if index_ok is False:
            self.notes.append('the index %s.index is not the one saved last (it is damaged, '
                              'or an older one): it is rebuilt from the file'
                              % self.__name__)
            restored = None
        else:
            restored = super()._restore_index()     # (index, its end, its last tid) or None
        start, ltid = (restored[1], restored[2]) if restored else (4, z64)
        report = examine_end(self._file, self.__name__, self._commits, start, ltid,
                             use_index=index_ok is not False and not self._new)
        if report.damaged:
            self.end_report = report
            if self._damage == 'refuse':
                self._close_all()
                raise DamagedDatabase(report.message(), report)
            if self._damage == 'accept' and report.good_end < report.size:
                try:
                    report.kept_in = _cut(self._file, self.__name__, report.good_end)
                except StoreError:
                    self._close_all()
                    raise
        return restored

    def _save_index(self):
        try:
            super()._save_index()
        except OSError as e:
            import errno
            if e.errno != errno.ELOOP:
                raise
            # A link planted at PATH.index.index_tmp since the open: the index
            # is not saved (ZODB rebuilds it), and the next open refuses the
            # link in words.
            return
        if not self._is_read_only:
            self._commits.seal_index(self.__name__ + '.index')

    def _close_all(self):
        """Let go of what FileStorage.__init__ opened (it failed)."""
        for f in (getattr(self, '_file', None), getattr(self, '_tfile', None)):
            if f is not None:
                f.close()
        if getattr(self, '_files', None) is not None:
            self._files.close()
        if getattr(self, '_lock_file', None) is not None:
            self._lock_file.close()
        self._commits.close()

    # A data record's header names its transaction (its serial), and ZODB
    # believes it: one flipped bit there and a load returns an older
    # revision (the serial looks newer than the database), and every later
    # commit of the object conflicts -- an endless retry, at every start.
    # So every header read is checked against the transaction it is in.
    def _read_data_header(self, pos, oid=None, _file=None):
        h = super()._read_data_header(pos, oid, _file)
        f = self._file if _file is None else _file
        after = f.tell()
        f.seek(h.tloc)
        tid = f.read(8)
        f.seek(after)
        if tid != h.tid:
            from ZODB.utils import oid_repr
            raise DamagedRecord(oid_repr(h.oid), 'record at offset {:,}'.format(pos),
                                'names another transaction (%s) than the one it is in (%s, '
                                'at offset {:,})'.format(h.tloc) % (_tid_text(h.tid),
                                                                    _tid_text(tid)))
        return h

    def current_record_problems(self):
        """What is wrong with the header of each object's current record (a
        quick check, for `db check`: `verify` reads every record)."""
        problems = []
        with self._files.get() as f:
            for oid, pos in list(self._index.items()):
                try:
                    self._read_data_header(pos, oid, f)
                except DamagedRecord as e:
                    problems.append(str(e))
                except (CorruptedError, struct.error, ValueError, OverflowError) as e:
                    from ZODB.utils import oid_repr
                    problems.append('object %s (record at offset {:,}) cannot be read: %s'.format(
                        pos) % (oid_repr(oid), ' '.join(str(e).split())[:200]))
        return problems

    # Records are sealed as they are written and checked as they are read.
    def store(self, oid, oldserial, data, version, transaction):
        # FileStorage reads the object's current record header to check for
        # a conflict: one it cannot read is damage (DamagedRecord), not a
        # Python error of the committer.
        try:
            return super().store(oid, oldserial, seal(data), version, transaction)
        except CorruptedError as e:
            from ZODB.utils import oid_repr
            raise DamagedRecord(oid_repr(oid), '', 'cannot be read: %s' % ' '.join(
                str(e).split())[:200]) from None

    def tryToResolveConflict(self, *args, **kw):
        return seal(super().tryToResolveConflict(*args, **kw))

    def load(self, oid, version=''):
        data, tid = super().load(oid, version)
        return self._unseal(oid, data, tid, current=True), tid

    def loadBefore(self, oid, tid):
        found = super().loadBefore(oid, tid)
        if found is None:
            return None
        data, start, end = found
        return self._unseal(oid, data, start, current=end is None), start, end

    def loadSerial(self, oid, serial):
        return self._unseal(oid, super().loadSerial(oid, serial), serial)

    def _unseal(self, oid, data, tid, current=False):
        from ZODB.utils import oid_repr
        try:
            return unseal(data)
        except ValueError as e:
            where = 'the record of the transaction of %s' % when(tid)
            if current:
                try:
                    where = 'its current record at offset {:,}, of the transaction of %s'.format(
                        self._lookup_pos(oid)) % when(tid)
                except Exception:
                    pass
            raise DamagedRecord(oid_repr(oid), where, str(e)) from None

    def _finish(self, tid, u, d, e):
        super()._finish(tid, u, d, e)
        self._commits.note(self._inode, self._pos, tid)
        if self._commits.first is None:         # the first commit of a new database
            self._commits.name(first_transaction(self._file))

    def pack(self, t, referencesf, gc=None):
        result = super().pack(t, referencesf, gc)
        with self._lock:
            self._inode = os.fstat(self._file.fileno()).st_ino
            self._commits.reset(self._inode, self._pos, self._ltid,
                                first_transaction(self._file))
        return result

    def close(self):
        try:
            super().close()
        finally:
            self._commits.close()


def _cut(f, path, at):
    """ZODB's repair of a damaged end, as its FileStorage._truncate does it:
    the bytes after `at` go to the first free PATH.trN and the file is cut
    there; the name kept in.  Made here because ZODB opens that PATH.trN by
    name, following a symlink planted there: here it is created exclusively
    (O_EXCL, which never follows a link), and an existing link or non-file
    at a name is refused in words."""
    n = 0
    while True:
        name = '%s.tr%d' % (path, n)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            break
        except FileExistsError:
            check_own_file(name, 'a file of the database %s' % path,
                           'what an accepted damage cut off its end')
            n += 1
    with os.fdopen(fd, 'wb') as out:
        f.seek(at)
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    f.seek(at)
    f.truncate()
    return name


def _committed_tid_ending_at(f, end):
    """The id of the committed transaction that ends exactly at `end`, or
    None: its redundant length (the 8 bytes before `end`) leads back to a
    header that gives the same length and a committed status."""
    if end < 4 + TRANS_HDR_LEN + 8:
        return None
    f.seek(end - 8)
    tl = int.from_bytes(f.read(8), 'big')
    start = end - 8 - tl
    if start < 4 or tl < TRANS_HDR_LEN:
        return None
    f.seek(start)
    h = f.read(TRANS_HDR_LEN)
    if len(h) != TRANS_HDR_LEN:
        return None
    tid, hl, status = h[:8], int.from_bytes(h[8:16], 'big'), h[16:17]
    if hl != tl or status not in (b' ', b'p', b'u'):
        return None
    return tid


def _walk(f, path, start, ltid, size):
    """Check whole transactions from `start` (a known boundary) with ZODB's
    fstest, as far as they go; returns (the end of the last whole committed
    one, its id, why the next one is not, or None at the end of the file)."""
    from ZODB.scripts import fstest
    pos, why = start, None
    while pos < size:
        f.seek(pos)
        try:
            nxt, tid = fstest.check_trec(path, f, pos, ltid, size)
        except (fstest.FormatError, CorruptedError, struct.error, ValueError, OverflowError,
                OSError) as e:
            why = str(e)
            if why.startswith(path + ' '):
                why = why[len(path) + 1:]
            break
        if nxt is None:
            break
        pos, ltid = nxt, tid
    return pos, (ltid if ltid != z64 else None), why


def examine_end(f, path, commits, start=4, ltid=z64, use_index=True):
    """An EndReport of the open FileStorage file `f` (see the module doc):
    every transaction from `start` on (where ZODB's index ends: a boundary
    it checked, whose transaction is `ltid`) is walked, then the end is
    compared with what the record of commits and the index say.
    use_index: whether PATH.index may witness the file's length."""
    # The record of commits is read (when `commits` was made) before the
    # file's length: it is written after the file, so what it says is in the
    # file already, even while another process writes.
    f.seek(0, 2)
    size = f.tell()
    ring = commits.about(f)
    # ZODB's index witnesses the length only where the record of commits
    # cannot: it is older, and unchecked.
    iend = index_end(path) if use_index and not ring else None
    report = EndReport(path, size)
    if size <= 4:
        report.good_end = 4
    elif start >= size:
        report.good_end, report.last_tid = size, (ltid if ltid != z64 else None)
    else:
        report.good_end, report.last_tid, why = _walk(f, path, start, ltid, size)
        if report.good_end < size:
            _judge_rest(f, report, why)
    _compare(f, report, ring, iend)
    return report


def _judge_rest(f, report, why):
    """The bytes after the last whole committed transaction: an uncommitted
    transaction that ends the file, left by a crash in the middle of a
    commit (no damage: ZODB drops it), or damage."""
    at = report.good_end
    rest = report.size - at
    f.seek(at)
    h = f.read(TRANS_HDR_LEN)
    tl = int.from_bytes(h[8:16], 'big') if len(h) >= 16 else 0
    if len(h) <= STATUS_AT or (h[STATUS_AT:STATUS_AT + 1] == b'c' and at + tl + 8 >= report.size):
        report.debris = rest
        return
    report.lost_bytes = rest
    if len(h) == TRANS_HDR_LEN and at + tl + 8 > report.size:
        report.damaged = ('the transaction record at offset %s is cut short or damaged: it says '
                          'it is %s long, and %s are left' % (
                              '{:,}'.format(at), plural(tl + 8, 'byte'), '{:,}'.format(rest)))
    else:
        report.damaged = 'the transaction record at offset %s is damaged (%s)' % (
            '{:,}'.format(at), why or 'it is not whole')


def _compare(f, report, ring, iend):
    """Compare the file's good end with what PATH.commits and PATH.index
    say it held."""
    known_end, witness = 0, ''
    if ring:
        seq, ino, end, tid = ring[-1]
        if end > report.good_end:
            known_end = end
            report.lost_last_tid = tid
            lost = [e for e in ring if e[2] > report.good_end]
            report.lost = len(lost)
            # Exact only when the ring reaches back to the good end.
            report.lost_more = len(lost) == len(ring) and len(ring) >= Commits.RING - 1
        elif (end, tid) != (4, z64) and _committed_tid_ending_at(f, end) != tid:
            # (4, no transaction): the empty file every database begins as,
            # noted at its first open; held by any database file.
            report.damaged = report.damaged or (
                'it does not hold the transaction of %s that %s.commits records at '
                'offset %s: it was replaced or rewritten since it was last used here'
                % (when(tid), report.path, '{:,}'.format(end)))
    if iend is not None and iend > max(known_end, report.good_end):
        known_end = iend
        witness = (' (so says its index %s.index, saved then. Only if you know the index '
                   'is the wrong one -- an older copy -- move it away: ZODB rebuilds it from '
                   'the file, and then nothing tells that transactions were lost: the work '
                   'they did is done again)' % report.path)
    if known_end > max(report.size, report.good_end):
        # Bytes are missing at the end, not only unreadable.
        report.lost_bytes = known_end - report.good_end
        cut = ('it ends at offset %s, but it held %s when it was last used%s'
               % ('{:,}'.format(report.size), plural(known_end, 'byte'), witness))
        report.damaged = cut + ('; ' + report.damaged if report.damaged else '')
    elif known_end > report.good_end:
        report.lost_bytes = max(report.lost_bytes, known_end - report.good_end)
        report.damaged = report.damaged or (
            'its last %s are not a whole committed transaction' % plural(
                report.size - report.good_end, 'byte'))


# -- the thorough check -------------------------------------------------------

def verify(path, out, limit=20):
    """Check every record of the FileStorage at `path` and write what is
    wrong to `out`: the end (as at open), every transaction and data record
    header (ZODB's fstest), the checksum of every record, and every current
    object loaded and unpickled with its references resolved (as ZODB's
    fsrefs).  Returns the number of problems found; what is no database at
    all raises StoreError, a damaged header DamagedDatabase."""
    from ZODB.scripts import fstest
    problems = []
    preflight(path)
    if not os.path.exists(path):
        raise StoreError('no database at %s' % path)
    commits = Commits(path, writable=False)
    with open(path, 'rb') as f:
        report = examine_end(f, path, commits)
        if report.damaged:
            problems.append(report.message().split('\n')[0])
        pos, ltid, transactions = 4, z64, 0
        while pos < report.good_end:
            f.seek(pos)
            try:
                pos, ltid = fstest.check_trec(path, f, pos, ltid, report.good_end)
            except (fstest.FormatError, struct.error, ValueError, OverflowError, OSError) as e:
                problems.append('a damaged transaction record: %s' % e)
                break
            if pos is None:
                break
            transactions += 1
    objects = 0
    if not problems or (report.damaged and len(problems) == 1):
        objects = _verify_records(path, problems)
    for p in problems[:limit]:
        out.write('%s\n' % p)
    if len(problems) > limit:
        out.write('... and %d more\n' % (len(problems) - limit))
    if problems:
        out.write('%s: damaged (%s); %s\n' % (
            path, plural(len(problems), 'problem'), WHAT_TO_DO.format(path=path).split(';')[0]))
    else:
        out.write('%s: %s, %s, %s: no damage found\n' % (
            path, plural(transactions, 'transaction'), plural(objects, 'current object'),
            plural(report.size, 'byte')))
    return len(problems)


def _verify_records(path, problems):
    """Check the checksum of every record, then load and unpickle every
    current object; note what fails.  Returns the number of objects."""
    import logging
    log = logging.getLogger('ZODB.FileStorage')
    level = log.level
    log.setLevel(logging.CRITICAL + 1)      # what ZODB would log, the checks below report
    try:
        storage = CheckedFileStorage(path, read_only=True, damage='warn')
    except BaseException as e:       # ZODB's own scan found a bad record
        problems.append('ZODB cannot read it: %s' % ' '.join(str(e).split()))
        return 0
    finally:
        log.setLevel(level)
    try:
        index = storage._index      # as ZODB's fsrefs: the current record of every oid
        _verify_revisions(storage, set(index.values()), problems)
        return _verify_objects(storage, index, problems)
    finally:
        storage.close()


def _verify_revisions(storage, current, problems):
    """Every record in file order: its header names its transaction and
    points back to the object's previous record (ZODB's read_index checks
    the same while it builds an index), and older revisions -- not loaded
    while the database runs, but read by undo and history -- pass their
    checksums too."""
    from ZODB.utils import oid_repr
    previous = {}
    try:
        for txn in storage.iterator():
            for rec in txn:
                where = 'object %s (record at offset {:,}, transaction of %s)'.format(
                    rec.pos) % (oid_repr(rec.oid), when(txn.tid))
                h = storage._read_data_header(rec.pos)
                if h.tid != txn.tid:
                    problems.append('%s names another transaction' % where)
                if h.prev != previous.get(rec.oid, 0):
                    problems.append('%s points back to offset {:,} instead of {:,}'.format(
                        h.prev, previous.get(rec.oid, 0)) % where)
                previous[rec.oid] = rec.pos
                if rec.data is None or rec.pos in current:
                    continue        # current records are loaded below
                try:
                    unseal(rec.data)
                except ValueError as e:
                    problems.append('an older revision of %s %s' % (where, e))
    except Exception as e:
        problems.append('ZODB cannot read its transactions: %s' % ' '.join(str(e).split()))


def _verify_objects(storage, index, problems):
    import ZODB
    from ZODB.POSException import POSKeyError
    from ZODB.serialize import referencesf
    from ZODB.utils import oid_repr
    oids = list(index.keys())
    if not oids:
        return 0
    db = ZODB.DB(storage)
    conn = db.open()
    try:
        for n, oid in enumerate(oids):
            where = 'object %s (record at offset {:,})'.format(index[oid]) % oid_repr(oid)
            try:
                data, _ = storage.load(oid)
            except POSKeyError:
                continue    # its creation was undone: no current record
            except DamagedRecord as e:
                problems.append(str(e))
                continue
            except Exception as e:
                problems.append('%s cannot be read: %s' % (where, e))
                continue
            try:
                refs = referencesf(data)
            except Exception as e:
                problems.append('%s is not a whole pickle: %s: %s' % (where, type(e).__name__, e))
                continue
            for ref in refs:
                if ref not in index:
                    problems.append('%s refers to object %s, which does not exist'
                                    % (where, oid_repr(ref)))
            problem = unpickle_problem(conn, oid, where)
            if problem is not None:
                problems.append(problem)
            if n % 1000 == 999:
                conn.cacheMinimize()
        return len(oids)
    finally:
        conn.close()


def unpickle_problem(conn, oid, where):
    """What is wrong with loading object `oid` through `conn` (its class
    gone, its pickle unreadable), or None: shared by both verifies."""
    from ZODB.broken import Broken
    try:
        obj = conn.get(oid)
        obj._p_activate()
        if isinstance(obj, Broken):
            return '%s is of a class that does not exist: %s' % (where, type(obj).__name__)
    except Exception as e:
        return '%s cannot be unpickled: %s: %s' % (where, type(e).__name__,
                                                   ' '.join(str(e).split())[:200])
    return None
