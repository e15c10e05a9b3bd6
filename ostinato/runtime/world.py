"""The world: every piece of state a run keeps between turns.

Modules by name, tasks by id, the FIFO ready queue, timers,
the main task, the outbox of bot messages and each effect service's state
live in one object graph rooted here, made only of picklable values, so the
whole world can be stored and reloaded between any two instructions (the
"store everything" test mode pickles it; the durable store keeps it in
ZODB).

What is stored is a contract (DESIGN.md §3): the world records its
SCHEMA_VERSION, and runtime/migrations.py brings a database of an older
schema up to this one in numbered steps.  An attribute added later gets a
class-level default (old records read it) or a migration step, never a
`getattr` fallback at the places that read it.
"""
from __future__ import annotations

from BTrees.IOBTree import IOBTree
from BTrees.LOBTree import LOBTree
from BTrees.OOBTree import OOBTree
from persistent import Persistent

from ..vm import values as V

SCHEMA_VERSION = 20


class Watch(Persistent):
    """A task's registration on the objects its last watched evaluation read.

    kind 'change' (wait until / wait while / x!): the task sleeps until one of
    the objects changes.  kind 'token' (reactive for): the loop checks `dirty`
    after each pass and sleeps on the watch only when nothing changed yet.
    Each object keeps its watches in the attribute `_ow` (a few in its own
    record, more in a WatchTree: runtime/watches.py), so the index object ->
    waiting tasks is stored with the objects themselves.  A Watch is
    persistent because the task, the world and each object refer to the same
    one.  One that fired and woke its task stays in the indexes and in the
    task's `waiting` until the task's next turn (runtime/watches.py `changed`)."""

    # The stored state leaves out what equals these (vm/values.py
    # `without_defaults`).
    id = 0              # its key in WatchTrees, given when it first enters one
    kind = 'change'
    dirty = False
    # Modules of which the evaluation read only definitions: not in their
    # indexes; a change of their definitions fires it (runtime/watches.py).
    defs = ()

    def __init__(self, wid, task, objs, kind):
        self.id = wid
        self.task = task
        self.objs = objs
        self.kind = kind
        self.dirty = False

    def __getstate__(self):
        return V.without_defaults(Watch, super().__getstate__())


class WatchTree(IOBTree):
    """Watches by id: those of an object watched by more than a few tasks,
    or of a module (its `_ow`, runtime/watches.py); the active ones of a
    database of schema 6 or older (`world.watches`).  Every turn of a waiting task
    takes a watch out of these and puts a new one in, at the end, so a
    turn rewrites the bucket each touches, and the internal node above
    when a bucket splits or empties.  An IOBTree's buckets hold up to 120
    entries and its internal nodes 500: with 10,000 dialogues waiting on
    one module, those rewrites made a message write a quarter more than
    with 10.  Smaller ones keep the rewrites small."""

    max_leaf_size = 30
    max_internal_size = 64


class ReadyLink(Persistent):
    """One place in the ready queue of schema 18 and older: a record of its
    own in a chain.  Migration 18 puts the tasks of such a chain into the
    queue's tree (`ReadyTree`); the class stays for the records that name
    it."""

    def __init__(self, task, next=None):
        self.task = task
        self.next = next


class ReadyTree(LOBTree):
    """The ready queue's tasks behind its front one, by their place (an
    increasing number).  Queueing a task behind others writes the bucket
    it joins (while the tree has one bucket, the tree's own record), and
    the task, which then knows its place (`Task.ready_link`), so that
    membership and removal need no scan.  A chain of links wrote the new
    link, the one before it and the queue's record (schema 18 and older):
    a message that arrived while other tasks were ready was three records
    of the queue's.  Buckets of 32: the number of records stays near one
    per task, and the bytes of the bucket a task joins stay few."""

    max_leaf_size = 32
    max_internal_size = 64


