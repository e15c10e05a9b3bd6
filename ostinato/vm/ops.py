"""Semantics of Ostinato's operators and accesses (docs/language.md §6-§8, §10, §12).

Each rule lives here once, as a plain function on values: truthiness and
strict conditions, arithmetic, ordering, equality, membership, indexing,
fields, map keys, iteration snapshots and object construction.  The
interpreter loop inlines fast paths for ints and calls these for everything
else; built-ins use them so that `sum`, `sorted`, `min` and `set` follow the
same rules as the operators.  Failures raise `OstError` with the exact
message of §14.

Dispatch is on `type(x) is ...` (never isinstance): booleans are a subclass
of int in Python but are not numbers in Ostinato, and exact type tests are
also the cheapest.
"""
from __future__ import annotations

import operator

from . import limits
from .printing import display
from .values import (
    Builtin, Curried, Frame, Function, OList, OMap, OModule, OObject, OQueue,
    OSet, OstError, OType, Span, Task, kind, share,
)

__all__ = [
    'truthy', 'condition', 'binop', 'BINOPS', 'negate', 'compare', 'equal',
    'contains', 'get_index', 'set_index', 'get_field', 'set_field', 'map_key',
    'map_store', 'iter_items', 'construct', 'make_span', 'callable_name',
]


# ------------------------------------------------------------------ truth

def truthy(x):
    """§6 truthiness: what `not` uses."""
    t = type(x)
    if t is bool:
        return x
    if x is None:
        return False
    if t is int or t is float or t is str or t is tuple:
        return bool(x)
    if t is OList:
        return bool(x.items)
    if t is OMap or t is OSet:
        return bool(x.d)
    if t is Span:
        return x.stop is None or (0 if x.start is None else x.start) < x.stop
    return True


def condition(x):
    """A condition must be exactly true or false (§6)."""
    if x is True or x is False:
        return x
    raise OstError('condition must be true or false, got ' + display(x))


# ------------------------------------------------------------- arithmetic

def _operands(op, a, b):
    return OstError('unsupported operand types for %s: %s and %s' % (op, kind(a), kind(b)))


# Python raises OverflowError where an int does not fit a float (and for float
# `**`); Ostinato reports it instead of returning a wrong or infinite number.
_OVERFLOW = 'numeric overflow'
_TOO_LARGE = 'result too large'


def _add(a, b):
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        try:
            return a + b
        except OverflowError:
            raise OstError(_OVERFLOW) from None
    if ta is tb:
        if ta is str:
            limits.check_string(len(a) + len(b))
            return a + b
        if ta is tuple:
            limits.check_items(len(a) + len(b))
            return a + b
        if ta is OList:
            limits.check_items(len(a.items) + len(b.items))
            return OList(a.items + b.items)
    raise _operands('+', a, b)


def _sub(a, b):
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        try:
            return a - b
        except OverflowError:
            raise OstError(_OVERFLOW) from None
    raise _operands('-', a, b)


def _repeat(seq, n):
    if n > 0:
        if type(seq) is str:
            limits.check_string(len(seq) * n)
        else:
            limits.check_items(len(seq.items if type(seq) is OList else seq) * n)
    try:
        if type(seq) is OList:
            return OList(seq.items * n)
        return seq * n
    except (OverflowError, MemoryError):
        raise OstError(_TOO_LARGE) from None


def _mul(a, b):
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        if ta is int and tb is int:
            limits.check_int_bits(a.bit_length() + b.bit_length())
        try:
            return a * b
        except OverflowError:
            raise OstError(_OVERFLOW) from None
    if tb is int and (ta is str or ta is OList):
        return _repeat(a, b)
    if ta is int and (tb is str or tb is OList):
        return _repeat(b, a)
    raise _operands('*', a, b)


def _numeric(op, a, b):
    ta = type(a)
    tb = type(b)
    if not ((ta is int or ta is float) and (tb is int or tb is float)):
        raise _operands(op, a, b)
    if b == 0:
        raise OstError('division by zero')


def _div(a, b):
    _numeric('/', a, b)
    try:
        return a / b
    except OverflowError:
        raise OstError(_OVERFLOW) from None


def _floordiv(a, b):
    _numeric('//', a, b)
    try:
        return a // b
    except OverflowError:
        raise OstError(_OVERFLOW) from None


def _mod(a, b):
    _numeric('%', a, b)
    try:
        return a % b
    except OverflowError:
        raise OstError(_OVERFLOW) from None


def _pow(a, b):
    ta = type(a)
    tb = type(b)
    if not ((ta is int or ta is float) and (tb is int or tb is float)):
        raise _operands('^', a, b)
    if ta is int and tb is int and b > 0 and a not in (0, 1, -1):
        # Refused before it is computed: one instruction must not exhaust
        # memory or run for hours (vm/limits.py).
        limits.check_int_bits((a.bit_length() - 1) * b + 1)
    try:
        r = a ** b
    except ZeroDivisionError:
        raise OstError('division by zero') from None
    except OverflowError:
        raise OstError(_OVERFLOW) from None
    if type(r) is complex:
        raise OstError('power is not a real number: %s ^ %s' % (display(a), display(b)))
    return r


