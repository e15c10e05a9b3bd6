"""The benchmarks' dialogue workload on LangGraph with its SQLite checkpointer
(bench/peers.py compares it with Ostinato's; not a benchmark by itself).

The same dialogue as bench/dialogue.ost: ten turns of waiting for the user's
message, counting the words said so far, and replying.  As a graph:
START -> respond -> wait -> respond -> ... -> END, where `wait` calls
`interrupt()` and a message resumes it with `Command(resume=TEXT)`; the
state (the thread's messages, the word count, the turn) is checkpointed by
`SqliteSaver` in one SQLite file per database, thread id = dialogue number.

Durability, as Ostinato's: the checkpointer's connection runs with
`PRAGMA synchronous=FULL` (read back and checked), in the WAL mode the
saver sets, so every commit is fsynced before `invoke` returns; the graph
runs with the library's default durability ('async': every step's
checkpoint is written, while the next step runs, and `invoke` returns after
all are committed), or BENCH_LANGGRAPH_DURABILITY ('sync', 'exit') when
set.  A build of many dialogues (set-up, not measured) runs with
synchronous=OFF.
"""
from __future__ import annotations

import operator
import os
import sqlite3
import time
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from dialogues import TURNS, message_text


class State(TypedDict):
    messages: Annotated[list, operator.add]   # {'sender', 'when', 'text'}
    words: int
    turn: int


def _now():
    return time.strftime('%Y-%m-%dT%H:%M:%S%z')


def respond(state):
    """Count the words of the user's messages since the last reply, and
    reply."""
    msgs = state['messages']
    i = len(msgs)
    while i > 0 and msgs[i - 1]['sender'] is not None:
        i -= 1
    words = state['words'] + sum(len(m['text'].split()) for m in msgs[i:])
    turn = state['turn'] + 1
    reply = {'sender': None, 'when': _now(), 'text': 'reply %d: %d words so far' % (turn, words)}
    return {'messages': [reply], 'words': words, 'turn': turn}


def wait(state):
    text = interrupt('waiting for the user')
    return {'messages': [{'sender': 'user', 'when': _now(), 'text': text}]}


def after_reply(state):
    return END if state['turn'] >= TURNS else 'wait'


def graph(checkpointer):
    b = StateGraph(State)
    b.add_node('respond', respond)
    b.add_node('wait', wait)
    b.add_edge(START, 'respond')
    b.add_conditional_edges('respond', after_reply, ['wait', END])
    b.add_edge('wait', 'respond')
    return b.compile(checkpointer=checkpointer)


class LangGraphDialogues:
    """A SQLite checkpoint database of dialogues, and the compiled graph."""

    name = 'langgraph'

    def __init__(self, path, synchronous='FULL'):
        self.path = path
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        self.saver.setup()
        self.conn.execute('PRAGMA synchronous=%s' % synchronous)
        wanted = {'FULL': 2, 'OFF': 0}[synchronous]
        got = self.conn.execute('PRAGMA synchronous').fetchone()[0]
        mode = self.conn.execute('PRAGMA journal_mode').fetchone()[0]
        if got != wanted or mode != 'wal':
            raise RuntimeError('SQLite runs with synchronous=%s, journal_mode=%s' % (got, mode))
        self.graph = graph(self.saver)
        self.durability = os.environ.get('BENCH_LANGGRAPH_DURABILITY') or None
        self.answered = 0
        self.pending = []

    @staticmethod
    def config(dialogue):
        return {'configurable': {'thread_id': 'dialogue-%d' % dialogue}}

    def _invoke(self, value, dialogue):
        state = self.graph.invoke(value, self.config(dialogue), durability=self.durability)
        last = state['messages'][-1]
        if last['sender'] is not None:
            raise RuntimeError('dialogue %d did not reply' % dialogue)
        self.answered += 1
        return state

    def start(self, dialogue, text):
        self._invoke({'messages': [{'sender': 'user', 'when': _now(), 'text': text}],
                      'words': 0, 'turn': 0}, dialogue)

    # ------------------------------------------------------------ the cases' protocol
    def resume(self, dialogue, text):
        self._invoke(Command(resume=text), dialogue)

    def deliver_all(self, pairs):
        """LangGraph has no inbox: the messages wait in the caller's memory
        until `process` hands each to `invoke`."""
        self.pending.extend(pairs)

    def process(self):
        """Resume each waiting dialogue with its message, one after another.
        (graph.batch, which runs them in a thread pool, was not faster on
        this machine: the checkpointer serialises on one connection.)"""
        pending, self.pending = self.pending, []
        for dialogue, text in pending:
            self.resume(dialogue, text)

    def replies(self):
        return self.answered

    def extra(self):
        return {'durability': self.durability or 'async (default)'}

    def close(self):
        self.conn.close()

    @classmethod
    def build(cls, path, n):
        """A new database of `n` dialogues, each past its first turn."""
        d = cls(path, synchronous='OFF')
        try:
            for i in range(n):
                d.start(i, message_text(i, 1))
        finally:
            d.close()