class ReadyQueue(Persistent):
    """The FIFO of tasks that can run now (docs/language.md §15.1).  Nothing
    that grows with the queue lives in this record: the tasks behind the
    front are in a tree of small buckets (`ReadyTree`, schema 19).

    A task queued while the queue is empty is kept in this record itself
    (`task`: the queue is then its own task's link, the one at the front),
    not in the tree: one message at a time, every message's intake queued
    a task on an empty queue, and a place of its own was a record more
    (schema 9 and older).

    Taking the front task out (`popleft`) writes the task, not this record
    (schema 14): the task's `ready_link` is None again, and the turn that
    follows writes the task anyway, so whoever loads this record skips the
    task it holds when that task no longer points back at it (`_settle`).
    An abort of the transaction that took it loads this record again: the
    task is back at the front.  The queue's record was written by every
    turn, one record per chat message.

    A change that wakes a waiting task onto the empty queue (`wake`)
    writes this record, not the task (schema 15): the task's record still
    says it waits, and `woken_wait` holds the number of the wait it woke from
    (`Task.waits`), so that its front place is known for what it is until
    the task's turn writes it (a next wait, an end).  A chat message's
    intake wrote the task, its top frames inside, only to say it was
    ready."""

    task = None         # the front task, when it was queued on an empty queue
    woken_wait = None   # that task's `waits`, when `wake` put it there

    def __init__(self):
        self.tree = ReadyTree()

    # Stored as the tuple of these (schema 19; schema 17 and 18 stored the
    # tuple (head, tail, count, task, woken_wait) of a chain of links,
    # which migration 18 reads): every chat message's intake writes this
    # record, and the names were half of it.  A dict still loads.
    STORED = ('tree', 'task', 'woken_wait')
    CHAIN = ('head', 'tail', 'count', 'task', 'woken_wait')

    def __getstate__(self):
        state = super().__getstate__()
        if not set(state) <= set(ReadyQueue.STORED):
            return state
        return tuple([state.get(k) for k in ReadyQueue.STORED])

    def __setstate__(self, state):
        if type(state) is tuple:
            names = ReadyQueue.STORED if len(state) == len(ReadyQueue.STORED) else \
                ReadyQueue.CHAIN
            state = {k: v for k, v in zip(names, state)
                     if v is not None or k in ('head', 'tail', 'tree')}
        super().__setstate__(state)

    def _settle(self):
        """Forget the front task when a transaction that did not write
        this record took it out: in memory only, as the record would read
        if that transaction had written it."""
        self._p_activate()
        d = self.__dict__
        t = d.get('task')
        if t is not None and not self._front_is(t):
            d['task'] = None
            d.pop('woken_wait', None)

    def _front_is(self, t):
        """Whether `t`, held in this record, is still queued."""
        n = self.__dict__.get('woken_wait')
        if n is None:
            return t.ready_link is self
        return t.ready_link is None and t.state == 'waiting' and t.waits == n

    def woken(self):
        """The task `wake` keeps at the front (its record says it waits),
        or None."""
        self._settle()
        return self.task if self.__dict__.get('woken_wait') is not None else None

    def wake(self, task):
        """Queue the waiting `task`, whose wait just fired, without writing
        it -- if the queue is empty; else do nothing and return False."""
        if self:
            return False
        self.task = task
        self.woken_wait = task.waits
        return True

    def __len__(self):
        self._settle()
        return (self.task is not None) + len(self.tree)

    def __bool__(self):
        self._settle()
        return self.task is not None or bool(self.tree)

    def __contains__(self, task):
        link = task.ready_link
        if link is None:
            return self.woken() is task
        if link is self:
            self._settle()
            return self.task is task
        return self.tree.get(link) is task

    def __iter__(self):
        self._settle()
        if self.task is not None:
            yield self.task
        yield from list(self.tree.values())

    def append(self, task):
        if not self:
            # A wake's front that was taken out is left behind: drop it.
            self.__dict__.pop('woken_wait', None)
            self.task = task
            task.ready_link = self
            return
        tree = self.tree
        key = tree.maxKey() + 1 if tree else 1
        tree[key] = task
        task.ready_link = key

    def appendleft(self, task):
        self._settle()
        tree = self.tree
        front = self.task
        if front is not None:
            # The front task moves into the tree, ahead of the rest (and,
            # woken, says it is ready: a task in the tree is written).
            if self.__dict__.pop('woken_wait', None) is not None:
                front.state = 'ready'
                front.since = None
            key = tree.minKey() - 1 if tree else 1
            tree[key] = front
            front.ready_link = key
        self.task = task
        task.ready_link = self

    def popleft(self):
        """Take the front task out: a task kept in this record is written
        (see the class), not this record; one of the tree leaves its
        bucket."""
        self._settle()
        d = self.__dict__
        task = d.get('task')
        if task is None:
            tree = self.tree
            if not tree:
                raise IndexError('pop from an empty ready queue')
            task = tree.pop(tree.minKey())
            task.ready_link = None
            return task
        d['task'] = None
        d.pop('woken_wait', None)
        task.ready_link = None
        jar = self._p_jar
        if jar is not None and not self._p_changed:
            # What was taken out only in memory is put back by an abort:
            # the record is loaded again.
            txn = jar.transaction_manager.get()
            if self.__dict__.get('_v_taken') is not txn:
                self._v_taken = txn
                txn.addAfterAbortHook(_reload, (self,))
                txn.addAfterCommitHook(_reload_unless, (self,))
        return task

    def remove(self, task):
        link = task.ready_link
        if link is None and self.woken() is task:
            del self.woken_wait
            self.task = None
            return
        if link is self and self.task is task:
            self.task = None
            task.ready_link = None
            return
        if link is None or link is self or self.tree.get(link) is not task:
            raise ValueError('the task is not in the ready queue')
        del self.tree[link]
        task.ready_link = None


