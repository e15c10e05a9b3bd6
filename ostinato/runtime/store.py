"""The database: opening ZODB storages and finding the world in them.

`--db PATH` (env `OSTINATO_DB`, default `./ostinato.fs`) opens a FileStorage
(checked at open: runtime/filestore.py); `--memory` a throw-away in-memory
storage; `zeo://HOST:PORT` or a ZEO unix socket path (`zeo:PATH`) attaches
to a ZEO server.  Only `runtime/` (and `effects/`) touch connections and
transactions (DESIGN.md §1, rule 4).

A record that cannot be read (damaged in the middle of the file, where the
check at open does not look) raises `DamagedDatabase` from the connection,
whatever the reader was doing, instead of a Python error deep in the VM.
"""
from __future__ import annotations

import logging
import os
import struct
import sys

import transaction
import ZODB
from ZODB.Connection import Connection
from ZODB.MappingStorage import MappingStorage

from ..vm import values as V
from .filestore import (WHAT_TO_DO, CheckedFileStorage, DamagedDatabase, DamagedRecord,
                        StoreError, preflight)
from .world import SCHEMA_VERSION, World

ROOT_KEY = 'ostinato'


class StoreFailed(StoreError):
    """A commit could not be written (the disk is full, an I/O error).  The
    process must stop: what was committed before is intact, and the same
    command continues from there once the cause is fixed."""


class StoreUnreachable(StoreError):
    """The database server (PostgreSQL) does not answer: it restarted, or
    the network is down.  Nothing of the transaction in progress was
    committed; a serve worker waits for the server and goes on."""


def _unreachable(e, name):
    from . import pg
    if isinstance(e, StoreUnreachable):
        return e
    if pg.unreachable(e):
        return StoreUnreachable('the database server of %s does not answer (%s)'
                                % (name, _one_line(e)))
    return None


class TooLarge(Exception):
    """A commit would write more than the limit (`Store.max_write`): refused
    before any of it reaches the storage."""

    def __init__(self, written, limit):
        super().__init__('stored %d MB in one turn (the limit is %d MB)' % (
            written >> 20, limit >> 20))
        self.written = written


# What one commit of turns may write at most (the scheduler's limit on a
# turn, DESIGN.md §9).  ZODB's own warning about large records (a 20-line
# text on stderr) is left to this limit: no record beyond it is written.
MAX_WRITE = 64 << 20


class TooDeep(Exception):
    """A commit failed because a value is nested too deeply to be stored
    (tuples inside tuples: every other container is a record of its own)."""


class _IndexNotSaved(logging.Filter):
    """Closing after a failed write (a full disk) cannot save the index; the
    next open rebuilds it, so it is nothing to report with a traceback."""

    def filter(self, record):
        return not str(record.msg).startswith('Error saving index')


logging.getLogger('ZODB.FileStorage').addFilter(_IndexNotSaved())
# A commit that failed also fails to clean up after itself, and the
# transaction package logs that at ERROR with a traceback (on a logger per
# thread, under 'txn'); the failure is reported once, in words
# (StoreFailed).  What it logs as CRITICAL (a failure in the second phase
# of a commit) is still shown.
logging.getLogger('txn').setLevel(logging.CRITICAL)


def _committing(commit, abort, where):
    """Run `commit`; a failure of the disk or of the value's depth is undone
    and raised as what it means."""
    try:
        commit()
    except RecursionError:
        abort()
        raise TooDeep('cannot store a value nested this deeply (tuples or curried functions '
                      'inside each other, thousands of levels deep); the turn was undone') \
            from None
    except OSError as e:
        abort()
        raise StoreFailed('cannot write the database %s: %s. Nothing committed before is '
                          'lost: make room (or fix the disk) and run the same command again '
                          'to continue' % (where, e.strerror or e)) from None


def default_db_path():
    return os.environ.get('OSTINATO_DB') or 'ostinato.fs'


# How many of the database's objects a connection keeps in memory between
# transactions (env OSTINATO_CACHE_OBJECTS).  ZODB's default, 400, is less
# than a burst's dialogues touch: a chat dialogue's turn reads about fifteen
# objects, so when 1,000 messages came in at once, what their intake had
# read was gone again by the time their turns ran -- about 10 loads a
# message, against 3 with room for them all, and 450 -> 620-740 messages/s
# (bench/durable.py's burst).  20,000 objects held about 10 MB more.
CACHE_OBJECTS = 20000


def cache_objects():
    """The connection cache's size in objects: OSTINATO_CACHE_OBJECTS, or
    CACHE_OBJECTS (runtime/settings.py).  Raises StoreError for a bad
    value."""
    from .settings import SettingError, value
    try:
        return value('OSTINATO_CACHE_OBJECTS')
    except SettingError as e:
        raise StoreError(str(e)) from None


