"""The `ostinato` command: exit codes, check, dis, usage errors."""
import os
import re
import subprocess
import sys

import pytest

# Slow (a process per command): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')


def ost(*args, cwd, input=None):
    env = dict(os.environ, OSTINATO_DB=os.path.join(str(cwd), 'db.fs'))
    return subprocess.run([BIN, *args], cwd=cwd, input=input, capture_output=True, text=True,
                          timeout=60, env=env)


def test_check_warns_about_names_bound_nowhere(tmp_path):
    (tmp_path / 'w.ost').write_text('total = 0\nprint(totl)\nprint(lenght([1]))\n'
                                    'def f(a):\n    return a + b\n')
    r = ost('check', 'w.ost', cwd=tmp_path)
    assert r.returncode == 0
    assert r.stderr.splitlines() == [
        "w.ost:2:7: warning: name 'totl' is read but bound nowhere (did you mean 'total'?)",
        "w.ost:3:7: warning: name 'lenght' is read but bound nowhere (did you mean 'length'?)",
        "w.ost:5:16: warning: name 'b' is read but bound nowhere",
    ]


def test_check_reports_syntax_errors_with_exit_65(tmp_path):
    (tmp_path / 'ok.ost').write_text('print(1)\n')
    (tmp_path / 'bad.ost').write_text('x = 1\nwhile x < 2\n    x = 2\n')
    r = ost('check', 'ok.ost', 'bad.ost', cwd=tmp_path)
    assert r.returncode == 65
    assert r.stderr.startswith('bad.ost:2:12: syntax error:')
    assert r.stderr.splitlines()[1:] == ['while x < 2', '           ^']


def test_run_exit_codes(tmp_path):
    (tmp_path / 'fine.ost').write_text('print("hi")\n')
    (tmp_path / 'fails.ost').write_text('def f():\n    return 1 / 0\nf()\n')
    (tmp_path / 'syntax.ost').write_text('x = (1\n')
    assert ost('run', 'fine.ost', cwd=tmp_path).returncode == 0
    r = ost('run', '--memory', 'fails.ost', cwd=tmp_path)
    assert r.returncode == 70
    assert r.stderr == ('fails.ost:2:12: error: division by zero\n'
                        '  at fails.ost:2:12 in f\n  at fails.ost:3:1 in fails\n')
    r = ost('run', '--memory', 'syntax.ost', cwd=tmp_path)
    assert r.returncode == 65 and 'Traceback' not in r.stderr
    r = ost('run', 'missing.ost', cwd=tmp_path)
    assert r.returncode == 2
    assert ost('frobnicate', cwd=tmp_path).returncode == 2


def test_dis_shows_instructions(tmp_path):
    (tmp_path / 'd.ost').write_text('def f(n):\n    return n + 1\nprint(f(1))\n')
    r = ost('dis', 'd.ost', cwd=tmp_path)
    assert r.returncode == 0
    assert 'code f (def) d.ost:1' in r.stdout and 'RETURN' in r.stdout


def test_not_utf8_is_a_clear_error(tmp_path):
    (tmp_path / 'latin.ost').write_bytes(b'print("caf\xe9")\n')
    r = ost('run', '--memory', 'latin.ost', cwd=tmp_path)
    assert r.returncode == 65 and 'Traceback' not in r.stderr
    assert r.stderr.startswith('latin.ost:'), r.stderr


