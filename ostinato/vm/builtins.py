"""The built-in functions of docs/language.md §18, registered into `values.BUILTINS`.

Only the built-ins that are pure functions of their arguments live here;
`sleep`, `spawn`, `Queue`, `put`, `take` and `raise` need the scheduler and
belong to the interpreter.  Built-ins never call back into Ostinato code, so
each one is an ordinary Python function: the interpreter binds positional and
keyword arguments to `params`, passes missing ones as None and calls
`fn(*args)` (print and pprint also get the running VM first, to write).

Every built-in that makes a string or a collection applies the limits of
vm/limits.py before it builds it (`_joined`, `_check_replace`, ...), so a
value too large is a catchable Error, never a gigabyte allocated first.

Error texts follow §14: an argument of a kind a built-in does not take is
`NAME() does not accept KIND`; other failures of a built-in start with
`NAME() `; failures of the general rules it applies (`+` in sum, ordering in
sorted, hashing in set) keep the rule's own message.
"""
from __future__ import annotations

import re
import unicodedata

from . import extract, lemma, limits, ops, printing, timefmt
from .values import (
    BUILTINS, Builtin, OList, OMap, OObject, OQueue, OSet, OstError, OType,
    Span, kind,
)

__all__ = ['register']


def _reject(name, x):
    return OstError('%s() does not accept %s' % (name, kind(x)))


def _items(name, x):
    """A new Python list of the items a finite iterable yields (§10: a map
    gives its values, a string its characters)."""
    t = type(x)
    if t is OList:
        return list(x.items)
    if t is tuple or t is str:
        return list(x)
    if t is OMap:
        return list(x.d.values())
    if t is OSet:
        return list(x.d)
    if t is Span:
        if x.stop is None:
            raise OstError(name + '() cannot use an endless span')
        r = x.range()
        # not len(r): a range longer than a Python size cannot say its length
        limits.check_items(max(0, r.stop - r.start))
        return list(r)
    raise _reject(name, x)


def _joined(sep, parts):
    """sep.join(parts), refused before it is built beyond the string limit."""
    n = sum(map(len, parts)) + len(sep) * max(0, len(parts) - 1)
    if n > limits.MAX_STRING:
        limits.check_string(n)
    return sep.join(parts)


def _rendered(items, to_str):
    """[to_str(v) for v in items], held to the string limit as it goes: the
    parts of one string to be made of them."""
    out = []
    n = 0
    for v in items:
        s = to_str(v)
        n += len(s)
        if n > limits.MAX_STRING:
            limits.check_string(n)
        out.append(s)
    return out


def _str_args(name, *args):
    for a in args:
        if type(a) is not str:
            raise _reject(name, a)


# ---------------------------------------------------------- printing, text

def b_print(ctx, *vals):
    ctx.write(_joined(' ', _rendered(vals, printing.to_str)) + '\n')


def b_pprint(ctx, value):
    ctx.write(printing.pformat(value) + '\n')


def b_pformat(value):
    return printing.pformat(value)


def b_str(value):
    return printing.to_str(value)


def b_quote(value):
    return printing.display(value)


# ------------------------------------------------------------ conversions

_INT_RE = re.compile(r'[+-]?[0-9]+\Z')
_FLOAT_RE = re.compile(r'[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z')


def _cannot(value, to):
    return OstError('cannot convert %s to %s' % (printing.display(value), to))


def b_int(value):
    t = type(value)
    if t is int:
        return value
    if t is bool:
        return 1 if value else 0
    if t is float:
        if value != value or value in (float('inf'), float('-inf')):
            raise _cannot(value, 'int')
        return int(value)
    if t is str:
        s = value.strip()
        if _INT_RE.match(s):
            return limits.int_from_digits(s)
    raise _cannot(value, 'int')


def b_float(value):
    t = type(value)
    if t is float:
        return value
    if t is int:
        try:
            return float(value)
        except OverflowError:
            raise _cannot(value, 'float') from None
    if t is str:
        s = value.strip()
        if _FLOAT_RE.match(s):
            return float(s)
    raise _cannot(value, 'float')


def b_type_of(value):
    if type(value) is OObject:
        return value.type
    return kind(value)


# ------------------------------------------------------------ collections

def b_length(value):
    t = type(value)
    if t is str or t is tuple:
        return len(value)
    if t is OList or t is OQueue:
        return len(value.items)
    if t is OMap or t is OSet:
        return len(value.d)
    if t is Span:
        if value.stop is None:
            raise OstError('length() of an endless span')
        return max(0, value.stop - (0 if value.start is None else value.start))
    raise _reject('length', value)


def _set_add(s, v):
    if v is not None:
        s.d[ops.map_key(v)] = None


