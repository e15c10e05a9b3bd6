"""Closure-threaded straight-line code (DESIGN.md §2, "Speed without losing
the stop-anywhere property").

Dispatching one instruction at a time is most of the loop's cost in
arithmetic and loops.  This module translates each run of simple
instructions -- loads, stores, int arithmetic, comparisons, conditional and
plain jumps -- into one generated Python function, a *block*, and gives the
loop a process-local copy of a Code's instructions in which the first
instruction of each block is replaced by `(RUN_BLOCK, function)`.  The copy
lives in volatile attributes of the Code (`_v_run`, `_v_call`) and of the
Functions that run it (`_v_call`): it is never stored, and is rebuilt after a
restart or when the database drops the object from memory.

A block keeps the values that its instructions would push in Python
variables and returns the pc to go on at.  It never raises and never stops
midway: where an instruction would take its general path (an operand that is
not an int, a condition that is not a bool), the block pushes what the
instructions before it left on the value stack and returns that
instruction's pc, so the plain instruction runs next and computes the
general case or reports the error at its own position.  Before and after a
block the frame (pc, value stack, locals) is exactly what the plain
instructions leave, so the loop may stop at any block boundary.

A block may also end at a CALL with positional arguments only, or at a
return, and hand the callee and arguments, or the returned value, straight
to the loop (see RUN_BLOCK).  Where it jumps forward to a short block, it
goes on with a copy of that block's code instead of returning, so that an
`if`/`else`, or a test and the call after it, runs as one block.
"""
from __future__ import annotations

from ..compiler.code import (ADD, CALL, CONST, DUP, EQ, FOR_ITER, GE, GT, JUMP, JUMP_IF_FALSE,
                             JUMP_IF_FALSE_OR_POP, JUMP_IF_NOT_NONE,
                             JUMP_IF_NOT_NONE_OR_POP, JUMP_IF_TRUE, JUMP_IF_TRUE_OR_POP,
                             JUMP_UNWIND, KNOWN, LE, LOAD_GLOBAL, LOAD_LOCAL, LT, MOD, MUL, NE,
                             NOT, POP, RETURN, RETURN_CONST, RETURN_LOCAL, SETUP_TRY,
                             STORE_GLOBAL, STORE_LOCAL, SUB,
                             WATCH_END_BANG, WATCH_END_UNTIL, WATCH_END_WHILE)
from . import limits, ops
from . import values as V
from .values import BUILTINS

# Only in the loop's copy of the instructions, never in a Code.  The block
# function returns:
#   an int                 the pc to go on at;
#   None                   its first instruction takes its general path: the
#                          loop runs that plain instruction;
#   a tuple (callee, [arguments], pc of the CALL, number of arguments)
#                          at a CALL: the loop makes the call from them (or
#                          pushes them back and runs the plain CALL);
#   a list [value, pc after the return instruction]
#                          at RETURN, RETURN_LOCAL or RETURN_CONST: the loop
#                          returns the value from the frame.
RUN_BLOCK = -1

SIMPLE = frozenset([LOAD_LOCAL, CONST, LOAD_GLOBAL, STORE_LOCAL, STORE_GLOBAL, POP, DUP,
                    ADD, SUB, MUL, MOD, LT, LE, GT, GE, EQ, NE, NOT, KNOWN,
                    JUMP_IF_FALSE, JUMP_IF_TRUE, JUMP])

# Where control can arrive other than from the instruction before: the
# targets of these instructions start blocks (a jump into the middle of a
# block would still be right -- it runs the plain instructions -- only slower).
_TARGET_IS_ARG = (JUMP, JUMP_IF_FALSE, JUMP_IF_TRUE, JUMP_IF_FALSE_OR_POP,
                  JUMP_IF_TRUE_OR_POP, JUMP_IF_NOT_NONE_OR_POP, JUMP_IF_NOT_NONE, SETUP_TRY,
                  WATCH_END_BANG, WATCH_END_UNTIL, WATCH_END_WHILE)
