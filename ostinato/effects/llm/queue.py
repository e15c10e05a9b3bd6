"""The durable LLM request queue and its worker.

`agent()` suspends its task with an 'llm' request; this service records the
request in the database in the same turn, and after that turn's commit a
worker thread asks the model.  The reply is applied in a transaction of its
own: the task gets the reply (or an `llm: ...` error) and becomes ready, the
request leaves the queue and the exchange goes into the audit log.  A crash
before that commit loses only the reply, so the request is asked again after
the restart; a request is applied once, by its sequence number.

Requests are performed first come, first served across tasks, one at a time
unless `parallel` says more, so many dialogues share one local model.  The
worker threads see only plain data, never a database object: ZODB
connections belong to the scheduler's thread.
"""
from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from typing import Any, List
from concurrent.futures import ThreadPoolExecutor

from BTrees.IOBTree import IOBTree
from persistent import Persistent

from ...runtime import report
from ...runtime.terminal import harmless
from ...runtime.world import service_state
from ...vm import values as V
from ...vm.printing import parse_json
from ..service import Service


class LLMState(Persistent):
    """The queue (pending requests by sequence number) and the audit log (one
    persistent entry per exchange, by sequence number), kept in the world."""

    def __init__(self):
        self.next_seq = 0
        self.pending = IOBTree()
        self.log = IOBTree()

    def summary(self):
        """For `ostinato db info`."""
        return '%d requests waiting, %d exchanges logged' % (len(self.pending), len(self.log))

    def held_tasks(self):
        """The tasks waiting for a reply (for `ostinato db check`)."""
        return [req.task for req in self.pending.values() if req.task is not None]

    def release(self, task):
        """`task` no longer waits (it was cancelled): forget its requests, so
        a reply that comes anyway is dropped."""
        for seq in [seq for seq, req in self.pending.items() if req.task is task]:
            del self.pending[seq]


class LLMRequest(Persistent):
    def __init__(self, seq, task, data):
        self.seq = seq
        self.id = uuid.uuid4().hex
        self.task = task
        self.prompt = data['prompt']
        self.schema = data['schema']
        self.system = data['system']
        self.model = data['model']
        self.temperature = data['temperature']
        self.goal_stack = data['goal_stack']
        self.created = time.time()
        self.worker = None          # the worker that asks the model
        self.state = 'pending'

    def plain(self):
        return {'id': self.id, 'seq': self.seq, 'prompt': self.prompt, 'schema': self.schema,
                'system': self.system, 'model': self.model, 'temperature': self.temperature,
                'goal_stack': self.goal_stack}


class LogEntry(Persistent):
    """One exchange with the model, for `ostinato log`."""

    def __init__(self, req, result=None, error=None):
        self.seq = req.seq
        self.id = req.id
        self.task_id = req.task.id if req.task is not None else None
        self.task_name = req.task.name if req.task is not None else None
        self.goal_stack = req.goal_stack
        self.prompt = req.prompt
        self.system = req.system
        self.schema = req.schema
        self.asked = req.created
        self.answered = time.time()
        self.error = error
        result = result or {}
        self.raw = result.get('raw')
        self.reply = result.get('reply')
        self.model = result.get('model') or req.model
        self.backend = result.get('backend')
        self.attempts = result.get('attempts')
        self.seconds = result.get('seconds')
        self.prompt_tokens = result.get('prompt_tokens')
        self.reply_tokens = result.get('reply_tokens')
        self.exchanges = pack_exchanges(result.get('exchanges'), self.raw)

    def as_dict(self):
        d = {k: getattr(self, k) for k in (
            'seq', 'id', 'task_id', 'task_name', 'goal_stack', 'prompt', 'system', 'schema',
            'asked', 'answered', 'error', 'raw', 'reply', 'model', 'backend', 'attempts',
            'seconds', 'prompt_tokens', 'reply_tokens')}
        d['exchanges'] = unpack_exchanges(self.exchanges, self.raw)
        return d


# Each raw reply is stored once.  An exchange's messages are the previous
# exchange's, then the model's reply to it and the re-ask: a packed
# exchange (marked 'packed') keeps only its new messages, with the reply
# that is already stored as that exchange's 'raw' left as None, and the last
# exchange's raw (the entry's own `raw`) is None as well.  Entries stored
# before packing keep their full lists, which `unpack_exchanges` returns as
# they are.

