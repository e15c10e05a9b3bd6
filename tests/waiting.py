"""Waiting in tests for observed progress, never for an assumed duration.

The machine running the tests may be loaded (two cores shared by several
builds): a test waits for what it needs to see -- a call the fake received, a
line of output, a file -- with a timeout generous enough that only a hang
reaches it.
"""
import time

import pytest

PATIENT = 120.0         # seconds; reached only when something hangs


def wait_for(predicate, what, timeout=PATIENT, every=0.02):
    """The first true value of `predicate()`; fails the test naming `what`
    when none came within `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > end:
            pytest.fail('timed out after %g s waiting for %s' % (timeout, what))
        time.sleep(every)


def record_suspensions(monkeypatch):
    """The list, growing as the test runs, of every request a task suspends
    on (vm/requests.py); the scheduler is patched for this test only."""
    from ostinato.runtime.scheduler import Scheduler
    seen = []
    original = Scheduler.suspend

    def spy(self, task, request):
        seen.append(request)
        return original(self, task, request)
    monkeypatch.setattr(Scheduler, 'suspend', spy)
    return seen
