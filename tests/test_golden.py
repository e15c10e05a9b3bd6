"""Golden programs under tests/golden/FEATURE/, one small program per rule,
run in-process and in the store-everything mode (every persistent object
stored and reloaded after every instruction)."""
import pytest

from goldens import GOLDEN, check, ids, programs

PROGS = programs(GOLDEN)


def test_goldens_present():
    assert len(PROGS) >= 50


@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_golden(prog):
    assert check(prog) == []


# Storing and reloading every object after every instruction: some twenty
# seconds for all of them, so `make test-fast` leaves it to `make test`.
@pytest.mark.slow
@pytest.mark.parametrize('prog', PROGS, ids=ids(PROGS))
def test_golden_store_everything(prog):
    assert check(prog, store_every=1) == []
