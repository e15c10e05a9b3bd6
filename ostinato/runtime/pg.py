"""PostgreSQL databases: `--db postgresql://USER@HOST:PORT/DBNAME`.

A database on PostgreSQL is ZODB's RelStorage (ZODB's records as rows,
history-free: old revisions are dropped as they are replaced, as a packed
FileStorage keeps them), so the stored format is exactly the one a file
holds and `ostinato db copy` moves a database between the two.  Several
workers, on several hosts, open the same database: RelStorage polls for
what the others committed at the start of each transaction, as ZEO's
invalidations would tell.

The address is a libpq URI and goes to libpq as it is, so the password
comes from the URI, PGPASSWORD or ~/.pgpass as with psql; what Ostinato
prints shows the address without it (`shown`).

What the workers agree on outside ZODB's records is held in PostgreSQL
session-level advisory locks, each on a connection of its own (`Lock`):
- the schema lock, while RelStorage creates its tables and while a world
  is created or migrated (runtime/migrations.py), so that workers that
  start at once on an older database migrate it once;
- each worker's lock, named by its worker name, held as long as it runs:
  a worker whose lock is free is gone (runtime/serve.py gives its claims
  back to the ready queue);
- the Telegram lock: only its holder polls Telegram (one poller per bot
  token), and another worker takes it over when the holder is gone.
PostgreSQL releases a session's advisory locks when the session ends, at
once when a worker's process dies (its socket closes).  A worker that
stops without its connections closing -- its host lost behind a network
that still answers, a process frozen (SIGSTOP, a paused VM) -- keeps its
sessions, and its locks, for as long as TCP keeps them alive, which may be
forever.  So each serve worker also beats a heart (`Heartbeat`): all its
sessions carry one application_name of its own (`name_sessions`), and a
thread runs a query on one of them every HEARTBEAT seconds, which moves
pg_stat_activity's state_change.  The other workers look every second
(`end_stale_workers`): a worker none of whose sessions did anything for
STALE_AFTER seconds has all its sessions ended (pg_terminate_backend),
which frees its locks as a death would.  If it was only frozen and wakes
up, it finds its connections gone, says so, and its next commit, if any,
fails (its claims were given away: ZODB's conflict on the task tells it).
This needs the workers to connect as one role (or roles that may signal
and see each other's sessions: pg_signal_backend, pg_read_all_stats);
where state_change is not visible, a worker is never taken for stale.
TCP keepalives (KEEPALIVE_*) still end the sessions of a host whose
network is gone, in about 15 s.  Nothing of this is stored: no lease
outlives the sessions, and no schema change was needed.
"""
from __future__ import annotations

import hashlib
import re
import struct
import threading
import time
import uuid
from urllib.parse import urlsplit

from .filestore import StoreError

SCHEMES = ('postgresql://', 'postgres://')

# How soon the server drops the session of a client that vanished with its
# host (tcp_keepalives_*, settable per session); a killed process is seen
# at once.
KEEPALIVE_IDLE = 5
KEEPALIVE_INTERVAL = 2
KEEPALIVE_COUNT = 5


# A serve worker's heartbeat: a query every HEARTBEAT seconds; one that
# gave no sign of life for STALE_AFTER seconds is ended by the others.
HEARTBEAT = 1.0
STALE_AFTER = 10.0

# The application_name of this process's sessions: a serve worker's sessions
# carry WORKER_PREFIX, a token of its own and its name (name_sessions);
# those of every other command, plain 'ostinato' (never taken for stale).
WORKER_PREFIX = 'ostinato/'
_application = ['ostinato']


def name_sessions(worker):
    """Mark every session this process opens from now on as serve worker
    `worker`'s (a token makes two processes of one name apart).  Returns
    the prefix that tells this process's sessions."""
    token = uuid.uuid4().hex[:10]
    # PostgreSQL keeps 63 bytes of printable ASCII.
    name = ''.join(c if 32 <= ord(c) < 127 else '?' for c in worker)
    _application[0] = (WORKER_PREFIX + token + '/' + name)[:63]
    return WORKER_PREFIX + token + '/'


def worker_of(application):
    """The worker name in a session's application_name (maybe cut short)."""
    return application.split('/', 2)[2] if application.count('/') >= 2 else application


def is_postgres(address):
    return isinstance(address, str) and address.startswith(SCHEMES)


def shown(address):
    """The address as it may be printed: without its password."""
    if not is_postgres(address):
        return address
    scheme, rest = address.split('://', 1)
    netloc, sep, tail = rest.partition('/')
    if '@' in netloc:
        user, _, host = netloc.rpartition('@')
        if ':' in user:
            user = user.split(':', 1)[0] + ':***'
        netloc = user + '@' + host
    tail = re.sub(r'([?&])password=[^&]*', r'\1password=***', tail)
    return scheme + '://' + netloc + sep + tail