def b_append(collection, value):
    t = type(collection)
    if t is OList:
        if len(collection.items) >= limits.MAX_ITEMS:
            limits.check_items(len(collection.items) + 1)
        collection.items.append(value)
        collection.changed()
    elif t is OSet:
        if value is not None:   # adding none to a set does nothing (§5)
            _set_add(collection, value)
            collection.changed()
    else:
        raise _reject('append', collection)


def b_extend(collection, items):
    t = type(collection)
    if t is not OList and t is not OSet:
        raise _reject('extend', collection)
    new = _items('extend', items)
    if t is OList:
        limits.check_items(len(collection.items) + len(new))
        collection.items.extend(new)
    else:
        for v in new:
            _set_add(collection, v)
    collection.changed()


def b_insert(lst, index, value):
    if type(lst) is not OList:
        raise _reject('insert', lst)
    if type(index) is not int:
        raise _reject('insert', index)
    items = lst.items
    n = len(items)
    if n >= limits.MAX_ITEMS:
        limits.check_items(n + 1)
    # Clipped by hand: list.insert cannot take ints beyond a machine word.
    if index < 0:
        index = max(0, n + index)
    elif index > n:
        index = n
    items.insert(index, value)
    lst.changed()


def b_pop(collection, index):
    t = type(collection)
    if t is OList:
        items = collection.items
        if index is None:
            if not items:
                raise OstError('pop() index out of range')
            v = items.pop()
        elif type(index) is int:
            n = len(items)
            if not -n <= index < n:
                raise OstError('pop() index out of range')
            v = items.pop(index)
        else:
            raise _reject('pop', index)
        collection.changed()
        return v
    if t is OMap:
        try:
            v = collection.d.pop(index, None)
        except TypeError:
            return None        # an unhashable key is never present
        if v is not None:
            collection.changed()
        return v
    raise _reject('pop', collection)


def b_truncate(lst, n):
    if type(lst) is not OList:
        raise _reject('truncate', lst)
    if type(n) is not int:
        raise _reject('truncate', n)
    items = lst.items
    if n >= 0:
        if n <= len(items):
            del items[n:]
        else:
            limits.check_items(n)
            items.extend([None] * (n - len(items)))
    else:
        del items[max(0, len(items) + n):]
    lst.changed()


def b_reversed(sequence):
    t = type(sequence)
    if t is OList:
        return OList(sequence.items[::-1])
    if t is tuple or t is str:
        return sequence[::-1]
    raise _reject('reversed', sequence)


class _Ordered:
    """Sort key ordering items by the rules of `<` (§7)."""
    __slots__ = ('v',)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return ops.compare('<', self.v, other.v)


def _plain_sortable(vals):
    """True when Python's own ordering is Ostinato's: all numbers (no
    booleans) or all strings."""
    kinds = set(map(type, vals))
    return kinds <= {int, float} or kinds == {str}


def b_sorted(items):
    vals = _items('sorted', items)
    if _plain_sortable(vals):
        vals.sort()
    else:
        vals.sort(key=_Ordered)
    return OList(vals)


def b_keys(m):
    if type(m) is not OMap:
        raise _reject('keys', m)
    return OList(list(m.d))


def b_values(m):
    if type(m) is not OMap:
        raise _reject('values', m)
    return OList(list(m.d.values()))


def b_list(items):
    if items is None:
        return OList()
    return OList(_items('list', items))


def b_set(items):
    s = OSet()
    if items is not None:
        for v in _items('set', items):
            _set_add(s, v)
    return s


def b_tuple(items):
    if items is None:
        return ()
    if type(items) is tuple:
        return items
    return tuple(_items('tuple', items))


def b_span(start, stop):
    if (start is None or type(start) is int) and (stop is None or type(stop) is int):
        return Span(start, stop)
    raise OstError('span() bounds must be integers')


# ----------------------------------------------------------------- numbers

def b_sum(items, start):
    acc = 0 if start is None else start
    add = ops.binop
    for v in _items('sum', items):
        acc = add('+', acc, v)
    return acc


def _extreme(name, vals, op):
    if len(vals) == 1:
        vals = _items(name, vals[0])
    if not vals:
        raise OstError(name + '() of an empty collection')
    best = vals[0]
    if _plain_sortable(vals):
        # Python's min/max also keep the first of equal items.
        return min(vals) if op == '<' else max(vals)
    compare = ops.compare
    for v in vals[1:]:
        if compare(op, v, best):
            best = v
    return best


def b_min(*vals):
    return _extreme('min', vals, '<')


def b_max(*vals):
    return _extreme('max', vals, '>')


def b_abs(x):
    t = type(x)
    if t is int or t is float:
        return abs(x)
    raise _reject('abs', x)