def pack_exchanges(exchanges, raw):
    if not exchanges or not isinstance(exchanges, list) or \
            not all(isinstance(x, dict) for x in exchanges):
        return exchanges
    packed, prev = [], None
    for x in exchanges:
        messages = list(x.get('messages') or ())
        y = dict(x, packed=True)
        if prev is not None and messages[:len(prev['messages'])] == prev['messages']:
            tail = messages[len(prev['messages']):]
            y['messages'] = [dict(m, content=None) if m.get('role') == 'assistant'
                             and m.get('content') == prev.get('raw') else m for m in tail]
            y['after'] = len(prev['messages'])
        prev = x
        packed.append(y)
    if packed[-1].get('raw') == raw:
        packed[-1]['raw'] = None
    return packed


def unpack_exchanges(exchanges, raw):
    if not exchanges or not isinstance(exchanges[0], dict) or not exchanges[0].get('packed'):
        return exchanges
    out: list = []
    for i, y in enumerate(exchanges):
        x = {k: v for k, v in y.items() if k not in ('packed', 'after')}
        if i == len(exchanges) - 1 and x.get('raw') is None:
            x['raw'] = raw
        if 'after' in y:
            prev = out[-1]
            x['messages'] = prev['messages'][:y['after']] + [
                dict(m, content=prev['raw']) if m.get('role') == 'assistant'
                and m.get('content') is None else m for m in y['messages']]
        out.append(x)
    return out


SERVICE = 'llm'


def llm_state(world, make=True):
    """The queue and the log (world.services['llm']); with make=False, None
    while no request was ever made (readers must not write)."""
    return service_state(world, SERVICE, LLMState if make else None)


def to_value(obj):
    """A JSON reply as Ostinato values (objects become maps, arrays lists).
    Raises ValueError for what JSON allows and Ostinato cannot hold."""
    try:
        return parse_json(json.dumps(obj, allow_nan=False))
    except (V.OstError, ValueError, TypeError, RecursionError) as e:
        raise ValueError(str(e) if not isinstance(e, RecursionError)
                         else 'it is nested too deeply') from None


def reply_value(result):
    """('value', the reply as Ostinato values) or ('error', an `llm: ` message)
    for what a client returned: validated here, at the edge, so that no
    reply can raise in the scheduler's thread."""
    reply = result.get('reply') if isinstance(result, dict) else None
    if not isinstance(reply, dict):
        return 'error', 'llm: internal error: the client returned no reply object'
    try:
        return 'value', to_value(reply)
    except ValueError as e:
        return 'error', 'llm: the model\'s reply cannot be used: %s' % str(e)[:300]


