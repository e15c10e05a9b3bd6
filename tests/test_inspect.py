"""`ostinato tasks` and `ostinato db`: programs run in-process on a
FileStorage, the store closed, then the command looks at the database.

The scheduler is driven by hand (`drive`) so a task that sleeps for an hour
is left sleeping instead of being waited for.
"""
import io
import os
import re
import time

import pytest
from click.testing import CliRunner

from ostinato.cli import main
from ostinato.compiler.code import BYTECODE_VERSION, Code
from ostinato.runtime import report
from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.txn import StoreTransactions
from ostinato.runtime.store import Store
from ostinato.runtime.world import SCHEMA_VERSION, Watch, World
from ostinato.vm.values import Frame, Function, OModule, OObject, OQueue, OType, Task

HELPER = '''\
{| Helper things. |}

{| Wait for the box to fill. |}
def wait_box(box):
    n = 41
    wait until box.v == 1
    return n
'''

PROG = '''\
{| Demo program. |}
import helper

type Box:
    var v

box = Box()
q = Queue()

{| Watch the box. |}
def watcher(b):
    label = 'watching ' * 20
    return helper.wait_box(b)

{| Nap a while. |}
def napper():
    sleep(3600)

def taker():
    return take(q)

spawn watcher(box)
spawn napper()
spawn taker()
spawn:
    for v in <box.v>:
        print(v)
print('main done')
'''


def drive(store, path=None, upgrade=False):
    """Run the ready tasks of the store's world until none is ready (sleepers
    that are not due stay asleep), committing each turn."""
    out, err = io.StringIO(), io.StringIO()
    sched = Scheduler(store.world, out=out, err=err)
    sched.txn = StoreTransactions(store)
    sched.recover()
    if path is not None:
        sched.start_main(os.path.abspath(path))
    if upgrade:
        sched.upgrade_all()
    store.commit()
    w = store.world
    while True:
        for t in w.due_timers(time.time()):
            sched.make_ready(t)
        if not w.ready:
            break
        task = w.ready.popleft()
        sched.turn(task)
    store.commit()
    return out.getvalue(), err.getvalue()


def invoke(*args):
    """Run the command; the result has separate stdout and stderr."""
    try:
        runner = CliRunner(mix_stderr=False)     # click < 8.2
    except TypeError:
        runner = CliRunner()                     # click >= 8.2 keeps them apart
    return runner.invoke(main, list(args))


def cli(*args):
    r = invoke(*args)
    return r.exit_code, r.stdout


@pytest.fixture
def demo(tmp_path):
    (tmp_path / 'helper.ost').write_text(HELPER)
    prog = tmp_path / 'prog.ost'
    prog.write_text(PROG)
    db = str(tmp_path / 'demo.fs')
    store = Store(db)
    try:
        out, err = drive(store, prog)
    finally:
        store.close()
    assert out == 'main done\nnone\n', (out, err)
    return tmp_path, db


def lines_by_name(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r'\s*(\d+)\s+(\S+)\s+(\S+)\s+(.*)$', line)
        assert m, line
        out[m.group(2)] = (int(m.group(1)), m.group(3), m.group(4))
    return out


def test_tasks_lists_live_tasks(demo):
    _, db = demo
    code, out = cli('tasks', '--db', db)
    assert code == 0, out
    tasks = lines_by_name(out)
    assert set(tasks) == {'watcher', 'napper', 'taker', '<spawn>'}
    assert all(state == 'waiting' for _, state, _ in tasks.values())
    since = r', since [-\d: ]+ \((\d+(\.\d)? s) ago\)'

    rest = tasks['watcher'][2]
    assert re.match(r'waiting for a change of <Box> \(read by `wait until`\)' + since
                    + r'  goals: Watch the box\. > Wait for the box to fill\.$', rest), rest
    rest = tasks['napper'][2]
    # What it waits for in words first, then how.
    assert re.match(r'time \(until \d{4}-\d\d-\d\dT\d\d:\d\d\) -- '
                    r'sleeping until [-\d: ]+ \(in (59 min( \d+ s)?|1 h)\)' + since
                    + r'  goals: Nap a while\.$', rest), rest
    rest = tasks['taker'][2]
    # No blurb: the goal name stands in.
    assert re.match(r'waiting for an item from <queue 0>' + since + r'  goals: taker$', rest), rest
    rest = tasks['<spawn>'][2]
    assert re.match(r'waiting for a change of .*<Box>.* \(read by a reactive `for`\)'
                    + since + r'  goals: <spawn>$', rest), rest
    assert '[old code]' not in out


