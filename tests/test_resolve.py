"""The resolver pass (compiler/resolve.py): one binding per name read,
which the compiler emits loads from and `check` reads for its warnings."""
from __future__ import annotations

from ostinato.compiler.check import unbound_reads
from ostinato.compiler.compiler import compile_module
from ostinato.compiler.resolve import resolve
from ostinato.syntax import ast as A
from ostinato.syntax import parse

SOURCE = '''\
x = 1
def f(a, b = a + y):
    c = a + b + x
    def g():
        return <k: k + c + a + __goal__>
    for i:v in [1]:
        print(i + v)
    return g
spawn:
    h = x
    print(h + undefined_here)
'''


def reads(res, tree):
    found = []

    def walk(node):
        if isinstance(node, A.Name) and id(node) in res.reads:
            found.append((node.name, node.line, res.read(node)))
        if isinstance(node, A.Node):
            for v in vars(node).values():
                walk(v)
        elif isinstance(node, (list, tuple)):
            for v in node:
                walk(v)
    walk(tree)
    return found


def test_each_read_has_one_binding():
    tree = parse(SOURCE, 'm.ost')
    res = resolve(tree)
    got = reads(res, tree)
    assert ('a', 2, ('local', 0)) in got               # a default runs in the new frame
    assert ('y', 2, ('global', 'y')) in got
    assert ('x', 3, ('global', 'x')) in got
    assert ('c', 5, ('outer', (2, 2))) in got          # lambda -> g -> f's slot of c
    assert ('a', 5, ('outer', (2, 0))) in got
    assert ('k', 5, ('local', 0)) in got
    assert ('__goal__', 5, ('special', 'goal')) in got
    assert ('i', 7, ('local', 4)) in got               # loop variables are f's locals
    assert ('h', 11, ('local', 0)) in got              # the spawn block is a scope
    assert res.module.names == ['x', 'f']
    assert res.scope(tree.body[1]).names == ['a', 'b', 'c', 'g', 'i', 'v']


def test_check_and_the_compiler_read_the_same_resolution():
    tree = parse(SOURCE, 'm.ost')
    res = resolve(tree)
    compile_module(tree, SOURCE, 'm.ost', 'm', res)
    warned = [(n.line, name) for n, name, _ in unbound_reads(tree, {'print'}, res)]
    assert warned == [(2, 'y'), (11, 'undefined_here')]
    # Without a resolution passed in, each makes its own, with the same result.
    assert [(n.line, name) for n, name, _ in unbound_reads(tree, {'print'})] == warned
