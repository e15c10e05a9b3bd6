"""What a wait stores (docs/language.md §15.2, runtime/watches.py): a waiting
task watches the objects its evaluation read that existed before it, not the
ones the evaluation made itself (a slice, a list a helper builds) -- nobody
else can change those -- unless the evaluation handed them out (stored one
into an object it did not make, started a task): then it watches them too.
Leaving them out saves a record for the object and one for its watch index
at every wait of a chat dialogue (`messages_since_bot` takes a slice)."""
from __future__ import annotations

import io
import sys

from ZODB.FileStorage import FileStorage
from ZODB.utils import get_pickle_metadata

from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.store import Store
from ostinato.runtime.txn import StoreTransactions
from ostinato.vm.values import OList

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

    def __init__(self, tmp_path):
        prog = tmp_path / 'waits.ost'
        prog.write_text(PROGRAM)
        self.path = str(tmp_path / 'waits.fs')
        self.store = Store(self.path)
        self.out = io.StringIO()
        self.sched = Scheduler(self.store.world, out=self.out, err=sys.stderr)
        self.sched.txn = StoreTransactions(self.store)
        self.sched.recover()
        self.sched.start_main(str(prog))
        self.store.commit()
        self.sched.run()

    def box(self, how):
        for m in self.store.world.modules.values():
            boxes = m.ns.get('boxes')
            if boxes is not None:
                return boxes.d[how]
        raise AssertionError('no boxes')

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

    def last_commit(self):
        """The classes of the records the last commit wrote."""
        self.store.close()
        storage = FileStorage(self.path, read_only=True)
        try:
            last = None
            for txn in storage.iterator():
                last = [get_pickle_metadata(r.data)[1] for r in txn]
            return sorted(last)
        finally:
            storage.close()


def test_a_wait_does_not_watch_the_list_its_evaluation_made(tmp_path):
    p = Program(tmp_path)
    try:
        box = p.box('plain')
        items = box.get('items')
        module = box.type.module
        # The module (where `tail` and `length` are looked up), the box and
        # its list; not the tail it made.
        assert p.waiter('plain').waiting.objs == [module, box, items]
        p.append(items, 5)        # wakes it: it reads the new tail
        p.sched.run()
        assert 'plain saw 1' in p.out.getvalue()
        assert p.waiter('plain').waiting.objs == [module, box, items]
        records = p.last_commit()
    finally:
        p.store.close()
    # The turn that woke and waits again writes no list (the tail was the
    # only new one) and the watch indexes of the three objects it read, and
    # the world's index of watches.
    assert 'OList' not in records, records
    assert records.count('IOBTree') + records.count('IOBucket') <= 4, records


def test_what_the_evaluation_stored_away_is_watched(tmp_path):
    p = Program(tmp_path)
    try:
        box = p.box('kept')
        t = p.waiter('kept')
        kept = box.get('kept')
        assert any(o is kept for o in t.waiting.objs)
        # Someone changes the stored tail itself: the waiter evaluates again.
        p.append(kept, 7)
        p.sched.run()
        assert 'kept saw 1' in p.out.getvalue()
    finally:
        p.store.close()


def test_what_the_evaluation_gave_a_new_task_is_watched(tmp_path):
    p = Program(tmp_path)
    try:
        t = p.waiter('spawned')
        made = [o for o in t.waiting.objs if type(o) is OList and o is not p.box('spawned').get('items')]
        assert len(made) == 1          # the tail it gave the keeper task
    finally:
        p.store.close()
