"""The interpreter loop.

One loop runs the top frame of one task.  A call pushes a frame and a return
pops it: the loop never recurses in Python for an Ostinato call, so a task can
stop after any instruction with its whole state in its frames (code, pc,
value stack, locals, try handlers) -- plain data that pickles.  A call the
loop can make quickly makes no Frame at first: it runs as a *light
activation* (its state in the loop's variables) and gets its Frame when
something needs it, at the latest when the loop stops.  Runs of
straight-line instructions are executed as blocks (see `blocks`), which
leave the frame exactly as the plain instructions would.

The loop returns to its caller (the scheduler, in `runtime/`) when the task
ends, fails, suspends (a built-in asked for something from outside: time, a
module load, a queue item, a change), or has used up its slice of steps
(calls, jumps, loop steps, blocks).  Everything the VM needs from the
outside world goes through `self.host` (the `Host` of vm/host.py); the VM itself
never touches a database.
"""
from __future__ import annotations

from persistent import Persistent

from ..compiler.code import *
from . import limits, ops
from .printing import display, to_str
from .values import (BUILTINS, Builtin, Curried, Frame, Function, OList, OMap, OModule,
                     OObject, OQueue, OSet, OstError, OstRaise, OType, Span, Task,
                     kind, make_error)
from . import values as V
from . import builtins as _builtins  # noqa: F401 -- registers the built-ins
from . import requests as R
from .host import Host
from .taskbuiltins import Suspend
from .blocks import RUN_BLOCK, forget_layout, function_layout, runnable

