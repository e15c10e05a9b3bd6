"""What every effect service shares: the scheduler's side of the protocol.

A service (the LLM worker, a chat channel) is polled by the scheduler
between turns (`poll`), says whether it still expects outside events
(`busy`), and may take over suspensions of a kind it `accepts`.  Its
threads report news by setting `event`; `bind` makes that the scheduler's
own wake-up event, so news of any service ends the scheduler's idle wait
whichever service it waits on.
"""
from __future__ import annotations

import os
import threading


class Service:
    listens = False     # always expects news (a chat channel): its being busy is no reply on its way
    # The chat channel whose bot messages this service prints with the turn's
    # output -- after its commit, in order with the program's own prints --
    # instead of sending them from the outbox (the console).
    prints_channel: str | None = None

    def __init__(self):
        self.event = threading.Event()

    def accepts(self, kind):
        return False

    def bind(self, sched):
        if self.event.is_set():
            sched.wakeup.set()
        self.event = sched.wakeup

    def wait(self, timeout):
        self.event.wait(timeout)
        self.event.clear()

    def close(self):
        pass


def crash_point(variable, name, _seen={}):  # noqa: B006 -- the counts, per process
    """Test mode (environment `variable` = NAME:N): die like kill -9 the N-th
    time this process passes the point NAME, to test each window between a
    commit and the exchange with the outside that goes with it.  NAME:N:raise
    raises an error there instead (a bug in a thread)."""
    spec = os.environ.get(variable)
    if not spec:
        return
    point, _, rest = spec.partition(':')
    nth, _, how = rest.partition(':')
    if point == name:
        key = (variable, name)
        _seen[key] = _seen.get(key, 0) + 1
        if _seen[key] == int(nth or 1):
            if how == 'raise':
                raise RuntimeError('a test fault at %s' % name)
            os._exit(137)
