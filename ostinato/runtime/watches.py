"""The watch index: which waiting tasks a change to an object wakes.

A `Watch` (runtime/world.py) records the objects one watched evaluation of a
task read (docs/language.md §15.2).  The world keeps the active ones by id
(`world.watches`); each watched object keeps its own in `_ow`, in the order
they were made, in one of these forms:

- no `_ow`: no watch;
- a Watch, or a tuple of up to INLINE of them: kept in the object's own
  record.  Most objects are watched by one task (a chat dialogue waits on
  its thread, the thread's messages and the last message, which no other
  task watches), and an index of their own was a record per object -- 49
  bytes, and a 42-byte FileStorage header -- about 270 of the 2,340 bytes
  a waiting dialogue kept;
- a WatchTree (a BTree keyed by watch id; an IOBTree in a database of
  schema 5 or older) once more watch it, and always for a module, whose
  record (its namespace) is big and read by many tasks: adding a waiter
  then writes a small bucket, never the watched object's record again.

Workers sharing a ZEO server: a task that waits on an object another worker
changed and committed meanwhile must not sleep through that change.  Its
commit writes the object's record (an index kept there) or asks ZODB to
check that the object is still current (`readCurrent`, an index in a tree),
so the commit fails with a ConflictError and the turn runs again from the
new state (runtime/scheduler.py `run_one`).  Two workers adding waiters to
one object conflict the same way on an index in its record; a tree's
buckets resolve such conflicts instead (ostinato/zeo.py).

These functions work on the world alone: the scheduler calls them (and
passes its `make_ready` as `wake`), and so does `db pack`'s pruning of
ended tasks (runtime/report.py).
"""
from __future__ import annotations

from ..vm.values import OModule
from .world import Watch, WatchTree

# At most this many watches are kept in an object's own record; one more
# turns its index into a WatchTree (which stays one).
INLINE = 4


def of(obj):
    """The watches in `obj`'s index, in the order they were made (fired
    ones that a task still holds included)."""
    ws = getattr(obj, '_ow', None)
    if ws is None:
        return ()
    if type(ws) is Watch:
        return (ws,)
    if type(ws) is tuple:
        return ws
    return tuple(ws.values())


def _add(o, watch):
    ws = getattr(o, '_ow', None)
    if ws is None:
        if type(o) is OModule:
            o._ow = WatchTree({watch.id: watch})
        else:
            o._ow = watch
    elif type(ws) is Watch:
        o._ow = (ws, watch)
    elif type(ws) is tuple:
        if len(ws) < INLINE:
            o._ow = ws + (watch,)
        else:
            tree = WatchTree({w.id: w for w in ws})
            tree[watch.id] = watch
            o._ow = tree
    else:
        ws[watch.id] = watch
        # The task read `o` and sleeps on it, but writes only the tree: if
        # another worker changed `o` meanwhile and committed first, this
        # commit must fail (ConflictError: the turn runs again and sees the
        # change), not leave the task asleep through a change it never saw.
        # An index in the object's own record writes `o`, which does that.
        jar = o._p_jar
        if jar is not None and o._p_oid is not None:
            jar.readCurrent(o)


def _remove(o, watch):
    ws = getattr(o, '_ow', None)
    if ws is None:
        return
    if ws is watch:
        del o._ow
    elif type(ws) is tuple:
        if any(w is watch for w in ws):
            rest = tuple(w for w in ws if w is not watch)
            o._ow = rest[0] if len(rest) == 1 else rest
    elif type(ws) is not Watch and watch.id in ws:
        del ws[watch.id]


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
        _add(o, watch)
    world.watches[watch.id] = watch
    return watch


def changed(world, obj, wake):
    """`obj` changed: every active watch on it fires -- taken out of
    `world.watches`, and a token marked dirty -- and wake(task, keep_watch=True) is
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
    for w in of(obj):
        if w.id not in world.watches:
            continue
        del world.watches[w.id]
        if w.kind == 'token':
            # Only a reactive loop reads `dirty`; a 'change' watch that
            # fired is one out of `world.watches`, and writing it too was a
            # record more in every chat message's intake.
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
        _remove(o, watch)


def unwatch_where(world, pred):
    """Forget every active watch whose task satisfies pred(task) (pruning
    ended tasks); returns how many."""
    gone = [w for w in world.watches.values() if pred(w.task)]
    for w in gone:
        unwatch(world, w)
    return len(gone)
