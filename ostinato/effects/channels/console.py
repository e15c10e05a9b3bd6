"""The console channel of `ostinato run`: the terminal (or piped input) as
one chat thread.

Each line read is a user message of the thread `console` (the user named
from $USER), appended in a transaction of its own; the thread goes into
`new_threads()` with its first message.  Bot messages are printed with the
turn's output, after its commit (`prints_channel`); those a process without
a console queued in the outbox (`serve` continuing a console dialogue) are
shown when a console next runs.  The channel is live -- it keeps the run
going -- only while a program uses the `channels` module and input has not
ended; then the run ends when nothing can progress without more input, and
the waiting tasks stay in the database.

For a person at a terminal it also shows where the dialogue stands when a
run continues one (the last messages, dimmed) and a `> ` prompt whenever it
is their turn to type; piped input gets neither, so a script's output is
only the bot's messages.
"""
from __future__ import annotations

import getpass
import queue
import sys
import threading
from typing import Any

from ...runtime.terminal import dim, harmless, isatty as _isatty
from .chat import channels_module, new_user, receive
from ..service import Service

THREAD_ID = 'console'
CHANNEL = 'console'


PROMPT = '> '
HISTORY = 6          # messages re-shown when a run continues a conversation


class ConsoleChannel(Service):
    prints_channel = CHANNEL

    def __init__(self, stream=None, user_name=None, terminal=None):
        self.stream = stream if stream is not None else sys.stdin
        self.user_name = user_name or _user_name()
        self.lines: queue.Queue = queue.Queue()
        super().__init__()
        self.ended = False
        # A person types at a terminal (the prompt, the re-shown messages).
        self.terminal = terminal if terminal is not None else (
            self.stream is sys.stdin and _isatty(sys.stdin) and _isatty(sys.stdout))
        self.shown_history = False
        self.out: Any = None             # the scheduler's output, behind a PromptAware wrapper
        self.reader = threading.Thread(target=self._read, name='ostinato-console', daemon=True)
        self.reader.start()

    def _read(self):
        try:
            for line in self.stream:
                self.lines.put(line.rstrip('\r\n'))
                self.event.set()
        except (OSError, ValueError):
            pass
        self.lines.put(None)
        self.event.set()

    # ------------------------------------------------------------ service protocol
    def bind(self, sched):
        super().bind(sched)
        if self.terminal and not isinstance(sched.out, PromptAware):
            sched.out = PromptAware(sched.out)
        self.out = sched.out

    def busy(self, sched):
        return not self.ended and channels_module(sched.world) is not None

    def poll(self, sched):
        """Take one line when the program is idle -- nothing ready, no model
        request out -- as a person reads the reply before typing again; so
        piped input plays a scripted session the same way every time."""
        if channels_module(sched.world) is None:
            return            # nobody listens yet: keep the lines
        if not self.shown_history:
            self.shown_history = True
            if self.terminal:
                self.show_history(sched)
            self.show_queued(sched)
        # A channel that always listens (Telegram) is not a reply on its way.
        if sched.world.ready or any(s.busy(sched) for s in sched.services
                                    if s is not self and not s.listens):
            return
        try:
            line = self.lines.get_nowait()
        except queue.Empty:
            if self.terminal and not self.ended:
                self.out.prompt(PROMPT)
            return
        if line is None:
            self.ended = True
            if self.terminal:
                self.out.end_line()      # Ctrl-D: the shell's prompt on a line of its own
            return
        if self.terminal:
            self.out.prompted = False    # the person's Enter ended the prompt's line
        sched.transact(lambda: self.intake(sched, line))

    def show_history(self, sched):
        """When a run continues a conversation: its last messages, dimmed, so
        the person sees which question waits for an answer."""
        thread = channels_module(sched.world).ns['threads'].d.get(THREAD_ID)
        if thread is None:
            return
        messages = thread.get('messages').items
        if not messages:
            return
        lines = []
        for m in messages[-HISTORY:]:
            text = harmless(str(m.get('text')))
            lines.append(PROMPT + text if m.get('sender') is not None else text)
        when = str(messages[-1].get('when') or '')[:16].replace('T', ' ')
        head = '(continuing the conversation of %s; the last messages:)' % when
        # Its own colour codes go out as they are; the messages were made harmless.
        getattr(self.out, 'write_styled', self.out.write)(dim('\n'.join([head] + lines)) + '\n')
        self.out.flush()

    def show_queued(self, sched):
        """The console's bot messages a process without a console queued in
        the outbox: taken out in a transaction, then printed (at most once,
        as all output)."""
        box = sched.world.outbox
        if not box.pending:
            return
        queued = box.messages(CHANNEL)
        if not queued:
            return

        def take():
            for m in queued:
                box.remove(m.seq)
        sched.transact(take)
        for m in queued:
            self.out.write('%s\n' % (m.text,))
        self.out.flush()

    # ------------------------------------------------------------ intake
    def intake(self, sched, text):
        thread = channels_module(sched.world).ns['threads'].d.get(THREAD_ID)
        user = thread.get('user') if thread is not None else \
            new_user(sched.world, self.user_name, self.user_name)
        receive(sched, THREAD_ID, CHANNEL, THREAD_ID, user, text)


class PromptAware:
    """The run's output on a terminal, aware of the console's prompt: output
    that comes while the prompt is shown (a timer, another channel) first
    clears the prompt's line; the console shows the prompt again when it is
    the person's turn.  What is printed may quote a user or the model: no
    escape code in it reaches the terminal raw (`terminal.harmless`)."""

    def __init__(self, stream):
        self.stream = stream
        self.prompted = False

    def prompt(self, text):
        if not self.prompted:
            self.stream.write(text)
            self.stream.flush()
            self.prompted = True

    def end_line(self):
        if self.prompted:
            self.stream.write('\n')
            self.stream.flush()
            self.prompted = False

    def write(self, text):
        if self.prompted and text:
            self.stream.write('\r\x1b[K')
            self.prompted = False
        return self.stream.write(harmless(text))

    def write_styled(self, text):
        """Write the console's own styled text (its colour codes kept)."""
        if self.prompted and text:
            self.stream.write('\r\x1b[K')
            self.prompted = False
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _user_name():
    try:
        return getpass.getuser()
    except Exception:
        return 'user'
