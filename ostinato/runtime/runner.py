"""Running a program file: the logic behind `ostinato run`, shared by the CLI
and the tests (which run programs in-process and in the store-everything
mode)."""
from __future__ import annotations

import io
import os
import pickle
import sys
import time

from persistent import Persistent

from ..syntax import OstSyntaxError
from ..vm import values as V
from .scheduler import Scheduler, committing
from .txn import StoreTransactions, Transactions

EXIT_OK, EXIT_USAGE, EXIT_SYNTAX, EXIT_RUNTIME, EXIT_INTERRUPTED = 0, 2, 65, 70, 130


def run_file(path, out=None, err=None, store=None, store_every=None, commit_every=None,
             services=(), oplog=None):
    """Run the program at `path` until nothing can run any more; returns the
    exit status.

    store: an open `Store` (its world is used and each turn is committed);
    without one the run keeps its world in memory.
    services: effects (the LLM worker, chat channels) the scheduler polls.
    oplog: the operator's log (runtime/oplog.py), or None for `err`.
    Test modes of the stop-anywhere property:
    store_every=N  pickle and reload every persistent object after every N
                   steps -- the points where the loop can stop: a block of
                   simple instructions, a jump, a call (everything must be
                   storable);
    commit_every=N commit to the store after every N steps and drop
                   the connection's object cache (every change must be marked
                   and committed, or it is lost)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    world = store.world if store is not None else None
    sched = Scheduler(world, out=out, err=err, ticks=store_every or commit_every)
    sched.services = list(services)
    sched.oplog = oplog
    if store_every or commit_every:
        # Test modes that store everything every few steps: far slower than
        # a real run, so the turn limit means nothing there.
        sched.TURN_LIMIT = float('inf')
    after_slice = None
    if store_every:
        sched.store_every = store_every
        sched.SLICE_SECONDS = 0
        after_slice = _reload_world
    elif commit_every:
        sched.SLICE_SECONDS = 0
        after_slice = lambda s: store.conn.cacheMinimize()
    sched.txn = (Transactions(after_slice) if store is None
                 else StoreTransactions(store, after_slice))
    sched.recover()
    try:
        sched.start_main(os.path.abspath(path))
    except OstSyntaxError as e:
        err.write(e.format() + '\n')
        return EXIT_SYNTAX
    except UnicodeDecodeError as e:
        err.write('%s: error: the file is not UTF-8 text (%s)\n' % (path, e.reason))
        return EXIT_SYNTAX
    sched.world.run_open = True
    if store is not None:
        with committing:
            store.commit()
    if os.environ.get('OSTINATO_TEST_EXIT_AT_SUSPEND'):
        _exit_at_every_suspension(sched)
    try:
        result = sched.run()
    except KeyboardInterrupt:
        err.write(stopped_now(sched) + '\n')
        sched.abort()
        return EXIT_INTERRUPTED
    if result == 'stopped':
        # An orderly stop (Ctrl-C): the run stays open, so the next run
        # continues it rather than starting the program again.
        if store is not None:
            with committing:
                store.commit()
        sched.flush()
        err.write('ostinato: stopped between two steps; nothing is lost, and the same '
                  'command goes on from here\n')
        return EXIT_INTERRUPTED
    sched.world.run_open = False
    if store is not None:
        with committing:
            store.commit()
    sched.flush()
    main_task = sched.world.main_task
    return EXIT_RUNTIME if main_task.state == 'failed' else EXIT_OK


def stopped_now(sched):
    """What a second Ctrl-C left behind, in words: the step in progress is
    dropped (its transaction is never committed), so its task is as it was
    at its last commit and goes on from there; a model reply not waited for
    is asked for again.  Nothing else is lost."""
    try:
        task = sched.current or sched.world.running.get(sched.worker)
        waiting = any(getattr(s, 'inflight', None) for s in sched.services)
    except Exception:       # interrupted anywhere: the words must not fail
        task, waiting = None, False
    if task is not None:
        return ('ostinato: stopped now, in the middle of a step of task %d (%s): that step '
                'is dropped, and the task is as it was at its last commit; the same command '
                'goes on from there' % (task.id, task.name))
    if waiting:
        return ('ostinato: stopped now, without waiting for the model: the question is '
                'asked again when the same command runs again')
    return 'ostinato: stopped now; nothing is lost, the same command goes on from here'


EXIT_SUSPENDED_FOR_TEST = 75


def _exit_at_every_suspension(sched):
    """Test mode: end the process right after every turn that ended in a
    suspension was committed, as a crash there would; running the program
    again must continue exactly where it stopped."""
    # The clock stands still while the process is down, so that sleeps keep
    # their order however long a restart takes.
    w = sched.world
    stopped = w.test_stopped_at
    if stopped is not None:
        shift = time.time() - stopped
        timers = list(w.timers.items())
        w.timers.clear()
        for (when, seq), task in timers:
            w.timers[(when + shift, seq)] = task
        w.test_stopped_at = None
    settle = sched.settle

    def settle_then_exit(task, status):
        settle(task, status)
        if isinstance(status, tuple):
            sched.world.test_stopped_at = time.time()
            sched.end_turn()
            sys.stdout.flush()
            os._exit(EXIT_SUSPENDED_FOR_TEST)
    sched.settle = settle_then_exit


def _reload_world(sched):
    """Replace the scheduler's world by a stored-and-reloaded copy.  A reload
    costs time in proportion to the world's size, so a big world (a deep
    recursion) is reloaded less often: the total cost stays linear."""
    sched.world, count = reload(sched.world)
    V.set_error_type(sched.world.error_type)
    sched.ticks = max(sched.store_every, count // 16)


def reload(root):
    """Store every persistent object reachable from `root` as its own record
    (references between them by number, as ZODB stores them) and load the
    whole graph back as new objects.  Storing object by object, not as one
    nested pickle, keeps deep frame chains from recursing."""
    index = {}
    objs = [root]
    index[id(root)] = 0
    records = []

    # The record of an object is its state (not the object), so even the
    # object itself is referenced by number inside it.
    def persistent_id(obj):
        if isinstance(obj, Persistent):
            i = index.get(id(obj))
            if i is None:
                i = index[id(obj)] = len(objs)
                objs.append(obj)
            return i
        return None

    i = 0
    while i < len(objs):
        obj = objs[i]
        buf = io.BytesIO()
        p = pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL)
        p.persistent_id = persistent_id
        p.dump(obj.__getstate__())
        records.append((type(obj), buf.getvalue()))
        i += 1

    fresh = [cls.__new__(cls) for cls, _ in records]
    states = []
    for obj, (cls, data) in zip(fresh, records):
        u = pickle.Unpickler(io.BytesIO(data))
        u.persistent_load = fresh.__getitem__
        states.append(u.load())
    # A long list joins its chunks when its state is set, and a very long one
    # its runs of chunks first (vm/values.py): so plain states are set
    # first, then those that name chunks, then those that name runs (ZODB
    # would load them on demand).
    def order(state):
        if type(state) is not dict:
            return 0
        return 2 if 'index' in state else 1 if 'chunks' in state else 0
    pairs = sorted(zip(fresh, states), key=lambda pair: order(pair[1]))
    for obj, state in pairs:
        obj.__setstate__(state)
    return fresh[0], len(fresh)
