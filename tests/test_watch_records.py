"""What a wait and a wake-up store (docs/language.md §15.2,
runtime/watches.py, the chat dialogues of issue 17):

- a waiting task watches the objects its evaluation read that existed
  before it, not the ones the evaluation made itself (a slice, a list a
  helper builds) -- nobody else can change those -- unless the evaluation
  handed them out (stored one into an object it did not make, started a
  task): then it watches them too.  `messages_since_bot` takes a slice, so
  this saves a list and its watch index at every wait of a dialogue;
- the change that wakes a task does not rewrite the watch indexes: the
  task's next turn drops the fired watch, in the transaction whose wait
  writes the same indexes again; no watch is left behind;
- a frame the woken task returns from is not stored again when its locals
  (all that can still be seen of it) did not change.
"""
from __future__ import annotations

import io
import sys

from ZODB.FileStorage import FileStorage

from ostinato.classcodes import record_class
from ostinato.runtime import watches
from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.store import Store
from ostinato.runtime.txn import StoreTransactions
from ostinato.vm import ops
from ostinato.vm.values import OList
from records import last_commit_classes

# `tail(l)` is a new list on every evaluation, like channels'
# messages_since_bot; the waiter waits until it is not empty.  `other`
# waits on an object of its own, so that some task already waits (changes
# are reported only then) before the waiter's first wait.
PROGRAM = '''\
type Box:
    var items
    var kept

def tail(b):
    ms = b.items
    i = length(ms)
    while i > 0 and ms[i - 1] > 0:
        i = i - 1
    return ms[i...]

def cached(b):
    if b.kept?:
        return b.kept
    b.kept = tail(b)
    return b.kept

def tail_spawned(b):
    t = tail(b)
    spawn keeper(t)
    return t

def keeper(t):
    pass

def waiter(b, how):
    got = 0
    while true:
        if how == 'plain':
            wait until length(tail(b)) > got
            got = length(tail(b))
        else if how == 'kept':
            wait until length(cached(b)) > got
            got = length(b.kept)
        else:
            wait until length(tail_spawned(b)) > got
            got = got + 1
        print("{how} saw {got}")

other = Box(items = [])
spawn:
    wait until length(other.items) > 0
sleep(0)
boxes = [:]
for how in ['plain', 'kept', 'spawned']:
    boxes[how] = Box(items = [0])
    spawn waiter(boxes[how], how)
'''


class Program:
    """PROGRAM on a FileStorage, each turn committed as `ostinato run` does."""

    def __init__(self, tmp_path, source=PROGRAM):
        prog = tmp_path / 'waits.ost'
        prog.write_text(source)
        self.path = str(tmp_path / 'waits.fs')
        self.store = Store(self.path)
        self.out = io.StringIO()
        self.sched = Scheduler(self.store.world, out=self.out, err=sys.stderr)
        self.sched.txn = StoreTransactions(self.store)
        self.sched.recover()
        self.sched.start_main(str(prog))
        self.store.commit()
        self.sched.run()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.store.close()

    def box(self, how):
        return self.var('boxes').d[how]

    def var(self, name):
        for m in self.store.world.modules.values():
            v = m.ns.get(name)
            if v is not None:
                return v
        raise AssertionError('no module variable %s' % name)

    def waiter(self, how):
        box = self.box(how)
        for t in self.store.world.tasks.values():
            w = t.waiting
            if t.name == 'waiter' and w is not None and box in w.objs:
                return t
        raise AssertionError('no waiter on the %s box' % how)

    def append(self, obj, value):
        """`append(obj, value)` by someone else, in a transaction of its own."""
        def change():
            obj.items.append(value)
            obj.changed()
            self.sched.changed(obj)
        self.sched.transact(change)

    def set(self, obj, name, value):
        """`obj.name = value` by someone else, in a transaction of its own."""
        def change():
            ops.set_field(obj, name, value)
            self.sched.changed(obj)
        self.sched.transact(change)

    def last_commit(self):
        """The classes of the records the last commit wrote (closes the
        database)."""
        self.store.close()
        return last_commit_classes(self.path)


