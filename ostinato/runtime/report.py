"""Looking at a world: the text behind `ostinato tasks` and `ostinato db`.

Every function here only reads the world and returns text (or plain data),
so the REPL can show the same reports; `now` is a parameter so tests can fix
the clock.  The one exception is `prune_ended`, the upkeep `db pack` does
before packing.
"""
from __future__ import annotations

import os
import time as _time
from collections import Counter

from ..compiler import code as _ops
from ..compiler.code import BYTECODE_VERSION
from ..vm.interp import goal_name
from ..vm.printing import display, to_str
from ..vm.values import Function, OModule, OObject, Task
from . import watches
from .world import Watch

VALUE_WIDTH = 100     # locals and errors are cut to this many characters
WATCHED_SHOWN = 3     # objects named in "waiting for a change of ..."


class NoSuchTask(KeyError):
    """No task with that id in the world."""

    def __init__(self, tid):
        super().__init__(tid)
        self.tid = tid

    def __str__(self):
        return 'no task with id %s' % (self.tid,)


# ------------------------------------------------------------------ values

def short(text, width=VALUE_WIDTH):
    """`text` on one line, cut to `width` characters."""
    text = text.replace('\n', '\\n')
    if len(text) > width:
        text = text[:width - 3] + '...'
    return text


def render(value, width=VALUE_WIDTH):
    """The display form of a value, cut to `width`; never raises."""
    try:
        text = display(value)
    except Exception as e:     # too deep, or a value no renderer knows
        text = '<cannot render %s: %s>' % (type(value).__name__, e)
    return short(text, width)


def name_of(obj):
    """A short name for an object a task waits on: `<Box>`, `<Thread 42>` (an
    object with an `id` field: a chat thread, a user), `<module m>`,
    `<queue 2>`, `<task t>`, or a container's display form, cut short."""
    if type(obj) is OObject:
        oid = obj.vals.get('id')
        if type(oid) in (str, int):
            return '<%s %s>' % (obj.type.name, short(str(oid), 30))
        return '<%s>' % obj.type.name
    return render(obj, 40)


# ------------------------------------------------------------------- times

def duration(seconds):
    """`2 h 3 min`, `4 min 10 s`, `12 s`, `0.3 s`, `3 d 2 h`."""
    s = abs(seconds)
    if s < 10:
        return '%.1f s' % s if s < 1 else '%d s' % s
    s = int(round(s))
    if s < 60:
        return '%d s' % s
    if s < 3600:
        m, r = divmod(s, 60)
        return '%d min %d s' % (m, r) if r else '%d min' % m
    if s < 86400:
        h, r = divmod(s, 3600)
        m = r // 60
        return '%d h %d min' % (h, m) if m else '%d h' % h
    d, r = divmod(s, 86400)
    h = r // 3600
    return '%d d %d h' % (d, h) if h else '%d d' % d


def clock_time(t, now):
    """The local time of `t`: `12:03:04` on the day of `now`, else with the date."""
    lt = _time.localtime(t)
    if lt[:3] == _time.localtime(now)[:3]:
        return _time.strftime('%H:%M:%S', lt)
    return _time.strftime('%Y-%m-%d %H:%M:%S', lt)


def when_text(t, now):
    """`12:03:04 (in 2 h 3 min)` or `12:01:00 (5 min ago)`."""
    delta = t - now
    rel = ('in ' + duration(delta)) if delta >= 0 else (duration(delta) + ' ago')
    return '%s (%s)' % (clock_time(t, now), rel)


# ------------------------------------------------------------------- waits

_WATCH_ENDS = {
    _ops.WATCH_END_UNTIL: '`wait until`',
    _ops.WATCH_END_WHILE: '`wait while`',
    _ops.WATCH_END_BANG: '`!`',
}


def _watch_construct(task, watch):
    """Which construct made a watch: `wait until`, `wait while`, `!`, or a
    reactive `for`.  A task waiting on a change is parked at the WATCH_BEGIN
    of its watched evaluation; the matching WATCH_END_* names the construct."""
    if watch.kind == 'token':
        return 'a reactive `for`'
    frame = task.frame
    if frame is None:
        return 'a watched evaluation'
    instrs = frame.code.instrs
    depth = 0
    for op, _arg in instrs[frame.pc:]:
        if op == _ops.WATCH_BEGIN:
            depth += 1
        elif op in _WATCH_ENDS:
            depth -= 1
            if depth <= 0:
                return _WATCH_ENDS[op]
    return 'a watched evaluation'


