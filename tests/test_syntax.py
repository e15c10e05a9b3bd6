"""Tests of the syntax layer: strings and dedent (docs/language.md §3), blurbs
(§13.1), the position-dependent tokens (§20), node positions, the syntax
errors and their locations (§14), the conformance corpus, and fuzzing that
checks nothing but OstSyntaxError ever leaves `parse`."""
from __future__ import annotations

import dataclasses
import glob
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ostinato.syntax import OstSyntaxError, ast, parse
from ostinato.syntax.parser import grammar_path

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')


# ------------------------------------------------------------------ helpers

def sx(node) -> str:
    """A compact rendering of an AST without positions: names bare,
    constants as Python literals, other nodes as Type(fields...)."""
    if isinstance(node, list):
        return '[' + ', '.join(sx(x) for x in node) + ']'
    if isinstance(node, tuple):
        return '(' + ', '.join(sx(x) for x in node) + ')'
    if not isinstance(node, ast.Node):
        return repr(node)
    if isinstance(node, ast.Const):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return node.name
    names = [f.name for f in dataclasses.fields(node) if f.name not in ('line', 'col')]
    return '%s(%s)' % (type(node).__name__, ', '.join(sx(getattr(node, n)) for n in names))


def body(src: str):
    return parse(src, 'test.ost').body


def expr(src: str) -> ast.Node:
    """The expression of a one-statement program."""
    stmt, = body(src + '\n')
    assert isinstance(stmt, ast.ExprStmt)
    return stmt.expr


def value(src: str) -> ast.Node:
    """The right side of the program's only assignment."""
    stmt, = body(src)
    assert isinstance(stmt, ast.Assign)
    return stmt.value


def error(src: str):
    with pytest.raises(OstSyntaxError) as info:
        parse(src, 'test.ost')
    e = info.value
    return e.line, e.col, e.message


# ------------------------------------------------------- strings and dedent

DEDENT_TABLE = [   # docs/language.md §3.3, `⏎` written \n, `·` a space
    ('"\n    Hello\n      world\n    Bye"', '\nHello\n  world\nBye'),
    ('"\n    a\n    b\n    "', '\na\nb\n'),
    ('"\n    a\n  "', '\n  a\n'),
    ('"\n    a\n"', '\na\n'),
    ('"first\n        second"', 'first\nsecond'),
    ('"\n    \\  kept\n    z"', '\n  kept\nz'),
    ('"\n    a\n\n    b"', '\na\n\nb'),
]


@pytest.mark.parametrize('literal, expected', DEDENT_TABLE)
def test_dedent_table(literal, expected):
    node = value('s = ' + literal + '\n')
    assert isinstance(node, ast.Const)
    assert node.value == expected


def test_backslash_line_break_drops_the_dedented_indentation():
    assert value('s = "one, \\\n       two"\n').value == 'one, two'


def test_dedent_applies_to_every_kind_of_literal():
    assert value("s = 'one\n     two'\n").value == 'one\ntwo'
    assert value("s = $'a\n      \\n b'$\n").value == 'a\n\\n b'


def test_interpolation_counts_as_text_for_dedent():
    node = value('s = "\n{x}\n    y"\n')
    assert sx(node) == "Str(['\\n', Interp(x, ''), '\\n    y'])"


def test_escapes():
    src = r's = "\\ \' \" \a \b \f \n \r \t \v \0 \x41 \u00e9 \U0001F600"' + '\n'
    assert value(src).value == '\\ \' " \a \b \f \n \r \t \v \0 A \u00e9 \U0001F600'


def test_kinds_of_literal():
    assert value("s = 'no {n} here'\n").value == 'no {n} here'
    assert value("s = '{{x}}'\n").value == '{{x}}'
    assert value('s = "{{x}}"\n').value == '{x}'
    assert value('s = $"raw \\t "q""$\n').value == 'raw \\t "q"'
    assert value('s = $$"a "$ b"$$\n').value == 'a "$ b'
    assert value('s = $"say "hi""$\n').value == 'say "hi"'
    assert sx(value('s = $"raw \\t "q" {n}"$\n')) == "Str(['raw \\\\t \"q\" ', Interp(n, None)])"


