"""The web channel's scheduler side: intake and outbox, as for Telegram.

The web server (web/app.py) runs in a thread of its own and never writes
the database.  What must be written -- a message the user sends, a login,
a logout -- it hands to this service as a job; the scheduler's thread runs
the job between two turns in a transaction of its own, and only after that
commit does the HTTP request get its answer.  So a message the page was
told is taken is in the database, and a message sent again with the same
idempotency key (the page retries after a network error, a crash or a
429) is found by its key and not taken twice.

Bot messages reach the page from the threads themselves: the server reads
them after each commit and pushes them over Server-Sent Events.  So an
outbox entry of the web channel is delivered once its turn committed, and
this service confirms such entries as soon as it sees them.

After each commit the service pokes the server, which looks at what changed
and pushes it to the open pages; the server also looks on its own a few
times a second, for commits of other processes (a REPL, other workers).
"""
from __future__ import annotations

import concurrent.futures
import os
import queue
import socket
import sys
import time
from typing import Any

from ...runtime.scheduler import ServiceStopped
from ...runtime.terminal import harmless
from ...vm import ops
from ..channels.chat import channels_module, new_user, receive
from ..net import is_loopback_host as is_loopback
from ..service import Service, crash_point
from .state import WebError, check_name, remember_key, seen_key, set_owner, web_state
from .views import CHANNEL

DEFAULT_ADDRESS = '127.0.0.1:8765'
HOLD_SECONDS = 30.0     # a message waits this long for a program that reads threads


def parse_address(text):
    """(host, port) of '[HOST:]PORT' ('8765', '0.0.0.0:80', '[::1]:8765');
    raises WebError naming the value."""
    text = (text or '').strip()
    host, sep, port = text.rpartition(':')
    if not sep:
        host = '127.0.0.1'
    host = host.strip('[]') or '127.0.0.1'
    try:
        p = int(port)
    except ValueError:
        p = -1
    if not 0 <= p <= 65535:
        raise WebError('--web wants [HOST:]PORT, like 8765 or 127.0.0.1:8765 (not %r)' % text)
    return host, p


def looks_like_address(text):
    try:
        parse_address(text)
        return True
    except WebError:
        return False


def listen(host, port):
    """A listening socket, bound now, so a port in use is an error at start."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise WebError('cannot listen on %s:%d: %s' % (host, port, e.strerror))
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise WebError('cannot listen on %s:%d: %s' % (host, port, e.strerror or e))
    sock.set_inheritable(False)
    return sock


class Job:
    """A write for the scheduler's thread; the web server waits on `future`."""

    def __init__(self, fn, needs_channels=False):
        self.fn = fn
        self.needs_channels = needs_channels
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self.since = time.monotonic()


def take_message(sched, name, key, conversation, text, zone):
    """The intake of one message (in a transaction): the same key twice
    gives the first answer again; the browser's zone becomes the user's."""
    st = web_state(sched.world)
    prior = seen_key(st, name, key)
    if prior is not None:
        return {'conversation': prior[1], 'index': prior[2], 'duplicate': True}
    u = st.users.get(name)
    if u is None or u.link is None and name != st.owner:
        raise WebError('you no longer have access to this page', 403)
    if u.user is None:
        u.user = new_user(sched.world, name, name)
    user = u.user
    if zone and user.get('timezone') != zone:
        ops.set_field(user, 'timezone', zone)
        if sched.world.watching:
            sched.changed(user)
    if conversation is None:
        u.threads += 1
        conversation = u.threads
    elif not 1 <= conversation <= u.threads:
        raise WebError('there is no conversation %d' % conversation, 404)
    tid = '%s:%d' % (name, conversation)
    thread = receive(sched, '%s:%s' % (CHANNEL, tid), CHANNEL, tid, user, text)
    index = len(thread.get('messages').items) - 1
    remember_key(st, name, key, conversation, index)
    st.received += 1
    return {'conversation': conversation, 'index': index, 'duplicate': False}


