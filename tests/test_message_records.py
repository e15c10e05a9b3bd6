"""What one chat message writes (issue 28): the records of its intake (the
channel's transaction that keeps the message) and of the turn that
answers it, on bench/dialogues.py's workload -- each task waits for its
thread's next message, replies and waits again, as a chat skill does.

Every record is pickled by ZODB's serializer and stored with a 42-byte
FileStorage header, so records per message are most of what a message
costs; the figures here are pinned, so a change that writes one more
record per message fails (bench/durable.py prints the same counts as
`*_records_per_msg`).
"""
from __future__ import annotations

import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'bench')


@pytest.fixture(scope='module')
def bench():
    sys.path.insert(0, BENCH)
    try:
        import dialogues
    finally:
        sys.path.remove(BENCH)
    return dialogues


# Records per message, one message in flight at a time (bench/durable.py's
# one_at_a_time case), and in a burst (every dialogue gets a message before
# any is answered; turns are committed in groups).  Measured, then pinned
# with less than one record of slack.
ONE_INTAKE = 3.5
ONE_TURN = 4.5
BURST_INTAKE = 4.5
BURST_TURN = 3.5


def run_one_at_a_time(bench, tmp_path, n=8, turns=4):
    path = str(tmp_path / 'one.fs')
    bench.OstinatoDialogues.build(path, n)
    d = bench.OstinatoDialogues(path)
    try:
        m = 0
        for turn in range(2, 2 + turns):
            for i in range(n):
                d.resume(i, bench.message_text(i, turn))
                m += 1
        return d.records(), m
    finally:
        d.close()


def test_one_message_at_a_time_writes_a_pinned_number_of_records(bench, tmp_path):
    counts, m = run_one_at_a_time(bench, tmp_path)
    intake = counts['intake'][0] / m
    turn = counts['turn'][0] / m
    assert intake <= ONE_INTAKE, intake
    assert turn <= ONE_TURN, turn


def test_a_burst_writes_a_pinned_number_of_records(bench, tmp_path):
    path = str(tmp_path / 'burst.fs')
    n = 60
    bench.OstinatoDialogues.build(path, n)
    d = bench.OstinatoDialogues(path)
    # Groups of GROUP_TURNS turns whatever the machine's load: a group ends
    # after GROUP_SECONDS too, and what a group's commit writes once is
    # shared by its turns.
    d.sched.GROUP_SECONDS = float('inf')
    try:
        bench.burst(d, n)
        counts = d.records()
    finally:
        d.close()
    intake = counts['intake'][0] / n
    turn = counts['turn'][0] / n
    assert intake <= BURST_INTAKE, intake
    assert turn <= BURST_TURN, turn


def test_a_turn_without_a_checkpoint_does_not_write_the_running_slot(bench, tmp_path):
    """The running slot (`world.running`) says which task's turn a worker
    was in when the process stopped; a turn that commits only at its end
    leaves it as it found it, and writing it (set and deleted in one
    transaction) was a record more in every turn."""
    from ZODB.FileStorage import FileStorage

    from ostinato.classcodes import record_class
    path = str(tmp_path / 'slot.fs')
    bench.OstinatoDialogues.build(path, 2)
    d = bench.OstinatoDialogues(path)
    try:
        tid = d.store.storage.lastTransaction()
        d.resume(0, bench.message_text(0, 2))
        running = d.world.running
        assert not running
        oid = running._p_oid
    finally:
        d.close()
    storage = FileStorage(path, read_only=True)
    try:
        written = [(r.oid, record_class(r.data)[1]) for txn in storage.iterator(tid)
                   if txn.tid > tid for r in txn]
    finally:
        storage.close()
    assert written and oid not in [o for o, _ in written], written


def test_a_reply_does_not_write_the_outbox_record_and_numbers_never_repeat(tmp_path):
    """A bot message waiting to be sent goes into the outbox's tree of
    pending messages; its number follows the last one pending, or the last
    one that left, so the Outbox record itself is written when a message
    leaves (its counters change then anyway), not when one is added."""
    from ostinato.runtime.store import Store
    from ostinato.runtime.world import Outbox
    store = Store(str(tmp_path / 'box.fs'))
    try:
        box = store.world.outbox
        assert isinstance(box, Outbox)
        box.add('bench', '1', 'a')
        store.commit()
        serial = box._p_serial
        seqs = [box.add('bench', '1', t).seq for t in ('b', 'c')]
        store.commit()
        assert box._p_serial == serial            # not written by the adds
        assert seqs == [2, 3]
        assert box.remove(3).text == 'c' and box.remove(2).text == 'b'
        store.commit()
        assert box.add('bench', '1', 'd').seq == 4     # 3 left: never numbered again
        assert box.remove(1).text == 'a' and box.remove(4).text == 'd'
        assert box.last_seq() == 4 and box.add('bench', '1', 'e').seq == 5
        assert box.remove(99) is None
        assert (box.sent, box.failed) == (4, 0)
        box.remove(5, 'failed')
        assert (box.sent, box.failed) == (4, 1)
    finally:
        store.close()


