"""Golden programs: NAME.ost with NAME.out (exact stdout), and optionally
NAME.code (exit status), NAME.err (first stderr line starts with it, folders
before the file name ignored) and NAME.stderr (the whole stderr).  The same
conventions as the conformance corpus in tests/corpus."""
from __future__ import annotations

import io
import re
from pathlib import Path

from ostinato.runtime.runner import run_file
from ostinato.runtime.store import Store

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / 'tests' / 'corpus'
GOLDEN = ROOT / 'tests' / 'golden'


def programs(folder):
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob('*.ost') if p.with_suffix('.out').exists())


def ids(paths):
    return [p.stem for p in paths]


def expectations(prog):
    prog = Path(prog)
    read = lambda suffix: prog.with_suffix(suffix).read_text(encoding='utf-8') \
        if prog.with_suffix(suffix).exists() else None
    code = read('.code')
    err = read('.err')
    return {
        'out': read('.out') or '',
        'code': int(code.strip()) if code else 0,
        'err': err.strip() if err is not None else None,
        'stderr': read('.stderr'),
    }


def run_in_process(prog, store_every=None, commit_every=None):
    out, err = io.StringIO(), io.StringIO()
    store = Store(memory=True) if commit_every else None
    try:
        code = run_file(str(prog), out, err, store=store, store_every=store_every,
                        commit_every=commit_every)
    finally:
        if store is not None:
            store.close()
    return out.getvalue(), err.getvalue(), code


def run_command(prog, folder):
    """Run `prog` as `ostinato run` with a fresh database in `folder`."""
    import os
    import subprocess
    import sys
    exe = os.path.join(os.path.dirname(sys.executable), 'ostinato')
    env = dict(os.environ, OSTINATO_DB=str(Path(folder) / 'ostinato.fs'))
    p = subprocess.run([exe, 'run', str(prog)], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=300)
    return p.stdout, p.stderr, p.returncode


def check(prog, store_every=None, commit_every=None, folder=None):
    """Run `prog` -- in-process, or as the `ostinato run` command in
    `folder` -- and return a list of problems (empty: it passed)."""
    want = expectations(prog)
    if folder is not None:
        out, err, code = run_command(prog, folder)
    else:
        out, err, code = run_in_process(prog, store_every, commit_every)
    problems = []
    if out != want['out']:
        got_lines, want_lines = out.splitlines(), want['out'].splitlines()
        for i in range(max(len(got_lines), len(want_lines))):
            g = got_lines[i] if i < len(got_lines) else '<missing>'
            w = want_lines[i] if i < len(want_lines) else '<missing>'
            if g != w:
                problems.append('stdout line %d: got %r, want %r' % (i + 1, g, w))
                break
        else:
            problems.append('stdout differs in line breaks: got %r' % out[-80:])
    if want['err'] is not None:
        first = err.splitlines()[0] if err.strip() else ''
        first = re.sub(r'^\S*/', '', first)
        if not first.startswith(want['err']):
            problems.append('stderr starts %r, want %r' % (first[:160], want['err']))
    if want['stderr'] is not None and err != want['stderr']:
        problems.append('stderr is %r, want %r' % (err, want['stderr']))
    if code != want['code']:
        problems.append('exit code %d, want %d' % (code, want['code']))
    if problems and err and want['err'] is None:
        problems.append('stderr tail: ' + ' | '.join(err.strip().splitlines()[-3:]))
    return problems
