"""`ostinato serve`: run every task in the database, forever, and share the
live database with `ostinato repl` and `ostinato tasks` over a local ZEO
unix socket (owner-only permissions).

The serving process opens the FileStorage, runs a ZEO storage server for it
in a thread, and itself connects to that server like every other client, so
changes made from the REPL reach the scheduler (and the other way round)
through ZEO's invalidations.  A serve worker can also attach to an outside
ZEO server (`--db zeo://HOST:PORT`) to share the tasks with other workers.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time

from .scheduler import Scheduler, committing
from .store import Store, StoreError, open_storage
from .terminal import HarmlessWriter
from .txn import StoreTransactions


def socket_path_for(db_path):
    """Where `serve` listens for a database: in a folder of its own beside
    the database that only its owner may enter (some systems ignore the
    modes of a socket itself; PostgreSQL's socket directory is the same
    idea)."""
    return os.path.join(os.path.abspath(db_path) + '.serve', 'socket')


def live_socket(db_path):
    """The socket of a serve process running on `db_path`, or None."""
    path = socket_path_for(db_path)
    if not os.path.exists(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect(path)
        return path
    except OSError:
        return None
    finally:
        s.close()


def attach(db=None, memory=False, accept_truncation=False):
    """Open the database for a client (repl, tasks): through the socket of a
    running serve process when there is one, else the file itself (checked
    as `run` does: accept_truncation)."""
    if memory:
        return Store(memory=True)
    db = db or os.environ.get('OSTINATO_DB') or 'ostinato.fs'
    if db.startswith('zeo:'):
        return Store(db)
    sock = live_socket(db)
    if sock is not None:
        return Store('zeo:' + sock)
    return Store(db, accept_truncation=accept_truncation)


def _private_folder(path):
    """Make `path` a folder only this user may enter, or refuse one that
    someone else owns (it could be a trap in a shared folder)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    import stat
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise StoreError('%s is not a folder of this user: serve puts its socket there, so '
                         'remove it (or serve a database in another folder)' % path)
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


class _ClientLeft(logging.Filter):
    """ZEO logs, as an error, every client whose connection ends with a
    reset or a broken pipe -- which is how `ostinato tasks` and a repl that
    was left say goodbye.  That is no error of the server."""

    def filter(self, record):
        return not (str(record.msg).startswith('Disconnected') and record.args
                    and record.args[0] in ('BrokenPipeError', 'ConnectionResetError'))


logging.getLogger('ZEO.asyncio.server').addFilter(_ClientLeft())


class ZEOThread:
    """A ZEO storage server for one storage, on a unix socket, in a thread."""

    def __init__(self, storage, path):
        from ZEO.StorageServer import StorageServer
        _private_folder(os.path.dirname(path))
        if os.path.exists(path):
            os.unlink(path)        # a stale socket of a process that is gone
        old = os.umask(0o177)      # 0600 from the moment it exists
        try:
            self.server = StorageServer(path, {'1': storage})
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.path = path
        self.thread = threading.Thread(target=self.server.loop, kwargs={'timeout': 0.2},
                                       name='ostinato-zeo', daemon=True)
        self.thread.start()

    def close(self):
        try:
            self.server.close()
            self.thread.join(3)
        finally:
            if os.path.exists(self.path):
                os.unlink(self.path)
            try:
                os.rmdir(os.path.dirname(self.path))
            except OSError:
                pass        # not empty (not ours alone) or gone


class _Serving(StoreTransactions):
    """A server's turns: committed to its store; idle, it looks at the
    database again (Server.idle)."""

    def __init__(self, server):
        super().__init__(server.store)
        self.server = server

    def idle(self, sched, seconds, busy=()):
        self.server.idle(sched, seconds)


class Server:
    """The serve loop over a database."""

    def __init__(self, db=None, out=None, err=None, worker='main', watch_seconds=1.0,
                 services=(), memory=False, accept_truncation=False):
        import sys
        db = db or os.environ.get('OSTINATO_DB') or 'ostinato.fs'
        self.zeo = None
        self.shared = db.startswith('zeo:')
        if memory:
            # Nothing to share: no file names a socket for repl and tasks.
            self.store = Store(memory=True)
        elif self.shared:
            self.store = Store(db)
        else:
            if live_socket(db):
                raise StoreError("the database %s is already served (socket %s); use "
                                 "'ostinato repl' or 'ostinato tasks' to attach to it"
                                 % (db, socket_path_for(db)))
            storage = open_storage(db, accept_truncation=accept_truncation)
            try:
                self.zeo = ZEOThread(storage, socket_path_for(db))
            except BaseException:
                storage.close()
                raise
            try:
                self.store = Store('zeo:' + self.zeo.path)
            except BaseException:       # e.g. the world's record is damaged
                self.zeo.close()
                storage.close()
                raise
        # The operator's terminal or log: what a program prints there may
        # quote a user, so no escape code in it is written raw.
        self.out = HarmlessWriter(out or sys.stdout)
        self.err = err or sys.stderr
        self.worker = worker
        self.watch_seconds = watch_seconds
        self.last_watch = 0.0
        self.services = list(services)
        self.sched = self._scheduler()

    def _scheduler(self):
        store = self.store
        sched = Scheduler(store.world, out=self.out, err=self.err)
        sched.worker = self.worker
        # Workers that share an outside ZEO server claim each task in a
        # commit of its own, so two never run it at once; a database served
        # by this process has no other worker (the REPL runs no one's turns).
        sched.claim = self.shared
        sched.txn = _Serving(self)
        sched.services = self.services
        return sched

    def idle(self, sched, seconds):
        # A new transaction shows what other clients committed meanwhile.
        with committing:
            self.store.abort()
        now = time.time()
        if now - self.last_watch >= self.watch_seconds:
            self.last_watch = now
            with committing:
                self.store.transact(sched.upgrade_all)
            if sched.world.ready:
                return
        busy = [s for s in sched.services if s.busy(sched)]
        if busy:
            busy[0].wait(seconds)
        else:
            time.sleep(seconds)
        with committing:
            self.store.abort()

    def serve(self):
        """Run every task until interrupted (KeyboardInterrupt; the CLI turns
        SIGTERM into one)."""
        sched = self.sched

        def prepare():
            sched.recover()
            sched.upgrade_all()
        with committing:
            self.store.transact(prepare)
        sched.run(forever=True)

    def close(self):
        for s in self.services:
            s.close()
        try:
            self.store.close()
        finally:
            if self.zeo is not None:
                self.zeo.close()
