"""Ostinato's run-time values.

none, booleans, ints, floats and strings are the Python values themselves;
tuples are Python tuples.  Everything mutable or with identity is a
`persistent.Persistent` subclass, so that the durable runtime can keep each
one as its own database record and notice changes: every mutation goes
through a method here (or sets `_p_changed`) so the object is marked dirty.

Nothing here holds a Python closure, generator or open resource: every value
must pickle (DESIGN.md §1, rule 5).
"""
from __future__ import annotations

import itertools
import operator

from persistent import Persistent

# The objects made during the watched evaluation in progress (id -> object),
# or None when none is being recorded.  A task that waits joins the waiting
# list of every object its evaluation read (docs/language.md §15.2), but an
# object the evaluation itself made -- the slice a predicate takes, the list
# a helper builds -- cannot have been changed by anyone before the wait, and
# nobody else can reach it afterwards unless the evaluation handed it out:
# stored it into an object it did not make (a change the host reports with
# `note_change`) or gave it to a new task (`escape`).  Until then the VM
# leaves these objects out of the watch (vm/interp.py `watched_objects`):
# watching one wrote the object and a watch index of its own at every wait.
# The constructors of the watchable containers and objects record themselves
# here; the dict holds them, so an id in it is never one of another object.
fresh = None


def record_fresh(on):
    """Start (on true) or stop recording the objects made from now on;
    returns what was recorded since the start (None if it was stopped or
    abandoned meanwhile)."""
    global fresh
    made = fresh
    fresh = {} if on else None
    return made


def note_global(reads, module, v):
    """A watched evaluation (`reads`: id -> object) read a name of `module`
    whose value is `v`.  A name bound by `def`, `type` or `import`, or one
    the module does not bind (a builtin), changes only when the module's
    definitions do (its top level runs: a load, an upgrade): such a read is
    kept under the negative id, and the wait it leads to does not join the
    module's index -- every waiting chat dialogue looked up a function of
    the channels module, so each of their waits wrote that index
    (runtime/watches.py `register`'s `defs`)."""
    if v is None or type(v) in DEFINITIONS:
        reads.setdefault(-id(module), module)
    else:
        reads[id(module)] = module


def is_definition(v):
    """Whether a module variable holding `v` counts as a definition
    (`note_global`): none (a builtin shows through) included."""
    return v is None or type(v) in DEFINITIONS


def note_change(obj):
    """`obj` changed: if the evaluation being recorded did not make it, what
    it made may now be reachable from outside -- record nothing more and
    leave out nothing (`record_fresh` then returns None)."""
    global fresh
    if fresh is not None and id(obj) not in fresh:
        fresh = None


def escape():
    """What the evaluation being recorded made may be reachable from outside
    now (a task was started): record nothing more, leave out nothing."""
    global fresh
    fresh = None