BINOPS = {
    '+': _add, '-': _sub, '*': _mul, '/': _div, '//': _floordiv, '%': _mod, '^': _pow,
}


def binop(op, a, b):
    """`a op b` for the arithmetic operators of §8.2."""
    return BINOPS[op](a, b)


def negate(a):
    t = type(a)
    if t is int or t is float:
        return -a
    raise OstError('unsupported operand type for -: ' + kind(a))


# --------------------------------------------------------------- ordering

_PYCMP = {'<': operator.lt, '<=': operator.le, '>': operator.gt, '>=': operator.ge}


def compare(op, a, b):
    """`a op b` for '<', '<=', '>', '>=' (§7); the result is a bool."""
    try:
        return _compare(op, a, b)
    except RecursionError:
        # Lists inside lists, as deep as Python's stack: walked recursively.
        raise OstError('cannot compare values nested this deeply') from None


def _compare(op, a, b):
    ta = type(a)
    tb = type(b)
    if ((ta is int or ta is float) and (tb is int or tb is float)) or (ta is str and tb is str):
        return _PYCMP[op](a, b)
    if ta is tb and (ta is OList or ta is tuple):
        # Python's own sequence comparison would accept bool/int pairs and
        # raise TypeError texts of its own, so walk the items by our rules.
        x = a.items if ta is OList else a
        y = b.items if ta is OList else b
        for i in range(min(len(x), len(y))):
            p = x[i]
            q = y[i]
            if not equal(p, q):
                return _compare(op, p, q)
        return _PYCMP[op](len(x), len(y))
    raise OstError('cannot compare %s and %s' % (kind(a), kind(b)))


def equal(a, b):
    """`a == b` (§7).  The value classes implement structural equality; this
    only guarantees a bool and no exception, whatever the values hold."""
    try:
        return bool(a == b)
    except RecursionError:
        # Two distinct cyclic structures: they cannot be proved equal.
        return a is b


# ------------------------------------------------------------- membership

def contains(c, x):
    """`x in c` (§7)."""
    t = type(c)
    if t is OList or t is tuple:
        items = c.items if t is OList else c
        try:
            return x in items
        except RecursionError:
            return any(equal(e, x) for e in items)
    if t is OMap or t is OSet:
        try:
            return x in c.d
        except TypeError:
            return False       # unhashable: in no map or set
    if t is str:
        if type(x) is str:
            return x in c
        raise OstError("'in' on a string needs a string on the left, got " + kind(x))
    if t is Span:
        tx = type(x)
        if tx is int or tx is bool:
            n = int(x)
        elif tx is float:
            if not x.is_integer():
                return False
            n = int(x)
        else:
            return False
        lo = 0 if c.start is None else c.start
        return n >= lo and (c.stop is None or n < c.stop)
    raise OstError('cannot test membership in ' + kind(c))


# --------------------------------------------------------------- indexing

def _bad_index(i):
    return OstError('index must be an integer, got ' + kind(i))


def get_index(x, i):
    """`x[i]` (§8.3): none out of range, spans slice, maps look up."""
    t = type(x)
    if t is OList:
        if type(i) is int:
            try:
                return x.items[i]
            except IndexError:
                return None
        if type(i) is Span:
            return OList(x.items[i.start:i.stop])
        raise _bad_index(i)
    if t is OMap:
        try:
            return x.d.get(i)
        except TypeError:
            return None        # unhashable keys are never present
    if t is str or t is tuple:
        if type(i) is int:
            try:
                return x[i]
            except IndexError:
                return None
        if type(i) is Span:
            return x[i.start:i.stop]
        raise _bad_index(i)
    raise OstError('cannot index ' + kind(x))


def set_index(x, i, v):
    """`x[i] = v` (§8.3)."""
    t = type(x)
    if t is OList:
        if type(i) is int:
            items = x.items
            n = len(items)
            if -n <= i < n:
                items[i] = v
                x.changed()
                return
            raise OstError('index out of range')
        if type(i) is Span:
            raise OstError('cannot assign to a slice')
        raise _bad_index(i)
    if t is OMap:
        map_store(x, i, v)
        return
    raise OstError('cannot set an item of ' + kind(x))


# ----------------------------------------------------------------- fields

def _read_error(x, name):
    return OstError("cannot read field '%s' of %s" % (name, kind(x)))


def _callable_field(x, name):
    """name / __name__ / summary / details of a function or type."""
    t = type(x)
    if t is Function:
        code = x.code
        if name == 'name' or name == '__name__':
            return code.name
        if name == 'summary':
            return code.summary
        if name == 'details':
            return code.details
    elif t is OType:
        if name == 'name' or name == '__name__':
            return x.name
        if name == 'summary':
            return x.summary
        if name == 'details':
            return x.details
    elif t is Builtin:
        if name == 'name' or name == '__name__':
            return x.name
        if name == 'summary' or name == 'details':
            return None
    elif t is Curried:
        if name == 'name' or name == '__name__':
            return callable_name(x)
        if name == 'summary' or name == 'details':
            return None
    raise _read_error(x, name)