def test_interpolations():
    node = value('s = "n+1 = {n + 1}, {{braces}}, {[1, \'a\', none]}"\n')
    assert sx(node) == ("Str(['n+1 = ', Interp(BinOp('+', n, 1), None), ', {braces}, ', "
                        "Interp(ListLit([1, 'a', None]), None)])")
    assert sx(value('s = "{sjoin(e.items, \', \')} {f("x")}"\n')) == (
        "Str([Interp(Call(sjoin, [Field(e, 'items'), ', '], []), None), ' ', "
        "Interp(Call(f, ['x'], []), None)])")
    assert sx(value('s = "{a \\ \'unknown\'}"\n')) == "Str([Interp(Default(a, 'unknown'), None)])"
    assert sx(value('s = "{ {1} }"\n')) == "Str([Interp(SetLit([1]), None)])"
    assert sx(value("s = \"{'{'}\"\n")) == "Str([Interp('{', None)])"


def test_reindent_example():
    src = 'p = "\n    Header:\n        {body}\n    Footer"\n'
    node = value(src)
    assert isinstance(node, ast.Str)
    text1, interp, text2 = node.parts
    assert (text1, text2) == ('\nHeader:\n    ', '\nFooter')
    assert sx(interp.expr) == 'body' and interp.indent == '    '


def test_reindent_needs_the_interpolation_alone_on_a_later_line():
    assert value('s = "{a}\n"\n').parts[0].indent is None          # first line
    assert value('s = "\n  {a} x"\n').parts[1].indent is None      # text after it
    assert value('s = "\n  x {a}"\n').parts[1].indent is None      # text before it
    assert value('s = "\n  {a}\\n"\n').parts[1].indent is None     # escaped \n is no break
    assert value('s = "\n  {a}"\n').parts[1].indent == ''          # end of the literal
    assert value('s = "\n  {a}\n    {b}\n  "\n').parts[3].indent == '  '


def test_seed_instructions_literal():
    src = ('x = f(t,\n'
           '        instructions="Be sure to list _everything_ the user mentioned eating in this thread,\n'
           '                      even if at different times, and be sure to include the respective times!")\n')
    (name, arg), = value(src).kwargs
    assert name == 'instructions'
    assert arg.value == ('Be sure to list _everything_ the user mentioned eating in this thread,\n'
                         'even if at different times, and be sure to include the respective times!')


def test_seed_guarded_literal():
    src = ('def f():\n'
           '    items = agent($"Re-format "{ate_what}" as a json object mapping each time\n'
           '                    to a list of items consumed then.\n'
           '                    Return action=\'itemize\', items=<the mapping>"$).items\n')
    stmt = body(src)[0].body[0]
    literal = stmt.value.obj.args[0]
    assert isinstance(literal, ast.Str)
    first, interp, rest = literal.parts
    assert first == 'Re-format "' and sx(interp.expr) == 'ate_what' and interp.indent is None
    assert rest == ('" as a json object mapping each time\nto a list of items consumed then.\n'
                    "Return action='itemize', items=<the mapping>")


def test_seed_diet_log_literal():
    src = ('def f():\n'
           '    send_message_to_thread(thread,\n'
           '        "Your diet log to date:\n'
           '            {format_diet_log(user.diet_log)}\n'
           '         ")\n')
    literal = body(src)[0].body[0].expr.args[1]
    first, interp, last = literal.parts
    assert first == 'Your diet log to date:\n   '
    assert interp.indent == '   '
    assert sx(interp.expr) == "Call(format_diet_log, [Field(user, 'diet_log')], [])"
    assert last == '\n'


def test_crlf_reads_as_lf():
    assert value('s = "a\r\n  b"\r\n').value == 'a\nb'
    assert sx(body('x = 1\r\nif x:\r\n    y\r\n')[1]) == 'If([(x, [ExprStmt(y)])], None)'


# ------------------------------------------------------------------- blurbs

SEED_BLURB = '''{|
 | Plan the trip.
 |
 | The first line is the summary; the rest becomes
 |   the details, dedented.
 |}
def plan_trip():
    none
'''


def test_blurb_example():
    module = parse(SEED_BLURB, 't.ost')
    assert module.blurb is None
    blurb = module.body[0].blurb
    assert blurb.summary == 'Plan the trip.'
    assert blurb.details == 'The first line is the summary; the rest becomes\n  the details, dedented.'
    assert (blurb.line, blurb.col) == (1, 1)


def test_blurb_forms():
    one_line = parse('{| Book a hotel room. |}\ndef f():\n    none\n', 't.ost').body[0].blurb
    assert (one_line.summary, one_line.details) == ('Book a hotel room.', None)
    empty = parse('{|  |}\ntype T\n', 't.ost').body[0].blurb
    assert (empty.summary, empty.details) == (None, None)
    text = '{| First.\n |   deeper\n |\n | back\n   |}\ntype T\n'
    b = parse(text, 't.ost').body[0].blurb
    assert (b.summary, b.details) == ('First.', '  deeper\n\nback')


