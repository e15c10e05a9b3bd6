"""The compiler: our AST in, immutable `Code` objects out.

It emits loads from the bindings the resolver recorded (compiler/resolve.py:
a name is local to the function whose body binds it; otherwise an enclosing
function's local, else a module variable or a built-in), makes the checks
that need scope knowledge (break/continue/return placement, assignments to
the frame names), and generates code for a stack machine whose frames are
plain data (see vm.interp).
"""
from __future__ import annotations

import hashlib
import sys
from contextlib import contextmanager

from ..syntax import ast as A
from ..syntax.errors import OstSyntaxError
from .code import *
from .code import Code
from .peephole import fuse
from .resolve import SPECIAL, resolve

LOADS = {'local': LOAD_LOCAL, 'outer': LOAD_OUTER, 'global': LOAD_GLOBAL, 'special': LOAD_SPECIAL}
BINOPS = {'+': ADD, '-': SUB, '*': MUL, '/': DIV, '//': FLOORDIV, '%': MOD, '^': POW}
CMPOPS = {'<': LT, '<=': LE, '>': GT, '>=': GE, '==': EQ, '!=': NE, 'in': IN, 'not in': NOT_IN}


class Label:
    __slots__ = ('pc',)

    def __init__(self):
        self.pc = None


class Loop:
    __slots__ = ('kind', 'label', 'brk', 'cont', 'hdepth', 'sdepth_in', 'sdepth_out')

    def __init__(self, kind, label, brk, cont, hdepth, sdepth_in, sdepth_out):
        self.kind, self.label, self.brk, self.cont = kind, label, brk, cont
        self.hdepth, self.sdepth_in, self.sdepth_out = hdepth, sdepth_in, sdepth_out