def test_a_wait_does_not_watch_the_list_its_evaluation_made(tmp_path):
    with Program(tmp_path) as p:
        box = p.box('plain')
        items = box.get('items')
        module = box.type.module
        # The box and its list; not the tail it made, and not the module
        # where `tail` and `length` are looked up (its definitions).
        assert p.waiter('plain').waiting.objs == [box, items]
        assert p.waiter('plain').waiting.defs == (module,)
        p.append(items, 5)        # wakes it: it reads the new tail
        p.sched.run()
        assert 'plain saw 1' in p.out.getvalue()
        assert p.waiter('plain').waiting.objs == [box, items]
        records = p.last_commit()
    # The turn that woke and waits again writes no new list (the tail); it
    # waits on the box and its list again, so it keeps the watch that woke
    # it (runtime/watches.py `same`): neither the watch nor the box and the
    # list, which hold it in their own records, are written.
    assert 'OList' not in records and 'OObject' not in records, records
    assert 'Watch' not in records and index_records(records) == 0, records


def index_records(records):
    """How many of a commit's records (class names) are watch indexes or
    their buckets."""
    return sum(records.count(name) for name in ('WatchTree', 'IOBTree', 'IOBucket'))


def test_what_the_evaluation_stored_away_is_watched(tmp_path):
    with Program(tmp_path) as p:
        box = p.box('kept')
        t = p.waiter('kept')
        kept = box.get('kept')
        assert any(o is kept for o in t.waiting.objs)
        # Someone changes the stored tail itself: the waiter evaluates again.
        p.append(kept, 7)
        p.sched.run()
        assert 'kept saw 1' in p.out.getvalue()


def test_what_the_evaluation_gave_a_new_task_is_watched(tmp_path):
    with Program(tmp_path) as p:
        t = p.waiter('spawned')
        made = [o for o in t.waiting.objs if type(o) is OList and o is not p.box('spawned').get('items')]
        assert len(made) == 1          # the tail it gave the keeper task


def test_the_change_that_wakes_a_task_does_not_rewrite_the_watch_indexes(tmp_path):
    with Program(tmp_path) as p:
        box = p.box('plain')
        items = box.get('items')
        t = p.waiter('plain')
        w = t.waiting
        p.append(items, 5)
        # Woken: the watch fired, but it leaves the indexes in the task's
        # next turn, whose wait writes the same indexes again.  The task,
        # woken onto the empty ready queue, is kept in the queue's record,
        # and its own still says it waits (runtime/world.py ReadyQueue.wake).
        assert t in p.store.world.ready and p.store.world.ready.woken() is t
        assert t.state == 'waiting' and t.waiting is w
        assert w in watches.of(items) and w in watches.of(box)
        records = p.last_commit()
    # The list and the ready queue; no index of the objects read, no index
    # of the active watches, not the fired Watch (only a reactive loop's
    # token reads `dirty`), and not the task.
    assert 'OList' in records and 'Watch' not in records, records
    assert index_records(records) == 0, records
    assert sorted(records) == ['OList', 'ReadyQueue'], records


ONCE = '''\
type Box:
    var items

other = Box(items = [])
spawn:
    wait until length(other.items) > 0
sleep(0)
box = Box(items = [])
spawn:
    wait until length(box.items) > 0
    print("saw it")
'''


def test_a_task_that_does_not_wait_again_leaves_no_watch_behind(tmp_path):
    with Program(tmp_path, ONCE) as p:
        box = p.var('box')
        items = box.get('items')
        p.append(items, 1)
        assert watches.of(items) and watches.of(box)      # until the woken task runs
        p.sched.run()
        assert 'saw it' in p.out.getvalue()
        assert not watches.of(items) and not watches.of(box)
        assert not any(w.task.done for m in p.store.world.modules.values()
                       for w in watches.of(m))


