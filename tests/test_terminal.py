"""The command as a person at a terminal meets it, driven through a
pseudo-terminal (pexpect): the console's prompt, the last messages re-shown
(dimmed) when a run continues a dialogue, Ctrl-C during a model call and in
a loop that never waits, Ctrl-C in the REPL, colour and NO_COLOR.

Nothing here waits on the clock: each step waits for what the program
shows (a line, a prompt, a request reaching the fake model, the CPU time a
busy loop uses), with a generous timeout only against a hang."""
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from fakes.ollama import FakeOllama

# Slow (whole runs on a pseudo-terminal): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')
PATIENCE = 120            # seconds before a step that shows nothing counts as a hang

LUNCH = 'Had a turkey sandwich and an apple for lunch, and a hot chocolate later'
DIM = '\x1b[2m'


def env_for(tmp_path, **extra):
    env = dict(os.environ, OSTINATO_DB=str(tmp_path / 'db.fs'), USER='ann', TERM='dumb')
    for k in ('OSTINATO_LLM', 'OSTINATO_MODEL', 'OLLAMA_HOST', 'OSTINATO_LLM_SCRIPT',
              'OSTINATO_LLM_SERVERS', 'NO_COLOR', 'OSTINATO_LOG'):
        env.pop(k, None)
    env.update(extra)
    return env


class Transcript(io.StringIO):
    """Everything the child wrote, for the message of a failing step."""

    def __repr__(self):
        return '<transcript:\n%s\n>' % self.getvalue()


def spawn(args, tmp_path, env):
    child = pexpect.spawn(BIN, list(args), cwd=str(tmp_path), env=env, encoding='utf-8',
                          timeout=PATIENCE, dimensions=(40, 250))
    child.logfile_read = Transcript()
    return child


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def ost(*args, cwd, env, input=None):
    return subprocess.run([BIN, *args], cwd=cwd, env=env, input=input, capture_output=True,
                          text=True, timeout=PATIENCE)


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def wait_for(pred, what):
    """Wait until pred() holds (checked often), failing only after PATIENCE."""
    import time
    end = time.monotonic() + PATIENCE
    while not pred():
        assert time.monotonic() < end, 'never happened: ' + what
        time.sleep(0.02)


def busy_for(pid, seconds):
    """Wait until process `pid` has spent `seconds` more CPU time: proof that
    a loop that never waits is running."""
    start = cpu_seconds(pid)
    wait_for(lambda: cpu_seconds(pid) - start >= seconds, 'the busy loop')


# ------------------------------------------------------------------ the console

def diet_env(tmp_path, **extra):
    shutil.copy(ROOT / 'skills' / 'diet.ost', tmp_path)
    shutil.copy(ROOT / 'skills' / 'meals.ost', tmp_path)
    return env_for(tmp_path, OSTINATO_LLM='scripted',
                   OSTINATO_LLM_SCRIPT=str(HERE / 'skills' / 'diet.json'), **extra)


def test_the_console_prompts_and_shows_where_a_dialogue_stands(tmp_path):
    env = diet_env(tmp_path)
    child = spawn(['run', 'diet.ost'], tmp_path, env)
    child.expect_exact('> ')
    child.sendline(LUNCH)
    child.expect_exact('About what time was lunch?')
    child.expect_exact('> ')
    child.sendeof()
    assert finish(child) == 0

    # The next run shows the last messages, dimmed, the pending question
    # last, before the prompt.
    child = spawn(['run', 'diet.ost'], tmp_path, env)
    child.expect_exact('(continuing the conversation of ')
    child.expect_exact('About what time was lunch?')
    assert (DIM + '> ' + LUNCH) in child.before and child.before.endswith(DIM)
    child.expect_exact('> ')
    child.sendline('around 12:30')
    child.expect_exact('And when did you have the hot chocolate?')
    child.expect_exact('> ')
    # Ctrl-C while it waits for the user: it says so at once and stops.
    child.sendintr()
    child.expect_exact('stopping after this step (Ctrl-C again to stop now)')
    assert finish(child) == 130

    # NO_COLOR: the same, without any colour.
    child = spawn(['run', 'diet.ost'], tmp_path, dict(env, NO_COLOR='1'))
    child.expect_exact('(continuing the conversation of ')
    child.expect_exact('And when did you have the hot chocolate?')
    child.expect_exact('> ')
    assert '\x1b[' not in child.before
    child.sendline('at 2:30 or so')
    child.expect_exact('(lunch) turkey sandwich, apple')
    child.expect_exact('> ')
    child.sendeof()
    assert finish(child) == 0


