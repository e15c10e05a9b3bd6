"""The embedded model's own process: llama.cpp behind a pipe.

llama.cpp is native code: a crash in it (a CPU feature the build assumed,
a bug in a kernel) kills the process it runs in.  So the embedded backend
(embedded.py) never loads it into the runtime's process; it runs this
module as a child, `python -m ostinato.effects.llm.model_worker MODEL.gguf`,
and a crash costs one request, not the scheduler.  The child's stderr is a
log file (llama.cpp's chatter, Python's fault handler on a crash); its
protocol goes over a private copy of stdout, and fd 1 is pointed at the
log too, so nothing native can write into the protocol or onto the console.

The protocol is JSON lines.  The child says `{"ready": {...}}` once the
model is loaded (or `{"fatal": "..."}` and exits).  Then, for each request
line `{"id", "messages", "schema", "max_tokens", "temperature", "seed",
"repeat_penalty", "deadline"}` on stdin, it answers `{"id", "progress":
TOKENS}` now and then while it generates, then `{"id", "done": {"content",
"finish", "prompt_tokens", "reply_tokens", "seconds", "prompt_seconds"}}`
(finish: 'stop', 'length' at max_tokens, or 'deadline' when `deadline`
seconds passed), or `{"id", "error": "..."}` for
a request llama.cpp refuses (a prompt longer than the context).  It exits
when stdin closes or its parent is gone.

Speed: constrained decoding is grammar-first in llama-cpp-python: the
grammar sampler checks every candidate, all 262,144 of Gemma's vocabulary,
before top-k, for every token.  Here the sampler chain picks a token
without the grammar and the grammar checks only that one; only when it is
rejected does the grammar filter the whole vocabulary and the chain pick
again (llama.cpp's own server samples the same way).  The result follows
the same grammar, and the same distribution where the first pick is valid.
"""
from __future__ import annotations

import argparse
import ctypes
import faulthandler
import json
import math
import os
import re
import signal
import sys
import time
import traceback
from typing import Any, Dict

PROGRESS_EVERY = 0.25          # seconds between progress lines
MAX_THREADS = 8

# Gemma's chat format, for GGUF files that lack a chat template (the
# Gemma 3 270M package's does): llama-cpp-python would fall back to
# Llama 2's format, which Gemma was not trained on.  This is Gemma 3's own
# template (text only): no system role, so system text opens the first
# user turn.
GEMMA_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}"
    "{%- set first_user_prefix = '' -%}"
    "{%- set loop_messages = messages -%}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
    "{{ message['content'] | trim }}"
    "{{ '<end_of_turn>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}")


def use_model_chat_format(llama):
    """Gemma's template when the file has none; which format is used."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    if llama.metadata.get('tokenizer.chat_template'):
        return 'the GGUF file\'s template'
    if not llama.metadata.get('general.architecture', '').startswith('gemma'):
        return llama.chat_format
    text = lambda token: llama.detokenize([token], special=True).decode('utf-8', 'replace')
    llama.chat_handler = Jinja2ChatFormatter(
        template=GEMMA_TEMPLATE, eos_token=text(llama.token_eos()),
        bos_token=text(llama.token_bos())).to_chat_handler()
    return 'gemma'


def _protocol_channel():
    """A private copy of stdout for the protocol; fd 1 then goes to stderr
    (the log), so native code printing to stdout cannot corrupt it."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, 'w', encoding='utf-8', buffering=1)


class Channel:
    def __init__(self, stream):
        self.stream = stream

    def send(self, message):
        self.stream.write(json.dumps(message) + '\n')
        self.stream.flush()


TOKEN_DATA = [('id', 'i4'), ('logit', 'f4'), ('p', 'f4')]     # llama_token_data
SHORTLIST = 1024        # the best candidates the grammar checks before all of them