def test_module_blurb_and_def_blurb():
    module = parse('{| Module. |}\n\n-- comment\n{| Def. |}\n\ndef f():\n    none\n', 't.ost')
    assert module.blurb.summary == 'Module.'
    assert module.body[0].blurb.summary == 'Def.'
    only = parse('# header\n\n{| Only the module. |}\nx = 1\n', 't.ost')
    assert only.blurb.summary == 'Only the module.' and (only.blurb.line, only.blurb.col) == (3, 1)
    assert parse('{| Alone. |}\n', 't.ost').blurb.summary == 'Alone.'


def test_blurbs_on_nested_defs_and_types():
    src = 'def f():\n    {| Inner. |}\n    (| comment |)\n    def g():\n        none\n    {| T. |}\n    type T\n'
    f, = body(src)
    assert f.body[0].blurb.summary == 'Inner.' and f.body[1].blurb.summary == 'T.'
    assert (f.body[0].blurb.line, f.body[0].blurb.col) == (2, 5)


# ----------------------------------------------- position-dependent tokens

@pytest.mark.parametrize('src, tree', [
    ('<x: x + 1>(1)', "Call(Lambda(['x'], BinOp('+', x, 1)), [1], [])"),
    ('a < b', "Compare(a, [('<', b)])"),
    ('f{1}', 'Curry(f, [1], [])'),
    ('{1}', 'SetLit([1])'),
    ('x - -1', "BinOp('-', x, Unary('-', 1))"),
    ('-2 ^ 2', "Unary('-', BinOp('^', 2, 2))"),
    ('2 ^ 3 ^ 2', "BinOp('^', 2, BinOp('^', 3, 2))"),
    ('2 ^ -1', "BinOp('^', 2, Unary('-', 1))"),
    ('not a == b', "Unary('not', Compare(a, [('==', b)]))"),
    ('not x?', "Unary('not', Known(x))"),
    ('0..n + 1', "SpanExpr(0, BinOp('+', n, 1))"),
    ('-m.a \\ 0', "Unary('-', Default(Field(m, 'a'), 0))"),
    ('a...', 'SpanExpr(a, None)'),
    ('...b', 'SpanExpr(None, b)'),
    ('1..3', 'SpanExpr(1, 3)'),
    ('x[1]', 'Index(x, 1)'),
    ('[1]', 'ListLit([1])'),
    ('f(x)', 'Call(f, [x], [])'),
    ('(x)', 'x'),
    ('(f)(x)', 'Call(f, [x], [])'),
    ('x--1', 'x'),
    ('x!=y', "Compare(x, [('!=', y)])"),
    ('x! == y', "Compare(Bang(x), [('==', y)])"),
    ('a not in b', "Compare(a, [('not in', b)])"),
    ('0 <= x in s', "Compare(0, [('<=', x), ('in', s)])"),
    ('[x for x in xs if x > 1]',
     "Comprehension('list', x, None, [Head(None, 'x', xs)], Compare(x, [('>', 1)]))"),
    ('if c then a else if d then b else e', 'IfExpr(c, a, IfExpr(d, b, e))'),
    ('<x: if x then 1 else 2>', "Lambda(['x'], IfExpr(x, 1, 2))"),
    ('<x: (x > 2)>', "Lambda(['x'], Compare(x, [('>', 2)]))"),
    ('<a, b: <c: a < c>>', "Lambda(['a', 'b'], Lambda(['c'], Compare(a, [('<', c)])))"),
    ('<1> == <1>', "Compare(Lambda([], 1), [('==', Lambda([], 1))])"),
    ('spawn(f, 1)', 'Call(spawn, [f, 1], [])'),
    ('spawn (f)(x)', 'Call(Call(spawn, [f], []), [x], [])'),
    ('m.if.from.none', "Field(Field(Field(m, 'if'), 'from'), 'none')"),
    ('a or b and not c', "Or(a, And(b, Unary('not', c)))"),
    ('a \\ b \\ c', 'Default(Default(a, b), c)'),
    ('7 // 2 % 3 * 4 / 5', "BinOp('/', BinOp('*', BinOp('%', BinOp('//', 7, 2), 3), 4), 5)"),
])
def test_expression_shapes(src, tree):
    assert sx(expr(src)) == tree