def test_a_failing_dialogue_shows_the_user_friendly_words_only(tmp_path):
    """The report with its frames goes to the operator's log (DB.log beside
    the database), headed with the task's id; the chat shows the apology
    and a dimmed pointer."""
    shutil.copy(HERE / 'skills' / 'broken.ost', tmp_path)
    env = env_for(tmp_path)
    child = spawn(['run', 'broken.ost'], tmp_path, env)
    child.expect_exact('> ')
    child.sendline('zero')
    child.expect(r'\(something went wrong in task (\d+); the details are in (\S+)\)')
    tid, path = child.match.group(1), child.match.group(2)
    child.expect_exact("Sorry, something went wrong on my side.  Let's start over.")
    child.expect_exact('> ')
    child.sendeof()
    assert finish(child) == 0
    assert 'division by zero' not in child.before
    assert path == str(tmp_path / 'db.log')
    log = Path(path).read_text()
    assert ('task %s (dialogue) failed; `ostinato log --task %s` shows its model calls:\n'
            'broken.ost:8:16: error: division by zero\n  at broken.ost:8:16 in divide\n'
            % (tid, tid)) in log


# ------------------------------------------------------------------ Ctrl-C

ASK = 'from llm import agent\nprint(agent("hello?").text)\n'


def interrupted_while_asking(tmp_path, fake):
    """`run ask.ost` on the fake Ollama, Ctrl-C'd once while the model thinks
    (`fake.hold`): it said at once that it stops after this step."""
    (tmp_path / 'ask.ost').write_text(ASK)
    env = env_for(tmp_path, OSTINATO_LLM='ollama', OLLAMA_HOST=fake.url)
    child = spawn(['run', 'ask.ost'], tmp_path, env)
    wait_for(lambda: fake.bodies, 'the request reaching the model')
    child.sendintr()
    child.expect_exact('stopping after this step (Ctrl-C again to stop now)')
    return env, child


def test_ctrl_c_during_a_model_call_keeps_the_reply(tmp_path):
    with FakeOllama() as fake:
        fake.hold({'text': 'hi there'})
        env, child = interrupted_while_asking(tmp_path, fake)
        fake.release()
        child.expect_exact('stopped between two steps; nothing is lost')
        assert finish(child) == 130
        asked = len(fake.bodies)
        # The reply was kept: the next run prints it without asking again.
        r = ost('run', 'ask.ost', cwd=tmp_path, env=env)
        assert (r.returncode, r.stdout) == (0, 'hi there\n'), r.stderr
        assert len(fake.bodies) == asked == 1


def test_a_second_ctrl_c_stops_without_waiting_for_the_model(tmp_path):
    with FakeOllama() as fake:
        fake.hold({'text': 'too late'})
        env, child = interrupted_while_asking(tmp_path, fake)
        child.sendintr()
        child.expect_exact('stopped now, without waiting for the model: the question is '
                           'asked again when the same command runs again')
        assert finish(child) == 130
        fake.release()
        fake.reply({'text': 'asked again'})
        r = ost('run', 'ask.ost', cwd=tmp_path, env=env)
        assert (r.returncode, r.stdout) == (0, 'asked again\n'), r.stderr


