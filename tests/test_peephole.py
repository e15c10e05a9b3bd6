"""Superinstructions (compiler.peephole) and blocks of straight-line code
(vm.blocks) must not change what a program does.  Each program here runs
with them and with plain instructions only, in-process and in the
store-everything mode, and must print the same, report the same errors at
the same FILE:LINE:COL and exit the same way."""
import io

import pytest

from ostinato.compiler import compiler as compiler_module
from ostinato.compiler.compiler import compile_module
from ostinato.compiler.code import (ADD, CONST, JUMP, LOAD_LOCAL, OPNAMES, RETURN, RETURN_CONST,
                                    RETURN_LOCAL, STORE_LOCAL)
from ostinato.compiler.peephole import fuse
from ostinato.runtime.runner import run_file
from ostinato.syntax import parse
from ostinato.vm import blocks

PROGRAMS = {
    'int_loops': '''
def f(n):
    total = 0
    i = 0
    while i < n:
        if i % 3 == 0:
            total = total + i * 2
        else:
            total = total - 1
        i = i + 1
    return total
print(f(100), f(0), f(-5))
x = 0
while x < 50:
    x = x + 7
print(x)
k = 10
while k > 0:
    k = k - 3
    if k == 4:
        continue
    if k < 2:
        break
print(k)
''',
    'every_kind_through_one_code': '''
def add(a, b):
    c = a + b
    return c
print(add(1, 2), add(1.5, 2), add('a', 'b'), add([1], [2]), add(#[1], #[2]))
def sub_mul(a, b):
    return (a - b) * 2
print(sub_mul(5, 7), sub_mul(2.5, 1), sub_mul(10 ^ 30, 1))
def lt(a, b):
    if a < b:
        return 'yes'
    return 'no'
print(lt(1, 2), lt(2.5, 1), lt('a', 'b'), lt([1], [1, 2]), lt(2, 1.5))
def order(a, b):
    return [a < b, a <= b, a > b, a >= b, a == b, a != b]
print(order(1, 1), order('b', 'a'), order(1, 1.0), order(true, 1), order(none, none))
def mod(a, b):
    return a % b
print(mod(7, 3), mod(-7, 3), mod(7, -3), mod(7.5, 2))
''',
    'errors_where_they_happen': '''
def check(f):
    try:
        f()
    catch e:
        print(e.message, e.where)
check(<1 + 'a'>)
def g(x):
    y = x * 2 + 1
    return y - 'q'
check(<g(3)>)
check(<g('s')>)
check(<g(none)>)
def h(x):
    i = 0
    while i < x:
        i = i + 1
    return i
print(h(4))
check(<h('3')>)
check(<h(none)>)
def m(x):
    return 5 % x
check(<m(0)>)
def cond(x):
    if x:
        return 1
    return 2
check(<cond(1)>)
check(<cond(none)>)
def neg(x):
    z = x < 1 and x
    return z
check(<neg('a')>)
total = 0
def bump(v):
    total = total + v
    return total
check(<bump('x')>)
''',
    'uncaught_report': '''
def deep(n):
    if n == 0:
        return n + 'x'
    return deep(n - 1) + 1
print(deep(3) \\ 'never')
''',
    'strings': '''
s = ''
for i in 0..50:
    s = s + str(i % 10)
print(s, length(s))
def build(n):
    s = 'x'
    t = s
    for i in 0..n:
        s = s + 'ab'
    u = s
    s = s + '!'
    return [s, t, u]
print(build(3))
def dup(n):
    a = b = 'q' + str(n)
    a = a + 'z'
    return [a, b]
print(dup(1))
print('a' == 'a', 'a' != 'b', 1 == 1.0, true == 1, none == none, 'a' < 'b', 'b' <= 'a')
''',
    'logic': '''
def f(x, y):
    a = not x
    b = x?
    c = x \\ 5
    d = (y == 3) and (x != y)
    e = 1 < y <= 3
    g = (y > 1) or y
    return [a, b, c, d, e, g]
print(f(none, 3), f(0, 2), f('', 1), f([1], 4))
flag = true
n = 0
while flag:
    n = n + 1
    flag = n < 3
print(n, not flag)
''',
    'globals_and_waits': '''
n = 0
spawn:
    wait until n >= 5
    print('saw', n)
while n < 5:
    n = n + 1
    sleep(0)
print('end', n)
m = none
m = m \\ 4
print(m)
''',
    'lists_through_int_blocks': '''
def one():
    return [1]
def two():
    return #[2]
print(one() + one(), two() + two(), str(1) + str(2))
def grow(n):
    acc = []
    for i in 0..n:
        acc = acc + one()
    return acc
print(grow(3))
''',
    'frames_of_fast_calls': '''
def make(n):
    base = n * 10
    def add(x):
        return base + x
    return add
def via(n):
    return make(n)
adders = [via(i) for i in 0..3]
print([a(1) for a in adders])
def names(n):
    if n == 0:
        out = []
        f = __caller__
        while f?:
            append(out, f.n)
            f = f.__caller__
        return [out, __goal__, __parent__ == __caller__]
    return names(n - 1)
print(names(4))
def boom(n):
    if n == 0:
        return 1 + 'x'
    return boom(n - 1)
def catcher(n):
    try:
        return boom(n)
    catch e:
        return e.where
print(catcher(5))
def outer(n):
    k = n + 1
    def inner(m):
        if m == 0:
            return k
        return inner(m - 1)
    return inner(n)
print(outer(5))
def leaf(n):
    return n * 2
def spawner(n):
    if n == 0:
        return spawn(leaf, 21)
    return spawner(n - 1)
t = spawner(3)
wait until t.done
print(t.result)
def sum_to(n):
    if n == 0:
        return 0
    return n + sum_to(n - 1)
print(sum_to(3000))
''',
    'copied_jump_targets': '''
def pick(c, a, b):
    x = (if c then a else b) + 1
    if x > 3:
        y = x * 2
    else:
        y = x - 1
    return if y > 5 then y - 5 else y + 100
def safely(c, a, b):
    try:
        return pick(c, a, b)
    catch e:
        return "{e.message} {e.where}"
print(pick(true, 1, 2), pick(false, 1, 5), pick(true, 1.5, 2), pick(false, 1, 9))
print(safely(false, 1, 'q'), safely(1, 2, 3), safely(true, 'a', 'b'), safely(true, none, 1))
def sign(n):
    if n < 0:
        return -1
    else if n == 0:
        return 0
    return 1
print([sign(k) for k in [-2, 0, 3, 1.5, -0.5]])
n = 0
while n < 20:
    if n % 3 == 0:
        n = n + 2
    else:
        n = n + 1
print(n)
''',
    'comprehensions': '''
xs = [i * i for i in 0..10 if i % 2 == 0]
print(xs, [k + 1 for k in xs if k > 10])
print([a + b for a in [1, 2] for b in [10, 20]])
''',
}