def rejection_sampling_llama(llama_cpp: Any):
    """llama_cpp.Llama whose constrained sampling checks the grammar against
    the chosen token first (see the module doc), and which calls `on_token`
    before each token (it returns True to end the reply there)."""
    import numpy as np

    class Llama(llama_cpp.Llama):
        on_token = None
        grammar_first = False       # True: llama-cpp-python's own order (for bench/llm.py)
        _grammar = None              # the grammar sampler of the reply being generated
        resamples = 0                # how often the first pick did not fit (for bench/llm.py)

        def _init_sampler(self, *args, grammar=None, **kwargs):
            self._free_grammar()
            if grammar is not None and not self.grammar_first:
                self._grammar = llama_cpp.llama_sampler_init_grammar(
                    self._model.vocab, grammar._grammar.encode('utf-8'),
                    grammar._root.encode('utf-8'))
                if not self._grammar:
                    raise ValueError('llama.cpp could not parse the grammar of the schema')
                grammar = None
            return super()._init_sampler(*args, grammar=grammar, **kwargs)

        def _free_grammar(self):
            if self._grammar:
                llama_cpp.llama_sampler_free(self._grammar)
            self._grammar = None

        def sample(self, *args, grammar=None, idx=None, **kwargs):
            if self.on_token is not None and self.on_token():
                return self.token_eos()
            token = super().sample(*args, grammar=None if self._grammar else grammar,
                                   idx=idx, **kwargs)
            if self._grammar:
                if not self._fits(token):
                    self.resamples += 1
                    token = self._resample(idx, kwargs)
                llama_cpp.llama_sampler_accept(self._grammar, token)
            return token

        def _fits(self, token):
            one = llama_cpp.llama_token_data(token, 1.0, 0.0)
            cur = llama_cpp.llama_token_data_array(ctypes.pointer(one), 1, -1, False)
            llama_cpp.llama_sampler_apply(self._grammar, ctypes.byref(cur))
            return not math.isinf(one.logit)

        def _apply(self, sampler, cand):
            cur = llama_cpp.llama_token_data_array(
                cand.ctypes.data_as(llama_cpp.llama_token_data_p), len(cand), -1, False)
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(cur))
            return cur

        def _resample(self, idx, params):
            """The first pick did not fit: the grammar filters the candidates,
            then the chain picks again, as llama.cpp does from the start.
            Filtering all 262,144 of Gemma's tokens takes ~0.1 s, so the
            grammar first filters the SHORTLIST best, and that choice stands
            when it is the one the whole vocabulary would give: the chain is
            greedy (temperature 0) and something fits, or at least top_k fit,
            or every token outside the list is below what min_p drops."""
            ridx = idx - self.n_tokens if idx is not None else -1
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx.ctx, ridx),
                                           shape=(self._n_vocab,))
            temp = params.get('temp', 0.8)
            if params.get('mirostat_mode', 0) == 0 and temp >= 0 and \
                    self._n_vocab > 4 * SHORTLIST:
                best = np.argpartition(logits, -SHORTLIST)[-SHORTLIST:]
                cand = np.zeros(SHORTLIST, dtype=np.dtype(TOKEN_DATA, align=True))
                cand['id'] = best
                cand['logit'] = logits[best]
                self._apply(self._grammar, cand)
                fit = cand['logit'][np.isfinite(cand['logit'])]
                if len(fit) and (temp == 0 or len(fit) >= params.get('top_k', 40) or (
                        params.get('min_p', 0) > 0 and
                        logits[best].min() < fit.max() + math.log(params['min_p']))):
                    cur = self._apply(self._sampler.sampler, cand)
                    if cur.selected >= 0:
                        return int(cur.data[cur.selected].id)
            cand = np.zeros(self._n_vocab, dtype=np.dtype(TOKEN_DATA, align=True))
            cand['id'] = np.arange(self._n_vocab, dtype=np.intc)
            cand['logit'] = logits
            self._apply(self._grammar, cand)
            cur = self._apply(self._sampler.sampler, cand)
            if cur.selected < 0:
                raise ValueError('no token fits the grammar')
            return int(cur.data[cur.selected].id)

        def close(self):
            self._free_grammar()
            super().close()

    return Llama


