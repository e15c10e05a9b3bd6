"""The Ostinato scanner: source text to the tokens the LALR parser reads.

Why hand-written (DESIGN.md §1 "Parsing notes"): a string literal is one
token whose end depends on `$` guards and on `{...}` interpolations that may
hold nested literals; block comments `(| |)` nest; and several tokens mean
different things depending on whether an operand or an operator comes next
(docs/language.md §20 notes).  None of that is regular, so the scanner walks the
source itself and gives each token its final type (see the table at the top
of grammar/ostinato.lark).

The scanner owns everything about lines (docs/language.md §2): the `#` header,
blank and comment lines, tabs in indentation, a `\\` ending a line, lambdas
left open at a line end, bracket balance, and where blurbs may stand.  It ends
each logical line with an `_NL` token whose text is a line break plus the next
code line's indentation and whose position is just after the line's last code
character (where "the line ends too early" errors point).  `OstIndenter`, the
Lark post-lexer, turns those into `_INDENT`/`_DEDENT` and drops the `_NL`s
inside brackets.

Interpolations are scanned and parsed as soon as their literal is met, so
errors come out in source order; `Scanner` gets the parse function from
parser.py.  String tokens carry their finished AST node in `.node`, blurb
tokens their `Blurb`.
"""
from __future__ import annotations

import bisect
import copy
import re
from typing import Any, Callable, Iterator, List, NoReturn, Optional

from lark import Token
from lark.indenter import Indenter
from lark.lexer import Lexer

from .errors import SyntaxProblem
from .literals import BRACE, INTERP, TEXT, decode_literal, read_blurb

RESERVED = frozenset('''
    none true false def return if else then while for in as break continue
    wait until spawn type import from not and or try catch
'''.split())

# Reserved words whose token type does not depend on position.
_KEYWORD_TYPES = {
    'none': 'NONE', 'true': 'TRUE', 'false': 'FALSE', 'def': 'DEF',
    'return': 'RETURN', 'else': '_ELSE', 'then': '_THEN', 'while': 'WHILE',
    'for': 'FOR', 'in': 'IN', 'as': '_AS', 'break': 'BREAK',
    'continue': 'CONTINUE', 'wait': 'WAIT', 'until': 'UNTIL', 'type': 'TYPE',
    'import': 'IMPORT', 'from': 'FROM', 'and': '_AND', 'or': '_OR',
    'try': 'TRY', 'catch': '_CATCH',
}
KEYWORD_TOKEN_TYPES = frozenset(_KEYWORD_TYPES.values()) | {
    'IF', '_IF_FILTER', 'NOT', 'NOT_IN', 'SPAWN', 'SPAWN_FN'}

# After one of these an operator is expected; after anything else an operand.
_OPERAND_END = frozenset({
    'NAME', 'NUMBER', 'STRING', 'NONE', 'TRUE', 'FALSE', 'SPAWN_FN',
    '_RPAR', '_RSQB', '_RBRACE', '_QMARK', '_BANG', '_LAMBDA_CLOSE',
    '_DOTS_POST'})

# Operators whose type never depends on position, longest first per start.
_FIXED = {
    '//': 'DSLASH', '==': 'EQEQ', '!=': 'NE', '<=': 'LE', '..': '_DOTDOT',
    '+': 'PLUS', '*': 'STAR', '/': 'SLASH', '%': 'PERCENT', '^': 'CARET',
    '\\': '_BACKSLASH', '=': '_EQUAL', '?': '_QMARK', '!': '_BANG',
    ',': '_COMMA', ':': '_COLON', '.': '_DOT',
}