def _reload(queue):
    """After an abort: forget what this process took off `queue` without
    writing it (ReadyQueue.popleft)."""
    queue._p_invalidate()


def _reload_unless(committed, queue):
    if not committed:           # a failed commit, which the caller aborts
        queue._p_invalidate()


class World(Persistent):
    """The database root object.  Collections that can grow are BTrees
    (the ready queue's too), so a turn rewrites only the buckets it
    touches, never a record that grows with the load."""

    main_task = None
    main_path = None
    run_open = False              # an `ostinato run` started and has not finished
    test_stopped_at = None        # a test mode's note (runtime/runner.py)
    # True once a task watched something: from then on the VM reports
    # changes (runtime/watches.py).  Set once, so no wait writes the World.
    watching = False

    def __init__(self):
        self.schema = SCHEMA_VERSION
        self.modules = OOBTree()   # name -> OModule
        # (source hash, path, module name, bytecode version, compiler version) -> Code
        self.compiled = OOBTree()
        self.loading = OOBTree()   # name -> OModule whose top level has not settled
        self.tasks = IOBTree()     # id -> Task (live ones)
        self.ready = ReadyQueue()  # FIFO of Tasks
        self.timers = OOBTree()    # (wake_time, seq) -> Task
        self.seq = 0
        self.next_task_id = 1
        self.next_watch_id = 1     # the next key of a watch entering a WatchTree
        self.running = OOBTree()   # worker name -> the task whose turn it is running
        self.error_type = V.make_error_type()   # one per database
        self.outbox = Outbox()
        self.services = OOBTree()  # service name -> its state (see service_state)

    def new_task_id(self):
        i = self.next_task_id
        self.next_task_id = i + 1
        return i

    def add_timer(self, when, task):
        self.seq += 1
        self.timers[(when, self.seq)] = task
        return (when, self.seq)

    def next_timer(self):
        """The earliest wake time, or None."""
        return self.timers.minKey()[0] if self.timers else None

    def due_timers(self, now):
        """Remove and return the sleepers whose time has passed, earliest first
        (ties in the order of their sleep calls)."""
        keys = list(self.timers.keys(max=(now, float('inf'))))
        return [self.timers.pop(k) for k in keys]


class OutMessage(Persistent):
    """A bot message waiting for its channel to send it, as a record of its
    own: the form of schema 15 and older, which migration 15 turns into an
    entry of the outbox's tree (`Outgoing`)."""

    def __init__(self, seq, channel, thread_id, text):
        self.seq = seq
        self.channel = channel
        self.thread_id = thread_id
        self.text = text
        self.done = 0
        self.attempts = 0


