"""The conformance corpus (tests/corpus), run in-process, in the
store-everything mode, and once through the real `ostinato` command."""
import os
import subprocess
import sys

import pytest

from goldens import CORPUS, check, ids, programs

PROGS = programs(CORPUS)


def test_corpus_present():
    assert len(PROGS) >= 25, 'the conformance corpus is missing: %s' % CORPUS


@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_corpus(prog):
    assert check(prog) == []


# The modes that store everything run each program again with a store or a
# commit every few instructions: a dozen seconds in all, so `make test-fast`
# runs each program once (above) and leaves these to `make test`.
@pytest.mark.slow
@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_corpus_store_everything(prog):
    """Every bit of task state survives pickling between instructions."""
    assert check(prog, store_every=7) == []


@pytest.mark.slow
@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_corpus_commit_and_reload(prog):
    """Every change is marked and committed: the run commits to a real ZODB
    every few instructions and drops its object cache, so an unmarked change
    would be lost."""
    assert check(prog, commit_every=5) == []


@pytest.mark.slow          # a process per program (and per suspension)
@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_corpus_through_the_command(prog, tmp_path):
    """Every program as `ostinato run` in a fresh folder with a fresh database."""
    assert check(prog, folder=tmp_path) == []


@pytest.mark.slow          # a process per program (and per suspension)
@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_corpus_restarted_at_every_suspension(prog, tmp_path):
    """The process ends right after every suspension is committed; running
    the program again continues it.  The outputs of all the runs together are
    the program's output."""
    from goldens import expectations
    want = expectations(prog)
    exe = os.path.join(os.path.dirname(sys.executable), 'ostinato')
    env = dict(os.environ, OSTINATO_DB=str(tmp_path / 'db.fs'), OSTINATO_TEST_EXIT_AT_SUSPEND='1')
    out = ''
    for runs in range(200):
        p = subprocess.run([exe, 'run', str(prog)], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120, stdin=subprocess.DEVNULL)
        out += p.stdout
        if p.returncode != 75:
            break
    assert out == want['out']
    assert p.returncode == want['code'], p.stderr