# What a task waits for, said as its author thinks of it ("ann's reply to:
# When was lunch?") before the mechanics ("a change of <Thread 7> ...").
# Only the layers above know what their objects mean -- a chat thread, a
# model request -- so they register a function here: fn(task, now) -> the
# words, or None when the wait is none of theirs.
WAIT_WORDS: list = []
WORDS_DEPTH = 3       # "task 9 to end; it waits for task 12 to end; ..." at most so deep


def wait_words(fn):
    """Register fn(task, now) as a source of words for waits (a decorator)."""
    WAIT_WORDS.append(fn)
    return fn


def waits_for(task, now=None, depth=0):
    """What a waiting task waits for, in a few words, or None: what a
    registered function says; time, for a sleep; for a watch on another
    task, that task's end and what it waits for."""
    if task.state != 'waiting':
        return None
    now = _time.time() if now is None else now
    for fn in WAIT_WORDS:
        try:
            words = fn(task, now)
        except Exception:     # words are a courtesy: never worth losing the report
            words = None
        if words:
            return words
    w = task.waiting
    if type(w) is tuple and len(w) == 2 and w[0] == 'sleep' and type(w[1]) in (int, float):
        return 'time (until %s)' % _time.strftime('%Y-%m-%dT%H:%M', _time.localtime(w[1]))
    if isinstance(w, Watch) and depth < WORDS_DEPTH:
        for o in w.objs or ():
            if isinstance(o, Task) and not o.done:
                inner = waits_for(o, now, depth + 1)
                return 'task %s %s to end%s' % (o.id, o.name,
                                                '; it waits for ' + inner if inner else '')
    return None


def state_of(task, world=None):
    """The task's state: 'ready' for the task whose wait fired onto the
    empty ready queue, which its record still says is waiting (runtime/
    world.py ReadyQueue.wake)."""
    if world is not None and task.state == 'waiting' and world.ready.woken() is task:
        return 'ready'
    return task.state


def describe_wait(task, now=None, world=None):
    """What the task waits for: in words first when they are known
    (`waits_for`), then how (`waiting for a change of ...`)."""
    if state_of(task, world) == 'ready':
        return 'ready'
    now = _time.time() if now is None else now
    how = _how_it_waits(task, now)
    words = waits_for(task, now) if how != task.state else None
    return '%s -- %s' % (words, how) if words else how


def _how_it_waits(task, now):
    state = task.state
    if state in ('ready', 'running', 'done', 'failed'):
        return state
    w = task.waiting
    if w is None:
        return 'waiting'
    if isinstance(w, Watch):
        objs = list(w.objs or ())
        how = _watch_construct(task, w)
        if not objs:
            return 'waiting forever (%s read no object)' % how
        names = [name_of(o) for o in objs[:WATCHED_SHOWN]]
        if len(objs) > WATCHED_SHOWN:
            names.append('%d more' % (len(objs) - WATCHED_SHOWN))
        text = 'waiting for a change of %s (read by %s)' % (' or '.join(names), how)
        if w.kind == 'token' and w.dirty:
            text += ', already changed'
        return text
    if type(w) is tuple and w:
        kind = w[0]
        if kind == 'sleep':
            if w[1] < now:     # due: wakes at the next scheduler turn
                return 'sleeping until %s (overdue by %s)' % (clock_time(w[1], now),
                                                               duration(now - w[1]))
            return 'sleeping until %s' % when_text(w[1], now)
        if kind == 'import':
            return 'waiting for module %s' % w[1]
        if kind == 'take':
            return 'waiting for an item from %s' % name_of(w[1])
        return 'waiting for %s' % ' '.join(
            [str(kind)] + [x if type(x) is str else render(x, 40) for x in w[1:]])
    return 'waiting for %s' % render(w, 60)


def since_text(task, now=None):
    since = task.since
    if since is None:
        return None
    now = _time.time() if now is None else now
    return when_text(since, now)


# ------------------------------------------------------------------ frames

def frames(task):
    """The task's frames, innermost first."""
    out = []
    f = task.frame
    seen = set()
    while f is not None and id(f) not in seen:
        seen.add(id(f))
        out.append(f)
        f = f.caller
    return out


def blurb(frame):
    """The goal blurb summary of the code a frame runs, or None."""
    return frame.code.summary


def goal_label(frame):
    """The frame's blurb summary, else its goal name."""
    return blurb(frame) or goal_name(frame)


def goal_stack(task):
    """Blurb summaries (or goal names) of the task's frames, outermost first."""
    return [goal_label(f) for f in reversed(frames(task))]


