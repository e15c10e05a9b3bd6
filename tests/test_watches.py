"""The watch index (runtime/watches.py): a change wakes the tasks sleeping on
the object, in the order they began to watch, and their watches leave every
index when the tasks next run (`release`); pruning ended tasks (`db pack`)
uses the same index."""
from __future__ import annotations

import pytest

from ostinato.runtime import watches
from ostinato.runtime.report import prune_ended
from ostinato.runtime.world import World
from ostinato.vm.values import OList, Task


def task(world, name):
    t = Task(world.new_task_id(), name, None)
    world.tasks[t.id] = t
    return t


def sleeping_on(world, t, objs):
    w = watches.register(world, t, objs, 'change')
    t.state, t.waiting = 'waiting', w
    return w


def waker(woken):
    """A scheduler's make_ready for watches.changed: the woken tasks, in
    order; each keeps the watch that woke it."""
    def wake(task, keep_watch=False):
        assert keep_watch
        task.state = 'ready'
        woken.append(task)
    return wake


def test_a_change_wakes_sleepers_in_order_and_empties_the_indexes():
    world = World()
    a, b, other = OList(), OList(), OList()
    t1, t2, t3 = task(world, 't1'), task(world, 't2'), task(world, 't3')
    w1 = sleeping_on(world, t1, [a, b, a])
    w2 = sleeping_on(world, t2, [a])
    w3 = sleeping_on(world, t3, [other])
    assert w1.objs == [a, b]                  # each object once
    woken = []
    watches.changed(world, a, waker(woken))
    assert woken == [t1, t2]
    # w1 and w2 fired: their tasks no longer sleep on them.
    assert [w for w in (w1, w2, w3) if watches.active(w)] == [w3]
    # The woken tasks keep their watches, inactive, until their next turn
    # releases them: a second change fires nothing.
    assert t1.waiting is w1 and t2.waiting is w2
    watches.changed(world, a, waker(woken))
    assert woken == [t1, t2]
    watches.release(world, t1)
    watches.release(world, t2)
    assert not watches.of(a) and not watches.of(b) and watches.of(other) == (w3,)
    watches.changed(world, a, waker(woken))   # nothing left to fire
    assert woken == [t1, t2]


def test_a_token_that_no_task_sleeps_on_is_marked_but_wakes_no_one():
    world = World()
    box = OList()
    t = task(world, 'loop')
    token = watches.register(world, t, [box], 'token')
    woken = []
    watches.changed(world, box, waker(woken))
    assert token.dirty and woken == []


def test_unwatch_and_pruning_an_ended_task_leave_the_others():
    world = World()
    box = OList()
    live, ended, gone = task(world, 'live'), task(world, 'ended'), task(world, 'gone')
    keep = sleeping_on(world, live, [box])
    sleeping_on(world, ended, [box])
    dropped = sleeping_on(world, gone, [box])
    watches.unwatch(world, dropped)
    assert len(watches.of(box)) == 2 and dropped not in watches.of(box)
    ended.done, ended.state = True, 'done'
    assert prune_ended(world) == 1
    assert watches.of(box) == (keep,) and watches.active(keep)


def test_an_object_keeps_a_few_watches_in_its_own_record_then_a_tree():
    """Up to watches.INLINE watches live in the object's own record (one as
    itself, more as a tuple); one more turns the index into a WatchTree,
    which keeps them all.  A module's index is always a tree.  Whatever the
    form, a change wakes the sleepers in the order they began to watch."""
    from ostinato.runtime.world import Watch, WatchTree
    from ostinato.vm.values import OModule
    world = World()
    box, module = OList(), OModule('m')
    ts = [task(world, 't%d' % i) for i in range(watches.INLINE + 2)]
    ws = [sleeping_on(world, ts[0], [box, module])]
    assert type(box._ow) is Watch and type(module._ow) is WatchTree
    for t in ts[1:watches.INLINE]:
        ws.append(sleeping_on(world, t, [box]))
    assert type(box._ow) is tuple and watches.of(box) == tuple(ws)
    ws.append(sleeping_on(world, ts[watches.INLINE], [box]))
    assert type(box._ow) is WatchTree and watches.of(box) == tuple(ws)
    ws.append(sleeping_on(world, ts[-1], [box]))
    woken = []
    watches.changed(world, box, waker(woken))
    assert woken == ts
    for t in ts:
        watches.release(world, t)
    assert not watches.of(box) and not watches.of(module)


