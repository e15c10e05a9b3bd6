"""Parsing Ostinato source into the AST, and explaining syntax errors.

The pieces: the hand-written `Scanner` makes tokens (lexer.py), Lark's LALR
parser reads them through `OstLexer` and the `OstIndenter` post-lexer using
grammar/ostinato.lark, and `Builder` turns each reduction into AST nodes
(builder.py).  The built parser is cached in the user's cache folder so that
start-up costs a file read instead of an LALR table construction.

Everything that goes wrong comes out of `parse` as an `OstSyntaxError` with a
real location.  A Lark `UnexpectedToken` is explained here: `_explain` looks
at the offending token, what the parser would have accepted and the tokens
before it, to name common slips (a missing ':', an unexpected indent, `elif`,
a reserved word used as a name, ...).
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Optional, Union

import lark
from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken

from . import ast
from .builder import Builder
from .errors import OstSyntaxError, SyntaxProblem
from .lexer import (KEYWORD_TOKEN_TYPES, TOKEN_TEXT, OstIndenter, OstLexer,
                    Scanner, TokenFeed)


def grammar_path() -> Path:
    """grammar/ostinato.lark: in the installed package (ostinato/grammar/)
    or, in a source checkout, at the top of the repository."""
    here = Path(__file__).resolve()
    installed = here.parents[1] / 'grammar' / 'ostinato.lark'
    if installed.is_file():
        return installed
    return here.parents[2] / 'grammar' / 'ostinato.lark'


# ----------------------------------------------------------- building Lark

_lark: Optional[Lark] = None


def _cache_file(grammar_text: str) -> Optional[str]:
    """Where to keep the built parser: a file named after everything the
    tables depend on, in the first cache folder we can write (None if none)."""
    key = hashlib.sha256((grammar_text + lark.__version__ + sys.version)
                         .encode('utf-8')).hexdigest()[:20]
    for folder in _cache_folders():
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return os.path.join(folder, 'parser-%s.lark-cache' % key)
    return None


def _cache_folders():
    base = os.environ.get('XDG_CACHE_HOME')
    if not base:
        home = os.path.expanduser('~')
        base = None if home.startswith('~') else os.path.join(home, '.cache')
    if base:
        yield os.path.join(base, 'ostinato')
    import tempfile                    # only when the user's cache is unusable
    try:
        user = str(os.getuid())
    except AttributeError:             # not on POSIX
        user = 'user'
    yield os.path.join(tempfile.gettempdir(), 'ostinato-cache-' + user)


def get_parser() -> Lark:
    """The Lark parser, built (or loaded from the cache) on first use."""
    global _lark
    if _lark is None:
        text = grammar_path().read_text(encoding='utf-8')
        options = dict(parser='lalr', lexer=OstLexer, postlex=OstIndenter(),
                       start=['file', 'interp'], maybe_placeholders=True,
                       transformer=Builder())
        cache = _cache_file(text)
        if cache:
            options['cache'] = cache
        _lark = Lark(text, **options)
    return _lark


# ----------------------------------------------------------------- parsing

def parse(source: Union[str, bytes], filename: str) -> ast.Module:
    """The AST of a whole source file; `filename` is what errors show.
    `source` is text, or the file's bytes (UTF-8, docs/language.md §2)."""
    if isinstance(source, (bytes, bytearray)):
        source = decode_source(bytes(source), filename)
    text = source.replace('\r\n', '\n')
    if text.startswith('\ufeff'):
        text = text[1:]
    session = _Session(text)
    try:
        _check_lines(text)
        module = session.parse_file()
        _check_nesting(module)
    except SyntaxProblem as problem:
        raise session.error(filename, problem.message, problem.line, problem.col) from None
    except RecursionError:
        line, col = session.last_position()
        raise session.error(filename, 'too deeply nested', line, col) from None
    except Exception as exc:           # a bug here must still be a syntax error
        line, col = session.last_position()
        raise session.error(filename, 'internal parser error (%s: %s)'
                            % (type(exc).__name__, exc), line, col) from None
    module.filename = filename
    return module


