"""`ostinato repl`: an interactive prompt on the live database.

Each input is compiled as module code of the persistent REPL module
`<repl>`, so variables survive between lines and between sessions, and runs
as a task of its own until it ends or waits (a waiting statement is left to
the serve process, or to the next run).  The value of a final expression
statement is shown with the printing rules.  When a `serve` process runs on
the database the REPL attaches to its socket and commits through it;
conflicting with the server's turns only makes a statement run again.
"""
from __future__ import annotations

import os
import sys
import time

from .compiler.compiler import compile_module
from .syntax import OstSyntaxError, parse
from .syntax import ast as A
from .vm.values import Frame, OModule

REPL_MODULE = '<repl>'

HELP = """\
Statements and expressions run in the module <repl>; its variables persist.
A block (a line ending in ':') ends with an empty line.
  :tasks        every task: state, what it waits for, its goal stack
  :stack ID     one task's frames with file:line:col and blurbs
  :cancel ID    end a task with the Error "cancelled by the operator"
  :retry ID     run a parked task again from its last commit
  :help         this text
  :quit         leave (also Ctrl-D)
"""


ATTEMPTS = 12         # runs of a statement that conflicts with the server's turns


def _conflict_text(e):
    """Which object a ZODB ConflictError was about, in words."""
    cls = getattr(e, 'class_name', None)
    oid = getattr(e, 'oid', None)
    what = cls.rsplit('.', 1)[-1] if isinstance(cls, str) else 'an object'
    if isinstance(oid, bytes):
        what += ' %s' % int.from_bytes(oid, 'big')
    return what


