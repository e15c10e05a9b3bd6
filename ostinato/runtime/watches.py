"""The watch index: which waiting tasks a change to an object wakes.

A `Watch` (runtime/world.py) records the objects one watched evaluation of a
task read (docs/language.md §15.2).  The world keeps the active ones by id
(`world.watches`); each watched object keeps its own in `_ow`, a BTree of
its own keyed by watch id (so in the order they were made): adding a
waiter writes a small bucket, never the watched object's record again.

These functions work on the world alone: the scheduler calls them (and
passes its `make_ready` as `wake`), and so does `db pack`'s pruning of
ended tasks (runtime/report.py).
"""
from __future__ import annotations

from BTrees.IOBTree import IOBTree

from .world import Watch


def register(world, task, objs, kind):
    """A new active Watch of `task` on `objs` (each once), in every object's
    index.  kind 'change' (wait until / x!) or 'token' (a reactive loop)."""
    watch = Watch(world.next_watch_id, task, [], kind)
    world.next_watch_id += 1
    seen = set()
    for o in objs:
        if id(o) in seen:
            continue
        seen.add(id(o))
        watch.objs.append(o)
        tree = getattr(o, '_ow', None)
        if tree is None:
            tree = o._ow = IOBTree()
        tree[watch.id] = watch
    world.watches[watch.id] = watch
    return watch


def changed(world, obj, wake):
    """`obj` changed: every active watch on it fires -- marked dirty and
    taken out of `world.watches` -- and wake(task, keep_watch=True) is
    called for each task that sleeps on one of them, in the order the
    watches were made.

    A watch a task sleeps on stays in the objects' indexes, inactive (the
    indexes skip ids not in `world.watches`), and in the task's `waiting`,
    until the task's next turn drops it (`release`): the wait the task goes
    back to mostly watches the same objects, so their indexes are written
    once, by that turn, not by this transaction as well (a chat message's
    intake wrote the indexes of the module, the thread, its messages and
    the last reply, and the turn that answered wrote them again).  A token
    no task sleeps on is dropped at once."""
    ws = getattr(obj, '_ow', None)
    if not ws:
        return
    for w in list(ws.values()):
        if w.id not in world.watches:
            continue
        del world.watches[w.id]
        w.dirty = True
        t = w.task
        if t.waiting is w:
            wake(t, keep_watch=True)
        else:
            drop(w)


def release(world, task):
    """`task` no longer waits: if it still holds the watch that woke it
    (`changed`), drop that watch from the objects' indexes.  Call before
    `task.waiting` changes."""
    w = task.waiting
    if isinstance(w, Watch) and w.id not in world.watches:
        drop(w)


def unwatch(world, watch):
    """Forget a watch (a reactive loop evaluates again, a cancelled task):
    out of `world.watches` if it did not fire, out of the indexes if it is
    still in them."""
    if watch.id in world.watches:
        del world.watches[watch.id]
    drop(watch)


def drop(watch):
    """Remove `watch` from the indexes of the objects it watches."""
    for o in watch.objs:
        tree = getattr(o, '_ow', None)
        if tree is not None and watch.id in tree:
            del tree[watch.id]


def unwatch_where(world, pred):
    """Forget every active watch whose task satisfies pred(task) (pruning
    ended tasks); returns how many."""
    gone = [w for w in world.watches.values() if pred(w.task)]
    for w in gone:
        unwatch(world, w)
    return len(gone)
