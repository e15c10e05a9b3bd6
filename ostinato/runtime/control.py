"""The operator's actions on one task: cancel it, or run a parked one again
(`ostinato tasks cancel|retry ID`, the REPL's `:cancel` / `:retry`).

Each is one transaction on the live database (through a running serve's
socket, or the file): a worker running the task conflicts with it and runs
the turn again from the new state; with no process running, the change
waits in the database for the next `run` or `serve`.
"""
from __future__ import annotations

from .report import NoSuchTask


def act(store, sched, tid, action):
    """Cancel or retry task `tid`; returns (ok, what happened)."""
    def change():
        task = store.world.tasks.get(tid)
        if task is None:
            main = store.world.main_task
            if main is None or main.id != tid:
                raise NoSuchTask(tid)
            task = main
        problem = sched.cancel(task) if action == 'cancel' else sched.retry(task)
        return task, problem
    task, problem = store.transact(change)
    if problem is not None:
        store.abort()
        return False, problem
    if action == 'cancel':
        return True, ('task %d (%s) cancelled: where it waits or runs it gets an Error '
                      '"cancelled by the operator", which it may catch' % (task.id, task.name))
    return True, 'task %d (%s) runs again from its last commit' % (task.id, task.name)