def test_literals_and_collections():
    assert sx(expr('[]')) == 'ListLit([])'
    assert sx(expr('[:]')) == 'MapLit([])'
    assert sx(expr('{}')) == 'SetLit([])'
    assert sx(value('t = #[]\n')) == 'TupleLit([])'
    assert sx(value('t = #[1, 2,]\n')) == 'TupleLit([1, 2])'
    assert body('#[1]\n') == []             # a `#` line at the top is a header
    assert sx(expr("[name = 'Ann', 'age': 33, 7: 'seven',]")) == \
        "MapLit([('name', 'Ann'), ('age', 33), (7, 'seven')])"
    assert sx(expr('[str(i): i * 10 for i in 1..4]')) == \
        "Comprehension('map', BinOp('*', i, 10), Call(str, [i], []), [Head(None, 'i', SpanExpr(1, 4))], None)"
    assert sx(expr('{i % 3 for k:i in m, j in n if i}')) == \
        "Comprehension('set', BinOp('%', i, 3), None, [Head('k', 'i', m), Head(None, 'j', n)], i)"
    assert [type(n.value) for n in map(expr, ['7', '2.5', '1e3', '1E2', '2.5e-1'])] == \
        [int, float, float, float, float]
    assert [expr(s).value for s in ['none', 'true', 'false']] == [None, True, False]
    assert expr('2 ^ 100').right.value == 100


def test_calls_and_curry():
    assert sx(expr('f(1, b = 2,)')) == "Call(f, [1], [('b', 2)])"
    assert sx(expr('sjoin{sep = ", "}')) == "Curry(sjoin, [], [('sep', ', ')])"
    assert sx(expr('add{1}{2}()')) == 'Call(Curry(Curry(add, [1], []), [2], []), [], [])'
    assert sx(expr('print((x = 5) + 1)')) == "Call(print, [BinOp('+', AssignExpr(x, 5), 1)], [])"


def test_statements():
    src = '''x = 1
p = q = [0]
m.a = l[0] = 2
return
return x
break
break for
break while
break outer
continue x
import a, b
from m import x, y
wait until t.done
wait while b.v < 10
spawn f(1)
spawn m.f(x)
spawn:
    print(1)
'''
    assert [sx(s) for s in body(src)] == [
        'Assign([x], 1)', 'Assign([p, q], ListLit([0]))',
        "Assign([Field(m, 'a'), Index(l, 0)], 2)", 'Return(None)', 'Return(x)',
        'Break(None, None)', "Break(None, 'for')", "Break(None, 'while')",
        "Break('outer', None)", "Continue('x', None)",
        "Import(['a', 'b'])", "FromImport('m', ['x', 'y'])",
        "Wait('until', Field(t, 'done'))", "Wait('while', Compare(Field(b, 'v'), [('<', 10)]))",
        'SpawnCall(Call(f, [1], []))', "SpawnCall(Call(Field(m, 'f'), [x], []))",
        'SpawnBlock([ExprStmt(Call(print, [1], []))])']


def test_compound_statements():
    src = '''if a:
    x
else if b:
    y

-- a comment between the block and the else
else:
    z
if c then d else e
while true as spin:
    none
for i:v in l, w in 5... as outer:
    none
def f(a, b = a * 2,):
    return a
type Dog in Animal, m.T:
    val name
    var tricks = 0, age
type Marker
try:
    x
catch e:
    y
try:
    x
catch:
    y
'''
    assert [sx(s) for s in body(src)] == [
        'If([(a, [ExprStmt(x)]), (b, [ExprStmt(y)])], [ExprStmt(z)])',
        'ExprStmt(IfExpr(c, d, e))',
        "While(True, 'spin', [ExprStmt(None)])",
        "For([Head('i', 'v', l), Head(None, 'w', SpanExpr(5, None))], 'outer', [ExprStmt(None)])",
        "Def('f', [Param('a', None), Param('b', BinOp('*', a, 2))], [Return(a)], None)",
        "TypeDef('Dog', [Animal, Field(m, 'T')], [FieldDecl('val', 'name', None), "
        "FieldDecl('var', 'tricks', 0), FieldDecl('var', 'age', None)], None)",
        "TypeDef('Marker', None, [], None)",
        "Try([ExprStmt(x)], 'e', [ExprStmt(y)])",
        'Try([ExprStmt(x)], None, [ExprStmt(y)])']


def test_comments_and_line_joining():
    src = ('#!/usr/bin/env ostinato\n# header\nx = 1 (| in-line |) + 2\n'
           '(| a comment\n   line (| nested |) |) -- and more\n'
           'y = [1,\n     2,   -- inside brackets\n  (| here |) 3]\n'
           'z = 5 (| spans\n   lines |) * 2\n'
           'f(<a:\n   a>)\n')
    assert [sx(s) for s in body(src)] == [
        "Assign([x], BinOp('+', 1, 2))", 'Assign([y], ListLit([1, 2, 3]))',
        "Assign([z], BinOp('*', 5, 2))", "ExprStmt(Call(f, [Lambda(['a'], a)], []))"]