WATCH = 'watch'      # marker in Frame.handlers for an active watched evaluation
# Int operands below this multiply without a size check (vm/limits.py).
_HALF_INT = 1 << (limits.MAX_INT_BITS // 2)
_MISSING = object()

# The fields of a light activation's record in the loop's `callers` (see
# VM._loop), in order: the callee's code and Function, then its caller's
# loop state (frame -- None when light too --, instrs, stack, locals, pc to
# go on at, module, ns).  A plain tuple, built once per fast call, and
# module-level ints to read it: the loop unpacks the whole record where it
# resumes a caller and reads these fields elsewhere.
LA_CODE, LA_FUNC, LA_FRAME, LA_INSTRS, LA_STACK, LA_LOCALS, LA_PC, LA_MODULE, LA_NS = range(9)


# ------------------------------------------------------------------ iterators
# Loop state lives on the frame's value stack, so it is saved with the frame.

class SeqIter:
    """A snapshot of a finite source: values, and keys (maps) or positions."""
    __slots__ = ('vals', 'keys', 'pos')

    def __init__(self, vals, keys=None):
        self.vals = vals
        self.keys = keys
        self.pos = 0

    def __getstate__(self):
        return (self.vals, self.keys, self.pos)

    def __setstate__(self, s):
        self.vals, self.keys, self.pos = s


class SpanIter:
    __slots__ = ('cur', 'stop', 'pos')

    def __init__(self, cur, stop):
        self.cur = cur
        self.stop = stop
        self.pos = 0

    def __getstate__(self):
        return (self.cur, self.stop, self.pos)

    def __setstate__(self, s):
        self.cur, self.stop, self.pos = s


class QueueIter:
    __slots__ = ('q',)

    def __init__(self, q):
        self.q = q

    def __getstate__(self):
        return self.q

    def __setstate__(self, s):
        self.q = s


class ReactiveIter:
    """`for v in f:` over a function (docs/language.md §15.3).  state: 'new' (evaluate
    first), 'eval' (a watched call of f is running; its result will be on the
    stack), 'idle' (the body ran; wait for a change), 'dirty' (a change came)."""
    __slots__ = ('f', 'last', 'has_last', 'state', 'token')

    def __init__(self, f):
        self.f = f
        self.last = None
        self.has_last = False
        self.state = 'new'
        self.token = None

    def __getstate__(self):
        return (self.f, self.last, self.has_last, self.state, self.token)

    def __setstate__(self, s):
        self.f, self.last, self.has_last, self.state, self.token = s


_END = object()


def _next(it):
    """One step of a finite iterator: (index, value) or _END."""
    t = type(it)
    if t is SeqIter:
        i = it.pos
        if i >= len(it.vals):
            return _END
        it.pos = i + 1
        return (it.keys[i] if it.keys is not None else i), it.vals[i]
    if t is SpanIter:
        v = it.cur
        if it.stop is not None and v >= it.stop:
            return _END
        it.cur = v + 1
        i = it.pos
        it.pos = i + 1
        return i, v
    raise OstError('cannot iterate over %s here' % ('function' if t is ReactiveIter else 'queue'))


def where_of(frame, pc):
    line, col = frame.code.positions[pc]
    return '%s:%d:%d' % (frame.code.filename, line, col)


def _materialize(callers, stack, locs):
    """Turn the light activations in the loop's `callers` into Frames, each
    with its caller's pc written (which also marks a stored caller changed),
    and forget the entries.  `stack` and `locs` are the running (top) light
    activation's.  Returns the top Frame."""
    top = None
    last = len(callers) - 1
    # Unpacked whole (the LA_ fields, in order): one step, not four lookups.
    for i, (fcode, f, caller, _, _, _, cpc, _, _) in enumerate(callers):
        if caller is None:          # the light activation of the entry before
            caller = top
        caller.pc = cpc
        if i < last:
            below = callers[i + 1]
            fstack, flocs = below[LA_STACK], below[LA_LOCALS]
        else:
            fstack, flocs = stack, locs
        fr = Frame.__new__(Frame)
        # In no database yet: the attributes go straight into its dict, past
        # Persistent's change tracking.
        d = fr.__dict__
        d['code'] = fcode
        d['goal'] = f
        d['module'] = f.module
        d['parent'] = f.parent
        d['caller'] = caller
        d['stack'] = fstack
        d['locals'] = flocs
        top = fr
    del callers[:]
    return top


# An uncaught error's report has a line per frame; a recursion too deep has
# 50,000 of them, on the operator's terminal and log and stored with the
# task.  The outermost and innermost frames say where it began and where it
# broke; those between are counted.
REPORT_FRAMES = 20


def fold_frames(tb):
    """The report lines of `tb` (innermost first), at most REPORT_FRAMES at
    each end and one line counting those left out."""
    if len(tb) <= 2 * REPORT_FRAMES + 1:
        return tb
    return (tb[:REPORT_FRAMES]
            + ['... {:,} frames not shown ...'.format(len(tb) - 2 * REPORT_FRAMES)]
            + tb[-REPORT_FRAMES:])


class VM:
    """Runs tasks.  `out` receives printed text (the runtime delivers it after
    the commit that covers it)."""

    def __init__(self, host: Host, out=None):
        self.host = host
        self.out = out if out is not None else []
        self.task = None
        self.reads = None
        self.resumed = None       # (frame, its locals) as stored, when the run began

    def write(self, text):
        self.out.append(text)

    # -------------------------------------------------------------- frames
    def new_task_frame(self, func, args, kwargs, caller=None):
        """A frame calling `func(*args, **kwargs)` as a task's bottom frame.  For a
        built-in or other non-Function callable the frame is a tiny trampoline."""
        if type(func) is Function:
            return self.bind(func, list(args), kwargs, caller, None)
        site = self.task.frame if self.task is not None else None
        if site is not None:
            line, col = site.code.positions[max(site.pc - 1, 0)]
            fname = site.code.filename
        else:
            fname, line, col = '<spawn>', 0, 0
        code = trampoline_code(len(args), list(kwargs), fname, line, col)
        fr = Frame(code, None, site.module if site is not None else None, None, caller)
        fr.stack = [func] + list(args) + [kwargs[k] for k in kwargs]
        return fr

    def bind(self, f, args, kwargs, caller, callee_name):
        code = f.code
        nparams = code.nparams
        nargs = len(args)
        if nargs > nparams:
            raise OstError('%s() takes %d positional argument%s but %d %s given' % (
                code.name, nparams, '' if nparams == 1 else 's', nargs,
                'was' if nargs == 1 else 'were'))
        locs = args
        locs.extend([None] * (code.nlocals - nargs))
        if kwargs:
            params = code.params
            for k, v in kwargs.items():
                try:
                    i = params.index(k)
                except ValueError:
                    raise OstError("%s() has no parameter '%s'" % (code.name, k)) from None
                if i < nargs:
                    raise OstError("%s() got two values for parameter '%s'" % (code.name, k))
                locs[i] = v
        fr = Frame.__new__(Frame)
        fr.code = code
        fr.goal = f
        fr.module = f.module
        fr.parent = f.parent
        fr.caller = caller
        fr.pc = 0
        fr.stack = []
        fr.locals = locs
        fr.handlers = []
        return fr

    # -------------------------------------------------------------- running
    def run(self, task, ticks=1 << 62):
        """Run `task` for at most `ticks` steps (a step is a call, a jump, a
        loop step or a block of straight-line code: every repetition makes
        one).  Returns 'done', 'failed', 'yield' (slice used up) or
        ('suspend', REQUEST), REQUEST one of vm/requests.py's records.
        A pending `task.resume` (('value', v) or ('error', e, where)) is applied
        first."""
        self.task = task
        # Its top frames are stored inside its record (values.Task), and
        # change without telling it: the task is written by the commit
        # that covers this run, and an abort reloads them with it.
        task._p_changed = True
        frame = task.frame
        pending = task.resume
        if pending is not None:
            task.resume = None
            if pending[0] == 'value':
                frame.stack.append(pending[1])
            else:
                # An error delivered by the outside (a failed import, an LLM
                # error) is raised at the call that waited for it.
                task.raised_at = where_of(frame, max(frame.pc - 1, 0))
                r = self._unwind(task, frame, pending[1])
                if r is not None:
                    return r
                frame = task.frame
        # What a watched evaluation makes is recorded within one run only: an
        # evaluation resumed in a later run leaves out nothing (values.fresh).
        V.record_fresh(False)
        self.resumed = _as_stored(task.frame)
        try:
            while True:
                try:
                    return self._loop(task, task.frame, ticks)
                except _Unwound:
                    continue
                except _TaskOver as e:
                    return e.status
        finally:
            V.record_fresh(False)

    def _unwind(self, task, frame, value):
        """Unwind `task` from `frame` with the raised `value`: pop watch markers
        and frames until a try handler takes it.  Returns None when caught
        (task.frame is then the handling frame), else 'failed'.

        A catch block that raises the very value it caught again (to let
        what it does not handle go on) does not hide where that value came
        from: the report names the first raise and every frame it unwound.
        What was unwound is kept in a volatile attribute (`_v_`, never
        stored), so only a re-raise within the same process sees it."""
        caught = getattr(task, '_v_caught', None)
        if caught is not None and caught[0] is value:
            task.raised_at = caught[1]
            tb = list(caught[2])
        else:
            tb = []
        while True:
            hs = frame.handlers
            while hs:
                h = hs.pop()
                if type(h) is str:      # a watch marker
                    task.watch_depth -= 1
                    if task.watch_depth == 0:
                        task.reads = None
                        V.record_fresh(False)
                    continue
                handler_pc, depth = h
                task._v_caught = (value, task.raised_at, tb)
                del frame.stack[depth:]
                frame.stack.append(value)
                frame.pc = handler_pc
                frame._p_changed = True
                task.frame = frame
                return None
            tb.append(where_of(frame, max(frame.pc - 1, 0)) + ' in ' + goal_name(frame))
            frame._p_changed = True
            caller = frame.caller
            if caller is None:
                task.frame = frame
                task.error = value
                task.traceback = fold_frames(tb)
                task.done = True
                task.state = 'failed'
                return 'failed'
            frame = caller

    def _raise(self, task, frame, pc, value):
        frame.pc = pc
        r = self._unwind(task, frame, value)
        if r is None:
            raise _Unwound()
        raise _TaskOver(r)

    def _pause(self, task, frame, pc, callers, stack, locs):
        """Stop before the instruction at `pc`: the slice is used up."""
        if frame is None:
            frame = _materialize(callers, stack, locs)
        frame.pc = pc
        frame._p_changed = True
        task.frame = frame
        return 'yield'

    def _loop(self, task, frame, ticks):
        host = self.host
        waiters = host.waiters
        reads = task.reads
        instrs = runnable(frame.code)
        stack = frame.stack
        locs = frame.locals
        pc = frame.pc
        module = frame.module
        ns = module.ns if module is not None else None
        builtins_get = BUILTINS.get
        # A fast call makes no Frame: it runs as a *light activation*, with
        # `frame` None, until it returns or something needs its Frame (an
        # instruction that hands out or stores the frame, a general call, the
        # loop stopping): then `_materialize` makes Frames for all of them.
        # For each light activation, in call order, a record of the LA_ fields
        # (its code, its Function, its caller's loop state), to resume the
        # caller on return: built and unpacked whole, in that order.
        # Every way out of the loop but an interruption (KeyboardInterrupt,
        # after which the runtime drops the task's unstored state) makes the
        # Frames first: a task's frames are what is stored and resumed.
        callers = []
        try:
            while True:
                op, arg = instrs[pc]
                pc += 1
                # The slice is counted by blocks, jumps, calls and loop steps only
                # (every repetition passes one of them).
                if op == RUN_BLOCK:
                    ticks -= 1
                    if ticks < 0:
                        return self._pause(task, frame, pc - 1, callers, stack, locs)
                    r = arg(stack, locs, ns, module, reads, waiters, host)
                    tr = type(r)
                    if tr is int:
                        pc = r
                        continue
                    if tr is tuple:
                        # A CALL (see blocks.RUN_BLOCK), counted as the step it is.
                        f, argv, cpc, nargs = r
                        if type(f) is Function:
                            try:
                                fcode, finstrs, nparams, nlocals, fmodule = f._v_call
                            except AttributeError:
                                fcode, finstrs, nparams, nlocals, fmodule = function_layout(f)
                            if nargs <= nparams and ticks > 0:
                                ticks -= 1
                                if nargs < nlocals:
                                    argv.extend([None] * (nlocals - nargs))
                                # A light activation (see `callers`).
                                callers.append((fcode, f, frame, instrs, stack, locs, cpc + 1,
                                                module, ns))
                                frame = None
                                stack = []
                                locs = argv
                                instrs = finstrs
                                pc = 0
                                if module is not fmodule:
                                    module = fmodule
                                    ns = module.ns
                                continue
                        elif type(f) is Builtin and not f.ctx and ticks > 0 \
                                and nargs == len(f.params):
                            ticks -= 1
                            pc = cpc + 1
                            if reads is not None:
                                for a in argv:
                                    if isinstance(a, _TRACKED):
                                        reads[id(a)] = a
                            stack.append(f.fn(*argv))
                            if waiters and f.name in _MUTATORS and argv:
                                host.changed(argv[0])
                            continue
                        # The plain CALL takes it from the stack.
                        stack.append(f)
                        stack.extend(argv)
                        pc = cpc
                        continue
                    if tr is list:
                        # A return: [value, pc after the return instruction].
                        if frame is None:
                            v = r[0]
                            _, _, frame, instrs, stack, locs, pc, module, ns = callers.pop()
                            stack.append(v)
                            continue
                        # A Frame returns the general way: as a RETURN_CONST of
                        # the value just before that pc.
                        arg, pc = r
                        pc -= 1
                        op = RETURN_CONST
                    else:
                        # Its first instruction goes the general way: run that here.
                        op, arg = (frame.code if frame is not None
                                   else callers[-1][LA_CODE]).instrs[pc - 1]
                if op == CALL:
                    ticks -= 1
                    if ticks < 0:
                        return self._pause(task, frame, pc - 1, callers, stack, locs)
                    nargs, kwnames, callee_name = arg
                    if kwnames:
                        total = nargs + len(kwnames)
                        argv = stack[-total:]
                        del stack[-total:]
                    elif nargs == 1:
                        argv = [stack.pop()]
                    elif nargs:
                        argv = stack[-nargs:]
                        del stack[-nargs:]
                    else:
                        argv = []
                    f = stack.pop()
                    tf = type(f)
                    if tf is Function and not kwnames:
                        # The same call as the block hand-over above, written out
                        # twice on purpose: a helper call would cost every call.
                        try:
                            fcode, finstrs, nparams, nlocals, fmodule = f._v_call
                        except AttributeError:
                            fcode, finstrs, nparams, nlocals, fmodule = function_layout(f)
                        if nargs > nparams:
                            self.bind(f, argv, {}, frame, callee_name)  # raises the error
                        if nargs < nlocals:
                            argv.extend([None] * (nlocals - nargs))
                        # A light activation (see `callers`).
                        callers.append((fcode, f, frame, instrs, stack, locs, pc, module, ns))
                        frame = None
                        stack = []
                        locs = argv
                        instrs = finstrs
                        pc = 0
                        if module is not fmodule:
                            module = fmodule
                            ns = module.ns
                        continue
                    if kwnames:
                        kwargs = dict(zip(kwnames, argv[nargs:]))
                        del argv[nargs:]
                    else:
                        kwargs = {}
                    # Unwrap curried functions: curried positionals go first.
                    while tf is Curried:
                        argv = list(f.args) + argv
                        if f.kwargs:
                            for k in kwargs:
                                if k in f.kwargs:
                                    raise OstError("%s() got two values for parameter '%s'"
                                                   % (callable_name(f), k))
                            merged = dict(f.kwargs)
                            merged.update(kwargs)
                            kwargs = merged
                        f = f.func
                        tf = type(f)
                    if tf is Function:
                        if frame is None:
                            frame = _materialize(callers, stack, locs)
                        fr = self.bind(f, argv, kwargs, frame, callee_name)
                        frame.pc = pc
                        frame._p_changed = True
                        frame = fr
                        instrs = runnable(f.code)
                        stack = fr.stack
                        locs = fr.locals
                        pc = 0
                        if module is not f.module:
                            module = f.module
                            ns = module.ns
                        continue
                    if tf is Builtin:
                        if reads is not None:
                            for a in argv:
                                if isinstance(a, _TRACKED):
                                    reads[id(a)] = a
                        if f.ctx:
                            # It gets the VM: it may look at the task or suspend it.
                            if frame is None:
                                frame = _materialize(callers, stack, locs)
                            frame.pc = pc
                            task.frame = frame
                            v = self.call_builtin(f, argv, kwargs)
                        elif not kwargs and len(argv) == len(f.params):
                            v = f.fn(*argv)
                        else:
                            v = self.call_builtin(f, argv, kwargs)
                        if waiters and f.name in _MUTATORS and argv:
                            host.changed(argv[0])
                        stack.append(v)
                    else:
                        stack.append(self.call_other(f, tf, argv, kwargs, callee_name, reads))
                elif op == RETURN or op == RETURN_LOCAL or op == RETURN_CONST:
                    if op == RETURN:
                        v = stack.pop()
                    else:
                        v = locs[arg] if op == RETURN_LOCAL else arg
                        pc += 1
                    if frame is None:
                        # A light activation: nothing to store or mark changed.
                        _, _, frame, instrs, stack, locs, pc, module, ns = callers.pop()
                        stack.append(v)
                        continue
                    caller = frame.caller
                    resumed = self.resumed
                    if resumed is not None and frame is resumed[0] and caller is not None \
                            and _same_locals(locs, resumed[1]):
                        # All that anyone can still see of a returned frame is
                        # its locals (`__caller__.x`, a closure's), and they
                        # are as stored: the record stays as it is (one write
                        # less per wake-up), and what the run changed in
                        # memory (pc, stack) is dropped, so that an abort
                        # cannot leave it behind.
                        frame._p_invalidate()
                    else:
                        frame._p_changed = True
                    if caller is None:
                        frame.pc = pc
                        task.frame = frame
                        self.finish_task(task, v)
                        return 'done'
                    frame = caller
                    instrs = runnable(frame.code)
                    stack = frame.stack
                    locs = frame.locals
                    pc = frame.pc
                    if frame.module is not module:
                        module = frame.module
                        ns = module.ns if module is not None else None
                    stack.append(v)
                elif op == LOAD_LOCAL:
                    stack.append(locs[arg])
                elif op == CONST:
                    stack.append(arg)
                elif op == LOAD_GLOBAL:
                    v = ns.get(arg)
                    if reads is not None:
                        V.note_global(reads, module, v)
                    if v is None:
                        v = builtins_get(arg)
                        if v is None and arg == 'Error':
                            v = V.ERROR_TYPE
                    stack.append(v)
                elif op == ADD:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a + b
                    else:
                        stack[-1] = ops.binop('+', a, b)
                elif op == STORE_LOCAL:
                    locs[arg] = stack.pop()
                elif op == POP:
                    stack.pop()
                elif op == JUMP:
                    ticks -= 1
                    if ticks < 0:
                        return self._pause(task, frame, pc - 1, callers, stack, locs)
                    pc = arg
                elif op == FIELD:
                    obj = stack[-1]
                    if type(obj) is OMap:
                        if reads is not None:
                            reads[id(obj)] = obj
                        stack[-1] = obj.d.get(arg)
                    else:
                        if reads is not None and isinstance(obj, _TRACKED) and \
                                not _reads_a_val(obj, arg):
                            reads[id(obj)] = obj
                        stack[-1] = ops.get_field(obj, arg)
                elif op == FOR_ITER:
                    ticks -= 1
                    if ticks < 0:
                        return self._pause(task, frame, pc - 1, callers, stack, locs)
                    exit_pc, n, spec = arg
                    if n == 1:
                        it = stack[-1]
                        t = type(it)
                        if t is SpanIter:
                            v = it.cur
                            if it.stop is not None and v >= it.stop:
                                stack.pop()
                                pc = exit_pc
                                continue
                            it.cur = v + 1
                            if spec[0]:
                                stack.append(it.pos)
                            it.pos += 1
                            stack.append(v)
                            continue
                        if t is SeqIter:
                            i = it.pos
                            if i >= len(it.vals):
                                stack.pop()
                                pc = exit_pc
                                continue
                            it.pos = i + 1
                            if spec[0]:
                                stack.append(it.keys[i] if it.keys is not None else i)
                            stack.append(it.vals[i])
                            continue
                        if t is QueueIter:
                            if _take(it.q, stack, waiters, host):
                                continue
                            if frame is None:
                                frame = _materialize(callers, stack, locs)
                            return self._wait_for_item(task, frame, pc, it.q)
                        # A reactive loop's (or a bug).
                        if frame is None:
                            frame = _materialize(callers, stack, locs)
                        r = self._reactive_for(task, frame, pc, it)
                        reads = task.reads
                        if r is None:
                            # A watched call of the function: go on in its frame.
                            frame = task.frame
                            instrs = runnable(frame.code)
                            stack = frame.stack
                            locs = frame.locals
                            pc = frame.pc
                            if frame.module is not module:
                                module = frame.module
                                ns = module.ns
                            continue
                        if r == 'body':
                            pc = frame.pc + 1
                            continue
                        return r
                    its = stack[-n:]
                    got = []
                    for it in its:
                        r = _next(it)
                        if r is _END:
                            del stack[-n:]
                            pc = exit_pc
                            break
                        got.append(r)
                    else:
                        for (i, v), with_index in zip(got, spec):
                            if with_index:
                                stack.append(i)
                            stack.append(v)
                elif op == JUMP_IF_FALSE:
                    v = stack.pop()
                    if v is False:
                        pc = arg
                    elif v is not True:
                        ops.condition(v)
                elif op == STORE_GLOBAL:
                    v = stack.pop()
                    old = ns.get(arg) if waiters else None
                    if v is None:
                        ns.pop(arg, None)
                    else:
                        ns[arg] = v
                    module._p_changed = True
                    if waiters:
                        host.changed_global(module, old, v)
                elif op == SUB:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a - b
                    else:
                        stack[-1] = ops.binop('-', a, b)
                elif op == LT:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a < b
                    else:
                        stack[-1] = ops.compare('<', a, b)
                elif op == LE:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a <= b
                    else:
                        stack[-1] = ops.compare('<=', a, b)
                elif op == GT:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a > b
                    else:
                        stack[-1] = ops.compare('>', a, b)
                elif op == GE:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int:
                        stack[-1] = a >= b
                    else:
                        stack[-1] = ops.compare('>=', a, b)
                elif op == EQ:
                    b = stack.pop()
                    stack[-1] = ops.equal(stack[-1], b)
                elif op == NE:
                    b = stack.pop()
                    stack[-1] = not ops.equal(stack[-1], b)
                elif op == MUL:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int and -_HALF_INT < a < _HALF_INT \
                            and -_HALF_INT < b < _HALF_INT:
                        stack[-1] = a * b
                    else:
                        stack[-1] = ops.binop('*', a, b)
                elif op == LOAD_OUTER:
                    depth, slot = arg
                    fr = frame.parent if frame is not None else callers[-1][LA_FUNC].parent
                    while depth > 1:
                        fr = fr.parent
                        depth -= 1
                    stack.append(fr.locals[slot])
                elif op == INDEX:
                    i = stack.pop()
                    obj = stack[-1]
                    if reads is not None and isinstance(obj, _TRACKED):
                        reads[id(obj)] = obj
                    if type(obj) is OList and type(i) is int:
                        items = obj.items
                        stack[-1] = items[i] if -len(items) <= i < len(items) else None
                    else:
                        stack[-1] = ops.get_index(obj, i)
                elif op == STORE_FIELD:
                    obj = stack.pop()
                    v = stack.pop()
                    ops.set_field(obj, arg, v)
                    if waiters:
                        host.changed(obj)
                elif op == STORE_INDEX:
                    i = stack.pop()
                    obj = stack.pop()
                    v = stack.pop()
                    ops.set_index(obj, i, v)
                    if waiters:
                        host.changed(obj)
                elif op == JUMP_IF_TRUE:
                    v = stack.pop()
                    if v is True:
                        pc = arg
                    elif v is not False:
                        ops.condition(v)
                elif op == DIV:
                    b = stack.pop()
                    stack[-1] = ops.binop('/', stack[-1], b)
                elif op == FLOORDIV:
                    b = stack.pop()
                    stack[-1] = ops.binop('//', stack[-1], b)
                elif op == MOD:
                    b = stack.pop()
                    a = stack[-1]
                    if type(a) is int and type(b) is int and b:
                        stack[-1] = a % b
                    else:
                        stack[-1] = ops.binop('%', a, b)
                elif op == POW:
                    b = stack.pop()
                    stack[-1] = ops.binop('^', stack[-1], b)
                elif op == IN or op == NOT_IN:
                    c = stack.pop()
                    if reads is not None and isinstance(c, _TRACKED):
                        reads[id(c)] = c
                    r = ops.contains(c, stack[-1])
                    stack[-1] = r if op == IN else not r
                elif op == NEG:
                    a = stack[-1]
                    stack[-1] = -a if type(a) is int or type(a) is float else ops.negate(a)
                elif op == NOT:
                    stack[-1] = not ops.truthy(stack[-1])
                elif op == KNOWN:
                    stack[-1] = stack[-1] is not None
                elif op == DUP:
                    stack.append(stack[-1])
                elif op == ROT2:
                    stack[-1], stack[-2] = stack[-2], stack[-1]
                elif op == ROT3:
                    # a b c -> c a b
                    c = stack.pop()
                    stack.insert(-2, c)
                elif op == JUMP_IF_FALSE_OR_POP:
                    v = stack[-1]
                    if v is False:
                        pc = arg
                    elif v is True:
                        stack.pop()
                    else:
                        ops.condition(v)
                elif op == JUMP_IF_TRUE_OR_POP:
                    v = stack[-1]
                    if v is True:
                        pc = arg
                    elif v is False:
                        stack.pop()
                    else:
                        ops.condition(v)
                elif op == JUMP_IF_NOT_NONE_OR_POP:
                    if stack[-1] is not None:
                        pc = arg
                    else:
                        stack.pop()
                elif op == JUMP_IF_NOT_NONE:
                    if stack.pop() is not None:
                        pc = arg
                elif op == BUILD_LIST:
                    if arg:
                        items = stack[-arg:]
                        del stack[-arg:]
                    else:
                        items = []
                    stack.append(OList(items))
                elif op == BUILD_TUPLE:
                    if arg:
                        items = tuple(stack[-arg:])
                        del stack[-arg:]
                    else:
                        items = ()
                    stack.append(items)
                elif op == BUILD_MAP:
                    d = {}
                    if arg:
                        flat = stack[-2 * arg:]
                        del stack[-2 * arg:]
                        for j in range(0, 2 * arg, 2):
                            k = ops.map_key(flat[j])
                            v = flat[j + 1]
                            if v is None:
                                d.pop(k, None)
                            else:
                                d[k] = v
                    stack.append(OMap(d))
                elif op == BUILD_SET:
                    d = {}
                    if arg:
                        for x in stack[-arg:]:
                            if x is not None:
                                d[ops.map_key(x)] = None
                        del stack[-arg:]
                    stack.append(OSet(d))
                elif op == BUILD_SPAN:
                    b = stack.pop()
                    a = stack[-1]
                    stack[-1] = ops.make_span(a, b)
                elif op == BUILD_STRING:
                    if arg == 1:
                        continue
                    parts = stack[-arg:]
                    n = sum(map(len, parts))
                    if n > limits.MAX_STRING:    # before it is built
                        limits.check_string(n)
                    del stack[-arg:]
                    stack.append(''.join(parts))
                elif op == FORMAT:
                    v = stack[-1]
                    if reads is not None and isinstance(v, _TRACKED):
                        reads[id(v)] = v
                    s = v if type(v) is str else to_str(v)
                    if arg is not None and '\n' in s:
                        s = reindent(s, arg)
                    stack[-1] = s
                elif op == LIST_APPEND:
                    v = stack.pop()
                    acc = stack[-1 - arg]
                    if len(acc.items) >= limits.MAX_ITEMS:
                        limits.check_items(len(acc.items) + 1)
                    acc.items.append(v)
                    acc._p_changed = True   # it may be stored already (a checkpoint)
                elif op == MAP_ADD:
                    v = stack.pop()
                    k = ops.map_key(stack.pop())
                    acc = stack[-1 - arg]
                    acc.changed()       # not only _p_changed: OMap.added's promise ends
                    d = acc.d
                    if len(d) >= limits.MAX_ITEMS:
                        limits.check_items(len(d) + 1)
                    if v is None:
                        d.pop(k, None)
                    else:
                        d[k] = v
                elif op == SET_ADD:
                    v = stack.pop()
                    if v is not None:
                        acc = stack[-1 - arg]
                        if len(acc.d) >= limits.MAX_ITEMS:
                            limits.check_items(len(acc.d) + 1)
                        acc.d[ops.map_key(v)] = None
                        acc._p_changed = True
                elif op == GET_ITER:
                    src = stack[-1]
                    ts = type(src)
                    if reads is not None and isinstance(src, _TRACKED):
                        reads[id(src)] = src
                    if ts is Span:
                        if src.stop is not None and src.start is None:
                            stack[-1] = SpanIter(0, src.stop)
                        else:
                            stack[-1] = SpanIter(0 if src.start is None else src.start, src.stop)
                    elif ts is OList:
                        stack[-1] = SeqIter(list(src.items))
                    elif ts is OMap:
                        stack[-1] = SeqIter(list(src.d.values()), list(src.d))
                    elif ts is Function or ts is Builtin or ts is Curried:
                        if not arg:
                            raise OstError('cannot iterate over function here')
                        stack[-1] = ReactiveIter(src)
                    elif ts is OQueue:
                        if not arg:
                            raise OstError('cannot iterate over queue here')
                        stack[-1] = QueueIter(src)
                    else:
                        pairs = ops.iter_items(src)
                        stack[-1] = SeqIter([p[1] for p in pairs], [p[0] for p in pairs]
                                            if ts is OMap else None)
                elif op == JUMP_UNWIND:
                    ticks -= 1
                    if ticks < 0:
                        return self._pause(task, frame, pc - 1, callers, stack, locs)
                    target, hdepth, sdepth = arg
                    hs = frame.handlers if frame is not None else ()
                    while len(hs) > hdepth:
                        if type(hs.pop()) is str:
                            task.watch_depth -= 1
                            if task.watch_depth == 0:
                                V.record_fresh(False)
                    del stack[sdepth:]
                    pc = target
                elif op == MAKE_FUNCTION:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    V.share(frame)
                    stack.append(Function(arg, frame, module))
                elif op == DEF_GLOBAL:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    self._def_global(frame, module, arg)
                elif op == CURRY:
                    _curry(stack, arg)
                elif op == SETUP_TRY:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    hs = frame.handlers
                    if type(hs) is tuple:
                        hs = frame.handlers = []
                    hs.append((arg, len(stack)))
                elif op == POP_TRY:
                    frame.handlers.pop()
                elif op == LOAD_SPECIAL:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    if arg == 'goal':
                        stack.append(frame.goal if frame.goal is not None else module)
                    elif arg == 'caller':
                        V.share(frame.caller)
                        stack.append(frame.caller)
                    else:
                        V.share(frame.parent)
                        stack.append(frame.parent)
                elif op == TYPE:
                    self._define_type(stack, arg, module)
                elif op == IMPORT:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    r = self._import(task, frame, pc, arg)
                    if r is not None:
                        return r
                elif op == FROM_IMPORT:
                    m = stack[-1]
                    v = m.ns.get(arg)
                    if v is None:
                        raise OstError("module '%s' has no name '%s'" % (m.name, arg))
                    stack[-1] = v
                elif op == SPAWN:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    self._spawn_op(task, frame, pc, arg)
                elif op == WATCH_BEGIN:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    if task.watch_depth == 0:
                        task.reads = {}
                        # Only while some task waits are changes reported,
                        # and so the escapes of what it makes (values.fresh).
                        V.record_fresh(bool(waiters))
                    task.watch_depth += 1
                    hs = frame.handlers
                    if type(hs) is tuple:
                        hs = frame.handlers = []
                    hs.append(WATCH)
                    reads = task.reads
                elif op == WATCH_END_UNTIL or op == WATCH_END_WHILE or op == WATCH_END_BANG:
                    if frame is None:
                        frame = _materialize(callers, stack, locs)
                    r = self._watch_end(task, frame, op, arg)
                    reads = task.reads
                    if r is not None:
                        return r
                elif op == LOAD_GLOBAL_NS:
                    stack.append(ns.get(arg))
                else:
                    raise OstError('internal error: bad opcode %r' % (op,))
        except (OstError, OstRaise, RecursionError, Suspend) as e:
            if frame is None:
                frame = _materialize(callers, stack, locs)
            frame.pc = pc
            frame._p_changed = True
            task.frame = frame
            if type(e) is Suspend:
                if not task.watch_depth:
                    return ('suspend', e.request)
                e = OstError('cannot wait while evaluating a watched expression')
            if type(e) is OstRaise:
                value = e.value
            elif type(e) is RecursionError:
                value = make_error('internal error: recursion too deep', where_of(frame, pc - 1))
            else:
                value = make_error(e.message, where_of(frame, pc - 1))
            task.raised_at = where_of(frame, pc - 1)
            self._raise(task, frame, pc, value)
        except _Unwound:
            raise
        except _TaskOver:
            raise
        except Exception as e:  # a bug in the VM: report it at the Ostinato location
            if frame is None:
                frame = _materialize(callers, stack, locs)
            frame.pc = pc
            task.frame = frame
            task.raised_at = where_of(frame, max(pc - 1, 0))
            value = make_error('internal error: %s: %s' % (type(e).__name__, e),
                               where_of(frame, max(pc - 1, 0)))
            task.internal_error = True
            self._raise(task, frame, pc, value)

    # ---------------------------------------------- rare instructions
    # The bodies of instructions that run seldom (once per definition,
    # import, spawn, wait or queue item), kept out of the loop as clox keeps
    # callValue out of its switch, so that the loop holds the frequent ones.
    # Those that need the frame get it made (`_materialize`) by the loop.

    def _def_global(self, frame, module, arg):
        """DEF_GLOBAL: bind a top-level `def` in the module."""
        fcode, name = arg
        ns = module.ns
        old = ns.get(name)
        V.share(frame)
        if type(old) is Function and old.code.qualname == fcode.qualname \
                and old.module is module:
            # An upgrade (or a re-run of the top level) replaces the code in
            # place, so stored references call the new version.
            old.code = fcode
            old.parent = frame
            forget_layout(old)
        else:
            ns[name] = Function(fcode, frame, module)
        module._p_changed = True
        if self.host.waiters:
            self.host.changed(module)

    def _define_type(self, stack, arg, module):
        """TYPE: the type's defaults, supertypes and previous value (an
        upgrade changes the type in place) are on the stack."""
        name, nsupers, fields, blurb = arg
        ndefaults = sum(1 for f in fields if f[2])
        defaults = stack[-ndefaults:] if ndefaults else []
        if ndefaults:
            del stack[-ndefaults:]
        supers = None
        if nsupers is not None:
            supers = stack[-nsupers:] if nsupers else []
            if nsupers:
                del stack[-nsupers:]
        old = stack.pop()
        stack.append(self.make_type(old, name, supers, fields, defaults, blurb, module))

    def _import(self, task, frame, pc, name):
        """IMPORT: push the module, or suspend while the host loads it."""
        frame.pc = pc
        task.frame = frame
        m = self.host.import_module(self, task, name, frame)
        if m is None:
            return ('suspend', R.Import(name))
        frame.stack.append(m)
        return None

    def _spawn_op(self, task, frame, pc, arg):
        """SPAWN: `spawn f(args)` or `spawn(f, args)`; pushes the new task."""
        nargs, kwnames, builtin_form = arg
        stack = frame.stack
        total = nargs + len(kwnames)
        argv = stack[-total:] if total else []
        if total:
            del stack[-total:]
        f = stack.pop()
        kwargs = dict(zip(kwnames, argv[nargs:]))
        argv = argv[:nargs]
        if builtin_form:
            if not argv:
                raise OstError('spawn() needs a function')
            f = argv.pop(0)
        frame.pc = pc
        task.frame = frame
        stack.append(self.spawn(f, argv, kwargs))

    def _watch_end(self, task, frame, op, arg):
        """WATCH_END_UNTIL, _WHILE, _BANG: the end of a watched evaluation.
        Returns None to go on, or a suspension until what it read changes
        (the loop then resumes at `arg`, which evaluates it again)."""
        stack = frame.stack
        v = stack[-1]
        if op == WATCH_END_BANG:
            ok = v is not None
        else:
            if v is not True and v is not False:
                ops.condition(v)
            ok = v if op == WATCH_END_UNTIL else not v
            stack.pop()
        frame.handlers.pop()
        task.watch_depth -= 1
        got = task.reads
        made = None
        if task.watch_depth == 0:
            task.reads = None
            made = V.record_fresh(False)
        if ok:
            return None
        if task.watch_depth > 0:
            raise OstError('cannot wait while evaluating a watched expression')
        if op == WATCH_END_BANG:
            stack.pop()
        frame.pc = arg
        frame._p_changed = True
        task.frame = frame
        objs, defs = watched_objects(got, made)
        return ('suspend', R.Change(objs, defs))

    def _wait_for_item(self, task, frame, pc, q):
        """FOR_ITER over an empty queue: suspend until an item comes."""
        frame.pc = pc
        task.frame = frame
        self.check_may_wait(task)
        return ('suspend', R.Take(q))

    def _reactive_for(self, task, frame, pc, it):
        """FOR_ITER of a reactive loop (`it` is on top of the stack, or under
        the value its function's watched call returned): `reactive_step`."""
        if type(it) is not ReactiveIter:
            stack = frame.stack
            if len(stack) > 1 and type(stack[-2]) is ReactiveIter \
                    and stack[-2].state == 'eval':
                # The watched call of a reactive loop's function returned
                # its value on top of the iterator.
                it = stack[-2]
            else:
                raise OstError('bad iterator')
        frame.pc = pc - 1
        task.frame = frame
        return self.reactive_step(task, frame, it)

    # -------------------------------------------------------------- helpers
    def check_may_wait(self, task):
        if task.watch_depth:
            raise OstError('cannot wait while evaluating a watched expression')

    def call_builtin(self, f, argv, kwargs):
        params = f.params
        if kwargs:
            if f.varargs:
                if f.name != 'print' or kwargs:
                    k = next(iter(kwargs))
                    raise OstError("%s() has no parameter '%s'" % (f.name, k))
            argv = list(argv)
            for k, v in kwargs.items():
                try:
                    i = params.index(k)
                except ValueError:
                    raise OstError("%s() has no parameter '%s'" % (f.name, k)) from None
                if i < len(argv) and argv[i] is not _MISSING:
                    raise OstError("%s() got two values for parameter '%s'" % (f.name, k))
                while len(argv) <= i:
                    argv.append(_MISSING)
                argv[i] = v
            argv = [None if a is _MISSING else a for a in argv]
        if not f.varargs:
            n = len(params)
            if len(argv) > n:
                raise OstError('%s() takes %d positional argument%s but %d %s given' % (
                    f.name, n, '' if n == 1 else 's', len(argv), 'was' if len(argv) == 1 else 'were'))
            if len(argv) < n:
                argv = list(argv) + [None] * (n - len(argv))
        if f.ctx:
            return f.fn(self, *argv)
        return f.fn(*argv)

    def call_other(self, f, tf, argv, kwargs, callee_name, reads):
        if tf is OType:
            if argv:
                raise OstError('%s() takes keyword arguments only' % f.name)
            return ops.construct(f, kwargs)
        if tf is OList or tf is tuple or tf is OMap:
            if len(argv) == 1 and not kwargs:
                if reads is not None and tf is not tuple:
                    reads[id(f)] = f
                return ops.get_index(f, argv[0])
            raise OstError('%s is not callable' % kind(f))
        if f is None:
            if callee_name is not None:
                raise OstError("name '%s' is not defined" % callee_name)
            raise OstError('none is not callable')
        raise OstError('%s is not callable' % kind(f))

    def spawn(self, f, args, kwargs):
        if f is None:
            raise OstError('none is not callable')
        if not V.is_callable(f) and type(f) not in (OList, OMap, tuple):
            raise OstError('%s is not callable' % kind(f))
        V.escape()      # what a watched evaluation made may go to the new task
        return self.host.spawn(self, f, args, kwargs)

    def finish_task(self, task, value):
        task.result = value
        task.done = True
        task.state = 'done'
        if self.host.waiters:
            self.host.changed(task)

    def make_type(self, old, name, supers, fields, defaults, blurb, module):
        for s in supers or ():
            if type(s) is not OType:
                raise OstError('%s is not a type' % display(s))
            if type(old) is OType and s.is_subtype_of(old):
                # Amending `type A in B` where B is A or below it: every
                # field lookup would go round the cycle forever.
                raise OstError('type %s cannot be in %s: %s is %s or one of its subtypes'
                               % (name, s.name, s.name, name))
        if type(old) is OType:
            t = old
            if supers is not None:
                t.supers = list(supers)
        else:
            t = OType(name, supers or (), module)
        di = iter(defaults)
        for mode, fname, has_default in fields:
            t.declare(mode, fname, next(di) if has_default else None)
        if blurb is not None:
            t.summary, t.details = blurb
        t._p_changed = True
        return t

    def reactive_step(self, task, frame, it):
        """One step of a reactive for loop whose FOR_ITER is at frame.pc.
        Returns None when a watched call of the function was pushed (the loop
        continues in the new frame), 'body' when the next value was pushed, or a
        suspend status."""
        st = it.state
        if st == 'eval':
            v = frame.stack.pop()
            hs = frame.handlers
            hs.pop()               # the watch marker
            task.watch_depth -= 1
            got = task.reads
            task.reads = None
            objs, defs = watched_objects(got, V.record_fresh(False))
            it.token = self.host.watch(task, list(objs), defs)
            if not it.has_last or not ops.equal(v, it.last):
                it.last = v
                it.has_last = True
                it.state = 'idle'
                frame.stack.append(v)
                return 'body'
            st = it.state = 'idle'
        if st == 'idle':
            if it.token is not None and not it.token.dirty:
                self.check_may_wait(task)
                return ('suspend', R.Token(it.token))
            st = 'dirty'
        # 'new' or 'dirty': evaluate f() watched.
        self.check_may_wait(task)
        if it.token is not None:
            self.host.unwatch(it.token)
            it.token = None
        it.state = 'eval'
        task.watch_depth += 1
        task.reads = {}
        V.record_fresh(bool(self.host.waiters))
        hs = frame.handlers
        if type(hs) is tuple:
            hs = frame.handlers = []
        hs.append(WATCH)
        f = it.f
        if type(f) is Function:
            fr = self.bind(f, [], {}, frame, None)
            task.frame = fr
            return None
        # A built-in or curried callee runs at once.
        try:
            v = self.call_value_now(f)
        except OstError:
            raise
        frame.stack.append(v)
        return self.reactive_step(task, frame, it)

    def call_value_now(self, f):
        args, kwargs = [], {}
        while type(f) is Curried:
            args = list(f.args) + args
            kwargs = dict(f.kwargs, **kwargs)
            f = f.func
        if type(f) is Builtin:
            return self.call_builtin(f, args, kwargs)
        raise OstError('cannot iterate over %s' % kind(f))


_TRACKED = (OList, OMap, OSet, OObject, OModule, Task, OQueue)


def _reads_a_val(obj, name):
    """Whether `obj.name` is a `val` field of an object: set when the object
    is made and never again (ops.set_field refuses it), so a wait that
    reads it need not watch the object for it.  A chat dialogue's wait
    reads the last message's sender; watching that message wrote it again
    when the watch ended (issue 28: records per message)."""
    if type(obj) is not OObject:
        return False
    f = obj.type.lookup(name)
    return f is not None and f[0] == 'val'


_IMMUTABLE = frozenset([type(None), bool, int, float, str, tuple])


def _as_stored(frame):
    """(frame, a copy of its locals) when `frame` is stored and unchanged
    since its last commit (so its locals are the stored ones), else None."""
    if frame is None or frame._p_oid is None or frame._p_jar is None or frame._p_changed:
        return None
    return (frame, list(frame.locals))


def _same_locals(locs, stored):
    """The locals `locs` are those `stored`: the same values, each immutable
    or a record of its own (so nothing inside the frame's record changed)."""
    if len(locs) != len(stored):
        return False
    for a, b in zip(locs, stored):
        if a is not b or not (type(a) in _IMMUTABLE or isinstance(a, Persistent)):
            return False
    return True


def watched_objects(reads, made):
    """What a watch covers: (the objects a watched evaluation read (`reads`,
    id -> object), less those it made itself (`made`, values.record_fresh's
    record; None when it could not keep one); the modules of which it read
    only definitions (kept under negative ids: values.note_global))."""
    objs = []
    defs = []
    for k, o in reads.items():
        if k < 0:
            if -k not in reads:
                defs.append(o)
        elif not made or k not in made:
            objs.append(o)
    return tuple(objs), tuple(defs)


def _take(q, stack, waiters, host):
    """FOR_ITER over a queue: push its first item and return True, or
    return False when it is empty."""
    items = q.items
    if not items:
        return False
    stack.append(items.pop(0))
    q._p_changed = True
    if waiters:
        host.changed(q)
    return True


def _curry(stack, arg):
    """CURRY: `f{a, k = v}` -- a Curried in f's place on the stack."""
    nargs, kwnames = arg
    total = nargs + len(kwnames)
    argv = stack[-total:] if total else []
    if total:
        del stack[-total:]
    f = stack[-1]
    if f is None:
        raise OstError('none is not callable')
    if not V.is_callable(f) and type(f) not in (OList, OMap, tuple):
        raise OstError('%s is not callable' % kind(f))
    stack[-1] = Curried(f, argv[:nargs], dict(zip(kwnames, argv[nargs:])))
_MUTATORS = frozenset(['append', 'extend', 'insert', 'pop', 'truncate', '__set_read_upto__'])


class _Unwound(Exception):
    """Internal: an error was caught by a try handler; re-enter the loop."""


class _TaskOver(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


def reindent(s, w):
    """docs/language.md §3.4: insert w after every line break that is followed by a
    character other than a line break."""
    lines = s.split('\n')
    n = len(s) + len(w) * sum([1 for ln in lines[1:] if ln])
    if n > limits.MAX_STRING:
        limits.check_string(n)
    return '\n'.join([lines[0]] + [(w + ln) if ln else ln for ln in lines[1:]])


def goal_name(frame):
    g = frame.goal
    if g is None:
        return frame.code.name
    if type(g) is OModule:
        return g.name
    return g.code.name


def callable_name(f):
    while type(f) is Curried:
        f = f.func
    if type(f) is Function:
        return f.code.name
    return getattr(f, 'name', kind(f))


def trampoline_code(nargs, kwnames, filename, line, col):
    """Code for a task whose bottom call is not an Ostinato function (e.g.
    `spawn print(x)`): the frame's stack holds the callee and the arguments,
    and the code calls it and returns.  Positions are the spawn site's."""
    from ..compiler.code import Code
    return Code('<spawn>', 'spawn', filename, line, col,
                [(CALL, (nargs, tuple(kwnames), None)), (RETURN, None)],
                [(line, col), (line, col)], (), ())
