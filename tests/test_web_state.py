"""What the web channel stores (effects/web/state.py): links and sessions
only as hashes, sessions bounded per user and in time, message keys in a
BTree pruned after KEEP_KEYS."""
from __future__ import annotations

import pickle

import pytest
from BTrees.OOBTree import OOBTree

from ostinato.effects.web import state as S


def test_a_link_is_stored_only_as_its_hash_and_a_new_one_replaces_it():
    st = S.WebState()
    token = S.set_owner(st, 'ann', 'http://127.0.0.1:8765')
    assert token.encode() not in pickle.dumps(st.__getstate__()) + pickle.dumps(
        dict(st.links.items()))
    assert S.login(st, S.secret_hash(token), S.secret_hash('cookie-1')) == 'ann'
    assert S.session_user(st, S.secret_hash('cookie-1')) == 'ann'
    newer = S.new_link(st, 'ann')
    assert S.login(st, S.secret_hash(token), S.secret_hash('cookie-2')) is None
    assert S.login(st, S.secret_hash(newer), S.secret_hash('cookie-2')) == 'ann'
    assert S.session_user(st, S.secret_hash('cookie-1')) == 'ann'     # sessions stay


def test_revoke_ends_the_link_and_every_session():
    st = S.WebState()
    bo = S.new_link(st, 'bo')
    for i in range(3):
        S.login(st, S.secret_hash(bo), S.secret_hash('c%d' % i))
    assert S.revoke(st, 'bo') == 3
    assert S.session_user(st, S.secret_hash('c0')) is None
    assert S.login(st, S.secret_hash(bo), S.secret_hash('c9')) is None
    with pytest.raises(S.WebError):
        S.revoke(st, 'nobody')


def test_sessions_are_bounded_per_user_and_expire():
    st = S.WebState()
    bo = S.new_link(st, 'bo')
    for i in range(S.SESSIONS_PER_USER + 5):
        S.login(st, S.secret_hash(bo), S.secret_hash('c%d' % i), now=1000.0 + i)
    assert len(st.sessions) == S.SESSIONS_PER_USER
    assert S.session_user(st, S.secret_hash('c0'), now=2000.0) is None       # the oldest went
    last = S.secret_hash('c%d' % (S.SESSIONS_PER_USER + 4))
    assert S.session_user(st, last, now=2000.0) == 'bo'
    assert S.session_user(st, last, now=1000.0 + S.SESSION_DAYS * 86400 + 100) is None


def test_message_keys_are_kept_a_week_in_a_btree_and_pruned_a_few_at_a_time():
    st = S.WebState()
    assert isinstance(st.keys, OOBTree)
    for i in range(450):
        S.remember_key(st, 'ann', 'key-%04d' % i, 1, i, now=1000.0 + i)
    assert len(st.keys) == 450 and S.seen_key(st, 'ann', 'key-0000')[2] == 0
    later = 1000.0 + S.KEEP_KEYS + 10_000
    S.remember_key(st, 'ann', 'fresh-key', 1, 450, now=later)
    assert len(st.keys) == 450 - S.PRUNE_AT_ONCE + 1          # a bounded amount per send
    S.remember_key(st, 'ann', 'fresh-key-2', 1, 451, now=later)
    S.remember_key(st, 'ann', 'fresh-key-3', 1, 452, now=later)
    assert sorted(k for _, k in st.keys.keys()) == ['fresh-key', 'fresh-key-2', 'fresh-key-3']
    assert len(st.key_times) == 3
    assert S.seen_key(st, 'bo', 'fresh-key') is None           # keys are per user


@pytest.mark.parametrize('name', ['', ' ann', 'a' * 41, 'ann/1', 'ann:1', '-x', None])
def test_a_bad_user_name_is_refused(name):
    with pytest.raises(S.WebError):
        S.new_link(S.WebState(), name)
