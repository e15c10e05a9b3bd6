"""Syntax errors of Ostinato source (docs/language.md §14 "Syntax errors").

`OstSyntaxError` is the only exception `parse` lets out; `ostinato run` prints
its `format()` and exits with 65, and an import turns it into a runtime error.

Inside the syntax layer the scanner, the literal decoder and the tree builder
raise `SyntaxProblem`, which knows only a message and a position: they do not
know the file name or need the source line, so `parse` adds those when it turns
the problem into an `OstSyntaxError`.
"""
from __future__ import annotations

import re


SHOWN = 160         # characters of the source line shown under the message
_CONTROL = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f]')


class OstSyntaxError(Exception):
    """A syntax error at `line`:`col` (from 1, counting code points)."""

    def __init__(self, filename: str, line: int, col: int, message: str,
                 source_line: str = ''):
        super().__init__(filename, line, col, message, source_line)
        self.filename = filename
        self.line = line
        self.col = col
        self.message = message
        self.source_line = source_line

    def header(self) -> str:
        return '%s:%d:%d: syntax error: %s' % (self.filename, self.line,
                                               self.col, self.message)

    def format(self) -> str:
        """The three-line report: location and message, the source line, and
        a caret under the column.  A long line is shown around the column."""
        line, col = self.source_line, max(self.col - 1, 0)
        if len(line) > SHOWN:
            start = max(0, min(col - SHOWN // 2, len(line) - SHOWN))
            shown = line[start:start + SHOWN]
            if start > 0:
                shown, col = '...' + shown, col - start + 3
            if start + SHOWN < len(line):
                shown += '...'
            line = shown
        # The line goes to a terminal: a control character in it (an escape
        # code) would act there, so it is shown as one '?' and the caret
        # keeps its column.
        line = _CONTROL.sub('?', line)
        return '%s\n%s\n%s' % (self.header(), line, ' ' * col + '^')

    def __str__(self) -> str:
        return self.header()


class SyntaxProblem(Exception):
    """Internal: a syntax error before the file name is attached."""

    def __init__(self, message: str, line: int, col: int):
        super().__init__(message, line, col)
        self.message = message
        self.line = line
        self.col = col
