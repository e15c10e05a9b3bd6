"""LLM orchestration benchmark: the CPU Ostinato spends per agent() call
(suspend, queue, commit, dispatch, apply the reply, log it, resume), with
the scripted backend so no model time is counted.  Prints
`llm_orchestration_cpu_ms VALUE ms` (target: <= 5 ms) for an in-memory
database and `llm_orchestration_cpu_ms_filestorage VALUE ms` for a file."""
import io
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from ostinato.effects.llm import LLMClient, LLMConfig  # noqa: E402
from ostinato.effects.llm_queue import LLMService  # noqa: E402
from ostinato.runtime.runner import run_file  # noqa: E402
from ostinato.runtime.store import Store  # noqa: E402

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


def main():
    with tempfile.TemporaryDirectory() as tmp:
        print('llm_orchestration_cpu_ms %.2f ms' % measure(tmp, True))
        print('llm_orchestration_cpu_ms_filestorage %.2f ms' % measure(tmp, False))


if __name__ == '__main__':
    main()