class LLMService(Service):
    """Performs the database's LLM requests; one per process."""

    BACKOFF_MAX = 30.0
    MAX_TIMEOUTS = 3        # attempts that got no reply in time, then the request fails

    def __init__(self, make_client, parallel=1, err=None, worker='run', spinner=False):
        # make_client: () -> an object with .complete(request); or a list of
        # them, one per model server, each asked `parallel` requests at a time.
        self.makers = list(make_client) if isinstance(make_client, (list, tuple)) \
            else [make_client]
        self.clients: List[Any] = [None] * len(self.makers)
        self.client_lock = threading.Lock()
        self.slots: queue.Queue = queue.Queue()         # indexes of clients free for one more request
        for _ in range(max(1, parallel)):
            for i in range(len(self.makers)):
                self.slots.put(i)
        self.pool = ThreadPoolExecutor(max_workers=self.slots.qsize(),
                                       thread_name_prefix='ostinato-llm')
        self.inflight = set()              # seqs dispatched by this process
        self.results: queue.Queue = queue.Queue()
        super().__init__()
        self.retry_at = {}                 # seq -> time before which not to ask again
        self.timeouts = {}                 # seq -> attempts in a row that got no reply in time
        self.backoff = 1.0
        self.down = False                  # logged that the model is unreachable
        self.err = err or sys.stderr
        self.worker = worker
        self.spinner = spinner             # show one on the terminal while we wait
        self.spin = 0
        self.spin_since = None
        self.stopping = False              # an orderly stop: start no new request
        self.tokens = None                 # (attempt, reply tokens so far), as the backend says
        self.crashes = {}                  # seq -> times the model's process died on it

    # ------------------------------------------------------------ the service protocol
    def accepts(self, kind):
        return kind == 'llm'

    def suspend(self, sched, task, request):
        st = llm_state(sched.world)
        seq = st.next_seq
        st.next_seq = seq + 1
        req = LLMRequest(seq, task, request.params)
        st.pending[seq] = req
        task.waiting = ('llm', seq)
        task.state = 'waiting'

    def busy(self, sched):
        st = llm_state(sched.world, make=False)
        return bool(st is not None and st.pending)

    def wait(self, timeout):
        if self.spinner:
            self.draw_spinner()
        super().wait(timeout)

    SPIN = '|/-\\'

    def draw_spinner(self):
        """One line on the terminal: which model is asked and for how long."""
        now = time.time()
        if self.spin_since is None:
            self.spin_since = now
        self.spin += 1
        tokens = self.tokens
        done = '' if tokens is None else ', %d token%s%s' % (
            tokens[1], '' if tokens[1] == 1 else 's',
            ' (attempt %d)' % tokens[0] if tokens[0] > 1 else '')
        self.err.write('\r%s waiting for the model... %.1f s%s\x1b[K'
                       % (self.SPIN[self.spin % 4], now - self.spin_since, done))
        self.err.flush()

    def clear_spinner(self):
        if self.spin_since is not None:
            self.err.write('\r\x1b[K')
            self.err.flush()
            self.spin_since = None
        self.tokens = None

    def poll(self, sched):
        self.collect(sched)
        self.dispatch(sched)

    def collect(self, sched):
        """Apply the replies that came in, each in a transaction of its own."""
        while True:
            try:
                seq, outcome = self.results.get_nowait()
            except queue.Empty:
                break
            self.clear_spinner()
            self.inflight.discard(seq)
            if outcome[0] == 'skipped':
                continue            # not asked (a stop came first): it stays in the queue
            sched.transact(lambda: self.apply(sched, seq, outcome))  # noqa: B023 -- runs now

    def drain(self, sched):
        """An orderly stop: ask nothing new, but wait for the replies already
        asked for and keep them (the tasks get them when the run goes on).
        A second Ctrl-C interrupts this wait; the requests then stay in the
        queue and are asked again by the next run."""
        self.stopping = True
        while self.inflight:
            self.wait(0.5)
            self.collect(sched)

    # ------------------------------------------------------------ work
    def dispatch(self, sched):
        st = llm_state(sched.world, make=False)
        if st is None or not st.pending:
            return
        now = time.time()
        todo = []
        for seq, req in st.pending.items():      # in sequence order: first come, first served
            if seq in self.inflight or self.retry_at.get(seq, 0) > now:
                continue
            if req.worker not in (None, self.worker):
                continue
            todo.append(req)
        if not todo:
            return

        def claim():
            for req in todo:
                req.worker = self.worker
        sched.transact(claim)
        for req in todo:
            self.inflight.add(req.seq)
            self.pool.submit(self._perform, req.seq, req.plain())

    def reclaim(self, sched, gone):
        """Requests claimed by a worker that is gone (`gone(name)`, told by
        the serve loop) are anybody's again: asked again, their replies
        applied once."""
        st = llm_state(sched.world, make=False)
        if st is None or not st.pending:
            return
        orphans = [req for req in st.pending.values()
                   if req.worker not in (None, self.worker) and gone(req.worker)]
        if not orphans:
            return

        def free():
            for req in orphans:
                if req.state == 'pending':
                    req.worker = None
        sched.transact(free)

    def _perform(self, seq, plain):
        i = self.slots.get()
        if self.stopping:
            self.slots.put(i)
            self.results.put((seq, ('skipped', None)))
            self.event.set()
            return
        try:
            with self.client_lock:
                if self.clients[i] is None:
                    self.clients[i] = self.makers[i]()
            if self.spinner:
                def progress(attempt, tokens):
                    self.tokens = (attempt, tokens)
                outcome = ('ok', self.clients[i].complete(plain, progress=progress))
            else:
                outcome = ('ok', self.clients[i].complete(plain))
        except Exception as e:          # classified when applied, in the scheduler's thread
            outcome = ('exc', e)
        finally:
            self.slots.put(i)
        self.results.put((seq, outcome))
        self.event.set()

    def apply(self, sched, seq, outcome):
        from . import LLMCrashed, LLMError, LLMTimeout, LLMUnavailable
        st = llm_state(sched.world)
        req = st.pending.get(seq)
        if req is None or req.state != 'pending':
            return                      # applied already: a reply is applied once
        kind, value = outcome
        if kind == 'exc' and isinstance(value, LLMCrashed):
            # Once may be bad luck; twice on the same request is the request.
            self.crashes[seq] = self.crashes.get(seq, 0) + 1
            if self.crashes[seq] < 2:
                self.err.write('ostinato: %s; asking again\n' % harmless(str(value)))
                self.err.flush()
                return
            value = LLMError("llm: the model's process died twice while answering this "
                             "request; the last time: %s" % value)
        self.crashes.pop(seq, None)
        if kind == 'exc' and isinstance(value, LLMTimeout):
            n = self.timeouts[seq] = self.timeouts.get(seq, 0) + 1
            if n >= self.MAX_TIMEOUTS:
                # As Temporal does with an activity's start-to-close timeout:
                # each attempt has its deadline, and after the last attempt
                # the workflow gets a catchable error instead of waiting on.
                kind, value = 'exc', LLMError('llm: %s (%d attempts)' % (value, n))
        if kind == 'exc' and isinstance(value, LLMUnavailable):
            # The task keeps waiting; ask again later, and say so once.
            if not self.down:
                self.err.write('ostinato: %s; will keep trying\n' % harmless(str(value)))
                self.err.flush()
                self.down = True
            self.retry_at[seq] = time.time() + self.backoff
            self.backoff = min(self.backoff * 2, self.BACKOFF_MAX)
            return
        if self.down:
            self.err.write('ostinato: the model answers again\n')
            self.down = False
        self.backoff = 1.0
        self.retry_at.pop(seq, None)
        self.timeouts.pop(seq, None)
        task = req.task
        if kind == 'ok':
            how, got = reply_value(value)
            if how == 'value':
                entry = LogEntry(req, result=value)
                resume = ('value', got)
            else:
                self.err.write('ostinato: request %d of task %s: %s\n'
                               % (seq, getattr(task, 'id', '?'), harmless(str(got))))
                self.err.flush()
                entry = LogEntry(req, result=value if isinstance(value, dict) else None,
                                 error=got)
                resume = ('error', V.make_error(got))
        else:
            msg = str(value) if isinstance(value, LLMError) else \
                'llm: internal error: %s: %s' % (type(value).__name__, value)
            if not msg.startswith('llm: '):
                msg = 'llm: ' + msg
            # A model that never gave a valid reply: keep what it said at
            # every attempt, so `ostinato log` shows why it failed.
            details = getattr(value, 'details', None)
            entry = LogEntry(req, result=details if isinstance(details, dict) else None,
                             error=msg)
            resume = ('error', V.make_error(msg))
        st.log[seq] = entry
        del st.pending[seq]
        req.state = 'done'
        if task is not None and not task.done:
            task.resume = resume
            sched.make_ready(task)

    def close(self):
        self.clear_spinner()
        self.pool.shutdown(wait=False, cancel_futures=True)
        # A client may hold a model process: stopping it ends a reply under
        # way now (it is asked again next time) rather than at its end.
        for client in self.clients:
            if hasattr(client, 'close'):
                client.close()


