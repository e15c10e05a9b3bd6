"""Finding the value that cannot be stored.

Every Ostinato value pickles by construction, but a Python object can still
reach a task (from an effect's bug, or an extension); then the commit fails.
Rather than a silent loss or a crash loop, the task fails with an error that
names the variable or field holding the value, found here by walking what
the task can reach before the failed turn is aborted.
"""
from __future__ import annotations

import io
import pickle

from persistent import Persistent

from ..vm.values import Frame, OList, OMap, OModule, OObject, OSet, kind


def _pickles(value):
    """Whether `value` pickles, treating persistent objects inside it as
    references (each is stored as a record of its own)."""
    def pid(obj):
        return 1 if isinstance(obj, Persistent) and obj is not value else None
    p = pickle.Pickler(io.BytesIO(), protocol=pickle.HIGHEST_PROTOCOL)
    p.persistent_id = pid
    try:
        p.dump(value.__getstate__() if isinstance(value, Persistent) else value)
        return True
    except Exception:
        return False


def _children(value):
    """(description, child) pairs of the values inside `value`."""
    t = type(value)
    if t is OObject:
        return [("field '%s' of %s" % (k, value.type.name), v) for k, v in value.vals.items()]
    if t is OMap:
        return [('the entry %r of a map' % (k,), v) for k, v in value.d.items()]
    if t is OList:
        return [('item %d of a list' % i, v) for i, v in enumerate(value.items)]
    if t is OSet:
        return [('a member of a set', v) for v in value.d]
    if t is tuple:
        return [('item %d of a tuple' % i, v) for i, v in enumerate(value)]
    if t is OModule:
        return [("variable '%s' of module %s" % (k, value.name), v) for k, v in value.ns.items()]
    return []


def find_unstorable(task, limit=20000):
    """A description like "variable 'conn' in fetch" of where the task holds
    a value that does not pickle, or None."""
    roots = []
    fr = task.frame
    while fr is not None:
        for name, v in zip(fr.code.varnames, fr.locals):
            roots.append(("variable '%s' in %s" % (name, fr.code.name), v))
        for i, v in enumerate(fr.stack):
            roots.append(('a value being computed in %s' % fr.code.name, v))
        if fr.module is not None:
            roots.append(('module %s' % fr.module.name, fr.module))
        fr = fr.caller
    seen = set()
    todo = roots
    while todo and len(seen) < limit:
        nxt = []
        for where, v in todo:
            if id(v) in seen or v is None or type(v) in (bool, int, float, str, Frame):
                continue
            seen.add(id(v))
            children = _children(v)
            if not children and not _pickles(v):
                return '%s (a Python %s)' % (where, kind(v))
            for desc, c in children:
                nxt.append(('%s in %s' % (desc, where) if not where.startswith('module') else desc, c))
        todo = nxt
    return None
