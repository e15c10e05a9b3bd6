"""The Ostinato abstract syntax tree.

Lark's parse tree never leaves `syntax/`: the parser turns it into these
dataclasses, and the compiler sees only them.  Every node carries the
`line` and `col` (both from 1, counting code points) of the first character
of its source text, because runtime errors are reported at the start of the
innermost failing expression (docs/language.md §14).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple, Union


@dataclass
class Node:
    line: int
    col: int


# ---------------------------------------------------------------- expressions

@dataclass
class Const(Node):
    """A literal: int, float, str (no interpolation), None, True, False."""
    value: Any


@dataclass
class Interp(Node):
    """`{expr}` inside a string literal.  `indent` is the run of spaces/tabs W
    when the interpolation is alone on its line (docs/language.md §3.4), else None."""
    expr: Node
    indent: Optional[str] = None


@dataclass
class Str(Node):
    """An interpolated string: the parts are plain `str` text or `Interp`."""
    parts: List[Union[str, Interp]]


@dataclass
class Name(Node):
    """A variable read; also `__goal__`, `__caller__`, `__parent__`."""
    name: str


@dataclass
class ListLit(Node):
    items: List[Node]


@dataclass
class TupleLit(Node):
    items: List[Node]


@dataclass
class MapLit(Node):
    """`[k: v, name = v]`; a `name = v` entry has key Const('name')."""
    entries: List[Tuple[Node, Node]]


@dataclass
class SetLit(Node):
    items: List[Node]


@dataclass
class Head(Node):
    """One loop head `name in source` or `index:name in source`."""
    index: Optional[str]
    name: str
    source: Node


@dataclass
class Comprehension(Node):
    """kind is 'list', 'map' or 'set'; `key` is set only for 'map'."""
    kind: str
    elt: Node
    key: Optional[Node]
    heads: List[Head]
    cond: Optional[Node]


@dataclass
class Lambda(Node):
    params: List[str]
    body: Node


@dataclass
class Call(Node):
    func: Node
    args: List[Node]
    kwargs: List[Tuple[str, Node]]


@dataclass
class Curry(Node):
    func: Node
    args: List[Node]
    kwargs: List[Tuple[str, Node]]


@dataclass
class Index(Node):
    obj: Node
    index: Node


@dataclass
class Field(Node):
    obj: Node
    name: str


@dataclass
class Known(Node):
    """`x?`"""
    expr: Node


@dataclass
class Bang(Node):
    """`x!`: the value, or wait until it is known."""
    expr: Node


@dataclass
class Default(Node):
    """`a \\ b`"""
    left: Node
    right: Node


@dataclass
class BinOp(Node):
    """op is one of + - * / // % ^"""
    op: str
    left: Node
    right: Node


@dataclass
class Unary(Node):
    """op is '-' or 'not'"""
    op: str
    operand: Node


@dataclass
class Compare(Node):
    """A chain `first op1 e1 op2 e2 ...`; ops are == != < <= > >= in 'not in'."""
    first: Node
    rest: List[Tuple[str, Node]]


@dataclass
class And(Node):
    left: Node
    right: Node


@dataclass
class Or(Node):
    left: Node
    right: Node


@dataclass
class IfExpr(Node):
    cond: Node
    then: Node
    else_: Node


@dataclass
class SpanExpr(Node):
    """`a..b` (both), `a...` (stop None), `...b` (start None)."""
    start: Optional[Node]
    stop: Optional[Node]


@dataclass
class AssignExpr(Node):
    """`(target = value)`: assigns and gives the value."""
    target: Node
    value: Node


# ----------------------------------------------------------------- statements

@dataclass
class Blurb(Node):
    summary: Optional[str]
    details: Optional[str]


@dataclass
class ExprStmt(Node):
    expr: Node


@dataclass
class Assign(Node):
    """`t1 = t2 = value`; targets are Name, Field or Index nodes."""
    targets: List[Node]
    value: Node


@dataclass
class Return(Node):
    value: Optional[Node]


@dataclass
class Break(Node):
    """label: None (innermost loop), 'for', 'while' (innermost of that kind,
    marked by `kind`), or a loop label name."""
    label: Optional[str]
    kind: Optional[str] = None


@dataclass
class Continue(Node):
    label: Optional[str]
    kind: Optional[str] = None


@dataclass
class Import(Node):
    names: List[str]


@dataclass
class FromImport(Node):
    module: str
    names: List[str]


@dataclass
class Wait(Node):
    """`wait until cond` (kind 'until') or `wait while cond` (kind 'while')."""
    kind: str
    cond: Node


@dataclass
class SpawnCall(Node):
    call: Call


@dataclass
class SpawnBlock(Node):
    body: List[Node]


@dataclass
class If(Node):
    branches: List[Tuple[Node, List[Node]]]
    else_body: Optional[List[Node]]


@dataclass
class While(Node):
    cond: Node
    label: Optional[str]
    body: List[Node]


@dataclass
class For(Node):
    heads: List[Head]
    label: Optional[str]
    body: List[Node]


@dataclass
class Param(Node):
    name: str
    default: Optional[Node]


@dataclass
class Def(Node):
    name: str
    params: List[Param]
    body: List[Node]
    blurb: Optional[Blurb] = None


@dataclass
class FieldDecl(Node):
    mode: str          # 'val', 'var' or 'one'
    name: str
    default: Optional[Node]


@dataclass
class TypeDef(Node):
    name: str
    supers: Optional[List[Node]]   # None when there is no `in` list
    fields: List[FieldDecl]
    blurb: Optional[Blurb] = None


@dataclass
class Try(Node):
    body: List[Node]
    name: Optional[str]
    handler: List[Node]


@dataclass
class Module(Node):
    body: List[Node]
    blurb: Optional[Blurb]
    filename: str = ''
