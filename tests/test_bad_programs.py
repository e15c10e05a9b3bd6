"""Hostile and unlucky programs (issue 11, item 9): every one gets a clear
error naming `file:line:col` and a documented exit code from `check`, `dis`
and `run` -- never a Python traceback.

- code nested 100,000 deep (a 100,000-term sum, lists, `not`, `^`, field
  access, calls, lambdas, `if` expressions; `if`, `for` and `def` blocks a
  few thousand deep, as deep as a file of indented lines can reasonably
  be): a syntax error (65), while code nested as deep as the limit allows
  still compiles and runs;
- a line of 10 MB: a syntax error;
- a file that is not UTF-8, for `dis` too;
- a value nested 100,000 deep that cannot be stored: the task fails with
  a clear error (70);
- `sleep(10 ^ 400)`, `sleep(nan)`, `sleep(inf)`: catchable errors;
- printing a lone surrogate: printed escaped;
- a full disk at commit: exit 74 with a message, then a clean resume once
  there is room (on a real tmpfs, mounted in a user namespace).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

# Slow (whole runs of huge and deeply nested programs): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')
OSTINATO = [BIN] if os.path.exists(BIN) else [sys.executable, '-m', 'ostinato']
DEEP = 100_000


def ost(*args, cwd, timeout=300):
    env = dict(os.environ, OSTINATO_DB=os.path.join(str(cwd), 'db.fs'))
    return subprocess.run(OSTINATO + list(args), cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def nested(n):
    """Programs nesting one construct n deep (blocks: at most 3,000 deep,
    since each level is one more space on every line below it)."""
    b = min(n, 3000)
    return {
        'terms': 'x = ' + ' + '.join(['1'] * n) + '\nprint(x)\n',
        'lists': 'x = ' + '[' * n + ']' * n + '\nprint(length(x))\n',
        'not': 'x = ' + 'not ' * n + 'true\nprint(x)\n',
        'power': 'x = ' + ' ^ '.join(['1'] * n) + '\nprint(x)\n',
        'fields': 'y = [:]\ny.a = y\nx = y' + '.a' * n + '\nprint(x == y)\n',
        'calls': 'def f():\n    return f\nx = f' + '()' * n + '\nprint(x == f)\n',
        'lambdas': 'x = ' + '<a: ' * n + '1' + '>' * n + '\nprint(x(0) != none)\n',
        'if_exprs': 'x = ' + 'if true then ' * min(n, 50_000) + '1'
                    + ' else 2' * min(n, 50_000) + '\nprint(x)\n',
        'if_blocks': ''.join(' ' * i + 'if true:\n' for i in range(b)) + ' ' * b + 'print(1)\n',
        'for_blocks': ''.join(' ' * i + 'for x%d in [1]:\n' % i for i in range(b))
                      + ' ' * b + 'print(1)\n',
        'def_blocks': ''.join(' ' * i + 'def f%d():\n' % i for i in range(b))
                      + ' ' * b + 'return 1\nprint(1)\n',
    }


def write(tmp_path, programs):
    paths = []
    for name, text in programs.items():
        p = tmp_path / (name + '.ost')
        p.write_text(text)
        paths.append(p.name)
    return paths


def assert_clear(r, code):
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    assert 'Traceback' not in r.stderr and 'Traceback' not in r.stdout, r.stderr[-3000:]


@pytest.mark.parametrize('kind', sorted(nested(10)))
def test_code_nested_100000_deep_is_a_syntax_error(tmp_path, kind):
    [name] = write(tmp_path, {kind: nested(DEEP)[kind]})
    # Every command reads a file the same way: all three for one kind (each
    # case takes seconds to parse: the parser reads to the end before the
    # depth is known), `check` for the others.
    commands = [['check'], ['dis'], ['run', '--db', 'db.fs']] if kind == 'lambdas' \
        else [['check']]
    for command in commands:
        r = ost(*command, name, cwd=tmp_path)
        assert_clear(r, 65)
        head = r.stderr.splitlines()[0]
        assert head.startswith(kind + '.ost:') and ': syntax error: ' in head, head
        assert 'nested too deeply' in head or 'characters long' in head, head
        assert len(r.stderr) < 2000              # the long line is shown around the column


def test_code_nested_as_deep_as_allowed_compiles_and_runs(tmp_path):
    from ostinato.syntax.parser import MAX_NESTING
    programs = nested(MAX_NESTING - 5)
    del programs['lists']                        # printing it is a runtime limit of its own
    paths = write(tmp_path, programs)
    r = ost('check', *paths, cwd=tmp_path)
    assert_clear(r, 0)
    for name in paths:
        r = ost('dis', name, cwd=tmp_path)
        assert_clear(r, 0)
        r = ost('run', '--db', name + '.fs', name, cwd=tmp_path)
        assert_clear(r, 0)
        assert r.stdout.split()[-1] in ('1', 'true', 'false', str(MAX_NESTING - 5)), \
            (name, r.stdout[:200])


def test_a_10_mb_line_is_a_syntax_error(tmp_path):
    (tmp_path / 'long.ost').write_text('x = "' + 'a' * (10 << 20) + '"\nprint(length(x))\n')
    for command in (['check'], ['dis'], ['run', '--db', 'db.fs']):
        r = ost(*command, 'long.ost', cwd=tmp_path)
        assert_clear(r, 65)
        assert r.stderr.startswith('long.ost:1:1000001: syntax error: line 1 is 10485766 '
                                   'characters long, more than the 1000000 allowed')
        assert len(r.stderr) < 2000


def test_a_program_larger_than_any_source_is_one_line(tmp_path):
    """A 20 MB program (more than the 16 MiB a source may be): one line
    naming the file for every command, and for an import a catchable error
    at the import -- it was 'internal error (please report it)' and a Python
    traceback (found by the issue 29 rerun)."""
    big = ('-- ' + 'x' * 77 + '\n') * 262_144      # 20 MiB of short lines
    (tmp_path / 'big.ost').write_text(big)
    for command in (['check'], ['dis'], ['run', '--db', 'db.fs']):
        r = ost(*command, 'big.ost', cwd=tmp_path)
        assert_clear(r, 2)
        assert r.stderr == ('ostinato: big.ost is larger than a program may be (%s bytes; at '
                            'most 16,777,216)\n' % '{:,}'.format(len(big))), r.stderr
    (tmp_path / 'hugemod.ost').write_text(big)
    (tmp_path / 'main.ost').write_text('try:\n    import hugemod\ncatch e:\n    print(e.message)\n'
                                       'print("after")\n')
    r = ost('run', '--db', 'db2.fs', 'main.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout.splitlines()[-1] == 'after', r.stdout
    assert r.stdout.startswith("cannot read module 'hugemod': larger than 16,777,216 bytes"), \
        r.stdout


def test_a_program_of_more_than_500000_tokens_is_a_syntax_error(tmp_path):
    """2,000,000 lines of `x = 1` (12 MB, under the source limit) took more
    than 4 minutes and gigabytes to parse at every start, with nothing
    said (found by the issue 29 rerun); past 500,000 tokens it is a syntax
    error where the limit is passed.  (The largest shipped skill, meals.ost,
    is about 15,000.)"""
    (tmp_path / 'many.ost').write_text('x = 1\n' * 125_001)     # 4 tokens a line
    r = ost('check', 'many.ost', cwd=tmp_path)
    assert_clear(r, 65)
    assert r.stderr.startswith('many.ost:125001:1: syntax error: more than 500,000 tokens '
                               '(names, numbers, operators, line ends)'), r.stderr[:300]
    (tmp_path / 'fits.ost').write_text('x = 1\n' * 124_990 + 'print(x)\n')
    r = ost('run', '--db', 'db.fs', 'fits.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout == '1\n'


def test_ordering_values_nested_too_deeply_is_a_clear_error(tmp_path):
    """`<`, sorted() and max() of two lists nested 100,000 deep: a catchable
    error that says why, not 'internal error: recursion too deep' (found by
    the issue 29 rerun)."""
    (tmp_path / 'deep.ost').write_text(textwrap.dedent('''\
        a = []
        b = []
        for i in 0..100000:
            a = [a]
            b = [b]
        for f in [<x, y: (x < y)>, <x, y: sorted([x, y])>, <x, y: max(x, y)>]:
            try:
                f(a, b)
            catch e:
                print(e.message)
        '''))
    r = ost('run', '--db', 'db.fs', 'deep.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout == 'cannot compare values nested this deeply\n' * 3, r.stdout


def test_a_file_that_is_not_utf8_is_a_syntax_error_for_dis_too(tmp_path):
    (tmp_path / 'latin1.ost').write_bytes(b'x = 1\ny = "caf\xe9"\n')
    for command in ('check', 'dis'):
        r = ost(command, 'latin1.ost', cwd=tmp_path)
        assert_clear(r, 65)
        assert r.stderr.startswith('latin1.ost:2:9: syntax error: the source is not valid UTF-8')


def test_a_value_too_deep_to_store_fails_its_task_clearly(tmp_path):
    (tmp_path / 'deep.ost').write_text(textwrap.dedent('''\
        print("before")
        sleep(0)                    -- ends the turn: what came before is committed
        x = none
        for i in 0..100000:
            x = #[x]
        sleep(0.01)
        print("never")
    '''))
    r = ost('run', '--db', 'db.fs', 'deep.ost', cwd=tmp_path)
    assert_clear(r, 70)
    assert r.stdout == 'before\n'
    assert r.stderr.startswith('deep.ost:')
    assert 'error: cannot store a value nested this deeply' in r.stderr.splitlines()[0]
    r = ost('tasks', '--db', 'db.fs', cwd=tmp_path)       # the database is fine
    assert_clear(r, 0)


def test_sleep_with_a_number_it_cannot_wait_is_a_catchable_error(tmp_path):
    (tmp_path / 'sleeps.ost').write_text(textwrap.dedent('''\
        inf = 1e308 * 10
        for s in [10 ^ 400, inf - inf, inf, 2e9]:
            try:
                sleep(s)
            catch e:
                print(e.where, e.message)
        sleep(-inf)
        print("done")
    '''))
    r = ost('run', '--db', 'db.fs', 'sleeps.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout.splitlines() == [
        'sleeps.ost:4:9 sleep() cannot wait a 401-digit number of seconds; '
        'at most 1000000000 (about 31 years)',
        'sleeps.ost:4:9 sleep() needs a number of seconds, not nan',
        'sleeps.ost:4:9 sleep() cannot wait inf seconds; at most 1000000000 (about 31 years)',
        'sleeps.ost:4:9 sleep() cannot wait 2e+09 seconds; at most 1000000000 (about 31 years)',
        'done',
    ]


def test_printing_a_lone_surrogate_prints_it_escaped(tmp_path):
    (tmp_path / 'lone.ost').write_text('s = parse_json(\'"\\\\ud800"\')\nprint(length(s), s)\n'
                                       'print("after")\n')
    r = ost('run', '--db', 'db.fs', 'lone.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout == '1 \\ud800\nafter\n'


DISK_FULL = r'''
import json, os, subprocess, sys
bin, program, mnt = sys.argv[1:4]
os.makedirs(mnt, exist_ok=True)
subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mnt], check=True)
db = os.path.join(mnt, 'grow.fs')
def run():
    r = subprocess.run([bin, 'run', '--db', db, program], capture_output=True, text=True,
                       timeout=600)
    return {'code': r.returncode, 'out': r.stdout, 'err': r.stderr}
full = run()
again = run()                       # still no room: the same clear stop, nothing lost
subprocess.run(['mount', '-o', 'remount,size=64m', mnt], check=True)
resumed = run()
print(json.dumps({'full': full, 'again': again, 'resumed': resumed}))
'''


def test_a_full_disk_stops_the_run_clearly_and_it_resumes_once_there_is_room(tmp_path):
    """The database is on a 3 MB tmpfs (mounted in a user namespace of our
    own, so no root is needed); the program grows its data until the disk
    is full, and continues after the tmpfs is made larger."""
    unshare = shutil.which('unshare')
    assert unshare, 'this test needs unshare(1) (util-linux) to mount a small tmpfs'
    program = tmp_path / 'grow.ost'
    program.write_text(textwrap.dedent('''\
        type Item:
            val text
        data = []
        for i in 0..600:
            append(data, Item(text = str(i) * 2500))     -- a record of its own
            if i % 100 == 0:
                print(i)
            sleep(0.001)
        print("done", length(data))
    '''))
    script = tmp_path / 'disk_full.py'
    script.write_text(DISK_FULL)
    r = subprocess.run([unshare, '-rm', sys.executable, str(script), BIN, str(program),
                        str(tmp_path / 'mnt')], capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["full"]["out"], got      # it got some way before the disk was full
    for run in (got['full'], got['again']):
        assert run['code'] == 74, run
        assert 'Traceback' not in run['err'], run['err']
        assert run['err'].startswith('ostinato: cannot write the database ')
        assert 'No space left on device' in run['err'] and 'run the same command again' \
            in run['err']
    assert got['resumed']['code'] == 0, got['resumed']
    printed = (got['full']['out'] + got['again']['out'] + got['resumed']['out']).split('\n')
    # Every line printed once, in order, across the three runs.
    assert [p for p in printed if p] == [str(i) for i in range(0, 600, 100)] + ['done 600']


def test_a_type_inheritance_cycle_is_a_clear_error(tmp_path):
    """Amending `type A in B` where B is already in A: a catchable error at
    the `type` statement (it was "internal error: recursion too deep" at
    the first field lookup)."""
    (tmp_path / 'c.ost').write_text(
        'type A:\n    var x\ntype B in A:\n    var y\ntry:\n    type A in B:\n        var z\n'
        'catch e:\n    print(e.message)\nprint(A(x = 1).x)\n')
    r = ost('run', 'c.ost', cwd=tmp_path)
    assert_clear(r, 0)
    assert r.stdout == 'type A cannot be in B: B is A or one of its subtypes\n1\n'


def test_truncate_to_a_length_beyond_any_limit_is_a_clear_error(tmp_path):
    (tmp_path / 't.ost').write_text('l = []\ntruncate(l, 10 ^ 100)\n')
    r = ost('run', 't.ost', cwd=tmp_path)
    assert_clear(r, 70)
    assert r.stderr.startswith('t.ost:2:1: error: collection too large: '), r.stderr
    assert 'OverflowError' not in r.stderr
