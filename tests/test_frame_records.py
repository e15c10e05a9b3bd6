"""Where a task's frames are stored (issue 28, schema 13): the top two
frames of a waiting task -- the ones nearly every turn changes, the wait's
own call and the frame that made it -- go inside the task's record, which
the turn writes anyway, so a chat message's turn writes one record where it
wrote three.  A frame anybody else can reach (a closure's defining frame,
`__caller__` handed out, their callers) and a frame deeper down keep a
record of their own, so they keep one identity and a deep stack's
unchanged frames are not written again at every turn.
"""
from __future__ import annotations

import io
import sys

from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.store import Store
from ostinato.runtime.txn import StoreTransactions
from ostinato.vm import ops
from records import last_commit_classes

LOOP = '''\
type Box:
    var n = 0

b = Box()

def wait_for(seen):
    wait until b.n > seen
    return b.n

spawn:
    seen = 0
    while true:
        seen = wait_for(seen)
'''

# A frame handed out after it was stored inside its task's record: the
# closure and `__caller__` must see the frame the task goes on in (x = 5),
# in this process and in the next.
HANDED_OUT = '''\
type Box:
    var n = 0
    var f
    var c

b = Box()

def keep_caller():
    return __caller__

def outer():
    x = 1
    wait until b.n > 0
    b.f = <x>
    b.c = keep_caller()
    wait until b.n > 1
    x = 5
    wait until b.n > 2
    print("closure {b.f()} caller {b.c.x} same {b.c == keep_caller()}")

spawn outer()
'''

# Deeper than the two frames kept in the task: the frame below them (whose
# call does not return) has a record of its own, written once, not again
# at every turn.
DEEP = '''\
type Box:
    var n = 0

b = Box()

def wait_for(seen):
    wait until b.n > seen
    return b.n

def loop():
    seen = 0
    while true:
        seen = wait_for(seen)

def bottom():
    loop()

spawn bottom()
'''


class Program:
    def __init__(self, tmp_path, source):
        prog = tmp_path / 'frames.ost'
        prog.write_text(source)
        self.prog = str(prog)
        self.path = str(tmp_path / 'frames.fs')
        self.out = io.StringIO()
        self.open()
        self.sched.start_main(self.prog)
        self.store.commit()
        self.sched.run()

    def open(self):
        self.store = Store(self.path)
        self.sched = Scheduler(self.store.world, out=self.out, err=sys.stderr)
        self.sched.txn = StoreTransactions(self.store)
        self.sched.recover()

    def reopen(self):
        self.store.close()
        self.open()

    def close(self):
        self.store.close()

    def box(self):
        for m in self.store.world.modules.values():
            v = m.ns.get('b')
            if v is not None:
                return v
        raise AssertionError('no b')

    def bump(self):
        def change():
            b = self.box()
            ops.set_field(b, 'n', b.get('n') + 1)
            self.sched.changed(b)
        self.sched.transact(change)
        self.sched.run()

    def last_commit(self):
        """The classes of the records the last commit wrote (closes the
        database)."""
        self.store.close()
        return last_commit_classes(self.path)


def test_a_wake_up_writes_its_top_frames_inside_the_task_record(tmp_path):
    p = Program(tmp_path, LOOP)
    try:
        p.bump()
        p.bump()
    finally:
        records = p.last_commit()
    # The spawned block's frame (`seen` changed) and the new call's are in
    # the task's record (and the ready queue is not written: the task says
    # it left it, runtime/world.py ReadyQueue).
    assert records == ['Task'], records


def test_frames_handed_out_after_they_were_stored_in_the_task_keep_one_identity(tmp_path):
    p = Program(tmp_path, HANDED_OUT)
    try:
        p.bump()
        p.reopen()
        p.bump()
        p.reopen()
        p.bump()
    finally:
        p.close()
    assert 'closure 5 caller 5 same true' in p.out.getvalue(), p.out.getvalue()


def test_frames_below_the_top_two_are_written_once(tmp_path):
    p = Program(tmp_path, DEEP)
    try:
        p.bump()
        p.reopen()
        p.bump()
        p.bump()
    finally:
        records = p.last_commit()
    assert records == ['Task'], records