def test_an_inline_index_shrinks_back_and_leaves_the_record_when_empty():
    world = World()
    box = OList()
    t1, t2, t3 = task(world, 't1'), task(world, 't2'), task(world, 't3')
    w1 = sleeping_on(world, t1, [box])
    w2 = sleeping_on(world, t2, [box])
    w3 = sleeping_on(world, t3, [box])
    watches.unwatch(world, w2)
    assert watches.of(box) == (w1, w3)
    watches.unwatch(world, w1)
    assert box._ow is w3
    watches.unwatch(world, w3)
    assert '_ow' not in box.__dict__ and not watches.of(box)
    watches.unwatch(world, w3)          # again: nothing to do
    woken = []
    watches.changed(world, box, waker(woken))
    assert woken == []


@pytest.mark.parametrize('others', [1, watches.INLINE + 1])
def test_a_wait_that_missed_another_workers_change_conflicts_and_is_run_again(tmp_path, others):
    """Two workers share a database (ZEO).  Worker 1's task read the box
    and decides to wait on it, while worker 2 changes the box and commits
    first.  Worker 1's commit fails (ConflictError), and the turn is run
    again from the new state (runtime/scheduler.py `run_one`): it sees the
    change instead of sleeping through it.  With a few watches, the wait
    writes the box's record, which holds them; with more, a WatchTree, and
    the wait asks ZODB to check that the box is current (`readCurrent`).
    Without that check both commits went through, and the task slept on a
    change it never saw."""
    import transaction
    import ZODB
    from ZODB.POSException import ConflictError
    db = ZODB.DB(str(tmp_path / 'shared.fs'))
    try:
        tm1, tm2 = transaction.TransactionManager(), transaction.TransactionManager()
        root1 = db.open(tm1).root()
        world = root1['world'] = World()
        box = root1['box'] = OList()
        t = task(world, 'waiter')
        # Other tasks' watches, fired, still in the box's index until those
        # tasks run: the box has an index before the wait (with one more, a
        # tree).
        for _ in range(others):
            sleeping_on(world, task(world, 'other'), [box])
        watches.changed(world, box, waker([]))
        tm1.commit()
        root2 = db.open(tm2).root()
        assert root2['box'].items == []     # worker 2 sees it
        # Worker 1: `wait until length(box) > 0` found it empty; it waits.
        assert len(box.items) == 0
        sleeping_on(world, t, [box])
        # Worker 2: appends to the box and commits first.
        root2['box'].items.append('hello')
        root2['box'].changed()
        watches.changed(root2['world'], root2['box'], waker([]))
        tm2.commit()
        with pytest.raises(ConflictError):
            tm1.commit()
        tm1.abort()
        # The turn again, from the new state: nothing to wait for.
        tm1.begin()
        assert len(root1['box'].items) == 1 and watches.of(root1['box'])[0].task.name == 'other'
    finally:
        transaction.abort()
        db.close()


def test_a_kept_watch_that_missed_another_workers_change_conflicts(tmp_path):
    """As above, for a task that waits on the same objects again and so
    keeps the watch that woke it (runtime/watches.py `same`): its wait
    writes no index, so it asks ZODB to check that each object is current
    (`keep`), and worker 2's change makes worker 1's commit fail."""
    import transaction
    import ZODB
    from ZODB.POSException import ConflictError
    db = ZODB.DB(str(tmp_path / 'shared.fs'))
    try:
        tm1, tm2 = transaction.TransactionManager(), transaction.TransactionManager()
        root1 = db.open(tm1).root()
        world = root1['world'] = World()
        box = root1['box'] = OList()
        t = task(world, 'waiter')
        w = sleeping_on(world, t, [box])
        tm1.commit()
        watches.changed(world, box, waker([]))      # it fires; t is ready
        tm1.commit()
        root2 = db.open(tm2).root()
        # Worker 1: t's turn finds the box empty and waits on it again.
        t.waiting, t.state = None, 'running'
        assert watches.same(w, [box, box], ())
        watches.keep(w)
        t.waiting, t.state = w, 'waiting'
        # Worker 2: appends to the box and commits first.
        root2['box'].items.append('hello')
        root2['box'].changed()
        tm2.commit()
        with pytest.raises(ConflictError):
            tm1.commit()
        tm1.abort()
    finally:
        transaction.abort()
        db.close()


def test_a_watch_is_the_same_only_on_the_same_objects_and_definitions():
    world = World()
    a, b = OList(), OList()
    t = task(world, 'waiter')
    w = sleeping_on(world, t, [a, b])
    assert watches.same(w, [a, b, a], ())
    assert not watches.same(w, [b, a], ())
    assert not watches.same(w, [a], ())
    assert not watches.same(w, [a, b], (world,))
    # Another task began to wait on `b` since: a change of `b` wakes it
    # after this one only if this one waits anew, at the end.
    other = sleeping_on(world, task(world, 'other'), [b])
    assert not watches.same(w, [a, b], ())
    watches.drop(other)
    assert watches.same(w, [a, b], ())
    watches.drop(w)                      # no longer in the indexes: not kept
    assert not watches.same(w, [a, b], ())
