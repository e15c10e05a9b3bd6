"""The database's invariant, checked and repaired (`ostinato db check`).

Every live task (in `world.tasks`) is in exactly one of these places:
- ready: in the ready queue, state 'ready';
- running: a worker's current task (`world.running`), whose turn was under
  way at the last commit (`recover` resumes it when that worker starts);
- parked: stopped by the runtime with an error, for the operator to retry
  or cancel (state 'failed');
- waiting: registered with what it waits for -- a timer, a watch, a queue's
  takers, a module load it imported, or an effect service's request (each
  service's stored state answers `holds(task)`, e.g. the LLM queue);
and no structure holds a task that ended.  A task in none of them would
never run again (an *orphan*); one in two would run twice.  Crash tests run
the check after every kill; the repair puts an orphan at the back of the
ready queue -- an interrupted turn continues from its last commit, a lost
wait ends with a catchable error at the waiting call -- and drops entries
that point at ended tasks.
"""
from __future__ import annotations

from ..vm import values as V
from . import watches
from .world import Watch


def _places(world):
    """task id -> the places that hold it, and the ended tasks still held."""
    places = {}
    stale = []

    def put(task, where, drop):
        if task.id not in world.tasks or world.tasks[task.id] is not task:
            stale.append((task, where, drop))
        else:
            places.setdefault(task.id, []).append(where)

    for t in world.ready:
        put(t, 'ready', lambda t=t: world.ready.remove(t))
    for worker, t in world.running.items():
        put(t, 'running (%s)' % worker, lambda w=worker: world.running.pop(w))
    for key, t in world.timers.items():
        put(t, 'timer', lambda k=key: world.timers.pop(k))
    woken = world.ready.woken()
    for t in world.tasks.values():
        w = t.waiting
        # A task woken onto the empty queue still says it waits (its wait
        # fired: ReadyQueue.wake); the queue holds it.
        if isinstance(w, Watch) and watches.active(w) and watches.indexed(w) and t is not woken:
            put(t, 'watch', None)
        if t.parked:
            put(t, 'parked', None)
        w = t.waiting
        if type(w) is tuple and w and w[0] == 'take' and t in (w[1].takers or ()):
            put(t, 'takers of a queue', None)
        if type(w) is tuple and w and w[0] == 'import':
            if any(o.importer is t for o in world.tasks.values()):
                put(t, 'import of %s' % w[1], None)
    for name, st in world.services.items():
        held = getattr(st, 'held_tasks', None)       # a service that suspends tasks
        if held is not None:
            for t in held():
                if t.waiting is not None:
                    put(t, '%s request' % name, None)
    return places, stale


def check(world):
    """A list of problems, each (kind, task, text); empty when the invariant
    holds."""
    places, stale = _places(world)
    problems = []
    for t in world.tasks.values():
        where = places.get(t.id, [])
        if not where:
            problems.append(('orphan', t, 'task %d (%s, %s) is in no queue and waits for '
                             'nothing it is registered with: it would never run'
                             % (t.id, t.name, t.state)))
        elif len(where) > 1:
            problems.append(('double', t, 'task %d (%s) is in %s at once'
                             % (t.id, t.name, ' and '.join(where))))
        elif where == ['ready'] and t.state != 'ready' and t is not world.ready.woken():
            problems.append(('state', t, 'task %d (%s) is ready but its state says %s'
                             % (t.id, t.name, t.state)))
    for t, where, _ in stale:
        problems.append(('stale', t, 'the %s holds task %d (%s), which ended'
                         % (where, t.id, t.name)))
    return problems


def repair(world, problems, make_ready):
    """Repair what `check` found; returns one line per repair.  `make_ready`
    queues a task (the scheduler's)."""
    done = []
    _, stale = _places(world)
    for t, where, drop in stale:
        if drop is not None:
            drop()
            done.append('dropped task %d (ended) from the %s' % (t.id, where))
    for kind, t, _ in problems:
        if kind == 'orphan':
            if t.state == 'waiting':
                # Its wait is lost: the waiting call raises, the program decides.
                t.resume = ('error', V.make_error(
                    'the wait of this task was lost (repaired by `ostinato db check`)'))
            make_ready(t)
            done.append('task %d (%s) queued again' % (t.id, t.name))
        elif kind == 'state':
            t.state = 'ready'
            done.append('task %d (%s) marked ready' % (t.id, t.name))
        elif kind == 'double' and t in world.ready and isinstance(t.waiting, (Watch, tuple)):
            world.ready.remove(t)
            done.append('task %d (%s) left in its wait only' % (t.id, t.name))
    return done
