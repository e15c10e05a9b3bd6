"""Name resolution: one pass over a module's tree that records, for each
scope, the names it binds, and for each name read, the one binding it
refers to (docs/language.md §11).

A name is local to the function whose body binds it (a `def`, a lambda, a
`spawn:` block; comprehension and loop variables belong to the enclosing
scope); otherwise it is an enclosing function's local, else a module
variable or a built-in.  `__goal__`, `__caller__` and `__parent__` are the
frame's own.  The compiler emits loads from these bindings, and `check`
warns about the module-level reads the module binds nowhere -- both read
the same `Resolution` instead of walking the scopes each its own way.
"""
from __future__ import annotations

from ..syntax import ast as A

SPECIAL = {'__goal__': 'goal', '__caller__': 'caller', '__parent__': 'parent'}


def bound_names(body, params=()):
    """Names a function body binds (docs/language.md §11), in first-binding order;
    nested def/lambda/spawn bodies are their own scopes."""
    out = {p: None for p in params}

    def target(t):
        if isinstance(t, A.Name):
            out.setdefault(t.name, None)

    def heads(hs):
        for h in hs:
            if h.index:
                out.setdefault(h.index, None)
            out.setdefault(h.name, None)
            expr(h.source)

    def expr(e):
        if e is None or isinstance(e, (str, A.Const, A.Name, A.Lambda)):
            return
        if isinstance(e, A.AssignExpr):
            target(e.target)
            expr(e.target)
            expr(e.value)
        elif isinstance(e, A.Comprehension):
            heads(e.heads)
            expr(e.elt)
            expr(e.key)
            expr(e.cond)
        elif isinstance(e, A.Str):
            for p in e.parts:
                if isinstance(p, A.Interp):
                    expr(p.expr)
        else:
            for v in vars(e).values():
                if isinstance(v, A.Node):
                    expr(v)
                elif isinstance(v, list):
                    for x in v:
                        if isinstance(x, A.Node):
                            expr(x)
                        elif isinstance(x, tuple):
                            for y in x:
                                if isinstance(y, A.Node):
                                    expr(y)

    def stmts(ss):
        for s in ss:
            stmt(s)

    def stmt(s):
        if isinstance(s, A.Assign):
            for t in s.targets:
                target(t)
                expr(t)
            expr(s.value)
        elif isinstance(s, A.Def):
            out.setdefault(s.name, None)    # its defaults run in the new frame
        elif isinstance(s, A.TypeDef):
            out.setdefault(s.name, None)
            for x in s.supers or ():
                expr(x)
            for f in s.fields:
                expr(f.default)
        elif isinstance(s, A.Import):
            for n in s.names:
                out.setdefault(n, None)
        elif isinstance(s, A.FromImport):
            for n in s.names:
                out.setdefault(n, None)
        elif isinstance(s, A.If):
            for c, b in s.branches:
                expr(c)
                stmts(b)
            if s.else_body:
                stmts(s.else_body)
        elif isinstance(s, A.While):
            expr(s.cond)
            stmts(s.body)
        elif isinstance(s, A.For):
            heads(s.heads)
            stmts(s.body)
        elif isinstance(s, A.Try):
            stmts(s.body)
            if s.name:
                out.setdefault(s.name, None)
            stmts(s.handler)
        elif isinstance(s, A.SpawnBlock):
            pass
        elif isinstance(s, A.SpawnCall):
            expr(s.call)
        elif isinstance(s, (A.ExprStmt,)):
            expr(s.expr)
        elif isinstance(s, A.Return):
            expr(s.value)
        elif isinstance(s, A.Wait):
            expr(s.cond)

    stmts(body)
    return list(out)


class Scope:
    """The names one scope binds, in first-binding order.  A function's are
    its frame's local slots; the module's are module variables (no slots)."""

    def __init__(self, kind, parent, names):
        self.kind = kind            # 'module' or 'function'
        self.parent = parent
        self.names = names
        self.slots = {n: i for i, n in enumerate(names)} if kind == 'function' else {}

    def resolve(self, name):
        """('local', slot) | ('outer', (depth, slot)) | ('global', name)."""
        if self.kind == 'function' and name in self.slots:
            return 'local', self.slots[name]
        depth = 0
        s = self.parent
        while s is not None and s.kind == 'function':
            depth += 1
            if name in s.slots:
                return 'outer', (depth, s.slots[name])
            s = s.parent
        return 'global', name

    def enclosing_names(self):
        """Every name bound by this function scope and the functions around it."""
        names = set()
        s = self
        while s is not None and s.kind == 'function':
            names.update(s.names)
            s = s.parent
        return names


class Resolution:
    """What `resolve` found for one module tree (keyed by node identity: it
    is valid while the tree is)."""

    def __init__(self):
        self.scopes = {}        # id(Module/Def/Lambda/SpawnBlock node) -> Scope
        self.reads = {}         # id(Name node) -> ('special', what) | Scope.resolve(name)
        self.unbound = []       # (Name node, Scope) of reads bound in no scope at all
        self.module = None      # the module's Scope

    def scope(self, node):
        return self.scopes[id(node)]

    def read(self, node):
        return self.reads[id(node)]


def resolve(mod):
    """The Resolution of a parsed module (the caller makes room to recurse:
    compiler.room_to_recurse)."""
    res = Resolution()
    res.module = module = res.scopes[id(mod)] = Scope('module', None, bound_names(mod.body))
    module_names = set(module.names)

    def function(node, names, parts, outer):
        scope = res.scopes[id(node)] = Scope('function', outer, names)
        for part in parts:
            visit(part, scope)

    def visit(node, scope):
        if isinstance(node, A.Name):
            n = node.name
            if n in SPECIAL:
                res.reads[id(node)] = ('special', SPECIAL[n])
                return
            where = scope.resolve(n)
            res.reads[id(node)] = where
            if where[0] == 'global' and n not in module_names:
                res.unbound.append((node, scope))
            return
        if isinstance(node, A.Def):
            names = bound_names(node.body, [p.name for p in node.params])
            # Defaults are evaluated in the new frame, at each call.
            function(node, names, [p.default for p in node.params if p.default is not None]
                     + list(node.body), scope)
            return
        if isinstance(node, A.Lambda):
            names = bound_names([A.ExprStmt(node.line, node.col, node.body)], node.params)
            function(node, names, [node.body], scope)
            return
        if isinstance(node, A.SpawnBlock):
            function(node, bound_names(node.body), list(node.body), scope)
            return
        if isinstance(node, A.Interp):
            visit(node.expr, scope)
            return
        if isinstance(node, A.Node):
            for v in vars(node).values():
                visit(v, scope)
        elif isinstance(node, (list, tuple)):
            for x in node:
                visit(x, scope)

    visit(mod.body, module)
    return res