def dsn(address):
    """The libpq key=value form of a postgresql:// URI (RelStorage adds
    its own keys to it).  Raises StoreError for one libpq cannot read."""
    psycopg2 = _driver()
    from psycopg2.extensions import make_dsn, parse_dsn
    try:
        return make_dsn(**dict(parse_dsn(address), application_name=_application[0]))
    except psycopg2.Error as e:
        raise StoreError('not a PostgreSQL address libpq can read: %s (%s)'
                         % (shown(address), ' '.join(str(e).split()))) from None


def _driver():
    try:
        import psycopg2
    except ImportError:     # installed with Ostinato (setup.cfg); a broken install
        raise StoreError('PostgreSQL needs the psycopg2 module: pip install psycopg2-binary') \
            from None
    return psycopg2


def _failure(address, e):
    """A failure to reach the server, in one line without the password."""
    text = ' '.join(str(e).split()) or type(e).__name__
    password = urlsplit(address).password
    if password:
        text = text.replace(password, '***')
    return 'cannot reach the PostgreSQL database %s: %s' % (shown(address), text)


def connect(address):
    """A plain connection (autocommit), for locks and administration."""
    psycopg2 = _driver()
    try:
        conn = psycopg2.connect(dsn(address), connect_timeout=10,
                                keepalives=1, keepalives_idle=KEEPALIVE_IDLE,
                                keepalives_interval=KEEPALIVE_INTERVAL,
                                keepalives_count=KEEPALIVE_COUNT)
    except psycopg2.Error as e:
        raise StoreError(_failure(address, e)) from None
    conn.autocommit = True
    with conn.cursor() as cur:
        # The server's side of the same: a lost host's session (and locks)
        # ends in seconds, not hours.
        for name, value in (('tcp_keepalives_idle', KEEPALIVE_IDLE),
                            ('tcp_keepalives_interval', KEEPALIVE_INTERVAL),
                            ('tcp_keepalives_count', KEEPALIVE_COUNT)):
            cur.execute('SET %s = %d' % (name, value))
    return conn


def lock_key(name):
    """The 64-bit advisory lock key of a name (all Ostinato's keys start
    with 'ostinato ', so they stay apart from other programs' keys)."""
    digest = hashlib.sha256(('ostinato ' + name).encode('utf-8')).digest()
    return struct.unpack('>q', digest[:8])[0]


class Lock:
    """A session-level advisory lock on a connection of its own."""

    def __init__(self, address, name):
        self.address = address
        self.name = name
        self.key = lock_key(name)
        self.conn = None
        self.held = False

    def _cursor(self):
        if self.conn is None or self.conn.closed:
            self.conn = connect(self.address)
            self.held = False
        return self.conn.cursor()

    def acquire(self, wait=True):
        """Take the lock (waiting for it when `wait`); True when held."""
        psycopg2 = _driver()
        try:
            with self._cursor() as cur:
                if wait:
                    cur.execute('SELECT pg_advisory_lock(%s)', (self.key,))
                    self.held = True
                else:
                    cur.execute('SELECT pg_try_advisory_lock(%s)', (self.key,))
                    self.held = bool(cur.fetchone()[0])
        except psycopg2.Error as e:
            self._drop()
            raise StoreError(_failure(self.address, e)) from None
        return self.held

    def check(self):
        """Still held?  (The server restarted, or dropped the session: then
        it is not, and the next `acquire` takes it again if it is free.)"""
        if not self.held or self.conn is None or self.conn.closed:
            self.held = False
            return False
        psycopg2 = _driver()
        try:
            with self.conn.cursor() as cur:
                cur.execute('SELECT 1')
        except psycopg2.Error:
            self._drop()
            return False
        return True

    def release(self):
        if self.conn is None:
            return
        try:
            if self.held and not self.conn.closed:
                with self.conn.cursor() as cur:
                    cur.execute('SELECT pg_advisory_unlock(%s)', (self.key,))
        except Exception:
            pass
        self._drop()

    def _drop(self):
        self.held = False
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = None

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()


def free(address, name, conn=None):
    """Whether nobody holds the lock `name` (looked at without taking it
    for longer than the look)."""
    own = conn is None
    conn = conn or connect(address)
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT pg_try_advisory_lock(%s)', (lock_key(name),))
            got = bool(cur.fetchone()[0])
            if got:
                cur.execute('SELECT pg_advisory_unlock(%s)', (lock_key(name),))
            return got
    finally:
        if own:
            conn.close()


