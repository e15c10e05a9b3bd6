"""The operator's log: what went wrong, for the person who runs Ostinato.

A chat user sees friendly text only (the skills' apologies); the reports
of failed tasks -- `FILE:LINE:COL: error: MESSAGE` and the frames -- and
internal errors are for the operator.  Under `serve` the operator reads
standard error; under `run` with a person chatting on the terminal, standard
error is the chat, so the reports go to a log file and the chat shows one
dimmed line saying where.  Each report is headed by the time and the task's
id and name, so `ostinato log --task ID` finds the model calls behind it.

The scheduler hands a report here after the commit that records it
(`Scheduler.oplog`); the main task's uncaught error stays on standard error
in the language's own form (it ends the run with exit status 70).  What a
report quotes may come from a user: it is written through
`terminal.harmless`, so no escape code in it reaches a terminal.
"""
from __future__ import annotations

import os
import time

from .terminal import colour_on, harmless, style

HOLDS = 'the reports of failed dialogues, with what their users said'


def check_log_file(path, err=None):
    """Before a run: refuse a symlink or anything but a regular file at the
    log's path (one line, StoreError), and warn when others may read or
    change an existing log, as for the database's files."""
    from .filestore import check_own_file
    from .store import warn_if_readable
    check_own_file(path, "the operator's log", HOLDS)
    warn_if_readable(path, err, what="operator's log", holds=HOLDS, companions=False)


class OperatorLog:
    """Either `path` (a file, opened for appending at the first report) or
    `stream` (standard error, say) takes the reports.
    active: None, or a function saying whether to take reports now (else
    they go to standard error as they are); notice: None, or a stream on
    which to say, in one dimmed line, where a report went."""

    def __init__(self, stream=None, path=None, active=None, notice=None):
        self._stream = stream
        self.path = path
        self.active = active
        self.notice = notice

    @property
    def stream(self):
        if self._stream is None:
            # Private, and never through a symlink (check_log_file refused
            # one at start; this closes the gap until the first report).
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                         | getattr(os, 'O_NOFOLLOW', 0), 0o600)
            self._stream = os.fdopen(fd, 'a', encoding='utf-8')
        return self._stream

    def _taking(self):
        return self.active is None or self.active()

    def report(self, task, text):
        """Log the report of a task's uncaught error; False to leave it to
        standard error."""
        if not self._taking():
            return False
        self.stream.write('%s task %d (%s) failed; `ostinato log --task %d` shows its model '
                          'calls:\n%s' % (_now(), task.id, task.name, task.id, harmless(text)))
        self.stream.flush()
        if self.notice is not None:
            self.say('(something went wrong in task %d; the details are in %s)'
                     % (task.id, self.path or 'the log'))
        return True

    def note(self, text):
        """Log any other text for the operator (an internal error's Python
        traceback); False to leave it to standard error."""
        if not self._taking():
            return False
        text = harmless(text)
        self.stream.write('%s %s' % (_now(), text if text.endswith('\n') else text + '\n'))
        self.stream.flush()
        if self.notice is not None:
            self.say('(an internal error; the details are in %s)' % (self.path or 'the log'))
        return True

    def say(self, line):
        self.notice.write(style(line, 'dim', colour_on(self.notice)) + '\n')
        self.notice.flush()

    def close(self):
        if self.path is not None and self._stream is not None:
            self._stream.close()
            self._stream = None


def _now():
    return time.strftime('%Y-%m-%d %H:%M:%S')