def test_empty_and_comment_only_sources():
    assert parse('', 'e.ost').body == []
    assert parse('-- nothing\n\n(| at all |)\n', 'e.ost').body == []
    assert parse('x', 'e.ost').filename == 'e.ost'


# ------------------------------------------------------------ node positions

def test_positions_are_first_characters():
    stmt, = body('x = foo.bar(1) + -y[2]\n')
    assert (stmt.line, stmt.col) == (1, 1)
    plus = stmt.value
    assert (plus.line, plus.col) == (1, 5)
    call = plus.left
    assert (call.line, call.col, call.func.line, call.func.col) == (1, 5, 1, 5)
    assert (call.args[0].line, call.args[0].col) == (1, 13)
    neg = plus.right
    assert (neg.line, neg.col) == (1, 18)
    assert (neg.operand.line, neg.operand.col) == (1, 19)


def test_positions_of_statements_and_heads():
    src = 'def f(a, b = 1):\n    for i:v in a:\n        return [k: v]\nif x:\n    y\nelse if z:\n    w\n'
    f, if_ = body(src)
    assert (f.line, f.col, f.params[1].line, f.params[1].col) == (1, 1, 1, 10)
    loop = f.body[0]
    assert (loop.line, loop.col, loop.heads[0].line, loop.heads[0].col) == (2, 5, 2, 9)
    ret = loop.body[0]
    assert (ret.line, ret.col, ret.value.line, ret.value.col) == (3, 9, 3, 16)
    assert (if_.branches[1][0].line, if_.branches[1][0].col) == (6, 9)


def test_positions_inside_interpolations():
    src = 'print("a {x + 1}")\ny = "\n    text {f(z)}\n      {q}"\n'
    first, second = body(src)
    literal = first.expr.args[0]
    assert (literal.line, literal.col) == (1, 7)
    interp = literal.parts[1]
    assert (interp.line, interp.col) == (1, 10)
    assert (interp.expr.line, interp.expr.col) == (1, 11)
    assert (interp.expr.right.line, interp.expr.right.col) == (1, 15)
    call = second.value.parts[1].expr
    assert (call.line, call.col, call.args[0].line, call.args[0].col) == (3, 11, 3, 13)
    q = second.value.parts[3]
    assert (q.line, q.col, q.expr.line, q.expr.col) == (4, 7, 4, 8)


def test_positions_count_code_points():
    stmt, = body("s = 'é😀' + x\n")
    assert (stmt.value.right.line, stmt.value.right.col) == (1, 12)
    assert error("s = 'é😀' + )\n") == (1, 12, "unmatched ')'")


# ----------------------------------------------------------- syntax errors

