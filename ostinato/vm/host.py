"""`Host`: everything the VM asks of the runtime, in one typed list.

The VM (vm/interp.py, its compiled blocks and vm/taskbuiltins.py) reaches
the world outside the running task only through these members of
`vm.host`; the runtime's Scheduler implements them.  What a task waits for
leaves the VM another way: `VM.run` returns ('suspend', REQUEST) with a
record of vm/requests.py.  tests/test_boundary.py checks that the VM calls
nothing else on its host and that the Scheduler provides all of it.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Host(Protocol):
    # Truthy while some task waits for a change: only then does the VM
    # report changes (`changed`), so a program nobody watches pays nothing.
    waiters: Any

    def spawn(self, vm: Any, func: Any, args: Any, kwargs: Any) -> Any:
        """Start a task running func(*args, **kwargs); returns the Task, ready."""

    def import_module(self, vm: Any, task: Any, name: str, frame: Any) -> Any:
        """The module NAME, or None when `task` must first wait for its top
        level to run (the host has then set up that wait: the VM returns an
        Import request).  Raises OstError."""

    def changed(self, obj: Any) -> None:
        """`obj` changed: wake the tasks whose watches read it, and tell
        `values.note_change` (a watch leaves out what its evaluation made
        only while nothing it did not make changed)."""

    def changed_global(self, module: Any, old: Any, new: Any) -> None:
        """A variable of `module` went from `old` to `new` (STORE_GLOBAL):
        `changed(module)`, and when either is a definition
        (values.is_definition) the tasks that read its definitions wake too."""

    def watch(self, task: Any, reads: list, defs: tuple = ()) -> Any:
        """Register a reactive loop's reads (and the modules of which it read
        only definitions); returns a token with a `dirty` flag."""

    def unwatch(self, token: Any) -> None:
        """Drop a token that `watch` returned (the loop evaluates again)."""

    def put(self, queue: Any, value: Any) -> None:
        """Hand `value` to the first task waiting on `queue`, or append it."""

    def deliver(self, channel: str, thread_id: Any, text: str) -> str | None:
        """A bot message for a chat channel, sent after the turn's commit; or
        the text to show with the turn's output instead (a channel that
        prints its messages: the console)."""
