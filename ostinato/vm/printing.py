"""Rendering values as text (docs/language.md §19): the display form D (`quote`),
`str`, `pformat`, `json` and `parse_json`.

Everything that turns a value into text lives here, so print, interpolation,
error messages and the built-ins agree byte for byte.  Rendering never runs
user code: it reads the value classes directly.  Containers and objects met
again while they are being rendered (cycles) show as `...`.  A rendering is
held to the string limit (vm/limits.py) as it grows -- a list of a few long
strings would otherwise make a text many times the limit -- so a text too
large is an Error before it is built, not after.
"""
from __future__ import annotations

import json as _json
import sys

from . import limits
from . import values as _values
from .values import (
    Builtin, Curried, Frame, Function, OList, OMap, OModule, OObject, OQueue,
    OSet, OstError, OType, Span, Task, kind,
)

__all__ = ['display', 'quote_str', 'to_str', 'goal_name', 'pformat', 'to_json', 'parse_json']

# Ostinato ints are arbitrary precision and print in full; Python 3.11 limits
# int<->str conversion to 4300 digits unless told otherwise.
if hasattr(sys, 'set_int_max_str_digits'):
    sys.set_int_max_str_digits(0)


# ----------------------------------------------------------------- scalars

_QUOTE_ESC = {i: '\\x%02x' % i for i in range(32)}
_QUOTE_ESC[127] = '\\x7f'
_QUOTE_ESC.update({ord('\\'): '\\\\', ord("'"): "\\'", 10: '\\n', 13: '\\r', 9: '\\t'})


# Escaping makes at most this many characters of one (`\\x01`, `\\u0001`).
_QUOTE_GROWTH = 4
_JSON_GROWTH = 6
_CHUNK = 1 << 20


def _escape(s, table, growth, extra):
    """s.translate(table), refused before it grows beyond the string limit:
    a string within the limit may escape to several times its length."""
    if len(s) * growth + extra <= limits.MAX_STRING:
        return s.translate(table)
    parts = []
    n = extra
    for i in range(0, len(s), _CHUNK):
        part = s[i:i + _CHUNK].translate(table)
        n += len(part)
        if n > limits.MAX_STRING:
            raise _too_large(n)
        parts.append(part)
    return ''.join(parts)


def _too_large(n):
    return limits.too_large('string', n, limits.MAX_STRING, 'characters or more')


class _Wide(Exception):
    """pformat's one-line try of a container went past the line."""


class _Render(set):
    """What a rendering needs to know as it goes: the containers being
    rendered (the set: one met again is a cycle) and how many characters it
    has made so far (`n`, counted exactly), held to `room`: the string limit,
    or what is left of pformat's line when it tries a container on one
    line (then `_Wide` stops the try as soon as it cannot fit)."""
    __slots__ = ('n', 'room')

    def __init__(self, room=None):
        super().__init__()
        self.n = 0
        self.room = limits.MAX_STRING if room is None else room

    def grow(self, k):
        n = self.n = self.n + k
        if n > self.room:
            self.over(n)

    def over(self, n):
        if self.room < limits.MAX_STRING:
            raise _Wide()
        raise _too_large(n)


def quote_str(s):
    """D of a string: single-quoted with the escapes of §19.2."""
    return "'" + _escape(s, _QUOTE_ESC, _QUOTE_GROWTH, 2) + "'"


def _float(x):
    r = repr(x)
    if r.endswith('.0'):
        return r[:-2]
    return r


# -------------------------------------------------------------- display form

def _d(x, active):
    t = type(x)
    f = _RENDER.get(t)
    s = '<%s>' % kind(x) if f is None else f(x, active)
    if t not in _CONTAINERS:    # a container's parts have grown it already
        n = active.n = active.n + len(s)
        if n > active.room:
            active.over(n)
    return s


def _r_none(x, active):
    return 'none'


def _r_bool(x, active):
    return 'true' if x else 'false'