def is_old_code(frame):
    """Whether a frame still runs code that an upgrade of its module has
    replaced (DESIGN.md §5): its code is not the current code of its function
    (or of its module, for top-level code), or was compiled from another
    version of the module's source than the current one (a lambda or
    `spawn:` block made by old code)."""
    code = frame.code
    goal = frame.goal
    if type(goal) is Function or type(goal) is OModule:
        if goal.code is not None and code is not goal.code:
            return True
    module = frame.module
    if type(module) is OModule and module.code is not None:
        h, current = code.source_hash, module.code.source_hash
        if h is not None and current is not None and h != current:
            return True
    return False


def old_frames(task):
    return [f for f in frames(task) if is_old_code(f)]


def frame_pc(task, frame, innermost):
    """The instruction a frame is at: a caller frame and a task stopped in a
    call are just past their CALL; a task waiting on a change is parked at the
    start of its watched evaluation."""
    pc = frame.pc
    if innermost and isinstance(task.waiting, Watch) and task.state == 'waiting':
        return pc
    return max(pc - 1, 0)


def frame_where(task, frame, innermost):
    """`FILE:LINE:COL` of where a frame is."""
    code = frame.code
    pc = frame_pc(task, frame, innermost)
    if not code.positions:
        return '%s:%d:%d' % (code.filename, code.line, code.col)
    pc = min(pc, len(code.positions) - 1)
    line, col = code.positions[pc]
    return '%s:%d:%d' % (code.filename, line, col)


# ------------------------------------------------------------------- tasks

def live_tasks(world):
    return list(world.tasks.values())


def find_task(world, tid):
    """The task with id `tid`: a live one, or the ended main task."""
    t = world.tasks.get(tid)
    if t is None:
        main = world.main_task
        if main is not None and main.id == tid:
            t = main
    if t is None:
        raise NoSuchTask(tid)
    return t


def task_line(task, now=None, widths=(0, 0, 0), world=None):
    """One line: id, name, state, what it waits for, since when, goal stack,
    and `[old code]` when a frame runs replaced code.  `widths` pads the
    first three columns."""
    now = _time.time() if now is None else now
    state = state_of(task, world)
    parts = [str(task.id).rjust(widths[0]), task.name.ljust(widths[1]),
             state.ljust(widths[2])]
    wait = describe_wait(task, now, world)
    if wait != state:
        since = since_text(task, now)
        parts.append(wait + (', since ' + since if since else ''))
    parts.append('goals: ' + ' > '.join(goal_stack(task)))
    if old_frames(task):
        parts.append('[old code]')
    return '  '.join(parts)


def tasks_text(world, now=None):
    """One line per live task, by id (no final line break)."""
    now = _time.time() if now is None else now
    tasks = live_tasks(world)
    if not tasks:
        return 'no live tasks'
    widths = (max(len(str(t.id)) for t in tasks), max(len(t.name) for t in tasks),
              max(len(t.state) for t in tasks))
    return '\n'.join(task_line(t, now, widths, world) for t in tasks)


def task_data(task, world=None, now=None):
    """One task as plain data (`ostinato tasks --json`): id, name, state,
    what it waits for, since when (Unix seconds), its goal stack, whether a
    frame runs replaced code, and whether it is the main task."""
    now = _time.time() if now is None else now
    state = state_of(task, world)
    wait = describe_wait(task, now, world)
    return {'id': task.id, 'name': task.name, 'state': state,
            'waiting': wait if wait != state else None,
            'waits_for': waits_for(task, now) if state == task.state else None,
            'since': getattr(task, 'since', None),
            'goals': goal_stack(task),
            'old_code': bool(old_frames(task)),
            'main': world is not None and getattr(world, 'main_task', None) is task}


def task_detail_data(world, tid, now=None):
    """`task_data` of one task, with its frames (innermost first: where,
    name, blurb, old code, locals in their display form) and a failed
    task's error and traceback.  Raises NoSuchTask."""
    task = find_task(world, tid)
    data = task_data(task, world, now)
    data['error'] = _error_text(task) if task.state == 'failed' or task.error is not None \
        else None
    data['traceback'] = list(getattr(task, 'traceback', None) or ())
    data['result'] = render(task.result) if task.state == 'done' else None
    data['frames'] = [
        {'where': frame_where(task, f, i == 0), 'name': goal_name(f), 'blurb': blurb(f),
         'old_code': is_old_code(f),
         'locals': {name: render(value) for name, value in zip(f.code.varnames, f.locals)}}
        for i, f in enumerate(frames(task))]
    return data