def test_database_in_use_names_the_process(tmp_path):
    (tmp_path / 'slow.ost').write_text('sleep(5)\n')
    p = subprocess.Popen([BIN, 'run', '--db', 'busy.fs', 'slow.ost'], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        import time
        for _ in range(100):
            if (tmp_path / 'busy.fs.lock').exists() and (tmp_path / 'busy.fs.lock').read_text().strip():
                break
            time.sleep(0.05)
        r = ost('run', '--db', 'busy.fs', 'slow.ost', cwd=tmp_path)
        assert r.returncode == 2
        assert 'in use by process %d' % p.pid in r.stderr
        # Held by `run`, where a repl cannot attach either: says so, and what works.
        assert "'ostinato run' holds it alone until it ends" in r.stderr
        assert "use 'ostinato repl'" not in r.stderr
        r = ost('tasks', '--db', 'busy.fs', cwd=tmp_path)
        assert r.returncode == 0 and 'slow' in r.stdout
    finally:
        p.kill()
        p.wait()


def test_bad_database_path_and_backend_are_clear_errors(tmp_path):
    (tmp_path / 'ok.ost').write_text('print(1)\n')
    r = ost('run', '--db', str(tmp_path / 'missing' / 'x.fs'), 'ok.ost', cwd=tmp_path)
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert 'cannot open the database' in r.stderr
    r = ost('run', '--llm', 'bogus', 'ok.ost', cwd=tmp_path)
    assert r.returncode == 2 and "'bogus' is not one of" in r.stderr


# ------------------------------------------------------------------ the model, checked at start

def clean_env(tmp_path, **extra):
    env = dict(os.environ, OSTINATO_DB=os.path.join(str(tmp_path), 'db.fs'))
    for k in ('OSTINATO_LLM', 'OSTINATO_MODEL', 'OLLAMA_HOST', 'OSTINATO_LLM_SCRIPT',
              'OSTINATO_OPENAI_URL', 'OSTINATO_LLM_SERVERS', 'NO_COLOR', 'OSTINATO_LOG',
              'TELEGRAM_BOT_TOKEN', 'TELEGRAM_ALLOWED_USERS'):
        env.pop(k, None)
    env.update(extra)
    return env


def ost_env(*args, cwd, env, input=None):
    return subprocess.run([BIN, *args], cwd=cwd, input=input, capture_output=True, text=True,
                          timeout=120, env=env, stdin=None if input is not None else subprocess.DEVNULL)


def one_line_error(r, text):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == '' and r.stderr.count('\n') == 1, r.stderr
    assert r.stderr.startswith('ostinato: ') and text in r.stderr, r.stderr


def test_the_backend_is_checked_before_anything_runs(tmp_path):
    from fakes.ollama import FakeOllama
    (tmp_path / 'hi.ost').write_text('print("ran")\n')
    env = clean_env(tmp_path)
    one_line_error(ost_env('run', '--llm', 'openai', 'hi.ost', cwd=tmp_path, env=env),
                   'needs the server address in OSTINATO_OPENAI_URL')
    one_line_error(ost_env('run', '--llm', 'scripted', 'hi.ost', cwd=tmp_path, env=env),
                   'needs a script file in OSTINATO_LLM_SCRIPT')
    one_line_error(ost_env('run', '--llm', 'scripted', 'hi.ost', cwd=tmp_path,
                           env=dict(env, OSTINATO_LLM_SCRIPT='nope.json')),
                   'cannot read the script nope.json')
    # Without the extra, or with it but no such model file: either way one line.
    one_line_error(ost_env('run', '--llm', 'embedded', '--model', 'missing.gguf', 'hi.ost',
                           cwd=tmp_path, env=env), '--llm embedded: ')
    with FakeOllama(models=('qwen2.5:0.5b',)) as fake:
        r = ost_env('run', '--llm', 'ollama', 'hi.ost', cwd=tmp_path,
                    env=dict(env, OLLAMA_HOST=fake.url))
        one_line_error(r, "has no model 'llama3.2'; run 'ollama pull llama3.2' (it has: qwen2.5:0.5b)")
        r = ost_env('serve', '--memory', '--llm', 'ollama', '--model', 'mistral', cwd=tmp_path,
                    env=dict(env, OLLAMA_HOST=fake.url))
        one_line_error(r, "has no model 'mistral'")
        r = ost_env('run', '--llm', 'ollama', '--model', 'qwen2.5:0.5b', 'hi.ost', cwd=tmp_path,
                    env=dict(env, OLLAMA_HOST=fake.url))
        assert (r.returncode, r.stdout) == (0, 'ran\n'), r.stderr
    # Ollama not answering: a script's run stops at once, saying where and what to run.
    r = ost_env('run', '--llm', 'ollama', 'hi.ost', cwd=tmp_path,
                env=dict(env, OLLAMA_HOST='http://127.0.0.1:9'))
    one_line_error(r, "Ollama does not answer at http://127.0.0.1:9: start it ('ollama serve')")


def test_serve_waits_for_an_ollama_that_does_not_answer_yet(tmp_path):
    import signal
    env = clean_env(tmp_path, OLLAMA_HOST='http://127.0.0.1:9')
    p = subprocess.Popen([BIN, 'serve', '--memory', '--llm', 'ollama'], cwd=tmp_path, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        first = p.stderr.readline()
        assert first.startswith("ostinato: Ollama does not answer at http://127.0.0.1:9: start "
                                "it ('ollama serve')") and 'wait until it answers' in first
        assert p.stderr.readline() == 'ostinato: worker main serving memory\n'
        assert 'no chat channel in this process (add --telegram or --web)' in p.stderr.readline()
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert 'stopping after this step (the signal again to stop now)' in err


# ------------------------------------------------------------------ doctor

def test_doctor_one_line_each_and_json(tmp_path):
    import json
    from fakes.ollama import FakeOllama
    (tmp_path / 'hi.ost').write_text('print("ran")\n')
    env = clean_env(tmp_path)
    assert ost_env('run', 'hi.ost', cwd=tmp_path, env=env).returncode == 0
    with FakeOllama() as fake:
        env = clean_env(tmp_path, OLLAMA_HOST=fake.url, OSTINATO_LLM='ollama',
                        TELEGRAM_BOT_TOKEN='123456:abcdefghijklmnopqrstuvwxyz012345678',
                        TELEGRAM_ALLOWED_USERS='42')
        r = ost_env('doctor', cwd=tmp_path, env=env)
        assert r.returncode == 0, r.stdout
        lines = r.stdout.splitlines()
        names = [ln.split()[1] for ln in lines]
        assert names == ['python', 'database', 'backend', 'ollama', 'openai', 'embedded',
                         'scripted', 'telegram', 'duckling']
        by = dict(zip(names, lines))
        assert by['database'].startswith('ok    database  %s: ' % (tmp_path / 'db.fs'))
        from ostinato.runtime.world import SCHEMA_VERSION
        assert 'schema %d' % SCHEMA_VERSION in by['database']
        assert 'not in use' in by['database']
        assert '%s answers; models: llama3.2:latest' % fake.url in by['ollama']
        assert '1 allowed user' in by['telegram'] and '123456:' not in r.stdout
        assert 'CPU: ' in by['embedded']
        assert by['duckling'].startswith('ok    duckling  Duckling 0.1.0 in ')
        r = ost_env('doctor', '--json', cwd=tmp_path, env=env)
        data = json.loads(r.stdout)
        assert [d['name'] for d in data] == names
        assert data[3]['details']['models'] == ['llama3.2:latest']
        assert data[1]['details']['schema_version'] == SCHEMA_VERSION
    # The chosen backend does not answer: a failure, exit 1.
    r = ost_env('doctor', '--llm', 'ollama', cwd=tmp_path,
                env=clean_env(tmp_path, OLLAMA_HOST='http://127.0.0.1:9'))
    assert r.returncode == 1
    assert r.stdout.splitlines()[3].startswith('FAIL  ollama    http://127.0.0.1:9 does not answer')


def test_doctor_names_the_process_holding_the_database(tmp_path):
    (tmp_path / 'slow.ost').write_text('print("up")\nsleep(600)\n')
    env = clean_env(tmp_path)
    p = subprocess.Popen([BIN, 'run', 'slow.ost'], cwd=tmp_path, env=env, text=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline() == 'up\n'
        r = ost_env('doctor', cwd=tmp_path, env=env)
        line = r.stdout.splitlines()[1]
        assert 'in use by process %d' % p.pid in line, line
    finally:
        p.kill()
        p.wait()


# ------------------------------------------------------------------ tasks, log, db info as JSON

def test_tasks_and_db_info_as_json(tmp_path):
    import json
    (tmp_path / 'w.ost').write_text('type Box:\n    var go = false\nbox = Box()\n'
                                    '{| Wait a while. |}\ndef waits():\n    wait until box.go\n'
                                    'spawn waits()\nprint("ok")\n')
    env = clean_env(tmp_path)
    assert ost_env('run', 'w.ost', cwd=tmp_path, env=env).returncode == 0
    r = ost_env('tasks', '--json', cwd=tmp_path, env=env)
    tasks = json.loads(r.stdout)
    assert [(t['name'], t['state'], t['goals']) for t in tasks] == \
        [('waits', 'waiting', ['Wait a while.'])]
    assert tasks[0]['waiting'] == 'waiting for a change of <module w> or <Box> (read by `wait until`)'
    assert tasks[0]['since'] > 0
    r = ost_env('tasks', str(tasks[0]['id']), '--json', cwd=tmp_path, env=env)
    task = json.loads(r.stdout)
    assert task['frames'][0]['where'] == 'w.ost:6:5' and task['frames'][0]['blurb'] == 'Wait a while.'
    r = ost_env('tasks', '99', '--json', cwd=tmp_path, env=env)
    assert r.returncode == 2 and 'no task with id 99' in r.stderr
    r = ost_env('db', 'info', '--json', cwd=tmp_path, env=env)
    info = json.loads(r.stdout)
    assert info['live_tasks'] == 1 and info['tasks_by_state'] == {'waiting': 1}
    from ostinato.runtime.world import SCHEMA_VERSION
    assert info['schema_version'] == SCHEMA_VERSION and info['size_bytes'] > 0
    assert info['watches'] == 1
    assert {'name': 'w', 'path': str(tmp_path / 'w.ost'), 'status': 'unchanged'} in info['modules']
    r = ost_env('log', '--task', str(tasks[0]['id']), cwd=tmp_path, env=env)
    assert (r.returncode, r.stdout) == (0, 'no LLM exchanges of task %d\n' % tasks[0]['id'])


# ------------------------------------------------------------------ make and the README

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_make_says_how_to_reach_the_command_and_the_readme_says_it_first():
    r = subprocess.run(['make', '-s', 'hint'], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and '.venv/bin/ostinato' in r.stdout \
        and '. .venv/bin/activate' in r.stdout
    with open(os.path.join(ROOT, 'Makefile')) as f:
        make = f.read()
    for target in ('run:', 'test:'):
        body = make.split('\n' + target, 1)[1].split('\n\n', 1)[0]
        assert 'hint' in body, target
    with open(os.path.join(ROOT, 'README.md')) as f:
        readme = f.read()
    said = readme.index('. .venv/bin/activate')
    first = min(readme.index(m) for m in ('    ostinato ', '\n    $ ostinato', '`ostinato '))
    assert said < first


# ------------------------------------------------------------------ small things

def test_no_arguments_prints_the_help(tmp_path):
    r = subprocess.run([BIN], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith('Usage: ostinato')
    for var in ('OLLAMA_HOST', 'OSTINATO_OPENAI_URL', 'OSTINATO_LLM_SCRIPT', 'OSTINATO_DB',
                'TELEGRAM_BOT_TOKEN', 'NO_COLOR'):
        assert var in r.stdout
    for command in ('run', 'serve', 'repl', 'tasks', 'log', 'db', 'check', 'dis', 'new', 'doctor',
                    'completion'):
        assert '\n  %s ' % command in r.stdout, command
        h = ost(command, '--help', cwd=tmp_path)
        assert h.returncode == 0
        if command not in ('db', 'new'):
            examples = h.stdout.split('Examples:\n', 1)[1]
            assert len([ln for ln in examples.splitlines() if ln.strip()]) == 2, command
    assert '--db PATH' in ost('run', '--help', cwd=tmp_path).stdout
    assert 'zeo://HOST:PORT or zeo:SOCKET' in ' '.join(ost('serve', '--help', cwd=tmp_path)
                                                        .stdout.split())


def test_completion_scripts(tmp_path):
    assert 'complete -o nosort -F _ostinato_completion ostinato' in ost('completion', 'bash',
                                                                        cwd=tmp_path).stdout
    assert '#compdef ostinato' in ost('completion', 'zsh', cwd=tmp_path).stdout
    assert 'complete --no-files --command ostinato' in ost('completion', 'fish', cwd=tmp_path).stdout
    r = ost('completion', 'tcsh', cwd=tmp_path)
    assert r.returncode == 2
    # The script works: bash asks the command for the words after `ostinato r`.
    env = dict(os.environ, _OSTINATO_COMPLETE='bash_complete', COMP_WORDS='ostinato r',
               COMP_CWORD='1')
    r = subprocess.run([BIN], env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ['plain,run', 'plain,repl']


def test_a_missing_file_reads_the_same_everywhere(tmp_path):
    for command in ('run', 'check', 'dis', 'serve'):
        r = ost(command, 'nope.ost', cwd=tmp_path)
        assert (r.returncode, r.stderr) == (2, 'ostinato: no such file: nope.ost\n'), command
        r = ost(command, str(tmp_path), cwd=tmp_path)
        assert r.stderr == 'ostinato: %s is a folder, not a program file\n' % tmp_path, command


def test_serve_memory(tmp_path):
    import signal
    (tmp_path / 'tick.ost').write_text('print("loaded")\n')
    env = clean_env(tmp_path, OSTINATO_LLM='scripted', OSTINATO_LLM_SCRIPT='none.json')
    (tmp_path / 'none.json').write_text('[]')
    p = subprocess.Popen([BIN, 'serve', '--memory', 'tick.ost'], cwd=tmp_path, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        assert p.stderr.readline() == 'ostinato: worker main serving memory\n'
        assert p.stdout.readline() == 'loaded\n'
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    assert p.returncode == 0 and 'stopped; the tasks wait in memory' in err
    assert not any(name.endswith('.fs') for name in os.listdir(tmp_path))


def test_db_pack_says_it_kept_the_old_file(tmp_path):
    (tmp_path / 'ok.ost').write_text('print(1)\n')
    assert ost('run', 'ok.ost', cwd=tmp_path).returncode == 0
    r = ost('db', 'pack', cwd=tmp_path)
    assert r.returncode == 0
    # What deleting it loses is said with it (issue 29, item 3).
    assert r.stdout.splitlines()[-1] == ('the file as it was is kept as db.fs.old (with the old '
                                         'revisions the pack dropped, only there now); delete '
                                         'it when you no longer need them'.replace(
                                             'db.fs', os.path.join(str(tmp_path), 'db.fs')))
    assert (tmp_path / 'db.fs.old').exists()


def test_a_piped_repl_script_fails_like_a_script(tmp_path):
    r = ost('repl', cwd=tmp_path, input='x = 1\nprint(x)\n')
    assert (r.returncode, r.stdout) == (0, '1\n')
    r = ost('repl', cwd=tmp_path, input='print(x)\ny = 1 / 0\nprint("after")\n')
    assert (r.returncode, r.stdout) == (70, '1\nafter\n')
    assert r.stderr.startswith('<repl>:1:5: error: division by zero')
    r = ost('repl', cwd=tmp_path, input='print(x\n')
    assert r.returncode == 65


def test_a_reraised_error_reports_where_it_was_first_raised(tmp_path):
    (tmp_path / 'rr.ost').write_text('def inner():\n    return 1 / 0\ndef outer():\n    try:\n'
                                     '        inner()\n    catch e:\n        raise(e)\nouter()\n')
    r = ost('run', '--memory', 'rr.ost', cwd=tmp_path)
    assert r.returncode == 70
    assert r.stderr.splitlines() == ['rr.ost:2:12: error: division by zero',
                                     '  at rr.ost:2:12 in inner', '  at rr.ost:7:9 in outer',
                                     '  at rr.ost:8:1 in rr']


# ------------------------------------------------------------------ new skill

def test_new_skill_writes_a_skill_and_its_eval_cases(tmp_path):
    r = ost('new', 'skill', 'pets', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        'wrote ./pets.ost (the skill) and ./pets.toml (its eval cases)',
        'talk to it:   ostinato run ./pets.ost',
        'measure it:   ostinato eval ./pets.toml']
    skill = (tmp_path / 'pets.ost').read_text()
    assert '{| ' in skill and 'get_answer_to_question(' in skill and 'serve(pets)' in skill
    # The shape of a logging skill: ask, pick the user's phrases, read or
    # ask each one's time, log.
    assert 'pick_phrases(' in skill and 'time_in(' in skill and 'ask_time(' in skill
    r = ost('check', 'pets.ost', cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, '', '')
    try:
        import tomllib
    except ImportError:                      # Python 3.10
        import tomli as tomllib
    cases = tomllib.loads((tmp_path / 'pets.toml').read_text())
    assert cases['skill'] == 'pets.ost' and len(cases['case']) == 2
    for case in cases['case']:
        assert {'name', 'user', 'say', 'expect'} <= set(case)
    # It runs: the model answers from the user's first message and picks
    # the thing done; its time is read from the words; what is missing is
    # asked.
    import json
    (tmp_path / 'model.json').write_text(json.dumps([
        {'match': 'What did you do', 'reply': {'action': 'answer', 'text': 'I mowed the lawn at 9am'}},
        {'match': 'List the phrases', 'reply': {'phrases': ['mowed the lawn']}}]))
    r = ost_env('run', 'pets.ost', cwd=tmp_path, input='I mowed the lawn at 9am\n',
                env=clean_env(tmp_path, OSTINATO_LLM='scripted', OSTINATO_LLM_SCRIPT='model.json'))
    assert (r.returncode, r.stdout) == (0, 'Logged: mowed the lawn\n'), r.stderr
    # Never over an existing file; a name must be a module name.
    r = ost('new', 'skill', 'pets', cwd=tmp_path)
    assert r.returncode == 2 and 'pets.ost exists already; nothing was written' in r.stderr
    r = ost('new', 'skill', 'My Pets', cwd=tmp_path)
    assert r.returncode == 2 and "a skill's name is its module's name" in r.stderr


# ------------------------------------------------------------------ the operator's log

FAILS_IN_A_TASK = ('def f():\n    return 1 / 0\nspawn f()\nprint("main goes on")\n')


def test_run_log_takes_the_reports_of_failed_tasks(tmp_path):
    (tmp_path / 'bg.ost').write_text(FAILS_IN_A_TASK)
    r = ost('run', '--log', 'ops.log', 'bg.ost', cwd=tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, 'main goes on\n', '')
    log = (tmp_path / 'ops.log').read_text()
    assert re.match(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d task 2 \(f\) failed; `ostinato log --task '
                    r'2` shows its model calls:\nbg\.ost:2:12: error: division by zero\n'
                    r'  at bg\.ost:2:12 in f\n\Z', log), log
    # Without --log (and no chat on a terminal) the report is on stderr, as
    # the language reports an uncaught error.
    r = ost('run', '--memory', 'bg.ost', cwd=tmp_path)
    assert r.stderr == 'bg.ost:2:12: error: division by zero\n  at bg.ost:2:12 in f\n'


def test_serve_reports_failed_tasks_with_their_id(tmp_path):
    import signal
    (tmp_path / 'bg.ost').write_text(FAILS_IN_A_TASK)
    p = subprocess.Popen([BIN, 'serve', '--memory', 'bg.ost'], cwd=tmp_path,
                         env=clean_env(tmp_path), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == 'main goes on\n'
        lines = [p.stderr.readline() for _ in range(5)]
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=120)
    failed = [i for i, ln in enumerate(lines) if ' task 2 (f) failed; ' in ln]
    assert failed, lines
    assert lines[failed[0] + 1:failed[0] + 3] == ['bg.ost:2:12: error: division by zero\n',
                                                  '  at bg.ost:2:12 in f\n']


def test_the_connection_cache_size_is_a_setting_checked_at_start(tmp_path):
    """A connection keeps OSTINATO_CACHE_OBJECTS objects in memory between
    transactions (runtime/store.py: ZODB's 400 made a burst of messages
    load most of what their intake had read again); a value that is not a
    count is refused in one line that names it."""
    from ostinato.runtime.store import CACHE_OBJECTS, Store
    store = Store(memory=True)
    try:
        assert store.conn._cache.cache_size == CACHE_OBJECTS >= 10000
    finally:
        store.close()
    os.environ['OSTINATO_CACHE_OBJECTS'] = '123'
    try:
        store = Store(memory=True)
        try:
            assert store.conn._cache.cache_size == 123
        finally:
            store.close()
    finally:
        del os.environ['OSTINATO_CACHE_OBJECTS']
    (tmp_path / 'hi.ost').write_text('print("ran")\n')
    r = ost_env('run', 'hi.ost', cwd=tmp_path,
                env=clean_env(tmp_path, OSTINATO_CACHE_OBJECTS='lots'))
    assert r.returncode != 0 and 'Traceback' not in r.stderr, r.stderr
    assert "OSTINATO_CACHE_OBJECTS must be a whole number" in r.stderr and "'lots'" in r.stderr, \
        r.stderr
    r = ost_env('run', 'hi.ost', cwd=tmp_path, env=clean_env(tmp_path, OSTINATO_CACHE_OBJECTS='50'))
    assert (r.returncode, r.stdout) == (0, 'ran\n'), r.stderr


def test_a_device_or_a_named_pipe_is_named_as_what_it_is(tmp_path):
    """`ostinato run /dev/zero` or a FIFO said "no such file" (issue 29,
    item 8): it is there, and not a program file."""
    os.mkfifo(tmp_path / 'pipe.ost')
    for command in ('run', 'check', 'dis', 'serve'):
        r = ost(command, '/dev/zero', cwd=tmp_path)
        assert (r.returncode, r.stderr) == (
            2, 'ostinato: /dev/zero is a character device, not a program file\n'), command
        r = ost(command, 'pipe.ost', cwd=tmp_path)
        assert (r.returncode, r.stderr) == (
            2, 'ostinato: pipe.ost is a named pipe (FIFO), not a program file\n'), command


def test_output_to_a_full_disk_is_an_error_not_lost_in_silence(tmp_path):
    """`> /dev/full`: the printed lines cannot be written.  It was exit 0
    with nothing said; now one line on stderr and exit 74 (EX_IOERR)."""
    (tmp_path / 'p.ost').write_text('print("hello")\nprint("again")\n')
    with open('/dev/full', 'w') as full:
        r = subprocess.run([BIN, 'run', '--db', str(tmp_path / 'db.fs'), 'p.ost'], cwd=tmp_path,
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 74, r.stderr
    assert r.stderr.startswith("ostinato: cannot write the program's output: No space left on "
                               "device."), r.stderr
    assert 'Traceback' not in r.stderr
