"""Golden programs under tests/golden/FEATURE/, one small program per rule,
run in-process and in the store-everything mode (every persistent object
stored and reloaded after every instruction)."""
import pytest

from goldens import GOLDEN, cases, check, ids, programs

PROGS = programs(GOLDEN)


def test_goldens_present():
    assert len(PROGS) >= 50


@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_golden(prog):
    assert check(prog) == []


@pytest.mark.parametrize('prog', cases(PROGS, slow={'functions_deep_recursion'}))
def test_golden_store_everything(prog):
    assert check(prog, store_every=1) == []
