"""The database: opening ZODB storages and finding the world in them.

`--db PATH` (env `OSTINATO_DB`, default `./ostinato.fs`) opens a FileStorage;
`--memory` a throw-away in-memory storage; `zeo://HOST:PORT` or a ZEO unix
socket path (`zeo:PATH`) attaches to a ZEO server.  Only `runtime/` (and
`effects/`) touch connections and transactions (DESIGN.md §1, rule 4).
"""
from __future__ import annotations

import os
import sys

import transaction
import ZODB
from ZODB.MappingStorage import MappingStorage

from ..vm import values as V
from .world import SCHEMA_VERSION, World

ROOT_KEY = 'ostinato'


class StoreError(Exception):
    """A database that cannot be opened; the message says what to do."""


def default_db_path():
    return os.environ.get('OSTINATO_DB') or 'ostinato.fs'


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


def open_storage(address=None, memory=False, read_only=False):
    """A ZODB storage for `address` (a file path, `zeo://HOST:PORT` or
    `zeo:SOCKET`), or an in-memory one."""
    if memory:
        return MappingStorage()
    address = address or default_db_path()
    if address.startswith('zeo://') or address.startswith('zeo:'):
        from ZEO.ClientStorage import ClientStorage
        rest = address[6:] if address.startswith('zeo://') else address[4:]
        if address.startswith('zeo://'):
            host, _, port = rest.rpartition(':')
            addr = (host or '127.0.0.1', int(port))
        else:
            addr = rest
        return ClientStorage(addr, wait_timeout=10, read_only=read_only)
    from ZODB.FileStorage import FileStorage
    import zc.lockfile
    try:
        return FileStorage(address, read_only=read_only)
    except zc.lockfile.LockError:
        pid = _lock_holder(address)
        who = ''
        if pid:
            name = _process_name(pid)
            who = ' by process %d%s' % (pid, ' (%s)' % name if name else '')
        raise StoreError(
            "the database %s is in use%s.\n"
            "A running 'ostinato serve' shares it: use 'ostinato repl' or 'ostinato tasks', "
            "which attach to it." % (address, who)) from None
    except OSError as e:
        raise StoreError('cannot open the database %s: %s' % (
            address, e.strerror or e)) from None


class Store:
    """One open database with one connection and its transaction manager."""

    def __init__(self, address=None, memory=False, storage=None):
        self.address = address
        self.storage = storage if storage is not None else open_storage(address, memory)
        self.db = ZODB.DB(self.storage, large_record_size=1 << 26)
        self.tm = transaction.TransactionManager()
        self.conn = self.db.open(self.tm)
        self.world = self._world()

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
            raise StoreError('%s: %s' % (self.address or 'the database', e)) from None
        if done and not self.storage.isReadOnly():
            sys.stderr.write('ostinato: upgraded the database %s to schema %d (%s)\n'
                             % (self.address or '', SCHEMA_VERSION, '; '.join(done)))
        return self.conn.root()[ROOT_KEY]

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
        self.tm.commit()

    def abort(self):
        self.tm.abort()

    def transact(self, fn, attempts=50):
        """Run fn() and commit, again from a fresh view of the database
        whenever another client's commit conflicts with it."""
        import time
        from ZODB.POSException import ConflictError
        for attempt in range(attempts):
            self.tm.abort()
            try:
                result = fn()
                self.tm.commit()
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
            self.db.close()
            # The predefined Error type of a closed database must not leak into
            # later runs in this process.
            V.set_error_type(V.make_error_type())
