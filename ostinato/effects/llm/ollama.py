"""The Ollama backend: one `POST /api/chat` per attempt.

Ollama constrains the output to the JSON Schema given as `format` but does
not show the schema to the model, which is why the client states it in the
prompt as well.  Ollama's own words for a missing model ("model 'x' not
found, try pulling it first") become an error that says how to get it.
"""
from __future__ import annotations

from .base import Ask, Backend, Turn, as_int, reply_text
from .config import DEFAULT_OLLAMA_MODEL, LLMConfig
from .errors import LLMError
from .http import exchange, server_message

PROBE_TIMEOUT = 1.0


def hint() -> str:
    return "is 'ollama serve' running?"


class OllamaBackend(Backend):
    name = 'ollama'

    def __init__(self, config: LLMConfig):
        self.config = config
        self.host = config.ollama_host.rstrip('/')
        self.service = 'Ollama at %s' % self.host

    def body(self, ask: Ask, model: str) -> dict:
        options = {}
        if ask.temperature is not None:
            options['temperature'] = ask.temperature
        if self.config.seed is not None:
            options['seed'] = self.config.seed
        if self.config.num_ctx is not None:
            options['num_ctx'] = self.config.num_ctx
        options['num_predict'] = self.config.num_predict
        return {
            'model': model,
            'messages': ask.messages,
            'stream': False,
            'format': ask.schema if ask.schema is not None else 'json',
            'options': options,
            'keep_alive': self.config.keep_alive,
        }

    def chat(self, ask: Ask) -> Turn:
        model = ask.model or DEFAULT_OLLAMA_MODEL
        status, payload, text = exchange(
            'POST', self.host + '/api/chat', body=self.body(ask, model),
            service=self.service, hint=hint(), read_timeout=self.config.timeout)
        message = server_message(payload, text)
        if status == 404 and 'not found' in message.lower():
            raise LLMError("llm: Ollama at %s has no model '%s'; run `ollama pull %s` first "
                           "(or pick another with --model)" % (self.host, model, model))
        if status >= 400:
            raise LLMError('llm: Ollama at %s rejected the request (HTTP %d): %s'
                           % (self.host, status, message))
        reply = payload.get('message') if isinstance(payload, dict) else None
        if not isinstance(reply, dict) or payload.get('error'):
            raise LLMError('llm: the server at %s did not answer like Ollama: %s'
                           % (self.host, message))
        return Turn(raw=reply_text(reply.get('content'), 'Ollama at %s' % self.host),
                    model=model,
                    prompt_tokens=as_int(payload.get('prompt_eval_count')),
                    reply_tokens=as_int(payload.get('eval_count')),
                    truncated=payload.get('done_reason') == 'length',
                    limit=self.config.num_predict)


def answers(config: LLMConfig, timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether an Ollama server answers at the configured host, for 'auto'."""
    host = config.ollama_host.rstrip('/')
    try:
        status, payload, _ = exchange('GET', host + '/api/tags', service='Ollama at ' + host,
                                      hint=hint(), read_timeout=timeout, connect_timeout=timeout)
    except Exception:
        return False
    return status == 200 and isinstance(payload, dict) and 'models' in payload