def test_a_task_queued_on_an_empty_ready_queue_needs_no_link_of_its_own():
    """The ready queue keeps a task queued while it is empty in its own
    record (one message at a time, each intake queues one task on an empty
    queue: its link was a record more); the order is the queue's order
    whatever else is queued, taken out or put in front."""
    from ostinato.runtime.world import ReadyQueue
    from ostinato.vm.values import Task
    q = ReadyQueue()
    a, b, c, d, e = (Task(i, n, None) for i, n in enumerate('abcde', 1))
    q.append(a)
    assert a.ready_link is q and not q.tree and list(q) == [a] and a in q
    q.append(b)
    q.append(c)
    # Behind it: in the tree, each task knowing its place.
    assert list(q.tree.values()) == [b, c] and q.tree[b.ready_link] is b
    assert list(q) == [a, b, c] and len(q) == 3
    q.appendleft(d)                   # in front of the task kept in the record
    assert list(q) == [d, a, b, c] and q.tree[a.ready_link] is a and a in q
    assert q.popleft() is d and q.popleft() is a
    q.remove(b)
    assert list(q) == [c] and b not in q and len(q) == 1
    assert q.popleft() is c and not q and list(q) == []
    q.append(e)
    assert e.ready_link is q and not q.tree
    q.remove(e)
    assert not q and list(q) == [] and e not in q
    q.append(a)
    q.append(b)
    assert q.popleft() is a and q.popleft() is b and not q


def test_a_new_threads_intake_writes_one_record_per_level_of_the_thread_map(bench, tmp_path,
                                                                            monkeypatch):
    """A new dialogue among many threads (issue 28, item 3): its intake
    compares none of the other threads with what is stored, and writes
    what it writes among few, plus the last run of each level the thread
    map's index has more.  Chunks of 4 and runs of 2 give 43 threads the
    map's shape at 10,000 and 403 threads its shape past a million: 2
    levels of runs, then 5."""
    sys.path.insert(0, BENCH)
    try:
        import threads
    finally:
        sys.path.remove(BENCH)
    from ostinato.vm import values
    monkeypatch.setattr(values, 'INDEX', 2)
    monkeypatch.setattr(values.OMap, 'CHUNK', 4)
    compared = []
    real = values._same_pairs
    written = {}
    for n in (43, 403):
        path = str(tmp_path / ('threads%d.fs' % n))
        threads.build(path, n, 3)
        d = bench.OstinatoDialogues(path)
        try:
            monkeypatch.setattr(values, '_same_pairs', lambda *a: compared.append(1) or real(*a))
            d.deliver_all([(n, bench.message_text(n, 1))])
            monkeypatch.setattr(values, '_same_pairs', real)
            written[n] = d.records()['intake'][0]
            levels = values._index_levels(
                threads_map(d).__getstate__()['index'])
            assert len(levels) == (2 if n == 43 else 5)
        finally:
            d.close()
    assert compared == []
    assert written[403] == written[43] + 3, written


def threads_map(d):
    from ostinato.effects.channels.chat import channels_module
    return channels_module(d.world).ns['threads']