# llama-cpp-python's JSON-Schema grammars let a string hold raw control
# characters (a line break), which JSON forbids; llama.cpp's own converter
# and its plain JSON grammar exclude them, and so does this.
_LOOSE_CHAR = r'char ::= [^"\\] |'
_JSON_CHAR = r'char ::= [^"\\\x7F\x00-\x1F] |'


# A small model can fall into a loop inside a string ("I'm sorry, I didn't
# eat that.  I'm sorry, ...") or a list ("item", "item_id", "item_name",
# ...) and stay there until the reply's token cap, a minute on a CPU,
# leaving JSON cut off mid-string, three times over.  So every string and
# every list or object the grammar lets it write without a bound of the
# schema's own is bounded: at the bound the string closes, or the list
# ends, and the reply goes on.  The bounds are far above what a leaf
# reply needs (a message to the user, a few items, a time); they only make
# a runaway end.
MAX_STRING = 300        # characters
MAX_MORE = 24           # further items of a list, or members of an object
_FREE_STRING = r'string ::= "\"" char* "\"" space'
_BOUNDED_STRING = r'string ::= "\"" char{0,%d} "\"" space' % MAX_STRING
_FREE_JSON_STRING = ')* "\\"" ws'
_BOUNDED_JSON_STRING = '){0,%d} "\\"" ws' % MAX_STRING
# `( "," space item )*`: the rest of a list, or of an object's members.
_MORE = re.compile(r'\(\s*"," (space|ws) ([^()]*?)\s*\)\*')


def _bounded(grammar):
    return _MORE.sub(lambda m: '( "," %s %s ){0,%d}' % (m.group(1), m.group(2), MAX_MORE), grammar)


# llama-cpp-python writes a literal of the schema (an enum's string) as
# JSON with ASCII escapes, so a character beyond the Basic Multilingual
# Plane (an emoji) becomes a surrogate pair, "\ud83c\udf4c", which GBNF
# reads as two code points no UTF-8 text holds: the model could not copy
# the user's "a 🍌" and wrote "a " without it.  GBNF's \U spells the
# character whole.
_SURROGATES = re.compile(r'\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})', re.IGNORECASE)