def test_a_woken_task_cancelled_before_it_runs_leaves_no_watch_behind(tmp_path):
    with Program(tmp_path, ONCE) as p:
        box = p.var('box')
        items = box.get('items')
        p.append(items, 1)
        t = next(t for t in p.store.world.tasks.values() if t in p.store.world.ready)
        p.sched.transact(lambda: p.sched.cancel(t))
        p.sched.run()
        assert t.done and 'saw it' not in p.out.getvalue()
        assert not watches.of(items) and not watches.of(box)


# A frame resumed by a wake-up that returns without changing its locals
# stays as stored; one whose locals changed is stored as it ended.  Either
# way its locals read the same afterwards (`__caller__.x`, docs/language.md
# §13), also from a fresh process.
FRAMES = '''\
type Box:
    var n
    var kept
    var changed

b = Box(n = 0)

def keep_caller():
    return __caller__

def same():
    x = 1
    b.kept = keep_caller()
    wait until b.n > 0
    return x

def changed():
    x = 1
    b.changed = keep_caller()
    wait until b.n > 0
    x = 2
    return x

spawn:
    print("same {same()}")
spawn:
    print("changed {changed()}")
'''


def test_a_frame_that_returns_after_a_wake_up_is_stored_only_if_its_locals_changed(tmp_path):
    with Program(tmp_path, FRAMES) as p:
        b = p.var('b')
        p.set(b, 'n', 1)
        p.sched.run()
        assert 'same 1' in p.out.getvalue() and 'changed 2' in p.out.getvalue()
    store = Store(p.path)
    try:
        b = next(m.ns['b'] for m in store.world.modules.values() if m.ns.get('b') is not None)
        assert ops.get_field(b.get('kept'), 'x') == 1
        assert ops.get_field(b.get('changed'), 'x') == 2
    finally:
        store.close()


# `wait_for` hands its frame out (`b.f`), so its frames and the loop's have
# records of their own, not a place inside the task's (vm/values.py
# `share`).
LOOP = '''\
type Box:
    var n
    var f

b = Box(n = 0)

def keep_caller():
    return __caller__

def wait_for(seen):
    b.f = keep_caller()
    wait until b.n > seen
    return b.n

spawn:
    seen = 0
    while true:
        seen = wait_for(seen)
'''


def test_a_wake_up_does_not_store_the_frame_it_returns_from(tmp_path):
    with Program(tmp_path, LOOP) as p:
        b = p.var('b')
        p.set(b, 'n', 1)
        p.sched.run()
        records = p.last_commit()
    # The loop's frame (`seen` changed) and the new call's; not the frame of
    # the call that returned (nothing of it can be seen any more but its
    # local `seen`, unchanged).
    assert records.count('Frame') == 2, records


def test_a_task_waiting_again_among_thousands_rewrites_small_tree_nodes():
    """Each turn of a waiting task takes its watch out of the indexes (the
    active watches, each watched object's) and puts a new one in at the
    end.  With thousands of tasks waiting on one object, that rewrites a
    bucket or two of each index, and an internal node when one splits or
    empties: WatchTree keeps those small (an IOBTree's wrote 3,600 bytes
    a turn here)."""
    import random

    import transaction
    import ZODB
    from ZODB.MappingStorage import MappingStorage

    from ostinato.runtime.world import World
    from ostinato.vm.values import OList, Task
    storage = MappingStorage()
    db = ZODB.DB(storage)
    try:
        world = db.open().root()['world'] = World()
        shared = OList()
        tasks = [Task(i, 'waiter', None) for i in range(5000)]
        for t in tasks:
            t.waiting = watches.register(world, t, [shared], 'change')
        transaction.commit()
        pick = random.Random(7)
        for _ in range(200):
            t = pick.choice(tasks)
            watches.unwatch(world, t.waiting)
            t.waiting = watches.register(world, t, [shared], 'change')
            transaction.commit()
        trees = [len(r.data) for txn in list(storage.iterator())[-200:] for r in txn
                 if record_class(r.data)[1] in ('WatchTree', 'IOBTree', 'IOBucket')]
        assert sum(trees) / 200 < 2600, sum(trees) / 200
    finally:
        transaction.abort()
        db.close()