@pytest.mark.parametrize('src, where, message', [
    # missing ':' and bad blocks
    ('print(1)\nx = 2\nif 1 < 2\n    y\n', (3, 9), "expected ':' at the end of the if header"),
    ('while x  -- comment\n    y\n', (1, 8), "expected ':' at the end of the while header"),
    ('def f()\n    y\n', (1, 8), "expected ':' at the end of the def header"),
    ('if a:\n    b\nelse if c\n    d\n', (3, 10), "expected ':' at the end of the else if header"),
    ('if x: y\n', (1, 7), 'a block must start on the next line, indented'),
    ('if x:\ny\n', (2, 1), "expected an indented block after ':'"),
    ('if x:\n', (1, 6), "expected an indented block after ':'"),
    ('try:\n    x\ny = 1\n', (3, 1), "expected 'catch' after the try block"),
    ('type T in A  -- no colon\n    var x\n', (1, 12), "expected ':' at the end of the type header"),
    ('try\n    x\n', (1, 4), "expected ':' at the end of the try header"),
    ('try:\n    x\ncatch e\n    y\n', (3, 8), "expected ':' at the end of the catch header"),
    # indentation
    ('x = 1\n  y = 2\n', (2, 3), 'unexpected indent'),
    ('  x = 1\n', (1, 3), 'unexpected indent'),
    ('if x:\n        a\n    b\n', (3, 5), 'unindent does not match any outer indentation level'),
    ('if x:\n\ta\n', (2, 1), 'tab in indentation: indent with spaces only'),
    ('if x:\n  \t a\n', (2, 3), 'tab in indentation: indent with spaces only'),
    # strings
    ('x = "abc\ny = 1\n', (1, 5), 'unclosed string literal'),
    ("x = $$'abc'$\n", (1, 5), 'unclosed string literal'),
    ('x = 1 + "a" + "\\q"\n', (1, 16), "invalid escape '\\q' (write '\\\\' for a backslash)"),
    ('x = "\\x4g"\n', (1, 6), "'\\x' must be followed by 2 hex digits"),
    ('x = "a } b"\n', (1, 8), "a lone '}' in a string: write '}}' for a brace"),
    ('x = "a {} b"\n', (1, 8), "empty interpolation '{}' (write '{{}}' for braces)"),
    ('x = "a { } b"\n', (1, 8), "empty interpolation '{}' (write '{{}}' for braces)"),
    ('x = "a {x\n} b"\n', (1, 8),
     "unclosed interpolation: an interpolation cannot contain a line break, so close "
     "'{' with '}' on the same line (write '{{' for a brace)"),
    ('x = "{1 + }"\n', (1, 11), 'incomplete expression in interpolation'),
    ('x = "{a b}"\n', (1, 9), "unexpected name 'b'"),
    # removed and foreign forms
    ('x = 1; y = 2\n', (1, 6), "';' is not an operator in Ostinato; put statements on separate lines"),
    ('x := 2\n', (1, 3), "':=' is not supported; use '='"),
    ('for a -> b in c:\n    x\n', (1, 7), "'a -> b' loop heads are not supported"),
    ('if a:\n    b\nelif c:\n    d\n', (3, 6), "'elif' is not Ostinato; write 'else if'"),
    ('x = 1 # no\n', (1, 7), "'#' is only valid in '#[' (comments start with '--'; '#' lines "
                             "are allowed only at the top of the file)"),
    # types and blurbs
    ('type A:\n    foo x\n', (2, 5), "unknown field mode 'foo'; use val, var or one"),
    ('type A:\n    var a\n    x = 1\n', (3, 7),
     "a field line starts with its mode: 'val x', 'var x' or 'one x'"),
    ('x = 1\n{| late |}\ny = 2\n', (2, 1), "misplaced blurb: a blurb '{| ... |}' must come right "
                                           "before a def or type, or first in the file for the module"),
    ('{| a |}\n{| b |}\nx = 1\n', (2, 1), "misplaced blurb: a blurb '{| ... |}' must come right "
                                          "before a def or type, or first in the file for the module"),
    ('def f():\n    x\n    {| g |}\ndef g():\n    y\n', (3, 5),
     "misplaced blurb: a blurb '{| ... |}' must come right before a def or type, or first in "
     "the file for the module"),
    ('x = [{| b |}]\n', (1, 6), "misplaced blurb: a blurb '{| ... |}' must come right before a "
                                "def or type, or first in the file for the module"),
    ('{| a |} def f():\n    x\n', (1, 9), 'a blurb must stand on its own lines, before a def or type'),
    ('{| a\n  b\n |}\ndef f():\n    x\n', (2, 3),
     "each line of a blurb after the first must start with '|' (after spaces)"),
    ('{| a\n', (1, 1), "unclosed blurb '{|'"),
    # assignments
    ('if = 3\n', (1, 1), "cannot assign to the reserved word 'if'"),
    ('for = 3\n', (1, 1), "cannot assign to the reserved word 'for'"),
    ('until = 3\n', (1, 1), "'until' is a reserved word and cannot be used as a name"),
    ('x = y = for = 3\n', (1, 9), "unexpected 'for'"),
    ('true = 3\n', (1, 1), "cannot assign to 'true'"),
    ('x = none = 3\n', (1, 5), "cannot assign to 'none'"),
    ("'a' = 3\n", (1, 1), 'cannot assign to a literal'),
    ('f(x) = 3\n', (1, 1), "cannot assign to this expression: the left side of '=' must be a "
                          "name, a field (x.name) or an item (x[i])"),
    ('print((1 = 2))\n', (1, 8), 'cannot assign to a literal'),
    ('def if():\n    x\n', (1, 5), "'if' is a reserved word and cannot be used as a name"),
    # expressions
    ('f = <x: x >= 2>\n', (1, 11), "'>=' cannot stand at the top level of a lambda body (its '>' "
                                   "would close the lambda): write <x: (x >= 2)>"),
    ('f = <x: x\n', (1, 10), "unclosed lambda: a lambda must end with '>' before the end of its line"),
    ('f(<x: x)\n', (1, 8), "unclosed lambda: expected '>' before ')'"),
    ('f(a = 1, 2)\n', (1, 10), 'positional argument after a keyword argument'),
    ('g{a = 1, b}\n', (1, 10), 'positional argument after a keyword argument'),
    ('x = [1, \'a\': 2]\n', (1, 12), "cannot mix map entries and list items in one '[...]'"),
    ('x = [1, a = 2]\n', (1, 11), "cannot mix map entries and list items in one '[...]'"),
    ('x = [a = 1, 2]\n', (1, 14), "cannot mix map entries and list items in one '[...]'"),
    ('x = [a: 1, 2, 3]\n', (1, 13), "cannot mix map entries and list items in one '[...]'"),
    ('x = [a.b = 1]\n', (1, 10), "unexpected '=' (to compare, use '==')"),
    ('x = [y for y in z: 1]\n', (1, 18), "unexpected ':'; expected ']' or 'if'"),
    ('x = a \\\n  b\n', (1, 8), "'\\' at the end of a line: Ostinato has no line continuation "
                               "('\\' is the default operator); use brackets to continue an expression"),
    ('x = 1 +   -- more\n', (1, 8), 'the line ends before the expression is complete'),
    ('x = (1 + 2\n', (1, 5), "'(' was never closed"),
    ('x = (1 + 2]\n', (1, 11), "']' does not match '(' on line 1"),
    ('x = 1)\n', (1, 6), "unmatched ')'"),
    ('x = 1 (| open\n', (1, 7), "unclosed block comment '(|'"),
    ('(| c |) x = 1\n', (1, 9), "a block comment that starts a line makes a comment line: only "
                                "'--' comments may follow its '|)'"),
    ('if x = 1:\n    y\n', (1, 6), "unexpected '=' (to compare, use '==')"),
    ('x not y\n', (1, 3), "unexpected 'not' (after an operand only 'not in' can follow)"),
    ('x = 1abc\n', (1, 5), 'invalid number literal'),
    ('x = 1 2\n', (1, 7), 'unexpected number 2'),
    ('def f(a, a):\n    x\n', (1, 10), "duplicate parameter 'a'"),
    ('else:\n    x\n', (1, 1), "'else' without an 'if' block right before it"),
    # spawn
    ('spawn x\n', (1, 7), "'spawn' must be followed by a call such as 'spawn f(x)', or by ':' "
                         "and a block"),
    ('spawn f(x) + 1\n', (1, 7), "'spawn' must be followed by a call such as 'spawn f(x)', or by "
                                "':' and a block"),
    ('spawn\n', (1, 6), "expected a call or ':' after 'spawn'"),
    ('t = spawn f(x)\n', (1, 5), "'spawn f(x)' is a statement; to get the task as a value write "
                                'spawn(f, x)'),
])
def test_syntax_errors(src, where, message):
    assert error(src) == where + (message,)


