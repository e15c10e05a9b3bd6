"""The Telegram channel: the durable half over `telegram_api`.

Intake is exactly once.  A poller thread long-polls getUpdates with the
stored offset and hands each batch to the scheduler's thread, which appends
the messages to their threads and stores the new offset in one
transaction; only after that commit does the poller ask again with the new
offset, which is what tells Telegram to forget the batch.  A crash before
the commit gets the same updates again; a crash after it skips them,
because updates below the stored offset are dropped.

The outbox is the world's (runtime/world.py): `send_message_to_thread`
writes an entry in its turn's transaction.  After the commit this channel
marks the entry as being sent (a commit of its own, so a restart knows the
send may have happened and counts the resend), a sender thread sends it,
paced per chat and overall, split at line breaks when longer than Telegram
allows, and the entry leaves the outbox in the transaction that records
Telegram's confirmation.  So no reply is lost, and only the one in flight
at a crash can go out twice.

Only users in TELEGRAM_ALLOWED_USERS reach the skills; anyone else gets one
polite refusal, ever, and a log line saying how to let them in.  Threads
are keyed by chat and forum topic; users by their Telegram id.  The one
command the channel answers itself is `/timezone` (a user's zone, which
Telegram does not tell bots); photos and the like get a short answer.
While the model works on an unanswered message the chat shows "typing...".
The token lives only in the process (TelegramConfig); nothing here stores it.
"""
from __future__ import annotations

import queue
import sys
import threading
import time

from BTrees.LOBTree import LOBTree
from persistent import Persistent

from ..runtime.scheduler import ServiceStopped
from ..runtime.world import service_state
from ..vm import ops
from .chat import channels_module, new_user, receive
from .llm_queue import llm_state
from .service import Service, crash_point
from .telegram_api import (RateLimiter, TelegramAPI, TelegramError, TelegramRetry,
                           split_text, update_message, update_non_text)

CHANNEL = 'telegram'

# While the model works on a dialogue whose user waits for an answer, the
# chat shows "typing...": Telegram shows it ~5 s, so it is renewed this often,
# and given up on after TYPING_AT_MOST (the skill may not mean to answer).
TYPING_EVERY = 4.5
TYPING_AT_MOST = 180.0

NOT_TEXT = "Sorry, I can only read text messages."

REFUSAL = ("Sorry, this is a private bot: it only talks to the people its owner has "
           "allowed. (Your Telegram user id is %d; the owner can add it.)")


def _crash_point(name):
    """Test mode (OSTINATO_TEST_TELEGRAM_CRASH=NAME:N): die like kill -9 at
    the N-th pass of the point NAME (service.crash_point)."""
    crash_point('OSTINATO_TEST_TELEGRAM_CRASH', name)


class TelegramState(Persistent):
    """What the channel keeps in the database: the offset (the update_id
    after the last update stored), its users, whom it refused, and counts."""

    def __init__(self):
        self.offset = 0
        self.users = LOBTree()        # Telegram user id -> channels.User
        self.refused = LOBTree()      # user id -> when they were refused
        self.received = 0             # messages handed to threads
        self.skipped = 0              # updates seen again after a restart, dropped

    def summary(self):
        """For `ostinato db info`."""
        return '%d messages in, %d users, %d refused, offset %d' % (
            self.received, len(self.users), len(self.refused), self.offset)


def telegram_state(world):
    return service_state(world, CHANNEL, TelegramState)


def thread_id(chat_id, topic):
    """A Thread's id: the chat, and the forum topic when there is one."""
    return str(chat_id) if topic is None else '%d:%d' % (chat_id, topic)


def parse_thread_id(tid):
    chat, _, topic = str(tid).partition(':')
    return int(chat), (int(topic) if topic else None)


def pieces_of(text):
    """The messages one text goes out as: Telegram takes at most 4096
    characters, and no blank ones."""
    return [p for p in split_text(text) if p.strip()]


def _command(text):
    """'/timezone' for '/timezone Europe/Berlin' (or '/timezone@SomeBot ...')."""
    if not text.startswith('/'):
        return None
    return text.split(None, 1)[0].split('@', 1)[0].lower()


