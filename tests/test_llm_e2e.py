"""agent() end to end: `ostinato run` with the scripted backend and with a
fake Ollama server; `ostinato log`; a kill -9 between request and reply;
two tasks sharing one model in FIFO order; an unreachable model."""
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes.ollama import FakeOllama

from ostinato.effects.llm import LLMUnavailable
from ostinato.effects.llm.queue import LLMService
from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store

# Slow (whole runs, some killed): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent / 'llm'
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def env_for(tmp_path, **extra):
    env = dict(os.environ, OSTINATO_DB=str(tmp_path / 'db.fs'))
    for k in ('OSTINATO_LLM', 'OSTINATO_MODEL', 'OLLAMA_HOST', 'OSTINATO_LLM_SCRIPT',
              'OSTINATO_LLM_SERVERS'):
        env.pop(k, None)
    env.update(extra)
    return env


def ost(*args, env, cwd):
    return subprocess.run([BIN, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


FAILED_REPLIES = [{'action': 'dance'}] * 3      # tests/llm/dialogue.json's "impossible"


def test_scripted_dialogue_and_log(tmp_path):
    shutil.copy(HERE / 'dialogue.ost', tmp_path)
    env = env_for(tmp_path, OSTINATO_LLM='scripted', OSTINATO_LLM_SCRIPT=str(HERE / 'dialogue.json'))
    r = ost('run', 'dialogue.ost', env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "action: answer, items: ['lunch': ['soup']], missing: none",
        "caught: llm: the model gave no valid reply after 3 attempts: its last reply does "
        "not match the schema: 'dance' is not one of ['answer', 'confer', 'cancel'] (at action)",
    ]
    r = ost('log', env=env, cwd=tmp_path)
    assert r.returncode == 0
    assert '#0 ' in r.stdout and '2 attempts' in r.stdout and 'goals: Decide what to do.' in r.stdout
    assert 'error: llm: the model gave no valid reply' in r.stdout
    r = ost('log', '--json', '--last', '1', env=env, cwd=tmp_path)
    entries = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(entries) == 1 and entries[0]['seq'] == 1 and entries[0]['attempts'] == 3
    assert entries[0]['prompt'] == 'Say something impossible.'
    # What the model said at each failed attempt is kept, and why it failed.
    failed = entries[0]['exchanges']
    assert [x['raw'] for x in failed] == [json.dumps(r) for r in FAILED_REPLIES]
    assert all("'dance' is not one of" in x['problem'] for x in failed)
    r = ost('log', '--task', str(entries[0]['task_id']), env=env, cwd=tmp_path)
    assert r.returncode == 0
    # The task's two requests: one bad attempt of the first, three of the second.
    assert r.stdout.count('\n  attempt ') == 4
    assert '\n      this is not json\n' in r.stdout and json.dumps(FAILED_REPLIES[0]) in r.stdout
    r = ost('log', '--task', '99', env=env, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ''
    assert r.stderr.startswith('ostinato: no task with id 99 in ')
    assert [x['problem'] is not None for x in entries[0]['exchanges']] == [True] * 3
    assert entries[0]['exchanges'][2]['messages'][-2]['content'] == \
        entries[0]['exchanges'][1]['raw']


def test_two_tasks_share_one_model_in_fifo_order(tmp_path):
    shutil.copy(HERE / 'ask_two.ost', tmp_path)
    with FakeOllama() as fake:
        fake.delay(0.3, {'text': 'fjords'})
        fake.reply({'text': 'ruins'})
        env = env_for(tmp_path, OLLAMA_HOST=fake.url, OSTINATO_LLM='ollama')
        r = ost('run', 'ask_two.ost', env=env, cwd=tmp_path)
        bodies = fake.bodies
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'asked\nOslo: fjords\nRome: ruins\n'
    prompts = [b['messages'][-1]['content'] for b in bodies]
    assert prompts[0].startswith('Tell me about Oslo.') and prompts[1].startswith('Tell me about Rome.')
    assert all(b['stream'] is False and b['format']['required'] == ['text'] for b in bodies)


def test_requests_are_shared_among_several_servers(tmp_path):
    """--llm-server twice: the two tasks' requests go one to each server
    (each server gets one request at a time)."""
    shutil.copy(HERE / 'ask_two.ost', tmp_path)
    with FakeOllama() as a, FakeOllama() as b:
        a.delay(1.0, {'text': 'from a'})
        b.delay(1.0, {'text': 'from b'})
        env = env_for(tmp_path, OSTINATO_LLM='ollama')
        r = ost('run', '--llm-server', a.url, '--llm-server', b.url, 'ask_two.ost',
                env=env, cwd=tmp_path)
        counts = (len(a.bodies), len(b.bodies))
    assert r.returncode == 0, r.stderr
    assert counts == (1, 1)
    lines = r.stdout.splitlines()
    assert lines[0] == 'asked'
    assert sorted(lines[1:]) in (['Oslo: from a', 'Rome: from b'], ['Oslo: from b', 'Rome: from a'])


def test_a_server_list_needs_a_server_backend(tmp_path):
    shutil.copy(HERE / 'ask_two.ost', tmp_path)
    env = env_for(tmp_path, OSTINATO_LLM='scripted', OSTINATO_LLM_SERVERS='http://127.0.0.1:1')
    r = ost('run', 'ask_two.ost', env=env, cwd=tmp_path)
    assert r.returncode == 2
    assert '--llm-server is for the ollama and openai backends, not scripted' in r.stderr


def test_kill_between_request_and_reply(tmp_path):
    """The request is committed before it is sent; killed while the model
    thinks, the next run asks again and applies the reply once."""
    shutil.copy(HERE / 'ask_two.ost', tmp_path)
    with FakeOllama() as fake:
        fake.delay(30, {'text': 'never delivered'})
        env = env_for(tmp_path, OLLAMA_HOST=fake.url, OSTINATO_LLM='ollama')
        p = subprocess.Popen([BIN, 'run', 'ask_two.ost'], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while not fake.bodies and time.time() < deadline:
            time.sleep(0.05)
        assert fake.bodies, 'no request reached the model'
        p.send_signal(signal.SIGKILL)
        out1, _ = p.communicate()
        fake.stop()
    with FakeOllama() as fake:
        fake.reply({'text': 'fjords'})
        fake.reply({'text': 'ruins'})
        env = env_for(tmp_path, OLLAMA_HOST=fake.url, OSTINATO_LLM='ollama')
        r = ost('run', 'ask_two.ost', env=env, cwd=tmp_path)
        asked_again = [b['messages'][-1]['content'][:20] for b in fake.bodies]
    assert out1 == 'asked\n'
    assert r.returncode == 0, r.stderr
    assert r.stdout == 'Oslo: fjords\nRome: ruins\n'
    assert asked_again == ['Tell me about Oslo.\n', 'Tell me about Rome.\n'] or \
        [a.split('\n')[0] for a in asked_again] == ['Tell me about Oslo.', 'Tell me about Rome.']


class FlakyModel:
    """Unreachable for the first two attempts, then answers."""

    def __init__(self):
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        if self.calls <= 2:
            raise LLMUnavailable('cannot reach Ollama at http://127.0.0.1:9 (connection refused)')
        return {'reply': {'text': 'back'}, 'raw': '{"text": "back"}', 'model': 'm',
                'backend': 'fake', 'attempts': 1, 'seconds': 0.0}


def test_unreachable_model_is_retried_while_the_task_waits(tmp_path):
    prog = tmp_path / 'one.ost'
    prog.write_text('from llm import agent\nprint(agent("hello?").text)\n')
    model = FlakyModel()
    service = LLMService(lambda: model)
    service.BACKOFF_MAX = 0.05
    service.backoff = 0.01
    out, err = io.StringIO(), io.StringIO()
    service.err = err
    store = Store(str(tmp_path / 'db.fs'))
    try:
        assert run_file(str(prog), out, err, store=store, services=[service]) == 0
    finally:
        store.close()
        service.close()
    assert out.getvalue() == 'back\n'
    assert model.calls == 3
    lines = err.getvalue().splitlines()
    assert lines == ['ostinato: cannot reach Ollama at http://127.0.0.1:9 (connection refused); '
                     'will keep trying', 'ostinato: the model answers again']
