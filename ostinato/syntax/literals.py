"""String literal and blurb decoding (docs/language.md §3 and §13.1).

The scanner finds where a string literal ends and hands over its body as
*atoms*, one per source character, each with its source offset:

    (TEXT, ch, offset)      a character of the literal's source text
    (BRACE, ch, offset)     a literal brace written `{{` or `}}`
    (INTERP, node, offset)  an interpolation `{...}`, already parsed; offset
                            is the `{`

Keeping offsets per character is what lets dedent work on the *source* text
(§3.3 step 1-3) while escapes processed afterwards (step 4) still report the
real column of a bad backslash.  The literal's value is built here: `Const`
for text without interpolations, else `Str` whose parts are text and `Interp`
nodes (with the re-indent prefix of §3.4 when the interpolation is alone on
its line).

Blurbs `{| ... |}` are read by `read_blurb` into summary and details.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Optional, Tuple

from . import ast
from .errors import SyntaxProblem

TEXT, BRACE, INTERP = 0, 1, 2

Where = Callable[[int], Tuple[int, int]]

_SIMPLE_ESCAPES = {
    '\\': '\\', "'": "'", '"': '"', 'a': '\a', 'b': '\b', 'f': '\f',
    'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '0': '\0',
    ' ': ' ',       # a space that dedent keeps
    '\n': '',       # backslash-line-break joins the lines
}
_HEX_ESCAPES = {'x': 2, 'u': 4, 'U': 8}
_HEX_DIGITS = frozenset('0123456789abcdefABCDEF')


def decode_literal(atoms: list, raw: bool, start: int, where: Where) -> ast.Node:
    """The value of a string literal starting at source offset `start`."""
    lines, breaks = _split_lines(atoms)
    _dedent(lines)
    alone = _lone_interpolations(lines)

    seq = list(lines[0])
    for brk, line in zip(breaks, lines[1:]):
        seq.append(brk)
        seq.extend(line)

    parts: List[Any] = []
    buf: List[str] = []
    i = 0
    while i < len(seq):
        kind, value, off = seq[i]
        if kind == INTERP:
            if buf:
                parts.append(''.join(buf))
                buf = []
            line, col = where(off)
            parts.append(ast.Interp(line=line, col=col, expr=value,
                                    indent=alone.get(off)))
            i += 1
        elif kind == TEXT and value == '\\' and not raw:
            ch, i = _escape(seq, i, where)
            buf.append(ch)
        else:
            buf.append(value)
            i += 1
    if buf:
        parts.append(''.join(buf))

    line, col = where(start)
    if not any(isinstance(p, ast.Interp) for p in parts):
        return ast.Const(line=line, col=col, value=''.join(parts))
    return ast.Str(line=line, col=col, parts=parts)


def _split_lines(atoms: list):
    """Pieces between the literal's line breaks, and the line-break atoms."""
    lines: List[list] = [[]]
    breaks = []
    for atom in atoms:
        if atom[0] == TEXT and atom[1] == '\n':
            breaks.append(atom)
            lines.append([])
        else:
            lines[-1].append(atom)
    return lines, breaks


def _leading_blanks(line: list) -> str:
    out = []
    for kind, value, _ in line:
        if kind != TEXT or value not in ' \t':
            break
        out.append(value)
    return ''.join(out)


def _dedent(lines: List[list]) -> None:
    """§3.3: the first piece stays; empty pieces neither count nor change;
    the spaces/tabs common to all other pieces go."""
    counted = [_leading_blanks(line) for line in lines[1:] if line]
    if not counted:
        return
    width = len(os.path.commonprefix(counted))
    if width:
        for k in range(1, len(lines)):
            if lines[k]:
                lines[k] = lines[k][width:]


def _lone_interpolations(lines: List[list]) -> dict:
    """§3.4: offset of each interpolation alone on its line -> its prefix W.
    Interpolations on the first line are never re-indented."""
    alone = {}
    for line in lines[1:]:
        k = 0
        while k < len(line) and line[k][0] == TEXT and line[k][1] in ' \t':
            k += 1
        if k == len(line) - 1 and line[k][0] == INTERP:
            alone[line[k][2]] = ''.join(a[1] for a in line[:k])
    return alone


def _escape(seq: list, i: int, where: Where):
    """Decode the escape whose backslash is seq[i]; return (text, next i)."""
    off = seq[i][2]
    nxt = seq[i + 1][1] if i + 1 < len(seq) and seq[i + 1][0] == TEXT else ''
    if nxt in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[nxt], i + 2
    if nxt in _HEX_ESCAPES:
        width = _HEX_ESCAPES[nxt]
        digits = []
        for atom in seq[i + 2:i + 2 + width]:
            if atom[0] != TEXT or atom[1] not in _HEX_DIGITS:
                break
            digits.append(atom[1])
        if len(digits) != width:
            raise SyntaxProblem("'\\%s' must be followed by %d hex digits"
                                % (nxt, width), *where(off))
        code = int(''.join(digits), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise SyntaxProblem("'\\%s%s' is not a valid code point"
                                % (nxt, ''.join(digits)), *where(off))
        return chr(code), i + 2 + width
    shown = nxt if nxt.isprintable() and nxt else repr(nxt)[1:-1]
    raise SyntaxProblem("invalid escape '\\%s' (write '\\\\' for a backslash)"
                        % shown, *where(off))


# --------------------------------------------------------------------- blurbs

def read_blurb(src: str, open_off: int, close_off: int, where: Where) -> ast.Blurb:
    """The blurb `{| ... |}` whose `{|` is at open_off and `|}` at close_off."""
    body = src[open_off + 2:close_off]
    raw_lines = body.split('\n')
    contents = [raw_lines[0]]
    off = open_off + 2 + len(raw_lines[0]) + 1
    for k, text in enumerate(raw_lines[1:], start=1):
        stripped = text.lstrip(' ')
        if stripped.startswith('|'):
            contents.append(stripped[1:])
        elif not stripped and k == len(raw_lines) - 1:
            contents.append('')        # the closing line: spaces, then `|}`
        else:
            bad = off + len(text) - len(stripped)
            raise SyntaxProblem("each line of a blurb after the first must "
                                "start with '|' (after spaces)", *where(bad))
        off += len(text) + 1
    contents = [c.rstrip(' \t') for c in contents]

    line, col = where(open_off)
    first = next((k for k, c in enumerate(contents) if c.strip()), None)
    if first is None:
        return ast.Blurb(line=line, col=col, summary=None, details=None)
    summary = contents[first].lstrip(' \t')
    rest = contents[first + 1:]
    while rest and not rest[0].strip():
        rest.pop(0)
    while rest and not rest[-1].strip():
        rest.pop()
    details: Optional[str] = None
    if rest:
        width = len(os.path.commonprefix(
            [_blank_prefix(c) for c in rest if c.strip()]))
        details = '\n'.join(c[width:] if c.strip() else '' for c in rest)
    return ast.Blurb(line=line, col=col, summary=summary, details=details)


def _blank_prefix(text: str) -> str:
    return text[:len(text) - len(text.lstrip(' \t'))]
