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

Every update is checked at the edge (telegram_api.read_update): one that
cannot be used is logged and skipped, and its offset committed like any
other, so no update can stop the bot, let alone at every start.  Only
users in TELEGRAM_ALLOWED_USERS reach the skills; anyone else gets one
polite refusal, ever, sent only when no allowed user's message waits, and
a log line saying how to let them in.  Threads are keyed by private chat
(and forum topic); users by their Telegram id.  A group is told once that
the bot talks in private chats only, unless TELEGRAM_GROUPS=1: then each
member has a thread of their own there, answered with replies to their
messages, and a User of their own for that conversation (`member_user`), so
what a skill keeps on a user in a private chat is never shown where the
group reads, nor the group's in the private chat.  The one command the channel answers itself is `/timezone` (a
user's zone, which Telegram does not tell bots); photos and the like get a
short answer.  The poller and the sender are started again when they fail.
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

from ...runtime.pg import STALE_AFTER
from ...runtime.scheduler import ServiceStopped
from ...runtime.store import StoreFailed, TooDeep
from ...runtime.terminal import harmless
from ...runtime.world import service_state
from ...vm import ops
from .chat import channels_module, new_user, receive
from ..llm.queue import llm_state
from ..service import Service, crash_point
from .telegram_api import (RateLimiter, TelegramAPI, TelegramError, TelegramRetry, backoff,
                           MAX_TEXT, printable, read_update, split_text, valid_update_id)

CHANNEL = 'telegram'

# While the model works on a dialogue whose user waits for an answer, the
# chat shows "typing...": Telegram shows it ~5 s, so it is renewed this often,
# and given up on after TYPING_AT_MOST (the skill may not mean to answer).
TYPING_EVERY = 4.5
TYPING_AT_MOST = 180.0

NOT_TEXT = "Sorry, I can only read text messages."

TOO_LONG = ("Sorry, that message is too long for me (%d characters); please send it in "
            "shorter parts.")

REFUSAL = ("Sorry, this is a private bot: it only talks to the people its owner has "
           "allowed. (Your Telegram user id is %d; the owner can add it.)")

GROUP_NOTICE = "Hello! I only talk in private chats: please write to me directly%s."


def _crash_point(name):
    """Test mode (OSTINATO_TEST_TELEGRAM_CRASH=NAME:N): die like kill -9 at
    the N-th pass of the point NAME, or raise there with NAME:N:raise
    (service.crash_point)."""
    crash_point('OSTINATO_TEST_TELEGRAM_CRASH', name)


class TelegramState(Persistent):
    """What the channel keeps in the database: the offset (the update_id
    after the last update stored), its users, whom it refused (users by
    their id; groups, told once that the bot talks in private chats only,
    by their chat id, which is negative), and counts."""

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


def thread_id(chat_id, topic, member=None):
    """A Thread's id: the chat, and the forum topic when there is one; in a
    group (TELEGRAM_GROUPS=1), each member has a thread of their own:
    'CHAT:TOPIC:MEMBER', the topic empty outside forum topics."""
    if member is not None:
        return '%d:%s:%d' % (chat_id, '' if topic is None else topic, member)
    return str(chat_id) if topic is None else '%d:%d' % (chat_id, topic)


def parse_thread_id(tid):
    """(chat, topic, member) of a thread id; topic and member may be None."""
    parts = str(tid).split(':')
    if len(parts) > 3:
        raise ValueError(tid)
    parts += [''] * (3 - len(parts))
    return int(parts[0]), (int(parts[1]) if parts[1] else None), \
        (int(parts[2]) if parts[2] else None)


def pieces_of(text):
    """The messages one text goes out as: Telegram takes at most 4096
    characters, and no blank ones."""
    return [p for p in split_text(text) if p.strip()]


def _command(text):
    """'/timezone' for '/timezone Europe/Berlin' (or '/timezone@SomeBot ...')."""
    if not text.startswith('/'):
        return None
    return text.split(None, 1)[0].split('@', 1)[0].lower()