def run(tmp_path, name, src, store_every=None):
    path = tmp_path / (name + '.ost')
    path.write_text(src)
    out, err = io.StringIO(), io.StringIO()
    status = run_file(str(path), out, err, store_every=store_every)
    return out.getvalue(), err.getvalue(), status


def run_plain(tmp_path, name, src, monkeypatch):
    """Run with no superinstructions and no blocks: one plain instruction at a time."""
    with monkeypatch.context() as m:
        m.setattr(compiler_module, 'fuse', list)
        m.setattr(blocks, 'translate', tuple)
        return run(tmp_path, name, src)


@pytest.mark.parametrize('name', [pytest.param(n, marks=[pytest.mark.slow] if n == 'frames_of_fast_calls' else [])
                                  for n in sorted(PROGRAMS)])
def test_same_as_plain_instructions(name, tmp_path, monkeypatch):
    src = PROGRAMS[name]
    want = run_plain(tmp_path, name, src, monkeypatch)
    assert want[0] or want[1], 'the program did nothing'
    assert run(tmp_path, name, src) == want
    for every in (1, 3):
        assert run(tmp_path, name, src, store_every=every) == want


def test_error_positions(tmp_path):
    out, err, status = run(tmp_path, 'e', PROGRAMS['errors_where_they_happen'])
    assert out.splitlines() == [
        'unsupported operand types for +: int and str e.ost:7:8',
        'unsupported operand types for -: int and str e.ost:10:12',
        'unsupported operand types for +: str and int e.ost:9:9',
        'unsupported operand types for *: none and int e.ost:9:9',
        '4',
        'cannot compare int and str e.ost:16:11',
        'cannot compare int and none e.ost:16:11',
        'division by zero e.ost:23:12',
        'condition must be true or false, got 1 e.ost:26:8',
        'condition must be true or false, got none e.ost:26:8',
        'cannot compare str and int e.ost:32:9',
        'unsupported operand types for +: none and str e.ost:37:13',
    ]
    _, err, status = run(tmp_path, 'u', PROGRAMS['uncaught_report'])
    assert status == 70
    assert err == ('u.ost:4:16: error: unsupported operand types for +: int and str\n'
                   '  at u.ost:4:16 in deep\n'
                   '  at u.ost:5:12 in deep\n'
                   '  at u.ost:5:12 in deep\n'
                   '  at u.ost:5:12 in deep\n'
                   '  at u.ost:6:7 in u\n')


def test_fused_instructions_leave_the_sequence_in_place():
    instrs = [(LOAD_LOCAL, 0), (RETURN, None), (CONST, 5), (RETURN, None), (STORE_LOCAL, 1)]
    fused = fuse(instrs)
    assert fused == [(RETURN_LOCAL, 0), (RETURN, None), (RETURN_CONST, 5), (RETURN, None),
                     (STORE_LOCAL, 1)]
    assert OPNAMES[RETURN_LOCAL] == 'RETURN_LOCAL'


def test_blocks_replace_only_their_first_instruction():
    src = PROGRAMS['int_loops']
    code = compile_module(parse(src, 'b.ost'), src, 'b.ost', 'b')
    run_list = blocks.runnable(code)
    assert len(run_list) == len(code.instrs)
    starts = [i for i, ins in enumerate(run_list)
              if ins[0] == blocks.RUN_BLOCK]
    assert starts
    for i, ins in enumerate(run_list):
        if i not in starts:
            assert ins == code.instrs[i]
    # The translation is process-local: it is not part of the stored state.
    assert '_v_run' not in code.__getstate__()


def test_a_block_hands_its_first_instruction_back_when_it_cannot_do_it():
    block = blocks.translate(((ADD, None), (STORE_LOCAL, 0), (JUMP, 0)))[0][1]
    stack, locs = [2, 3], [None]
    assert block(stack, locs, {}, None, None, None, None) == 0
    assert stack == [] and locs == [5]
    stack = [[1], [2]]
    assert block(stack, locs, {}, None, None, None, None) is None
    assert stack == [[1], [2]] and locs == [5]