class Outgoing:
    """A bot message waiting for its channel to send it: what `Outbox`
    hands out of an entry of its tree.  Written in the turn that sent it,
    so it exists exactly when that turn committed; the channel sends it
    after the commit and removes it when the chat service confirmed.
    `done` counts the pieces already confirmed (a channel may have to send
    a long text in several pieces), and `attempts` the sends begun, so a
    resend after a crash is known; a change of them is stored by
    `Outbox.update`."""

    __slots__ = ('seq', 'channel', 'thread_id', 'text', 'done', 'attempts')

    def __init__(self, seq, channel, thread_id, text, done=0, attempts=0):
        self.seq = seq
        self.channel = channel
        self.thread_id = thread_id
        self.text = text
        self.done = done
        self.attempts = attempts

    def entry(self):
        """Its entry in the tree: (channel, thread id, text), and the two
        counters once either is not 0."""
        if self.done or self.attempts:
            return (self.channel, self.thread_id, self.text, self.done, self.attempts)
        return (self.channel, self.thread_id, self.text)


def _outgoing(seq, entry):
    return Outgoing(seq, *entry)


class OutboxTree(IOBTree):
    """The outbox's pending messages by number, each an entry of its
    bucket (`Outgoing.entry`), not a record of its own: a reply wrote the
    bucket and its OutMessage (schema 15 and older).  Buckets are kept
    small, since each holds its messages' texts: while a channel is away,
    its messages pile up, and every reply rewrites the last bucket."""

    max_leaf_size = 16
    max_internal_size = 64


class Outbox(Persistent):
    """The database's outgoing messages, by sequence number (the order they
    were sent in), and how they fared.

    A message's number is one more than the last one pending, or than the
    last one that left (`next_seq`, kept up to date by `remove`): adding one
    writes the tree of pending messages, not this record as well -- a
    record more in every turn that replied (schema 8 and older counted in
    `next_seq` at every add)."""

    def __init__(self):
        self.next_seq = 1
        self.pending = OutboxTree()   # seq -> Outgoing.entry()
        self.sent = 0                 # messages confirmed
        self.resent = 0               # sends begun again after a crash
        self.failed = 0               # messages the chat service refused for good

    def last_seq(self):
        """The number of the last message added (0: none yet)."""
        pending = self.pending
        last = self.next_seq - 1
        return max(last, pending.maxKey()) if pending else last

    def add(self, channel, thread_id, text):
        seq = self.last_seq() + 1
        m = Outgoing(seq, channel, thread_id, text)
        self.pending[seq] = m.entry()
        return m

    def get(self, seq):
        """Message `seq`, or None when it is not pending."""
        entry = self.pending.get(seq)
        return None if entry is None else _outgoing(seq, entry)

    def messages(self, channel=None):
        """The pending messages (of `channel`), oldest first."""
        return [_outgoing(seq, e) for seq, e in self.pending.items()
                if channel is None or e[0] == channel]

    def update(self, m):
        """Store what changed of the pending message `m` (its counters)."""
        if m.seq in self.pending:
            self.pending[m.seq] = m.entry()

    def remove(self, seq, outcome='sent'):
        """Take message `seq` out, counted as `outcome` ('sent' or
        'failed'); returns it, or None when it is not pending."""
        entry = self.pending.pop(seq, None)
        if entry is None:
            return None
        if seq >= self.next_seq:
            self.next_seq = seq + 1
        if outcome == 'sent':
            self.sent += 1
        else:
            self.failed += 1
        return _outgoing(seq, entry)


def service_state(world, name, make=None):
    """The stored state of the effect service `name` (the LLM queue,
    'telegram', 'web', ...): one entry each in `world.services`, made with
    `make()` on first use in a turn that may write; without `make`, None
    while the service never ran (for readers such as `ostinato log`)."""
    st = world.services.get(name)
    if st is None and make is not None:
        st = world.services[name] = make()
    return st
