"""The watch index: which waiting tasks a change to an object wakes.

A `Watch` (runtime/world.py) records the objects one watched evaluation of a
task read (docs/language.md §15.2).  Each watched object keeps its own in
`_ow`, in the order they were made, in one of these forms:

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

Whether a watch is active is read from its task (`active`), not kept in an
index of the world's: a 'change' watch is active while its task sleeps on
it, a reactive loop's token until it is marked dirty.  An index of the
active watches (`world.watches`, schema 6 and older) was a record written by
every message's intake and again by the turn that answered it.  A watch
has an id only once it enters a WatchTree, whose key it is (`_key`): most
never do, and the counter they take it from lives in the World record,
which a wait then does not write.

A task woken by a watch that waits on the same objects again keeps that
watch (`same`, `keep`; the scheduler holds it while the turn runs): neither
the watch nor the indexes it is in are written.  A chat dialogue's waits
all read its thread and the thread's messages, and a new Watch at each was
a record per message.

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


def active(watch):
    """Whether a change to one of `watch`'s objects fires it: a 'change'
    watch while its task sleeps on it, a token until it is marked dirty
    (and while its task lives)."""
    t = watch.task
    if watch.kind == 'token':
        return not watch.dirty and not t.done
    return t.waiting is watch and t.state == 'waiting'


def _key(world, watch):
    """`watch`'s key in a WatchTree: its id, given on first use from the
    world's counter, so that a tree keeps its watches in the order they
    entered it."""
    wid = watch.id
    if not wid:
        wid = watch.id = world.next_watch_id
        world.next_watch_id = wid + 1
    return wid


def _tree(world, ws):
    tree = WatchTree()
    for w in ws:
        tree[_key(world, w)] = w
    return tree


def _add(world, o, watch):
    ws = getattr(o, '_ow', None)
    if ws is None:
        if type(o) is OModule:
            o._ow = _tree(world, (watch,))
        else:
            o._ow = watch
    elif type(ws) is Watch:
        o._ow = (ws, watch)
    elif type(ws) is tuple:
        if len(ws) < INLINE:
            o._ow = ws + (watch,)
        else:
            o._ow = _tree(world, ws + (watch,))
    else:
        ws[_key(world, watch)] = watch
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
    elif type(ws) is not Watch and watch.id and ws.get(watch.id) is watch:
        del ws[watch.id]


def indexed(watch):
    """Whether every object `watch` watches holds it in its index."""
    for o in watch.objs:
        ws = getattr(o, '_ow', None)
        if ws is None:
            return False
        if type(ws) is Watch or type(ws) is tuple:
            if not (ws is watch or (type(ws) is tuple and any(w is watch for w in ws))):
                return False
        elif not watch.id or ws.get(watch.id) is not watch:
            return False
    return True


def register(world, task, objs, kind, defs=()):
    """A new Watch of `task` on `objs` (each once), in every object's index,
    and on the definitions of the modules `defs` (in no index: see
    `definitions_changed`).  kind 'change' (wait until / x!: active once
    the task sleeps on it) or 'token' (a reactive loop)."""
    watch = Watch(0, task, [], kind)
    if not world.watching:
        world.watching = True
    if defs:
        watch.defs = tuple(defs)
        for m in defs:
            if not m.defs_watched:
                m.defs_watched = True
    seen = set()
    for o in objs:
        if id(o) in seen:
            continue
        seen.add(id(o))
        watch.objs.append(o)
        _add(world, o, watch)
    return watch


def changed(world, obj, wake, held=None):
    """`obj` changed: every active watch on it fires -- a token is marked
    dirty -- and wake(task, keep_watch=True) is called for each task that
    sleeps on one of them, in the order the watches were made.

    A watch a task sleeps on stays in the objects' indexes, inactive (its
    task is no longer waiting), and in the task's `waiting`, until the
    task's next turn drops it (`release`): the wait the task goes back to
    mostly watches the same objects, so their indexes are written once, by
    that turn, not by this transaction as well (a chat message's intake
    wrote the indexes of the module, the thread, its messages and the last
    reply, and the turn that answered wrote them again).  A token no task
    sleeps on is dropped at once, and so is a watch its task no longer
    holds (left behind by a task that ended or was woken otherwise), but
    `held`: the watch that woke the task whose turn runs, which its next
    wait may keep (`same`)."""
    for w in of(obj):
        t = w.task
        if not active(w):
            if t.waiting is not w and w is not held:
                drop(w)
            continue
        if w.kind == 'token':
            # Only a reactive loop reads `dirty`; a 'change' watch that
            # fired is inactive by its task's state, and writing it too was
            # a record more in every chat message's intake.
            w.dirty = True
        if t.waiting is w:
            wake(t, keep_watch=True)
        else:
            drop(w)


def definitions_changed(world, modules, wake):
    """The definitions of `modules` (id -> OModule) changed (a top level
    ran: a load, an upgrade): every active watch that read them fires, as
    in `changed`, in the order of its task's id.

    Waits that read only a module's definitions -- a function it calls, a
    builtin -- are in no index of the module: each wait of every chat
    dialogue would otherwise write the channels module's index.  Finding
    them walks the live tasks, which happens only when the definitions of
    a module some wait read change (`OModule.defs_watched`), and a module's
    top level running while tasks wait on it is rare."""
    for t in list(world.tasks.values()):
        w = t.waiting
        if type(w) is not Watch or not w.defs or not active(w):
            continue
        if not any(id(m) in modules for m in w.defs):
            continue
        if w.kind == 'token':
            w.dirty = True
        wake(t, keep_watch=True)


def release(world, task):
    """`task` no longer waits: if it still holds the watch that woke it
    (`changed`), drop that watch from the objects' indexes.  Call before
    `task.waiting` changes."""
    w = task.waiting
    if isinstance(w, Watch) and not active(w):
        drop(w)


def same(watch, objs, defs):
    """Whether a wait on `objs` (repeats allowed) and the definitions of
    `defs` would watch what `watch` does, and `watch` is still the last in
    the index of every object it watches -- where the new watch would go:
    a change wakes the tasks in the order they began to wait (docs/
    language.md 15.2) -- so the wait keeps it (`keep`).  A chat dialogue's
    waits all read its thread and the thread's list of messages, which no
    other task watches: a new watch each time was a record more per
    message."""
    if tuple(defs) != watch.defs:
        return False
    mine = watch.objs
    n = 0
    seen = set()
    for o in objs:
        if id(o) in seen:
            continue
        seen.add(id(o))
        if n >= len(mine) or mine[n] is not o:
            return False
        n += 1
    return n == len(mine) and all(_last(o, watch) for o in mine)


def _last(o, watch):
    """Whether `watch` is the last in `o`'s index."""
    ws = getattr(o, '_ow', None)
    if ws is watch:
        return True
    if ws is None or type(ws) is Watch:
        return False
    if type(ws) is tuple:
        return ws[-1] is watch
    wid = watch.id
    return bool(wid) and len(ws) > 0 and ws.maxKey() == wid and ws[wid] is watch


def keep(watch):
    """`watch`'s task sleeps on it again (`same` said so), and writes none
    of the indexes it is in: so, as `_add` does for a tree, the commit
    must fail if another worker changed one of its objects meanwhile
    (ConflictError: the turn runs again and sees the change)."""
    for o in watch.objs:
        jar = o._p_jar
        if jar is not None and o._p_oid is not None:
            jar.readCurrent(o)


def unwatch(world, watch):
    """Forget a watch (a reactive loop evaluates again, a cancelled task):
    out of the indexes of its objects."""
    drop(watch)


def drop(watch):
    """Remove `watch` from the indexes of the objects it watches."""
    for o in watch.objs:
        _remove(o, watch)


def count_active(world):
    """How many tasks sleep on an active watch (for `ostinato db info`)."""
    return sum(1 for t in world.tasks.values()
               if isinstance(t.waiting, Watch) and active(t.waiting))
