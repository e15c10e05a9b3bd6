"""Syntax highlighting for Ostinato source (docs/language.md §2, §3, §13.1, §20).

`OstinatoLexer` is a Pygments `RegexLexer` (name 'Ostinato', aliases
'ostinato' and 'ost', files '*.ost'); setup.cfg registers it as a Pygments
plugin, so `pygmentize -l ost FILE.ost` works once Ostinato is installed.
`prompt_lexer()` wraps it for prompt_toolkit (the REPL's line editor).

Pygments is imported lazily: importing this module never needs it, and the
lexer class is built the first time `OstinatoLexer` is looked up (a missing
Pygments is then an ImportError).  `prompt_lexer()` returns None when either
library is missing.

The lexer is for highlighting, not checking: it never reports a syntax error
the real scanner (ostinato/syntax/lexer.py) would catch, except for
characters Ostinato has no use for at all (a lone `$` or `|`, `@`, ...),
which come out as `Error` tokens.  What it tells apart:

* the `#` header lines at the very top (Comment.Hashbang), `--` comments
  (Comment.Single), nested `(| ... |)` comments (Comment.Multiline) and
  `{| ... |}` goal blurbs (String.Doc);
* reserved words (Keyword; `none true false` are Keyword.Constant, `and or
  not in` Operator.Word, `import from` Keyword.Namespace), the mode words
  `val var one` at the start of a field line (Keyword.Declaration), the
  names after `def` (Name.Function) and `type` (Name.Class), module names
  after `import`/`from` (Name.Namespace), `__goal__ __caller__ __parent__`
  (Name.Builtin.Pseudo), the built-ins of §18 (Name.Builtin) and `Error`
  (Name.Exception); after `.` every word is a plain field Name;
* numbers (Number.Integer, Number.Float);
* every string form: `'...'` (String.Single), `"..."` (String.Double) with
  escapes (String.Escape), `{{`/`}}` (String.Escape) and `{expr}`
  interpolations whose braces are String.Interpol and whose inside is lexed
  as code (nested literals included), and the raw guarded forms `$'...'$`,
  `$$"..."$$`, ... (no escapes; the double-quoted ones interpolate).  Any
  literal may span lines.
"""
from __future__ import annotations

import re

from .syntax import lexer as _lexer
from .vm import builtins as _builtins, taskbuiltins as _taskbuiltins  # noqa: F401 -- they fill BUILTINS
from .vm.values import BUILTINS as _VM_BUILTINS

# OstinatoLexer is made by the module's __getattr__ on first use.
__all__ = ['OstinatoLexer', 'prompt_lexer', 'RESERVED', 'CONSTANTS',  # noqa: F822
           'WORD_OPERATORS', 'MODE_WORDS', 'FRAME_NAMES', 'BUILTINS']

# The reserved words of the real scanner (docs/language.md §2) and the
# built-ins the VM defines (§18; `spawn` is a reserved word and stays a
# keyword; names starting with `_` are the runtime's own): taken from where
# they are defined, so the highlighting cannot drift from the language.
RESERVED = tuple(sorted(_lexer.RESERVED))
CONSTANTS = ('none', 'true', 'false')
WORD_OPERATORS = ('and', 'or', 'not', 'in')
NAMESPACE_WORDS = ('import', 'from')
MODE_WORDS = ('val', 'var', 'one')
FRAME_NAMES = ('__goal__', '__caller__', '__parent__')
BUILTINS = tuple(sorted(n for n in _VM_BUILTINS if not n.startswith('_') and n not in RESERVED))

# Guarded double-quoted literals with up to this many `$` get exact
# interpolation highlighting (one lexer state per guard count); longer
# guards are lexed as one String.Double token without it.
_MAX_GUARDS = 8

_NAME = r'[A-Za-z_][A-Za-z0-9_]*'
_END = r'(?![A-Za-z0-9_])'          # end of a word


def _alternatives(names):
    return '(?:%s)%s' % ('|'.join(sorted(names, key=len, reverse=True)), _END)