_TARGET_IS_ARG0 = (FOR_ITER, JUMP_UNWIND)

MAX_BLOCK = 200    # instructions per block, to bound the generated code
# A forward jump goes on with a copy of the target's block when that block
# covers at most this many instructions.  Copies do not copy further, so a
# block's code grows by at most this much per jump.
MAX_INLINE = 16

_RETURNS = (RETURN, RETURN_LOCAL, RETURN_CONST)

_BINARY = {ADD: '+', SUB: '-', MUL: '*', MOD: '%', LT: '<', LE: '<=', GT: '>', GE: '>='}
_COMPARES = (LT, LE, GT, GE)


class UnrunnableCode(Exception):
    """Stored code of a bytecode version this Ostinato cannot run
    (compiler.code.bytecode_problem).  Not an Ostinato error: the task
    cannot go on at all, so it leaves the VM and the runtime stops the task
    with a message saying what to do."""

    def __init__(self, code, problem):
        super().__init__('%s in %s: %s' % (code.name, code.filename, problem))
        self.code = code
        self.problem = problem


def runnable(code):
    """The instructions the loop runs for `code` (see the module doc)."""
    try:
        return code._v_run
    except AttributeError:
        return call_layout(code)[0]


def call_layout(code):
    """(runnable instructions, nparams, nlocals): what a call of `code` reads,
    kept as one volatile attribute so that a call reads one attribute of the
    (persistent) Code instead of three."""
    try:
        return code._v_call
    except AttributeError:
        problem = getattr(code, '_v_unrunnable', None)
        if problem is not None:
            raise UnrunnableCode(code, problem) from None
        run = code._v_run = translate(code.instrs)
        layout = code._v_call = (run, code.nparams, code.nlocals)
        return layout


def function_layout(f):
    """(code, runnable instructions, nparams, nlocals, module): what a fast call
    of the Function `f` reads, kept in a volatile attribute of `f` so that the
    call reads one attribute of one persistent object.  Whoever gives `f` other
    code drops it (`forget_layout`); so does the database, with the rest of
    `f`'s state, when `f` changes elsewhere."""
    code = f.code
    run, nparams, nlocals = call_layout(code)
    layout = f._v_call = (code, run, nparams, nlocals, f.module)
    return layout


def forget_layout(f):
    try:
        del f._v_call
    except AttributeError:
        pass


def translate(instrs):
    """The loop's copy of `instrs`: a list, since blocks are compiled into it
    as they first run."""
    run = list(instrs)
    n = len(instrs)
    starts = {0}
    for i, (op, arg) in enumerate(instrs):
        if op in _TARGET_IS_ARG:
            starts.add(arg)
        elif op in _TARGET_IS_ARG0:
            starts.add(arg[0])
        if op not in SIMPLE:
            starts.add(i + 1)
    todo = sorted(s for s in starts if s < n)
    done = set()
    while todo:
        s = todo.pop()
        if s in done or instrs[s][0] not in SIMPLE:
            continue
        done.add(s)
        block = _Block(instrs, s, starts)
        covered, after = block.build()
        if after is not None and after < n:
            todo.append(after)
        # One instruction runs as fast on its own, unless the block saves a
        # call or a return its dispatch.
        if covered >= 2 or block.hands_over:
            run[s] = (RUN_BLOCK, _compile_on_first_run(run, s, block))
    return run


def _compile_on_first_run(run, start, block):
    """A stand-in for the block's function that compiles it when it first runs
    (compiling is most of the cost of a translation; much code runs once or
    never) and puts it in its place."""
    def first_run(stack, locs, ns, module, reads, waiters, host):
        fn = block.function()
        run[start] = (RUN_BLOCK, fn)
        return fn(stack, locs, ns, module, reads, waiters, host)
    return first_run


