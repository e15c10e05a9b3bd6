"""`ostinato check`: parse and compile only, and warn about names that are
read but bound nowhere (with a "did you mean" hint).

Reading an unbound name is not an error in Ostinato (it reads none), which
is exactly why a typo deserves a warning before the program runs."""
from __future__ import annotations

import difflib
import os

from ..syntax import OstSyntaxError, parse
from .compiler import compile_module, room_to_recurse
from .resolve import resolve

EXTRA_NAMES = {'Error', 'spawn'}


def unbound_reads(mod, builtin_names, resolution=None):
    """(node, name, candidates) for every read of a name bound nowhere, from
    the module's Resolution (compiler/resolve.py)."""
    if resolution is None:
        with room_to_recurse():
            resolution = resolve(mod)
    module_names = set(resolution.module.names)
    found = []
    for node, scope in resolution.unbound:
        n = node.name
        if n in builtin_names or n in EXTRA_NAMES:
            continue
        known = module_names | set(builtin_names) | EXTRA_NAMES | scope.enclosing_names()
        found.append((node, n, difflib.get_close_matches(n, sorted(known), n=1)))
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
        with room_to_recurse():
            resolution = resolve(mod)
        compile_module(mod, src.decode('utf-8'), fname, os.path.splitext(fname)[0], resolution)
    except OstSyntaxError as e:
        err.write(e.format() + '\n')
        return 65
    for node, name, close in unbound_reads(mod, set(builtin_names), resolution):
        hint = " (did you mean '%s'?)" % close[0] if close else ''
        err.write("%s:%d:%d: warning: name '%s' is read but bound nowhere%s\n"
                  % (fname, node.line, node.col, name, hint))
    return 0
