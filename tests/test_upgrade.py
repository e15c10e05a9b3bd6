"""Code changes under waiting tasks (DESIGN.md §5, docs/language.md §16): a
module's source changes while a task is suspended inside it; the running
frame keeps its old code, later calls get the new definitions, and a
re-defined function keeps its identity (stored callbacks run the new code)."""
import io
import shutil
from pathlib import Path

from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store

HERE = Path(__file__).resolve().parent / 'upgrade'


def run(path, db):
    out, err = io.StringIO(), io.StringIO()
    store = Store(str(db))
    try:
        code = run_file(str(path), out, err, store=store)
    finally:
        store.close()
    return code, out.getvalue(), err.getvalue()


def test_task_suspended_across_a_source_change(tmp_path):
    prog = tmp_path / 'skill.ost'
    db = tmp_path / 'db.fs'
    shutil.copy(HERE / 'v1.ost', prog)
    code, out, err = run(prog, db)
    assert (code, err) == (0, '')
    assert out == 'top level v1\nworker before: v1 describes 1\n'
    shutil.copy(HERE / 'v2.ost', prog)
    code, out, err = run(prog, db)
    assert (code, err) == (0, '')
    assert out == ('top level v2\n'
                   'same identity: true\n'
                   'worker after (old frame, v1 text): v2 describes 2\n'
                   'stored callback: v2 describes 3; kept function: v2 describes 4\n')


def test_upgrade_with_a_syntax_error_keeps_the_old_version(tmp_path):
    prog = tmp_path / 'skill.ost'
    db = tmp_path / 'db.fs'
    shutil.copy(HERE / 'v1.ost', prog)
    run(prog, db)
    prog.write_text(prog.read_text() + 'if oops\n')
    code, out, err = run(prog, db)
    assert code == 65 and 'skill.ost:23:8: syntax error:' in err
    shutil.copy(HERE / 'v2.ost', prog)
    code, out, err = run(prog, db)
    assert 'worker after (old frame, v1 text): v2 describes 2' in out
