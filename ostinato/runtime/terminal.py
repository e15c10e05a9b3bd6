"""Text for a terminal: colour only on a terminal, and never when NO_COLOR
is set (no-color.org).  Shared by the console channel, the operator's log
notices and the CLI's reports."""
from __future__ import annotations

import os

_CODES = {'dim': '2', 'red': '31', 'green': '32', 'yellow': '33', 'bold': '1'}


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
