"""What the web pages show, read from a world: plain dicts and lists.

The web server reads the database through connections of its own (never
the scheduler's), each opened for one request and aborted after it, so
it sees the last commit and writes nothing.  The inspector's figures come
from runtime/report.py and the model-call log of effects/llm/queue.py,
the same functions behind `ostinato tasks`, `ostinato log` and `ostinato
db info`, so the page and the commands never disagree.
"""
from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone

import transaction

from ...runtime import report
from ...runtime.store import ROOT_KEY
from ...vm.interp import goal_name
from ...vm.values import OModule
from ..channels.chat import channels_module
from ..llm.queue import llm_state
from .state import session_user, web_state

CHANNEL = 'web'
TYPING_AT_MOST = 180.0     # "typing..." is given up on after this long (as on Telegram)
CALLS_PER_PAGE = 50
TITLE_WIDTH = 60
CONVERSATIONS_SHOWN = 100  # the newest in the chat page's list


class Reader:
    """Read-only views of the database, each on a pooled connection of its
    own (ZODB connections are not shared between threads)."""

    def __init__(self, db, at_once=4):
        self.db = db
        self.gate = threading.BoundedSemaphore(at_once)

    @contextmanager
    def world(self):
        with self.gate:
            tm = transaction.TransactionManager()
            conn = self.db.open(transaction_manager=tm)
            try:
                tm.begin()
                yield conn.root().get(ROOT_KEY)
            finally:
                tm.abort()
                conn.close()

    def __call__(self, fn, *args, **kwargs):
        """fn(world, *args, **kwargs) on a fresh view."""
        with self.world() as world:
            return fn(world, *args, **kwargs)


def thread_key(name, conversation):
    return '%s:%s:%d' % (CHANNEL, name, conversation)


def _threads(world):
    m = channels_module(world)
    return m.ns['threads'].d if m is not None else {}


def _items(thread):
    msgs = thread.get('messages') if thread is not None else None
    return msgs.items if msgs is not None else []


# ------------------------------------------------------------------ who

def who(world, cookie_hash):
    """(name, is_owner) of a session, or None."""
    st = web_state(world, create=False) if world is not None else None
    name = session_user(st, cookie_hash)
    if name is None or st is None:
        return None
    return name, name == st.owner


def link_user(world, token_hash):
    """The name a login link signs in as, or None (read only: the link is
    not used up)."""
    st = web_state(world, create=False) if world is not None else None
    return st.links.get(token_hash) if st is not None else None


# ------------------------------------------------------------------ chat

def message(m, index):
    sender = m.get('sender')
    return {'index': index, 'when': str(m.get('when') or ''), 'text': str(m.get('text') or ''),
            'bot': sender is None,
            'name': 'bot' if sender is None else str(sender.get('name') or sender.get('id'))}


def messages(world, key, after=0):
    items = _items(_threads(world).get(key))
    return [message(items[i], i) for i in range(max(0, after), len(items))]


def count(world, key):
    return len(_items(_threads(world).get(key)))


def conversations(world, name):
    """The user's newest conversations, newest first: number, title, size,
    last time."""
    st = web_state(world, create=False)
    u = st.users.get(name) if st is not None else None
    if u is None:
        return []
    threads = _threads(world)
    out = []
    for n in range(u.threads, max(0, u.threads - CONVERSATIONS_SHOWN), -1):
        items = _items(threads.get(thread_key(name, n)))
        if not items:
            continue
        first = str(items[0].get('text') or '')
        out.append({'n': n, 'title': report.short(first, TITLE_WIDTH), 'count': len(items),
                    'last': str(items[-1].get('when') or '')})
    return out


def _stamp(iso):
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (TypeError, ValueError):
        return None


def typing(world, key, now=None):
    """Whether the bot is "typing" in a thread: its user's last message is
    unanswered, recent, and the model is being asked (as on Telegram)."""
    items = _items(_threads(world).get(key))
    if not items or items[-1].get('sender') is None:
        return False
    llm = llm_state(world, make=False)
    if llm is None or not llm.pending:
        return False
    at = _stamp(items[-1].get('when'))
    now = time.time() if now is None else now
    return at is not None and now - at < TYPING_AT_MOST


# ------------------------------------------------------------------ inspector: tasks

def last_calls(world, limit=5000):
    """Task id -> the sequence number of its last logged model call (the
    newest `limit` calls are looked at)."""
    st = llm_state(world, make=False)
    out: dict = {}
    if st is None:
        return out
    keys = st.log.keys()
    n = len(keys)
    for i in range(n - 1, max(-1, n - 1 - limit), -1):
        e = st.log[keys[i]]
        out.setdefault(e.task_id, e.seq)
    return out


def task_row(t, calls, now, world=None):
    state = report.state_of(t, world)
    wait = report.describe_wait(t, now, world)
    waiting = getattr(t, 'waiting', None)
    asking = waiting[1] if type(waiting) is tuple and len(waiting) == 2 and waiting[0] == 'llm' \
        else None
    since = getattr(t, 'since', None)
    return {'id': t.id, 'name': t.name, 'state': state,
            'wait': '' if wait == state else wait,
            'since': iso(since), 'ago': report.duration(now - since) if since else '',
            'goals': report.goal_stack(t), 'old': bool(report.old_frames(t)),
            'call': calls.get(t.id), 'asking': asking}


