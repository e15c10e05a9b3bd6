"""The scheduler: tasks, the FIFO ready queue, timers, waits and turns.

It implements the VM's `Host` (vm/host.py).  One scheduler *turn* runs one task
until it waits, ends, fails or uses up its slice; then every sleeper whose
time has passed joins the back of the ready queue and the front task runs
(docs/language.md §15.1).  A task whose slice was used up goes on ahead of every
other task: tasks are cooperative, the slice only bounds how much work a
crash can lose.

All state lives in the `World`; the scheduler object itself is a
process-local driver around it.  Its `txn` (runtime/txn.py) makes turns
durable: the scheduler commits a turn through it and then delivers the
turn's printed output.  Module loading and upgrades are runtime/modules.py's,
the index of watches runtime/watches.py's; neither imports this module.
"""
from __future__ import annotations

import os
import random
import sys
import threading
import time
import weakref

from ..vm import requests as R
from ..vm import values as V
from ..vm.blocks import UnrunnableCode
from ..vm.interp import VM, where_of
from ..vm.printing import to_str
from ..vm.values import OModule, Task
from . import settings, watches
from .modules import Modules
from .store import MAX_WRITE, StoreFailed, StoreUnreachable, TooDeep, TooLarge
from .terminal import harmless
from .txn import Transactions
from .world import Watch, World


class _StopRequest:
    """A flag a signal handler may set.  Not a threading.Event: the handler
    runs in the main thread between two bytecodes -- perhaps inside the run
    loop's own `Event.wait`, holding that event's lock -- and taking a lock
    there can deadlock for good (a Ctrl-C ignored for ever).  The loop's
    waits are short (half a second at most), so it notices the flag soon."""

    def __init__(self):
        self.asked = False

    def is_set(self):
        return self.asked

    def set(self):
        self.asked = True

    def clear(self):
        self.asked = False


# Set (by a signal handler of the CLI) to stop the run at the next turn
# boundary: the turn in progress completes and is committed, and services
# finish what is in flight (a model reply on its way is waited for and
# kept), so an orderly stop loses and resends nothing.
STOP = _StopRequest()


def request_stop():
    """Ask the running scheduler to stop between two turns; True the first
    time, False when a stop was already asked for (then stop at once).
    Safe in a signal handler: it takes no lock."""
    if STOP.is_set():
        return False
    STOP.set()
    return True


# Test mode (OSTINATO_TEST_DIE_IN_TURN=NAME): the process dies like kill -9
# right after a checkpoint of a turn of the task named NAME.
_DIE_IN_TURN = os.environ.get('OSTINATO_TEST_DIE_IN_TURN')


class RunawayTurn(Exception):
    """A turn went on past its limits after the catchable error: the task is
    parked (Scheduler.turn)."""


# A second Ctrl-C stops at once (KeyboardInterrupt), but never inside a
# commit or an abort: ZODB's FileStorage closes itself when the second phase
# of its commit is interrupted.  The CLI's signal handler calls `interrupt`;
# inside `committing` the interrupt waits for the commit to end.
_committing = 0
_interrupt_pending = False


def interrupt():
    """Raise KeyboardInterrupt now, or, inside a commit, as soon as it ends."""
    global _interrupt_pending
    if _committing:
        _interrupt_pending = True
    else:
        raise KeyboardInterrupt


class _Committing:
    def __enter__(self):
        global _committing
        _committing += 1

    def __exit__(self, kind, value, tb):
        global _committing, _interrupt_pending
        _committing -= 1
        # With an exception on its way (a conflict, to be retried) the
        # interrupt waits for the end of the next commit.
        if not _committing and _interrupt_pending and kind is None:
            _interrupt_pending = False
            raise KeyboardInterrupt


committing = _Committing()


class ServiceStopped(Exception):
    """A service cannot go on (a chat channel whose token was rejected, or
    which another process polls): the run stops, and the CLI prints this
    message.  Nothing is lost: the database is as the last commit left it."""


class OutputFailed(StoreFailed):
    """The program's output could not be written (`> /dev/full`, a disk
    that filled up): like a failed commit, no task's fault, and nothing can
    go on -- the output of turns already committed would be lost in
    silence (it was, with exit 0)."""


def _output_failed(e):
    return OutputFailed('cannot write the program\'s output: %s. The turns that printed it '
                        'are committed, so those lines are lost; what comes later is not: '
                        'make room and run the same command again to continue'
                        % (e.strerror or e))


