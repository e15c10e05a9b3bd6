"""The console channel of `ostinato run`: the terminal (or piped input) as
one chat thread.

Each line read is a user message of the thread `console` (the user named
from $USER), appended in a transaction of its own; the thread goes into
`new_threads()` with its first message.  Bot messages are printed with the
turn's output, after its commit.  The channel is live -- it keeps the run
going -- only while a program uses the `channels` module and input has not
ended; then the run ends when nothing can progress without more input, and
the waiting tasks stay in the database.
"""
from __future__ import annotations

import getpass
import queue
import sys
import threading

from .chat import channels_module, new_user, receive
from .service import Service

THREAD_ID = 'console'


class ConsoleChannel(Service):
    def __init__(self, stream=None, user_name=None):
        self.stream = stream if stream is not None else sys.stdin
        self.user_name = user_name or _user_name()
        self.lines = queue.Queue()
        super().__init__()
        self.ended = False
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
    def busy(self, sched):
        return not self.ended and channels_module(sched.world) is not None

    def poll(self, sched):
        """Take one line when the program is idle -- nothing ready, no model
        request out -- as a person reads the reply before typing again; so
        piped input plays a scripted session the same way every time."""
        if channels_module(sched.world) is None:
            return            # nobody listens yet: keep the lines
        # A channel that always listens (Telegram) is not a reply on its way.
        if sched.world.ready or any(s.busy(sched) for s in sched.services
                                    if s is not self and not s.listens):
            return
        try:
            line = self.lines.get_nowait()
        except queue.Empty:
            return
        if line is None:
            self.ended = True
            return
        sched.transact(lambda: self.intake(sched, line))

    # ------------------------------------------------------------ intake
    def intake(self, sched, text):
        thread = channels_module(sched.world).ns['threads'].d.get(THREAD_ID)
        user = thread.get('user') if thread is not None else \
            new_user(sched.world, self.user_name, self.user_name)
        receive(sched, THREAD_ID, 'console', THREAD_ID, user, text)


def _user_name():
    try:
        return getpass.getuser()
    except Exception:
        return 'user'