def _whole_characters(grammar):
    def whole(m):
        high, low = int(m.group(1), 16), int(m.group(2), 16)
        return '\\U%08x' % (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    return _SURROGATES.sub(whole, grammar)


def schema_grammar(schema):
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar
    if schema is None:
        assert _FREE_JSON_STRING in JSON_GBNF, 'llama-cpp-python changed its JSON grammar'
        return LlamaGrammar.from_string(
            _bounded(JSON_GBNF.replace(_FREE_JSON_STRING, _BOUNDED_JSON_STRING)), verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    grammar._grammar = _whole_characters(_bounded(grammar._grammar.replace(_LOOSE_CHAR, _JSON_CHAR).replace(
        _FREE_STRING, _BOUNDED_STRING)))
    return grammar


class Worker:
    def __init__(self, llama, channel):
        self.llama = llama
        self.channel = channel
        self.grammars = {}           # schema JSON -> LlamaGrammar, built once per schema
        self.parent = os.getppid()

    def grammar(self, schema):
        key = json.dumps(schema, sort_keys=True) if schema is not None else None
        grammar = self.grammars.get(key)
        if grammar is None:
            grammar = schema_grammar(schema)
            if len(self.grammars) > 64:
                self.grammars.clear()
            self.grammars[key] = grammar
        return grammar

    def answer(self, req):
        rid = req.get('id')
        started = time.monotonic()
        deadline = started + float(req.get('deadline') or 300.0)
        state: Dict[str, Any] = {'tokens': 0, 'last': started, 'deadline': False,
                                 'first': None}

        def on_token():
            now = time.monotonic()
            if state['first'] is None:
                state['first'] = now          # the prompt is processed
            if now > deadline:
                state['deadline'] = True
                return True
            if os.getppid() != self.parent:
                sys.exit(0)          # the runtime is gone: nobody wants this reply
            if state['tokens'] and now - state['last'] >= PROGRESS_EVERY:
                state['last'] = now
                self.channel.send({'id': rid, 'progress': state['tokens']})
            state['tokens'] += 1
            return False

        # `free`: no grammar at all (bench/llm.py's unconstrained figure).
        grammar = None if req.get('free') else self.grammar(req.get('schema'))
        kwargs = dict(messages=req['messages'], grammar=grammar,
                      max_tokens=int(req.get('max_tokens') or 256))
        if req.get('temperature') is not None:
            kwargs['temperature'] = float(req['temperature'])
        if req.get('seed') is not None:
            kwargs['seed'] = int(req['seed'])
        if req.get('repeat_penalty') is not None:
            kwargs['repeat_penalty'] = float(req['repeat_penalty'])
        self.llama.on_token = on_token
        try:
            result = self.llama.create_chat_completion(**kwargs)
        finally:
            self.llama.on_token = None
        choice = result['choices'][0]
        usage = result.get('usage') or {}
        content = choice.get('message', {}).get('content') or ''
        finish = 'deadline' if state['deadline'] else (
            'length' if choice.get('finish_reason') == 'length' else 'stop')
        return {'content': content, 'finish': finish,
                'prompt_tokens': usage.get('prompt_tokens'),
                'reply_tokens': usage.get('completion_tokens'),
                'seconds': round(time.monotonic() - started, 3),
                'prompt_seconds': round((state['first'] or time.monotonic()) - started, 3)}

    def serve(self, stdin):
        for line in stdin:
            if not line.strip():
                continue
            try:
                req = json.loads(line)
            except ValueError as e:
                self.channel.send({'id': None, 'error': 'not a JSON request: %s' % e})
                continue
            try:
                done = self.answer(req)
            except ValueError as e:       # e.g. the prompt does not fit in the context
                self.channel.send({'id': req.get('id'), 'error': str(e)})
            except Exception as e:        # a bug: the stack goes to the log
                traceback.print_exc()
                self.channel.send({'id': req.get('id'),
                                   'error': 'internal error: %s: %s' % (type(e).__name__, e)})
            else:
                self.channel.send({'id': req.get('id'), 'done': done})


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m ostinato.effects.llm.model_worker')
    parser.add_argument('model', help='a GGUF file')
    parser.add_argument('--ctx', type=int, default=8192, help='context size in tokens')
    parser.add_argument('--threads', type=int, default=0,
                        help='threads (0: every core, at most %d)' % MAX_THREADS)
    parser.add_argument('--seed', type=int, default=None)
    parser.add_argument('--grammar-first', action='store_true',
                        help="llama-cpp-python's own sampling order (for bench/llm.py)")
    args = parser.parse_args(argv)

    channel = Channel(_protocol_channel())
    faulthandler.enable(sys.stderr)          # a native crash leaves a Python stack in the log
    # The runtime handles Ctrl-C and stops this process by closing stdin.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import llama_cpp
    except ImportError as e:
        channel.send({'fatal': 'llama-cpp-python is not installed here (%s)' % e})
        return 2
    # A model this small gains nothing past a few cores.
    threads = args.threads or min(os.cpu_count() or 1, MAX_THREADS)
    kwargs = dict(model_path=args.model, n_ctx=args.ctx, n_threads=threads,
                  n_threads_batch=threads, verbose=False)
    if args.seed is not None:
        kwargs['seed'] = args.seed
    started = time.monotonic()
    try:
        Llama = rejection_sampling_llama(llama_cpp)
        llama = Llama(**kwargs)
    except (ValueError, RuntimeError, OSError) as e:
        channel.send({'fatal': 'llama.cpp could not load %s: %s' % (args.model, e)})
        return 1
    llama.grammar_first = args.grammar_first
    chat_format = use_model_chat_format(llama)
    channel.send({'ready': {'model': args.model, 'n_ctx': llama.n_ctx(), 'chat_format': chat_format,
                            'n_vocab': llama.n_vocab(), 'threads': threads,
                            'llama_cpp_python': getattr(llama_cpp, '__version__', '?'),
                            'seconds': round(time.monotonic() - started, 3)}})
    Worker(llama, channel).serve(sys.stdin)
    return 0


if __name__ == '__main__':
    sys.exit(main())
