"""How the scheduler's turns are made durable: one object it asks to commit,
abort, run a transaction of its own, idle and measure the database.

`Transactions` is the in-memory run (nothing to commit: a turn's output is
delivered at once); `StoreTransactions` commits to a ZODB `Store` (each
turn, or each group of turns, is one transaction, and output waits for its
commit).  The serve loop and the test modes that store everything after
every slice adapt them (runtime/serve.py, runtime/runner.py).  The
scheduler wraps each call in its `committing` guard, so that a second
Ctrl-C never interrupts a commit half-way.
"""
from __future__ import annotations

import time


class Transactions:
    """A run in memory."""

    # Turns are committed: run_ready may group several into one commit.
    durable = False

    def __init__(self, after_slice=None):
        # Test modes: after_slice(scheduler) runs after every slice (and
        # turn), to store and reload everything; such runs never group turns.
        self.after_slice = after_slice

    def commit(self):
        pass

    def abort(self):
        pass

    def transact(self, fn):
        """Run fn() in a transaction of its own and commit it."""
        result = fn()
        self.commit()
        return result

    def idle(self, sched, seconds, busy=()):
        """Nothing is ready: wait a little -- for a service's event if one
        is expected (`busy`)."""
        if busy:
            busy[0].wait(seconds)
        else:
            time.sleep(seconds)

    def size(self):
        """The database's size in bytes (None: unknown, memory)."""
        return None


class StoreTransactions(Transactions):
    """Turns committed to a ZODB `Store`."""

    durable = True

    def __init__(self, store, after_slice=None):
        super().__init__(after_slice)
        self.store = store
        # Checked at the commit too: the scheduler's own measure of a turn's
        # writes comes only at slice checkpoints.
        from .store import MAX_WRITE
        store.max_write = MAX_WRITE

    def commit(self):
        self.store.commit()

    def abort(self):
        self.store.abort()

    def transact(self, fn):
        # From a fresh view, and again after a conflict with another worker.
        return self.store.transact(fn)

    def size(self):
        return self.store.size()