class _Block:
    """Generates the function for the block starting at `start`."""

    def __init__(self, instrs, start, starts, copy=False):
        self.instrs = instrs
        self.start = start
        self.starts = starts
        self.lines = []
        self.env = {'unbound_global': _unbound_global, 'equal': ops.equal,
                    'note_global': V.note_global,
                    'truthy': ops.truthy,
                    # Operands past these bounds take the general path, which
                    # holds results to vm/limits.py.
                    'half_int': 1 << (limits.MAX_INT_BITS // 2),
                    'max_string': limits.MAX_STRING}
        self.vstack = []      # (python expression, kind): the values pushed so far
        self.ntemps = 0
        self.read_module = False
        self.hands_over = False   # some path hands a call or a return to the loop
        self.indent = 0       # added to every emitted line's indent
        self.copying = copy   # generating a copy of a jump target's block

    # --------------------------------------------------------------- helpers
    def emit(self, line, indent=1):
        self.lines.append('    ' * (self.indent + indent) + line)

    def temp(self):
        self.ntemps += 1
        return 't%d' % self.ntemps

    def const(self, value):
        name = 'k%d' % len(self.env)
        self.env[name] = value
        return name

    def pull(self, count):
        """Make sure the top `count` values are in variables: the ones the block
        has not pushed itself come off the real stack."""
        while len(self.vstack) < count:
            t = self.temp()
            self.emit('%s = stack.pop()' % t)
            self.vstack.insert(0, (t, None))

    def pop(self):
        self.pull(1)
        return self.vstack.pop()

    def leave_values(self, vs, indent=1):
        """Lines that push the values in `vs` (vstack entries) on the stack."""
        if len(vs) == 1:
            self.emit('stack.append(%s)' % vs[0][0], indent)
        elif vs:
            self.emit('stack.extend((%s,))' % ', '.join(e for e, _ in vs), indent)

    def leave(self, pc, indent=1, vstack=None, general=False):
        """Lines that push the block's values and return `pc`; `general`: to run
        the plain instruction at pc, which takes its general path."""
        self.leave_values(self.vstack if vstack is None else vstack, indent)
        # None: the block's own first instruction, which the loop then runs plainly.
        self.emit('return %s' % (None if general and pc == self.start else pc), indent)

    def leave_for_call(self, pc, nargs):
        """Lines that end the block before the CALL at `pc`: what lies below
        the callee goes on the stack, the callee and its arguments are
        returned (the loop pushes them back if it takes the general way)."""
        self.pull(nargs + 1)
        vs = self.vstack
        self.leave_values(vs[:-(nargs + 1)])
        self.emit('return (%s, [%s], %d, %d)' % (
            vs[-(nargs + 1)][0], ', '.join(e for e, _ in vs[-nargs:]) if nargs else '',
            pc, nargs))

    def leave_for_return(self, pc, op, arg):
        """Lines that end the block with the return instruction at `pc`: what
        the block pushed below the returned value goes on the stack, as the
        plain instructions would leave it, and (value, pc after) is returned."""
        if op == RETURN:
            self.pull(1)
            e = self.vstack.pop()[0]
            after = pc + 1
        else:       # fused: the RETURN after it stays in place
            e = 'locs[%d]' % arg if op == RETURN_LOCAL else self.const(arg)
            after = pc + 2
        self.leave_values(self.vstack)
        self.emit('return [%s, %d]' % (e, after))

    def guard(self, pc, test):
        """Go the general way (the plain instruction at pc) unless `test` holds."""
        if test != 'True':
            self.emit('if not (%s):' % test)
            self.leave(pc, 2, general=True)

    # --------------------------------------------------------------- build
    def build(self):
        """Generate the block: (instructions it covers, pc where the next
        block may start or None)."""
        return self.run_from(self.start)

    def run_from(self, start):
        """Generate the straight-line code from `start` (the block's own start,
        or a jump target being copied) to where it ends."""
        instrs = self.instrs
        pc = start
        while True:
            op, arg = instrs[pc]
            if op not in SIMPLE or (pc != start and pc in self.starts) \
                    or pc - start >= MAX_BLOCK:
                if op == CALL and not arg[1] and pc != start and pc not in self.starts:
                    self.leave_for_call(pc, arg[0])
                    self.hands_over = True
                elif op in _RETURNS and pc != start and pc not in self.starts:
                    self.leave_for_return(pc, op, arg)
                    self.hands_over = True
                else:
                    self.leave(pc)
                return pc - start, pc
            nxt = self.step(pc, op, arg)
            if nxt is None:          # a jump that ends the block
                return pc + 1 - start, None
            if nxt == pc:            # never fast here: the plain instruction runs
                self.leave(pc)
                return pc - start, pc + 1
            pc = nxt

    def jump(self, pc, target, indent):
        """Lines for the jump at `pc` to `target`: return the target, or go on
        with a copy of the target's block (see MAX_INLINE)."""
        if self.copying or target <= pc or self.instrs[target][0] not in SIMPLE:
            self.leave(target, indent)
            return
        probe = _Block(self.instrs, target, self.starts, copy=True)
        probe.vstack = list(self.vstack)
        covered, _ = probe.build()
        if covered > MAX_INLINE:
            self.leave(target, indent)
            return
        # The copy goes on from the values this block holds; every path of it
        # ends in a return, so what follows the jump sees the state as it was.
        saved = self.vstack, self.read_module, self.indent
        self.vstack = list(self.vstack)
        self.copying = True
        self.indent += indent - 1
        self.run_from(target)
        self.vstack, self.read_module, self.indent = saved
        self.copying = False

    def function(self):
        src = 'def block(stack, locs, ns, module, reads, waiters, host):\n' + \
            '\n'.join(self.lines) + '\n'
        exec(compile(src, '<block %d>' % self.start, 'exec'), self.env)
        return self.env['block']

    def step(self, pc, op, arg):
        """Generate one instruction.  Returns the next pc; None after a jump
        that ends the block; `pc` itself when the instruction never takes its
        fast path with these operands (the block then ends before it)."""
        vs = self.vstack
        if op == LOAD_LOCAL:
            t = self.temp()
            self.emit('%s = locs[%d]' % (t, arg))
            vs.append((t, None))
        elif op == CONST:
            vs.append((self.const(arg), _kind(arg)))
        elif op == LOAD_GLOBAL:
            t = self.temp()
            k = self.const(arg)
            self.emit('%s = ns.get(%s)' % (t, k))
            # A watched evaluation notes what it reads: the module, as a
            # variable or for its definitions (values.note_global).
            self.emit('if reads is not None:')
            self.emit('note_global(reads, module, %s)' % t, 2)
            self.emit('if %s is None:' % t)
            self.emit('%s = unbound_global(%s)' % (t, k), 2)
            vs.append((t, None))
        elif op == STORE_LOCAL:
            e, _ = self.pop()
            self.emit('locs[%d] = %s' % (arg, e))
        elif op == STORE_GLOBAL:
            e, kind = self.pop()
            k = self.const(arg)
            old = self.temp()
            self.emit('%s = ns.get(%s) if waiters else None' % (old, k))
            val = self.temp()
            self.emit('%s = %s' % (val, e))
            e = val
            if kind in ('int', 'bool', 'str'):
                self.emit('ns[%s] = %s' % (k, e))
            else:
                self.emit('if %s is None:' % e)
                self.emit('ns.pop(%s, None)' % k, 2)
                self.emit('else:')
                self.emit('ns[%s] = %s' % (k, e), 2)
            self.emit('module._p_changed = True')
            self.emit('if waiters:')
            self.emit('host.changed_global(module, %s, %s)' % (old, e), 2)
        elif op == POP:
            self.pop()
        elif op == DUP:
            self.pull(1)
            vs.append(vs[-1])
        elif op in _BINARY:
            return self.binary(pc, op)
        elif op == EQ or op == NE:
            self.pull(2)
            (x, kx), (y, ky) = vs[-2:]
            del vs[-2:]
            t = self.temp()
            if kx == ky and kx in ('int', 'str'):
                self.emit('%s = %s %s %s' % (t, x, '==' if op == EQ else '!=', y))
            else:
                self.emit('%s = %sequal(%s, %s)' % (t, '' if op == EQ else 'not ', x, y))
            vs.append((t, 'bool'))
        elif op == NOT:
            e, kind = self.pop()
            t = self.temp()
            self.emit('%s = not %s' % (t, e if kind == 'bool' else 'truthy(%s)' % e))
            vs.append((t, 'bool'))
        elif op == KNOWN:
            e, _ = self.pop()
            t = self.temp()
            self.emit('%s = %s is not None' % (t, e))
            vs.append((t, 'bool'))
        elif op == JUMP_IF_FALSE or op == JUMP_IF_TRUE:
            self.pull(1)
            e, kind = vs.pop()
            if kind == 'bool':
                self.emit('if %s%s:' % ('not ' if op == JUMP_IF_FALSE else '', e))
                self.jump(pc, arg, 2)
            else:
                jump_on, go_on = ('False', 'True') if op == JUMP_IF_FALSE else ('True', 'False')
                self.emit('if %s is %s:' % (e, jump_on))
                self.jump(pc, arg, 2)
                self.emit('if %s is not %s:' % (e, go_on))
                # Not a bool: the plain jump reports it.
                self.leave(pc, 2, vs + [(e, kind)], general=True)
        elif op == JUMP:
            self.jump(pc, arg, 1)
            return None
        return pc + 1

    def binary(self, pc, op):
        """+ - * % and the orderings on two ints, + and the orderings on two
        strings too; anything else is the plain instruction's general case."""
        vs = self.vstack
        self.pull(2)
        (x, kx), (y, ky) = vs[-2:]
        alternatives = []
        for want in (('int', 'str') if op == ADD or op in _COMPARES else ('int',)):
            if kx in (want, None) and ky in (want, None):
                tests = ['type(%s) is %s' % (e, want) for e, k in ((x, kx), (y, ky)) if k is None]
                if op == MUL:
                    tests += ['-half_int < %s < half_int' % e for e in (x, y)]
                elif op == ADD and want == 'str':
                    tests.append('len(%s) + len(%s) <= max_string' % (x, y))
                if op == MOD:
                    if y in self.env:         # a constant divisor
                        if self.env[y] == 0:
                            continue
                    else:
                        tests.append(y)
                alternatives.append((want, ' and '.join(tests) or 'True'))
        if not alternatives:
            return pc
        if len(alternatives) == 1:
            self.guard(pc, alternatives[0][1])
        else:
            self.guard(pc, ' or '.join('(%s)' % t for _, t in alternatives))
        del vs[-2:]
        if op == ADD and 'str' in [w for w, _ in alternatives] and self.append_in_place(pc, x, y):
            return pc + 2
        t = self.temp()
        self.emit('%s = %s %s %s' % (t, x, _BINARY[op], y))
        if op in _COMPARES:
            kind = 'bool'
        else:
            kind = alternatives[0][0] if len(alternatives) == 1 else None
        vs.append((t, kind))
        return pc + 1

    def append_in_place(self, pc, x, y):
        """`s = s + t` stored to a local: with the local's reference dropped
        first, CPython extends a string in place, so a loop that builds a
        string stays linear (for ints `+=` is just `+`).  Only when nothing
        else in the block holds the left operand."""
        op, slot = self.instrs[pc + 1]
        if op != STORE_LOCAL or pc + 1 in self.starts or x in self.env \
                or any(e == x for e, _ in self.vstack):
            return False
        self.emit('if locs[%d] is %s:' % (slot, x))
        self.emit('locs[%d] = None' % slot, 2)
        self.emit('%s += %s' % (x, y))
        self.emit('locs[%d] = %s' % (slot, x))
        return True


def _kind(v):
    t = type(v)
    if t is int:
        return 'int'
    if t is bool:
        return 'bool'
    if t is str:
        return 'str'
    return None if v is None else 'other'


def _unbound_global(name):
    """What LOAD_GLOBAL pushes for a name its module does not bind."""
    v = BUILTINS.get(name)
    if v is None and name == 'Error':
        v = V.ERROR_TYPE
    return v