# How each token type is shown in error messages.
TOKEN_TEXT = {t: text for text, t in _FIXED.items()}
TOKEN_TEXT.update({t: word for word, t in _KEYWORD_TYPES.items()})
TOKEN_TEXT.update({
    'IF': 'if', '_IF_FILTER': 'if', 'NOT': 'not', 'NOT_IN': 'not in',
    'SPAWN': 'spawn', 'SPAWN_FN': 'spawn', 'NEG': '-', 'MINUS': '-',
    'DOTS_PRE': '...', '_DOTS_POST': '...', 'LT': '<', 'GT': '>', 'GE': '>=',
    'LAMBDA_OPEN': '<', '_LAMBDA_CLOSE': '>', '_LPAR_GROUP': '(',
    '_LPAR_CALL': '(', 'LSQB_LIST': '[', '_LSQB_INDEX': '[', 'HASH_LSQB': '#[',
    'LBRACE_SET': '{', '_LBRACE_CURRY': '{', '_RPAR': ')', '_RSQB': ']',
    '_RBRACE': '}'})

OPEN_TYPES = ('_LPAR_GROUP', '_LPAR_CALL', 'LSQB_LIST', '_LSQB_INDEX',
              'HASH_LSQB', 'LBRACE_SET', '_LBRACE_CURRY')
CLOSE_TYPES = ('_RPAR', '_RSQB', '_RBRACE')
_CLOSER_OF = {'(': ')', '[': ']', '{': '}'}
_CLOSE_TYPE = {')': '_RPAR', ']': '_RSQB', '}': '_RBRACE'}

_WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_NUMBER = re.compile(r'[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
_BLANKS = re.compile(r'[ \t]*')
_NOT_IN = re.compile(r'[ \t]+in(?![A-Za-z0-9_])')
_CALL_PAREN = re.compile(r'[ \t]*\(')
_COMMENT_MARK = re.compile(r'\(\||\|\)')
_WORD_CHARS = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
                        '0123456789_')
_DIGITS = frozenset('0123456789')


class OToken(Token):
    """A Lark token with what the parser module needs beyond Lark's fields:
    `node` (the AST of a string literal or blurb) and `first` (the token
    starts a logical line)."""
    __slots__ = ('node', 'first')
    node: Any
    first: bool
    start_pos: int          # always set: the scanner makes every token


class _CodeState:
    """What the scanner remembers between tokens of one token stream."""
    __slots__ = ('stack', 'prev', 'interp')

    def __init__(self, interp: bool):
        self.stack: List[tuple] = []    # open brackets and lambdas: (char, token)
        self.prev: Optional[Token] = None
        self.interp = interp

    @property
    def operand_expected(self) -> bool:
        return self.prev is None or self.prev.type not in _OPERAND_END

    def in_brackets(self) -> bool:
        return any(kind != '<' for kind, _ in self.stack)