def _lock_holder(path):
    """The pid written into a FileStorage lock file, if any."""
    try:
        with open(path + '.lock') as f:
            text = f.read().strip()
        return int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _process_name(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().replace(b'\0', b' ').decode('utf-8', 'replace').strip()
    except OSError:
        return None


def private_files():
    """From now on this process creates files for its owner only: the
    database (.fs), its .index, .tmp, .lock and .pack files hold every chat.
    As PostgreSQL's server does at start (umask 077), for the whole
    process, since ZODB creates some of them long after the open (the index
    at close, the pack file)."""
    os.umask(os.umask(0o077) | 0o077)


def warn_if_readable(path, err=None, what='database', holds='every chat', companions=True):
    """Say so when an existing database -- the file or any file beside it
    that it writes (runtime/filestore.py COMPANIONS) -- can be read or
    changed by other users of the machine (made before its files were
    private, or copied): they could read every chat in it.  Its files are
    left as they are: the owner decides."""
    import stat
    import sys
    from .filestore import COMPANIONS
    open_to_others = []
    names = [path] + ([path + ext for ext, _ in COMPANIONS] + [path + '.old']
                      if companions else [])
    for name in names:
        try:
            mode = os.lstat(name).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and mode & 0o066:
            open_to_others.append((name, stat.S_IMODE(mode)))
    if open_to_others:
        verb = 'read' if any(m & 0o044 for _, m in open_to_others) else 'change'
        (err or sys.stderr).write(
            'ostinato: warning: other users of this machine can %s the %s %s (%s); '
            'it holds %s: make it private with  chmod 600 %s\n'
            % (verb, what, path, ', '.join('%s is %04o' % (os.path.basename(n), m)
                                           for n, m in open_to_others),
               holds, ' '.join(_quoted(n) for n, _ in open_to_others)))


def _quoted(path):
    import shlex
    return shlex.quote(path)


def _what_to_do(cmdline):
    """What the user can do about a database another process holds, by
    what that process is."""
    words = (cmdline or '').split()
    command = next((w for w in words if w in ('run', 'serve', 'repl', 'db')), None) \
        if any('ostinato' in w for w in words) else None
    if command == 'serve':
        return ("A running 'ostinato serve' shares it: use 'ostinato repl' or 'ostinato tasks', "
                "which attach to it.")
    if command in ('run', 'repl', 'db'):
        return ("'ostinato %s' holds it alone until it ends: wait for it or stop it (Ctrl-C "
                "stops it between two turns; nothing is lost).  'ostinato tasks' can look at "
                "it meanwhile (read-only).  To share a database while it runs, run it with "
                "'ostinato serve', which 'ostinato repl' and 'ostinato tasks' attach to."
                % command)
    return ("A running 'ostinato serve' would share it through 'ostinato repl' and "
            "'ostinato tasks'; any other process holds it alone until it ends.")


def open_storage(address=None, memory=False, read_only=False, accept_truncation=False):
    """A ZODB storage for `address` (a file path, `zeo://HOST:PORT`,
    `zeo:SOCKET` or `postgresql://...`: runtime/pg.py), or an in-memory one.

    A file whose end is missing or damaged raises DamagedDatabase, unless
    `accept_truncation` (the file goes on from its last good transaction) or
    `read_only` (it is read as of then; `storage.end_report` says what is
    wrong, for the command to warn)."""
    if memory:
        return MappingStorage()
    address = address or default_db_path()
    from . import pg
    if pg.is_postgres(address):
        return pg.open_relstorage(address, read_only=read_only)
    if address.startswith('zeo://') or address.startswith('zeo:'):
        from ZEO.ClientStorage import ClientStorage
        rest = address[6:] if address.startswith('zeo://') else address[4:]
        if address.startswith('zeo://'):
            host, _, port = rest.rpartition(':')
            addr = (host or '127.0.0.1', int(port))
        else:
            addr = rest
        return ClientStorage(addr, wait_timeout=10, read_only=read_only)
    import zc.lockfile
    private_files()
    preflight(address)              # a folder or a text file: one line, before any warning
    warn_if_readable(address)
    damage = 'warn' if read_only else 'accept' if accept_truncation else 'refuse'
    try:
        storage = CheckedFileStorage(address, read_only=read_only, damage=damage)
    except zc.lockfile.LockError:
        pid = _lock_holder(address)
        who = ''
        name = _process_name(pid) if pid else None
        if pid:
            who = ' by process %d%s' % (pid, ' (%s)' % name if name else '')
        raise StoreError("the database %s is in use%s.\n%s"
                         % (address, who, _what_to_do(name))) from None
    except _unreadable() as e:
        # ZODB read a record it cannot make sense of while it built its index.
        raise _damaged(address, e) from None
    except OSError as e:
        raise StoreError('cannot open the database %s: %s' % (
            address, e.strerror or e)) from None
    for note in storage.notes:
        sys.stderr.write('ostinato: %s\n' % note)
    if storage.end_report is not None and accept_truncation and not read_only:
        sys.stderr.write('ostinato: %s\n' % storage.end_report.accepted())
    return storage


def _unreadable():
    from ZODB.FileStorage.FileStorage import FileStorageError
    from ZODB.FileStorage.format import CorruptedError
    return (FileStorageError, CorruptedError, ValueError, struct.error, OverflowError,
            DamagedRecord)


def _damaged(name, e):
    return DamagedDatabase('the database %s is damaged: %s; %s' % (
        name, _one_line(e), WHAT_TO_DO.format(path=name)))


def _one_line(e):
    text = ' '.join(str(e).split()) or 'no message'
    return text if len(text) <= 300 else text[:297] + '...'


class _Connection(Connection):
    """A connection that reports a record it cannot read as damage: which
    object, where, and what to do -- not a Python error from inside the
    unpickler, wherever in the VM the object was touched."""

    # Bytes this transaction may store; None: no limit (Store.max_write).
    max_write = None
    _written = 0

    def tpc_begin(self, transaction):
        self._written = 0
        super().tpc_begin(transaction)

    def _store_objects(self, writer, transaction):
        if self.max_write is not None:
            writer = _Counted(writer, self)
        return super()._store_objects(writer, transaction)

    def setstate(self, obj):
        try:
            return super().setstate(obj)
        except Exception as e:
            raise self._damaged(obj._p_oid, type(obj).__name__, e)

    def get(self, oid):
        from ZODB.POSException import POSKeyError
        try:
            return super().get(oid)
        except POSKeyError:
            raise
        except Exception as e:
            raise self._damaged(oid, None, e)

    def _damaged(self, oid, kind, e):
        from transaction.interfaces import TransientError
        from ZODB.POSException import ConnectionStateError
        from ZODB.utils import oid_repr
        if isinstance(e, (TransientError, ConnectionStateError)):
            return e        # a conflict, a lost ZEO server, a closed connection: no damage
        storage = self._db.storage
        name = getattr(self._db, 'ostinato_name', None) or storage.getName()
        lost = _unreachable(e, name)
        if lost is not None:
            return lost     # PostgreSQL went away: no damage either
        while e.__cause__ is not None and not str(e):
            e = e.__cause__       # ZODB's StateLoadError says nothing; its cause does
        e = _from_server(e)
        if isinstance(e, DamagedRecord):
            what = e.describe(kind)
        else:
            where = ''
            try:
                where = 'record at offset {:,}'.format(storage._lookup_pos(oid))
            except Exception:
                pass
            details = '; '.join(x for x in (kind, where) if x)
            what = 'object %s%s cannot be read (%s: %s)' % (
                oid_repr(oid), ' (%s)' % details if details else '', type(e).__name__,
                _one_line(e))
        return DamagedDatabase('the database %s is damaged: %s; %s' % (
            name, what, WHAT_TO_DO.format(path=name)))


def _from_server(e):
    """ZEO hands over an exception of a class it does not know as
    ServerException(class name, args): the serve process's DamagedRecord."""
    from ZEO.Exceptions import ServerException
    if (isinstance(e, ServerException) and len(e.args) == 2
            and e.args[0] == DamagedRecord.__module__ + '.' + DamagedRecord.__name__):
        return DamagedRecord(*e.args[1])
    return e


def _file_of(address):
    """The database file behind an address, for messages: the socket of a
    serve process is FILE.serve/socket (runtime/serve.py)."""
    tail = '.serve' + os.sep + 'socket'
    if address and address.startswith('zeo:') and not address.startswith('zeo://') \
            and address.endswith(tail):
        return address[4:-len(tail)]
    return address


class _Counted:
    """An ObjectWriter that counts what it serializes against its
    connection's `max_write`, and refuses a record before it is stored:
    a short turn could otherwise commit a gigabyte between the scheduler's
    checks, which measure the storage only at slice checkpoints."""

    def __init__(self, writer, conn):
        self.writer = writer
        self.conn = conn

    def __iter__(self):
        return iter(self.writer)

    def serialize(self, obj):
        p = self.writer.serialize(obj)
        conn = self.conn
        n = conn._written = conn._written + len(p)
        if n > conn.max_write:
            raise TooLarge(n, conn.max_write)
        return p


class _DB(ZODB.DB):
    klass = _Connection


class Store:
    """One open database with one connection and its transaction manager."""

    def __init__(self, address=None, memory=False, storage=None, accept_truncation=False):
        self.address = address
        cache = cache_objects()
        self.storage = storage if storage is not None else open_storage(
            address, memory, accept_truncation=accept_truncation)
        try:
            self.db = _DB(self.storage, large_record_size=MAX_WRITE + 1, cache_size=cache)
        except BaseException:
            self.storage.close()
            raise
        from . import pg
        self.db.ostinato_name = pg.shown(_file_of(address))
        self.tm = transaction.TransactionManager()
        self.conn = self.db.open(self.tm)
        try:
            if pg.is_postgres(address) and not self.storage.isReadOnly():
                # Workers that start at once on a new or older database:
                # one creates or migrates the world, the others then find it.
                with pg.schema_lock(address):
                    self.tm.abort()
                    self.world = self._world()
            else:
                self.world = self._world()
        except BaseException:       # e.g. the world's record is damaged
            self.close()
            raise

    def _world(self):
        root = self.conn.root()
        w = root.get(ROOT_KEY)
        if w is None:
            w = World()
            root[ROOT_KEY] = w
            self.tm.get().note('ostinato: new world')
            self.tm.commit()
        elif getattr(w, 'schema', None) != SCHEMA_VERSION:
            w = self._migrate()
        V.set_error_type(w.error_type)
        return w

    def _migrate(self):
        """Bring an older database to this schema in one transaction
        (runtime/migrations.py), and say so.  A read-only view is migrated
        in memory only: it never commits."""
        from .migrations import MigrationError, migrate

        def run():
            self.tm.get().note('ostinato: schema migration')
            return migrate(self.conn.root()[ROOT_KEY])
        try:
            done = run() if self.storage.isReadOnly() else self.transact(run)
        except MigrationError as e:
            self.tm.abort()
            raise StoreError('%s: %s' % (self.db.ostinato_name or 'the database', e)) from None
        if done and not self.storage.isReadOnly():
            sys.stderr.write('ostinato: upgraded the database %s to schema %d (%s)\n'
                             % (self.db.ostinato_name or '', SCHEMA_VERSION, '; '.join(done)))
        return self.conn.root()[ROOT_KEY]

    def pack(self, days=0):
        """Drop old revisions and unreachable objects.  Packing reads every
        record ZODB keeps: one it cannot make sense of is damage."""
        try:
            self.db.pack(days=days)
        except _unreadable() as e:
            raise _damaged(self.db.ostinato_name or self.storage.getName(), e) from None

    @property
    def max_write(self):
        return self.conn.max_write

    @max_write.setter
    def max_write(self, limit):
        """Refuse a commit that would write more than `limit` bytes (TooLarge)."""
        self.conn.max_write = limit

    def size(self):
        """The storage's size in bytes (None in memory)."""
        if isinstance(self.storage, MappingStorage):
            return None
        try:
            return self.storage.getSize()
        except Exception:
            return None

    def commit(self, note=None):
        if note:
            self.tm.get().note(note)
        self._commit()

    def _commit(self):
        """Commit; a failure of the disk or of a value's depth is raised as
        what it means (`_committing`), and a record the storage could not
        read while it checked for conflicts is damage, reported as such."""
        try:
            _committing(self.tm.commit, self.tm.abort, self.db.ostinato_name or 'in memory')
        except Exception as e:
            lost = _unreachable(e, self.db.ostinato_name)
            if lost is not None:
                self._abort_quietly()
                raise lost from None
            record = _from_server(e)
            if not isinstance(record, DamagedRecord):
                raise
            self.tm.abort()
            name = self.db.ostinato_name or self.storage.getName()
            raise DamagedDatabase('the database %s is damaged: %s; %s' % (
                name, record, WHAT_TO_DO.format(path=name))) from None

    def abort(self):
        try:
            self.tm.abort()
        except Exception as e:
            lost = _unreachable(e, self.db.ostinato_name)
            if lost is None:
                raise
            self._abort_quietly()
            raise lost from None

    def _abort_quietly(self):
        try:
            self.tm.abort()
        except Exception:
            pass        # the server is gone: the next transaction starts afresh

    def transact(self, fn, attempts=50):
        """Run fn() and commit, again from a fresh view of the database
        whenever another client's commit conflicts with it."""
        import time
        from ZODB.POSException import ConflictError
        for attempt in range(attempts):
            self.abort()
            try:
                result = fn()
                self._commit()
                return result
            except ConflictError:
                self.tm.abort()
                time.sleep(0.002 * attempt)
        raise StoreError('gave up after %d conflicting attempts' % attempts)

    def close(self):
        try:
            self.tm.abort()
            self.conn.close()
        finally:
            try:
                self.db.close()
            except OSError:
                pass        # the index was not saved (a full disk): the next open rebuilds it
            # The predefined Error type of a closed database must not leak into
            # later runs in this process.
            V.set_error_type(V.make_error_type())