def test_a_waiting_dialogue_keeps_no_watch_index_record_of_its_own(tmp_path):
    """A chat dialogue waits on its thread, the thread's messages and the
    last message, which no other task watches: each keeps its one watch in
    its own record (runtime/watches.py), not in a watch index of its own --
    a record of 49 bytes and a 42-byte FileStorage header each, three per
    waiting dialogue (about 270 of 2,340 bytes).  The module all dialogues
    read keeps a WatchTree, and so does the world's index of active
    watches: the watch-index records of the packed database do not grow
    with the dialogues."""
    import os
    import sys
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'bench')
    sys.path.insert(0, bench)
    try:
        from dialogues import OstinatoDialogues
    finally:
        sys.path.remove(bench)
    path = str(tmp_path / 'dialogues.fs')
    n = 30
    OstinatoDialogues.build(path, n)
    store = Store(path)
    try:
        store.db.pack(days=0)
    finally:
        store.close()
    storage = FileStorage(path, read_only=True)
    try:
        classes = [record_class(r.data)[1] for txn in storage.iterator() for r in txn]
    finally:
        storage.close()
    assert classes.count('Watch') == n, classes.count('Watch')
    # The world's index of active watches, the module's (a tree and its
    # bucket each, at 30 entries), nothing per dialogue.
    assert index_records(classes) <= 6, index_records(classes)


DEFINITIONS = '''\
type Box:
    var n = 0

def small(b):
    return b.n > 5

def big(b):
    return b.n > 0

def waiter(b):
    wait until check(b) and length([1]) > 0
    print("check passed at {b.n}")

check = small
limit = 10
box = Box()
spawn waiter(box)
spawn:
    wait until limit < 3
    print("limit is {limit}")
'''


def test_a_wait_that_reads_only_definitions_of_a_module_is_not_in_its_index(tmp_path):
    """`check`, `length` (a builtin): the module's definitions, which change
    only when its top level binds them again; the wait on `limit`, a
    variable, is in the module's index."""
    with Program(tmp_path, DEFINITIONS) as p:
        box = p.var('box')
        module = box.type.module
        waiting = {t.waiting for t in p.store.world.tasks.values() if t.state == 'waiting'}
        on_check = [w for w in waiting if box in w.objs]
        on_limit = [w for w in waiting if box not in w.objs]
        assert len(on_check) == 1 and len(on_limit) == 1
        assert module not in on_check[0].objs and on_check[0].defs == (module,)
        assert module in on_limit[0].objs
        assert watches.of(module) == (on_limit[0],)
        assert module.defs_watched


def test_a_changed_definition_wakes_the_waits_that_read_it(tmp_path):
    with Program(tmp_path, DEFINITIONS) as p:
        box = p.var('box')
        module = box.type.module
        p.set(box, 'n', 1)
        p.sched.run()
        assert 'check passed' not in p.out.getvalue()     # small(box): woken by the box, not yet
        big = module.ns['big']

        def rebind():
            old = module.ns['check']
            module.ns['check'] = big
            module._p_changed = True
            p.sched.changed_global(module, old, big)
        p.sched.transact(rebind)
        p.sched.run()
        assert 'check passed at 1' in p.out.getvalue()
        assert 'limit is' not in p.out.getvalue()

        def lower():
            p.sched.changed_global(module, module.ns['limit'], 1)
            module.ns['limit'] = 1
        p.sched.transact(lower)
        p.sched.run()
        assert 'limit is 1' in p.out.getvalue()


