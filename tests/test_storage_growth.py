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
    # Unchunked, each commit rewrote ~240 KB of references; now the list's
    # own record (the items after its last full chunk, and a short index)
    # and, when a chunk fills, that chunk and the last run of each level.
    assert per_commit < 16_000, per_commit


def test_chunked_list_survives_storage_and_change():
    c = OList.CHUNK
    items = list(range(10 * c + 8))     # ten full chunks, and 8 items in the list's record
    lst = OList(list(items))
    state = lst.__getstate__()
    assert 'items' not in state and len(state['chunks']) == 10 and state['tail'] == items[-8:]
    assert all(type(x) is ListChunk for x in state['chunks'])
    same = lst.__getstate__()['chunks']
    assert [a is b for a, b in zip(state['chunks'], same)] == [True] * 10
    lst.items[6 * c + 5] = 'changed'
    lst.items.append('new')
    after = lst.__getstate__()
    assert [a is b for a, b in zip(state['chunks'], after['chunks'])] == \
        [True] * 6 + [False] + [True] * 3
    assert after['tail'] == items[-8:] + ['new']
    copy, _ = reload(lst)
    assert copy.items == items[:6 * c + 5] + ['changed'] + items[6 * c + 6:] + ['new']
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


# ------------------------------------------------------- maps that grow with users
# The channel's map of threads gets an entry for every new dialogue (issue
# 28, item 3): adding one must cost the same among 100,000 entries as among
# 1,000, so its store compares none of the other entries and rewrites one
# record per level of the map's index, never an index as long as the map.

def _db(tmp_path):
    import ZODB
    from ZODB.FileStorage import FileStorage
    tmp_path.mkdir(parents=True, exist_ok=True)
    storage = FileStorage(str(tmp_path / 'map.fs'))
    return storage, ZODB.DB(storage)


def _last_records(storage):
    """(class name, size) of each record the last transaction wrote."""
    from ostinato.classcodes import record_class
    last = None
    for txn in storage.iterator():
        last = [(record_class(r.data)[1], len(r.data)) for r in txn]
    return last


def _add_one(monkeypatch, tmp_path, n):
    """A stored map of `n` entries gets one more (as a program's `m[k] = v`
    does): what that commit wrote, and how many chunks its store compared."""
    import transaction
    from ostinato.vm import ops, values
    from ostinato.vm.values import OMap
    storage, db = _db(tmp_path)
    conn = db.open()
    m = OMap({'thread%d' % i: OList([i]) for i in range(n)})
    conn.root()['m'] = m
    transaction.commit()
    compared = []
    real = values._same_pairs
    monkeypatch.setattr(values, '_same_pairs', lambda *a: compared.append(1) or real(*a))
    ops.map_store(m, 'new', OList(['x']))
    transaction.commit()
    records = _last_records(storage)
    conn.close()
    conn = db.open()
    back = conn.root()['m']
    assert list(back.d) == ['thread%d' % i for i in range(n)] + ['new']
    assert back.d['new'].items == ['x'] and back.d['thread7'].items == [7]
    conn.close()
    db.close()
    return records, len(compared)


@pytest.mark.parametrize('n', [1000, 100_000])
def test_adding_an_entry_to_a_big_map_compares_none_of_the_others(monkeypatch, tmp_path, n):
    records, compared = _add_one(monkeypatch, tmp_path, n)
    assert compared == 0


def test_adding_an_entry_writes_one_record_per_level_of_the_index(monkeypatch, tmp_path):
    # Pinned: the map's record, its last chunk (the new entry and its
    # value: an OList), and, among 100,000, the last run of chunks.
    small, _ = _add_one(monkeypatch, tmp_path / 'a', 1000)
    big, _ = _add_one(monkeypatch, tmp_path / 'b', 100_000)
    assert sorted(c for c, _ in small) == ['MapChunk', 'OList', 'OMap'], small
    assert sorted(c for c, _ in big) == ['IndexChunk', 'MapChunk', 'OList', 'OMap'], big
    assert max(size for c, size in big if c == 'OMap') < 600, big


def test_a_map_past_a_million_entries_keeps_every_index_record_short(monkeypatch, tmp_path):
    """With runs of 2 (INDEX), a map of 4,000 entries has the shape of one
    past a million: the runs of chunks are grouped in runs in turn, so no
    record of the index (the map's own included) holds more than 2 * INDEX
    references, and adding an entry writes one run per level."""
    from ostinato.vm import values
    from ostinato.vm.values import IndexChunk
    monkeypatch.setattr(values, 'INDEX', 2)
    records, compared = _add_one(monkeypatch, tmp_path, 4000)   # 32 chunks: 16, 8, 4 runs
    assert compared == 0
    assert sorted(c for c, _ in records) == ['IndexChunk'] * 3 + ['MapChunk', 'OList', 'OMap']
    m = values.OMap({'k%d' % i: i for i in range(4000)})
    state = m.__getstate__()
    assert len(state['index']) == 4
    seen, todo = 0, list(state['index'])
    while todo:
        run = todo.pop()
        assert len(run.chunks) <= 2
        seen += 1
        todo.extend(c for c in run.chunks if type(c) is IndexChunk)
    assert seen == 16 + 8 + 4


def test_a_map_changed_after_an_addition_stores_every_change(tmp_path):
    import transaction
    from ostinato.vm import ops
    from ostinato.vm.values import OMap
    storage, db = _db(tmp_path)
    conn = db.open()
    m = OMap({'k%d' % i: i for i in range(1000)})
    conn.root()['m'] = m
    transaction.commit()
    ops.map_store(m, 'new', 1)
    m.d['k3'] = -3                    # then anything: the store compares all
    m.changed()
    ops.map_store(m, 'k5', None)
    transaction.commit()
    ops.map_store(m, 'k7', 'seven')   # an existing key: not an addition
    ops.map_store(m, 'newer', 2)
    transaction.commit()
    expect = dict(m.d)
    conn.close()
    conn = db.open()
    back = conn.root()['m']
    assert list(back.d.items()) == list(expect.items())
    assert back.d['k3'] == -3 and 'k5' not in back.d and back.d['k7'] == 'seven'
    conn.close()
    db.close()


def test_a_map_stored_by_schema_10_loads_and_grows(monkeypatch):
    """Schema 10 stored a very long map's index as one level of runs, the
    top of it in the map's record; it loads, and its next store makes the
    tree of today, reusing its chunks."""
    from ostinato.vm import values
    from ostinato.vm.values import IndexChunk, MapChunk, OMap
    monkeypatch.setattr(values, 'INDEX', 2)
    pairs = [('k%d' % i, i) for i in range(2000)]
    chunks = [MapChunk(pairs[i:i + 128]) for i in range(0, 2000, 128)]
    old = {'index': [IndexChunk(chunks[i:i + 2]) for i in range(0, len(chunks), 2)]}
    m = OMap.__new__(OMap)
    m.__setstate__(old)
    assert list(m.d.items()) == pairs
    m.d['new'] = 1
    m.changed()
    state = m.__getstate__()
    assert len(state['index']) <= 4
    copy = OMap.__new__(OMap)
    copy.__setstate__(state)
    assert list(copy.d.items()) == pairs + [('new', 1)]
    flat = [c for _, held in values._index_levels(state['index'])[0] for c in held]
    assert flat[:-1] == chunks[:-1]      # the same records: only the last one changed
