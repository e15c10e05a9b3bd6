"""A value that cannot be stored fails its task with an error naming the
variable or field that holds it; the other tasks go on, and a restart does
not fail again (no crash loop)."""
import io
import threading

from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store
from ostinato.vm.values import BUILTINS, Builtin

PROGRAM = '''type Box:
    var held
def grab():
    b = Box(held = python_lock())
    sleep(0.05)
    print("never")
spawn grab()
spawn:
    sleep(0.1)
    print("the other task goes on")
'''


def test_unstorable_value_fails_only_its_task(tmp_path, monkeypatch):
    # Ostinato values always pickle; a Python object can only arrive through
    # a bug in an effect, which this test-only built-in stands for.
    monkeypatch.setitem(BUILTINS, 'python_lock', Builtin('python_lock', threading.Lock, ()))
    prog = tmp_path / 'unst.ost'
    prog.write_text(PROGRAM)
    db = str(tmp_path / 'db.fs')
    out, err = io.StringIO(), io.StringIO()
    store = Store(db)
    try:
        assert run_file(str(prog), out, err, store=store) == 0
    finally:
        store.close()
    assert out.getvalue() == 'the other task goes on\n'
    assert err.getvalue().startswith(
        "unst.ost:4:9: error: cannot store field 'held' of Box in variable 'b' in grab "
        "(a Python lock)\n")
    out, err = io.StringIO(), io.StringIO()
    store = Store(db)
    try:
        run_file(str(prog), out, err, store=store)
    finally:
        store.close()
    assert 'Traceback' not in err.getvalue()
