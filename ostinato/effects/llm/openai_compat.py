"""The OpenAI-compatible backend: one `POST /v1/chat/completions` per attempt.

For any server that speaks the OpenAI chat API: llama.cpp's server, vLLM,
LM Studio, Ollama's /v1, llama-cpp-python's server.  Without a model name
the server is asked which it serves, since a local server usually serves
exactly one.

Servers differ in how they take a schema.  The backend asks in this order
and keeps, per server (for the life of the process), the first way the
server accepts:

  1. `response_format: {"type": "json_schema", "json_schema": {...}}`, the
     OpenAI form (`strict: false`, since servers differ in which schemas they
     accept as strict);
  2. `response_format: {"type": "json_object", "schema": {...}}`, the form of
     llama-cpp-python's server (which answers the first with HTTP 500);
  3. no `response_format`: plain text, the schema only in the prompt (which
     states it for every backend) and the reply checked as always.

A request without a schema uses {"type": "object"}, so one choice serves
every request.  Moving down happens only on a deterministic rejection (HTTP
4xx, or a 500 whose body is a validation error); one that the plain form
gets too is the request's fault and a final `llm:` error, never an outage
to wait out.
"""
from __future__ import annotations

import re
import threading
from typing import Any, Dict, Optional, Tuple

from .base import Ask, Backend, Turn, as_int, reply_text
from .config import LLMConfig
from .errors import LLMError
from .http import exchange, server_message

FORMATS = ('json_schema', 'json_object', 'prompt')
ANY_OBJECT = {'type': 'object'}

# A 500 whose message says one of these is a server refusing the request
# (pydantic's "1 validation error ..." from llama-cpp-python's server), not
# a server breaking down.
_REJECTION = re.compile(r'validation error|input should be|unprocessable|not supported|'
                        r'unsupported', re.IGNORECASE)


def is_rejection(payload, text) -> bool:
    return bool(_REJECTION.search(server_message(payload, text)))


_chosen: Dict[str, str] = {}        # server URL -> the format it accepted first
_chosen_lock = threading.Lock()

_UNKNOWN_MODEL = re.compile(r'model.*(not found|does not exist|unknown|not available|no such)'
                            r'|(unknown|invalid) model', re.IGNORECASE | re.DOTALL)


def base_url(url: str) -> str:
    """The server's root, whether the setting ends in /v1 or not."""
    url = url.strip().rstrip('/')
    if url.endswith('/v1'):
        url = url[:-3]
    if '://' not in url:
        url = 'http://' + url
    return url


class OpenAIBackend(Backend):
    name = 'openai'

    def __init__(self, config: LLMConfig):
        if not config.openai_url:
            raise LLMError('llm: the openai backend needs the server address in '
                           'OSTINATO_OPENAI_URL (e.g. http://127.0.0.1:8080)')
        self.config = config
        self.url = base_url(config.openai_url)
        self.service = 'the OpenAI-compatible server at %s' % self.url
        self.hint = 'is the server running?'
        self.headers = {}
        if config.openai_key:
            self.headers['Authorization'] = 'Bearer ' + config.openai_key
        self._default_model: Optional[str] = None
        self._lock = threading.Lock()

    def default_model(self) -> str:
        with self._lock:
            if self._default_model is None:
                status, payload, text = exchange(
                    'GET', self.url + '/v1/models', headers=self.headers, service=self.service,
                    hint=self.hint, read_timeout=min(self.config.timeout, 30.0))
                data = payload.get('data') if isinstance(payload, dict) else None
                ids = [m['id'] for m in data or []
                       if isinstance(m, dict) and isinstance(m.get('id'), str) and m['id']]
                if status >= 400 or not ids:
                    raise LLMError('llm: no model given and %s did not list one (%s); '
                                   'pick one with --model or OSTINATO_MODEL'
                                   % (self.service, server_message(payload, text)
                                      if status >= 400 else 'empty list'))
                self._default_model = ids[0]
            return self._default_model

    def body(self, ask: Ask, model: str, form: str = 'json_schema') -> dict:
        body: Dict[str, Any] = {'model': model, 'messages': ask.messages}
        if ask.temperature is not None:
            body['temperature'] = ask.temperature
        body['max_tokens'] = self.config.num_predict
        if self.config.seed is not None:
            body['seed'] = self.config.seed
        schema = ask.schema if ask.schema is not None else ANY_OBJECT
        if form == 'json_schema':
            body['response_format'] = {'type': 'json_schema', 'json_schema': {
                'name': 'reply', 'schema': schema, 'strict': False}}
        elif form == 'json_object':
            body['response_format'] = {'type': 'json_object', 'schema': schema}
        return body

    @property
    def form(self) -> str:
        """The way of sending a schema this server is known to accept (the
        first to try when none is known yet)."""
        with _chosen_lock:
            return _chosen.get(self.url, FORMATS[0])

    def _post(self, ask: Ask, model: str, form: str) -> Tuple[int, Any, str]:
        return exchange('POST', self.url + '/v1/chat/completions',
                        body=self.body(ask, model, form), headers=self.headers,
                        service=self.service, hint=self.hint, read_timeout=self.config.timeout,
                        rejection=is_rejection)

    def chat(self, ask: Ask) -> Turn:
        model = ask.model or self.default_model()
        first = self.form
        for form in FORMATS[FORMATS.index(first):]:
            status, payload, text = self._post(ask, model, form)
            message = server_message(payload, text)
            if status == 404 or (status == 400 and _UNKNOWN_MODEL.search(message)):
                raise LLMError("llm: %s does not know the model '%s': %s"
                               % (self.service, model, message))
            if status in (401, 403):
                raise LLMError('llm: %s refused the request (HTTP %d: %s); check '
                               'OSTINATO_OPENAI_KEY' % (self.service, status, message))
            if status < 400:
                break
        else:
            raise LLMError('llm: %s rejected the request (HTTP %d): %s'
                           % (self.service, status, message))
        if form != first:
            with _chosen_lock:
                _chosen[self.url] = form
        try:
            choice = payload['choices'][0]
            content = choice['message'].get('content')
        except (TypeError, KeyError, IndexError, AttributeError):
            raise LLMError('llm: %s did not answer like an OpenAI-compatible server: %s'
                           % (self.service, message))
        usage = payload.get('usage') if isinstance(payload.get('usage'), dict) else {}
        return Turn(raw=reply_text(content, self.service),
                    model=model,
                    prompt_tokens=as_int(usage.get('prompt_tokens')),
                    reply_tokens=as_int(usage.get('completion_tokens')),
                    truncated=choice.get('finish_reason') == 'length',
                    limit=self.config.num_predict)