def test_a_task_taken_off_the_ready_queue_does_not_write_the_queue():
    """Taking the front task off the ready queue writes the task (its
    `ready_link` is None again), which the turn that follows writes anyway,
    and not the queue's record: whoever loads the queue skips an entry at
    its front whose task no longer points back at it.  A turn undone
    (conflict, failure) puts the task back at the front."""
    import transaction
    import ZODB
    from ZODB.MappingStorage import MappingStorage

    from ostinato.runtime.world import ReadyQueue
    from ostinato.vm.values import Task
    db = ZODB.DB(MappingStorage())
    tm1, tm2 = transaction.TransactionManager(), transaction.TransactionManager()
    try:
        c1 = db.open(tm1)
        q = c1.root()['q'] = ReadyQueue()
        a, b, c, d = (Task(i, n, None) for i, n in enumerate('abcd', 1))
        for t in (a, b, c):
            c1.root()[t.name] = t
        q.append(a)                 # kept in the queue's own record
        tm1.commit()
        serial = q._p_serial
        assert q.popleft() is a and not q and list(q) == []
        tm1.commit()
        assert q._p_serial == serial                # the queue was not written
        c2 = db.open(tm2)
        q2 = c2.root()['q']
        assert not q2 and len(q2) == 0 and list(q2) == []
        # Put back by an abort; taken again, and its turn commits.
        q.append(a)
        q.append(b)
        q.append(c)                 # b and c in links of their own
        tm1.commit()
        serial = q._p_serial
        assert q.popleft() is a and q.popleft() is b
        tm1.abort()
        assert list(q) == [a, b, c] and len(q) == 3
        assert q.popleft() is a and q.popleft() is b
        tm1.commit()
        assert q._p_serial == serial
        tm2.abort()                 # sees that commit
        assert list(q2) == [c2.root()['c']] and len(q2) == 1
        q2.append(c2.root()['a'])   # written from the other view, stale entries left out
        tm2.commit()
        tm1.abort()
        assert list(q) == [c, a] and len(q) == 2
        q.append(d)
        assert q.popleft() is c and q.popleft() is a and q.popleft() is d and not q
    finally:
        tm1.abort()
        tm2.abort()
        db.close()


def test_a_task_woken_onto_an_empty_ready_queue_is_not_written(tmp_path):
    """A change that wakes a waiting task while nothing else is ready
    keeps the task in the queue's record with the number of the wait it
    woke from (`ReadyQueue.wake`): the task's record says it waits until
    its turn writes it, and whoever loads the queue knows it is ready.  A
    chat message's intake wrote the task (its frames inside) only to say
    it was ready."""
    import transaction
    import ZODB
    from ZODB.MappingStorage import MappingStorage

    from ostinato.runtime.world import ReadyQueue
    from ostinato.vm.values import Task
    db = ZODB.DB(MappingStorage())
    tm1, tm2 = transaction.TransactionManager(), transaction.TransactionManager()
    try:
        c1 = db.open(tm1)
        root = c1.root()
        q = root['q'] = ReadyQueue()
        a, b = Task(1, 'a', None), Task(2, 'b', None)
        for t in (a, b):
            t.state, t.waits = 'waiting', 3
            root[t.name] = t
        tm1.commit()
        serial = a._p_serial
        assert q.wake(a) and not q.wake(b)      # only onto an empty queue
        assert a in q and b not in q and list(q) == [a] and len(q) == 1
        tm1.commit()
        assert a._p_serial == serial and a.state == 'waiting'     # not written
        c2 = db.open(tm2)
        q2, a2 = c2.root()['q'], c2.root()['a']
        assert a2 in q2 and list(q2) == [a2] and q2.woken() is a2
        q.append(b)                 # behind it
        assert list(q) == [a, b]
        tm1.commit()
        tm2.abort()
        assert list(q2) == [a2, c2.root()['b']]
        # Its turn: taken out, it waits again (its next wait), written.
        assert q.popleft() is a
        a.state, a.waits = 'waiting', 4
        tm1.commit()
        tm2.abort()
        assert a2 not in q2 and list(q2) == [c2.root()['b']] and q2.woken() is None
        # Taken out of the queue by the operator (cancel, park).
        assert q.popleft() is b
        assert q.wake(a) and a in q
        q.remove(a)
        assert a not in q and not q
        tm1.commit()
        tm2.abort()
        assert not q2 and list(q2) == []
    finally:
        tm1.abort()
        tm2.abort()
        db.close()


def test_a_woken_task_runs_once_for_two_messages_and_after_a_restart(bench, tmp_path):
    """The dialogue woken by a message, kept in the ready queue's record
    while its own says it waits, is not queued twice by a second message
    before its turn, and is still ready after the process stops before
    that turn: it answers once, having read both."""
    path = str(tmp_path / 'twice.fs')
    bench.OstinatoDialogues.build(path, 2)
    d = bench.OstinatoDialogues(path)
    try:
        before = d.replies()
        d.deliver_all([(0, 'one two'), (0, 'three')])
        assert len(d.world.ready) == 1
    finally:
        d.close()
    d = bench.OstinatoDialogues(path)      # runs what is ready as it opens
    try:
        assert d.replies() == before + 1
        box = d.world.outbox
        text = box.get(box.last_seq()).text
        words = len(bench.message_text(0, 1).split()) + 3
        assert text == 'reply 2: %d words so far' % words, text
        assert not d.world.ready
    finally:
        d.close()