class _RunAlone(Exception):
    """A turn failed inside a group commit: run the group's turns again
    one commit each (Scheduler.alone_if_grouped)."""


class Scheduler:
    SLICE_SECONDS = 0.3      # a long computation is checkpointed this often
    TICKS = 20000            # steps (blocks, jumps, calls) between clock checks
    IDLE_SECONDS = 0.05      # serve: how often an idle worker looks at the database
    GROUP_TURNS = 64         # turns at most in one commit when many tasks are ready
    CONFLICT_ATTEMPTS = 20   # a claimed turn run again after conflicts, then queued again
    GROUP_SECONDS = 0.02     # ... or this long
    # The operator's limits on one turn (DESIGN.md §9): a turn that runs this
    # long without waiting, recurses this deep or writes this much gets a
    # catchable Error where it is; one that goes on as long again is parked.
    # (A bad value in the environment is refused by the command line before
    # anything runs: runtime/settings.py.)
    TURN_LIMIT = settings.value('OSTINATO_TURN_LIMIT', strict=False)
    MAX_DEPTH = settings.value('OSTINATO_MAX_DEPTH', strict=False)
    MAX_TURN_WRITE = MAX_WRITE      # bytes one turn may add to the database
    # Crashes of the process in one task's turn before the task is parked.
    MAX_CRASHES = settings.value('OSTINATO_MAX_CRASHES', strict=False)

    def __init__(self, world=None, out=None, err=None, ticks=None):
        self.world = world if world is not None else World()
        V.set_error_type(self.world.error_type)
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.buffer = []
        # The watch that woke the task whose turn runs, until its next wait
        # keeps it or the turn ends (`turn`).
        self.held = None
        self.reports = []         # (place in buffer, task, text) of reports waiting for their commit
        self.vm = VM(self, self.buffer)
        self.modules = Modules(self)
        self.ticks = ticks or self.TICKS
        self.txn = Transactions()  # commit, abort, transact, idle (runtime/txn.py)
        self.worker = 'run'       # this process's name among the workers of a database
        self.claim = False        # claim each task in its own commit (several workers)
        self.grouped = None        # turns done in the group not yet committed (run_ready)
        self.current = None        # the task whose turn this process is running
        self.changed_defs = {}     # modules whose definitions this turn changed
        self.depths = {}           # the frames' depths seen in this turn (depth)
        self.solo = 0              # turns to run one commit each (after a failed group)
        self.services = []        # effects: objects with accepts/suspend/poll/busy/wait
        self.quiet = False        # hold printed output back (a diagnostic re-run)
        # The operator's log (runtime/oplog.py), when the operator is not the
        # person reading `err`: it may take the reports of tasks other than
        # the main task (a chat's dialogues), which then never reach the chat.
        self.oplog = None
        # Set by any service with news; the loop waits on it when idle, so an
        # event of one service ends the wait whichever service it waits for.
        self.wakeup = threading.Event()

    # The VM checks `host.waiters` (true once any task has watched) before
    # reporting changes.
    @property
    def waiters(self):
        return self.world.watching

    # ------------------------------------------------------------ tasks
    def new_task(self, frame, name):
        w = self.world
        t = Task(w.new_task_id(), name, frame)
        w.tasks[t.id] = t
        return t

    def spawn(self, vm, func, args, kwargs):
        frame = vm.new_task_frame(func, list(args), dict(kwargs))
        t = self.new_task(frame, task_name(func))
        self.world.ready.append(t)
        return t

    def make_ready(self, task, front=False, keep_watch=False):
        """Queue `task` (at the front: before every other ready task).  Its
        watch is released, unless `keep_watch`: a watch that just fired
        stays in `task.waiting` and in the indexes until the task's next
        turn (runtime/watches.py `changed` says why)."""
        ready = self.world.ready
        if keep_watch:
            # A wait that fired: on an empty queue the task is kept in the
            # queue's record and not written until its turn (ReadyQueue
            # `wake`); its record says it waits meanwhile, so its watch
            # may fire again, which changes nothing.
            if task in ready or (not front and ready.wake(task)):
                return
        else:
            watches.release(self.world, task)
            task.waiting = None
        task.state = 'ready'
        task.since = None
        if front:
            ready.appendleft(task)
        else:
            ready.append(task)

    # ------------------------------------------------------------ changes
    # The watch index is runtime/watches.py's; these are the VM's entries.
    def changed(self, obj):
        V.note_change(obj)      # a watched evaluation may have handed out what it made
        if getattr(obj, '_ow', None):
            watches.changed(self.world, obj, self.make_ready, self.held)
        if type(obj) is OModule:
            # Whatever changed in it (`mod.x = v`, a definition): its
            # definitions may have.
            self.definitions_changed(obj)

    def changed_global(self, module, old, new):
        V.note_change(module)
        if getattr(module, '_ow', None):
            watches.changed(self.world, module, self.make_ready, self.held)
        if V.is_definition(old) or V.is_definition(new):
            self.definitions_changed(module)

    def definitions_changed(self, module):
        """Note that `module`'s definitions changed: the waits that read
        them wake at the end of this turn, or before a commit within it
        (`wake_definition_readers`), once however many changed."""
        if module.defs_watched:
            self.changed_defs[id(module)] = module

    def wake_definition_readers(self):
        """Wake the waits that read the definitions this turn changed
        (runtime/watches.py `definitions_changed`), in its transaction."""
        mods = self.changed_defs
        if mods:
            self.changed_defs = {}
            watches.definitions_changed(self.world, mods, self.make_ready)

    def watch(self, task, reads, defs=()):
        return watches.register(self.world, task, reads, 'token', defs)

    def unwatch(self, watch):
        watches.unwatch(self.world, watch)

    # ------------------------------------------------------------ modules
    # Loading, importing and upgrading are runtime/modules.py's.
    def import_module(self, vm, task, name, frame):
        return self.modules.import_module(task, name, frame)

    def upgrade_all(self, skip=None):
        self.modules.upgrade_all(skip)

    def start_main(self, path, module_name=None):
        """Make FILE's main task ready (Modules.start_main).  Raises
        OstSyntaxError (nothing runs then)."""
        return self.modules.start_main(path, module_name)

    # ------------------------------------------------------------ running
    def recover(self, worker=None, crashed=True):
        """After a restart: a task whose turn this worker was running when the
        process stopped (its checkpoints are committed) goes on first.  With
        `worker`, the same for another worker that is gone (runtime/serve.py
        knows it is gone).  Not `crashed`: the turn did not crash, its
        worker lost the database server mid-turn (runtime/serve.py)."""
        w = self.world
        worker = worker or self.worker
        t = w.running.get(worker)
        if t is not None:
            del w.running[worker]
            if not t.done and t not in w.ready and not crashed:
                t.state = 'ready'
                w.ready.appendleft(t)
            elif not t.done and t not in w.ready:
                # The process stopped in this task's turn.  Again and again
                # (a crash in native code, the OOM killer): park it rather
                # than crash at every start.
                t.crashes += 1
                if t.crashes >= self.MAX_CRASHES:
                    self.park(t, 'the process stopped %d times in a row while running this '
                                 "task's turn (killed, out of memory, or a crash in native "
                                 'code); it waits at its last checkpoint: `ostinato tasks '
                                 'retry %d` runs it again' % (t.crashes, t.id))
                    return
                t.state = 'ready'
                w.ready.appendleft(t)

    def run(self, forever=False):
        """Run until nothing can run any more; with `forever` (serve), wait for
        more work instead of returning.  Services (the LLM worker, chat
        channels) bring outside events in between turns; while one of them
        still expects an event, the run goes on.  Returns 'stopped' when a
        stop was requested (`request_stop`), after the services drained."""
        self.bind_services()
        return self._run(forever)

    def _run(self, forever):
        while True:
            w = self.world
            if STOP.is_set():
                for service in self.services:
                    drain = getattr(service, 'drain', None)
                    if drain is not None:
                        drain(self)
                return 'stopped'
            for service in self.services:
                service.poll(self)
            for t in w.due_timers(time.time()):
                self.make_ready(t)
            if w.ready:
                self.run_ready()
                continue
            nxt = w.next_timer()
            delay = None if nxt is None else max(0.0, nxt - time.time())
            busy = [s for s in self.services if s.busy(self)]
            if forever:
                # Look again soon: another worker may queue work at any moment.
                self.idle(self.IDLE_SECONDS if delay is None else min(delay, self.IDLE_SECONDS),
                          busy)
            elif busy:
                busy[0].wait(0.5 if delay is None else min(delay, 0.5))
            elif delay is not None:
                if delay > 0:
                    self.wakeup.wait(min(delay, 0.5))
                    self.wakeup.clear()
            else:
                break

    def bind_services(self):
        for service in self.services:
            bind = getattr(service, 'bind', None)
            if bind is not None:
                bind(self)

    def deliver(self, channel, thread_id, text):
        """A bot message for a chat channel: it goes into the outbox in this
        turn's transaction, and the channel sends it after the commit.  With
        no such channel in this process it waits in the database for one.
        A channel that prints its messages (`Service.prints_channel`: the
        console) gets the text back, to show with the turn's output."""
        for service in self.services:
            if getattr(service, 'prints_channel', None) == channel:
                return text
        self.world.outbox.add(channel, thread_id, text)
        self.wakeup.set()
        return None

    def transact(self, fn):
        """Run fn() in a transaction of its own and commit it (again after a
        conflict with another worker)."""
        with committing:
            return self.txn.transact(fn)

    def idle(self, seconds, busy=()):
        """Nothing is ready: wait a little (for a service's event if one is
        expected), then look at the database again (another process may have
        queued work): the serve loop's `txn` starts a new transaction."""
        self.txn.idle(self, seconds, busy)

    def run_ready(self):
        """Run the front task's turn -- and when more tasks are ready, theirs
        too, in the same transaction (group commit): a burst of messages
        then shares one fsync among up to GROUP_TURNS turns, or GROUP_SECONDS
        of them, while a lone message commits at once.  Output is still
        written only after the commit that covers it, and a conflict or an
        error undoes the group, whose tasks are back in the queue.  Not for
        workers that claim each task (several workers share the database:
        a claim is a commit of its own) nor for the test modes that commit
        every slice."""
        if self.claim or not self.txn.durable or self.txn.after_slice is not None \
                or self.solo > 0:
            self.solo = max(0, self.solo - 1)
            self.run_one()
            return
        from ZODB.POSException import ConflictError
        w = self.world
        start = time.time()
        self.grouped = 0
        try:
            while True:
                try:
                    self.run_one()
                except _RunAlone:
                    # Undone already: its tasks are back in the queue.
                    self.solo = self.grouped + 1
                    self.grouped = 0
                    return
                if not w.ready or self.grouped >= self.GROUP_TURNS or STOP.is_set() \
                        or time.time() - start >= self.GROUP_SECONDS:
                    break
        finally:
            grouped, self.grouped = self.grouped, None
        if grouped:
            try:
                self.end_turn()
            except ConflictError:
                self.abort()
            except (StoreFailed, StoreUnreachable):
                self.abort()
                raise                       # the disk: no task's fault, and none can go on
            except Exception:
                # The commit refused something of one of the turns (a value
                # that does not store): run them again one commit each, so
                # the turn that holds it fails alone.
                self.abort()
                self.solo = grouped

    def run_one(self):
        """Take the front task and run its turn.  A conflict with another worker
        (ZODB ConflictError at commit) aborts the turn, which is run again from
        the last commit; a Python exception outside the VM fails the task once
        with a report instead of crashing the process."""
        from ZODB.POSException import ConflictError
        w = self.world
        task = w.ready.popleft()
        task.state = 'running'
        if self.claim:
            # Claim the task in a transaction of its own, so two workers never
            # run it at once: taken off the queue and recorded as this
            # worker's in one transaction, so a task is always ready,
            # running, waiting or done, even when the process dies right
            # here (`recover` finds it).
            w.running[self.worker] = task
            try:
                self.commit()
            except ConflictError:
                self.abort()
                return
        for attempt in range(self.CONFLICT_ATTEMPTS):
            try:
                self.turn(task)
                return
            except ConflictError:
                self.abort()
                if not self.claim:
                    # The abort put the task back in the queue (and undid the
                    # timers that woke it): the loop takes it again.
                    return
                if w.running.get(self.worker) is not task:
                    # The claim is no longer ours: this worker was taken for
                    # gone (its process stopped, its host lost) and another
                    # one has the task now.  Running the turn again would
                    # do it twice.
                    self.err.write('%s task %d (%s): another worker took it over while this '
                                   'one did not answer; left to it\n'
                                   % (time.strftime('%Y-%m-%d %H:%M:%S'), task.id, task.name))
                    return
                # Random and growing, so that two workers that conflicted
                # do not meet again at once.
                time.sleep(random.uniform(0, min(0.5, 0.002 * 2 ** attempt)))
            except UnrunnableCode as e:
                self.abort()
                self.alone_if_grouped()
                self.fail_task(task, unrunnable_message(task, e))
                return
            except RunawayTurn as e:
                self.abort()
                self.alone_if_grouped()
                self.fail_task(task, '%s; it waits at its last checkpoint: `ostinato tasks '
                                     'retry %d` runs it again, `tasks cancel %d` ends it'
                               % (e, task.id, task.id))
                return
            except Exception as e:  # a bug of ours: the task fails, the rest goes on
                if isinstance(e, StoreUnreachable):
                    try:
                        self.abort()
                    except StoreUnreachable:
                        pass
                    raise                   # the server: no task's fault (serve waits for it)
                self.abort()
                if isinstance(e, StoreFailed):
                    raise                   # the disk: no task's fault, and none can go on
                self.alone_if_grouped()
                if isinstance(e, TooDeep):
                    self.fail_task(task, str(e))
                    return
                if isinstance(e, TooLarge):
                    self.fail_task(task, '%s; the turn was undone, and the task waits at its '
                                         'last checkpoint: `ostinato tasks retry %d` runs it '
                                         'again, `tasks cancel %d` ends it'
                                   % (e, task.id, task.id))
                    return
                where = self.diagnose_unstorable(task) if _is_pickling_error(e) else None
                if where is not None:
                    self.fail_task(task, 'cannot store %s' % where)
                else:
                    self.fail_internal(task, e)
                return
        self.abort()
        self.requeue(task)

    def requeue(self, task):
        """The claimed `task`'s turn kept conflicting with other workers'
        commits (a long turn writing what short turns of other tasks write
        loses to them every time): give up the claim and queue it again at
        the back, so it runs when the others leave it room -- contention is
        no fault of the task.  The release is a tiny transaction and is tried
        until it commits: leaving the claim in place would strand the task
        once this worker claims another."""
        from ZODB.POSException import ConflictError
        w = self.world
        attempt = 0
        while True:
            if w.running.get(self.worker) is task:
                del w.running[self.worker]
            self.make_ready(task)
            try:
                self.commit()
                break
            except ConflictError:
                self.abort()
                attempt += 1
                time.sleep(random.uniform(0, min(1.0, 0.002 * 2 ** attempt)))
        self.err.write('%s task %d (%s): its turn conflicted %d times with other workers\' '
                       'turns; queued again\n' % (time.strftime('%Y-%m-%d %H:%M:%S'), task.id,
                                                   task.name, self.CONFLICT_ATTEMPTS))

    def alone_if_grouped(self):
        """A turn failed in a group (run_ready), and the abort undid the
        group's earlier turns too -- maybe this very task's last turn, whose
        output was never written.  Failing the task now would charge the
        error to its state before those turns: instead the group is run
        again one commit per turn, where the error meets its own turn."""
        if self.grouped:
            raise _RunAlone()

    def commit(self):
        with committing:
            self.txn.commit()

    def abort(self):
        """Undo the current turn: its database changes and its output."""
        del self.buffer[:]
        del self.reports[:]
        self.current = None
        self.changed_defs = {}
        self.vm.out = self.buffer
        with committing:
            self.txn.abort()

    def abort_quietly(self):
        """Undo the current turn when the database server may be gone."""
        try:
            self.abort()
        except StoreUnreachable:
            pass

    def diagnose_unstorable(self, task):
        """The commit failed on a value that does not pickle, and the failed
        commit already dropped the turn's changes.  Run the turn again from
        the last commit without committing or printing, and look for the
        value in what the task holds then; then undo that run too."""
        from .unstorable import find_unstorable
        saved = self.txn, self.quiet
        self.txn, self.quiet = Transactions(), True
        try:
            self.turn(task)
            return find_unstorable(task)
        except Exception:
            return None
        finally:
            self.txn, self.quiet = saved
            self.abort()

    def fail_task(self, task, message):
        """Park `task` with an error, from the last committed state of its
        frames (its failed turn was aborted): it stays among the live tasks
        in state 'failed', waiting for the operator (`ostinato tasks retry`
        runs it again from there, `tasks cancel` ends it), its error
        reported; then commit.  For what the runtime cannot let go on -- an
        internal error, a value that does not store, code it cannot run, a
        runaway turn, a turn that crashed the process again and again --
        never for an error of the program, which unwinds as usual."""
        self.park(task, message)
        self.commit()
        self.flush()

    def park(self, task, message):
        w = self.world
        if w.running.get(self.worker) is task:
            del w.running[self.worker]
        # The abort undid taking it from the queue, or from the timers that
        # woke it in the same transaction.
        self.detach(task)
        frame = task.frame
        task.state = 'failed'
        task.parked = True
        task.waiting = None
        task.raised_at = where_of(frame, max(frame.pc - 1, 0)) if frame is not None else '?'
        task.error = V.make_error(message, task.raised_at)
        task.traceback = []
        task.reported = False
        self.report(task)

    def retry(self, task):
        """Run a parked task again from its last committed state.  Returns
        None, or why it cannot be."""
        if not task.parked or task.done:
            return ('task %d is not parked (it is %s): only a task the runtime stopped '
                    'can run again from where it was' % (task.id, task.state))
        task.parked = False
        task.crashes = 0
        task.error = None
        task.raised_at = None
        self.make_ready(task)
        return None

    def cancel(self, task, reason='by the operator'):
        """End `task` with a catchable Error at the point where it waits or
        runs (docs/language.md §15: a cancelled wait raises); its waiters wake
        when it ends.  Returns None, or why it cannot be."""
        w = self.world
        if task.done or task.id not in w.tasks:
            return 'task %d has ended already' % task.id
        task.resume = ('error', V.make_error('cancelled ' + reason))
        task.parked = False
        if task in w.ready or task.state == 'running' or task in w.running.values():
            # A turn under way (in this or another worker) or due: the error
            # meets it at its next step; a worker running it now conflicts
            # with this change and runs the turn again from here.
            return None
        self.detach(task)
        self.make_ready(task)
        return None

    def detach(self, task):
        """Take `task` out of the ready queue and of what it waits for."""
        w = self.world
        if task in w.ready:
            w.ready.remove(task)
        waiting = task.waiting
        if type(waiting) is tuple and waiting and waiting[0] == 'sleep':
            when = waiting[1]
            for key in list(w.timers.keys(min=(when, 0), max=(when, float('inf')))):
                if w.timers[key] is task:
                    del w.timers[key]
        elif isinstance(waiting, Watch):
            self.unwatch(waiting)
        elif type(waiting) is tuple and waiting and waiting[0] == 'take':
            q = waiting[1]
            if q.takers and task in q.takers:
                q.takers.remove(task)
                q._p_changed = True
        elif type(waiting) is tuple and waiting and waiting[0] == 'import':
            for t in w.tasks.values():
                if t.importer is task:
                    t.importer = None
        # A service that suspends tasks forgets this one's request
        # (`release`), so its answer never makes the task ready again.
        for st in w.services.values():
            release = getattr(st, 'release', None)
            if release is not None:
                release(task)

    def fail_internal(self, task, exc):
        import traceback as tb
        self.fail_task(task, 'internal error: %s: %s' % (type(exc).__name__, exc))
        text = ''.join(tb.format_exception(type(exc), exc, exc.__traceback__))
        if self.oplog is None or not self.oplog.note(text):
            self.err.write(harmless(text))

    def turn(self, task):
        """Run one task until it waits, ends or fails, checkpointing a long
        computation every SLICE_SECONDS and holding it to the turn limits."""
        tid = task.id
        start = slice_start = time.time()
        written = 0
        warned = False
        self.depths = {}
        # The watch that woke it stays in the indexes while the turn runs
        # (`held`): if the task waits on the same objects again, it sleeps
        # on that watch again, and neither it nor the indexes are written
        # (watches.same).  Otherwise it leaves them in this turn's
        # transaction, which the next wait mostly writes anyway.
        held = task.waiting
        if type(held) is Watch and held.kind == 'change' and not watches.active(held):
            self.held = held
        else:
            self.held = None
            watches.release(self.world, task)
        task.waiting = None
        task.state = 'running'
        self.current = task
        while True:
            status = self.vm.run(task, self.ticks)
            if status != 'yield':
                break
            after_slice = self.txn.after_slice
            if after_slice is not None:
                if self.held is not None:
                    # A test mode may load the world again: the copy of the
                    # held watch would be one nobody holds.
                    watches.drop(self.held)
                    self.held = None
                self.mark_running(task)
                after_slice(self)
                task = self.current = self.world.tasks[tid]
            now = time.time()
            if now - slice_start >= self.SLICE_SECONDS:
                self.mark_running(task)
                before = self.stored_size()
                self.end_turn()
                if self.grouped:
                    self.grouped = 0    # the checkpoint committed the group's turns too
                if before is not None:
                    written += max(0, self.stored_size() - before)
                if _DIE_IN_TURN is not None and task.name == _DIE_IN_TURN:
                    os._exit(137)        # test mode: as the OOM killer would
                slice_start = time.time()
            problem = self.runaway(task, now - start, written)
            if problem is not None:
                if warned:
                    raise RunawayTurn(problem + ', and went on after that error')
                # The program may catch it and wrap up; if it goes on as
                # long again, it is parked (RunawayTurn).
                task.resume = ('error', V.make_error(problem))
                warned = True
                start = now
                written = 0
        self.current = None
        self.wake_definition_readers()
        if self.world.running.get(self.worker) is task:
            del self.world.running[self.worker]
        if task.crashes:
            task.crashes = 0
        self.settle(task, status)
        if self.held is not None:         # the task waits otherwise, or no more
            watches.drop(self.held)
            self.held = None
        if self.grouped is not None:
            self.grouped += 1       # run_ready commits the group
        else:
            self.end_turn()
        if self.txn.after_slice is not None:
            self.txn.after_slice(self)

    def mark_running(self, task):
        """Before a commit in the middle of `task`'s turn: wake the waits
        on definitions the turn changed so far, and record the task as this
        worker's running task, so that `recover` runs it first if the
        process stops before the turn ends.  A turn that ends before any
        commit of its own needs no such record (a crash undoes it, and the
        task is still in the ready queue), and writing it -- set and
        deleted in one transaction -- was a record more in every turn."""
        self.wake_definition_readers()
        w = self.world
        if w.running.get(self.worker) is not task:
            w.running[self.worker] = task

    def runaway(self, task, seconds, written):
        """Why the turn of `task` must stop, or None."""
        if seconds >= self.TURN_LIMIT:
            return 'ran %g s without waiting (the turn limit)' % self.TURN_LIMIT
        if written > self.MAX_TURN_WRITE:
            return 'stored %d MB in one turn (the limit is %d MB)' % (
                written >> 20, self.MAX_TURN_WRITE >> 20)
        if self.depth(task) > self.MAX_DEPTH:
            return 'recursion deeper than %d calls' % self.MAX_DEPTH
        return None

    def depth(self, task):
        """How many frames deep the task is.  A frame's caller never changes,
        so this walks only the frames called since the turn's last check
        (`self.depths`, by oid, or by a weak reference to the frame while it
        has none, so a returned frame is not kept): walking the whole chain
        at every slice was quadratic, and in the modes that reload the world
        between slices it loaded every frame again each time."""
        seen = self.depths
        if len(seen) > self.MAX_DEPTH + 10000:
            seen.clear()
        fresh = []
        below = 0
        f = task.frame
        while f is not None and len(fresh) <= self.MAX_DEPTH:
            oid = f._p_oid
            known = seen.get(oid) if oid is not None else None
            if known is None:
                mine = seen.get(id(f))
                known = mine[1] if mine is not None and mine[0]() is f else None
            if known is not None:
                below = known
                break
            fresh.append(f)
            f = f.caller
        depth = below + len(fresh)
        for i, f in enumerate(fresh):
            oid = f._p_oid
            if oid is not None:
                seen[oid] = depth - i
            else:
                seen[id(f)] = (weakref.ref(f), depth - i)   # an id is reused once f is gone
        return depth

    def stored_size(self):
        """The database's size in bytes, to measure what a turn writes (None
        when unknown: memory runs)."""
        return self.txn.size()

    def settle(self, task, status):
        w = self.world
        importer = task.importer
        if status == 'done' or status == 'failed':
            w.tasks.pop(task.id, None)
            if status == 'failed' and importer is None:
                self.report(task)
            if w.watching:
                self.changed(task)
        else:
            self.suspend(task, status[1])
        if type(status) is tuple and type(status[1]) is R.Import:
            # Importing another module is not a wait: whoever waits for this
            # module's top level keeps waiting (docs/language.md §16).
            return
        if importer is not None or task.module is not None:
            self.modules.settled(task, status)

    def suspend(self, task, request):
        """Turn the VM's suspension `request` (vm/requests.py) into the wait
        stored in `task.waiting`."""
        w = self.world
        task.state = 'waiting'
        task.since = time.time()     # for `ostinato tasks`
        task.waits += 1              # what ReadyQueue.wake knows this wait by
        kind = type(request)
        if kind is R.Sleep:
            s = request.seconds
            task.resume = ('value', None)
            if s is None or s <= 0:
                self.make_ready(task)
                return
            when = time.time() + s
            task.waiting = ('sleep', when)
            w.add_timer(when, task)
        elif kind is R.Change:
            held, self.held = self.held, None
            if held is not None and held.task is task and \
                    watches.same(held, request.objs, request.defs):
                watches.keep(held)
                task.waiting = held
            else:
                if held is not None:
                    watches.drop(held)
                task.waiting = watches.register(w, task, request.objs, 'change', request.defs)
        elif kind is R.Token:
            watch = request.watch
            task.waiting = watch
            if watch.dirty:
                self.make_ready(task)
        elif kind is R.Take:
            q = request.queue
            if q.items:
                task.resume = ('value', q.items.pop(0))
                q._p_changed = True
                self.make_ready(task)
            else:
                if q.takers is None:
                    q.takers = []
                q.takers.append(task)
                q._p_changed = True
                task.waiting = ('take', q)
        elif kind is R.Import:
            pass      # set up by import_module
        else:
            for service in self.services:
                if service.accepts(request.kind):
                    service.suspend(self, task, request)
                    return
            task.resume = ('error', V.make_error(
                "%s: this run has no service for it" % request.kind))
            self.make_ready(task)

    def put(self, q, value):
        """Hand `value` to the first task waiting on q, or append it."""
        takers = q.takers
        if takers:
            t = takers.pop(0)
            q._p_changed = True
            t.resume = ('value', value)
            self.make_ready(t)
        else:
            q.items.append(value)
            q._p_changed = True
        if self.world.watching:
            self.changed(q)

    def end_turn(self):
        """The end of a turn: the durable runtime commits here; then the output
        the turn produced is delivered (so a crash never prints a line twice)."""
        self.commit()
        self.flush()

    def flush(self):
        """Deliver the output of committed turns: printed text and error
        reports, in the order the turns produced them (several turns may
        share a commit)."""
        if self.quiet:
            return
        try:
            self._flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            del self.buffer[:]
            del self.reports[:]
            raise _output_failed(e) from None

    def _flush(self):
        buffer = self.buffer
        done = 0
        if self.reports:
            main = self.world.main_task
            for at, task, text in self.reports:
                if at > done:
                    self.out.write(''.join(buffer[done:at]))
                    self.out.flush()
                    done = at
                if self.oplog is None or task is main or not self.oplog.report(task, text):
                    self.err.write(harmless(text))
                    self.err.flush()
            del self.reports[:]
        if len(buffer) > done:
            self.out.write(''.join(buffer[done:]))
            self.out.flush()
        del buffer[:]

    # ------------------------------------------------------------ reports
    def report(self, task):
        """Report an uncaught error -- after the commit that records it, like
        printed output, so a crash never reports it twice."""
        if task.reported:
            return
        task.reported = True
        self.reports.append((len(self.buffer), task, format_report(task)))


def format_report(task):
    """`FILE:LINE:COL: error: MESSAGE` and one `  at ...` line per frame."""
    try:
        msg = to_str(task.error)
    except Exception:  # rendering must never hide the report
        msg = repr(task.error)
    lines = ['%s: error: %s' % (task.raised_at or '?', msg)]
    for tb in task.traceback or ():
        lines.append('  at ' + tb)
    return '\n'.join(lines) + '\n'


def unrunnable_message(task, e):
    """What the operator reads when a task's stored code cannot run here."""
    return ('task %d (%s) cannot continue: its code %s in %s was stored by another '
            'Ostinato and %s. Finish it with the Ostinato that started it, or end it '
            'with `ostinato tasks cancel %d`.' % (task.id, task.name, e.code.name,
                                                  e.code.filename, e.problem, task.id))


def _is_pickling_error(e):
    import pickle
    text = str(e)
    return isinstance(e, (pickle.PicklingError, TypeError, AttributeError)) and (
        'pickle' in text or 'cannot' in text)


def task_name(func):
    from ..vm.values import Builtin, Curried, Function
    while type(func) is Curried:
        func = func.func
    if type(func) is Function:
        return func.code.name
    if type(func) is Builtin:
        return func.name
    return getattr(func, 'name', '?')
