"""`ostinato check`: parse and compile only, and warn about names that are
read but bound nowhere (with a "did you mean" hint).

Reading an unbound name is not an error in Ostinato (it reads none), which
is exactly why a typo deserves a warning before the program runs."""
from __future__ import annotations

import difflib
import os

from ..syntax import OstSyntaxError, parse
from ..syntax import ast as A
from .compiler import SPECIAL, bound_names, compile_module, room_to_recurse

EXTRA_NAMES = {'Error', 'spawn'}


def unbound_reads(mod, builtin_names):
    """(node, name, candidates) for every read of a name bound nowhere."""
    with room_to_recurse():
        return _unbound_reads(mod, builtin_names)


def _unbound_reads(mod, builtin_names):
    module_names = set(bound_names(mod.body))
    found = []

    def visit(node, scopes):
        if isinstance(node, A.Name):
            n = node.name
            if n in SPECIAL or n in module_names or n in builtin_names or n in EXTRA_NAMES:
                return
            if any(n in s for s in scopes):
                return
            known = set(module_names) | set(builtin_names) | EXTRA_NAMES
            for s in scopes:
                known |= s
            found.append((node, n, difflib.get_close_matches(n, sorted(known), n=1)))
            return
        if isinstance(node, A.Def):
            for p in node.params:
                if p.default is not None:
                    visit(p.default, scopes + [set(bound_names(node.body, [q.name for q in node.params]))])
            scope = set(bound_names(node.body, [p.name for p in node.params]))
            for s in node.body:
                visit(s, scopes + [scope])
            return
        if isinstance(node, A.Lambda):
            wrapped = [A.ExprStmt(node.line, node.col, node.body)]
            visit(node.body, scopes + [set(bound_names(wrapped, node.params))])
            return
        if isinstance(node, A.SpawnBlock):
            scope = set(bound_names(node.body))
            for s in node.body:
                visit(s, scopes + [scope])
            return
        if isinstance(node, A.Interp):
            visit(node.expr, scopes)
            return
        if isinstance(node, A.Node):
            for v in vars(node).values():
                visit(v, scopes)
        elif isinstance(node, (list, tuple)):
            for x in node:
                visit(x, scopes)

    visit(mod.body, [])
    return found


def check_file(path, out, err, builtin_names):
    """Check one file; returns its exit status (0 or 65).  `builtin_names`
    come from the caller: the VM, a layer above, owns the built-ins."""
    fname = os.path.basename(path)
    try:
        with open(path, 'rb') as fh:
            src = fh.read()
    except OSError as e:
        err.write('%s: error: %s\n' % (path, e.strerror))
        return 2
    try:
        mod = parse(src, fname)         # the bytes: a file that is not UTF-8 is a syntax error
        compile_module(mod, src.decode('utf-8'), fname, os.path.splitext(fname)[0])
    except OstSyntaxError as e:
        err.write(e.format() + '\n')
        return 65
    for node, name, close in unbound_reads(mod, set(builtin_names)):
        hint = " (did you mean '%s'?)" % close[0] if close else ''
        err.write("%s:%d:%d: warning: name '%s' is read but bound nowhere%s\n"
                  % (fname, node.line, node.col, name, hint))
    return 0