def set_timezone(user, text):
    """`/timezone AREA/CITY`: message times of this user are shown in that
    zone from now on (Telegram does not tell a bot its users' zones).
    Returns the answer for the user."""
    from zoneinfo import ZoneInfo
    parts = text.split(None, 1)
    current = user.get('timezone')
    if len(parts) < 2:
        return ('Your messages are timed in %s. To change it, send /timezone and your '
                'zone, like /timezone Europe/Berlin or /timezone America/New_York.'
                % (current or "the server's time zone"))
    name = parts[1].strip()
    try:
        ZoneInfo(name)
    except Exception:
        return ("I don't know the time zone %r; use a name like Europe/Berlin or "
                "America/New_York." % name[:60])
    ops.set_field(user, 'timezone', name)
    return 'From now on your messages are timed in %s.' % name


class _Job:
    """One outbox entry in the sender thread: plain data, no database object."""

    def __init__(self, seq, chat, topic, pieces, done):
        self.seq = seq
        self.chat = chat
        self.topic = topic
        self.pieces = pieces
        self.next = done
        self.retries = 0


class TelegramChannel(Service):
    """The channel service; one per process (Telegram allows one poller per token)."""

    listens = True

    def __init__(self, config, err=None, api=None, limiter=None):
        self.config = config
        self.api = api or TelegramAPI(config)
        self.err = err or sys.stderr
        self.limiter = limiter or RateLimiter()
        super().__init__()
        self.stopping = threading.Event()
        self.batches = queue.Queue()      # poller -> scheduler: lists of updates
        self.acked = threading.Event()    # scheduler -> poller: the batch is committed
        self.offset = 0                   # the committed offset, for the poller
        self.jobs = queue.Queue()         # scheduler -> sender: _Jobs
        self.results = queue.Queue()      # sender -> scheduler: (kind, seq, value)
        self.inflight = set()             # outbox seqs handed to the sender
        self.fatal = None                 # a TelegramError that stops the channel
        self.threads = []
        self.log_lock = threading.Lock()
        self.outage = None                # what went wrong, while Telegram is unreachable
        self.awaiting = {}                # (chat, topic) -> when its user wrote, unanswered
        self.last_typing = 0.0

    # ------------------------------------------------------------ service protocol
    def busy(self, sched):
        return self.fatal is None and not self.stopping.is_set()

    def poll(self, sched):
        if self.fatal is not None:
            raise ServiceStopped(str(self.fatal))
        if channels_module(sched.world) is None:
            return          # no program uses threads yet: leave the updates with Telegram
        if not self.threads:
            self.start(sched)
        while True:
            try:
                batch = self.batches.get_nowait()
            except queue.Empty:
                break
            notes, places = sched.transact(lambda: self.intake(sched, batch))
            self.offset = telegram_state(sched.world).offset
            _crash_point('stored')
            self.acked.set()
            for note in notes:
                self.log(note)
            for place in places:
                self.awaiting.setdefault(place, time.monotonic())
        self.confirm_sent(sched)
        self.dispatch(sched)
        self.show_typing(sched)

    def drain(self, sched):
        """An orderly stop: let the send in progress finish and record its
        confirmation, so the next start does not send it again."""
        self._stop_threads()
        for t in self.threads:
            if t.name.endswith('send'):
                t.join(self.config.request_timeout + 1)
        self.confirm_sent(sched)

    def close(self):
        self._stop_threads()
        self.api.close()

    def _stop_threads(self):
        self.stopping.set()
        self.acked.set()        # a poller waiting for its batch's commit
        self.jobs.put(None)     # the sender's signal to stop

    # ------------------------------------------------------------ start
    def start(self, sched):
        st = telegram_state(sched.world)
        self.offset = st.offset
        if not self.config.allowed_users:
            self.log('TELEGRAM_ALLOWED_USERS is empty, so nobody reaches the skills: '
                     'write to the bot, then add the user id this log shows to '
                     'TELEGRAM_ALLOWED_USERS (comma-separated) and restart')
        for target, name in ((self._poll_loop, 'ostinato-telegram-poll'),
                             (self._send_loop, 'ostinato-telegram-send')):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self.threads.append(t)

    def log(self, text):
        with self.log_lock:
            self.err.write('ostinato: telegram: %s\n' % text)
            self.err.flush()

    def _stop_with(self, e):
        self.fatal = e
        self.event.set()

    def _transient(self, e, attempt):
        """Log the first failure of an outage (not every retry); the wait."""
        if self.outage is None:
            self.outage = str(e)
            self.log('%s; will keep trying' % str(e).replace('telegram: ', '', 1))
        return e.retry_in(attempt)

    def _recovered(self):
        if self.outage is not None:
            self.outage = None
            self.log('reachable again')

    # ------------------------------------------------------------ intake
    def _poll_loop(self):
        attempt = 0
        webhook_gone = False
        while not self.stopping.is_set():
            try:
                if not webhook_gone:
                    me = self.api.get_me()      # checks the token, names the bot
                    # getUpdates does not work while a webhook is set.
                    self.api.delete_webhook()
                    webhook_gone = True
                    n = len(self.config.allowed_users)
                    self.log('connected as @%s; %d allowed user%s'
                             % (me.get('username') if isinstance(me, dict) else '?',
                                n, '' if n == 1 else 's'))
                updates = self.api.get_updates(offset=self.offset or None)
            except TelegramRetry as e:
                attempt += 1
                self.stopping.wait(self._transient(e, attempt))
                continue
            except TelegramError as e:
                self._stop_with(e)
                return
            except Exception as e:        # a bug of ours: stop rather than spin
                self._stop_with(TelegramError('the poller failed: %s: %s'
                                              % (type(e).__name__, e)))
                return
            attempt = 0
            self._recovered()
            if updates:
                _crash_point('fetched')
                self.acked.clear()
                self.batches.put(updates)
                self.event.set()
                # Asking again with the new offset confirms the batch to
                # Telegram: only once it is committed here.
                self.acked.wait()

    def intake(self, sched, updates):
        """Store a batch (run again from the start after a conflict); returns
        the log lines to write and the (chat, topic) places that got a
        message, for after the commit."""
        notes, places = [], []
        st = telegram_state(sched.world)
        for u in updates:
            uid = u.get('update_id') if isinstance(u, dict) else None
            if not isinstance(uid, int):
                continue
            if uid < st.offset:
                st.skipped += 1
                continue
            st.offset = uid + 1
            m = update_message(u)
            if m is None:
                other = update_non_text(u)
                if other is not None and self.config.allows(other.user_id):
                    sched.deliver(CHANNEL, thread_id(other.chat_id, other.message_thread_id),
                                  NOT_TEXT)
                continue          # not a user's text message: nothing for a skill
            if not self.config.allows(m.user_id):
                if m.user_id not in st.refused:
                    st.refused[m.user_id] = time.time()
                    sched.deliver(CHANNEL, thread_id(m.chat_id, m.message_thread_id),
                                  REFUSAL % m.user_id)
                    notes.append('refused %s (user id %d); to let them in, add %d to '
                                 'TELEGRAM_ALLOWED_USERS' % (m.user_name, m.user_id, m.user_id))
                continue
            user = st.users.get(m.user_id)
            if user is None:
                user = st.users[m.user_id] = new_user(sched.world, m.user_id, m.user_name)
            elif user.get('name') != m.user_name:
                ops.set_field(user, 'name', m.user_name)     # they renamed themselves
                if sched.world.watches:
                    sched.changed(user)
            tid = thread_id(m.chat_id, m.message_thread_id)
            if _command(m.text) == '/timezone':
                sched.deliver(CHANNEL, tid, set_timezone(user, m.text))
                continue
            receive(sched, '%s:%s' % (CHANNEL, tid), CHANNEL, tid, user, m.text, when=m.date)
            st.received += 1
            places.append((m.chat_id, m.message_thread_id))
        return notes, places

    # ------------------------------------------------------------ outbox
    def dispatch(self, sched):
        """Hand the outbox's new Telegram entries to the sender, oldest first,
        after marking them as being sent."""
        box = sched.world.outbox
        if not box.pending:
            return
        todo = [m for m in box.pending.values()
                if m.channel == CHANNEL and m.seq not in self.inflight]
        if not todo:
            return

        def mark():
            for m in todo:
                if m.attempts:
                    box.resent += 1       # begun by a process that stopped before the answer
                m.attempts += 1
        sched.transact(mark)
        _crash_point('marked')
        for m in todo:
            self.inflight.add(m.seq)
            try:
                chat, topic = parse_thread_id(m.thread_id)
            except ValueError:
                self.results.put(('failed', m.seq, 'no Telegram chat in thread id %r'
                                  % (m.thread_id,)))
                continue
            self.awaiting.pop((chat, topic), None)
            self.jobs.put(_Job(m.seq, chat, topic, pieces_of(str(m.text)), m.done))

    def show_typing(self, sched):
        """Renew "typing..." in the chats whose user waits for an answer,
        while a model request is out."""
        now = time.monotonic()
        if not self.awaiting or now - self.last_typing < TYPING_EVERY:
            return
        self.last_typing = now
        for place, since in list(self.awaiting.items()):
            if now - since > TYPING_AT_MOST:
                del self.awaiting[place]
        llm = llm_state(sched.world, make=False)
        if llm is not None and llm.pending:
            for place in self.awaiting:
                self.jobs.put(place)

    def confirm_sent(self, sched):
        """Record what the sender reported, in one transaction."""
        results = []
        while True:
            try:
                results.append(self.results.get_nowait())
            except queue.Empty:
                break
        if results:
            sched.transact(lambda: self.confirm(sched, results))

    def confirm(self, sched, results):
        box = sched.world.outbox
        for kind, seq, value in results:
            m = box.pending.get(seq)
            if m is None:
                self.inflight.discard(seq)
                continue
            if kind == 'piece':
                m.done = max(m.done, value[0])
                if m.done >= value[1]:
                    del box.pending[seq]
                    box.sent += 1
                    self.inflight.discard(seq)
            else:
                del box.pending[seq]
                box.failed += 1
                self.inflight.discard(seq)
                self.log('could not send message %d: %s'
                         % (seq, str(value).replace('telegram: ', '', 1)))

    def _send_loop(self):
        jobs = []
        blocked = {}          # chat -> monotonic time before which not to send there
        while not self.stopping.is_set():
            now = time.monotonic()
            job, until = self._next_job(jobs, blocked, now)
            if job is None:
                try:
                    new = self.jobs.get(timeout=None if until is None else max(0.0, until - now))
                except queue.Empty:
                    continue
                if new is None:
                    return
                if type(new) is tuple:
                    self._typing(*new)
                    continue
                jobs.append(new)
                continue
            try:
                self._send(job)
            except TelegramRetry as e:
                job.retries += 1
                blocked[job.chat] = time.monotonic() + self._transient(e, job.retries)
                continue
            except (TelegramError, ValueError) as e:
                if isinstance(e, TelegramError) and e.migrate_to_chat_id:
                    job.chat = e.migrate_to_chat_id     # a group became a supergroup
                    continue
                jobs.remove(job)
                self.results.put(('failed', job.seq, str(e)))
                self.event.set()
                continue
            except Exception as e:        # a bug of ours: report, keep the entry
                jobs.remove(job)
                self.log('sending message %d failed: %s: %s' % (job.seq, type(e).__name__, e))
                continue
            _crash_point('sent')
            job.retries = 0
            self._recovered()
            if job.next >= len(job.pieces):
                jobs.remove(job)
            self.results.put(('piece', job.seq, (job.next, len(job.pieces))))
            self.event.set()

    def _next_job(self, jobs, blocked, now):
        """The first job that may go now (each chat's messages in order), or
        None and when the earliest may go."""
        while True:
            try:
                new = self.jobs.get_nowait()
            except queue.Empty:
                break
            if new is None:
                self.stopping.set()
                return None, now
            if type(new) is tuple:
                self._typing(*new)
                continue
            jobs.append(new)
        seen = set()
        until = None
        for job in jobs:
            if job.chat in seen:
                continue
            seen.add(job.chat)
            if job.next >= len(job.pieces):
                return job, None          # nothing to send (a blank text): confirm it
            t = max(blocked.get(job.chat, 0.0), now + self.limiter.delay(job.chat, now))
            if t <= now:
                return job, None
            until = t if until is None else min(until, t)
        return None, until

    def _typing(self, chat, topic):
        try:
            self.api.send_typing(chat, topic)
        except (TelegramError, TelegramRetry):
            pass                # a courtesy: never worth a retry or a log line

    def _send(self, job):
        if job.next < len(job.pieces):
            self.api.send_message(job.chat, job.pieces[job.next], job.topic)
            self.limiter.sent(job.chat)
            job.next += 1