class WebChannel(Service):
    """`--web`: the page's server thread and its writes; one per process."""

    listens = True

    def __init__(self, address=DEFAULT_ADDRESS, owner=None, err=None, public_url=None):
        self.host, self.port = parse_address(address)
        self.owner = check_name(owner or _user_name())
        self.err = err or sys.stderr
        self.public_url = (public_url or os.environ.get('OSTINATO_WEB_URL') or '').rstrip('/')
        self.sock = listen(self.host, self.port)
        self.port = self.sock.getsockname()[1]
        super().__init__()
        self.jobs: queue.Queue = queue.Queue()
        self.held = []              # messages waiting for a program that reads threads
        self.server: Any = None
        self.db: Any = None
        self.last_tid = None
        self.stopping = False
        self.owner_link = None

    @property
    def base_url(self):
        if self.public_url:
            return self.public_url
        host = self.host
        if host in ('0.0.0.0', '::'):
            host = socket.gethostname()
        if ':' in host:
            host = '[%s]' % host
        return 'http://%s:%d' % (host, self.port)

    # ------------------------------------------------------------ service protocol
    def busy(self, sched):
        return not self.stopping

    def poll(self, sched):
        if self.server is None:
            self.start(sched)
        if self.server.failed is not None:
            raise ServiceStopped('web: %s' % self.server.failed)
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            self.held.append(job)
        if self.held:
            self.run_jobs(sched)
        self.confirm_sent(sched)
        self.notify()

    def drain(self, sched):
        self.stopping = True
        self.confirm_sent(sched)
        self.refuse_all()

    def close(self):
        self.stopping = True
        self.refuse_all()
        if self.server is not None:
            self.server.stop()
        try:
            self.sock.close()
        except OSError:
            pass

    # ------------------------------------------------------------ start
    def start(self, sched):
        from .app import WebServer
        jar = getattr(sched.world, '_p_jar', None)
        if jar is None:
            raise ServiceStopped('web: the page needs a database (not a world in memory)')
        self.db = jar.db()
        base = self.base_url
        token = sched.transact(lambda: set_owner(web_state(sched.world), self.owner, base))
        self.owner_link = '%s/login?token=%s' % (base, token)
        self.server = WebServer(self, self.sock, self.db)
        self.server.start()
        if not is_loopback(self.host):
            self.log('warning: listening on %s:%d, beyond this machine; the page speaks plain '
                     'HTTP, so put it behind a reverse proxy that adds TLS (and set '
                     'OSTINATO_WEB_URL to its address)' % (self.host, self.port))
        self.log('open %s  (the link of %s, the owner; keep it secret)'
                 % (self.owner_link, self.owner))

    def log(self, text):
        self.err.write('ostinato: web: %s\n' % harmless(text))
        self.err.flush()

    # ------------------------------------------------------------ jobs (the web server's side)
    def submit(self, fn, needs_channels=False):
        """Run fn(sched) in the scheduler's thread, in a transaction; returns
        a future of its result (or of a WebError)."""
        job = Job(fn, needs_channels)
        if self.stopping:
            job.future.set_exception(WebError('the server is stopping; try again in a moment',
                                              503))
            return job.future
        self.jobs.put(job)
        self.event.set()
        return job.future

    # ------------------------------------------------------------ jobs (the scheduler's side)
    def run_jobs(self, sched):
        ready = channels_module(sched.world) is not None
        later = []
        for job in self.held:
            if job.future.done():
                continue
            if job.needs_channels and not ready:
                if time.monotonic() - job.since > HOLD_SECONDS:
                    _fail(job, WebError('no skill is reading messages yet, so your message '
                                        'was not taken; it will be sent again', 503))
                else:
                    later.append(job)
                continue
            if not job.future.set_running_or_notify_cancel():
                continue        # the request gave up waiting: it will be sent again
            try:
                result = sched.transact(lambda: job.fn(sched))  # noqa: B023 -- runs now
            except WebError as e:
                self.abort(sched)
                job.future.set_exception(e)
            except Exception as e:       # a bug of ours: this request fails, the run goes on
                self.abort(sched)
                self.log('a request failed: %s: %s' % (type(e).__name__, e))
                job.future.set_exception(WebError('internal error; nothing was stored', 500))
            else:
                if job.needs_channels:
                    # test mode: die between a message's commit and its answer
                    crash_point('OSTINATO_TEST_WEB_CRASH', 'taken')
                job.future.set_result(result)
        self.held = later

    def abort(self, sched):
        sched.txn.abort()

    def refuse_all(self):
        while True:
            try:
                self.held.append(self.jobs.get_nowait())
            except queue.Empty:
                break
        for job in self.held:
            _fail(job, WebError('the server is stopping; your message was not taken and '
                                'will be sent again', 503))
        self.held = []

    # ------------------------------------------------------------ outbox
    def confirm_sent(self, sched):
        """The web channel's outbox entries are delivered by their commit
        (the page reads the thread): confirm them."""
        box = sched.world.outbox
        if not box.pending:
            return
        mine = [m.seq for m in box.messages(CHANNEL)]
        if not mine:
            return

        def confirm():
            for seq in mine:
                box.remove(seq)
        sched.transact(confirm)

    def notify(self):
        tid = self.db.lastTransaction()
        if tid != self.last_tid:
            self.last_tid = tid
            self.server.poke()


def _fail(job, error):
    """Answer a job that will not run (unless its request gave up already)."""
    if job.future.set_running_or_notify_cancel():
        job.future.set_exception(error)


def _user_name():
    import getpass
    try:
        name = getpass.getuser()
    except Exception:
        name = 'owner'
    return name if name and check_name_ok(name) else 'owner'


def check_name_ok(name):
    try:
        check_name(name)
        return True
    except WebError:
        return False