def b_round(x, digits):
    t = type(x)
    if t is not int and t is not float:
        raise _reject('round', x)
    if digits is None:
        try:
            return round(x)
        except (OverflowError, ValueError):
            raise OstError('round() cannot round ' + printing.display(x)) from None
    if type(digits) is not int:
        raise _reject('round', digits)
    try:
        return round(float(x), digits)
    except OverflowError:
        raise OstError('round() cannot round ' + printing.display(x)) from None


# ----------------------------------------------------------------- strings

def b_known_word(word, vocabulary):
    if type(word) is not str:
        raise _reject('known_word', word)
    words = _items('known_word', vocabulary)
    for v in words:
        if type(v) is not str:
            raise OstError('known_word() vocabulary holds %s, not only words' % kind(v))
    if len(word) > lemma.MAX_TEXT:
        raise limits.too_large('known_word() word', len(word), lemma.MAX_TEXT, 'characters')
    return lemma.known_word(word, {v.lower() for v in words})


def b_dictionary_word(word, lang):
    if type(word) is not str:
        raise _reject('dictionary_word', word)
    if lang is None:
        lang = 'en'
    if type(lang) is not str:
        raise OstError('dictionary_word() does not accept ' + kind(lang) + ' as a language')
    if len(word) > lemma.MAX_TEXT:
        raise limits.too_large('dictionary_word() word', len(word), lemma.MAX_TEXT, 'characters')
    return lemma.dictionary_word(word, lang)


def b_char_name(c):
    # Unicode's name of a character is what a pictograph says in words: a
    # skill reads "🍕" as "slice of pizza" where its vocabulary has words.
    if type(c) is not str:
        raise _reject('char_name', c)
    if len(c) != 1:
        raise OstError('char_name() takes one character, not a string of %d' % len(c))
    name = unicodedata.name(c, None)
    return name.lower() if name is not None else None


def b_sjoin(items, sep):
    if sep is None:
        sep = ''
    elif type(sep) is not str:
        raise _reject('sjoin', sep)
    return _joined(sep, _rendered(_items('sjoin', items), printing.to_str))


def b_joinlines(items):
    return _joined('\n', _rendered(_items('joinlines', items), printing.to_str))


def b_split(s, sep):
    if type(s) is not str:
        raise _reject('split', s)
    if sep is None:
        return OList(s.split())     # fewer parts than the limit on characters
    if type(sep) is not str:
        raise _reject('split', sep)
    if not sep:
        raise OstError('split() separator is empty')
    if len(s) >= limits.MAX_ITEMS:
        limits.check_items(s.count(sep) + 1)
    return OList(s.split(sep))


def b_strip(s, chars):
    if type(s) is not str:
        raise _reject('strip', s)
    if chars is None:
        return s.strip()
    if type(chars) is not str:
        raise _reject('strip', chars)
    return s.strip(chars)


def _cased(s, change):
    """s.lower() or s.upper(): a character may become up to three ('ß' ->
    'SS'), so a long text that is not ASCII is changed in parts, held to
    the string limit as they grow."""
    if len(s) * 3 <= limits.MAX_STRING or s.isascii():
        return change(s)
    # A part ends at a space, so no word (Greek final sigma) is cut.
    parts = []
    n = 0
    i = 0
    while i < len(s):
        j = s.find(' ', i + (1 << 20))
        j = len(s) if j < 0 else j
        part = change(s[i:j])
        n += len(part)
        if n > limits.MAX_STRING:
            limits.check_string(n)
        parts.append(part)
        i = j
    return ''.join(parts)


def b_lower(s):
    _str_args('lower', s)
    return _cased(s, str.lower)


def b_upper(s):
    _str_args('upper', s)
    return _cased(s, str.upper)


def b_replace(s, old, new):
    _str_args('replace', s, old, new)
    if len(new) > len(old):
        # Counted first: 16 M characters may each become 16 M.
        count = s.count(old) if old else len(s) + 1
        limits.check_string(len(s) + count * (len(new) - len(old)))
    return s.replace(old, new)


def b_startswith(s, prefix):
    _str_args('startswith', s, prefix)
    return s.startswith(prefix)


def b_endswith(s, suffix):
    _str_args('endswith', s, suffix)
    return s.endswith(suffix)


def b_find(sequence, x):
    t = type(sequence)
    if t is str:
        if type(x) is not str:
            raise _reject('find', x)
        return sequence.find(x)
    if t is OList or t is tuple:
        equal = ops.equal
        for i, v in enumerate(sequence.items if t is OList else sequence):
            if v is x or equal(v, x):
                return i
        return -1
    raise _reject('find', sequence)


# --------------------------------------------------------- json and time

def b_json(value):
    return printing.to_json(value)


def b_parse_json(text):
    return printing.parse_json(text)


