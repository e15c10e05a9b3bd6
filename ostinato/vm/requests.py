"""What a task asks of the runtime when it suspends.

The VM's `run` returns ('suspend', REQUEST) when a task must wait; REQUEST is
one of the small frozen records below, and the runtime's `suspend` turns it
into a wait (DESIGN.md §4).  A request lives only between the VM returning
it and the scheduler handling it, in the same turn: it is never stored.
What is stored is the wait it becomes -- `Task.waiting` (('sleep', WHEN),
('take', QUEUE), ('import', NAME), ('llm', SEQ) or a Watch) and
`Task.resume` (('value', V) or ('error', E)) -- and those keep their tuple
form, which databases on disk already hold.

`kind` names the request for the services that take over suspensions
(`Service.accepts(kind)`) and for messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Request:
    kind: ClassVar[str] = '?'


@dataclass(frozen=True)
class Sleep(Request):
    """sleep(seconds): resume with none after `seconds` (at once if <= 0)."""
    kind: ClassVar[str] = 'sleep'
    seconds: float


@dataclass(frozen=True)
class Take(Request):
    """take(queue) on an empty queue: resume with the next item put."""
    kind: ClassVar[str] = 'take'
    queue: Any


@dataclass(frozen=True)
class Change(Request):
    """wait until / wait while / x!: resume when one of `objs` changes."""
    kind: ClassVar[str] = 'change'
    objs: tuple
    # Modules whose definitions (not variables) it read (values.note_global).
    defs: tuple = ()


@dataclass(frozen=True)
class Token(Request):
    """A reactive for loop that saw no change yet: sleep on its watch."""
    kind: ClassVar[str] = 'token'
    watch: Any


@dataclass(frozen=True)
class Import(Request):
    """import NAME while the module's top level runs first (the runtime set
    up the wait when the VM asked it for the module)."""
    kind: ClassVar[str] = 'import'
    name: str


@dataclass(frozen=True)
class AskModel(Request):
    """agent(): one structured question for the LLM service.  `params` holds
    prompt, schema (plain JSON), system, model, temperature and goal_stack."""
    kind: ClassVar[str] = 'llm'
    params: dict