# ------------------------------------------------------------ `ostinato log`

def log_entries(world, task_id=None, last=None):
    st = llm_state(world, make=False)
    if st is None:
        return []
    entries = [e for e in st.log.values() if task_id is None or e.task_id == task_id]
    return entries[-last:] if last else entries


def _indent(text, prefix='    '):
    return '\n'.join(prefix + ln for ln in str(text).split('\n'))


def log_text(entries):
    out = []
    for e in entries:
        when = time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(e.asked))
        head = '#%d  %s  task %s %s' % (e.seq, when, e.task_id, e.task_name)
        if e.model or e.backend:
            head += '  %s (%s)' % (e.model, e.backend)
        if e.seconds is not None:
            head += '  %.2f s' % e.seconds
        if e.attempts:
            head += '  %d attempt%s' % (e.attempts, '' if e.attempts == 1 else 's')
        if e.prompt_tokens is not None or e.reply_tokens is not None:
            head += '  tokens %s/%s' % (e.prompt_tokens, e.reply_tokens)
        out.append(head)
        if e.goal_stack:
            out.append('  goals: ' + ' > '.join(e.goal_stack.split('\n')))
        out.append('  prompt:')
        out.append(_indent(e.prompt))
        # Each attempt the model got wrong: its raw text and what was wrong.
        for n, x in enumerate(e.exchanges or (), 1):
            if isinstance(x, dict) and x.get('problem'):
                out.append('  attempt %d: %s' % (n, x['problem']))
                out.append(_indent(x.get('raw') if x.get('raw') is not None else '', '      '))
        if e.error:
            out.append('  error: ' + e.error)
        else:
            out.append('  reply: ' + json.dumps(e.reply, ensure_ascii=False))
        out.append('')
    return '\n'.join(out).rstrip('\n')


@report.wait_words
def waits_for_model(task, now):
    """`the model (request 12)` for a task whose `agent()` waits for its reply."""
    w = task.waiting
    if type(w) is tuple and len(w) == 2 and w[0] == SERVICE:
        return 'the model (request %s)' % (w[1],)
    return None