REBIND_IN_PROGRAM = '''\
type Box:
    var n = 0

def small(b):
    return b.n > 5

def big(b):
    return b.n > 0

def waiter(b):
    wait until check(b)
    print("passed with {b.n}")

check = small
spawn waiter(Box(n = 1))
sleep(0)
print("rebinding")
check = big
'''


def test_a_program_rebinding_a_function_wakes_the_wait_that_calls_it(tmp_path):
    with Program(tmp_path, REBIND_IN_PROGRAM) as p:
        assert p.out.getvalue().splitlines() == ['rebinding', 'passed with 1']


# A dialogue's wait reads the thread's last message's sender (a `val`:
# set when the message is made, never again); the wait watches the thread
# and its list of messages, not the message, so the turn that ends the
# watch does not write the message again.
VALS = '''\
type Note:
    val sender
    var seen

type Box:
    var items

def waiter(b):
    got = 0
    while true:
        wait until b.items[-1].sender? and length(b.items) > got
        got = length(b.items)
        print("saw {got}")

def peeker(b):
    wait until b.items[-1].seen?
    print("peeked")

box = Box(items = [Note(sender = 'me')])
spawn waiter(box)
spawn peeker(box)
'''


def test_a_wait_that_reads_only_vals_of_an_object_does_not_watch_it(tmp_path):
    with Program(tmp_path, VALS) as p:
        box = p.var('box')
        items = box.get('items')
        note = items.items[0]
        tasks = {t.name: t for t in p.store.world.tasks.values() if t.waiting is not None}
        assert tasks['waiter'].waiting.objs == [box, items]
        # A `var` of it read: watched, and a change of it wakes the reader.
        assert any(o is note for o in tasks['peeker'].waiting.objs)
        p.set(note, 'seen', True)
        p.sched.run()
        assert 'peeked' in p.out.getvalue()
        new = ops.construct(note.type, {'sender': 'you'})
        p.append(items, new)
        p.sched.run()
        assert 'saw 2' in p.out.getvalue()
        assert tasks['waiter'].waiting.objs == [box, items]
        records = p.last_commit()
    # The waiter's turn: its frame, its task; not the note, and not the box,
    # its list or the watch, which it keeps.
    assert 'OObject' not in records and 'Watch' not in records, records


# A wait on the same objects as the one that woke the task keeps that watch;
# a wait on others takes a new one, and the old one leaves every index.
SWITCH = '''\
type Box:
    var n = 0

def waiter(a, b):
    seen = 0
    while true:
        box = if seen < 2 then a else b
        wait until box.n > seen
        seen = box.n
        print("saw {seen}")

a = Box()
b = Box()
spawn waiter(a, b)
'''


def test_a_wait_on_the_same_objects_keeps_its_watch_and_one_on_others_drops_it(tmp_path):
    from ostinato.runtime.world import Watch
    with Program(tmp_path, SWITCH) as p:
        a, b = p.var('a'), p.var('b')
        t = next(t for t in p.store.world.tasks.values() if t.name == 'waiter')
        first = t.waiting
        assert watches.of(a) == (first,)
        p.set(a, 'n', 1)
        p.sched.run()
        assert 'saw 1' in p.out.getvalue()
        assert t.waiting is first and watches.of(a) == (first,)    # kept
        p.set(a, 'n', 2)
        p.sched.run()
        assert 'saw 2' in p.out.getvalue()
        second = t.waiting
        assert type(second) is Watch and second is not first
        assert second.objs == [b] and watches.of(b) == (second,)
        assert watches.of(a) == ()                              # the old one left
        p.set(a, 'n', 5)                                        # wakes nobody
        p.sched.run()
        assert 'saw 5' not in p.out.getvalue()
        p.set(b, 'n', 3)
        p.sched.run()
        assert 'saw 3' in p.out.getvalue()