def test_a_woken_task_is_shown_ready(bench, tmp_path):
    """`ostinato tasks`, `db info` and the web inspector show the task kept
    in the ready queue's record as ready, not as waiting for the message
    that woke it (its record says it waits until its turn)."""
    from ostinato.effects.web import views
    from ostinato.runtime import report
    path = str(tmp_path / 'shown.fs')
    bench.OstinatoDialogues.build(path, 1)
    d = bench.OstinatoDialogues(path)
    try:
        d.deliver_all([(0, 'hello')])
        world = d.world
        t = world.ready.woken()
        assert t is not None and t.state == 'waiting'
        assert report.task_data(t, world)['state'] == 'ready'
        assert report.task_data(t, world)['waiting'] is None
        line = [x for x in report.tasks_text(world).splitlines() if x.split()[0] == str(t.id)][0]
        assert line.split()[2] == 'ready' and 'waiting' not in line, line
        assert report.task_text(world, t.id).splitlines()[0].endswith(': ready')
        assert dict(report.world_info(world)[0])['live tasks'].endswith('(1 ready, 1 waiting)')
        assert views.task_row(t, {}, 0.0, world)['state'] == 'ready'
    finally:
        d.close()


def test_a_bot_message_is_kept_inside_the_outbox_tree(tmp_path):
    """A bot message waiting to be sent is an entry of the outbox's tree of
    pending messages, not a record of its own that the tree names: a reply
    writes one record to the outbox where it wrote two.  What a channel
    notes on it (pieces confirmed, sends begun) is stored with it."""
    from ZODB.FileStorage import FileStorage

    from ostinato.classcodes import record_class
    from ostinato.runtime.store import Store
    path = str(tmp_path / 'box.fs')
    store = Store(path)
    try:
        box = store.world.outbox
        box.add('bench', '1', 'warm')       # the tree exists and has a bucket
        store.commit()
        tid = store.storage.lastTransaction()
        m = box.add('bench', '1', 'hello')
        store.commit()
        assert [x.text for x in box.messages()] == ['warm', 'hello']
        m.attempts += 1
        m.done = 1
        box.update(m)
        store.commit()
    finally:
        store.close()
    storage = FileStorage(path, read_only=True)
    try:
        written = [[record_class(r.data)[1] for r in txn] for txn in storage.iterator(tid)
                   if txn.tid > tid]
    finally:
        storage.close()
    assert written == [['OutboxTree'], ['OutboxTree']], written
    store = Store(path)
    try:
        box = store.world.outbox
        m = box.get(box.last_seq())
        assert (m.text, m.channel, m.thread_id, m.done, m.attempts) == ('hello', 'bench', '1', 1, 1)
        assert [x.seq for x in box.messages('bench')] == [1, 2] and box.messages('web') == []
    finally:
        store.close()


def turn_classes(bench, tmp_path, name, dialogues=2):
    """The classes of the records that one message's turn wrote (the third
    message of dialogue 0: the second one's turn still settles what the
    build left)."""
    from ZODB.FileStorage import FileStorage

    from ostinato.classcodes import record_class
    path = str(tmp_path / name)
    bench.OstinatoDialogues.build(path, dialogues)
    d = bench.OstinatoDialogues(path)
    try:
        d.resume(0, bench.message_text(0, 2))
        d.deliver_all([(0, bench.message_text(0, 3))])
        tid = d.store.storage.lastTransaction()
        d.process()
    finally:
        d.close()
    storage = FileStorage(path, read_only=True)
    try:
        return sorted(record_class(r.data)[1] for txn in storage.iterator(tid)
                      if txn.tid > tid for r in txn)
    finally:
        storage.close()


def test_the_new_messages_a_wait_returns_are_no_record_of_their_own(bench, tmp_path):
    """`wait_for_new_messages_on_thread` returns the user's new messages as
    a tuple (no identity, nothing to change), kept inside the waiting
    frame's record: a list was a record of its own in every turn, though
    only that frame held it.  The one list the turn writes is the thread's
    messages (the reply)."""
    written = turn_classes(bench, tmp_path, 'slice.fs')
    assert written.count('OList') == 1, written


def test_a_turn_that_reads_and_replies_does_not_write_the_thread(bench, tmp_path):
    """How far skills have read a thread (`read_upto(thread)`) is kept with
    its messages, in the list's record, which the reply writes anyway: on
    the Thread it was a record more in every turn."""
    written = turn_classes(bench, tmp_path, 'thread.fs')
    assert sorted(written) == ['OList', 'OObject', 'OutboxTree', 'Task'], written