def member_user(sched, key, person):
    """The User a group member is in the conversation `key`: one of its own,
    made with its thread, with the person's id, name and zone (kept up to
    date here, as the channel knows them).  State a skill keeps per user
    (`add_property(User, ...)`) thus belongs to one conversation: the diet
    log of a private chat was shown in a group.  A skill that means to carry
    a user's state across conversations keys it by `user.id` itself.  A
    group thread made before this held the person's User: a migration gave
    it one of its own (migration 11, runtime/migrations.py)."""
    ch = channels_module(sched.world)
    thread = ch.ns['threads'].d.get(key)
    user = thread.get('user') if thread is not None else None
    if user is None:
        user = new_user(sched.world, person.get('id'), person.get('name'))
    if user is person:
        return user
    changed = False
    for field in ('name', 'timezone'):
        v = person.get(field)
        if v is not None and user.get(field) != v:
            ops.set_field(user, field, v)
            changed = True
    if changed and sched.world.watching:
        sched.changed(user)
    return user


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
    """One outbox entry in the sender thread: plain data, no database object.
    `low`: a message to someone who is not let in (a refusal, the notice to
    a group), sent only when no allowed user's message may go."""

    def __init__(self, seq, chat, topic, pieces, done, reply_to=None, low=False):
        self.seq = seq
        self.chat = chat
        self.topic = topic
        self.pieces = pieces
        self.next = done
        self.retries = 0
        self.reply_to = reply_to
        self.low = low


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
        self.batches: queue.Queue = queue.Queue()      # poller -> scheduler: lists of updates
        self.acked = threading.Event()    # scheduler -> poller: the batch is committed
        self.offset = 0                   # the committed offset, for the poller
        self.jobs: queue.Queue = queue.Queue()         # scheduler -> sender: _Jobs
        self.results: queue.Queue = queue.Queue()      # sender -> scheduler: (kind, seq, value)
        self.inflight = set()             # outbox seqs handed to the sender
        self.fatal = None                 # a TelegramError that stops the channel
        self.threads = []
        self.log_lock = threading.Lock()
        self.outage = None                # what went wrong, while Telegram is unreachable
        self.awaiting = {}                # (chat, topic) -> when its user wrote, unanswered
        self.last_typing = 0.0
        self.username = None              # the bot's, from getMe
        self.bogus = set()                # update ids that cannot be ids, logged once
        self.lost_jobs = threading.Event()  # the sender restarted: hand it the outbox again
        self.taking = None                # the update_id intake is at (to skip one that fails)
        # Workers sharing a database: a callable that says whether this one
        # may poll the bot now (runtime/serve.py's Telegram lock); None: always.
        self.gate = None
        # When the scheduler's thread last found the gate open: the poller
        # asks Telegram only while that is recent (GATE_FRESH).
        self.gate_open = 0.0
        self.gate_lost = False

    # ------------------------------------------------------------ service protocol
    def busy(self, sched):
        # A fatal error keeps the run going until poll() raises it: the run
        # ended with 0 when it looked at busy() first (a rejected token).
        return self.fatal is not None or not self.stopping.is_set()

    # How recent the gate's last yes must be for the poller to ask Telegram:
    # a worker whose process was frozen longer than this (runtime/pg.py's
    # STALE_AFTER) may have lost the lock to another worker meanwhile, so
    # on waking up it looks at the lock again before it polls.
    GATE_FRESH = STALE_AFTER

    def poll(self, sched):
        if self.fatal is not None:
            raise ServiceStopped(str(self.fatal))
        if channels_module(sched.world) is None:
            return          # no program uses threads yet: leave the updates with Telegram
        if not self.threads:
            if self.gate is not None and not self.gate():
                return      # another worker polls the bot (one poller per token)
            self.gate_open = time.monotonic()
            self.start(sched)
        elif self.gate is not None:
            # Keeps the lock (taken again after the server restarted); one
            # lost to another worker stops this one's polling until it is
            # this worker's again.
            if self.gate():
                if self.gate_lost:
                    self.gate_lost = False
                    self.offset = telegram_state(sched.world).offset
                    self.log('this worker polls again')
                self.gate_open = time.monotonic()
            elif not self.gate_lost:
                self.gate_lost = True
                self.gate_open = 0.0
                self.log('the telegram lock is not this worker\'s now (another worker holds '
                         'it, or PostgreSQL does not answer): it stops polling')
        while True:
            try:
                batch = self.batches.get_nowait()
            except queue.Empty:
                break
            notes, places = self.take(sched, batch)
            self.offset = telegram_state(sched.world).offset
            _crash_point('stored')
            self.acked.set()
            for note in notes:
                self.log(note)
            for place in places:
                self.awaiting.setdefault(place, time.monotonic())
        self.confirm_sent(sched)
        if self.gate_lost:
            return      # the lock's holder sends the replies (once)
        self.dispatch(sched)
        self.show_typing(sched)

    def take(self, sched, batch):
        """Store a batch.  An update that fails to be stored (a bug of ours
        that validation did not foresee) is skipped, and the batch stored
        again without it: one update must not stop the bot on every start."""
        skip: set = set()
        while True:
            self.taking = None
            try:
                return sched.transact(lambda: self.intake(sched, batch, skip))
            except (StoreFailed, TooDeep):
                raise
            except Exception as e:
                sched.abort()
                if self.taking is None or self.taking in skip:
                    raise
                skip.add(self.taking)
                self.log('update %d could not be taken (%s: %s); it is skipped'
                         % (self.taking, type(e).__name__, printable(e)))

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
        for target, what, name in ((self._poll_loop, 'poller', 'ostinato-telegram-poll'),
                                   (self._send_loop, 'sender', 'ostinato-telegram-send')):
            t = threading.Thread(target=self._supervise, args=(target, what), name=name,
                                 daemon=True)
            t.start()
            self.threads.append(t)

    def _supervise(self, target, what):
        """Run a thread's loop; when it stops on an error of ours, say so and
        start it again after a pause, as python-telegram-bot's network loop
        does: a dead poller would leave the bot deaf without a word."""
        failures = 0
        while not self.stopping.is_set():
            try:
                target()
                return
            except Exception as e:
                failures += 1
                pause = backoff(failures, cap=60.0)
                self.log('the %s stopped on an error (%s: %s); it starts again in %.0f s'
                         % (what, type(e).__name__, printable(e), pause))
                if target == self._send_loop:
                    self.lost_jobs.set()
                    self.event.set()
                if self.stopping.wait(pause):
                    return

    def log(self, text):
        with self.log_lock:
            # An error's text may quote Telegram's answer: nothing in it acts
            # on the operator's terminal.
            self.err.write('ostinato: telegram: %s\n' % harmless(text))
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
        attempt = idle = 0
        webhook_gone = False
        while not self.stopping.is_set():
            try:
                if not webhook_gone:
                    me = self.api.get_me()      # checks the token, names the bot
                    # getUpdates does not work while a webhook is set.
                    self.api.delete_webhook()
                    webhook_gone = True
                    n = len(self.config.allowed_users)
                    name = me.get('username') if isinstance(me, dict) else None
                    self.username = name if isinstance(name, str) else None
                    self.log('connected as @%s; %d allowed user%s%s'
                             % (printable(self.username or '?'), n, '' if n == 1 else 's',
                                '; groups are served' if self.config.groups else ''))
                if self.gate is not None and \
                        time.monotonic() - self.gate_open > self.GATE_FRESH:
                    self.stopping.wait(0.2)     # the scheduler's thread looks at the lock
                    continue
                _crash_point('polling')
                updates = self.api.get_updates(offset=self.offset or None)
            except TelegramRetry as e:
                attempt += 1
                self.stopping.wait(self._transient(e, attempt))
                continue
            except TelegramError as e:
                self._stop_with(e)
                return
            attempt = 0
            self._recovered()
            usable = [u for u in updates if isinstance(u, dict)
                      and valid_update_id(u.get('update_id'))]
            if updates and not usable:
                # Only what no update id can be (a server gone wrong): it
                # would come back at once at every call, so ask again
                # after a pause, and never store such an id as the offset.
                idle += 1
                self._log_bogus(updates)
                self.stopping.wait(min(backoff(idle), 5.0))
                continue
            idle = 0
            if updates:
                _crash_point('fetched')
                self.acked.clear()
                self.batches.put(updates)
                self.event.set()
                # Asking again with the new offset confirms the batch to
                # Telegram: only once it is committed here.
                self.acked.wait()

    def _log_bogus(self, updates):
        for u in updates:
            uid = u.get('update_id') if isinstance(u, dict) else None
            key = repr(uid)[:40]
            if key not in self.bogus and len(self.bogus) < 1000:
                self.bogus.add(key)
                self.log('ignored an update whose update_id %s is no update id' % printable(key))

    def intake(self, sched, updates, skip=()):
        """Store a batch (run again from the start after a conflict); returns
        the log lines to write and the (chat, topic) places that got a
        message, for after the commit.  Updates in `skip` only move the
        offset on."""
        notes, places = [], []
        st = telegram_state(sched.world)
        for u in updates:
            uid = u.get('update_id') if isinstance(u, dict) else None
            if not valid_update_id(uid):
                self._log_bogus([u])
                continue
            if uid < st.offset:
                st.skipped += 1
                continue
            st.offset = uid + 1
            if uid in skip:
                st.skipped += 1
                continue
            self.taking = uid
            m, problem = read_update(u)
            if problem is not None:
                st.skipped += 1
                notes.append('skipped update %d: %s' % (uid, problem))
                continue
            if m is None:
                continue          # not a user's message: nothing for a skill
            private = m.chat_id == m.user_id
            if not private and not self.config.groups:
                if m.chat_id not in st.refused:
                    st.refused[m.chat_id] = time.time()
                    sched.deliver(CHANNEL, thread_id(m.chat_id, m.message_thread_id),
                                  GROUP_NOTICE % (' (@%s)' % self.username if self.username
                                                  else ''))
                    notes.append('%s wrote in the group %d: told it once that the bot talks in '
                                 'private chats only (TELEGRAM_GROUPS=1 serves groups, one '
                                 'conversation per member)' % (printable(m.user_name), m.chat_id))
                continue
            member = None if private else m.user_id
            tid = thread_id(m.chat_id, m.message_thread_id, member)
            if not self.config.allows(m.user_id):
                if m.text is not None and m.user_id not in st.refused:
                    st.refused[m.user_id] = time.time()
                    if private:       # in a group, strangers talk among themselves
                        sched.deliver(CHANNEL, tid, REFUSAL % m.user_id)
                    notes.append('refused %s (user id %d)%s; to let them in, add %d to '
                                 'TELEGRAM_ALLOWED_USERS'
                                 % (printable(m.user_name), m.user_id,
                                    '' if private else ' in the group %d' % m.chat_id,
                                    m.user_id))
                continue
            if m.too_long:
                st.skipped += 1
                sched.deliver(CHANNEL, tid, TOO_LONG % m.too_long)
                notes.append('skipped update %d: a text of %d characters from %s (more than %d); '
                             'told them it was too long' % (uid, m.too_long,
                                                            printable(m.user_name), MAX_TEXT))
                continue
            if m.text is None:
                sched.deliver(CHANNEL, tid, NOT_TEXT)
                continue
            user = st.users.get(m.user_id)
            if user is None:
                user = st.users[m.user_id] = new_user(sched.world, m.user_id, m.user_name)
            elif user.get('name') != m.user_name:
                ops.set_field(user, 'name', m.user_name)     # they renamed themselves
                if sched.world.watching:
                    sched.changed(user)
            if _command(m.text) == '/timezone':
                sched.deliver(CHANNEL, tid, set_timezone(user, m.text))
                continue
            key = '%s:%s' % (CHANNEL, tid)
            if member is not None:
                user = member_user(sched, key, user)
            thread = receive(sched, key, CHANNEL, tid, user, m.text, when=m.date)
            if member is not None and thread.type.lookup('reply_to') is not None:
                ops.set_field(thread, 'reply_to', m.message_id)   # what our replies answer
            st.received += 1
            places.append((m.chat_id, m.message_thread_id))
        self.taking = None
        return notes, places

    # ------------------------------------------------------------ outbox
    def dispatch(self, sched):
        """Hand the outbox's new Telegram entries to the sender, oldest first,
        after marking them as being sent."""
        if self.lost_jobs.is_set():       # the sender restarted without its jobs
            self.lost_jobs.clear()
            self.inflight.clear()
        box = sched.world.outbox
        if not box.pending:
            return
        todo = [m for m in box.messages(CHANNEL) if m.seq not in self.inflight]
        if not todo:
            return

        def mark():
            # Read again: a conflict runs this again from what is stored.
            for m in todo:
                now = box.get(m.seq)
                if now is None:
                    continue
                if now.attempts:
                    box.resent += 1       # begun by a process that stopped before the answer
                now.attempts += 1
                box.update(now)
        sched.transact(mark)
        _crash_point('marked')
        for m in todo:
            self.inflight.add(m.seq)
            try:
                chat, topic, member = parse_thread_id(m.thread_id)
            except ValueError:
                self.results.put(('failed', m.seq, 'no Telegram chat in thread id %r'
                                  % (m.thread_id,)))
                continue
            self.awaiting.pop((chat, topic), None)
            self.jobs.put(_Job(m.seq, chat, topic, pieces_of(str(m.text)), m.done,
                               reply_to=self._reply_to(sched, m.thread_id, member),
                               low=not self.config.allows(chat if member is None else member)))

    def _reply_to(self, sched, tid, member):
        """The message a group member's thread answers (their last one)."""
        if member is None:
            return None
        ch = channels_module(sched.world)
        thread = ch.ns['threads'].d.get('%s:%s' % (CHANNEL, tid)) if ch is not None else None
        if thread is None or thread.type.lookup('reply_to') is None:
            return None
        mid = thread.get('reply_to')
        return mid if type(mid) is int else None

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
            m = box.get(seq)
            if m is None:
                self.inflight.discard(seq)
                continue
            if kind == 'piece':
                m.done = max(m.done, value[0])
                if m.done >= value[1]:
                    box.remove(seq)
                    self.inflight.discard(seq)
                else:
                    box.update(m)
            else:
                box.remove(seq, 'failed')
                self.inflight.discard(seq)
                self.log('could not send message %d: %s'
                         % (seq, str(value).replace('telegram: ', '', 1)))

    def _send_loop(self):
        jobs: list = []
        blocked: dict = {}          # chat -> monotonic time before which not to send there
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
        # Allowed users' messages first: a crowd of strangers, each refused
        # once, must not delay an answer (each chat's messages keep their order).
        for job in [j for j in jobs if not j.low] + [j for j in jobs if j.low]:
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
            self.api.send_message(job.chat, job.pieces[job.next], job.topic,
                                  reply_to=job.reply_to)
            self.limiter.sent(job.chat)
            job.next += 1
