"""The world: every piece of state a run keeps between turns.

Modules by name, tasks by id, the FIFO ready queue, timers, active watches
and the main task live in one object graph rooted here, made only of
picklable values, so the whole world can be stored and reloaded between any
two instructions (the "store everything" test mode pickles it; the durable
store keeps it in ZODB).
"""
from __future__ import annotations

import heapq
from collections import deque

from persistent import Persistent

from ..vm import values as V

SCHEMA_VERSION = 1


class Watch(Persistent):
    """A task's registration on the objects its last watched evaluation read.

    kind 'change' (wait until / wait while / x!): the task sleeps until one of
    the objects changes.  kind 'token' (reactive for): the loop checks `dirty`
    after each pass and sleeps on the watch only when nothing changed yet.
    Each object keeps its watches in the attribute `_ow` (a list), so the index
    object -> waiting tasks is stored with the objects themselves.  A Watch is
    persistent because the task, the world and each object refer to the same
    one."""

    def __init__(self, wid, task, objs, kind):
        self.id = wid
        self.task = task
        self.objs = objs
        self.kind = kind
        self.dirty = False


class World(Persistent):
    def __init__(self):
        self.schema = SCHEMA_VERSION
        self.modules = {}          # name -> OModule
        self.loading = {}          # name -> OModule whose top level has not finished
        self.tasks = {}            # id -> Task (live ones)
        self.ready = deque()       # FIFO of Tasks
        self.timers = []           # heap of (wake_time, seq, task)
        self.seq = 0
        self.next_task_id = 1
        self.next_watch_id = 1
        self.watches = {}          # id -> Watch (active)
        self.main_task = None
        self.error_type = V.ERROR_TYPE

    def new_task_id(self):
        i = self.next_task_id
        self.next_task_id = i + 1
        return i

    def add_timer(self, when, task):
        self.seq += 1
        heapq.heappush(self.timers, (when, self.seq, task))
        self._p_changed = True

    def due_timers(self, now):
        out = []
        while self.timers and self.timers[0][0] <= now:
            out.append(heapq.heappop(self.timers)[2])
        if out:
            self._p_changed = True
        return out