class OstError(Exception):
    """A run-time error raised by the VM or a built-in.  The VM turns it into an
    Error object whose `where` is the location of the failing expression."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class OstRaise(Exception):
    """Carries a raised Ostinato value through Python code (used only by
    helpers that run outside the interpreter loop)."""

    def __init__(self, value):
        super().__init__(value)
        self.value = value


# ------------------------------------------------------------------ containers
# A long OList or OMap is stored as an index of chunks (see OList): its state
# is its other attributes, in their order, then `chunks` in place of the
# attribute that holds its contents.  The chunks last stored or loaded are
# kept in the volatile `_v_chunks`, so the next store reuses the unchanged
# ones.  The two classes differ only in how they cut and join the chunks.
#
# `_v_chunks` holds each chunk with its contents, (chunk, its items or
# pairs), and the next store compares those: ZODB's cache turns the chunks
# of a big map back into ghosts once they are more than it keeps (400
# objects), and reading a ghost's contents loads its record again.  At
# 100,000 threads that was every chunk again at every new dialogue, 300 ms.
#
# A very long one (more than 2 * INDEX chunks: 32,768 entries of a map,
# 65,536 items of a list) has `index` in place of `chunks`: the chunks in
# runs of INDEX, each run a record of its own (IndexChunk), so that the
# record every growth rewrites stays short too.  Without it, the channel's
# map of threads at 100,000 threads was an index of 781 references, about
# 11 KB written again for every new dialogue.  When the runs are many too
# (more than 2 * INDEX of them: a map of over 1,048,576 entries), they are
# grouped in runs of INDEX in turn, and so on: the index is a tree of
# IndexChunks whose every record, the top one in the map's own record
# included, holds at most 2 * INDEX references (schema 11), so a growth
# rewrites one record per level, not an index as long as the map.

INDEX = 64


def _chunked_state(obj, base_state, attr, size, cut, index=None):
    """The state to store for `obj` (an OList or OMap): `base_state()`, the
    plain Persistent state, while `size` is at most two chunks; else that
    state with `attr` replaced by `cut(chunks stored before)`, or by their
    index (in runs of `index`, INDEX by default) when they are many."""
    if size <= 2 * obj.CHUNK:
        # Chunks stored before, if any, are no longer what is stored: a
        # store that trusts them (OMap.added) must not find them.
        obj.__dict__.pop('_v_chunks', None)
        obj.__dict__.pop('_v_index', None)
        return base_state()
    index = INDEX if index is None else index
    held = obj._v_chunks = cut(obj.__dict__.get('_v_chunks') or ())
    chunks = [c for c, _ in held]
    state = dict(base_state())   # other attributes (its watchers)
    del state[attr]
    if len(chunks) <= 2 * index:
        state['chunks'] = chunks
    else:
        levels = obj._v_index = _index(chunks, obj.__dict__.get('_v_index') or (), index)
        state['index'] = [r for r, _ in levels[-1]]
    return state


def _index(chunks, old, size=None):
    """The tree of IndexChunks over `chunks`, as its levels from the
    bottom, each a list of (IndexChunk, what it holds): runs of `size`
    (INDEX by default) chunks, then runs of `size` of those runs while they
    are more than 2 * `size`.  A run of `old` (the levels stored before)
    that holds the same objects is reused: a growing list or map rewrites
    only the last run of each level."""
    size = INDEX if size is None else size
    levels = []
    below = chunks
    depth = 0
    while True:
        prev = old[depth] if depth < len(old) else ()
        runs = []
        for k, i in enumerate(range(0, len(below), size)):
            run = below[i:i + size]
            p = prev[k] if k < len(prev) else None
            if p is not None and len(p[1]) == len(run) and all(map(operator.is_, p[1], run)):
                runs.append(p)
            else:
                runs.append((IndexChunk(run), run))
        levels.append(runs)
        if len(runs) <= 2 * size:
            return levels
        below = [r for r, _ in runs]
        depth += 1


def _index_levels(top):
    """The levels (`_index`'s form) of a stored index whose top runs are
    `top`; the chunks are what the bottom level holds."""
    levels = [[(run, run.chunks) for run in top]]
    while levels[-1] and levels[-1][0][1] and type(levels[-1][0][1][0]) is IndexChunk:
        levels.append([(run, run.chunks) for _, held in levels[-1] for run in held])
    levels.reverse()
    return levels


def _set_chunked_state(obj, state, base_setstate, attr, join):
    """Load a state made by `_chunked_state`: `attr` from `join(chunks)`."""
    index = state.get('index')
    levels = None
    if index is None:
        chunks = state.get('chunks')
    else:
        levels = _index_levels(index)
        chunks = [c for _, held in levels[0] for c in held]
    if chunks is None:
        base_setstate(state)
        return
    state = dict(state)
    state.pop('chunks', None)
    state.pop('index', None)
    contents = join(chunks)
    state[attr] = contents[0]
    base_setstate(state)
    obj._v_chunks = list(zip(chunks, contents[1]))
    if levels is not None:
        obj._v_index = levels


class IndexChunk(Persistent):
    """A stored run of a very long list's or map's chunks (ListChunk or
    MapChunk), or of such runs (a level further up), at most INDEX of
    them.  Never changed once stored."""

    def __init__(self, chunks):
        self.chunks = chunks


def _same_pairs(keys, values, pos, stored):
    """Whether the map's entries from `pos` on begin with the (key, value)
    pairs `stored`: equal keys, the same value objects.  The loops are in C
    (map, operator): a big map's store checks every chunk."""
    end = pos + len(stored)
    return end <= len(keys) and keys[pos:end] == list(map(_key, stored)) and \
        all(map(operator.is_, values[pos:end], map(_value, stored)))


_key, _value = operator.itemgetter(0), operator.itemgetter(1)


def _join_items(chunks, tail=()):
    """(the list's items, each chunk's items): the chunks', then `tail`."""
    parts = [c.items for c in chunks]
    items = []
    for part in parts:
        items.extend(part)
    items.extend(tail)
    return items, parts


def _join_pairs(chunks):
    """(the map's dict, each chunk's pairs)."""
    parts = [c.pairs for c in chunks]
    d = {}
    for part in parts:
        d.update(part)
    return d, parts


class ListChunk(Persistent):
    """A stored slice of a long OList.  Never changed once stored: a list
    whose items changed gets new chunks for the changed slices."""

    def __init__(self, items):
        self.items = items


_LIST_STORED = frozenset(['items', '_ow', 'mark'])


class OList(Persistent):
    """A mutable list.  `items` is a plain Python list.

    A long list is stored in chunks of CHUNK items, each a record of its
    own, and the items after the last full chunk (`tail`) in the list's own
    record with the index of the chunks (in runs of INDEX when they are
    many), so that a list growing by one item per commit (a thread's
    messages, a log) writes its own record only, not its history: a chunk
    is written once, when it fills.  Only the stored form is chunked; in
    memory the items are one Python list.

    Until schema 19 the last chunk held the rest, and was written anew with
    the index at every growth: in chunks of 256, a chat thread of 600 to
    1,200 messages wrote 5 KB a message, where the whole message is 3 KB
    at most (issue 28).  Small chunks and runs keep the list's own record
    small: about CHUNK / 2 + 2 * INDEX references at most."""

    CHUNK = 32
    INDEX = 8

    # A number a library keeps with the list, not part of its value (not
    # compared, copied or shown): how far the skills have read a chat
    # thread's messages (`__read_upto__`, stdlib/channels.ost).  In the
    # list's record, which a reply writes anyway; on the Thread it was a
    # record more in every turn (schema 17 and older).
    mark = None

    def __init__(self, items=None):
        self.items = [] if items is None else items
        if fresh is not None:
            fresh[id(self)] = self

    def __getstate__(self):
        items = self.items
        state = _chunked_state(self, super().__getstate__, 'items', len(items), self._chunks,
                               OList.INDEX)
        if 'items' not in state:
            state['tail'] = items[len(items) - len(items) % self.CHUNK:]
        # A short list whose only other attributes are its watches (`_ow`,
        # runtime/watches.py) and its mark is stored as the tuple (items,),
        # (items, watches) or (items, watches or None, mark): the names
        # cost 12 bytes each.  A dict still loads.
        n = len(state)
        if 'items' in state and n <= 3 and set(state) <= _LIST_STORED:
            if 'mark' in state:
                return (state['items'], state.get('_ow'), state['mark'])
            if n == 1:
                return (state['items'],)
            return (state['items'], state['_ow'])
        return state

    def _chunks(self, old):
        """The full chunks of `items`, as (ListChunk, its items), reusing
        those of `old` whose slice is unchanged (the rest is the `tail`)."""
        items = self.items
        n = self.CHUNK
        chunks = []
        for i in range(0, len(items) - len(items) % n, n):
            piece = items[i:i + n]
            k = i // n
            prev = old[k] if k < len(old) else None
            if prev is not None and len(prev[1]) == len(piece) and \
                    all(map(operator.is_, prev[1], piece)):
                chunks.append(prev)          # unchanged: its record stays as it is
            else:
                chunks.append((ListChunk(piece), piece))
        return chunks

    def __setstate__(self, state):
        if type(state) is tuple:
            d = {'items': state[0]}
            if len(state) > 1 and state[1] is not None:
                d['_ow'] = state[1]
            if len(state) > 2:
                d['mark'] = state[2]
            state = d
        tail = ()
        if 'tail' in state:
            state = dict(state)
            tail = state.pop('tail')
        _set_chunked_state(self, state, super().__setstate__, 'items',
                           lambda chunks: _join_items(chunks, tail))

    def __eq__(self, other):
        return self is other or (type(other) is OList and self.items == other.items)

    __hash__ = None

    def changed(self):
        self._p_changed = True

    def __repr__(self):
        return 'OList(%r)' % (self.items,)


class MapChunk(Persistent):
    """A stored slice of a big OMap's entries, (key, value) pairs in order.
    Never changed once stored, like ListChunk."""

    def __init__(self, pairs):
        self.pairs = pairs


def _map_chunk(pairs):
    return MapChunk(pairs), pairs


class OMap(Persistent):
    """A mutable map with insertion order.  `d` is a plain Python dict; it never
    holds None as a value (storing none removes the key).

    A big map is stored as chunks of CHUNK entries in insertion order, each a
    record of its own, so that a map that grows by one entry per commit (a
    channel's threads by id, a table of users) writes one chunk and a short
    index, not every entry again (the trap of a growing collection inside a
    record that every turn rewrites).  In memory it is one dict."""

    CHUNK = 128

    def __init__(self, d=None):
        self.d = {} if d is None else d
        if fresh is not None:
            fresh[id(self)] = self

    def __getstate__(self):
        state = _chunked_state(self, super().__getstate__, 'd', len(self.d), self._chunks)
        self._v_added = None
        return state

    def added(self, key):
        """`key`, not in the map before, was just added to `d` (so it is
        last): like `changed()`, and while the map is otherwise as last
        stored or loaded, its next store takes the new entries at the end
        of its chunks without comparing the others.  Comparing them all was
        most of what a new dialogue cost among 100,000 threads (issue 28)."""
        d = self.__dict__
        keys = d.get('_v_added')
        if keys is not None:
            keys.append(key)
        elif '_v_chunks' in d and self._p_jar is not None and not self._p_changed:
            self._v_added = [key]
        self._p_changed = True

    def _appended(self, old):
        """The chunks after `added()` only: `old`'s, with the added
        entries in the last one and new ones; None when `d` is not what
        that made of it (the full comparison of `_chunks` then decides)."""
        keys = self.__dict__.get('_v_added')
        if not keys or not old:
            return None
        d = self.d
        if len(d) != sum(map(len, map(_value, old))) + len(keys) or \
                list(itertools.islice(reversed(d), len(keys))) != keys[::-1]:
            return None
        chunks = list(old)
        rest = [(k, d[k]) for k in keys]
        if len(chunks[-1][1]) < self.CHUNK:
            rest = chunks.pop()[1] + rest
        for i in range(0, len(rest), self.CHUNK):
            chunks.append(_map_chunk(rest[i:i + self.CHUNK]))
        return chunks

    def _chunks(self, old):
        """The chunks of `d`, as (MapChunk, its pairs), reusing those of
        `old` whose entries are unchanged.

        A dict keeps its keys in insertion order: the keys of the stored
        chunks that are still there come first, in their order, then the
        keys added since.  So the new chunks follow the old boundaries: a
        changed or deleted entry rewrites only its own chunk, new entries
        fill the last chunk and then new ones.  The map's keys and values
        are taken as two lists, not as a list of (key, value) pairs: a
        pair per entry is 100,000 new objects for a big map, and the
        garbage collection they set off took most of a store's time."""
        appended = self._appended(old)
        if appended is not None:
            return appended
        n = self.CHUNK
        keys = list(self.d)
        values = list(self.d.values())
        chunks = []
        pos = 0
        for prev in old:
            pairs = prev[1]
            if _same_pairs(keys, values, pos, pairs):
                chunks.append(prev)          # unchanged: its record stays as it is
                pos += len(pairs)
                continue
            take = []
            for key, value in pairs:
                if pos < len(keys) and keys[pos] == key:
                    take.append((keys[pos], values[pos]))
                    pos += 1
            if take:
                chunks.append(_map_chunk(take))
        rest = list(zip(keys[pos:], values[pos:]))
        if rest and chunks and len(chunks[-1][1]) < n:
            rest = chunks.pop()[1] + rest
        for i in range(0, len(rest), n):
            chunks.append(_map_chunk(rest[i:i + n]))
        # Chunks emptied by deletions merge with their neighbour.
        merged = []
        for c in chunks:
            if merged and len(merged[-1][1]) + len(c[1]) <= n // 2:
                merged[-1] = _map_chunk(merged[-1][1] + c[1])
            else:
                merged.append(c)
        return merged

    def __setstate__(self, state):
        _set_chunked_state(self, state, super().__setstate__, 'd', _join_pairs)

    def __eq__(self, other):
        return self is other or (type(other) is OMap and self.d == other.d)

    __hash__ = None

    def changed(self):
        self._v_added = None      # anything may have changed: compare all at the store
        self._p_changed = True

    def __repr__(self):
        return 'OMap(%r)' % (self.d,)


class OSet(Persistent):
    """A mutable set with insertion order: members are the keys of `d`
    (values are always None)."""

    def __init__(self, d=None):
        self.d = {} if d is None else d
        if fresh is not None:
            fresh[id(self)] = self

    def __eq__(self, other):
        return self is other or (type(other) is OSet and self.d.keys() == other.d.keys())

    __hash__ = None

    def changed(self):
        self._p_changed = True

    def __repr__(self):
        return 'OSet(%r)' % (list(self.d),)


class Span:
    """`a..b`, `a...`, `...b`: immutable, compared structurally."""
    __slots__ = ('start', 'stop')

    def __init__(self, start, stop):
        self.start = start
        self.stop = stop

    def __eq__(self, other):
        return type(other) is Span and self.start == other.start and self.stop == other.stop

    def __hash__(self):
        return hash(('span', self.start, self.stop))

    def __reduce__(self):
        return (Span, (self.start, self.stop))

    def range(self):
        """The numbers a finite span yields, as a Python range (start none is 0)."""
        return range(0 if self.start is None else self.start, self.stop)

    def __repr__(self):
        return 'Span(%r, %r)' % (self.start, self.stop)


# ------------------------------------------------------------------- functions

class Function(Persistent):
    """A `def`, lambda or `spawn:` block: its code and its defining frame.
    An upgrade of the module replaces `code` in place (DESIGN.md §5), so the
    function keeps its identity."""

    def __init__(self, code, parent, module):
        self.code = code          # compiler.code.Code
        self.parent = parent      # the defining Frame (`__parent__` of its calls)
        self.module = module      # the OModule whose namespace it sees

    @property
    def name(self):
        return self.code.name

    def __repr__(self):
        return '<Function %s>' % self.code.name


class Builtin:
    """A built-in function.  Pickled by name, so stored data refers to the
    built-in, never to Python code.

    fn: the Python callable.  params: parameter names (for keywords and arity);
    varargs: takes any number of positional arguments; ctx: the callable takes
    the running VM as its first argument."""
    __slots__ = ('name', 'fn', 'params', 'varargs', 'ctx')

    def __init__(self, name, fn, params=(), varargs=False, ctx=False):
        self.name = name
        self.fn = fn
        self.params = tuple(params)
        self.varargs = varargs
        self.ctx = ctx

    def __reduce__(self):
        return (builtin_by_name, (self.name,))

    def __repr__(self):
        return '<builtin %s>' % self.name


BUILTINS = {}   # name -> Builtin; filled by vm.builtins


def builtin_by_name(name):
    return BUILTINS[name]


class Curried(Persistent):
    """`f{args}`: a callable with some arguments already given."""

    def __init__(self, func, args, kwargs):
        self.func = func          # any callable value
        self.args = tuple(args)
        self.kwargs = dict(kwargs)


# ----------------------------------------------------------- types and objects

class OType(Persistent):
    """A `type`.  `fields` maps each of the type's own field names, in order of
    first declaration, to (mode, default).  `supers` is a list of OType."""

    def __init__(self, name, supers=(), module=None):
        self.name = name
        self.supers = list(supers)
        self.fields = {}
        self.summary = None
        self.details = None
        self.module = module

    def declare(self, mode, name, default):
        fields = self.fields
        fields[name] = (mode, default)
        self._p_changed = True

    def lookup(self, name):
        """(mode, default) of field `name`: the type first, then each supertype in
        order, depth first; None if undeclared."""
        f = self.fields.get(name)
        if f is not None:
            return f
        for s in self.supers:
            f = s.lookup(name)
            if f is not None:
                return f
        return None

    def field_order(self):
        """All field names in display order: supertypes' fields first (in `in`
        order, skipping repeats), then the type's own (docs/language.md §19.2)."""
        out = []
        seen = set()
        self._collect(out, seen)
        return out

    def _collect(self, out, seen):
        for s in self.supers:
            s._collect(out, seen)
        for n in self.fields:
            if n not in seen:
                seen.add(n)
                out.append(n)

    def is_subtype_of(self, other):
        if self is other:
            return True
        return any(s.is_subtype_of(other) for s in self.supers)

    def __repr__(self):
        return '<OType %s>' % self.name


class OObject(Persistent):
    """An object of a user type.  `vals` holds the object's own field values
    (never None)."""

    def __init__(self, type_, vals=None):
        self.type = type_
        self.vals = {} if vals is None else vals
        if fresh is not None:
            fresh[id(self)] = self

    # Stored as the tuple (type, vals), or (type, vals, its watches) when
    # tasks watch it (`_ow`, runtime/watches.py): a chat dialogue keeps four
    # objects, and a dict's two names cost 22 bytes a record.  An
    # object stored as a dict (schema 5 and older) still loads, and one with
    # any other attribute is stored as a dict.
    def __getstate__(self):
        state = super().__getstate__()
        n = len(state)
        if n == 2 or (n == 3 and '_ow' in state):
            t, vals = state.get('type'), state.get('vals')
            if t is not None and vals is not None:
                return (t, vals) if n == 2 else (t, vals, state['_ow'])
        return state

    def __setstate__(self, state):
        if type(state) is tuple:
            state = {'type': state[0], 'vals': state[1]} if len(state) == 2 else \
                {'type': state[0], 'vals': state[1], '_ow': state[2]}
        super().__setstate__(state)

    def get(self, name):
        v = self.vals.get(name)
        if v is not None:
            return v
        f = self.type.lookup(name)
        if f is None:
            raise OstError("%s has no field '%s'" % (self.type.name, name))
        return f[1]

    def changed(self):
        self._p_changed = True

    def __repr__(self):
        return '<OObject %s>' % self.type.name


def make_error_type():
    t = OType('Error')
    t.declare('val', 'message', None)
    t.declare('val', 'where', None)
    return t


# The predefined Error type.  The durable runtime keeps one per database and
# points this at it when it opens the database (see runtime).
ERROR_TYPE = make_error_type()


def set_error_type(t):
    global ERROR_TYPE
    ERROR_TYPE = t


def make_error(message, where=None):
    vals = {'message': message}
    if where is not None:
        vals['where'] = where
    return OObject(ERROR_TYPE, vals)


def is_error(v):
    return type(v) is OObject and v.type.is_subtype_of(ERROR_TYPE)


# ------------------------------------------------------------ modules, frames

class OModule(Persistent):
    """A loaded module: its namespace (name -> value) and where it came from.
    `stamp` is its file's (mtime, size) when last read, to notice edits."""

    stamp = None

    def __init__(self, name, path=None):
        self.name = name
        self.path = path
        self.ns = {}
        self.summary = None
        self.details = None
        self.source = None
        self.code = None

    # True once a wait read this module's definitions (runtime/watches.py
    # `definitions_changed`); set once, never reset.
    defs_watched = False

    def set(self, name, value):
        ns = self.ns
        if value is None:
            ns.pop(name, None)
        else:
            ns[name] = value
        self._p_changed = True

    def __repr__(self):
        return '<OModule %s>' % self.name


_PLAIN = (type(None), bool, int, str)


def without_defaults(cls, state):
    """A stored state without the attributes equal to their class-level
    default (None, a bool, an int or a string, of the same type): a record
    with many attributes that are mostly unset (a task, a watch) is stored
    at about half its size, and loads the same, since what is left out
    reads the default.  The class must keep those defaults (the stored
    format depends on them)."""
    out = {}
    for k, v in state.items():
        d = cls.__dict__.get(k, state)       # `state`: no default
        if type(d) is not type(v) or type(v) not in _PLAIN or d != v:
            out[k] = v
    return out


# How many of a task's frames, from the top, are stored inside the task's
# record (schema 13) rather than as records of their own: the wait's own
# call and the frame that made it, the two that nearly every turn changes.
# A chat message's turn wrote the task and those two frames, three records
# where one does; the frames below rarely change, and inside the task they
# would be written again at every turn.
INLINE_FRAMES = 2


class Frame(Persistent):
    """One activation: code, program counter, its own value stack, its local
    slots, the dynamic caller, the lexical parent, and the goal (the Function,
    or the OModule for module top-level code).

    `handlers` is the stack of active `try` blocks: (handler pc, stack depth).
    `loops` holds iteration state of active `for` loops is kept on the value
    stack instead, so it is saved with the frame.

    A frame is stored inside its task's record (Task.__getstate__) while
    only the task reaches it; once anything else can (`share`: a closure's
    defining frame, `__caller__` handed out, and then every frame below it),
    or once it was stored as a record of its own, it keeps its own record,
    so it has one identity however many records refer to it."""

    # Defaults for what a fast call leaves unset: a frame starts at pc 0 with
    # no handlers (whoever adds a handler first gives the frame its own list).
    pc = 0
    handlers = ()
    parent = None
    caller = None
    # Reachable from elsewhere than its task, or loaded from a record of its
    # own: never stored inside a task's record.  Not stored itself (a frame
    # loaded from its own record is one again).
    shared = False

    # A frame is stored as the tuple of these, in this order (a waiting
    # dialogue keeps two or more frames, and every turn writes one or two):
    # a dict would add each name, 70 bytes a frame.  A frame stored as a dict
    # (schema 4 and older) still loads.
    FIELDS = ('code', 'goal', 'module', 'parent', 'caller', 'pc', 'stack', 'locals', 'handlers')

    def __getstate__(self):
        d = self.__dict__
        return (d['code'], d['goal'], d['module'], d.get('parent'), d.get('caller'),
                d.get('pc', 0), d['stack'], d['locals'], d.get('handlers') or ())

    def __setstate__(self, state):
        if type(state) is tuple:
            state = dict(zip(Frame.FIELDS, state))
        super().__setstate__(state)
        self.__dict__['shared'] = True      # loaded from its own record: it keeps it

    def _inline_state(self):
        """Its state inside its task's record: that of its own record but
        the caller (the next frame there, or the task's `frame`)."""
        d = self.__dict__
        return (d['code'], d['goal'], d['module'], d.get('parent'), d.get('pc', 0),
                d['stack'], d['locals'], d.get('handlers') or ())

    def __init__(self, code, goal, module, parent, caller):
        self.code = code
        self.goal = goal
        self.module = module
        self.parent = parent
        self.caller = caller
        self.pc = 0
        self.stack = []
        self.locals = [None] * code.nlocals
        self.handlers = []

    def local(self, name):
        """Read-only access to a local by name (`frame.x`); none if unset."""
        try:
            i = self.code.varnames.index(name)
        except ValueError:
            return None
        return self.locals[i]

    def __repr__(self):
        return '<Frame %s pc=%d>' % (self.code.name, self.pc)


class Task(Persistent):
    """A task: its current (innermost) frame and its outcome.

    Every attribute has a class-level default -- those added after the first
    stored tasks so that a task stored before they existed reads them (the
    ZODB way), the others so that the stored state can leave out what
    equals its default: a waiting task's record, 421 bytes with all of
    them, is 237 without (`without_defaults`)."""

    done = False
    result = None
    error = None
    state = 'ready'
    resume = None
    watch_depth = 0
    reads = None
    traceback = None
    raised_at = None
    module = None
    importer = None
    reported = False
    since = None
    waiting = None
    ready_link = None         # its place in the ready queue (runtime.world.ReadyQueue)
    parked = False            # stopped by the runtime, waiting for the operator
    crashes = 0               # process stops in its current turn (runtime recover)
    waits = 0                 # the waits it began (runtime.world.ReadyQueue `wake`)

    def __init__(self, tid, name, frame):
        self.id = tid
        self.name = name
        self.frame = frame
        self.done = False
        self.result = None
        self.error = None
        self.state = 'ready'
        self.resume = None        # ('value', v) or ('error', e): applied when it next runs
        self.watch_depth = 0      # nesting of watched evaluations in progress
        self.reads = None         # id -> object read by the watched evaluation
        self.traceback = None     # report lines of an uncaught error
        self.raised_at = None
        self.waiting = None       # what the task waits for, for `ostinato tasks`
        self.since = None         # when it started waiting
        self.module = None        # for a module's top-level task: the module
        self.importer = None      # the task waiting for this module load
        self.reported = False     # its uncaught error was reported

    # Stored with its top frames (at most INLINE_FRAMES, those no one else
    # reaches: Frame.shared) inside: `frames` holds their states, top
    # first, and `frame` the one below them (a record of its own, or
    # None).  The state is a tuple: the values of STORED, which every
    # waiting task has, then the frames (or None), then a dict of the
    # other attributes that differ from their defaults, when any does
    # (`without_defaults`): a waiting chat dialogue's task named seven
    # attributes, 70 bytes of its record (schema 16 and older: a dict).
    STORED = ('id', 'name', 'frame', 'state', 'waiting', 'since', 'waits')

    def __getstate__(self):
        state = without_defaults(Task, super().__getstate__())
        frame = state.get('frame')
        inline = []
        while frame is not None and len(inline) < INLINE_FRAMES and frame._p_oid is None \
                and not frame.shared:
            inline.append(frame._inline_state())
            frame = frame.caller
        if inline:
            state['frame'] = frame
        cls = Task.__dict__
        out = tuple([state.pop(k, cls.get(k)) for k in Task.STORED]) + \
            (tuple(inline) if inline else None,)
        return out + (state,) if state else out

    def __setstate__(self, state):
        if type(state) is tuple:
            d = dict(zip(Task.STORED, state))
            if state[7] is not None:
                d['frames'] = state[7]
            if len(state) > 8:
                d.update(state[8])
            state = d
        frames = state.get('frames')
        if frames is not None:
            state = dict(state)
            del state['frames']
            below = state.get('frame')
            for s in reversed(frames):
                f = Frame.__new__(Frame)
                d = f.__dict__      # in no database: past the change tracking
                d['code'], d['goal'], d['module'], d['parent'], d['pc'], d['stack'], \
                    d['locals'], d['handlers'] = s
                d['caller'] = below
                below = f
            state['frame'] = below
        super().__setstate__(state)

    def __repr__(self):
        return '<Task %s %s>' % (self.id, self.name)


def share(frame):
    """`frame` is reachable from elsewhere than its task now (a closure
    made in it, `__caller__` handed out): it and the frames below it --
    its record names its caller -- keep records of their own."""
    while frame is not None and not frame.shared:
        frame.__dict__['shared'] = True     # what is stored does not change
        frame = frame.caller


class OQueue(Persistent):
    """A persistent FIFO queue (docs/language.md §15.5).  `takers`: the tasks
    waiting for an item, in order (none until one waits)."""

    takers = None

    def __init__(self):
        self.items = []
        if fresh is not None:
            fresh[id(self)] = self

    def changed(self):
        self._p_changed = True


# ------------------------------------------------------------------ kind names

_KINDS = {
    type(None): 'none', bool: 'bool', int: 'int', float: 'float', str: 'str',
    OList: 'list', tuple: 'tuple', OMap: 'map', OSet: 'set', Span: 'span',
    Function: 'function', Builtin: 'function', Curried: 'function',
    OType: 'type', OModule: 'module', Frame: 'frame', Task: 'task', OQueue: 'queue',
}


def kind(v):
    """The kind name of a value (docs/language.md §4); for a typed object its type's name."""
    k = _KINDS.get(type(v))
    if k is not None:
        return k
    if type(v) is OObject:
        return v.type.name
    return type(v).__name__


def is_callable(v):
    t = type(v)
    return t is Function or t is Builtin or t is Curried or t is OType


# What a module variable bound by `def`, `type` or `import` holds, and a
# builtin (`note_global`).
DEFINITIONS = (Function, OType, OModule, Builtin)