def _build_lexer_class():
    from pygments.lexer import RegexLexer, bygroups, default, include
    from pygments.token import (Comment, Keyword, Name, Number, Operator,
                                Punctuation, String, Whitespace)

    plain_keywords = [w for w in RESERVED if w not in CONSTANTS
                      and w not in WORD_OPERATORS and w not in NAMESPACE_WORDS]

    def _nothing(lexer, match):
        return iter(())     # leave a state without a token

    escape = (r'\\(?:[\\\'"abfnrtv0 \n]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}'
              r'|U[0-9a-fA-F]{8})')

    def interpolating(text_token, closer, escapes):
        """Rules for the body of a `"..."`-like literal ending at `closer`."""
        rules = []
        if escapes:
            rules += [(escape, String.Escape),
                      (r'\\', text_token)]      # a bad escape: not our business
        rules += [
            (closer, text_token, '#pop'),
            (r'\{\{|\}\}', String.Escape),
            (r'\{', String.Interpol, 'interp'),
            (r'[^"{}\\]+', text_token),
            (r'["}\\]', text_token),            # a lone `}` is a syntax error
        ]
        return rules

    token_table = {
        'root': [
            (r'\A(?:#[^\n]*(?:\n|\Z))+', Comment.Hashbang),
            # `val name = 1, other` as the first thing on a line.
            (r'^([ \t]*)(%s)(?=[ \t]+%s[ \t]*(?:=(?!=)|,|--|\(\||$))'
             % (_alternatives(MODE_WORDS), _NAME),
             bygroups(Whitespace, Keyword.Declaration)),
            (r'^([ \t]*)(import)%s' % _END,
             bygroups(Whitespace, Keyword.Namespace), 'import-names'),
            (r'\{\|', String.Doc, 'blurb'),
            include('code'),
        ],
        'code': [
            (r'\r?\n', Whitespace),
            (r'[ \t]+', Whitespace),
            (r'--[^\n]*', Comment.Single),
            (r'\(\|', Comment.Multiline, 'block-comment'),
            # Strings.  Guarded ones first: `$` starts nothing else.
            (r"(\$+)'[\s\S]*?'\1", String.Single),
            (r"\$+'[\s\S]*", String.Single),    # unclosed: to the end
        ] + [
            (r'\${%d}"' % n, String.Double, 'guarded-%d' % n)
            for n in range(1, _MAX_GUARDS + 1)
        ] + [
            (r'(\$+)"[\s\S]*?"\1', String.Double),
            (r'\$+"[\s\S]*', String.Double),
            (r"'", String.Single, 'single'),
            (r'"', String.Double, 'double'),
            # Numbers (a name never starts here: names are matched whole).
            (r'[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)',
             Number.Float),
            (r'[0-9]+', Number.Integer),
            # After `.` any word is a field name (`m.if`, `msg.from`).
            (r'\.\.\.?', Operator),
            (r'(\.)([ \t]*)(%s)' % _NAME, bygroups(Punctuation, Whitespace, Name)),
            (r'(def)([ \t]+)(%s)' % _NAME + _END,
             bygroups(Keyword, Whitespace, Name.Function)),
            (r'(type)([ \t]+)(%s)' % _NAME + _END,
             bygroups(Keyword, Whitespace, Name.Class)),
            (r'(from)([ \t]+)(%s)' % _NAME + _END,
             bygroups(Keyword.Namespace, Whitespace, Name.Namespace)),
            (_alternatives(CONSTANTS), Keyword.Constant),
            (_alternatives(WORD_OPERATORS), Operator.Word),
            (_alternatives(NAMESPACE_WORDS), Keyword.Namespace),
            (_alternatives(plain_keywords), Keyword),
            (_alternatives(FRAME_NAMES), Name.Builtin.Pseudo),
            (r'Error' + _END, Name.Exception),
            (_alternatives(BUILTINS), Name.Builtin),
            (_NAME, Name),
            # `;`, `:=` and `->` are recognised only to be reported (§2).
            (r'//|==|!=|<=|>=|:=|->|[-+*/%^\\<>=?!]', Operator),
            (r'#\[', Punctuation),
            (r'[()\[\]{},:;.#]', Punctuation),  # a late `#` is the parser's job
        ],
        'import-names': [
            (r'[ \t]+', Whitespace),
            (r',', Punctuation),
            (_NAME + _END, Name.Namespace),
            default('#pop'),
        ],
        'block-comment': [
            (r'[^(|]+', Comment.Multiline),
            (r'\(\|', Comment.Multiline, '#push'),
            (r'\|\)', Comment.Multiline, '#pop'),
            (r'[(|]', Comment.Multiline),
        ],
        'blurb': [
            (r'[^|]+', String.Doc),
            (r'\|\}', String.Doc, '#pop'),
            (r'\|', String.Doc),
        ],
        'single': [
            (escape, String.Escape),
            (r"'", String.Single, '#pop'),
            (r"[^'\\]+", String.Single),
            (r'\\', String.Single),
        ],
        'double': interpolating(String.Double, '"', escapes=True),
        # Inside `{...}`: code, up to the `}` balancing the `{`; braces only
        # nest.  An interpolation cannot hold a line break, so one ends it.
        'interp': [
            (r'\}', String.Interpol, '#pop'),
            (r'\{', Punctuation, 'interp-braces'),
            (r'(?=\r?\n)', _nothing, '#pop'),
            include('code'),
        ],
        'interp-braces': [
            (r'\}', Punctuation, '#pop'),
            (r'\{', Punctuation, '#push'),
            (r'(?=\r?\n)', _nothing, '#pop'),
            include('code'),
        ],
    }
    for n in range(1, _MAX_GUARDS + 1):
        token_table['guarded-%d' % n] = interpolating(
            String.Double, '"' + r'\$' * n, escapes=False)

    class OstinatoLexer(RegexLexer):
        """Pygments lexer for Ostinato (`.ost`) source."""
        __qualname__ = 'OstinatoLexer'

        name = 'Ostinato'
        aliases = ['ostinato', 'ost']
        filenames = ['*.ost']
        mimetypes = ['text/x-ostinato']
        flags = re.MULTILINE

        def __init__(self, **options):
            # Keep leading blank lines: the `#` header counts only at the
            # very top, and token offsets should match the source.
            options.setdefault('stripnl', False)
            super().__init__(**options)

        def analyse_text(text):
            if text.startswith('#!') and 'ostinato' in text.split('\n', 1)[0]:
                return 1.0
            return 0.0

        tokens = token_table

    return OstinatoLexer


_lexer_class = None


def __getattr__(name):
    """Build `OstinatoLexer` on first access (needs Pygments)."""
    global _lexer_class
    if name == 'OstinatoLexer':
        if _lexer_class is None:
            _lexer_class = _build_lexer_class()
        return _lexer_class
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


def prompt_lexer():
    """A prompt_toolkit lexer highlighting Ostinato, or None when
    prompt_toolkit or Pygments is not installed."""
    try:
        from prompt_toolkit.lexers import PygmentsLexer
        lexer_class = __getattr__('OstinatoLexer')
    except ImportError:
        return None
    return PygmentsLexer(lexer_class)