def _r_int(x, active):
    return str(x)


def _r_float(x, active):
    return _float(x)


def _r_str(x, active):
    return quote_str(x)


def _r_list(x, active):
    items = x.items
    if not items:
        return '[]'
    i = id(x)
    if i in active:
        return _cycle(active)
    active.add(i)
    active.grow(2 * len(items))
    s = '[' + ', '.join([_d(e, active) for e in items]) + ']'
    active.discard(i)
    return s


def _r_tuple(x, active):
    if not x:
        return '#[]'
    i = id(x)
    if i in active:
        return _cycle(active)
    active.add(i)
    active.grow(2 * len(x) + 1)
    s = '#[' + ', '.join([_d(e, active) for e in x]) + ']'
    active.discard(i)
    return s


def _r_map(x, active):
    d = x.d
    if not d:
        return '[:]'
    i = id(x)
    if i in active:
        return _cycle(active)
    active.add(i)
    active.grow(4 * len(d))
    s = '[' + ', '.join([_d(k, active) + ': ' + _d(v, active) for k, v in d.items()]) + ']'
    active.discard(i)
    return s


def _r_set(x, active):
    d = x.d
    if not d:
        return '{}'
    i = id(x)
    if i in active:
        return _cycle(active)
    active.add(i)
    active.grow(2 * len(d))
    s = '{' + ', '.join([_d(e, active) for e in d]) + '}'
    active.discard(i)
    return s


def _r_span(x, active):
    if x.start is None:
        if x.stop is None:
            active.grow(16)
            return 'span(none, none)'
        active.grow(3)
        return '...' + _d(x.stop, active)
    if x.stop is None:
        active.grow(3)
        return _d(x.start, active) + '...'
    active.grow(2)
    return _d(x.start, active) + '..' + _d(x.stop, active)


def _shown_fields(x):
    """(name, value) of each field D shows: own value or default, not none,
    in field order (§19.2)."""
    typ = x.type
    vals = x.vals
    out = []
    for name in typ.field_order():
        v = vals.get(name)
        if v is None:
            f = typ.lookup(name)
            v = None if f is None else f[1]
        if v is not None:
            out.append((name, v))
    return out


def _r_object(x, active):
    i = id(x)
    if i in active:
        return _cycle(active)
    active.add(i)
    fields = _shown_fields(x)
    # NAME(f = v, g = w): the name, and per field its name, ' = ' and ', '
    # (the last one's ', ' is the parentheses).
    active.grow(len(x.type.name) + (sum([len(name) + 5 for name, v in fields]) if fields else 2))
    s = x.type.name + '(' + ', '.join(
        [name + ' = ' + _d(v, active) for name, v in fields]) + ')'
    active.discard(i)
    return s


def _cycle(active):
    active.grow(3)
    return '...'


def _r_function(x, active):
    code = x.code
    k = code.kind
    if k == 'lambda' or k == 'spawn':
        return '<%s %s:%s>' % (k, code.filename, code.line)
    return '<def %s>' % code.name


def _r_builtin(x, active):
    return '<builtin %s>' % x.name


def _r_curried(x, active):
    active.grow(10)
    return '<curried %s>' % _d(x.func, active)


def _r_type(x, active):
    return '<type %s>' % x.name


def _r_module(x, active):
    return '<module %s>' % x.name


def goal_name(goal):
    """The goal name of a frame's goal: a function's name or a module's."""
    if type(goal) is OModule:
        return goal.name
    if type(goal) is Function:
        return goal.code.name
    return _d(goal, _Render())


def _r_frame(x, active):
    g = x.goal
    if g is None:
        return '<frame %s>' % x.code.name
    return '<frame %s>' % goal_name(g)


def _r_task(x, active):
    return '<task %s>' % x.name


def _r_queue(x, active):
    return '<queue %d>' % len(x.items)


