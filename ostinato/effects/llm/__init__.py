"""The LLM leaf call, without the database: backends, HTTP, reply checking.

The model is a leaf: a skill asks it one structured question at a time and
gets back one JSON object, checked against the question's JSON Schema and
re-asked at most twice.  This package performs one such request; the
durable queue, `agent()`, the audit log and `ostinato log` are built on top
of it (effects/llm/queue.py) and see only this interface:

    client = LLMClient(LLMConfig.from_env(backend=flag, model=flag))
    result = client.complete({'id': ..., 'seq': 0, 'prompt': ..., 'schema': {...},
                              'system': None, 'model': None, 'temperature': None,
                              'goal_stack': ...})
    result['reply']      # the parsed JSON object

The result also has `raw` (the last raw text), `model`, `backend`,
`attempts` (1-3), `seconds`, `prompt_tokens` and `reply_tokens` (summed over
attempts; None when the server does not say) and `exchanges` (per attempt:
the `messages` sent, the `raw` reply, the `problem` found or None, and its
`seconds`).  The prompt always ends with a paragraph stating the reply
contract, for every backend, since constrained decoding does not show the
schema to the model: the reply's shape ("Reply with a JSON object of this
shape: {"action": "answer" | "confer", "text": string}") when the schema
has one, else the JSON Schema itself (replies.schema_paragraph).
`complete` raises `LLMError` (final; the message starts 'llm: ') or
`LLMUnavailable` (transient: the caller retries later), or its kinds
`LLMCrashed` (the model's process died on this request: retried once) and
`LLMTimeout` (no reply within the timeout: retried a few times only).
`complete(request, progress=f)` calls f(attempt, tokens) while a backend
that can tell (the embedded one) generates, for a progress display.

Backends: `ollama` (ollama.py), `openai` (openai_compat.py), `embedded`
(embedded.py: llama.cpp in a child process, model_worker.py), `scripted`
(scripted.py, replies from a file), and `auto`, which picks Ollama if it
answers, else the embedded model.
"""
from .client import LLMClient
from .config import LLMConfig
from .errors import LLMCrashed, LLMError, LLMTimeout, LLMUnavailable

__all__ = ['LLMClient', 'LLMConfig', 'LLMCrashed', 'LLMError', 'LLMTimeout', 'LLMUnavailable']