def task_text(world, tid, now=None):
    """One task in full: state and wait, its goal stack, its frames innermost
    first with `FILE:LINE:COL in NAME`, blurb and locals, and a failed task's
    error (no final line break).  Raises NoSuchTask, a KeyError."""
    now = _time.time() if now is None else now
    task = find_task(world, tid)
    main = ' (the main task)' if world.main_task is task else ''
    state = state_of(task, world)
    lines = ['task %d %s%s: %s' % (task.id, task.name, main, state)]
    wait = describe_wait(task, now, world)
    if wait != state:
        since = since_text(task, now)
        lines.append('  ' + wait + (', since ' + since if since else ''))
    lines.append('goals: ' + ' > '.join(goal_stack(task)))
    if task.state == 'failed' or task.error is not None:
        lines.append('error: %s' % short(_error_text(task), 400))
        for tb in task.traceback or ():
            lines.append('  at %s' % tb)
    elif task.state == 'done':
        lines.append('result: %s' % render(task.result))
    fs = frames(task)
    lines.append('frames, innermost first:')
    for i, f in enumerate(fs):
        head = '  %s in %s' % (frame_where(task, f, i == 0), goal_name(f))
        if blurb(f):
            head += ' -- ' + blurb(f)
        if is_old_code(f):
            head += '  [old code]'
        lines.append(head)
        for name, value in zip(f.code.varnames, f.locals):
            lines.append('      %s = %s' % (name, render(value)))
    return '\n'.join(lines)


def _error_text(task):
    """`FILE:LINE:COL: MESSAGE` of a task's uncaught error."""
    err = task.error
    try:
        msg = to_str(err)
    except Exception:
        msg = render(err)
    where = task.raised_at
    if where is None and type(err) is OObject:
        where = err.vals.get('where')
    return '%s: %s' % (where, msg) if type(where) is str else msg


# ---------------------------------------------------------------- database

def module_status(m):
    """'unchanged', 'changed', 'missing' (the file is gone) or 'no file'."""
    path = m.path
    if not path:
        return 'no file'
    try:
        with open(path, 'rb') as f:
            text = f.read().decode('utf-8', 'replace').replace('\r\n', '\n')
    except OSError:
        return 'missing'
    return 'unchanged' if text == m.source else 'changed'


def world_info(world):
    """Figures of a world as (label, text) pairs, then a list of module lines."""
    states = Counter(state_of(t, world) for t in world.tasks.values())
    rows = [
        ('schema version', str(world.schema)),
        ('bytecode version', str(BYTECODE_VERSION)),
        ('live tasks', '%d%s' % (sum(states.values()), (' (%s)' % ', '.join(
            '%d %s' % (n, s) for s, n in sorted(states.items()))) if states else '')),
        ('ready queue', str(len(world.ready))),
        ('timers', str(len(world.timers))),
        ('watches', str(watches.count_active(world))),
    ]
    nxt = world.next_timer() if len(world.timers) else None
    if nxt is not None:
        rows.append(('next timer', when_text(nxt, _time.time())))
    main = world.main_task
    if main is not None:
        rows.append(('main task', '%d %s (%s)' % (main.id, main.name, main.state)))
    box = world.outbox
    rows.append(('outbox', '%d waiting, %d sent, %d resent after a restart, %d refused'
                 % (len(box.pending), box.sent, box.resent, box.failed)))
    for name, st in world.services.items():
        # Each service's state says what is worth a line (its `summary`).
        summary = getattr(st, 'summary', None)
        if summary is not None:
            rows.append((name, summary()))
    mods = []
    for name in world.modules.keys():
        m = world.modules[name]
        mods.append((name, m.path or '-', module_status(m)))
    for name in world.loading.keys():
        m = world.loading[name]
        mods.append((name, m.path or '-', 'loading'))
    if mods:
        wn = max(len(m[0]) for m in mods)
        wp = max(len(m[1]) for m in mods)
        mods = ['  %s  %s  %s' % (n.ljust(wn), p.ljust(wp), st) for n, p, st in mods]
    return rows, mods


def storage_figures(storage):
    """(file path or None, size in bytes or None, objects or None)."""
    path = getattr(storage, '_file_name', None)
    size = objects = None
    try:
        size = storage.getSize()
    except Exception:
        pass
    if path and os.path.exists(path):
        size = os.path.getsize(path)
    from .pg import object_count
    try:
        objects = object_count(storage)
        if objects is None:
            objects = len(storage)
    except Exception:
        pass
    return path, size, objects