class Scanner:
    """Tokens of one source text.  `parse_interp(tokens, close_line,
    close_col)` parses the tokens of an interpolation into an expression."""

    def __init__(self, text: str, parse_interp: Callable):
        self.src = text
        self.n = len(text)
        self.line_starts = [0] + [m.end() for m in re.finditer('\n', text)]
        self.parse_interp = parse_interp
        self.open_brackets: List[tuple] = []

    # ------------------------------------------------------------ positions

    def where(self, off: int):
        line = bisect.bisect_right(self.line_starts, off)
        return line, off - self.line_starts[line - 1] + 1

    def fail(self, message: str, off: int) -> NoReturn:
        raise SyntaxProblem(message, *self.where(off))

    def token(self, type_: str, value: str, start: int, end: int) -> OToken:
        line, col = self.where(start)
        end_line, end_col = self.where(end)
        tok = OToken(type_, value, start, line, col, end_line, end_col, end)
        tok.node = None
        tok.first = False
        return tok

    # ---------------------------------------------------------- file stream

    def tokens(self) -> Iterator[OToken]:
        """The token stream of a whole file."""
        src, n = self.src, self.n
        st = _CodeState(interp=False)
        self.open_brackets = st.stack    # for explaining errors
        off, indent = self._next_code_line(self._skip_header())
        if off < n and indent:
            self.fail('unexpected indent', off)
        line_first = True
        seen_token = False
        last_end = off                   # just after the last code character
        pending_blurb = None             # (blurb token, may describe the module)
        while True:
            off = self._skip_inline(off, n)
            if off >= n or src[off] == '\n':
                if st.in_brackets():
                    if off >= n:
                        self._fail_unclosed(st)
                    yield self.token('_NL', '\n', off, off + 1)
                    off += 1
                    continue
                if line_first:           # nothing but comments in the file
                    break
                if st.stack:
                    self.fail("unclosed lambda: a lambda must end with '>' "
                              "before the end of its line", last_end)
                if st.prev is not None and st.prev.type == '_BACKSLASH':   # the line ends too early
                    self.fail("'\\' at the end of a line: Ostinato has no line "
                              "continuation ('\\' is the default operator); "
                              "use brackets to continue an expression", last_end)
                next_off, indent = (self._next_code_line(off + 1) if off < n
                                    else (n, 0))
                # The _NL ends where the next code line starts; at the end of
                # the file there is none, so errors stay on the last line.
                nl = self.token('_NL', '\n' + ' ' * indent, last_end,
                                next_off if next_off < n else last_end)
                st.prev = nl
                line_first = True
                yield nl
                off = next_off
                if off >= n:
                    break
                continue

            tok, off = self._scan_token(off, st, n, line_first)
            tok.first = line_first
            if pending_blurb is not None:
                self._check_blurb_followed(pending_blurb, tok)
                pending_blurb = None
            if tok.type == 'BLURB':
                pending_blurb = (tok, not seen_token)
            line_first = False
            seen_token = True
            last_end = off
            st.prev = tok
            yield tok

        if pending_blurb is not None and not pending_blurb[1]:
            self._misplaced_blurb(pending_blurb[0])

    def _skip_header(self) -> int:
        off = 0
        while off < self.n and self.src[off] == '#':
            nl = self.src.find('\n', off)
            off = self.n if nl < 0 else nl + 1
        return off

    def _next_code_line(self, off: int):
        """Skip blank and comment lines from the start of a line; return the
        offset of the next code line's first character and its indentation."""
        src, n = self.src, self.n
        while off < n:
            first = _BLANKS.match(src, off).end()  # type: ignore[union-attr]  # matches ''
            if first >= n:
                return n, 0
            c = src[first]
            if c == '\n':
                off = first + 1
                continue
            if src.startswith('--', first):
                nl = src.find('\n', first)
                off = n if nl < 0 else nl + 1
                continue
            if src.startswith('(|', first):
                after = _BLANKS.match(  # type: ignore[union-attr]  # matches ''
                    src, self._skip_block_comment(first, n)).end()
                if after < n and src[after] != '\n' and not src.startswith('--', after):
                    self.fail("a block comment that starts a line makes a comment "
                              "line: only '--' comments may follow its '|)'", after)
                nl = src.find('\n', after)
                off = n if nl < 0 else nl + 1
                continue
            tab = src.find('\t', off, first)
            if tab >= 0:
                self.fail('tab in indentation: indent with spaces only', tab)
            return first, first - off
        return n, 0

    def _fail_unclosed(self, st: _CodeState):
        kind, tok = next(e for e in reversed(st.stack) if e[0] != '<')
        self.fail("'%s' was never closed" % ('#[' if tok.type == 'HASH_LSQB' else kind),
                  tok.start_pos)

    # -------------------------------------------------------------- blurbs

    def _check_blurb_followed(self, pending, tok: OToken):
        blurb, may_be_module = pending
        if tok.line == blurb.end_line:
            self.fail('a blurb must stand on its own lines, before a def or '
                      'type', tok.start_pos)
        if may_be_module:
            return                      # the module's, or the def's/type's after it
        if tok.type in ('DEF', 'TYPE') and tok.column >= blurb.column:
            return                      # a deeper def is the parser's "unexpected indent"
        self._misplaced_blurb(blurb)

    def _misplaced_blurb(self, blurb: OToken):
        self.fail("misplaced blurb: a blurb '{| ... |}' must come right before "
                  "a def or type, or first in the file for the module",
                  blurb.start_pos)

    # ------------------------------------------------------- interpolations

    def scan_interpolation(self, open_off: int):
        """Tokens of the interpolation whose `{` is at open_off, parsed;
        returns (expression node, offset of the closing `}`)."""
        src = self.src
        limit = src.find('\n', open_off)
        if limit < 0:
            limit = self.n
        st = _CodeState(interp=True)
        toks = []
        off = open_off + 1
        while True:
            off = self._skip_inline(off, limit)
            if off >= limit:
                self.fail("unclosed interpolation: an interpolation cannot contain "
                          "a line break, so close '{' with '}' on the same line "
                          "(write '{{' for a brace)", open_off)
            if src[off] == '}' and not st.stack:
                break
            tok, off = self._scan_token(off, st, limit, False)
            st.prev = tok
            toks.append(tok)
        if not toks:
            self.fail("empty interpolation '{}' (write '{{}}' for braces)", open_off)
        line, col = self.where(off)
        return self.parse_interp(toks, line, col), off

    # --------------------------------------------------------------- tokens

    def _skip_inline(self, off: int, limit: int) -> int:
        """Skip spaces, tabs and comments within a line (a block comment may
        run over line breaks: it is in-line whitespace)."""
        src = self.src
        while off < limit:
            c = src[off]
            if c == ' ' or c == '\t':
                off += 1
            elif c == '(' and src.startswith('(|', off):
                off = self._skip_block_comment(off, limit)
            elif c == '-' and src.startswith('--', off):
                nl = src.find('\n', off, limit)
                return limit if nl < 0 else nl
            else:
                break
        return off

    def _skip_block_comment(self, off: int, limit: int) -> int:
        depth = 0
        pos = off
        while True:
            m = _COMMENT_MARK.search(self.src, pos, limit)
            if m is None:
                self.fail("unclosed block comment '(|'", off)
            depth += 1 if m.group() == '(|' else -1
            pos = m.end()
            if depth == 0:
                return pos

    def _scan_token(self, off: int, st: _CodeState, limit: int, line_first: bool):
        """The token starting at src[off] (not a blank or comment)."""
        src = self.src
        c = src[off]
        operand = st.operand_expected

        if c in _WORD_CHARS and c not in _DIGITS:
            end = _WORD.match(src, off).end()  # type: ignore[union-attr]  # src[off] is a word char
            word = src[off:end]
            type_ = 'NAME'
            if word in RESERVED and not (st.prev is not None and st.prev.type == '_DOT'):
                type_, end = self._keyword(word, off, end, operand, limit)
            return self.token(type_, src[off:end], off, end), end

        if c in _DIGITS:
            end = _NUMBER.match(src, off).end()  # type: ignore[union-attr]  # src[off] is a digit
            if end < limit and src[end] in _WORD_CHARS:
                self.fail('invalid number literal', off)
            return self.token('NUMBER', src[off:end], off, end), end

        if c in '\'"$':
            node, end = self._scan_literal(off, limit)
            tok = self.token('STRING', src[off:end], off, end)
            tok.node = node
            return tok, end

        two = src[off:off + 2]
        if two == '{|':
            return self._scan_blurb(off, st, limit, line_first)
        if c in '([{' or two == '#[':
            return self._open(off, c, two, st, operand)
        if c in ')]}':
            return self._close(off, c, st)
        if c == '<':
            if two == '<=':
                return self.token('LE', '<=', off, off + 2), off + 2
            if operand:
                tok = self.token('LAMBDA_OPEN', '<', off, off + 1)
                st.stack.append(('<', tok))
                return tok, off + 1
            return self.token('LT', '<', off, off + 1), off + 1
        if c == '>':
            closes = not operand and st.stack and st.stack[-1][0] == '<'
            if two == '>=':
                if closes:
                    self.fail("'>=' cannot stand at the top level of a lambda body "
                              "(its '>' would close the lambda): write "
                              "<x: (x >= 2)>", off)
                return self.token('GE', '>=', off, off + 2), off + 2
            if closes:
                st.stack.pop()
                return self.token('_LAMBDA_CLOSE', '>', off, off + 1), off + 1
            return self.token('GT', '>', off, off + 1), off + 1
        if c == '-':
            if two == '->':
                self.fail("'a -> b' loop heads are not supported", off)
            return self.token('NEG' if operand else 'MINUS', '-', off, off + 1), off + 1
        if src.startswith('...', off):
            type_ = 'DOTS_PRE' if operand else '_DOTS_POST'
            return self.token(type_, '...', off, off + 3), off + 3
        if two == ':=':
            self.fail("':=' is not supported; use '='", off)
        if c == ';':
            self.fail("';' is not an operator in Ostinato; put statements on "
                      "separate lines", off)
        if two in _FIXED:
            return self.token(_FIXED[two], two, off, off + 2), off + 2
        if c in _FIXED:
            return self.token(_FIXED[c], c, off, off + 1), off + 1
        if two == '|}':
            self.fail("'|}' without a blurb '{|' to close", off)
        if c == '|':
            self.fail("unexpected '|': Ostinato has no '|' operator", off)
        if c == '#':
            self.fail("'#' is only valid in '#[' (comments start with '--'; "
                      "'#' lines are allowed only at the top of the file)", off)
        if c == '\r':
            self.fail('unexpected carriage return', off)
        self.fail('unexpected character %r' % c, off)

    def _keyword(self, word: str, off: int, end: int, operand: bool, limit: int):
        if word == 'if':
            return ('IF' if operand else '_IF_FILTER'), end
        if word == 'not':
            if not operand:
                m = _NOT_IN.match(self.src, end, limit)
                if m:
                    return 'NOT_IN', m.end()
            return 'NOT', end
        if word == 'spawn':
            # `spawn (` is always the built-in function (docs/language.md §9)
            if _CALL_PAREN.match(self.src, end, limit):
                return 'SPAWN_FN', end
            return 'SPAWN', end
        return _KEYWORD_TYPES[word], end

    def _open(self, off: int, c: str, two: str, st: _CodeState, operand: bool):
        if two == '#[':
            tok = self.token('HASH_LSQB', '#[', off, off + 2)
            st.stack.append(('[', tok))
            return tok, off + 2
        type_ = {'(': ('_LPAR_GROUP', '_LPAR_CALL'),
                 '[': ('LSQB_LIST', '_LSQB_INDEX'),
                 '{': ('LBRACE_SET', '_LBRACE_CURRY')}[c][0 if operand else 1]
        tok = self.token(type_, c, off, off + 1)
        st.stack.append((c, tok))
        return tok, off + 1

    def _close(self, off: int, c: str, st: _CodeState):
        if not st.stack:
            self.fail("unmatched '%s'" % c, off)
        kind, opener = st.stack[-1]
        if kind == '<':
            self.fail("unclosed lambda: expected '>' before '%s'" % c, off)
        if _CLOSER_OF[kind] != c:
            self.fail("'%s' does not match '%s' on line %d"
                      % (c, '#[' if opener.type == 'HASH_LSQB' else kind,
                         opener.line), off)
        st.stack.pop()
        return self.token(_CLOSE_TYPE[c], c, off, off + 1), off + 1

    def _scan_blurb(self, off: int, st: _CodeState, limit: int, line_first: bool):
        close = self.src.find('|}', off + 2, limit)
        if close < 0:
            self.fail("unclosed blurb '{|'", off)
        if st.interp or not line_first:
            self.fail("misplaced blurb: a blurb '{| ... |}' must come right "
                      "before a def or type, or first in the file for the module",
                      off)
        tok = self.token('BLURB', self.src[off:close + 2], off, close + 2)
        tok.node = read_blurb(self.src, off, close, self.where)
        return tok, close + 2

    # -------------------------------------------------------------- strings

    def _scan_literal(self, start: int, limit: int):
        """Scan the string literal at `start`; return (node, end offset)."""
        src = self.src
        off = start
        while off < limit and src[off] == '$':
            off += 1
        guards = off - start
        if off >= limit or src[off] not in '\'"':
            self.fail("'$' must be followed by a quote: a guarded string is "
                      "written $\"...\"$ or $'...'$", start)
        quote = src[off]
        closer = quote + '$' * guards
        raw = guards > 0
        interpolating = quote == '"'
        specials = quote + ('' if raw else '\\') + ('{}' if interpolating else '')
        atoms = []
        off += 1
        while True:
            if off >= limit:
                self.fail('unclosed string literal', start)
            c = src[off]
            if c not in specials:
                atoms.append((TEXT, c, off))
                off += 1
            elif c == quote:
                if not raw or src.startswith(closer, off):
                    off += len(closer)
                    break
                atoms.append((TEXT, c, off))
                off += 1
            elif c == '\\':
                if off + 1 >= limit:
                    self.fail('unclosed string literal', start)
                atoms.append((TEXT, c, off))
                atoms.append((TEXT, src[off + 1], off + 1))
                off += 2
            elif src.startswith(c + c, off):            # `{{` or `}}`
                atoms.append((BRACE, c, off))
                off += 2
            elif c == '{':
                node, close = self.scan_interpolation(off)
                atoms.append((INTERP, node, off))
                off = close + 1
            else:
                self.fail("a lone '}' in a string: write '}}' for a brace", off)
        return decode_literal(atoms, raw, start, self.where), off