class FunctionCompiler:
    def __init__(self, comp, scope, name, kind, node, qualname):
        self.comp = comp
        self.scope = scope
        self.name = name
        self.kind = kind
        self.node = node
        self.qualname = qualname
        self.instrs = []
        self.positions = []
        self.pos = (node.line, node.col)
        self.loops = []
        self.hdepth = 0       # active try blocks and watches in this frame
        self.sdepth = 0       # values the loops keep on the stack at statement level
        self.labels = []

    # ------------------------------------------------------------ emitting
    def emit(self, op, arg=None, node=None):
        self.instrs.append([op, arg])
        self.positions.append((node.line, node.col) if node is not None else self.pos)
        return len(self.instrs) - 1

    def jump(self, op, label, node=None):
        i = self.emit(op, label, node)
        self.labels.append(i)
        return i

    def mark(self, label):
        label.pc = len(self.instrs)

    def error(self, node, message):
        raise OstSyntaxError(self.comp.filename, node.line, node.col, message,
                             self.comp.source_line(node.line))

    def finish(self, params, varnames, summary, details):
        # Resolve labels: an arg that is a Label (or a tuple starting with one)
        # becomes its pc.
        for i in self.labels:
            ins = self.instrs[i]
            a = ins[1]
            if isinstance(a, Label):
                ins[1] = a.pc
            elif isinstance(a, tuple):
                ins[1] = tuple(x.pc if isinstance(x, Label) else x for x in a)
        instrs = fuse([tuple(i) for i in self.instrs])
        return Code(self.name, self.kind, self.comp.filename, self.node.line, self.node.col,
                    instrs, self.positions, params, varnames, summary, details,
                    self.qualname, self.comp.source_hash)

    # ------------------------------------------------------------ names
    def load_name(self, node):
        where, arg = self.comp.resolution.read(node)
        self.emit(LOADS[where], arg, node)

    def store_name(self, name, node):
        if name in SPECIAL:
            self.error(node, "cannot assign to %s" % name)
        where, arg = self.scope.resolve(name)
        if where == 'local':
            self.emit(STORE_LOCAL, arg, node)
        elif where == 'global':
            self.emit(STORE_GLOBAL, arg, node)
        else:  # cannot happen: assigning makes a local
            raise AssertionError(name)

    # ------------------------------------------------------------ statements
    def block(self, body):
        for s in body:
            self.stmt(s)

    def stmt(self, s):
        self.pos = (s.line, s.col)
        m = getattr(self, 'st_' + type(s).__name__)
        m(s)

    def st_ExprStmt(self, s):
        self.expr(s.expr)
        self.emit(POP)

    def st_Assign(self, s):
        self.expr(s.value)
        n = len(s.targets)
        for i, t in enumerate(s.targets):
            if i < n - 1:
                self.emit(DUP)
            self.store_target(t, s)

    def store_target(self, t, stmt_node):
        if isinstance(t, A.Name):
            self.store_name(t.name, t)
        elif isinstance(t, A.Field):
            self.expr(t.obj)
            self.emit(STORE_FIELD, t.name, stmt_node)
        elif isinstance(t, A.Index):
            self.expr(t.obj)
            self.expr(t.index)
            self.emit(STORE_INDEX, None, stmt_node)
        else:
            self.error(t, "cannot assign to this expression")

    def st_Return(self, s):
        if self.kind == 'module':
            self.error(s, "'return' outside a function")
        if s.value is None:
            self.emit(CONST, None, s)
        else:
            self.expr(s.value)
        self.emit(RETURN, None, s)

    def find_loop(self, s, word):
        if s.label is not None:
            for lp in reversed(self.loops):
                if lp.label == s.label:
                    return lp
            self.error(s, "'%s %s' names no enclosing loop" % (word, s.label))
        if s.kind is not None:
            for lp in reversed(self.loops):
                if lp.kind == s.kind:
                    return lp
            self.error(s, "'%s %s' outside a %s loop" % (word, s.kind, s.kind))
        if not self.loops:
            self.error(s, "'%s' outside a loop" % word)
        return self.loops[-1]

    def st_Break(self, s):
        lp = self.find_loop(s, 'break')
        self.jump(JUMP_UNWIND, (lp.brk, lp.hdepth, lp.sdepth_out), s)

    def st_Continue(self, s):
        lp = self.find_loop(s, 'continue')
        self.jump(JUMP_UNWIND, (lp.cont, lp.hdepth, lp.sdepth_in), s)

    def st_If(self, s):
        end = Label()
        for cond, body in s.branches:
            nxt = Label()
            self.expr(cond)
            self.jump(JUMP_IF_FALSE, nxt, cond)
            self.block(body)
            self.jump(JUMP, end)
            self.mark(nxt)
        if s.else_body:
            self.block(s.else_body)
        self.mark(end)

    def st_While(self, s):
        top, end = Label(), Label()
        self.mark(top)
        self.expr(s.cond)
        self.jump(JUMP_IF_FALSE, end, s.cond)
        self.loops.append(Loop('while', s.label, end, top, self.hdepth, self.sdepth, self.sdepth))
        self.block(s.body)
        self.loops.pop()
        self.jump(JUMP, top, s)
        self.mark(end)

    def iter_heads(self, heads, reactive_ok):
        for h in heads:
            self.expr(h.source)
            self.emit(GET_ITER, reactive_ok and len(heads) == 1 and h.index is None, h.source)
        spec = tuple(bool(h.index) for h in heads)
        return spec

    def store_heads(self, heads, node):
        # FOR_ITER pushed, per head, [index], value; store in reverse.
        for h in reversed(heads):
            self.store_name(h.name, node)
            if h.index:
                self.store_name(h.index, node)

    def st_For(self, s):
        n = len(s.heads)
        self.iter_heads(s.heads, True)
        top, end, exit_ = Label(), Label(), Label()
        spec = tuple(bool(h.index) for h in s.heads)
        self.mark(top)
        self.jump(FOR_ITER, (exit_, n, spec), s)
        self.store_heads(s.heads, s)
        self.sdepth += n
        self.loops.append(Loop('for', s.label, end, top, self.hdepth, self.sdepth, self.sdepth - n))
        self.block(s.body)
        self.loops.pop()
        self.sdepth -= n
        self.jump(JUMP, top, s)
        self.mark(exit_)
        # FOR_ITER pops the iterators itself when they are exhausted.
        self.mark(end)

    def st_Try(self, s):
        handler, end = Label(), Label()
        self.jump(SETUP_TRY, handler, s)
        self.hdepth += 1
        self.block(s.body)
        self.hdepth -= 1
        self.emit(POP_TRY, None, s)
        self.jump(JUMP, end, s)
        self.mark(handler)
        if s.name:
            self.store_name(s.name, s)
        else:
            self.emit(POP)
        self.block(s.handler)
        self.mark(end)

    def st_Def(self, s):
        code = self.comp.compile_function(s, self.qualname)
        if self.scope.kind == 'module':
            self.emit(DEF_GLOBAL, (code, s.name), s)
        else:
            self.emit(MAKE_FUNCTION, code, s)
            self.store_name(s.name, s)

    def st_TypeDef(self, s):
        # Current binding of the name in this scope (for amendment), supertypes,
        # then field defaults; TYPE builds or amends and leaves the type.
        if self.scope.kind == 'module':
            self.emit(LOAD_GLOBAL_NS, s.name, s)
        else:
            self.emit(LOAD_LOCAL, self.scope.slots[s.name], s)
        for sup in s.supers or ():
            self.expr(sup)
        fields = []
        for f in s.fields:
            if f.default is not None:
                self.expr(f.default)
            fields.append((f.mode, f.name, f.default is not None))
        blurb = (s.blurb.summary, s.blurb.details) if s.blurb else None
        self.emit(TYPE, (s.name, None if s.supers is None else len(s.supers),
                         tuple(fields), blurb), s)
        self.store_name(s.name, s)

    def st_Import(self, s):
        for name in s.names:
            self.emit(IMPORT, name, s)
            self.store_name(name, s)

    def st_FromImport(self, s):
        self.emit(IMPORT, s.module, s)
        for name in s.names:
            self.emit(DUP)
            self.emit(FROM_IMPORT, name, s)
            self.store_name(name, s)
        self.emit(POP)

    def st_Wait(self, s):
        top = Label()
        self.mark(top)
        self.emit(WATCH_BEGIN, None, s)
        self.expr(s.cond)
        self.jump(WATCH_END_UNTIL if s.kind == 'until' else WATCH_END_WHILE, top, s.cond)

    def st_SpawnCall(self, s):
        c = s.call
        self.expr(c.func)
        for a in c.args:
            self.expr(a)
        for _, v in c.kwargs:
            self.expr(v)
        self.emit(SPAWN, (len(c.args), tuple(k for k, _ in c.kwargs), False), c)
        self.emit(POP)

    def st_SpawnBlock(self, s):
        code = self.comp.compile_block(s, self.qualname)
        self.emit(MAKE_FUNCTION, code, s)
        self.emit(SPAWN, (0, (), False), s)
        self.emit(POP)

    # ------------------------------------------------------------ expressions
    def expr(self, e):
        m = getattr(self, 'ex_' + type(e).__name__)
        m(e)

    def ex_Const(self, e):
        self.emit(CONST, e.value, e)

    def ex_Name(self, e):
        self.load_name(e)

    def ex_Str(self, e):
        n = 0
        for p in e.parts:
            if isinstance(p, str):
                if p:
                    self.emit(CONST, p, e)
                    n += 1
            else:
                self.expr(p.expr)
                self.emit(FORMAT, p.indent, p.expr)
                n += 1
        self.emit(BUILD_STRING, n, e)

    def ex_ListLit(self, e):
        for x in e.items:
            self.expr(x)
        self.emit(BUILD_LIST, len(e.items), e)

    def ex_TupleLit(self, e):
        for x in e.items:
            self.expr(x)
        self.emit(BUILD_TUPLE, len(e.items), e)

    def ex_SetLit(self, e):
        for x in e.items:
            self.expr(x)
        self.emit(BUILD_SET, len(e.items), e)

    def ex_MapLit(self, e):
        for k, v in e.entries:
            self.expr(k)
            self.expr(v)
        self.emit(BUILD_MAP, len(e.entries), e)

    def ex_Comprehension(self, e):
        build = {'list': BUILD_LIST, 'map': BUILD_MAP, 'set': BUILD_SET}[e.kind]
        add = {'list': LIST_APPEND, 'map': MAP_ADD, 'set': SET_ADD}[e.kind]
        self.emit(build, 0, e)
        n = len(e.heads)
        self.iter_heads(e.heads, False)
        top, exit_ = Label(), Label()
        self.mark(top)
        spec = tuple(bool(h.index) for h in e.heads)
        self.jump(FOR_ITER, (exit_, n, spec), e)
        self.store_heads(e.heads, e)
        if e.cond is not None:
            self.expr(e.cond)
            self.jump(JUMP_IF_FALSE, top, e.cond)
        if e.kind == 'map':
            self.expr(e.key)
        self.expr(e.elt)
        self.emit(add, n, e)     # the accumulator sits below the n iterators
        self.jump(JUMP, top, e)
        self.mark(exit_)

    def ex_Lambda(self, e):
        code = self.comp.compile_lambda(e, self.qualname)
        self.emit(MAKE_FUNCTION, code, e)

    def call_args(self, e):
        for a in e.args:
            self.expr(a)
        for _, v in e.kwargs:
            self.expr(v)
        return len(e.args), tuple(k for k, _ in e.kwargs)

    def ex_Call(self, e):
        if isinstance(e.func, A.Name) and e.func.name == 'spawn':
            self.emit(CONST, None, e)     # placeholder callee: SPAWN takes f from the args
            nargs, kw = self.call_args(e)
            self.emit(SPAWN, (nargs, kw, True), e)
            return
        self.expr(e.func)
        nargs, kw = self.call_args(e)
        callee = e.func.name if isinstance(e.func, A.Name) else None
        self.emit(CALL, (nargs, kw, callee), e)

    def ex_Curry(self, e):
        self.expr(e.func)
        nargs, kw = self.call_args(e)
        self.emit(CURRY, (nargs, kw), e)

    def ex_Index(self, e):
        self.expr(e.obj)
        self.expr(e.index)
        self.emit(INDEX, None, e)

    def ex_Field(self, e):
        self.expr(e.obj)
        self.emit(FIELD, e.name, e)

    def ex_Known(self, e):
        self.expr(e.expr)
        self.emit(KNOWN, None, e)

    def ex_Bang(self, e):
        top = Label()
        self.mark(top)
        self.emit(WATCH_BEGIN, None, e)
        self.expr(e.expr)
        self.jump(WATCH_END_BANG, top, e)

    def ex_Default(self, e):
        end = Label()
        self.expr(e.left)
        self.jump(JUMP_IF_NOT_NONE_OR_POP, end, e)
        self.expr(e.right)
        self.mark(end)

    def ex_BinOp(self, e):
        self.expr(e.left)
        self.expr(e.right)
        self.emit(BINOPS[e.op], None, e)

    def ex_Unary(self, e):
        self.expr(e.operand)
        self.emit(NEG if e.op == '-' else NOT, None, e)

    def ex_Compare(self, e):
        self.expr(e.first)
        if len(e.rest) == 1:
            op, right = e.rest[0]
            self.expr(right)
            self.emit(CMPOPS[op], None, e)
            return
        cleanup, end = Label(), Label()
        last = len(e.rest) - 1
        for i, (op, right) in enumerate(e.rest):
            self.expr(right)
            if i < last:
                self.emit(DUP)
                self.emit(ROT3)
                self.emit(CMPOPS[op], None, e)
                self.jump(JUMP_IF_FALSE_OR_POP, cleanup, e)
            else:
                self.emit(CMPOPS[op], None, e)
                self.jump(JUMP, end)
        self.mark(cleanup)
        self.emit(ROT2)
        self.emit(POP)
        self.mark(end)

    def ex_And(self, e):
        end = Label()
        self.expr(e.left)
        self.jump(JUMP_IF_FALSE_OR_POP, end, e.left)
        self.expr(e.right)
        self.mark(end)

    def ex_Or(self, e):
        end = Label()
        self.expr(e.left)
        self.jump(JUMP_IF_TRUE_OR_POP, end, e.left)
        self.expr(e.right)
        self.mark(end)

    def ex_IfExpr(self, e):
        other, end = Label(), Label()
        self.expr(e.cond)
        self.jump(JUMP_IF_FALSE, other, e.cond)
        self.expr(e.then)
        self.jump(JUMP, end)
        self.mark(other)
        self.expr(e.else_)
        self.mark(end)

    def ex_SpanExpr(self, e):
        if e.start is None:
            self.emit(CONST, None, e)
        else:
            self.expr(e.start)
        if e.stop is None:
            self.emit(CONST, None, e)
        else:
            self.expr(e.stop)
        self.emit(BUILD_SPAN, None, e)

    def ex_AssignExpr(self, e):
        self.expr(e.value)
        self.emit(DUP)
        self.store_target(e.target, e)