# A program is compiled by walking its tree recursively, and so are a few
# checks on it; CPython refuses a 10,000-term sum the same way ("too many
# nested parentheses", "maximum recursion depth exceeded during
# compilation").  Real code stays far below both limits; generated code that
# does not gets a syntax error that says what to change, not a crash.
MAX_NESTING = 500
MAX_LINE = 1_000_000


def _check_lines(text: str) -> None:
    """A line of more than MAX_LINE characters is refused before it is
    scanned (error messages quote the line, and nobody writes one)."""
    if len(text) <= MAX_LINE:
        return
    start = 0
    line = 1
    while True:
        end = text.find('\n', start)
        stop = len(text) if end < 0 else end
        if stop - start > MAX_LINE:
            raise SyntaxProblem('line %d is %d characters long, more than the %d allowed; '
                                'split it, or read long data from a file'
                                % (line, stop - start, MAX_LINE), line, MAX_LINE + 1)
        if end < 0:
            return
        start = end + 1
        line += 1


def _node_children(node):
    for value in vars(node).values():
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, (list, tuple)):
            todo = [value]
            while todo:
                for v in todo.pop():
                    if isinstance(v, ast.Node):
                        yield v
                    elif isinstance(v, (list, tuple)):
                        todo.append(v)


def _check_nesting(module: ast.Module) -> None:
    """Refuse a tree nested more than MAX_NESTING levels deep (expressions
    inside expressions, blocks inside blocks), found without recursion."""
    stack = [(module, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            raise SyntaxProblem('nested too deeply: more than %d levels of expressions and '
                                'blocks inside each other (a long chain of operators counts '
                                'one level per operator); split it into several statements '
                                'or functions' % MAX_NESTING, node.line, node.col)
        stack.extend((child, depth + 1) for child in _node_children(node))


def decode_source(data: bytes, filename: str) -> str:
    """Source bytes as text; bytes that are not UTF-8 are a syntax error at
    their line and column (docs/language.md §2)."""
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as exc:
        good = data[:exc.start].decode('utf-8')
        lines = good.split('\n')
        rest = data[exc.start:].split(b'\n', 1)[0].decode('utf-8', 'replace')
        raise OstSyntaxError(filename, len(lines), len(lines[-1]) + 1,
                             'the source is not valid UTF-8', lines[-1] + rest) from None


class _Session:
    """One call of `parse`: the scanner, and the token feeds of the file and
    of its interpolations (for locating errors)."""

    def __init__(self, text: str):
        self.text = text
        self.scanner = Scanner(text, self.parse_interp)
        self.feeds: list = []

    def parse_file(self) -> ast.Module:
        return self._run(self.scanner.tokens(), 'file', None)

    def parse_interp(self, tokens, close_line: int, close_col: int) -> ast.Node:
        return self._run(iter(tokens), 'interp', (close_line, close_col))

    def _run(self, tokens, start: str, end):
        feed = TokenFeed(tokens)
        self.feeds.append(feed)
        try:
            return get_parser().parse(feed, start=start)
        except UnexpectedToken as exc:
            stack = self.scanner.open_brackets if start == 'file' else None
            message, line, col = _explain(exc, feed.history, end, stack)
            raise SyntaxProblem(message, line, col) from None
        except UnexpectedInput:
            line, col = self.last_position()
            raise SyntaxProblem('unexpected input', line, col) from None
        finally:
            self.feeds.pop()

    def last_position(self):
        for feed in reversed(self.feeds):
            if feed.history:
                tok = feed.history[-1]
                return tok.line, tok.column
        return 1, 1

    def error(self, filename: str, message: str, line: int, col: int) -> OstSyntaxError:
        lines = self.text.split('\n')
        source_line = lines[line - 1] if 0 < line <= len(lines) else ''
        return OstSyntaxError(filename, line, col, message, source_line)


# ------------------------------------------------------- explaining errors

_HEADERS = {'IF': 'if', 'WHILE': 'while', 'FOR': 'for', 'DEF': 'def',
            'TYPE': 'type', 'TRY': 'try', '_CATCH': 'catch', '_ELSE': 'else'}

_LAYOUT = {'_NL': 'end of line', '_INDENT': 'indent', '_DEDENT': 'dedent',
           '$END': 'end of input'}


def _shown(type_: str) -> str:
    """How an expected token type is named in a message."""
    if type_ in TOKEN_TEXT:
        return "'%s'" % TOKEN_TEXT[type_]
    return {'NAME': 'a name', 'NUMBER': 'a number', 'STRING': 'a string',
            'BLURB': 'a blurb', '_NL': 'end of line'}.get(type_, type_)


def _describe(tok) -> str:
    """How the offending token is named in a message."""
    if tok.type in _LAYOUT:
        return _LAYOUT[tok.type]
    if tok.type == 'NAME':
        return "name '%s'" % tok
    if tok.type == 'NUMBER':
        return 'number %s' % tok
    if tok.type in ('STRING', 'BLURB'):
        return tok.type.lower()
    return "'%s'" % TOKEN_TEXT.get(tok.type, str(tok))


def _mixes_list_and_map(tok, expected: set, before: list,
                        open_brackets: Optional[list]) -> bool:
    """Is `tok` where a `[...]` that the first element made a list meets a
    map entry, or one made a map meets a list item?"""
    if tok.type in ('_COMMA', '_RSQB'):
        return expected == {'_COLON'}           # a map wanted `key: value`
    if tok.type not in ('_COLON', '_EQUAL') or not open_brackets:  # None or empty
        return False
    opener = open_brackets[-1][1]
    if opener.type != 'LSQB_LIST':
        return False
    start = next((k for k in range(len(before) - 1, -1, -1) if before[k] is opener), None)
    if start is None:
        return False
    inside = before[start + 1:]
    if any(t.type == 'FOR' for t in inside):    # a comprehension, not a list
        return False
    if tok.type == '_EQUAL':                    # `[1, name = 2]`
        return len(inside) >= 2 and inside[-1].type == 'NAME' and inside[-2].type == '_COMMA'
    return True


_CLOSER_FOR = {'_LPAR_GROUP': '_RPAR', '_LPAR_CALL': '_RPAR', 'LSQB_LIST': '_RSQB',
               '_LSQB_INDEX': '_RSQB', 'HASH_LSQB': '_RSQB', 'LBRACE_SET': '_RBRACE',
               '_LBRACE_CURRY': '_RBRACE'}


def _hint(expected: set, open_brackets=None) -> str:
    """'; expected A or B' when only a few tokens would do.  LALR shares
    states between bracket kinds, so closers other than the innermost open
    bracket's are left out."""
    if open_brackets is not None:
        inner = next((t for kind, t in reversed(open_brackets) if kind != '<'), None)
        keep = _CLOSER_FOR[inner.type] if inner is not None else None
        expected = {t for t in expected if t not in _CLOSER_FOR.values() or t == keep}
    shown = sorted({_shown(t) for t in expected if t not in ('_INDENT', '_DEDENT', '$END')})
    if not shown or len(shown) > 4:
        return ''
    if len(shown) == 1:
        return '; expected %s' % shown[0]
    return '; expected %s or %s' % (', '.join(shown[:-1]), shown[-1])


def _explain(exc: UnexpectedToken, history: list, interp_end,
             open_brackets: Optional[list]):
    """(message, line, col) for a token the parser could not accept;
    `open_brackets` are the scanner's brackets still open at that point
    (None for an interpolation)."""
    tok = exc.token
    kind = tok.type
    expected = set(exc.expected)

    # Layout tokens borrow the position of the _NL they come from: its start
    # is just after the line's last code character, its end the first
    # character of the next code line.
    if kind in ('_INDENT', '_DEDENT'):
        line, col = tok.end_line, tok.end_column
    elif kind == '$END' and interp_end is not None:
        line, col = interp_end
    else:
        line, col = tok.line, tok.column

    # The tokens read before the offending one, without the _NL that ended
    # the statement when the offence is what came after that line.
    before = history[:-1] if history and history[-1] is tok else list(history)
    if before and before[-1].type == '_NL' and kind in ('_INDENT', '_DEDENT', '$END'):
        before = before[:-1]
    prev = before[-1] if before else None
    stmt = next((t for t in reversed(before) if getattr(t, 'first', False)), None)
    first_on_line = getattr(tok, 'first', False)

    def at(t, message):
        return message, t.line, t.column

    def text(t):
        return TOKEN_TEXT.get(t.type, str(t))

    if stmt is not None and stmt.type == 'NAME' and str(stmt) == 'elif':
        return "'elif' is not Ostinato; write 'else if'", line, col
    if _mixes_list_and_map(tok, expected, before, open_brackets):
        return "cannot mix map entries and list items in one '[...]'", line, col
    if kind == '_EQUAL' and prev is not None and prev.type in KEYWORD_TOKEN_TYPES:
        return at(prev, "cannot assign to the reserved word '%s'" % text(prev))
    if first_on_line and expected <= {'NAME', '_DEDENT'}:
        return ("a type block holds only field lines such as "
                "'var name = default' (modes: val, var, one)"), line, col
    if (kind == '_EQUAL' and expected == {'NAME'} and prev is not None
            and getattr(prev, 'first', False)):
        return ("a field line starts with its mode: 'val %s', 'var %s' or "
                "'one %s'" % ((prev,) * 3)), line, col
    if kind in KEYWORD_TOKEN_TYPES and (
            ('NAME' in expected and 'NUMBER' not in expected)
            or (first_on_line and kind not in ('_ELSE', '_CATCH'))):
        return at(tok, "'%s' is a reserved word and cannot be used as a name" % text(tok))
    if kind == '_INDENT':
        if stmt is not None and stmt.type == 'TYPE':
            # `type T` alone is complete, so a field block after it means
            # the header's ':' is missing; point just after the header.
            return "expected ':' at the end of the type header", tok.line, tok.column
        return 'unexpected indent', line, col
    if '_INDENT' in expected:
        return "expected an indented block after ':'", line, col
    if expected == {'_NL'} and prev is not None and prev.type == '_COLON':
        return 'a block must start on the next line, indented', line, col
    if '_CATCH' in expected:
        return "expected 'catch' after the try block", line, col

    if kind == '_NL':
        if prev is not None and prev.type == 'SPAWN':
            return "expected a call or ':' after 'spawn'", line, col
        if '_COLON' in expected and stmt is not None and stmt.type in _HEADERS:
            header = _HEADERS[stmt.type]
            k = before.index(stmt)
            if stmt.type == '_ELSE' and k + 1 < len(before) and before[k + 1].type == 'IF':
                header = 'else if'
            return "expected ':' at the end of the %s header" % header, line, col
        if 'NAME' in expected:
            return 'the line ends before the expression is complete', line, col
        return 'unexpected end of line' + _hint(expected), line, col
    if kind == '$END':
        if interp_end is not None:
            return 'incomplete expression in interpolation', line, col
        return 'unexpected end of file' + _hint(expected), line, col
    if kind == '_DEDENT':
        return 'unexpected dedent' + _hint(expected), line, col

    if kind == '_ELSE' and first_on_line:
        return "'else' without an 'if' block right before it", line, col
    if kind == '_CATCH' and first_on_line:
        return "'catch' without a 'try' block right before it", line, col
    if kind == 'SPAWN':
        return ("'spawn f(x)' is a statement; to get the task as a value "
                "write spawn(f, x)"), line, col
    if kind == 'NOT':
        return "unexpected 'not' (after an operand only 'not in' can follow)", line, col
    if kind == '_EQUAL':
        return "unexpected '=' (to compare, use '==')", line, col
    # A bracket left open on an earlier line swallows the line breaks after
    # it, so the parser trips over a later line: name the likely cause.
    code_before = next((t for t in reversed(before) if t.type != '_NL'), None)
    starts_line = code_before is None or code_before.end_line < line
    opener = next((t for kind, t in reversed(open_brackets or ())
                   if kind != '<' and t is not tok and t.line < line), None)
    if opener is not None and starts_line:
        return ("unexpected %s (is the '%s' on line %d closed?)"
                % (_describe(tok), TOKEN_TEXT[opener.type], opener.line)), line, col
    return 'unexpected %s%s' % (_describe(tok), _hint(expected, open_brackets)), line, col
