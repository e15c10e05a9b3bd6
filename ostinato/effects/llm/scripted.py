"""The scripted backend: replies read from a JSON file, for demos and tests.

It stands in for a model so that skills, the queue and crash recovery can
be tested without one; so the reply to a request must depend only on the
request itself, never on what this process happened to answer before: after
a crash the queue asks the same request again (same `seq`, same prompt) in a
fresh process, and it must get the same reply.

The file is a JSON list of entries:

    [
      {"match": "Which skill", "reply": {"skill": "diet"}, "repeat": true},
      {"reply": {"action": "answer", "text": "hello"}},
      {"replies": ["not json", {"action": "cancel", "text": ""}]}
    ]

- `reply` is the model's text when it is a string (so a script can give bad
  JSON), else any JSON value, sent as its JSON text.  `replies` instead is a
  list for successive attempts of one request: the first ask gets the first,
  each re-ask the next, and the last one answers any further re-ask.
- Entries with `match` (a regular expression, searched in the request's
  prompt with re.DOTALL; the schema paragraph added by the client is not part
  of it) are tried first, and every entry that matches is a candidate, in
  file order.  They are never used up by earlier requests (that would make
  the reply depend on history).  Within one request, a candidate answers as
  many attempts as it has replies (one for `reply`), then a re-ask goes on to
  the next candidate, unless the candidate has `"repeat": true`, which makes
  its last reply answer every remaining attempt of the request.  The last
  reply of the last candidate answers any further re-ask.
- Entries without `match` are in-order replies: the one at position `seq`
  among them (0-based, counting only entries without `match`) answers the
  request whose queue position is `seq`, when no match entry matched.  A
  request answered by a match entry leaves its in-order position unused, so
  a script that mixes both kinds keeps a placeholder there (any entry).
- A request with no match and no in-order entry at its `seq` fails with
  `llm: the script FILE has no reply for request SEQ`.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import List, Optional

from .base import Ask, Backend, Turn
from .config import DEFAULT_SCRIPTED_MODEL, LLMConfig
from .errors import LLMError

_KEYS = {'match', 'reply', 'replies', 'repeat'}


@dataclass
class Entry:
    number: int                         # 1-based position in the file, for messages
    pattern: Optional[re.Pattern]
    replies: List[str]                  # raw texts, one per attempt
    repeat: bool


def _raw(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def load_script(path: str) -> List[Entry]:
    def bad(why):
        return LLMError('llm: the script %s is not valid: %s' % (path, why))
    try:
        with open(path, encoding='utf-8') as f:
            data = json.load(f)
    except OSError as e:
        raise LLMError('llm: cannot read the script %s: %s' % (path, e.strerror or e))
    except ValueError as e:
        raise bad('not JSON (%s)' % e)
    if not isinstance(data, list):
        raise bad('it must be a JSON list of entries')
    entries = []
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise bad('entry %d is not an object' % n)
        unknown = set(item) - _KEYS
        if unknown:
            raise bad('entry %d has unknown keys: %s' % (n, ', '.join(sorted(unknown))))
        if ('reply' in item) == ('replies' in item):
            raise bad('entry %d needs exactly one of "reply" and "replies"' % n)
        replies = [item['reply']] if 'reply' in item else item['replies']
        if not isinstance(replies, list) or not replies:
            raise bad('entry %d: "replies" must be a non-empty list' % n)
        pattern = None
        if 'match' in item:
            if not isinstance(item['match'], str):
                raise bad('entry %d: "match" must be a string' % n)
            try:
                pattern = re.compile(item['match'], re.DOTALL)
            except re.error as e:
                raise bad('entry %d: "match" is not a regular expression (%s)' % (n, e))
        repeat = item.get('repeat', False)
        if not isinstance(repeat, bool):
            raise bad('entry %d: "repeat" must be true or false' % n)
        entries.append(Entry(n, pattern, [_raw(r) for r in replies], repeat))
    return entries


class ScriptedBackend(Backend):
    name = 'scripted'

    def __init__(self, config: LLMConfig):
        if not config.script:
            raise LLMError('llm: the scripted backend needs a script file in OSTINATO_LLM_SCRIPT')
        self.path = config.script
        self._entries: Optional[List[Entry]] = None
        self._lock = threading.Lock()

    def entries(self) -> List[Entry]:
        with self._lock:
            if self._entries is None:
                self._entries = load_script(self.path)
            return self._entries

    def tape(self, seq: int, prompt: str) -> List[str]:
        """The replies for attempts 0, 1, 2, ... of the request (the last repeats)."""
        entries = self.entries()
        candidates = [e for e in entries if e.pattern is not None and e.pattern.search(prompt)]
        if not candidates:
            in_order = [e for e in entries if e.pattern is None]
            if not 0 <= seq < len(in_order):
                raise LLMError('llm: the script %s has no reply for request %d' % (self.path, seq))
            candidates = [in_order[seq]]
        tape: List[str] = []
        for entry in candidates:
            tape.extend(entry.replies)
            if entry.repeat:
                break
        return tape

    def chat(self, ask: Ask) -> Turn:
        seq = ask.request.get('seq')
        if not isinstance(seq, int):
            raise LLMError('llm: the scripted backend needs the request\'s seq')
        tape = self.tape(seq, ask.request.get('prompt') or '')
        return Turn(raw=tape[min(ask.attempt, len(tape) - 1)],
                    model=ask.model or DEFAULT_SCRIPTED_MODEL)