def test_task_detail_shows_frames(demo):
    _, db = demo
    _, out = cli('tasks', '--db', db)
    tid = lines_by_name(out)['watcher'][0]
    code, out = cli('tasks', str(tid), '--db', db)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == 'task %d watcher: waiting' % tid
    assert lines[1].startswith('  waiting for a change of <Box> (read by `wait until`), since ')
    assert lines[2] == 'goals: Watch the box. > Wait for the box to fill.'
    assert lines[3] == 'frames, innermost first:'
    # The innermost frame is parked at its `wait until`; the caller at its call.
    assert lines[4] == '  helper.ost:6:5 in wait_box -- Wait for the box to fill.'
    assert lines[5] == '      box = Box()'
    assert lines[6] == '      n = 41'
    assert lines[7] == '  prog.ost:13:12 in watcher -- Watch the box.'
    assert lines[8] == '      b = Box()'
    # Long values are cut short.
    assert lines[9].startswith("      label = 'watching watching")
    assert lines[9].endswith('...') and len(lines[9]) < 120


def test_unknown_task_id(demo):
    _, db = demo
    r = invoke('tasks', '999', '--db', db)
    assert r.exit_code == 2
    assert 'no task with id 999' in r.stderr
    assert r.stdout == ''


def test_missing_database(tmp_path):
    r = invoke('tasks', '--db', str(tmp_path / 'no.fs'))
    assert r.exit_code == 2
    assert 'no database at' in r.stderr
    assert not (tmp_path / 'no.fs').exists()


def test_memory_database_has_no_tasks():
    code, out = cli('tasks', '--memory')
    assert code == 0
    assert out == 'no live tasks\n'


def test_tasks_reads_without_taking_the_lock(demo):
    """A database held by a running process (its lock taken) can still be
    looked at: the command opens it read-only."""
    _, db = demo
    store = Store(db)
    try:
        code, out = cli('tasks', '--db', db)
    finally:
        store.close()
    assert code == 0, out
    assert 'napper' in out


def test_old_code_after_upgrade(demo):
    tmp_path, db = demo
    helper = tmp_path / 'helper.ost'
    helper.write_text(HELPER.replace('Wait for the box to fill.', 'Wait for a full box.')
                      + '\nversion = 2\n')
    # Before the upgrade the file differs from what was loaded.
    code, out = cli('db', 'info', '--db', db)
    assert re.search(r'^  helper\s+\S+helper\.ost\s+changed$', out, re.M), out
    store = Store(db)
    try:
        drive(store, upgrade=True)
        assert store.world.modules['helper'].ns['version'] == 2
    finally:
        store.close()
    code, out = cli('tasks', '--db', db)
    tasks = lines_by_name(out)
    assert tasks['watcher'][2].endswith(
        'goals: Watch the box. > Wait for the box to fill.  [old code]'), out
    assert '[old code]' not in tasks['napper'][2]
    code, out = cli('tasks', str(tasks['watcher'][0]), '--db', db)
    assert '  helper.ost:6:5 in wait_box -- Wait for the box to fill.  [old code]' in out
    assert '  prog.ost:13:12 in watcher -- Watch the box.\n' in out
    code, out = cli('db', 'info', '--db', db)
    assert re.search(r'^  helper\s+\S+helper\.ost\s+unchanged$', out, re.M), out