def test_ctrl_c_in_a_loop_that_never_waits(tmp_path):
    """The first Ctrl-C cannot end a step that never ends; the second stops
    at once, and says the task is left as it was at its last commit (its
    checkpoints), from where the next run goes on."""
    (tmp_path / 'spin.ost').write_text('n = 0\nprint("spinning")\nwhile true:\n    n = n + 1\n')
    env = env_for(tmp_path)
    child = spawn(['run', 'spin.ost'], tmp_path, env)
    child.expect_exact('spinning')          # printed at the first checkpoint's commit
    child.sendintr()
    child.expect_exact('stopping after this step (Ctrl-C again to stop now)')
    busy_for(child.pid, 0.3)                # it still runs: the step has not ended
    child.sendintr()
    child.expect_exact('ostinato: stopped now, in the middle of a step of task 1 (spin): that '
                       'step is dropped, and the task is as it was at its last commit')
    assert finish(child) == 130
    # As at its last checkpoint: in the middle of its turn, which the next
    # run goes on with first.
    r = ost('tasks', cwd=tmp_path, env=env)
    assert r.returncode == 0 and r.stdout.startswith('1  spin  running'), r.stdout


def test_an_interrupt_never_lands_inside_a_commit():
    """The second Ctrl-C's KeyboardInterrupt waits for the end of a commit in
    progress (FileStorage closes itself when its second phase is cut)."""
    import pytest
    from ostinato.runtime.scheduler import committing, interrupt
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with committing:
            with committing:                # nested: the outermost end counts
                interrupt()                 # what the signal handler calls
                steps.append('commit done')
            steps.append('abort done')
    assert steps == ['commit done', 'abort done']
    with pytest.raises(KeyboardInterrupt):
        interrupt()                         # between commits: at once


# ------------------------------------------------------------------ the REPL

def test_repl_ctrl_c_rolls_the_statement_back(tmp_path):
    env = env_for(tmp_path)
    child = spawn(['repl', '--db', 'r.fs'], tmp_path, env)
    child.expect_exact('>>> ')
    child.sendline('x = 41')
    child.expect_exact('>>> ')
    # Ctrl-C at the prompt drops the line, as in Python.
    child.send('forget this')
    child.sendintr()
    child.expect_exact('KeyboardInterrupt')
    child.expect_exact('>>> ')
    child.sendline('while true:')
    child.expect_exact('... ')
    child.sendline('    x = x + 1')
    child.expect_exact('... ')
    child.sendline('')
    busy_for(child.pid, 0.5)
    child.sendintr()
    child.expect_exact('interrupted: the statement was rolled back')
    child.expect_exact('>>> ')
    child.sendline('x')
    child.expect_exact('41')
    child.expect_exact('>>> ')
    child.sendline(':tasks')
    child.expect_exact('no live tasks')
    child.expect_exact('>>> ')
    child.sendline(':quit')
    assert finish(child) == 0


# ------------------------------------------------------------------ colour

def test_doctor_colours_only_a_terminal_and_honours_no_color(tmp_path):
    env = env_for(tmp_path, OSTINATO_LLM='scripted', OSTINATO_LLM_SCRIPT=str(tmp_path / 'none.json'))
    child = spawn(['doctor'], tmp_path, env)
    finish(child)
    assert '\x1b[32mok  \x1b[0m  python' in child.before
    assert '\x1b[31mFAIL\x1b[0m  scripted' in child.before
    child = spawn(['doctor'], tmp_path, dict(env, NO_COLOR='1'))
    finish(child)
    assert 'ok    python' in child.before and '\x1b[' not in child.before
    r = ost('doctor', cwd=tmp_path, env=env)
    assert '\x1b[' not in r.stdout and r.stdout.startswith('ok    python')


def test_a_reply_quoting_escape_codes_shows_them_escaped_on_the_terminal(tmp_path):
    """What a skill prints on a person's terminal may quote a user or the
    model: an escape code in it is shown, not acted on (issue 29, item 9).
    A run into a file or a pipe prints exactly the text (test_serve.py)."""
    shutil.copy(HERE / 'telegram' / 'counter.ost', tmp_path)
    child = spawn(['run', 'counter.ost'], tmp_path, env_for(tmp_path))
    child.expect_exact('> ')
    child.sendline('a \x1b]0;pwned\x07 b')
    child.expect_exact('1: a \\x1b]0;pwned\\x07 b')
    child.expect_exact('> ')
    child.sendeof()
    assert finish(child) == 0
