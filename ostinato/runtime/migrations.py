"""Schema migrations: bringing a database written by an older Ostinato up to
this one's stored format (DESIGN.md §3, "The stored format is a contract").

The world records its schema version (`World.schema`).  Each step here
takes a world of version N to N + 1 and is registered under N; opening a
database runs the steps from its version up to SCHEMA_VERSION in one
transaction, so a crash during a migration leaves the database as it was.
A database newer than this Ostinato is refused, never guessed at.

How to change what is stored (the ZODB way):
- a new attribute on a stored class gets a class-level default, so old
  records read it, and needs no step when the default is right for them;
- anything else -- a new collection on the world, state moved or re-keyed,
  a value in a new form -- bumps SCHEMA_VERSION in runtime/world.py and
  adds a step here, and tests/fixtures gets a database made by the new
  version (tests/fixtures/README.md says how).
Bytecode has versions of its own (compiler/code.py): stored code is
translated as it loads, not here.
"""
from __future__ import annotations

from BTrees.OOBTree import OOBTree

from ..vm.values import OList, OMap, OObject, OType
from .world import SCHEMA_VERSION, Outbox, OutboxTree, Outgoing, ReadyQueue, WatchTree

# from-version -> (what the step does, function(world))
STEPS = {}


class MigrationError(Exception):
    """A database this Ostinato cannot bring to its schema; the message says
    what to do."""


def step(version, what):
    def register(fn):
        assert version not in STEPS, version
        STEPS[version] = (what, fn)
        return fn
    return register


def pending(world):
    """The steps a world needs, as (from-version, what) pairs; raises
    MigrationError for a world newer than this Ostinato or with a gap."""
    version = getattr(world, 'schema', None)     # whatever wrote it, it is read here
    if not isinstance(version, int):
        raise MigrationError('the database has no readable schema version (%r)' % (version,))
    if version > SCHEMA_VERSION:
        raise MigrationError(
            'the database was written by a newer Ostinato (schema %d; this one knows up to '
            '%d): upgrade Ostinato to use it' % (version, SCHEMA_VERSION))
    todo = []
    for v in range(version, SCHEMA_VERSION):
        if v not in STEPS:
            raise MigrationError('no migration from schema %d to %d' % (v, v + 1))
        todo.append((v, STEPS[v][0]))
    return todo


def migrate(world):
    """Run the pending steps on `world` (the caller commits, or aborts to
    leave the database as it was).  Returns what was done, one line a step."""
    done = []
    for v, what in pending(world):
        STEPS[v][1](world)
        world.schema = v + 1
        done.append('schema %d -> %d: %s' % (v, v + 1, what))
    return done


# --------------------------------------------------------------------- steps

@step(1, 'effects keep their state in world.services; the outbox always exists; '
         'the compiled-code cache is keyed by bytecode and compiler version')
def _services_registry(world):
    d = world.__dict__
    services = OOBTree()
    for name in ('llm', 'telegram'):
        st = d.get(name)
        if st is not None:
            services[name] = st
            delattr(world, name)
    world.services = services
    if d.get('outbox') is None:
        world.outbox = Outbox()
    # Code compiled before versions were recorded is found by nobody under
    # the new keys; frames hold their Code directly, so dropping the old
    # entries loses nothing (modules are recompiled on the next start).
    world.compiled = OOBTree()
    running = d.get('running')
    if running is None or not isinstance(running, OOBTree):
        tree = OOBTree()
        if running is not None:        # an early form: the one task `run` was running
            tree['run'] = running
        world.running = tree


@step(2, 'the ready queue is a chain of small records, not a list inside the world record')
def _ready_queue_chain(world):
    old = world.__dict__.get('ready') or ()
    queue = ReadyQueue()
    for task in old:
        queue.append(task)
    world.ready = queue


@step(3, 'big maps are stored in chunks (MapChunk); older maps are chunked when next written')
def _chunked_maps(world):
    # Nothing to convert: a map stored whole still loads, and is written in
    # chunks the next time it changes.  The version goes up so that an
    # older Ostinato, which cannot read chunked maps, refuses the database.
    pass


@step(4, 'a very long list or map keeps its chunks in runs (IndexChunk); tasks and '
         'watches are stored without what equals their defaults, frames as tuples; the '
         'classes stored most often are named by a code (ostinato/classcodes.py); the '
         'active watches are a WatchTree')