def test_failed_main_task(tmp_path):
    prog = tmp_path / 'bad.ost'
    prog.write_text('{| Doomed. |}\ndef f(x):\n    return x + none\nf(1)\n')
    db = str(tmp_path / 'bad.fs')
    store = Store(db)
    try:
        _, err = drive(store, prog)
        tid = store.world.main_task.id
    finally:
        store.close()
    assert 'error' in err
    code, out = cli('tasks', '--db', db)
    assert out == 'no live tasks\n'
    code, out = cli('tasks', str(tid), '--db', db)
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == 'task %d bad (the main task): failed' % tid
    assert re.match(r'error: bad\.ost:3:\d+: ', lines[2]), out
    assert '  at bad.ost:3:' in out and '  at bad.ost:4:' in out


def test_db_info(demo):
    tmp_path, db = demo
    code, out = cli('db', 'info', '--db', db)
    assert code == 0, out
    assert re.search(r'^storage:\s+FileStorage .*demo\.fs$', out, re.M), out
    assert re.search(r'^size:\s+[\d.]+ (bytes|KiB|MiB)$', out, re.M), out
    assert re.search(r'^objects:\s+\d+$', out, re.M), out
    assert re.search(r'^transactions:\s+\d+$', out, re.M), out
    assert re.search(r'^schema version:\s+%d$' % SCHEMA_VERSION, out, re.M), out
    assert re.search(r'^bytecode version:\s+%d$' % BYTECODE_VERSION, out, re.M), out
    assert re.search(r'^live tasks:\s+4 \(4 waiting\)$', out, re.M), out
    assert re.search(r'^timers:\s+1$', out, re.M), out
    assert re.search(r'^watches:\s+2$', out, re.M), out
    assert re.search(r'^modules: 2$', out, re.M), out
    assert re.search(r'^  prog\s+\S+prog\.ost\s+unchanged$', out, re.M), out


def test_db_pack_prunes_ended_tasks(demo):
    tmp_path, db = demo
    store = Store(db)
    try:
        w = store.world
        # An ended task left behind in the indexes (as an older runtime or
        # a crash between two commits could leave it).
        t = Task(w.new_task_id(), 'ghost', None)
        t.done, t.state = True, 'done'
        w.tasks[t.id] = t
        w.add_timer(time.time() + 60, t)
        store.commit()
    finally:
        store.close()
    code, out = cli('db', 'info', '--db', db)
    before = int(re.search(r'^transactions:\s+(\d+)$', out, re.M).group(1))
    code, out = cli('db', 'pack', '--db', db)
    assert code == 0, out
    assert 'pruned 1 ended task\n' in out
    m = re.search(r'packed \S+demo\.fs: ([\d.]+ \S+) -> ([\d.]+ \S+)', out)
    assert m, out
    code, out = cli('tasks', '--db', db)
    assert 'ghost' not in out and len(out.splitlines()) == 4
    code, out = cli('db', 'info', '--db', db)
    assert re.search(r'^timers:\s+1$', out, re.M), out
    # Transactions left with no current record are gone.
    after = int(re.search(r'^transactions:\s+(\d+)$', out, re.M).group(1))
    assert after < before


# ------------------------------------------------------------- pure functions

def _code(name, kind='def', summary=None, varnames=(), source_hash='h1', instrs=None):
    n = len(instrs) if instrs else 3
    return Code(name, kind, 'm.ost', 1, 1, instrs or [(0, None)] * n,
                [(i + 1, 5) for i in range(n)], (), varnames, summary=summary,
                source_hash=source_hash)


def _frame(code, goal, module, caller=None, pc=2, locals_=()):
    f = Frame(code, goal, module, None, caller)
    f.pc = pc
    f.locals = list(locals_) + [None] * (code.nlocals - len(locals_))
    return f


def test_old_code_rules():
    m = OModule('m', '/nowhere/m.ost')
    m.code = _code('m', 'module', 'Module.', source_hash='h1')
    top = _frame(m.code, m, m)
    fn = Function(_code('f', summary='Do f.'), None, m)
    f_frame = _frame(fn.code, fn, m, caller=top)
    task = Task(1, 'm', f_frame)
    assert report.goal_stack(task) == ['Module.', 'Do f.']
    assert report.old_frames(task) == []
    # An upgrade: new module code, the function's code replaced in place.
    old_f = fn.code
    m.code = _code('m', 'module', 'Module, v2.', source_hash='h2')
    fn.code = _code('f', summary='Do f, v2.', source_hash='h2')
    assert report.old_frames(task) == [f_frame, top]
    # The frames keep the blurbs of the code they run.
    assert report.goal_stack(task) == ['Module.', 'Do f.']
    # A lambda made by old code runs old code though it is its function's code.
    lam = Function(_code('<lambda>', 'lambda', source_hash='h1'), f_frame, m)
    lam_frame = _frame(lam.code, lam, m)
    assert report.is_old_code(lam_frame)
    new_lam = Function(_code('<lambda>', 'lambda', source_hash='h2'), None, m)
    assert not report.is_old_code(_frame(new_lam.code, new_lam, m))
    assert old_f is not fn.code