def test_read_upto_follows_the_reads_and_an_older_field(tmp_path):
    """`read_upto(thread)`: what the last wait returned reaches that far;
    a thread whose field `read_upto` was set (by a frame running older
    code of the library) counts too, whichever is further."""
    import io

    from ostinato.runtime.runner import run_file
    from ostinato.runtime.store import Store
    prog = tmp_path / 'marks.ost'
    prog.write_text('''
from channels import Thread, Message, read_upto, set_read_upto
t = Thread(id = '1', channel = 'x', user = none, messages = [])
print(read_upto(t))
append(t.messages, Message(when = 'now', sender = none, text = 'a'))
set_read_upto(t, 1)
print(read_upto(t), t.messages == [t.messages[0]], length(t.messages))
t.read_upto = 3
print(read_upto(t))
set_read_upto(t, 4)
print(read_upto(t))
''')
    out, err = io.StringIO(), io.StringIO()
    store = Store(memory=True)
    try:
        assert run_file(str(prog), out, err, store=store) == 0, err.getvalue()
    finally:
        store.close()
    out = out.getvalue()
    assert out.split('\n')[:4] == ['0', '1 true 1', '3', '4'], out


def test_a_message_for_a_task_behind_others_writes_two_records_to_queue_it(bench, tmp_path):
    """A message whose dialogue is woken while other tasks are ready puts
    the task into the ready queue's tree (its bucket; the tree's own record
    while it has one) and writes the task, which knows its place: a chain
    of links wrote the new link, the one before it and the queue's record
    too.  A second message before its turn queues it no second time."""
    from ZODB.FileStorage import FileStorage

    from ostinato.classcodes import record_class
    path = str(tmp_path / 'behind.fs')
    bench.OstinatoDialogues.build(path, 3)
    d = bench.OstinatoDialogues(path)
    try:
        d.deliver_all([(0, bench.message_text(0, 2)), (1, bench.message_text(1, 2))])
        tid = d.store.storage.lastTransaction()
        d.deliver_all([(2, bench.message_text(2, 2))])
        after = d.store.storage.lastTransaction()
        d.deliver_all([(2, 'and more')])
        ready = list(d.world.ready)
        assert len(ready) == 3 and len(set(ready)) == 3
        before = d.replies()
        d.process()
        assert d.replies() == before + 3
    finally:
        d.close()
    storage = FileStorage(path, read_only=True)
    try:
        written = sorted(record_class(r.data)[1] for txn in storage.iterator(tid)
                         if tid < txn.tid <= after for r in txn)
    finally:
        storage.close()
    assert written == ['OList', 'OObject', 'ReadyTree', 'Task'], written


def test_migration_18_puts_a_chain_of_links_into_the_tree_in_order():
    """A ready queue of schema 18 (the front task in its record, woken or
    queued, the rest in a chain of ReadyLinks, some emptied or taken out)
    becomes a queue whose tasks behind the front are in its tree, in the
    same order, each knowing its place."""
    import transaction
    import ZODB
    from ZODB.MappingStorage import MappingStorage

    from ostinato.runtime import migrations
    from ostinato.runtime.world import ReadyLink, ReadyQueue, World
    from ostinato.vm.values import Task
    for woken in (False, True):
        db = ZODB.DB(MappingStorage())
        tm = transaction.TransactionManager()
        try:
            root = db.open(tm).root()
            world = root['w'] = World()
            a, b, c, d, e = (Task(i, n, None) for i, n in enumerate('abcde', 1))
            for t in (a, b, c, d, e):
                world.tasks[t.id] = t
            old = ReadyQueue.__new__(ReadyQueue)
            links = [ReadyLink(t) for t in (b, c, d, e)]
            for x, y in zip(links, links[1:]):
                x.next = y
            for t, link in zip((b, c, d, e), links):
                t.ready_link = link
            links[1].task = None            # c was removed
            d.ready_link = None             # d was taken by a turn that did not write the queue
            if woken:
                a.state, a.waits = 'waiting', 4
            else:
                a.ready_link = old
            old.__setstate__((links[0], links[-1], 4, a, 4 if woken else None))
            world.ready = old
            tm.commit()
            migrations.STEPS[18][1](world)
            tm.commit()
            q = world.ready
            assert q is not old and list(q) == [a, b, e] and len(q) == 3
            assert (q.woken() is a) == woken and a in q and b in q and e in q
            assert c not in q and d not in q
            assert q.tree[b.ready_link] is b and q.tree[e.ready_link] is e
            assert q.popleft() is a and q.popleft() is b and q.popleft() is e and not q
        finally:
            tm.abort()
            db.close()
