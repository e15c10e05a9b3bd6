"""A list that grows by one item per commit (a thread's messages, a log)
does not rewrite its whole history: long lists are stored in chunks."""
import io
import os

import pytest

from ostinato.runtime.runner import reload, run_file
from ostinato.runtime.store import Store
from ostinato.vm.values import ListChunk, OList

BUILD = '''type Message:
    val text
type Thread:
    var messages
thread = Thread(messages = [])
for i in 0..10000:
    append(thread.messages, Message(text = "message number {i}"))
'''

GROW = '''import history
for i in 0..40:
    append(history.thread.messages, history.Message(text = "later {i}"))
    sleep(0.001)      -- a commit each (sleep(0) turns may share one)
history.thread.messages[3] = history.Message(text = 'edited')
ms = history.thread.messages
print(length(ms), ms[0].text, ms[3].text, ms[10000].text, ms[-1].text)
'''


def run(path, db, monkeypatch, tmp_path):
    monkeypatch.setenv('OSTINATO_PATH', str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    store = Store(str(db))
    try:
        assert run_file(str(path), out, err, store=store) == 0, err.getvalue()
    finally:
        store.close()
    return out.getvalue()


def test_each_append_writes_a_bounded_amount(tmp_path, monkeypatch):
    db = tmp_path / 'db.fs'
    (tmp_path / 'history.ost').write_text(BUILD)
    (tmp_path / 'grow.ost').write_text(GROW)
    run(tmp_path / 'history.ost', db, monkeypatch, tmp_path)
    before = os.path.getsize(db)
    out = run(tmp_path / 'grow.ost', db, monkeypatch, tmp_path)
    assert out == '10040 message number 0 edited later 0 later 39\n'
    per_commit = (os.path.getsize(db) - before) / 41
    # Unchunked, each commit rewrote ~240 KB of references; now one chunk
    # (at most 256 items) and a short index.
    assert per_commit < 16_000, per_commit


def test_chunked_list_survives_storage_and_change():
    items = list(range(1000))
    lst = OList(list(items))
    state = lst.__getstate__()
    assert 'items' not in state and len(state['chunks']) == 4
    assert all(type(c) is ListChunk for c in state['chunks'])
    same = lst.__getstate__()['chunks']
    assert [a is b for a, b in zip(state['chunks'], same)] == [True] * 4
    lst.items[600] = 'changed'
    lst.items.append('new')
    after = lst.__getstate__()['chunks']
    assert [a is b for a, b in zip(state['chunks'], after)] == [True, True, False, False]
    copy, _ = reload(lst)
    assert copy.items == items[:600] + ['changed'] + items[601:] + ['new']
    short = OList([1, 2])
    assert short.__getstate__() == ([1, 2],)       # a short list: its items, in a tuple


MAP_BUILD = '''type User:
    val name
users = [:]
for i in 0..10000:
    users["user{i}"] = User(name = "user number {i}")
'''

MAP_GROW = '''import table
for i in 0..40:
    table.users["later{i}"] = table.User(name = "later {i}")
    sleep(0.001)      -- a commit each (sleep(0) turns may share one)
table.users["user3"] = table.User(name = 'edited')
table.users["user5"] = none
u = table.users
print(length(u), u["user0"].name, u["user3"].name, u["user5"], u["later39"].name)
'''


@pytest.mark.slow
def test_each_new_map_entry_writes_a_bounded_amount(tmp_path, monkeypatch):
    """A map that grows by one entry per commit (a channel's threads by id)
    writes one chunk and a short index, not all its entries again."""
    db = tmp_path / 'db.fs'
    (tmp_path / 'table.ost').write_text(MAP_BUILD)
    (tmp_path / 'grow.ost').write_text(MAP_GROW)
    run(tmp_path / 'table.ost', db, monkeypatch, tmp_path)
    before = os.path.getsize(db)
    out = run(tmp_path / 'grow.ost', db, monkeypatch, tmp_path)
    assert out == '10039 user number 0 edited none later 39\n'
    per_commit = (os.path.getsize(db) - before) / 41
    # Unchunked, each commit rewrote ~300 KB of keys and references.
    assert per_commit < 16_000, per_commit


def test_chunked_map_keeps_its_order_through_storage_and_change():
    from ostinato.vm.values import MapChunk, OMap
    m = OMap({'k%d' % i: i for i in range(1000)})
    state = m.__getstate__()
    assert 'd' not in state and all(type(c) is MapChunk for c in state['chunks'])
    first = state['chunks']
    m.d['k500'] = -1
    again = m.__getstate__()['chunks']
    changed = [i for i, (a, b) in enumerate(zip(first, again)) if a is not b]
    assert changed == [500 // OMap.CHUNK]
    del m.d['k10']                       # a deletion rewrites its own chunk only
    m.d['new'] = 1                       # an addition the last one
    third = m.__getstate__()['chunks']
    assert len(third) == len(again)
    changed = [i for i, (a, b) in enumerate(zip(again, third)) if a is not b]
    assert changed == [0, len(third) - 1]
    copy = OMap.__new__(OMap)
    copy.__setstate__(m.__getstate__())
    assert list(copy.d.items()) == list(m.d.items())


def test_very_long_lists_and_maps_survive_the_store_everything_reload(monkeypatch):
    """A very long list or map is stored as runs of chunks (vm/values.py
    INDEX); the test mode that stores and reloads everything
    (runtime/runner.py `reload`) sets their states in an order that lets
    each join what it names."""
    from ostinato.vm import values
    from ostinato.vm.values import OMap
    monkeypatch.setattr(values, 'INDEX', 2)
    lst = OList(list(range(2000)))
    m = OMap({'k%d' % i: OList([i]) for i in range(1000)})
    holder = OList([lst, m])
    assert 'index' in lst.__getstate__() and 'index' in m.__getstate__()
    copy, _ = reload(holder)
    lst2, m2 = copy.items
    assert lst2.items == list(range(2000))
    assert list(m2.d) == list(m.d) and [v.items for v in m2.d.values()] == [[i] for i in range(1000)]