_RENDER = {
    type(None): _r_none, bool: _r_bool, int: _r_int, float: _r_float, str: _r_str,
    OList: _r_list, tuple: _r_tuple, OMap: _r_map, OSet: _r_set, Span: _r_span,
    OObject: _r_object, Function: _r_function, Builtin: _r_builtin,
    Curried: _r_curried, OType: _r_type, OModule: _r_module, Frame: _r_frame,
    Task: _r_task, OQueue: _r_queue,
}
# The renderers that count their own characters: their separators, and
# their parts as _d renders them.
_CONTAINERS = frozenset([OList, tuple, OMap, OSet, Span, OObject, Curried])


def _too_deep():
    return OstError('value is nested too deeply to render')


def display(x):
    """D(x), the display form of §19.2 (what `quote` returns)."""
    t = type(x)
    if t is str:
        return quote_str(x)
    if t is int:
        return str(x)
    try:
        return _d(x, _Render())
    except RecursionError:
        raise _too_deep() from None


def to_str(x):
    """str(x) (§19.1): a string as is, an Error's message, else D(x)."""
    t = type(x)
    if t is str:
        return x
    if t is OObject and _values.is_error(x):
        m = x.vals.get('message')
        if m is None:
            f = x.type.lookup('message')
            m = None if f is None else f[1]
        return m if type(m) is str else display(m)
    return display(x)


# ----------------------------------------------------------------- pformat

WIDTH = 80


def pformat(x):
    """The multi-line layout of §19.3 (no trailing line break)."""
    out = _Layout()
    try:
        _pf(x, 0, 0, _Render(), out)
    except RecursionError:
        raise _too_deep() from None
    return ''.join(out)


class _Layout(list):
    """pformat's pieces, and how many characters they hold (`n`), held to
    the string limit."""
    __slots__ = ('n',)

    def __init__(self):
        super().__init__()
        self.n = 0

    def grow(self, k):
        n = self.n = self.n + k
        if n > limits.MAX_STRING:
            raise _too_large(n)


def _pf(x, indent, used, active, out):
    """Write x where the current line already holds indent + used characters."""
    t = type(x)
    i = id(x)
    entries = None
    if t is OList or t is tuple or t is OSet or t is OMap or t is OObject:
        if i not in active:
            if t is OObject:
                fields = _shown_fields(x)
                if fields:
                    entries = [(name + ' = ', v) for name, v in fields]
            elif t is OMap:
                if x.d:
                    entries = x.d
            else:
                elems = x.items if t is OList else x.d if t is OSet else x
                if elems:
                    entries = [('', e) for e in elems]
    if entries is not None:
        # Tried on one line with only the line's room: a try that cannot
        # fit stops there (rendering all of it at every level was quadratic).
        probe = _Render(max(WIDTH - indent - used, 0))
        probe |= active
        try:
            s = _d(x, probe)
        except _Wide:
            s = None
        if s is not None and indent + used + len(s) <= WIDTH:
            out.grow(len(s))
            out.append(s)
            return
    else:
        active.n = 0            # each one-line rendering is held to the limit on its own
        s = _d(x, active)
        out.grow(len(s))
        out.append(s)           # non-containers, empty ones and cycles stay on one line
        return
    if t is OMap:
        active.n = 0
        entries = [(_d(k, active) + ': ', v) for k, v in x.d.items()]
    if t is OObject:
        opening, closing = x.type.name + '(', ')'
    else:
        opening = '[' if t is OList or t is OMap else '{' if t is OSet else '#['
        closing = '}' if t is OSet else ']'
    active.add(i)
    inner = indent + 2
    pad = '\n' + ' ' * inner
    out.grow(len(opening) + len(entries) * (len(pad) + 1) + sum([len(p) for p, v in entries])
             + indent + 1 + len(closing))
    out.append(opening)
    for prefix, v in entries:
        out.append(pad)
        out.append(prefix)
        _pf(v, inner, len(prefix), active, out)
        out.append(',')
    out.append('\n' + ' ' * indent + closing)
    active.discard(i)


