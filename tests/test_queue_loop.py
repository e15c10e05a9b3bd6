"""`for v in q:` over a queue (docs/language.md §15.5), through the whole
loop: items already waiting are taken without a wait, an empty queue makes
the task wait (a Take) until an item is put, and waiting is an error inside
a watched expression."""
from __future__ import annotations

import io

from ostinato.runtime.runner import run_file
from ostinato.vm import requests as R
from ostinato.vm.values import OQueue
from waiting import record_suspensions

CONSUMER = '''\
q = Queue()
put(q, 'a')
put(q, 'b')
def consume(name):
    for v in q:
        print("{name} {v}")
        if v == 'stop':
            break
    return name
def main():
    print("done {consume('one')}")
spawn main()
sleep(0.01)
put(q, 'c')
put(q, 'stop')
'''


def run(tmp_path, monkeypatch, src):
    prog = tmp_path / 'prog.ost'
    prog.write_text(src)
    seen = record_suspensions(monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    status = run_file(str(prog), out=out, err=err)
    return status, out.getvalue(), err.getvalue(), seen


def test_a_queue_loop_takes_every_item_in_order_and_waits_while_empty(tmp_path, monkeypatch):
    status, out, err, seen = run(tmp_path, monkeypatch, CONSUMER)
    assert status == 0, err
    # The loop runs in a function called by another (the call that waits
    # is not the task's bottom frame).
    assert out.splitlines() == ['one a', 'one b', 'one c', 'one stop', 'done one']
    # The queue was empty after 'b' while the top level slept: main waited
    # on it (the spawner runs until it sleeps, then main runs).
    takes = [r for r in seen if type(r) is R.Take]
    assert takes and all(type(r.queue) is OQueue for r in takes)


def test_waiting_on_a_queue_in_a_watched_expression_is_an_error(tmp_path, monkeypatch):
    status, out, err, seen = run(tmp_path, monkeypatch, '''\
q = Queue()
def first():
    for v in q:
        return v
wait until first() == 1
''')
    assert status != 0
    assert 'prog.ost:3:5: error: cannot wait while evaluating a watched expression' in err
    assert 'in first' in err
    assert not [r for r in seen if type(r) is R.Take]
