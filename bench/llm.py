"""LLM benchmarks.

1. Orchestration: the CPU Ostinato spends per agent() call (suspend, queue,
   commit, dispatch, apply the reply, log it, resume), with the scripted
   backend so no model time is counted.  Prints `llm_orchestration_cpu_ms
   VALUE ms` (target: <= 5 ms) for an in-memory database and
   `llm_orchestration_cpu_ms_filestorage VALUE ms` for a file.

2. The embedded model (Gemma 3 270M in its own process, as `agent()` runs
   it), if installed: reply tokens per second of generation, without a
   grammar (`embedded_unconstrained_tok_s`), constrained by a JSON Schema
   the way Ostinato samples (`embedded_constrained_tok_s`, target >= 15 on
   2 cores), and constrained in llama-cpp-python's own grammar-first order
   (`embedded_constrained_grammar_first_tok_s`, the figure before), plus
   the ratios and the end-to-end rate of a short reply (prompt included).
   The machine may be shared: these are figures to compare, not assertions.
"""
import io
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from ostinato.effects.llm import LLMClient, LLMConfig
from ostinato.effects.llm.queue import LLMService
from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store

CALLS = 300
PROGRAM = '''from llm import agent
{| Ask many small questions. |}
def ask(n):
    count = 0
    for i in 0..n:
        r = agent("Question {i}?", ['type': 'object', 'required': ['action']])
        if r.action == 'answer':
            count = count + 1
    return count
print(ask(%d))
''' % CALLS


def measure(tmp, memory):
    script = os.path.join(tmp, 'script.json')
    with open(script, 'w') as f:
        json.dump([{'match': 'Question', 'reply': {'action': 'answer', 'text': 'ok'},
                    'repeat': True}], f)
    prog = os.path.join(tmp, 'bench.ost')
    with open(prog, 'w') as f:
        f.write(PROGRAM)
    config = LLMConfig(backend='scripted', script=script)
    service = LLMService(lambda: LLMClient(config))
    store = Store(memory=True) if memory else Store(os.path.join(tmp, 'b%d.fs' % time.time_ns()))
    out = io.StringIO()
    cpu0 = time.process_time()
    try:
        code = run_file(prog, out, sys.stderr, store=store, services=[service])
    finally:
        store.close()
        service.close()
    cpu = time.process_time() - cpu0
    assert code == 0 and out.getvalue() == '%d\n' % CALLS, out.getvalue()
    return cpu / CALLS * 1000


POEM = {'type': 'object', 'properties': {'poem': {'type': 'string'}}, 'required': ['poem']}
REPLY = {'type': 'object', 'required': ['action', 'text'],
         'properties': {'action': {'enum': ['answer', 'confer', 'cancel']},
                        'text': {'type': 'string'}}}
LONG = 'Write a poem about the sea, at least eight lines.'
SHORT = ('The user wrote: "%s". What did they eat or drink? '
         'Answer with action "answer" and the food in text.')
MEALS = ('Had a turkey sandwich for lunch', 'two eggs and toast this morning',
         'a hot chocolate at 3')
RUNS = 3


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


def generation_rate(process, prompt, schema, free=False, max_tokens=128):
    """Median reply tokens per second of generation (prompt processing not
    counted), and the last reply's figures."""
    from ostinato.effects.llm.replies import user_prompt
    rates, done = [], None
    for _ in range(RUNS):
        done = process.ask({'messages': [{'role': 'user', 'content': user_prompt(prompt, schema)}],
                            'schema': schema, 'free': free, 'max_tokens': max_tokens,
                            'temperature': 0.0, 'seed': 1}, deadline=600.0)
        seconds = done['seconds'] - done['prompt_seconds']
        rates.append((done['reply_tokens'] or 0) / seconds if seconds > 0 else 0.0)
    return _median(rates), done


def embedded_bench():
    from ostinato.effects.llm import embedded
    if not embedded.available():
        print('embedded: llama-cpp-python is not installed (make bench installs it)')
        return
    path = embedded.default_model_path()
    fast = embedded.ModelProcess(path, 2048, 1)
    stock = embedded.ModelProcess(path, 2048, 1, grammar_first=True)
    try:
        ready = fast.wait_ready()
        stock.wait_ready()
        print('embedded: %s, %d threads, llama-cpp-python %s, load average %.1f on %d cores' % (
            os.path.basename(ready['model']), ready['threads'], ready['llama_cpp_python'],
            os.getloadavg()[0], os.cpu_count() or 0))
        free, _ = generation_rate(fast, LONG, POEM, free=True)
        constrained, _ = generation_rate(fast, LONG, POEM)
        first, _ = generation_rate(stock, LONG, POEM)
        print('embedded_unconstrained_tok_s %.1f tokens/s' % free)
        print('embedded_constrained_tok_s %.1f tokens/s  (target >= 15)' % constrained)
        print('embedded_constrained_grammar_first_tok_s %.1f tokens/s' % first)
        print('embedded_constrained_vs_unconstrained %.2f' % (constrained / free))
        print('embedded_constrained_vs_grammar_first %.1fx' % (constrained / first))
        from ostinato.effects.llm.replies import user_prompt
        shorts = []
        for meal in MEALS:          # a new prompt each time, as in a dialogue
            prompt = user_prompt(SHORT % meal, REPLY)
            shorts.append(fast.ask({'messages': [{'role': 'user', 'content': prompt}],
                                    'schema': REPLY, 'max_tokens': 128, 'temperature': 0.0,
                                    'seed': 1}, deadline=600.0))
        shorts.sort(key=lambda d: d['reply_tokens'] / d['seconds'])
        done = shorts[len(shorts) // 2]
        print('embedded_short_reply_tok_s %.1f tokens/s end to end (median: %d prompt + %d '
              'reply tokens in %.2f s, of which %.2f s the prompt)' % (
                  done['reply_tokens'] / done['seconds'], done['prompt_tokens'],
                  done['reply_tokens'], done['seconds'], done['prompt_seconds']))
    finally:
        fast.stop()
        stock.stop()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        print('llm_orchestration_cpu_ms %.2f ms' % measure(tmp, True))
        print('llm_orchestration_cpu_ms_filestorage %.2f ms' % measure(tmp, False))
    embedded_bench()


if __name__ == '__main__':
    main()