class Compiler:
    """Compiles one module source.  `compile_module` is the entry point."""

    def __init__(self, source, filename, module_name, resolution):
        self.resolution = resolution
        self.source = source
        self.filename = filename
        self.module_name = module_name
        self.source_hash = hashlib.sha256(source.encode('utf-8')).hexdigest()
        self._lines = None

    def source_line(self, n):
        if self._lines is None:
            self._lines = self.source.replace('\r\n', '\n').split('\n')
        return self._lines[n - 1] if 0 < n <= len(self._lines) else ''

    def compile_module(self, mod):
        scope = self.resolution.scope(mod)
        fc = FunctionCompiler(self, scope, self.module_name, 'module', mod, self.module_name)
        fc.block(mod.body)
        fc.emit(CONST, None)
        fc.emit(RETURN, None)
        b = mod.blurb
        return fc.finish((), (), b.summary if b else None, b.details if b else None)

    def _function(self, node, name, kind, qual):
        scope = self.resolution.scope(node)
        fc = FunctionCompiler(self, scope, name, kind, node, qual)
        return fc, scope, scope.names

    def compile_function(self, d, outer_qual):
        params = [p.name for p in d.params]
        seen = set()
        for p in d.params:
            if p.name in seen:
                raise OstSyntaxError(self.filename, p.line, p.col,
                                     "duplicate parameter '%s'" % p.name, self.source_line(p.line))
            if p.name in SPECIAL:
                raise OstSyntaxError(self.filename, p.line, p.col,
                                     "cannot assign to %s" % p.name, self.source_line(p.line))
            seen.add(p.name)
        qual = outer_qual + '.' + d.name
        fc, scope, names = self._function(d, d.name, 'def', qual)
        # Defaults are evaluated at each call, in the new frame, left to right,
        # whenever the parameter is none.
        for i, p in enumerate(d.params):
            if p.default is not None:
                skip = Label()
                fc.emit(LOAD_LOCAL, i, p)
                fc.jump(JUMP_IF_NOT_NONE, skip, p)
                fc.expr(p.default)
                fc.emit(STORE_LOCAL, i, p)
                fc.mark(skip)
        fc.block(d.body)
        fc.emit(CONST, None, d)
        fc.emit(RETURN, None, d)
        b = d.blurb
        return fc.finish(params, names, b.summary if b else None, b.details if b else None)

    def compile_lambda(self, e, outer_qual):
        seen = set()
        for p in e.params:
            if p in seen:
                raise OstSyntaxError(self.filename, e.line, e.col,
                                     "duplicate parameter '%s'" % p, self.source_line(e.line))
            seen.add(p)
        fc, scope, names = self._function(e, '<lambda>', 'lambda', outer_qual + '.<lambda>')
        fc.expr(e.body)
        fc.emit(RETURN, None, e)
        return fc.finish(e.params, names, None, None)

    def compile_block(self, s, outer_qual):
        fc, scope, names = self._function(s, '<spawn>', 'spawn', outer_qual + '.<spawn>')
        fc.block(s.body)
        fc.emit(CONST, None, s)
        fc.emit(RETURN, None, s)
        return fc.finish((), names, None, None)


# The compiler and the checks walk the tree recursively, a few Python frames
# per level; the syntax layer refuses trees deeper than MAX_NESTING, and
# this much room is enough for the deepest it lets through.
RECURSION_ROOM = 12000


@contextmanager
def room_to_recurse():
    old = sys.getrecursionlimit()
    if old < RECURSION_ROOM:
        sys.setrecursionlimit(RECURSION_ROOM)
    try:
        yield
    finally:
        if old < RECURSION_ROOM:
            sys.setrecursionlimit(old)


def compile_module(mod, source, filename, module_name, resolution=None):
    """Compile a parsed module (`resolution`: its resolve(mod), when the
    caller has it already); raises OstSyntaxError for scope errors."""
    with room_to_recurse():
        if resolution is None:
            resolution = resolve(mod)
        return Compiler(source, filename, module_name, resolution).compile_module(mod)