# -------------------------------------------------------------------- json

_JSON_ESC = {i: '\\u%04x' % i for i in range(32)}
_JSON_ESC[127] = '\\u007f'
_JSON_ESC.update({ord('"'): '\\"', ord('\\'): '\\\\', 10: '\\n', 13: '\\r', 9: '\\t'})


def _json_str(s):
    return '"' + _escape(s, _JSON_ESC, _JSON_GROWTH, 2) + '"'


def _json_float(x):
    if x != x or x in (float('inf'), float('-inf')):
        raise OstError('json() cannot convert ' + _float(x))
    return _float(x)


def to_json(x):
    """json(x) (§19.4)."""
    try:
        return _j(x, _Render())
    except RecursionError:
        raise OstError('json() value is nested too deeply') from None


def _j(x, active):
    t = type(x)
    if t is str:
        s = _json_str(x)
    elif t is int:
        s = str(x)
    elif x is None:
        s = 'null'
    elif t is bool:
        s = 'true' if x else 'false'
    elif t is float:
        s = _json_float(x)
    else:
        return _j_container(x, t, active)
    n = active.n = active.n + len(s)
    if n > active.room:
        active.over(n)
    return s


def _j_container(x, t, active):
    if t is OList or t is tuple or t is OSet or t is OMap or t is OObject:
        i = id(x)
        if i in active:
            raise OstError('json() cannot convert a value that contains itself')
        active.add(i)
        if t is OMap:
            active.grow(4 * len(x.d))
            s = '{' + ', '.join([_json_key(k, active) + ': ' + _j(v, active)
                                 for k, v in x.d.items()]) + '}'
        elif t is OObject:
            fields = _shown_fields(x)
            active.grow(sum([len(n) + 6 for n, v in fields]) + 2)
            s = '{' + ', '.join([_json_str(n) + ': ' + _j(v, active)
                                 for n, v in fields]) + '}'
        else:
            items = x.items if t is OList else x.d if t is OSet else x
            active.grow(2 * len(items))
            s = '[' + ', '.join([_j(e, active) for e in items]) + ']'
        active.discard(i)
        return s
    raise OstError('json() cannot convert ' + kind(x))


def _json_key(k, active):
    t = type(k)
    if t is str:
        s = _json_str(k)
    elif t is int:
        s = '"%d"' % k
    elif t is float:
        s = '"' + _json_float(k) + '"'
    elif t is bool:
        s = '"true"' if k else '"false"'
    else:
        s = None
    if s is not None:
        active.grow(len(s))
        return s
    raise OstError('json() cannot convert a map key of kind ' + kind(k))


def _json_list(v):
    """Turn the Python lists json.loads made into OLists (maps are made by
    the object hook, which has already converted their contents)."""
    if type(v) is list:
        return OList([_json_list(e) for e in v])
    return v


def _json_object(pairs):
    d = {}
    for k, v in pairs:
        if v is None:
            d.pop(k, None)     # as in a map literal: none removes the key
        else:
            d[k] = _json_list(v)
    return OMap(d)


def _json_constant(name):
    raise ValueError('invalid value ' + name)


def _json_int(text):
    try:
        return limits.int_from_digits(text)
    except OstError as e:
        raise ValueError(e.message) from None


_DECODER = _json.JSONDecoder(object_pairs_hook=_json_object, parse_constant=_json_constant,
                             parse_int=_json_int)


def parse_json(text):
    """parse_json(text) (§18): objects become maps (null members left out),
    arrays lists; errors start with `parse_json() `."""
    if type(text) is not str:
        raise OstError('parse_json() does not accept ' + kind(text))
    try:
        return _json_list(_DECODER.decode(text))
    except ValueError as e:   # JSONDecodeError is a ValueError
        raise OstError('parse_json() ' + str(e)) from None
    except RecursionError:
        raise OstError('parse_json() nesting too deep') from None
