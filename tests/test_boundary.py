"""The VM–runtime boundary: the VM reaches the runtime only through the
members `Host` (vm/host.py) lists, the Scheduler provides every one, and
what a waiting task asks for is one of vm/requests.py's records, each of
which the scheduler turns into a wait."""
from __future__ import annotations

import dataclasses
import io
import os
import re

import pytest

from ostinato.runtime.runner import run_file
from ostinato.runtime.scheduler import Scheduler
from ostinato.vm import requests as R
from ostinato.vm.host import Host
from waiting import record_suspensions

VM_DIR = os.path.dirname(R.__file__)


def host_members():
    return {n for n in dir(Host) if not n.startswith('_')} | set(Host.__annotations__)


def test_the_vm_calls_only_what_host_lists():
    used = set()
    for name in os.listdir(VM_DIR):
        if name.endswith('.py') and name != 'host.py':
            with open(os.path.join(VM_DIR, name), encoding='utf-8') as f:
                used |= set(re.findall(r'(?<![/\w])host\.([A-Za-z_]\w*)', f.read()))
    assert used, 'the scan found no host calls: the test looks in the wrong place'
    assert used <= host_members(), 'not in Host: %s' % sorted(used - host_members())


def test_the_scheduler_is_a_host():
    sched = Scheduler(out=io.StringIO(), err=io.StringIO())
    assert isinstance(sched, Host)
    for name in host_members():
        assert hasattr(sched, name), name


def test_requests_are_frozen_records_with_a_kind():
    kinds = set()
    for cls in R.Request.__subclasses__():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
        kinds.add(cls.kind)
    assert kinds == {'sleep', 'take', 'change', 'token', 'import', 'llm'}
    with pytest.raises(dataclasses.FrozenInstanceError):
        R.Sleep(1).seconds = 2


PROGRAM = '''\
type Box:
    var n = 0
box = Box()
q = Queue()
def taker():
    print("took {take(q)}")
def waiter():
    wait until box.n > 0
    print("saw {box.n}")
def looper():
    for v in <box.n>:
        print("loop {v}")
        if v > 0:
            break
spawn(taker)
spawn(waiter)
spawn(looper)
sleep(0.01)
put(q, 'x')
box.n = 1
import helper
print(helper.x)
'''


def test_every_kind_of_wait_is_handled(tmp_path, monkeypatch):
    """Sleep, Take, Change, Token and Import each become a wait the task
    comes back from (AskModel goes to the LLM service: tests/test_llm_*)."""
    (tmp_path / 'helper.ost').write_text('x = 42\n')
    prog = tmp_path / 'main.ost'
    prog.write_text(PROGRAM)
    seen = record_suspensions(monkeypatch)
    out, err = io.StringIO(), io.StringIO()
    status = run_file(str(prog), out=out, err=err)
    assert status == 0, err.getvalue()
    assert sorted(out.getvalue().splitlines()) == sorted(
        ['took x', 'saw 1', 'loop 0', 'loop 1', '42'])
    assert {R.Sleep, R.Take, R.Change, R.Token, R.Import} <= {type(r) for r in seen}
