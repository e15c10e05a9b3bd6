"""Bytecode is part of the stored format (DESIGN.md §3): opcode numbers are
fixed forever, every Code records its bytecode version, and stored code of
another version is translated as it loads, or its task is stopped with a
message that says what to do -- never run as other instructions."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path


from ostinato.compiler import code as C
from ostinato.compiler.code import BYTECODE_VERSION, COMPILER_VERSION, Code
from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store

HERE = Path(__file__).resolve().parent
BIN = os.path.join(os.path.dirname(sys.executable), 'ostinato')

# The table as released.  Change nothing here: add new opcodes at new
# numbers, and move removed ones to RETIRED.
PINNED = {
    0: 'LOAD_LOCAL', 1: 'STORE_LOCAL', 2: 'CONST', 3: 'LOAD_GLOBAL', 4: 'STORE_GLOBAL',
    5: 'JUMP_IF_FALSE', 6: 'JUMP', 7: 'CALL', 8: 'RETURN', 9: 'ADD', 10: 'SUB', 11: 'LT',
    12: 'LE', 13: 'GT', 14: 'GE', 15: 'EQ', 16: 'NE', 17: 'MUL', 18: 'POP', 19: 'FOR_ITER',
    20: 'LOAD_OUTER', 21: 'FIELD', 22: 'INDEX', 23: 'STORE_FIELD', 24: 'STORE_INDEX',
    25: 'JUMP_IF_TRUE', 26: 'DIV', 27: 'FLOORDIV', 28: 'MOD', 29: 'POW', 30: 'IN',
    31: 'NOT_IN', 32: 'NEG', 33: 'NOT', 34: 'KNOWN', 35: 'DUP', 36: 'ROT2', 37: 'ROT3',
    38: 'JUMP_IF_FALSE_OR_POP', 39: 'JUMP_IF_TRUE_OR_POP', 40: 'JUMP_IF_NOT_NONE_OR_POP',
    41: 'JUMP_IF_NOT_NONE', 42: 'BUILD_LIST', 43: 'BUILD_TUPLE', 44: 'BUILD_MAP',
    45: 'BUILD_SET', 46: 'BUILD_SPAN', 47: 'BUILD_STRING', 48: 'FORMAT', 49: 'LIST_APPEND',
    50: 'MAP_ADD', 51: 'SET_ADD', 52: 'GET_ITER', 54: 'JUMP_UNWIND', 55: 'MAKE_FUNCTION',
    56: 'DEF_GLOBAL', 57: 'CURRY', 58: 'SETUP_TRY', 59: 'POP_TRY', 60: 'LOAD_SPECIAL',
    61: 'TYPE', 62: 'IMPORT', 63: 'FROM_IMPORT', 64: 'SPAWN', 65: 'WATCH_BEGIN',
    66: 'WATCH_END_BANG', 67: 'WATCH_END_UNTIL', 68: 'WATCH_END_WHILE', 69: 'LOAD_GLOBAL_NS',
    70: 'RETURN_LOCAL', 71: 'RETURN_CONST',
}
PINNED_RETIRED = {53: 'POP_ITERS'}


def test_opcode_numbers_are_pinned():
    table = {num: name for num, name, _, _ in C.OPCODES}
    for num, name in PINNED.items():
        assert table.get(num) == name, 'opcode %d was %s; numbers are never changed' % (num, name)
        assert getattr(C, name) == num
    for num, name in PINNED_RETIRED.items():
        assert C.RETIRED.get(num) == name, 'retired opcode %d must stay retired' % num
    assert not set(table) & set(C.RETIRED), 'a retired number was reused'
    assert len(set(table.values())) == len(table), 'two opcodes share a name'
    # New opcodes may be added, after everything taken so far.
    new = set(table) - set(PINNED)
    assert all(n > max(PINNED) for n in new)


def test_every_opcode_is_documented():
    for num, name, operand, effect in C.OPCODES:
        assert operand and effect and '--' in effect, name


def test_compiled_code_uses_only_table_opcodes():
    from ostinato.compiler.compiler import compile_module
    from ostinato.syntax import parse
    seen = set()

    def walk(code):
        for op, arg in code.instrs:
            assert op in C.OPNAMES, (code.name, op)
            seen.add(op)
            for a in (arg if isinstance(arg, tuple) else (arg,)):
                if isinstance(a, Code):
                    walk(a)
    sources = list((HERE / 'corpus').glob('*.ost')) + list((HERE.parent / 'stdlib').glob('*.ost'))
    for path in sources:
        text = path.read_text(encoding='utf-8')
        try:
            tree = parse(text, path.name)
        except Exception:
            continue            # the corpus's syntax-error programs
        walk(compile_module(tree, text, path.name, path.stem))
    assert not seen & set(C.RETIRED)


def test_code_records_its_versions():
    from ostinato.compiler.compiler import compile_module
    from ostinato.syntax import parse
    code = compile_module(parse('x = 1\n', 'a.ost'), 'x = 1\n', 'a.ost', 'a')
    assert code.bytecode == BYTECODE_VERSION
    assert code.compiler == COMPILER_VERSION


def test_cache_key_has_the_versions(tmp_path):
    prog = tmp_path / 'p.ost'
    prog.write_text('print("hi")\n')
    store = Store(str(tmp_path / 'db.fs'))
    try:
        assert run_file(str(prog), io.StringIO(), io.StringIO(), store=store) == 0
        keys = list(store.world.compiled.keys())
        assert keys and all(k[3:] == (BYTECODE_VERSION, COMPILER_VERSION) for k in keys), keys
    finally:
        store.close()


# ------------------------------------------- stored code of another version

WAITING = '''\
x = 20
sleep(0.05)
print(x + 22)
'''


def _waiting_database(tmp_path):
    """A database whose main task sleeps in the middle of WAITING, and the
    stored Code of its top level."""
    prog = tmp_path / 'w.ost'
    prog.write_text(WAITING)
    db = tmp_path / 'db.fs'
    env = dict(os.environ, OSTINATO_DB=str(db), OSTINATO_TEST_EXIT_AT_SUSPEND='1')
    p = subprocess.run([BIN, 'run', str(prog)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 75 and p.stdout == '', p.stderr
    return prog, db


def _rewrite_stored_code(db, fn):
    """Change the stored top-level Code of the main task as an older (or
    newer) Ostinato would have written it."""
    store = Store(str(db))
    try:
        code = store.world.main_task.frame.code
        fn(code)
        code._p_changed = True
        store.commit()
    finally:
        store.close()


def _as_version_0(code):
    # Pretend version 0 numbered ADD 99.
    code.instrs = tuple((99 if op == C.ADD else op, arg) for op, arg in code.instrs)
    code.bytecode = 0


def _run(prog, db):
    out, err = io.StringIO(), io.StringIO()
    store = Store(str(db))
    try:
        status = run_file(str(prog), out, err, store=store)
    finally:
        store.close()
    return status, out.getvalue(), err.getvalue()


def test_older_code_is_translated_as_it_loads(tmp_path, monkeypatch):
    prog, db = _waiting_database(tmp_path)
    _rewrite_stored_code(db, _as_version_0)

    def from_0(instrs, positions):
        return [(C.ADD if op == 99 else op, arg) for op, arg in instrs], positions
    monkeypatch.setitem(C.BYTECODE_MIGRATIONS, 0, from_0)
    status, out, err = _run(prog, db)
    assert (status, out) == (0, '42\n'), err


def test_code_that_cannot_be_translated_stops_its_task(tmp_path):
    prog, db = _waiting_database(tmp_path)
    _rewrite_stored_code(db, _as_version_0)
    status, out, err = _run(prog, db)
    assert status == 70 and out == ''
    first = err.splitlines()[0]
    assert first.startswith('w.ost:2:'), err
    assert 'task 1 (w) cannot continue' in first
    assert 'compiled for bytecode 0' in first
    assert 'Finish it with the Ostinato that started it' in first
    assert 'ostinato tasks cancel 1' in first
    assert 'Traceback' not in err


def test_code_from_a_newer_ostinato_is_refused(tmp_path):
    prog, db = _waiting_database(tmp_path)

    def newer(code):
        code.bytecode = BYTECODE_VERSION + 1
    _rewrite_stored_code(db, newer)
    status, out, err = _run(prog, db)
    assert status == 70 and out == ''
    assert 'compiled by a newer Ostinato' in err and 'Traceback' not in err