def test_unclosed_bracket_hint():
    assert error('x = f(a\ny = 2\n') == (2, 1, "unexpected name 'y' (is the '(' on line 1 closed?)")
    assert error('f(a,\n  b c)\n') == (2, 5, "unexpected name 'c'")


def test_source_forms():
    assert sx(body(b'x = "\xc3\xa9"\r\n')[0]) == "Assign([x], '\u00e9')"
    assert sx(body('\ufeffx = 1\n')[0]) == 'Assign([x], 1)'
    with pytest.raises(OstSyntaxError) as info:
        parse(b'x = 1\ny = "\xff"\n', 'bad.ost')
    assert (info.value.line, info.value.col, info.value.message) == \
        (2, 6, 'the source is not valid UTF-8')
    assert error('x = 1\ry\n') == (1, 6, 'unexpected carriage return')
    assert sx(body('x =\t1 \t+ 2\n')[0]) == "Assign([x], BinOp('+', 1, 2))"


def test_error_format():
    with pytest.raises(OstSyntaxError) as info:
        parse('x = 1\n    if 1 < 2\n', 'prog.ost')
    assert info.value.format() == ('prog.ost:2:5: syntax error: unexpected indent\n'
                                   '    if 1 < 2\n'
                                   '    ^')
    with pytest.raises(OstSyntaxError) as info:
        parse('print(1)\nif 1 < 2   -- no colon\n    x\n', 'p.ost')
    e = info.value
    assert (e.filename, e.line, e.col, e.source_line) == ('p.ost', 2, 9, 'if 1 < 2   -- no colon')
    assert str(e) == "p.ost:2:9: syntax error: expected ':' at the end of the if header"
    assert e.format().splitlines()[2] == '        ^'


