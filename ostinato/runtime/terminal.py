"""Text for a terminal: colour only on a terminal, and never when NO_COLOR
is set (no-color.org).  Shared by the console channel, the operator's log
notices and the CLI's reports."""
from __future__ import annotations

import os
import re

_CODES = {'dim': '2', 'red': '31', 'green': '32', 'yellow': '33', 'bold': '1'}


# What a terminal would act on rather than show: C0 controls but the line
# break and the tab, DEL, C1 controls (0x9b is a CSI by itself), and the
# bidirectional overrides and isolates that reorder what is shown.
_UNSAFE = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]')


def _escape(m):
    c = m.group()
    return '\\x%02x' % ord(c) if ord(c) < 0x100 else '\\u%04x' % ord(c)


def harmless(text):
    """`text` with what a terminal would act on shown escaped (`\\x1b`), for
    the operator's terminal and log: a user's text inside an error report
    could otherwise retitle the terminal (`ESC ] 0 ; ... BEL`), move the
    cursor, or forge a line."""
    return _UNSAFE.sub(_escape, text)


class HarmlessWriter:
    """A text stream that writes through `harmless` (serve's standard
    output: the operator's terminal or log, where a program prints)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        return self.stream.write(harmless(text))

    def flush(self):
        self.stream.flush()

    def isatty(self):
        return isatty(self.stream)


def isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def colour_on(stream):
    """Whether to colour what goes to `stream`."""
    return isatty(stream) and not os.environ.get('NO_COLOR')


def style(text, name, on=True):
    """`text` in a style ('dim', 'red', 'green', 'yellow', 'bold'), line by
    line, when `on` and NO_COLOR is not set."""
    if not on or os.environ.get('NO_COLOR'):
        return text
    code = _CODES[name]
    return '\n'.join('\x1b[%sm%s\x1b[0m' % (code, line) if line else line
                     for line in text.split('\n'))


def dim(text):
    return style(text, 'dim')