class Repl:
    def __init__(self, store, out=None, err=None, standalone=True):
        from .runtime.scheduler import Scheduler
        from .runtime.txn import StoreTransactions
        self.store = store
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.standalone = standalone
        sched = Scheduler(store.world, out=self.out, err=self.err)
        sched.worker = 'repl-%d' % os.getpid()
        sched.txn = StoreTransactions(store)
        # A statement is one transaction, however long it runs: Ctrl-C rolls
        # all of it back, never leaving half of it (or its task) saved.
        sched.SLICE_SECONDS = float('inf')
        self.sched = sched
        self.told_ready = False
        self.status = 0           # the exit status: 65 after a syntax error, 70 after an error

    def module(self):
        w = self.sched.world
        m = w.modules.get(REPL_MODULE)
        if m is None:
            m = OModule(REPL_MODULE)
            m.summary = 'The interactive prompt.'
            w.modules[REPL_MODULE] = m
        return m

    # ------------------------------------------------------------ statements
    def compile(self, text):
        tree = parse(text + '\n', REPL_MODULE)
        body = tree.body
        if body and isinstance(body[-1], A.ExprStmt):
            last = body[-1]
            show = A.Call(last.line, last.col, A.Name(last.line, last.col, '__show__'),
                          [last.expr], [])
            body[-1] = A.ExprStmt(last.line, last.col, show)
        return compile_module(tree, text, REPL_MODULE, REPL_MODULE)

    def execute(self, text):
        """Run one input; returns False for a syntax error or an error it
        raised.  Ctrl-C (KeyboardInterrupt) rolls the statement back."""
        from ZODB.POSException import ConflictError
        try:
            code = self.compile(text)
        except OstSyntaxError as e:
            self.err.write(e.format() + '\n')
            self.status = self.status or 65
            return False
        sched = self.sched
        conflict = None
        try:
            for attempt in range(ATTEMPTS):
                self.store.abort()          # see what the server committed meanwhile
                m = self.module()
                task = sched.new_task(Frame(code, m, m, None, None), REPL_MODULE)
                try:
                    sched.turn(task)
                except ConflictError as e:
                    # A server's turn changed the same objects meanwhile: run
                    # the statement again on the new state, backing off.
                    sched.abort()
                    conflict = e
                    time.sleep(min(0.01 * 2 ** attempt, 0.5))
                    continue
                failed = task.state == 'failed'
                if failed:
                    self.status = self.status or 70
                if self.standalone and sched.world.ready and not self.told_ready:
                    # The REPL runs only its own statements: the tasks they
                    # made ready (or woke) belong to serve or the next run.
                    self.told_ready = True
                    self.err.write('(no serve runs on this database: tasks the statement made '
                                   'ready run when `ostinato serve` or `ostinato run` does)\n')
                return not failed
        except KeyboardInterrupt:
            sched.abort()
            self.err.write('interrupted: the statement was rolled back\n')
            return False
        self.err.write('repl: the statement conflicted %d times with the server\'s turns, which '
                       'kept changing the same objects (%s); it was not run: try it again\n'
                       % (ATTEMPTS, _conflict_text(conflict)))
        self.status = self.status or 70
        return False

    # ------------------------------------------------------------ commands
    def command(self, line):
        from .effects.channels import chat  # noqa: F401 -- words for waits (report.py)
        from .effects.llm import queue  # noqa: F401
        from .runtime import report
        self.store.abort()
        parts = line.split()
        cmd = parts[0]
        if cmd in (':help', ':h', ':?'):
            self.out.write(HELP)
        elif cmd == ':tasks':
            self.out.write(report.tasks_text(self.sched.world) + '\n')
        elif cmd == ':stack':
            if len(parts) != 2 or not parts[1].isdigit():
                self.err.write('usage: :stack ID\n')
            else:
                try:
                    self.out.write(report.task_text(self.sched.world, int(parts[1])) + '\n')
                except KeyError:
                    self.err.write('no task %s\n' % parts[1])
        elif cmd in (':cancel', ':retry'):
            from .runtime.control import act
            if len(parts) != 2 or not parts[1].isdigit():
                self.err.write('usage: %s ID\n' % cmd)
            else:
                try:
                    ok, text = act(self.store, self.sched, int(parts[1]), cmd[1:])
                    (self.out if ok else self.err).write(text + '\n')
                except KeyError:
                    self.err.write('no task %s\n' % parts[1])
        else:
            self.err.write("unknown command %s; try :help\n" % cmd)
        self.out.flush()

    # ------------------------------------------------------------ input
    @staticmethod
    def needs_more(text):
        """Whether `text` is unfinished: the parser ran out of input inside an
        open bracket or string literal."""
        lines = text.split('\n')
        try:
            parse(text + '\n', REPL_MODULE)
        except OstSyntaxError as e:
            if 'never closed' in e.message or 'unclosed' in e.message \
                    or 'unterminated' in e.message:
                return True
            return e.line > len(lines) or (e.line == len(lines) and e.col > len(lines[-1]))
        return False

    def loop(self, lines=None):
        """Read-eval-print until end of input.  `lines` (an iterator of lines)
        replaces the terminal, for tests and piped input.  Returns the exit
        status: 0, or 65 / 70 when an input had a syntax error / raised."""
        read = self._reader() if lines is None else _iter_reader(lines)
        while True:
            try:
                text = self.read_statement(read)
            except EOFError:
                return self.status
            except KeyboardInterrupt:        # as in Python: drop the input, prompt again
                self.out.write('\nKeyboardInterrupt\n')
                self.out.flush()
                continue
            if text is None:
                continue
            if text.startswith(':'):
                if text in (':quit', ':q', ':exit'):
                    return self.status
                self.command(text)
                continue
            self.execute(text)
            self.out.flush()

    def read_statement(self, read):
        """One input: a command (`:...`, stripped), a statement with its
        continuation lines, or None for an empty line.  Raises EOFError at
        the end of input."""
        first = read('>>> ')
        if first is None:
            raise EOFError
        if not first.strip():
            return None
        if first.strip().startswith(':'):
            return first.strip()
        text = first
        block = first.rstrip().endswith(':')
        while True:
            if block:
                try:
                    nxt = read('... ')
                except EOFError:
                    nxt = ''
                if nxt is None or not nxt.strip():
                    break
                text += '\n' + nxt
            elif self.needs_more(text):
                try:
                    nxt = read('... ')
                except EOFError:
                    break
                if nxt is None:
                    break
                text += '\n' + nxt
                if nxt.rstrip().endswith(':'):
                    block = True
            else:
                break
        return text

    def _reader(self):
        if sys.stdin.isatty():
            try:
                from prompt_toolkit import PromptSession
                from prompt_toolkit.history import FileHistory
            except ImportError:
                pass
            else:
                from .highlight import prompt_lexer
                hist = os.path.join(os.path.expanduser('~'), '.ostinato_history')
                session = PromptSession(history=FileHistory(hist), lexer=prompt_lexer())
                return lambda prompt: session.prompt(prompt)
            try:
                import readline  # noqa: F401 -- line editing and history for input()
            except ImportError:
                pass
            return input
        return _iter_reader(sys.stdin)


def _iter_reader(lines):
    it = iter(lines)

    def read(prompt):
        try:
            return next(it).rstrip('\n')
        except StopIteration:
            raise EOFError from None
    return read