def storage_info(storage, address):
    """(label, text) pairs about a storage: path, size, objects, transactions."""
    rows = []
    path, size, objects = storage_figures(storage)
    # ZODB's storage class (ours only add checks to FileStorage).
    name = next((c.__name__ for c in type(storage).__mro__
                 if c.__module__.split('.')[0] in ('ZODB', 'ZEO')), type(storage).__name__)
    rows.append(('storage', '%s %s' % (name, path or address or '(in memory)')))
    if size is not None:
        rows.append(('size', human_size(size)))
    if objects is not None:
        rows.append(('objects', str(objects)))
    n = count_transactions(storage, size)
    if n is not None:
        rows.append(('transactions', str(n)))
    return rows


COUNT_LIMIT = 256 << 20   # count transactions only in files up to this size


def count_transactions(storage, size):
    """The number of transactions of a FileStorage (a walk over the record
    headers), or None when that would be dear or is not possible."""
    if getattr(storage, '_file_name', None) is None or size is None or size > COUNT_LIMIT:
        return None
    try:
        it = storage.iterator()
        try:
            return sum(1 for _ in it)
        finally:
            close = getattr(it, 'close', None)
            if close is not None:
                close()
    except Exception:
        return None


def human_size(n):
    for unit in ('bytes', 'KiB', 'MiB', 'GiB'):
        if n < 1024 or unit == 'GiB':
            return ('%d %s' % (n, unit)) if unit == 'bytes' else ('%.1f %s' % (n, unit))
        n /= 1024.0


def format_rows(rows):
    width = max((len(k) for k, _ in rows), default=0)
    return ''.join('%-*s  %s\n' % (width + 1, k + ':', v) for k, v in rows)


def db_data(world, storage, address):
    """`ostinato db info --json`: the figures as numbers where they are."""
    path, size, objects = storage_figures(storage)
    states = Counter(t.state for t in world.tasks.values())
    main = getattr(world, 'main_task', None)
    box = getattr(world, 'outbox', None)
    data = {
        'storage': type(storage).__name__, 'path': path or address, 'size_bytes': size,
        'objects': objects, 'transactions': count_transactions(storage, size),
        'schema_version': getattr(world, 'schema', None),
        'live_tasks': sum(states.values()), 'tasks_by_state': dict(sorted(states.items())),
        'ready_queue': len(world.ready), 'timers': len(world.timers),
        'watches': watches.count_active(world),
        'next_timer': world.next_timer() if len(world.timers) else None,
        'main_task': None if main is None else {'id': main.id, 'name': main.name,
                                                 'state': main.state},
        'outbox': None if box is None else {'waiting': len(box.pending), 'sent': box.sent,
                                            'resent': box.resent, 'refused': box.failed},
        'modules': [],
    }
    for name in world.modules.keys():
        m = world.modules[name]
        data['modules'].append({'name': name, 'path': m.path, 'status': module_status(m)})
    for name in world.loading.keys():
        data['modules'].append({'name': name, 'path': world.loading[name].path,
                                'status': 'loading'})
    return data


def db_report(world, storage, address):
    """The text of `ostinato db info`."""
    rows, mods = world_info(world)
    text = format_rows(storage_info(storage, address) + rows)
    text += 'modules: %d\n' % len(mods)
    text += ''.join(m + '\n' for m in mods)
    return text


# ------------------------------------------------------------------ upkeep

def prune_ended(world):
    """Drop ended tasks that linger in the world's indexes (the task table,
    the ready queue, timers, watches, the running slot); returns how many
    distinct tasks were dropped.  The ended main task stays: `run` reads it."""
    gone = set()

    def ended(t):
        if isinstance(t, Task) and (t.done or t.state in ('done', 'failed')):
            gone.add(id(t))
            return True
        return False

    for tid in [tid for tid, t in world.tasks.items() if ended(t)]:
        # A watch it still holds leaves the indexes of what it watched.
        if isinstance(world.tasks[tid].waiting, Watch):
            watches.unwatch(world, world.tasks[tid].waiting)
        del world.tasks[tid]
    for t in [t for t in world.ready if ended(t)]:
        world.ready.remove(t)
    for key in [k for k, t in world.timers.items() if ended(t)]:
        del world.timers[key]
    running = world.running          # worker name -> task
    for key in [k for k, t in running.items() if ended(t)]:
        del running[key]
    if gone:
        world._p_changed = True
    return len(gone)
