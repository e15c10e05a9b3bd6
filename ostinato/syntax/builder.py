"""From grammar rules to AST nodes.

`Builder` is given to Lark as the parser's `transformer`, so each method runs
when the LALR parser reduces the rule (or alias) of the same name in
grammar/ostinato.lark, and no parse tree is ever built.  Running during the
parse also means the checks made here (assignment targets, argument order,
field modes, `spawn CALL`) fail in source order, together with the parser's
own errors.

The builder keeps no state between calls: the same instance serves every
parse, also the nested parses of interpolations.  Positions come from the
tokens (Lark's line/column) and from child nodes; a node's position is the
first character of its source text.
"""
from __future__ import annotations

from typing import List, Optional

from lark import Token, Transformer

from . import ast
from .errors import SyntaxProblem


def _fail(message: str, at) -> None:
    line, col = _pos(at)
    raise SyntaxProblem(message, line, col)


def _pos(x):
    if isinstance(x, Token):
        return x.line, x.column
    return x.line, x.col


_LITERAL_NAMES = {None: 'none', True: 'true', False: 'false'}


def _check_target(target: ast.Node) -> None:
    if isinstance(target, (ast.Name, ast.Field, ast.Index)):
        return
    if isinstance(target, ast.Const):
        if target.value is None or isinstance(target.value, bool):
            _fail("cannot assign to '%s'" % _LITERAL_NAMES[target.value], target)
        _fail('cannot assign to a literal', target)
    if isinstance(target, ast.Str):
        _fail('cannot assign to a literal', target)
    _fail("cannot assign to this expression: the left side of '=' must be a "
          "name, a field (x.name) or an item (x[i])", target)


def _check_distinct(names: List[Token], what: str) -> None:
    seen = set()
    for tok in names:
        if str(tok) in seen:
            _fail("duplicate %s '%s'" % (what, tok), tok)
        seen.add(str(tok))


def _split_args(args: Optional[list]):
    """Positional and keyword arguments; a positional one may not follow a
    keyword one (docs/language.md §8.5)."""
    positional, keywords = [], []
    for arg in args or ():
        if arg[0] == 'kw':
            keywords.append((str(arg[1]), arg[2]))
        elif keywords:
            _fail('positional argument after a keyword argument', arg[1])
        else:
            positional.append(arg[1])
    return positional, keywords


def _attach_blurbs(stmts: list, module: bool):
    """Give each blurb to the def or type right after it; at the top of a
    module a blurb not followed by one is the module's (docs/language.md §13.1).
    The scanner has already rejected blurbs elsewhere; this is the check of
    the block structure it cannot see."""
    body = []
    module_blurb = None
    for k, stmt in enumerate(stmts):
        if not isinstance(stmt, ast.Blurb):
            body.append(stmt)
            continue
        nxt = stmts[k + 1] if k + 1 < len(stmts) else None
        if isinstance(nxt, (ast.Def, ast.TypeDef)):
            nxt.blurb = stmt
        elif module and k == 0:
            module_blurb = stmt
        else:
            _fail("misplaced blurb: a blurb '{| ... |}' must come right before "
                  "a def or type, or first in the file for the module", stmt)
    return body, module_blurb