class Heartbeat:
    """A thread that runs a query on a connection of its own every
    HEARTBEAT seconds, so that the other workers see this one alive
    (`end_stale_workers`).  It stops with the process; a frozen process
    beats no more, which is the point.  A server that does not answer is
    tried again at the next beat, quietly (the turns say so)."""

    def __init__(self, address, every=HEARTBEAT):
        self.address = address
        self.every = every
        self.stopped = threading.Event()
        self.conn = None
        self.thread = threading.Thread(target=self._beat, name='ostinato-heartbeat',
                                       daemon=True)
        self.thread.start()

    def _beat(self):
        while not self.stopped.is_set():
            try:
                if self.conn is None or self.conn.closed:
                    self.conn = connect(self.address)
                with self.conn.cursor() as cur:
                    cur.execute('SELECT 1')
            except Exception:
                self._close()
            self.stopped.wait(self.every)
        self._close()

    def _close(self):
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def stop(self):
        self.stopped.set()
        self.thread.join(5)


def end_stale_workers(conn, own_prefix, stale_after=STALE_AFTER):
    """End every session of a serve worker none of whose sessions on this
    database did anything for `stale_after` seconds (its host is lost, or
    its process frozen): that frees its advisory locks.  Returns
    [(worker name, seconds silent, sessions ended or why not)]."""
    psycopg2 = _driver()
    ended = []
    with conn.cursor() as cur:
        cur.execute(
            "SELECT application_name, extract(epoch FROM now() - max(state_change)) "
            "FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name LIKE %s AND application_name NOT LIKE %s "
            "GROUP BY application_name "
            "HAVING now() - max(state_change) > make_interval(secs => %s)",
            (WORKER_PREFIX + '%', own_prefix + '%', stale_after))
        stale = cur.fetchall()
        for application, silent in stale:
            try:
                cur.execute("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                            "FROM pg_stat_activity WHERE datname = current_database() "
                            "AND application_name = %s", (application,))
                result = cur.fetchone()[0]
            except psycopg2.Error as e:
                if unreachable(e):
                    raise
                # Not allowed (another role, without pg_signal_backend):
                # the caller says so; its locks stay where they are.
                result = ' '.join(str(e).split())
            ended.append((worker_of(application), float(silent), result))
    return ended


def schema_lock(address):
    return Lock(address, 'schema')


def open_relstorage(address, read_only=False):
    """RelStorage, history-free, on the PostgreSQL database at `address`.
    Its tables are made on first use, under the schema lock."""
    psycopg2 = _driver()
    from relstorage.adapters.postgresql import PostgreSQLAdapter
    from relstorage.options import Options
    from relstorage.storage import RelStorage
    options = Options(keep_history=False, read_only=read_only, driver='psycopg2',
                      commit_lock_timeout=30, cache_local_mb=64)
    with schema_lock(address):
        try:
            adapter = PostgreSQLAdapter(dsn=dsn(address), options=options)
            storage = RelStorage(adapter, name=shown(address), options=options)
        except psycopg2.Error as e:
            raise StoreError(_failure(address, e)) from None
    return storage


def object_count(storage):
    """The number of objects a RelStorage on PostgreSQL holds, counted.
    RelStorage's own len() is the planner's estimate, which stays 0 until
    PostgreSQL analyzes the table; `db info` is an operator's question, so
    it pays for the count.  None for any other storage."""
    adapter = getattr(storage, '_adapter', None)
    if adapter is None or 'PostgreSQL' not in type(adapter).__name__:
        return None
    table = 'current_object' if adapter.keep_history else 'object_state'

    def count(_conn, cursor):
        cursor.execute('SELECT count(*) FROM ' + table)
        return cursor.fetchone()[0]
    return adapter.connmanager.open_and_call(count)


def unreachable(e):
    """Whether `e` says the PostgreSQL server cannot be reached (it
    restarted, or the network is down), as opposed to a refused query."""
    try:
        import psycopg2
    except ImportError:
        return False
    from transaction.interfaces import TransientError
    if isinstance(e, TransientError):
        return False        # a conflict, whatever happened before it
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, (psycopg2.OperationalError, psycopg2.InterfaceError)):
            return True
        e = e.__cause__ or e.__context__
    return False


def wait_until_reachable(address, err, what, started=None, pause=1.0, limit=None):
    """Wait until the server answers again; say so once, in one line."""
    started = started or time.time()
    err.write('ostinato: %s: PostgreSQL does not answer (%s); waiting for it\n'
              % (what, shown(address)))
    err.flush()
    while limit is None or time.time() - started < limit:
        try:
            connect(address).close()
        except StoreError:
            time.sleep(pause)
            continue
        err.write('ostinato: %s: PostgreSQL answers again after %.0f s; going on\n'
                  % (what, time.time() - started))
        err.flush()
        return True
    return False
