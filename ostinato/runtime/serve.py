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

from .pg import is_postgres
from .scheduler import Scheduler, committing
from .store import Store, StoreError, StoreUnreachable, open_storage
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
    if db.startswith('zeo:') or is_postgres(db):
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
                         'remove it (serve makes it again; it holds nothing of the database) '
                         'or serve a database in another folder' % path)
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


# How long a worker's lock must stay free before its claims go to others
# (runtime/pg.py): longer than a live worker takes to take its lock again
# after PostgreSQL restarted (it looks every watch_seconds, 1 s).
GONE_AFTER = 5.0


def worker_lock_name(worker):
    return 'worker ' + worker


def worker_lease(db, worker, own_sessions, patience=None):
    """Take the lock of worker `worker` on the PostgreSQL database `db`
    (runtime/pg.py): held while this worker runs.  A worker of the same
    name that was just killed may hold it a moment longer (its session is
    ending), or one whose host was lost until its heartbeat is stale (then
    its sessions are ended here): wait for it that long, then refuse."""
    from . import pg
    if patience is None:
        patience = pg.STALE_AFTER + 5.0
    lease = pg.Lock(db, worker_lock_name(worker))
    end = time.time() + patience
    while not lease.acquire(wait=False):
        try:
            pg.end_stale_workers(lease.conn, own_sessions)
        except Exception as e:
            if not pg.unreachable(e):
                raise
        if time.time() >= end:
            lease.release()
            raise StoreError('a worker named %s already serves %s: give this one another '
                             'name (--worker NAME)' % (worker, pg.shown(db)))
        time.sleep(0.5)
    return lease


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
        self.shared = db.startswith('zeo:') or is_postgres(db)
        self.heartbeat = None
        self.own_sessions = None
        if not memory and is_postgres(db):
            from . import pg
            # Before the store opens: its sessions too are this worker's
            # (a lost worker's are all ended, runtime/pg.py).
            self.own_sessions = pg.name_sessions(worker)
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
        self.db = db
        self.lease = None
        self.locks = []
        self.free_since = {}        # worker name -> when its lock was first seen free
        self.ended = {}             # worker name -> when this worker ended its sessions
        self.refused = set()        # workers whose sessions this one may not end (said once)
        if not memory and is_postgres(db):
            # On PostgreSQL the second phase of a commit is the server's
            # COMMIT: it fails when the server goes away, which the worker
            # reports in words (wait_for_server) -- not also the transaction
            # package's line about resources "in an inconsistent state".
            logging.getLogger('txn').setLevel(logging.CRITICAL + 1)
            try:
                self.lease = worker_lease(db, worker, self.own_sessions)
            except BaseException:
                self.store.close()
                raise
            from . import pg
            self.heartbeat = pg.Heartbeat(db)
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
            if self.lease is not None:
                self.reclaim(sched)
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
        while True:
            try:
                sched.run(forever=True)
                return
            except StoreUnreachable:
                if self.lease is None:
                    raise
                self.wait_for_server()

    def wait_for_server(self):
        """PostgreSQL stopped answering (it restarts, or the network is
        down): nothing of the turn in progress was committed.  Wait for it,
        saying so in one line (and one when it is back), then go on where
        the database is: RelStorage opens new connections by itself."""
        from . import pg
        self.sched.abort_quietly()
        pg.wait_until_reachable(self.db, self.err, 'worker %s' % self.worker)
        try:
            self.lease.acquire(wait=False)      # the restart freed it: ours again at once
        except StoreError:
            pass                                # gone again: reclaim takes it later
        self.sched.abort_quietly()
        # A commit the server lost the answer to may have been made: a claim
        # of this worker that it no longer runs goes back to the queue.
        with committing:
            self.store.transact(lambda: self.sched.recover(crashed=False))

    def gate(self, name, every=1.0):
        """A callable that says whether this worker holds the lock `name`
        on the PostgreSQL database (taking it when it is free, looked at
        most every `every` seconds): the Telegram channel polls only while
        it holds 'telegram', and a worker takes it over when its holder is
        gone."""
        from . import pg
        lock = pg.Lock(self.db, name)
        self.locks.append(lock)
        last = [0.0]
        had = [False]

        def held():
            now = time.time()
            if lock.held and (now - last[0] < every or lock.check()):
                if now - last[0] >= every:
                    last[0] = now
                return True
            # Its holder, which lost it with its session (PostgreSQL
            # restarted), takes it again at once; the others look every
            # `every` seconds, so the holder that is alive keeps it.
            if now - last[0] < every and not had[0]:
                return False
            last[0] = now
            try:
                got = lock.acquire(wait=False)
            except StoreError:
                return False
            if got and not had[0]:
                self.err.write('ostinato: worker %s holds the %s lock: it polls %s\n'
                               % (self.worker, name, name))
                self.err.flush()
            had[0] = had[0] or got
            return got
        return held

    def reclaim(self, sched):
        """On PostgreSQL: what a worker that is gone had claimed -- the task
        whose turn it ran, the model requests it was asking -- goes back to
        the other workers.  A worker is gone when its lock is free
        (runtime/pg.py): the server ended its session.  Looked at every
        `watch_seconds`, so a claim comes back within about a second of
        the session's end.  A worker whose sessions all stayed silent for
        pg.STALE_AFTER seconds (its host lost, its process frozen) has them
        ended here first, and counts as gone as soon as its lock is free."""
        from . import pg
        try:
            if not self.lease.check() and not self.lease.acquire(wait=False):
                return      # our own lock is held elsewhere: claim nothing of others
        except StoreError:
            return          # the server does not answer: the turns will say so
        try:
            ended = pg.end_stale_workers(self.lease.conn, self.own_sessions)
        except Exception as e:
            if not pg.unreachable(e):
                raise
            return
        for name, silent, sessions in ended:
            if isinstance(sessions, str):
                if name not in self.refused:
                    self.refused.add(name)
                    self.err.write('%s worker %s gave no sign of life for %.0f s, but its '
                                   'PostgreSQL sessions cannot be ended from here (%s): run '
                                   'the workers as one role, or grant this one '
                                   'pg_signal_backend\n'
                                   % (time.strftime('%Y-%m-%d %H:%M:%S'), name, silent,
                                      sessions))
                    self.err.flush()
                continue
            self.ended[name] = time.time()
            self.err.write('%s worker %s gave no sign of life for %.0f s (its host lost, or '
                           'its process stopped): its %d PostgreSQL session%s ended\n'
                           % (time.strftime('%Y-%m-%d %H:%M:%S'), name, silent, sessions,
                              '' if sessions == 1 else 's'))
            self.err.flush()
        verdicts = {}

        def gone(name):
            if name == self.worker or not isinstance(name, str):
                return False
            if name not in verdicts:
                try:
                    free = pg.free(self.db, worker_lock_name(name), self.lease.conn)
                except Exception as e:
                    if not pg.unreachable(e):
                        raise
                    free = False        # unknown: not gone
                # Gone only when its lock stays free for GONE_AFTER seconds:
                # after a restart of PostgreSQL every lock is free until
                # its worker, alive, takes it again.
                now = time.time()
                if free:
                    verdicts[name] = (now - self.free_since.setdefault(name, now) >= GONE_AFTER
                                      or now - self.ended.get(name, 0.0) < GONE_AFTER)
                else:
                    self.free_since.pop(name, None)
                    verdicts[name] = False
            return verdicts[name]
        for name in [n for n in sched.world.running.keys() if gone(n)]:
            def give_back(name=name):
                task = sched.world.running.get(name)
                sched.recover(name)
                return task
            with committing:
                task = self.store.transact(give_back)
            if task is not None:
                self.err.write('%s worker %s is gone: task %d (%s) is ready again\n'
                               % (time.strftime('%Y-%m-%d %H:%M:%S'), name, task.id, task.name))
                self.err.flush()
        for service in sched.services:
            hand_back = getattr(service, 'reclaim', None)
            if hand_back is not None:
                hand_back(sched, gone)

    def close(self):
        if self.heartbeat is not None:
            self.heartbeat.stop()
        for s in self.services:
            s.close()
        try:
            self.store.close()
        finally:
            if self.zeo is not None:
                self.zeo.close()
            for lock in self.locks + ([self.lease] if self.lease is not None else []):
                lock.release()