def _compact_records(world):
    # Nothing else to convert: a flat index of chunks, a task stored with
    # every attribute, a frame stored as a dict and a class named in full
    # all still load, and an object's watches in an IOBTree still work.  The
    # version goes up so that an older Ostinato, which cannot read the new
    # forms, refuses the database.
    world.watches = WatchTree(world.watches)


@step(5, 'an object watched by a few tasks keeps their watches in its own record, not in a '
         'WatchTree of its own (runtime/watches.py); objects and short lists are stored as '
         'tuples')
def _inline_watch_indexes(world):
    # Nothing to convert: an object's index stored as a tree still works (it
    # stays a tree), and an object or list stored as a dict still loads.  The
    # version goes up so that an older Ostinato, which cannot read the new
    # forms, refuses the database.
    pass


@step(6, "no index of the active watches: whether a watch is active is read from its task "
         "(runtime/watches.py), and a watch takes an id only when it enters a WatchTree")
def _no_active_watch_index(world):
    # The watches in it are in the indexes of the objects they watch, and
    # a task that sleeps on one still holds it: nothing else to convert.
    d = world.__dict__
    active = d.pop('watches', None)
    world.watching = bool(active) or d.get('next_watch_id', 1) > 1
    world._p_changed = True


@step(7, "a wait that reads only a module's definitions (a function, a type, an import, a "
         "builtin) is not in the module's index; the module's definitions changing wakes it")
def _definition_reads(world):
    # Nothing to convert: waits of older versions are in the modules'
    # indexes and still wake from there.  The version goes up so that an
    # older Ostinato, which would never wake the new waits when a module's
    # definitions change, refuses the database.
    pass


@step(8, "a bot message's number follows the last one pending in the outbox (Outbox.next_seq "
         "counts only those that left)")
def _outbox_numbers(world):
    # Nothing to convert: next_seq is past every pending message already.
    # The version goes up so that an older Ostinato, which would number a
    # new message from a next_seq that lags behind the pending ones,
    # refuses the database.
    pass


@step(9, "a task queued on an empty ready queue is kept in the queue's own record "
         "(ReadyQueue.task), not in a link of its own")
def _inline_front_task(world):
    # Nothing to convert: a queue of links still works.  The version goes
    # up so that an older Ostinato, which would not see a task kept in the
    # queue's record, refuses the database.
    pass


@step(10, "a very long list's or map's index of chunks is a tree: runs of runs when the runs "
          "are many (vm/values.py `_index`), so no record of it grows with the map")
def _index_tree(world):
    # Nothing to convert: an index of one level (the runs of chunks, all
    # named in the map's record) is a tree of one level, and loads as it
    # is; it takes more levels when it is next written, if it needs them.
    # The version goes up so that an older Ostinato, which cannot read an
    # index of more levels, refuses the database.
    pass


@step(11, "a Telegram group member's thread has a User of its own (a copy of the person's id, "
          "name and zone), so what a skill keeps on the user of a private chat is not shown "
          "in a group; the state already kept stays with the private chat")
def _group_member_users(world):
    # Made before a member's thread got a User of its own, such a thread
    # holds the person's User, the one their private chat holds: a skill
    # that keeps a log on it posted the private log in the group (issue 29,
    # item 4).  A dialogue running now keeps the User it holds in its
    # frames until it ends; the next one in the group reads the thread's.
    channels = world.modules.get('channels')
    people = getattr(world.services.get('telegram'), 'users', None)
    if channels is None or people is None:
        return
    threads, user_type = channels.ns.get('threads'), channels.ns.get('User')
    if type(threads) is not OMap or type(user_type) is not OType:
        return
    for key, thread in list(threads.d.items()):
        member = _group_member(key)
        if member is None or type(thread) is not OObject:
            continue
        person = thread.vals.get('user')
        if person is None or person is not people.get(member):
            continue
        own = OObject(user_type, {f: person.vals[f] for f in ('id', 'name', 'timezone')
                                  if person.vals.get(f) is not None})
        thread.vals['user'] = own
        thread.changed()
        messages = thread.vals.get('messages')
        for m in messages.items if type(messages) is OList else ():
            if type(m) is OObject and m.vals.get('sender') is person:
                m.vals['sender'] = own
                m.changed()


