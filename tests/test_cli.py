"""The `ostinato` command: exit codes, check, dis, usage errors."""
import os
import subprocess
import sys

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