def callable_name(f):
    """The name used for f in messages like `f() takes ...` (§14): a def's
    name, `<lambda>`, a type's or built-in's name; a curried function is
    named by what it curries.  None for other callables (lists, maps)."""
    while type(f) is Curried:
        f = f.func
    t = type(f)
    if t is Function:
        return f.code.name
    if t is OType or t is Builtin:
        return f.name
    return None


def get_field(x, name):
    """`x.name` (§8.4)."""
    t = type(x)
    if t is OMap:
        return x.d.get(name)
    if t is OObject:
        return x.get(name)
    if t is OModule:
        if name == 'name' or name == '__name__':
            return x.name
        if name == 'summary':
            return x.summary
        if name == 'details':
            return x.details
        return x.ns.get(name)
    if t is Frame:
        if name == '__goal__':
            return x.goal
        if name == '__caller__':
            share(x.caller)
            return x.caller
        if name == '__parent__':
            share(x.parent)
            return x.parent
        return x.local(name)
    if t is Function or t is OType or t is Builtin or t is Curried:
        return _callable_field(x, name)
    if t is Task:
        if name == 'done':
            return x.done
        if name == 'result':
            return x.result
        if name == 'error':
            return x.error
    raise _read_error(x, name)


def set_field(x, name, v):
    """`x.name = v` (§8.4, field modes of §12)."""
    t = type(x)
    if t is OMap:
        if v is None:
            x.d.pop(name, None)
        else:
            x.d[name] = v
        x.changed()
        return
    if t is OObject:
        typ = x.type
        f = typ.lookup(name)
        if f is None:
            raise OstError("%s has no field '%s'" % (typ.name, name))
        mode = f[0]
        if mode == 'val':
            raise OstError("field '%s' of %s is read-only" % (name, typ.name))
        vals = x.vals
        if mode == 'one':
            cur = vals.get(name)
            if cur is None:
                cur = f[1]
            if cur is not None:
                raise OstError("field '%s' of %s is already set" % (name, typ.name))
        if v is None:
            vals.pop(name, None)
        else:
            vals[name] = v
        x.changed()
        return
    if t is OModule:
        x.set(name, v)
        return
    raise OstError("cannot set field '%s' of %s" % (name, kind(x)))


# ------------------------------------------------------------------- keys

def _unhashable_part(k):
    """The innermost value that makes k unhashable (a list inside a tuple
    is reported as `list`)."""
    if type(k) is tuple:
        for e in k:
            try:
                hash(e)
            except TypeError:
                return _unhashable_part(e)
    return k


def map_key(k):
    """Check a map key or set member; return it."""
    t = type(k)
    if t is str or t is int:
        return k
    if k is None:
        raise OstError('map key cannot be none')
    try:
        hash(k)
    except TypeError:
        raise OstError('unhashable: ' + kind(_unhashable_part(k))) from None
    return k


def map_store(m, k, v):
    """`m[k] = v` on a map: none removes the key."""
    t = type(k)
    if t is not str and t is not int:
        map_key(k)
    d = m.d
    if v is None:
        d.pop(k, None)
    elif k not in d:
        d[k] = v
        m.added(k)        # its store need not compare the other entries
        return
    else:
        d[k] = v
    m.changed()


# -------------------------------------------------------------- iteration

def iter_items(x):
    """Snapshot of a finite iteration source (§10) as (index or key, value)
    pairs.  Infinite spans, functions and queues are the interpreter's."""
    t = type(x)
    if t is OList:
        return list(enumerate(x.items))
    if t is OMap:
        return list(x.d.items())
    if t is tuple or t is str:
        return list(enumerate(x))
    if t is OSet:
        return list(enumerate(x.d))
    if t is Span:
        if x.stop is None:
            raise OstError('cannot iterate over an endless span here')
        return list(enumerate(x.range()))
    if t is Function or t is Builtin or t is Curried or t is OQueue:
        raise OstError('cannot iterate over %s here' % kind(x))
    raise OstError('cannot iterate over ' + kind(x))


# ---------------------------------------------------------- construction

def construct(typ, kwargs):
    """`T(f = v, ...)` (§12): fields must be declared; modes are not checked
    here and none values are left out."""
    vals = {}
    for name, v in kwargs.items():
        if typ.lookup(name) is None:
            raise OstError("%s has no field '%s'" % (typ.name, name))
        if v is not None:
            vals[name] = v
    return OObject(typ, vals)


def make_span(start, stop):
    """`start..stop`, `start...`, `...stop`: bounds must be none or ints."""
    if (start is None or type(start) is int) and (stop is None or type(stop) is int):
        return Span(start, stop)
    bad = start if not (start is None or type(start) is int) else stop
    raise OstError('span bounds must be integers, got ' + kind(bad))