def _group_member(key):
    """The member's Telegram id of a group member's thread key
    ('telegram:CHAT:TOPIC:MEMBER'), else None.  The form is the Telegram
    channel's (effects/channels/telegram.py `thread_id`), read here again:
    this layer does not import the channels."""
    parts = key.split(':') if type(key) is str else ()
    if len(parts) != 4 or parts[0] != 'telegram':
        return None
    try:
        return int(parts[3])
    except ValueError:
        return None


@step(12, "a task's top frames (at most two, those only the task reaches) are stored inside "
          "the task's record, not as records of their own (vm/values.py `Task.__getstate__`)")
def _frames_in_tasks(world):
    # Nothing to convert: a frame stored as a record of its own loads as
    # one and keeps it (a frame loaded from its record stays `shared`);
    # the frames called from now on go inside their tasks.  The version
    # goes up so that an older Ostinato, which cannot read a task with
    # frames inside, refuses the database.
    pass


@step(13, "taking a task off the ready queue writes the task, not the queue: whoever loads "
          "the queue skips the entries at its front whose task no longer points back at them "
          "(runtime/world.py ReadyQueue)")
def _ready_queue_taken_by_the_task(world):
    # Nothing to convert: a queue written before has no such entries.  The
    # version goes up so that an older Ostinato, which would run the task
    # of such an entry again, refuses the database.
    pass


@step(14, "a task whose wait fired while nothing else was ready is kept in the ready queue's "
          "record with the number of that wait (ReadyQueue.woken_wait, Task.waits), and is "
          "not written until its turn")
def _woken_in_the_queue(world):
    # Nothing to convert: a queue written before holds no such task, and a
    # task that never counted its waits counts from 0.  The version goes
    # up so that an older Ostinato, which would take such a task for one
    # still waiting, refuses the database.
    pass


@step(15, "a bot message waiting in the outbox is an entry of the outbox's tree (OutboxTree, "
          "small buckets), not an OutMessage record of its own")
def _outbox_entries(world):
    box = world.outbox
    old = box.pending
    tree = OutboxTree()
    for seq, m in old.items():
        tree[seq] = Outgoing(seq, m.channel, m.thread_id, m.text, m.done, m.attempts).entry()
    box.pending = tree


@step(16, "a task and the ready queue are stored as tuples of their fields, not dicts that "
          "name them (Task.STORED, ReadyQueue.STORED)")
def _task_and_queue_tuples(world):
    # Nothing to convert: a task or a queue stored as a dict still loads,
    # and is stored as a tuple when next written.  The version goes up so
    # that an older Ostinato, which cannot read the tuples, refuses the
    # database.
    pass


@step(17, "how far the skills have read a chat thread is kept with its messages (OList.mark, "
          "stored as a list's third tuple item; stdlib/channels.ost `read_upto`), not in the "
          "Thread's field `read_upto`")
def _read_marks_in_lists(world):
    # Nothing to convert: `read_upto(thread)` counts the old field too
    # (frames running the library's older code still set it), whichever
    # is further.  The version goes up so that an older Ostinato, which
    # cannot read a list stored with its mark, refuses the database.
    pass


@step(18, "the tasks behind the ready queue's front one are in a tree of small buckets "
          "(ReadyTree), each task knowing its place, not in a chain of ReadyLink records")
def _ready_tree(world):
    old = world.ready
    old._p_activate()
    d = old.__dict__
    if 'tree' in d:                 # made by step 2 of this very migration
        return
    front, woken = d.get('task'), d.get('woken_wait')
    if front is not None:
        if woken is None:
            queued = front.ready_link is old
        else:
            queued = front.ready_link is None and front.state == 'waiting' and \
                front.waits == woken
        if not queued:
            front = None
    behind = []
    link = d.get('head')
    while link is not None:
        t = link.task
        if t is not None and t.ready_link is link:
            behind.append(t)
        link = link.next
    queue = ReadyQueue()
    if front is not None:
        queue.task = front
        if woken is None:
            front.ready_link = queue
        else:
            queue.woken_wait = woken
    for t in behind:
        t.ready_link = None
        queue.append(t)
    world.ready = queue


@step(19, "a long list keeps the items after its last full chunk in its own record (`tail`), "
          "in chunks of 32 and runs of 8 (vm/values.py OList), so that growing by one item "
          "writes the list's record only")
def _list_tails(world):
    # Nothing to convert: a list chunked before (its last chunk holding the
    # rest) loads as it is, and is cut again when next written.  The version
    # goes up so that an older Ostinato, which cannot read a list's tail,
    # refuses the database.
    pass