class Builder(Transformer):
    """Callbacks named after the grammar's rules and aliases."""

    # ------------------------------------------------------------ top level

    def file(self, stmts):
        body, blurb = _attach_blurbs(stmts, module=True)
        return ast.Module(line=1, col=1, body=body, blurb=blurb)

    def interp(self, children):
        return children[0]

    def block(self, stmts):
        return _attach_blurbs(stmts, module=False)[0]

    def blurb_stmt(self, children):
        return children[0].node

    # ----------------------------------------------------- simple statements

    def expr_stmt(self, children):
        if len(children) == 1:
            expr = children[0]
            return ast.ExprStmt(line=expr.line, col=expr.col, expr=expr)
        *targets, value = children
        for target in targets:
            _check_target(target)
        first = targets[0]
        return ast.Assign(line=first.line, col=first.col, targets=targets, value=value)

    def return_stmt(self, children):
        tok, value = children
        return ast.Return(line=tok.line, col=tok.column, value=value)

    def break_stmt(self, children):
        return self._jump(ast.Break, *children)

    def continue_stmt(self, children):
        return self._jump(ast.Continue, *children)

    @staticmethod
    def _jump(cls, tok, what):
        label = kind = None
        if what is not None:
            if what.type == 'NAME':
                label = str(what)
            else:
                kind = str(what)         # `break for` / `break while`
        return cls(line=tok.line, col=tok.column, label=label, kind=kind)

    def import_stmt(self, children):
        tok, *names = children
        return ast.Import(line=tok.line, col=tok.column, names=[str(n) for n in names])

    def from_import(self, children):
        tok, module, _import, *names = children
        return ast.FromImport(line=tok.line, col=tok.column, module=str(module),
                              names=[str(n) for n in names])

    def wait_stmt(self, children):
        tok, kind, cond = children
        return ast.Wait(line=tok.line, col=tok.column, kind=str(kind), cond=cond)

    def spawn_call(self, children):
        tok, expr = children
        if not isinstance(expr, ast.Call):
            _fail("'spawn' must be followed by a call such as 'spawn f(x)', "
                  "or by ':' and a block", expr)
        return ast.SpawnCall(line=tok.line, col=tok.column, call=expr)

    def spawn_block(self, children):
        tok, body = children
        return ast.SpawnBlock(line=tok.line, col=tok.column, body=body)

    # --------------------------------------------------- compound statements

    def if_stmt(self, children):
        tok, cond, body, *elses, else_body = children
        return ast.If(line=tok.line, col=tok.column,
                      branches=[(cond, body)] + elses, else_body=else_body)

    def else_if(self, children):
        _if, cond, body = children
        return (cond, body)

    def while_stmt(self, children):
        tok, cond, label, body = children
        return ast.While(line=tok.line, col=tok.column, cond=cond,
                         label=None if label is None else str(label), body=body)

    def for_stmt(self, children):
        tok, heads, label, body = children
        return ast.For(line=tok.line, col=tok.column, heads=heads,
                       label=None if label is None else str(label), body=body)

    def heads(self, heads):
        return heads

    def head(self, children):
        first, second, _in, source = children
        if second is None:
            index, name = None, str(first)
        else:
            index, name = str(first), str(second)
        return ast.Head(line=first.line, col=first.column, index=index,
                        name=name, source=source)

    def def_stmt(self, children):
        tok, name, params, body = children
        params = params or []
        _check_distinct([p[0] for p in params], 'parameter')
        return ast.Def(line=tok.line, col=tok.column, name=str(name),
                       params=[ast.Param(line=t.line, col=t.column, name=str(t),
                                         default=d) for t, d in params],
                       body=body)

    def params(self, params):
        return params

    def param(self, children):
        return tuple(children)

    def type_stmt(self, children):
        tok, name, supers = children[:3]
        fields = children[3] if len(children) > 3 else []
        return ast.TypeDef(line=tok.line, col=tok.column, name=str(name),
                           supers=supers, fields=fields)

    def supers(self, children):
        return children[1:]             # after the `in`

    def type_fields(self, lines):
        return [decl for line in lines for decl in line]

    def field_line(self, children):
        mode, *decls = children
        if str(mode) not in ('val', 'var', 'one'):
            _fail("unknown field mode '%s'; use val, var or one" % mode, mode)
        return [ast.FieldDecl(line=t.line, col=t.column, mode=str(mode),
                              name=str(t), default=d) for t, d in decls]

    def field_decl(self, children):
        return tuple(children)

    def try_stmt(self, children):
        tok, body, name, handler = children
        return ast.Try(line=tok.line, col=tok.column, body=body,
                       name=None if name is None else str(name), handler=handler)

    # ----------------------------------------------------------- operators

    def if_expr(self, children):
        tok, cond, then, else_ = children
        return ast.IfExpr(line=tok.line, col=tok.column, cond=cond, then=then,
                          else_=else_)

    def or_op(self, children):
        left, right = children
        return ast.Or(line=left.line, col=left.col, left=left, right=right)

    def and_op(self, children):
        left, right = children
        return ast.And(line=left.line, col=left.col, left=left, right=right)

    def not_op(self, children):
        tok, operand = children
        return ast.Unary(line=tok.line, col=tok.column, op='not', operand=operand)

    def compare(self, children):
        first = children[0]
        rest = []
        for k in range(1, len(children), 2):
            op = children[k]
            rest.append(('not in' if op.type == 'NOT_IN' else str(op), children[k + 1]))
        return ast.Compare(line=first.line, col=first.col, first=first, rest=rest)

    def span(self, children):
        start, stop = children
        return ast.SpanExpr(line=start.line, col=start.col, start=start, stop=stop)

    def span_from(self, children):
        start, = children
        return ast.SpanExpr(line=start.line, col=start.col, start=start, stop=None)

    def span_to(self, children):
        tok, stop = children
        return ast.SpanExpr(line=tok.line, col=tok.column, start=None, stop=stop)

    def binop(self, children):
        left, op, right = children
        return ast.BinOp(line=left.line, col=left.col, op=str(op), left=left, right=right)

    def negate(self, children):
        tok, operand = children
        return ast.Unary(line=tok.line, col=tok.column, op='-', operand=operand)

    def default_op(self, children):
        left, right = children
        return ast.Default(line=left.line, col=left.col, left=left, right=right)

    # ------------------------------------------------------------- postfix

    def call(self, children):
        func, args = children
        positional, keywords = _split_args(args)
        return ast.Call(line=func.line, col=func.col, func=func, args=positional,
                        kwargs=keywords)

    def curry(self, children):
        func, args = children
        positional, keywords = _split_args(args)
        return ast.Curry(line=func.line, col=func.col, func=func, args=positional,
                         kwargs=keywords)

    def index(self, children):
        obj, idx = children
        return ast.Index(line=obj.line, col=obj.col, obj=obj, index=idx)

    def attribute(self, children):
        obj, name = children
        return ast.Field(line=obj.line, col=obj.col, obj=obj, name=str(name))

    def known(self, children):
        expr, = children
        return ast.Known(line=expr.line, col=expr.col, expr=expr)

    def bang(self, children):
        expr, = children
        return ast.Bang(line=expr.line, col=expr.col, expr=expr)

    def args(self, args):
        return args

    def pos_arg(self, children):
        return ('pos', children[0])

    def kw_arg(self, children):
        name, value = children
        return ('kw', name, value)

    # --------------------------------------------------------------- atoms

    def number(self, children):
        tok, = children
        text = str(tok)
        try:
            if '.' in text or 'e' in text or 'E' in text:
                value = float(text)
            else:
                value = int(text)
        except ValueError:
            _fail('number literal too long', tok)
        return ast.Const(line=tok.line, col=tok.column, value=value)

    def string(self, children):
        return children[0].node

    def const_none(self, children):
        return self._const(children[0], None)

    def const_true(self, children):
        return self._const(children[0], True)

    def const_false(self, children):
        return self._const(children[0], False)

    @staticmethod
    def _const(tok, value):
        return ast.Const(line=tok.line, col=tok.column, value=value)

    def name_ref(self, children):
        tok, = children
        return ast.Name(line=tok.line, col=tok.column, name=str(tok))

    def group(self, children):
        return children[0]              # parentheses leave no node

    def assign_expr(self, children):
        target, value = children
        _check_target(target)
        return ast.AssignExpr(line=target.line, col=target.col, target=target,
                              value=value)

    def empty_map(self, children):
        tok, = children
        return ast.MapLit(line=tok.line, col=tok.column, entries=[])

    def list_lit(self, children):
        tok, items = children
        return ast.ListLit(line=tok.line, col=tok.column, items=items or [])

    def map_lit(self, children):
        tok, entries = children
        return ast.MapLit(line=tok.line, col=tok.column, entries=entries)

    def list_comp(self, children):
        tok, elt, (heads, cond) = children
        return ast.Comprehension(line=tok.line, col=tok.column, kind='list',
                                 elt=elt, key=None, heads=heads, cond=cond)

    def map_comp(self, children):
        tok, key, elt, (heads, cond) = children
        return ast.Comprehension(line=tok.line, col=tok.column, kind='map',
                                 elt=elt, key=key, heads=heads, cond=cond)

    def tuple_lit(self, children):
        tok, items = children
        return ast.TupleLit(line=tok.line, col=tok.column, items=items or [])

    def set_lit(self, children):
        tok, items = children
        return ast.SetLit(line=tok.line, col=tok.column, items=items or [])

    def set_comp(self, children):
        tok, elt, (heads, cond) = children
        return ast.Comprehension(line=tok.line, col=tok.column, kind='set',
                                 elt=elt, key=None, heads=heads, cond=cond)

    def lambda_expr(self, children):
        tok, params, body = children
        return ast.Lambda(line=tok.line, col=tok.column, params=params or [], body=body)

    def lambda_params(self, names):
        _check_distinct(names, 'parameter')
        return [str(n) for n in names]

    def entries(self, entries):
        return entries

    def pair(self, children):
        key, value = children
        return (key, value)

    def named(self, children):
        name, value = children      # `name = v` is the entry 'name': v
        return (ast.Const(line=name.line, col=name.column, value=str(name)), value)

    def exprs(self, items):
        return items

    def comp_for(self, children):
        _for, heads, cond = children
        return (heads, cond)
