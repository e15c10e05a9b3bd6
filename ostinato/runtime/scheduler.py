"""The scheduler: tasks, the FIFO ready queue, timers, waits, and module loads.

It implements the VM's `Host` interface.  One scheduler *turn* runs one task
until it waits, ends, fails or uses up its slice; then every sleeper whose
time has passed joins the back of the ready queue and the front task runs
(docs/language.md §15.1).  A task whose slice was used up goes on ahead of every
other task: tasks are cooperative, the slice only bounds how much work a
crash can lose.

All state lives in the `World`; the scheduler object itself is a
process-local driver around it.  `after_turn` is the hook the durable
runtime uses to commit a turn and then deliver its printed output.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ..compiler.code import BYTECODE_VERSION, COMPILER_VERSION
from ..compiler.compiler import compile_module
from ..syntax import OstSyntaxError, parse
from ..vm import values as V
from ..vm.blocks import UnrunnableCode
from ..vm.interp import VM, Host, where_of
from ..vm.printing import to_str
from ..vm.values import Frame, OModule, OstError, Task
from .world import Watch, World


# Set (by a signal handler of the CLI) to stop the run at the next turn
# boundary: the turn in progress completes and is committed, and services
# finish what is in flight, so an orderly stop resends nothing.
STOP = threading.Event()


def request_stop():
    """Ask the running scheduler to stop between two turns; True the first
    time, False when a stop was already asked for (then stop at once)."""
    if STOP.is_set():
        return False
    STOP.set()
    return True


class ServiceStopped(Exception):
    """A service cannot go on (a chat channel whose token was rejected, or
    which another process polls): the run stops, and the CLI prints this
    message.  Nothing is lost: the database is as the last commit left it."""


def stdlib_dir():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in (os.path.join(here, 'stdlib'), os.path.join(os.path.dirname(here), 'stdlib')):
        if os.path.isdir(cand):
            return cand
    return None


def compile_source(source, path, module_name, world):
    """Parse and compile a module source, once per source text and compiler:
    the Code is kept in the world (the database), keyed by the text's hash,
    the file, the module name and the bytecode and compiler versions.
    Raises OstSyntaxError."""
    import hashlib
    key = (hashlib.sha256(source.encode('utf-8')).hexdigest(), path or '', module_name,
           BYTECODE_VERSION, COMPILER_VERSION)
    cache = world.compiled
    code = cache.get(key)
    if code is None:
        fname = os.path.basename(path)
        tree = parse(source, fname)
        code = compile_module(tree, source, fname, module_name)
        cache[key] = code
    return code


def read_source(path):
    with open(path, 'rb') as f:
        data = f.read()
    return data.decode('utf-8').replace('\r\n', '\n')


class Scheduler(Host):
    SLICE_SECONDS = 0.3      # a long computation is checkpointed this often
    TICKS = 20000            # steps (blocks, jumps, calls) between clock checks
    IDLE_SECONDS = 0.05      # serve: how often an idle worker looks at the database

    def __init__(self, world=None, out=None, err=None, ticks=None):
        self.world = world if world is not None else World()
        V.set_error_type(self.world.error_type)
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.buffer = []
        self.reports = []         # error reports waiting for their commit
        self.vm = VM(self, self.buffer)
        self.ticks = ticks or self.TICKS
        self.after_turn = None    # hook(scheduler) run after each turn, before output
        self.after_slice = None   # hook(scheduler) run after each slice (test mode)
        self.worker = 'run'       # this process's name among the workers of a database
        self.claim = False        # claim each task in its own commit (several workers)
        self.abort_hook = None    # hook(scheduler) that aborts the transaction
        self.idle_hook = None     # hook(scheduler, seconds) while nothing is ready (serve)
        self.transact_hook = None  # hook(fn): run fn in a transaction of its own, commit
        self.services = []        # effects: objects with accepts/suspend/poll/busy/wait
        self.quiet = False        # hold printed output back (a diagnostic re-run)
        # Set by any service with news; the loop waits on it when idle, so an
        # event of one service ends the wait whichever service it waits for.
        self.wakeup = threading.Event()

    # The VM checks `host.waiters` (truthy while any watch is active) before
    # reporting changes.
    @property
    def waiters(self):
        return self.world.watches

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

    def make_ready(self, task, front=False):
        task.state = 'ready'
        task.waiting = None
        task.since = None
        if front:
            self.world.ready.appendleft(task)
        else:
            self.world.ready.append(task)

    # ------------------------------------------------------------ changes
    # Each watched object keeps its watches in `_ow`, a BTree of its own
    # keyed by watch id (so in the order they were made): adding a waiter
    # writes a small bucket, never the watched object's record again.
    def changed(self, obj):
        ws = getattr(obj, '_ow', None)
        if not ws:
            return
        for w in list(ws.values()):
            self._fire(w)

    def _fire(self, w):
        if w.id not in self.world.watches:
            return
        del self.world.watches[w.id]
        w.dirty = True
        _drop_watch(w)
        t = w.task
        if t.waiting is w:
            self.make_ready(t)

    def _register(self, task, objs, kind):
        from BTrees.IOBTree import IOBTree
        w = self.world
        watch = Watch(w.next_watch_id, task, [], kind)
        w.next_watch_id += 1
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
        w.watches[watch.id] = watch
        return watch

    def watch(self, task, reads):
        return self._register(task, reads, 'token')

    def unwatch(self, watch):
        if watch.id in self.world.watches:
            del self.world.watches[watch.id]
            _drop_watch(watch)

    # ------------------------------------------------------------ modules
    def find_module(self, name, from_dir):
        dirs = []
        if from_dir:
            dirs.append(from_dir)
        sd = stdlib_dir()
        if sd:
            dirs.append(sd)
        dirs += [d for d in os.environ.get('OSTINATO_PATH', '').split(':') if d]
        for d in dirs:
            p = os.path.join(d, name + '.ost')
            if os.path.isfile(p):
                return os.path.abspath(p)
        return None

    def load_module(self, name, path, source=None):
        """Create the module and its top-level task (not yet queued).  Raises
        OstSyntaxError."""
        if source is None:
            source = read_source(path)
        code = compile_source(source, path, name, self.world)
        m = OModule(name, path)
        m.source = source
        m.code = code
        m.summary = code.summary
        m.details = code.details
        frame = Frame(code, m, m, None, None)
        t = self.new_task(frame, name)
        t.module = m
        return m, t

    def import_module(self, vm, task, name, frame):
        w = self.world
        m = w.modules.get(name)
        if m is not None:
            source = self.source_changed(m)
            if source is None:
                return m
            try:
                t = self.upgrade(m, source)
            except OstSyntaxError as e:
                raise _syntax_error_at_import(e) from None
            return self._wait_for_module(task, t, name)
        m = w.loading.get(name)
        if m is not None:            # a circular import gets the module as it is so far
            return m
        from_dir = None
        if frame.module is not None and frame.module.path:
            from_dir = os.path.dirname(frame.module.path)
        path = self.find_module(name, from_dir)
        if path is None:
            raise OstError("no module named '%s'" % name)
        try:
            m, t = self.load_module(name, path)
            m.stamp = _stamp(path)
        except OstSyntaxError as e:
            raise _syntax_error_at_import(e) from None
        except OSError as e:
            raise OstError("cannot read module '%s': %s" % (name, e.strerror))
        w.loading[name] = m
        return self._wait_for_module(task, t, name)

    def _wait_for_module(self, importer, t, name):
        """The importer waits while the module's top-level task `t` runs first."""
        t.importer = importer
        importer.state = 'waiting'
        importer.waiting = ('import', name)
        self.world.ready.appendleft(t)
        return None

    def _module_settled(self, t, status):
        """The top level of a module being imported ended or first waited: the
        importer continues before any other task."""
        importer = t.importer
        t.importer = None
        w = self.world
        m = t.module
        name = m.name
        first_load = w.loading.get(name) is m
        if first_load:
            del w.loading[name]
        if status == 'failed' and first_load:
            # Raised before its first wait: the error propagates out of the import
            # and the module is forgotten.
            importer.resume = ('error', t.error)
            t.reported = True
            w.tasks.pop(t.id, None)
        elif status == 'failed':
            # An upgrade whose top level raised: the import still gives the module.
            self.report(t)
            importer.resume = ('value', m)
        else:
            w.modules[name] = m
            importer.resume = ('value', m)
        self.make_ready(importer, front=True)

    # ------------------------------------------------------------ upgrades
    def source_changed(self, m):
        """The module's file text if it differs from what was loaded, else
        None.  A module whose file is gone is looked for again by name in the
        library folders (an Ostinato installed elsewhere brings its stdlib)."""
        if not m.path:
            return None
        if not os.path.exists(m.path):
            moved = self.find_module(m.name, None)
            if moved is not None and os.path.basename(moved) == os.path.basename(m.path):
                m.path = moved
        try:
            st = os.stat(m.path)
            if (st.st_mtime_ns, st.st_size) == m.stamp:
                return None
            source = read_source(m.path)
        except OSError:
            return None
        m.stamp = (st.st_mtime_ns, st.st_size)
        return source if source != m.source else None

    def upgrade(self, m, source):
        """Recompile `m` from `source` and return a new task that re-runs its top
        level in the same namespace (DESIGN.md §5); not yet queued.  Raises
        OstSyntaxError, leaving the module as it was."""
        code = compile_source(source, m.path, m.name, self.world)
        m.source = source
        m.code = code
        m.summary = code.summary
        m.details = code.details
        frame = Frame(code, m, m, None, None)
        t = self.new_task(frame, m.name)
        t.module = m
        return t

    def upgrade_all(self, skip=None):
        """Check every loaded module's source; queue the upgrades (front of the
        ready queue, in name order).  Syntax errors are reported and the old
        version stays."""
        tasks = []
        for name in list(self.world.modules.keys()):
            m = self.world.modules[name]
            if m is skip:
                continue
            source = self.source_changed(m)
            if source is None:
                continue
            try:
                tasks.append(self.upgrade(m, source))
            except OstSyntaxError as e:
                self.err.write(e.format() + '\n')
        for t in reversed(tasks):
            self.world.ready.appendleft(t)

    # ------------------------------------------------------------ running
    def recover(self):
        """After a restart: a task whose turn this worker was running when the
        process stopped (its checkpoints are committed) goes on first."""
        w = self.world
        t = w.running.get(self.worker)
        if t is not None:
            del w.running[self.worker]
            if not t.done and t not in w.ready:
                t.state = 'ready'
                w.ready.appendleft(t)

    def start_main(self, path, module_name=None):
        """Make FILE's main task ready (docs/language.md §1): on a new database load
        FILE and run its top level; if FILE's main task is still suspended,
        resume it (upgrading FILE in place first if its text changed); if it
        ended, run FILE's top level again as a new main task in the same module
        namespace.  Raises OstSyntaxError (nothing runs then)."""
        name = module_name or os.path.splitext(os.path.basename(path))[0]
        w = self.world
        main = w.main_task
        m = w.modules.get(name) or w.loading.get(name)
        if m is not None and m.path != path:
            if m.path and not os.path.exists(m.path):
                # The same program, moved (or the database copied elsewhere).
                if w.main_path == m.path:
                    w.main_path = path
                m.path = path
            else:
                m = None
        if m is None:
            m, t = self.load_module(name, path)
            m.stamp = _stamp(path)
            w.loading[name] = m
            w.main_task = t
            w.main_path = path
            w.ready.append(t)
        elif main is not None and w.main_path == path and (not main.done or w.run_open):
            # The main task is suspended -- or it ended but the run that ended it
            # was interrupted (a crash), so the other tasks of that run resume.
            source = self.source_changed(m)
            if source is not None:
                t = self.upgrade(m, source)
                w.ready.appendleft(t)
        else:
            source = self.source_changed(m)
            if source is not None:
                t = self.upgrade(m, source)
            else:
                t = self.new_task(Frame(m.code, m, m, None, None), m.name)
                t.module = m
            w.main_task = t
            w.main_path = path
            w.ready.append(t)
        self.upgrade_all(skip=m)
        return w.main_task

    def run(self, forever=False):
        """Run until nothing can run any more; with `forever` (serve), wait for
        more work instead of returning.  Services (the LLM worker, chat
        channels) bring outside events in between turns; while one of them
        still expects an event, the run goes on.  Returns 'stopped' when a
        stop was requested (`request_stop`), after the services drained."""
        self.bind_services()
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
                self.run_one()
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
                    time.sleep(min(delay, 0.5))
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
        no such channel in this process it waits in the database for one."""
        self.world.outbox.add(channel, thread_id, text)
        self.wakeup.set()

    def transact(self, fn):
        """Run fn() in a transaction of its own and commit it (again after a
        conflict with another worker)."""
        if self.transact_hook is not None:
            return self.transact_hook(fn)
        result = fn()
        self.commit()
        return result

    def idle(self, seconds, busy=()):
        """Nothing is ready: wait a little (for a service's event if one is
        expected), then look at the database again (another process may have
        queued work).  The serve loop sets `idle_hook`."""
        if self.idle_hook is not None:
            self.idle_hook(self, seconds)
        elif busy:
            busy[0].wait(seconds)
        else:
            time.sleep(seconds)

    def run_one(self):
        """Take the front task and run its turn.  A conflict with another worker
        (ZODB ConflictError at commit) aborts the turn, which is run again from
        the last commit; a Python exception outside the VM fails the task once
        with a report instead of crashing the process."""
        from ZODB.POSException import ConflictError
        w = self.world
        task = w.ready.popleft()
        # Taken off the queue and recorded as this worker's in one
        # transaction: a task is always ready, running, waiting or done,
        # even when the process dies right here (`recover` finds it).
        task.state = 'running'
        w.running[self.worker] = task
        if self.claim:
            # Claim the task in a transaction of its own, so two workers never
            # run it at once.
            try:
                self.commit()
            except ConflictError:
                self.abort()
                return
        for attempt in range(20):
            try:
                self.turn(task)
                return
            except ConflictError:
                self.abort()
                if not self.claim:
                    # The abort put the task back in the queue (and undid the
                    # timers that woke it): the loop takes it again.
                    return
                time.sleep(0.001 * attempt)
            except UnrunnableCode as e:
                self.abort()
                self.fail_task(task, unrunnable_message(task, e))
                return
            except Exception as e:  # a bug of ours: the task fails, the rest goes on
                self.abort()
                where = self.diagnose_unstorable(task) if _is_pickling_error(e) else None
                if where is not None:
                    self.fail_task(task, 'cannot store %s' % where)
                else:
                    self.fail_internal(task, e)
                return
        self.abort()
        self.fail_internal(task, RuntimeError('the turn conflicted 20 times'))

    def commit(self):
        if self.after_turn is not None:
            self.after_turn(self)

    def abort(self):
        """Undo the current turn: its database changes and its output."""
        del self.buffer[:]
        del self.reports[:]
        self.vm.out = self.buffer
        if self.abort_hook is not None:
            self.abort_hook(self)

    def diagnose_unstorable(self, task):
        """The commit failed on a value that does not pickle, and the failed
        commit already dropped the turn's changes.  Run the turn again from
        the last commit without committing or printing, and look for the
        value in what the task holds then; then undo that run too."""
        from .unstorable import find_unstorable
        saved = self.after_turn, self.after_slice, self.quiet
        self.after_turn, self.after_slice, self.quiet = None, None, True
        try:
            self.turn(task)
            return find_unstorable(task)
        except Exception:
            return None
        finally:
            self.after_turn, self.after_slice, self.quiet = saved
            self.abort()

    def fail_task(self, task, message):
        """End `task` with an error from the last committed state of its frames
        (its failed turn was aborted), report it and commit."""
        w = self.world
        w.running.pop(self.worker, None)
        w.tasks.pop(task.id, None)
        # The abort undid taking it from the queue, or from the timers that
        # woke it in the same transaction.
        self.detach(task)
        frame = task.frame
        task.done = True
        task.state = 'failed'
        task.raised_at = where_of(frame, max(frame.pc - 1, 0)) if frame is not None else '?'
        task.error = V.make_error(message, task.raised_at)
        task.traceback = []
        self.report(task)
        if w.watches:
            self.changed(task)
        self.commit()
        self.flush()

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

    def fail_internal(self, task, exc):
        import traceback as tb
        self.fail_task(task, 'internal error: %s: %s' % (type(exc).__name__, exc))
        self.err.write(''.join(tb.format_exception(type(exc), exc, exc.__traceback__)))

    def turn(self, task):
        """Run one task until it waits, ends or fails, checkpointing a long
        computation every SLICE_SECONDS."""
        tid = task.id
        start = time.time()
        task.state = 'running'
        self.world.running[self.worker] = task
        while True:
            status = self.vm.run(task, self.ticks)
            if status != 'yield':
                break
            if self.after_slice is not None:
                self.after_slice(self)
                task = self.world.tasks[tid]
            if time.time() - start >= self.SLICE_SECONDS:
                self.end_turn()
                start = time.time()
        del self.world.running[self.worker]
        self.settle(task, status)
        self.end_turn()
        if self.after_slice is not None:
            self.after_slice(self)

    def settle(self, task, status):
        w = self.world
        importer = task.importer
        if status == 'done' or status == 'failed':
            w.tasks.pop(task.id, None)
            if status == 'failed' and importer is None:
                self.report(task)
            if w.watches:
                self.changed(task)
        else:
            self.suspend(task, status[1])
        if type(status) is tuple and status[1][0] == 'import':
            # Importing another module is not a wait: whoever waits for this
            # module's top level keeps waiting (docs/language.md §16).
            return
        if importer is not None:
            self._module_settled(task, status)
        else:
            # A module's top level that ended or first waited is loaded from then on.
            m = task.module
            if m is not None and status != 'failed' and w.loading.get(m.name) is m:
                del w.loading[m.name]
                w.modules[m.name] = m

    def suspend(self, task, request):
        kind = request[0]
        w = self.world
        task.state = 'waiting'
        task.since = time.time()     # for `ostinato tasks`
        if kind == 'sleep':
            s = request[1]
            task.resume = ('value', None)
            if s is None or s <= 0:
                self.make_ready(task)
                return
            when = time.time() + s
            task.waiting = ('sleep', when)
            w.add_timer(when, task)
        elif kind == 'change':
            objs = request[1]
            watch = self._register(task, objs, 'change')
            task.waiting = watch
        elif kind == 'token':
            watch = request[1]
            task.waiting = watch
            if watch.dirty:
                self.make_ready(task)
        elif kind == 'take':
            q = request[1]
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
        elif kind == 'import':
            pass      # set up by import_module
        else:
            for service in self.services:
                if service.accepts(kind):
                    service.suspend(self, task, request)
                    return
            task.resume = ('error', V.make_error(
                "%s: this run has no service for it" % kind))
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
        if self.world.watches:
            self.changed(q)

    def end_turn(self):
        """The end of a turn: the durable runtime commits here; then the output
        the turn produced is delivered (so a crash never prints a line twice)."""
        if self.after_turn is not None:
            self.after_turn(self)
        self.flush()

    def flush(self):
        """Deliver the output of committed turns: printed text, then reports."""
        if self.quiet:
            return
        if self.buffer:
            self.out.write(''.join(self.buffer))
            self.out.flush()
            del self.buffer[:]
        if self.reports:
            self.err.write(''.join(self.reports))
            self.err.flush()
            del self.reports[:]

    # ------------------------------------------------------------ reports
    def report(self, task):
        """Report an uncaught error -- after the commit that records it, like
        printed output, so a crash never reports it twice."""
        if task.reported:
            return
        task.reported = True
        self.reports.append(format_report(task))


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


def _syntax_error_at_import(e):
    """A syntax error in an imported module is a runtime error at the import
    (docs/language.md §14)."""
    return OstError('%s:%d:%d: syntax error: %s' % (e.filename, e.line, e.col, e.message))


def _drop_watch(watch):
    """Remove `watch` from the watch trees of the objects it watches."""
    for o in watch.objs:
        tree = getattr(o, '_ow', None)
        if tree is not None and watch.id in tree:
            del tree[watch.id]


def _is_pickling_error(e):
    import pickle
    text = str(e)
    return isinstance(e, (pickle.PicklingError, TypeError, AttributeError)) and (
        'pickle' in text or 'cannot' in text)


def _stamp(path):
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def task_name(func):
    from ..vm.values import Builtin, Curried, Function
    while type(func) is Curried:
        func = func.func
    if type(func) is Function:
        return func.code.name
    if type(func) is Builtin:
        return func.name
    return getattr(func, 'name', '?')
