"""What the client hands a backend for one attempt, and what it gets back.

A backend performs exactly one exchange with one model: it knows its
server's wire format and error wording, nothing about validation or
re-asking, which the client does the same way for every backend.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional


@dataclass
class Ask:
    """One attempt at a request."""
    request: dict               # the queue's request, as given to LLMClient.complete
    messages: list              # the conversation so far; the last message is the user's
    schema: Optional[dict]
    model: Optional[str]        # the request's model, else the config's; None: the backend's default
    temperature: Optional[float]
    attempt: int                # 0 for the first ask, 1 and 2 for re-asks
    # Called now and then with the number of reply tokens so far, by the
    # backends that can tell (the embedded model), for a progress display.
    progress: Optional[Callable[[int], None]] = None

    def report(self, tokens: int) -> None:
        if self.progress is not None:
            self.progress(tokens)


@dataclass
class Turn:
    """The model's answer to one attempt."""
    raw: str
    model: str
    prompt_tokens: Optional[int] = None
    reply_tokens: Optional[int] = None
    truncated: bool = False     # stopped by the reply-length cap, so likely cut mid-JSON
    limit: int = 0              # that cap, for the re-ask message


class Backend:
    name = '?'

    def chat(self, ask: Ask) -> Turn:
        raise NotImplementedError

    def close(self) -> None:
        """Stop whatever the backend started; a later chat may start it again."""


def reply_text(content, server: str) -> str:
    """The text of a reply's `content`, checked at the edge: a server that
    sends a number, an object or a list there gets a clear `llm:` error the
    skill can catch (it was "llm: internal error: TypeError")."""
    if content is None:
        return ''
    if isinstance(content, str):
        return content
    what = ('a number' if isinstance(content, (int, float)) and not isinstance(content, bool)
            else 'an object' if isinstance(content, dict)
            else 'a list' if isinstance(content, list)
            else 'true or false' if isinstance(content, bool) else type(content).__name__)
    from .errors import LLMError
    raise LLMError("llm: %s sent a reply whose content is %s, not text" % (server, what))


def as_int(value) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