# ------------------------------------------------------------ Lark plumbing

# Parsing costs time and memory by the token (about 50 s and 500 MB a
# million on a busy two-core machine), all of it in one step that nothing
# interrupts, at every start that reads the file: a source within the size
# limit (16 MiB) could hold millions.  Real programs stay far below.
MAX_TOKENS = 500_000


class TokenFeed:
    """What `parse` hands to Lark as the text: an iterator of finished tokens,
    remembering the ones already read so a syntax error can be explained."""

    def __init__(self, tokens):
        self._tokens = tokens
        self.history: List[Token] = []

    def __iter__(self):
        record = self.history.append
        history = self.history
        for tok in self._tokens:
            record(tok)
            if len(history) > MAX_TOKENS:
                raise SyntaxProblem('more than {:,} tokens (names, numbers, operators, line '
                                    'ends): split the program into modules, or read long '
                                    'data from a file'.format(MAX_TOKENS),
                                    tok.line or 1, tok.column or 1)
            yield tok


class OstLexer(Lexer):
    """The `lexer=` of the Lark parser: its input is a `TokenFeed`."""

    def __init__(self, lexer_conf):
        pass

    def lex(self, data):  # type: ignore[override]  # our parser hands it the feed only
        return iter(data)


class OstIndenter(Indenter):
    """Turns the `_NL` tokens into `_INDENT`/`_DEDENT`; drops `_NL` inside
    brackets.  A dedent to a level that no enclosing block has is an error at
    the first character of the offending line (the `_NL`'s end)."""

    NL_type = '_NL'
    OPEN_PAREN_types = list(OPEN_TYPES)
    CLOSE_PAREN_types = list(CLOSE_TYPES)
    INDENT_type = '_INDENT'
    DEDENT_type = '_DEDENT'
    tab_len = 8

    def process(self, stream):
        # Interpolations are parsed while the file's parse is still running,
        # so each parse gets its own indentation state.
        worker = copy.copy(self)
        worker.paren_level = 0
        worker.indent_level = [0]
        return worker._process(stream)

    def handle_NL(self, token):
        if self.paren_level > 0:
            return
        yield token
        indent = len(token) - 1          # the scanner writes '\n' + spaces
        levels = self.indent_level
        if indent > levels[-1]:
            levels.append(indent)
            yield Token.new_borrow_pos(self.INDENT_type, token[1:], token)
            return
        if indent not in levels:
            raise SyntaxProblem('unindent does not match any outer indentation '
                                'level', token.end_line, token.end_column)
        while indent < levels[-1]:
            levels.pop()
            yield Token.new_borrow_pos(self.DEDENT_type, token[1:], token)