def tasks(world, state=None, text=None, now=None):
    """The live tasks (as `ostinato tasks`), filtered by state and by a
    text found in the id, name, wait or goal stack; and the states seen."""
    now = time.time() if now is None else now
    calls = last_calls(world)
    rows = [task_row(t, calls, now, world) for t in report.live_tasks(world)]
    states = sorted({r['state'] for r in rows})
    if state:
        rows = [r for r in rows if r['state'] == state]
    if text:
        low = text.lower()
        rows = [r for r in rows if low in ' '.join(
            [str(r['id']), r['name'], r['state'], r['wait']] + r['goals']).lower()]
    return rows, states


def source_line(frame, where):
    """(line number, text, column) of where a frame is, from its module's
    source; None when the module changed since the frame's code was made."""
    m = getattr(frame, 'module', None)
    if type(m) is not OModule or not m.source or m.code is None:
        return None
    if getattr(frame.code, 'source_hash', None) != getattr(m.code, 'source_hash', None):
        return None
    try:
        _, line, col = where.rsplit(':', 2)
        line, col = int(line), int(col)
    except ValueError:
        return None
    lines = m.source.split('\n')
    if not 1 <= line <= len(lines):
        return None
    return line, lines[line - 1], col


def task(world, tid, now=None):
    """One task in full (as `ostinato tasks ID`), each frame with its
    source line.  Raises report.NoSuchTask."""
    now = time.time() if now is None else now
    t = report.find_task(world, tid)
    row = task_row(t, last_calls(world), now, world)
    row['main'] = world.main_task is t
    row['error'] = None
    if t.state == 'failed' or t.error is not None:
        row['error'] = report.short(report._error_text(t), 400)
    row['traceback'] = list(getattr(t, 'traceback', None) or ())
    row['result'] = report.render(t.result) if t.state == 'done' else None
    frames = []
    for i, f in enumerate(report.frames(t)):
        where = report.frame_where(t, f, i == 0)
        frames.append({'where': where, 'name': goal_name(f), 'blurb': report.blurb(f),
                       'old': report.is_old_code(f), 'source': source_line(f, where),
                       'locals': [(n, report.render(v))
                                  for n, v in zip(f.code.varnames, f.locals)]})
    row['frames'] = frames
    return row


# ------------------------------------------------------------------ inspector: model calls

def iso(t):
    """A stored Unix time as ISO-8601 in UTC (the page shows it in the
    browser's zone), or ''."""
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec='seconds') if t else ''


def call_row(e):
    d = e.as_dict()
    d['when'] = iso(e.asked)
    d['goals'] = (e.goal_stack or '').split('\n') if e.goal_stack else []
    d['reply_json'] = json.dumps(e.reply, ensure_ascii=False, indent=2) \
        if e.reply is not None else None
    d['reasks'] = max(0, len(e.exchanges or ()) - 1)
    d['pending'] = False
    return d


def pending_calls(world):
    st = llm_state(world, make=False)
    if st is None:
        return []
    out = []
    for r in st.pending.values():
        task = getattr(r, 'task', None)
        out.append({'seq': r.seq, 'when': iso(r.created), 'prompt': r.prompt,
                    'task_id': task.id if task is not None else None,
                    'task_name': task.name if task is not None else None,
                    'goals': (r.goal_stack or '').split('\n') if r.goal_stack else [],
                    'worker': r.worker, 'model': r.model})
    return out


def calls(world, task_id=None, before=None, limit=CALLS_PER_PAGE):
    """The newest logged model calls (before sequence number `before`),
    newest first; and the sequence number to page on from, or None."""
    st = llm_state(world, make=False)
    if st is None:
        return [], None
    keys = st.log.keys(max=before - 1) if before is not None else st.log.keys()
    out: list = []
    i = len(keys) - 1
    while i >= 0 and len(out) < limit:
        e = st.log[keys[i]]
        if task_id is None or e.task_id == task_id:
            out.append(call_row(e))
        i -= 1
    more = out[-1]['seq'] if out and i >= 0 else None
    return out, more


def call(world, seq):
    st = llm_state(world, make=False)
    e = st.log.get(seq) if st is not None else None
    if e is not None:
        return call_row(e)
    for p in pending_calls(world):
        if p['seq'] == seq:
            return dict(p, pending=True)
    return None


# ------------------------------------------------------------------ inspector: threads, db

def all_threads(world):
    out = []
    for key, t in _threads(world).items():
        items = _items(t)
        user = t.get('user')
        out.append({'key': key, 'channel': str(t.get('channel')), 'id': str(t.get('id')),
                    'user': str(user.get('name')) if user is not None else '',
                    'count': len(items),
                    'last': str(items[-1].get('when') or '') if items else ''})
    out.sort(key=lambda r: r['last'], reverse=True)
    return out


def thread(world, key):
    t = _threads(world).get(key)
    if t is None:
        return None
    user = t.get('user')
    return {'key': key, 'channel': str(t.get('channel')), 'id': str(t.get('id')),
            'user': str(user.get('name')) if user is not None else '',
            'timezone': str(user.get('timezone') or '') if user is not None else '',
            'messages': [message(m, i) for i, m in enumerate(_items(t))]}


def db_info(world, storage, address):
    """The rows of `ostinato db info` (the queues, each service's summary)
    and the module lines."""
    rows, mods = report.world_info(world)
    return report.storage_info(storage, address) + rows, mods