def b_now():
    return timefmt.now_iso()


def b_format_time(time, format):
    return timefmt.format_time(time, format)


# ------------------------------------------------------------------ types

_MODES = ('val', 'var', 'one')


def b_add_property(typ, mode, name, default):
    if type(typ) is not OType:
        raise _reject('add_property', typ)
    if type(mode) is not str:
        raise _reject('add_property', mode)
    if type(name) is not str:
        raise _reject('add_property', name)
    if mode not in _MODES:
        raise OstError('add_property() mode must be \'val\', \'var\' or \'one\', got '
                       + printing.display(mode))
    typ.declare(mode, name, default)


def b_read_upto(lst):
    """The mark a library keeps with the list `lst` (OList.mark), or 0."""
    if type(lst) is not OList:
        raise _reject('__read_upto__', lst)
    return lst.mark or 0


def b_set_read_upto(lst, n):
    """Keep the int `n` as the mark of the list `lst` (a change of the
    list for whoever waits on it, like `append`)."""
    if type(lst) is not OList:
        raise _reject('__set_read_upto__', lst)
    if type(n) is not int:
        raise OstError('__set_read_upto__() takes an int, got ' + printing.display(n))
    if lst.mark != n:
        lst.mark = n
    return None


# ------------------------------------------------------------ registration

_TABLE = [
    # name, fn, params, varargs, ctx
    ('print', b_print, ('values',), True, True),
    ('pprint', b_pprint, ('value',), False, True),
    ('pformat', b_pformat, ('value',)),
    ('str', b_str, ('value',)),
    ('quote', b_quote, ('value',)),
    ('int', b_int, ('value',)),
    ('float', b_float, ('value',)),
    ('type_of', b_type_of, ('value',)),
    ('length', b_length, ('value',)),
    ('append', b_append, ('collection', 'value')),
    ('extend', b_extend, ('collection', 'items')),
    ('insert', b_insert, ('list', 'index', 'value')),
    ('pop', b_pop, ('collection', 'index')),
    ('truncate', b_truncate, ('list', 'n')),
    ('reversed', b_reversed, ('sequence',)),
    ('sorted', b_sorted, ('items',)),
    ('keys', b_keys, ('map',)),
    ('values', b_values, ('map',)),
    ('list', b_list, ('items',)),
    ('set', b_set, ('items',)),
    ('tuple', b_tuple, ('items',)),
    ('span', b_span, ('start', 'stop')),
    ('sum', b_sum, ('items', 'start')),
    ('min', b_min, ('values',), True),
    ('max', b_max, ('values',), True),
    ('abs', b_abs, ('x',)),
    ('round', b_round, ('x', 'digits')),
    ('sjoin', b_sjoin, ('items', 'sep')),
    ('joinlines', b_joinlines, ('items',)),
    ('split', b_split, ('s', 'sep')),
    ('strip', b_strip, ('s', 'chars')),
    ('lower', b_lower, ('s',)),
    ('upper', b_upper, ('s',)),
    ('replace', b_replace, ('s', 'old', 'new')),
    ('startswith', b_startswith, ('s', 'prefix')),
    ('endswith', b_endswith, ('s', 'suffix')),
    ('find', b_find, ('sequence', 'x')),
    ('json', b_json, ('value',)),
    ('parse_json', b_parse_json, ('text',)),
    ('now', b_now, ()),
    ('format_time', b_format_time, ('time', 'format')),
    ('later', timefmt.later, ('time', 'seconds')),
    ('is_time', timefmt.is_time, ('value',)),
    ('time_of_day', timefmt.time_of_day, ('time',)),
    ('clock_time', timefmt.clock_time, ('text',)),
    ('in_unit', timefmt.in_unit, ('seconds', 'unit')),
    ('extract', extract.b_extract, ('text', 'kinds', 'now', 'zone', 'prefer', 'hours')),
    ('lemma', lemma.b_lemma, ('text', 'lang', 'keep_endings')),
    ('known_word', b_known_word, ('word', 'vocabulary')),
    ('dictionary_word', b_dictionary_word, ('word', 'lang')),
    ('char_name', b_char_name, ('c',)),
    ('add_property', b_add_property, ('type', 'mode', 'name', 'default')),
    ('__read_upto__', b_read_upto, ('list',)),
    ('__set_read_upto__', b_set_read_upto, ('list', 'n')),
]


def register(table=BUILTINS):
    """Put these built-ins into `table` (values.BUILTINS by default)."""
    for row in _TABLE:
        name, fn, params = row[:3]
        varargs = row[3] if len(row) > 3 else False
        ctx = row[4] if len(row) > 4 else False
        table[name] = Builtin(name, fn, params, varargs=varargs, ctx=ctx)


register()