def test_describe_waits():
    now = time.mktime((2024, 5, 6, 10, 0, 0, 0, 0, -1))
    task = Task(7, 't', None)
    assert report.describe_wait(task, now) == 'ready'
    task.state = 'waiting'
    task.waiting = ('import', 'helper')
    assert report.describe_wait(task, now) == 'waiting for module helper'
    task.waiting = ('sleep', now + 2 * 3600 + 3 * 60 + 4)
    assert report.describe_wait(task, now) == (
        'time (until 2024-05-06T12:03) -- sleeping until 12:03:04 (in 2 h 3 min)')
    task.waiting = ('sleep', now - 5)
    assert report.describe_wait(task, now) == (
        'time (until 2024-05-06T09:59) -- sleeping until 09:59:55 (overdue by 5 s)')
    task.waiting = ('take', OQueue())
    assert report.describe_wait(task, now) == 'waiting for an item from <queue 0>'
    box = OObject(OType('Box'))
    from ostinato.compiler import code as ops
    wcode = _code('w', instrs=[(ops.WATCH_BEGIN, None), (ops.LOAD_LOCAL, 0),
                               (ops.WATCH_END_WHILE, 0), (ops.RETURN, None)])
    task.frame = _frame(wcode, None, None, pc=0)
    task.waiting = Watch(1, task, [box, OModule('m'), box, box], 'change')
    assert report.describe_wait(task, now) == (
        'waiting for a change of <Box> or <module m> or <Box> or 1 more (read by `wait while`)')
    thread = OObject(OType('Thread'), {'id': 'telegram:42'})
    task.waiting = Watch(3, task, [thread], 'change')
    assert report.describe_wait(task, now) == (
        'waiting for a change of <Thread telegram:42> (read by `wait while`)')
    task.waiting = Watch(2, task, [], 'change')
    assert report.describe_wait(task, now) == 'waiting forever (`wait while` read no object)'
    task.since = now - 300
    assert report.since_text(task, now) == '09:55:00 (5 min ago)'


def test_duration():
    assert report.duration(0.25) == '0.2 s' or report.duration(0.25) == '0.3 s'
    assert report.duration(42) == '42 s'
    assert report.duration(125) == '2 min 5 s'
    assert report.duration(7380) == '2 h 3 min'
    assert report.duration(3 * 86400 + 7200) == '3 d 2 h'


def test_unknown_task_is_a_key_error():
    w = World()
    with pytest.raises(KeyError) as e:
        report.task_text(w, 5)
    assert str(e.value) == 'no task with id 5'


# ------------------------------------------------------------------ waits in words

def _chat_thread(name, texts):
    """A chat thread as the channels module makes it: (sender, text) pairs,
    the bot's with sender None."""
    user = OObject(OType('User'), {'id': name, 'name': name})
    from ostinato.vm.values import OList
    messages = OList([OObject(OType('Message'), {'sender': user if who else None, 'text': text})
                      for who, text in texts])
    return OObject(OType('Thread'), {'id': 'console', 'user': user, 'messages': messages})