def test_the_source_line_shown_holds_no_control_character():
    # A program file with terminal escape codes retitled the operator's
    # terminal when its syntax error was shown (issue 29 rerun).  Each is
    # shown as one '?', so the caret stays under its column.
    with pytest.raises(OstSyntaxError) as info:
        parse('x = 1\ny = \x1b]0;pwned\x07 2\n', 'p.ost')
    assert info.value.format().splitlines()[1:] == ['y = ?]0;pwned? 2', '    ^']
    with pytest.raises(OstSyntaxError) as info:
        parse('y = \x9b31m (\n', 'p.ost')
    assert '\x9b' not in info.value.format()


# ------------------------------------------------------------------ corpus

CORPUS_FILES = sorted(glob.glob(os.path.join(CORPUS, '*.ost')))
EXPECTED_ERRORS = {'t24_syntax_error.ost': (3, 9), 't25_removed_syntax.ost': (4, 3)}


def _check_tree(node, lines: int) -> None:
    """Only AST nodes, plain values, lists and tuples; positions in range."""
    if isinstance(node, (list, tuple)):
        for item in node:
            _check_tree(item, lines)
        return
    if isinstance(node, ast.Node):
        assert type(node).__module__ == ast.__name__
        assert 1 <= node.line <= lines and node.col >= 1, node
        for f in dataclasses.fields(node):
            _check_tree(getattr(node, f.name), lines)
        return
    assert node is None or type(node) in (str, int, float, bool), repr(node)


@pytest.mark.parametrize('path', CORPUS_FILES, ids=os.path.basename)
def test_corpus(path):
    name = os.path.basename(path)
    with open(path, encoding='utf-8') as f:
        source = f.read()
    if name not in EXPECTED_ERRORS:
        module = parse(source, name)
        assert module.filename == name and module.body
        _check_tree(module, source.count('\n') + 1)
        return
    with pytest.raises(OstSyntaxError) as info:
        parse(source, name)
    assert (info.value.line, info.value.col) == EXPECTED_ERRORS[name]
    with open(path[:-4] + '.err', encoding='utf-8') as f:
        assert info.value.format().startswith(f.read().strip())


def test_corpus_is_there():
    assert len(CORPUS_FILES) >= 25


def test_grammar_path():
    path = grammar_path()
    assert path.is_file() and path.name == 'ostinato.lark'


# ---------------------------------------------------------------- fuzzing

def _sources():
    out = []
    for path in CORPUS_FILES:
        with open(path, encoding='utf-8') as f:
            out.append(f.read())
    return out


SOURCES = _sources()
PIECES = list('()[]{}<>"\'$\\:=,.-+*/^?!#|; \n\t_aZ09') + [
    '(|', '|)', '{|', '|}', '"{', '}"', '--', '...', '    ', 'if ', 'else', ' then ',
    'spawn', 'not ', ' in ', 'def ', 'type ', 'for ', 'x', '\r\n', 'é', '\\x4']


def _mutate(rnd: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rnd.randint(1, 5)):
        op = rnd.random()
        i = rnd.randrange(len(chars) + 1)
        if op < 0.3 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op < 0.6:
            chars.insert(i, rnd.choice(PIECES))
        elif op < 0.75 and chars:
            chars[i:i] = chars[i:i + rnd.randint(1, 30)]
        else:
            lines = ''.join(chars).split('\n')
            k = rnd.randrange(len(lines))
            if rnd.random() < 0.5:
                del lines[k]
            else:
                lines.insert(k, rnd.choice(lines))
            chars = list('\n'.join(lines))
    return ''.join(chars)


def _parse_or_syntax_error(source: str) -> None:
    try:
        parse(source, 'fuzz.ost')
    except OstSyntaxError as e:
        assert 'internal parser error' not in e.message, e.format()
        assert e.line >= 1 and e.col >= 1
        e.format()


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.integers(0, len(SOURCES) - 1), st.randoms(use_true_random=False))
def test_fuzz_mutated_corpus(which, rnd):
    _parse_or_syntax_error(_mutate(rnd, SOURCES[which]))


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_fuzz_random_pieces(pieces):
    _parse_or_syntax_error(''.join(pieces))


@settings(max_examples=600, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.text(max_size=80))
def test_fuzz_random_text(text):
    _parse_or_syntax_error(text)


def test_deep_nesting_is_a_syntax_error_not_a_crash():
    parse('x = ' + '(' * 500 + '1' + ')' * 500 + '\n', 'deep.ost')
    nested = '1'
    for _ in range(300):
        nested = '"{' + nested + '}"'
    _parse_or_syntax_error('x = ' + nested + '\n')