def test_waits_in_words_come_before_how():
    """A dialogue waiting on a chat thread waits for the user's reply to
    the bot's last message there; agent() for the model's reply; a task
    waiting for another's end says what that one waits for."""
    from ostinato.compiler import code as ops
    from ostinato.effects.channels import chat  # noqa: F401 -- registers its words
    from ostinato.effects.llm import queue  # noqa: F401
    now = time.mktime((2024, 5, 6, 10, 0, 0, 0, 0, -1))
    wcode = _code('w', instrs=[(ops.WATCH_BEGIN, None), (ops.LOAD_LOCAL, 0),
                               (ops.WATCH_END_UNTIL, 0), (ops.RETURN, None)])
    dialogue = Task(9, 'dialogue', None)
    dialogue.state = 'waiting'
    dialogue.frame = _frame(wcode, None, None, pc=0)
    thread = _chat_thread('ann', [(1, 'Had lunch'), (0, 'When, roughly, was lunch?'),
                                  (1, 'hmm')])
    dialogue.waiting = Watch(1, dialogue, [OModule('channels'), thread,
                                           thread.vals['messages']], 'change')
    assert report.describe_wait(dialogue, now).startswith(
        "ann's reply to: When, roughly, was lunch? -- waiting for a change of <module channels> "
        "or <Thread console> or ")
    assert report.task_data(dialogue, None, now)['waits_for'] == \
        "ann's reply to: When, roughly, was lunch?"
    # A long question is cut short; before the bot said anything, the next message.
    long = _chat_thread('bo', [(0, 'x' * 200)])
    dialogue.waiting = Watch(2, dialogue, [long], 'change')
    words = report.waits_for(dialogue, now)
    assert words.startswith("bo's reply to: xxx") and words.endswith('...') and len(words) < 80
    dialogue.waiting = Watch(3, dialogue, [_chat_thread('cy', [(1, 'hi')])], 'change')
    assert report.waits_for(dialogue, now) == "cy's next message"
    # The task that runs the dialogue waits for its end.
    dialogue.waiting = Watch(1, dialogue, [thread], 'change')
    converse = Task(8, 'converse', None)
    converse.state = 'waiting'
    converse.frame = _frame(wcode, None, None, pc=0)
    converse.waiting = Watch(4, converse, [dialogue], 'change')
    assert report.describe_wait(converse, now) == (
        "task 9 dialogue to end; it waits for ann's reply to: When, roughly, was lunch? -- "
        "waiting for a change of <task dialogue> (read by `wait until`)")
    dialogue.waiting = ('llm', 12)
    assert report.describe_wait(dialogue, now) == 'the model (request 12) -- waiting for llm 12'
    assert report.waits_for(converse, now) == \
        'task 9 dialogue to end; it waits for the model (request 12)'
    # A wait nobody has words for is said as before; a ready task has none.
    dialogue.waiting = ('take', OQueue())
    assert report.describe_wait(dialogue, now) == 'waiting for an item from <queue 0>'
    assert report.waits_for(dialogue, now) is None
    dialogue.state = 'ready'
    assert report.waits_for(dialogue, now) is None


CHAT = '''\
import channels

ann = channels.User(id = 'ann', name = 'ann')
t = channels.Thread(id = 'console', channel = 'nowhere', user = ann, messages = [])
channels.threads['console'] = t
channels.send_message_to_thread(t, 'When, roughly, was lunch?')

def dialogue(thread):
    return channels.wait_for_new_messages_on_thread(thread)

spawn dialogue(t)
'''


def test_tasks_says_whose_reply_a_dialogue_waits_for(tmp_path):
    """`ostinato tasks` (and --json) on a database where a dialogue waits
    for the user's answer: the user's name and the bot's question first."""
    prog = tmp_path / 'chat.ost'
    prog.write_text(CHAT)
    db = str(tmp_path / 'chat.fs')
    store = Store(db)
    try:
        drive(store, prog)
    finally:
        store.close()
    code, out = cli('tasks', '--db', db)
    assert code == 0, out
    line = lines_by_name(out)['dialogue'][2]
    assert line.startswith("ann's reply to: When, roughly, was lunch? -- waiting for a change "
                           "of "), line
    code, out = cli('tasks', '--db', db, '--json')
    import json
    data = [t for t in json.loads(out) if t['name'] == 'dialogue'][0]
    assert data['waits_for'] == "ann's reply to: When, roughly, was lunch?"
    assert data['waiting'].startswith(data['waits_for'] + ' -- waiting for a change of ')
