"""The stored form of lists and maps is part of the stored-format contract
(tests/fixtures/README.md): these pin, byte for byte, the records that ZODB
writes for a short and a long (chunked) OList and OMap, and the records a
change to the long ones rewrites.  A change to how they are pickled must
come with a migration, not slip in with a refactoring."""
from __future__ import annotations

import hashlib

import transaction
from hypothesis import given, settings
from hypothesis import strategies as st
import ZODB
from ZODB.MappingStorage import MappingStorage

from ostinato.vm.values import OList, OMap


def committed_records():
    """Each commit's records as {oid: record bytes}, the root's left out:
    a short and a long list and map, then a change to both long ones."""
    storage = MappingStorage()
    db = ZODB.DB(storage)
    try:
        conn = db.open()
        root = conn.root()
        # `note` stands for any other attribute: it keeps its place in the
        # state, before the chunk index.
        small_list = OList([1, 'two', 3.0])
        small_list.note = 'x'
        big_list = OList(list(range(600)))
        big_list.note = 'x'
        small_map = OMap({'a': 1, 'b': 'two'})
        small_map.note = 'x'
        big_map = OMap({'k%d' % i: i for i in range(300)})
        big_map.note = 'x'
        root['small_list'] = small_list
        root['big_list'] = big_list
        root['small_map'] = small_map
        root['big_map'] = big_map
        transaction.commit()
        big_list.items[300] = 'changed'
        big_list.items.append('new')
        big_list.changed()
        big_map.d['k150'] = -1
        del big_map.d['k5']
        big_map.d['new'] = 1
        big_map.changed()
        transaction.commit()
        check = db.open(transaction.TransactionManager())
        loaded = check.root()
        assert loaded['small_list'].items == [1, 'two', 3.0]
        assert loaded['big_list'].items == (list(range(300)) + ['changed']
                                            + list(range(301, 600)) + ['new'])
        assert list(loaded['small_map'].d.items()) == [('a', 1), ('b', 'two')]
        assert list(loaded['big_map'].d.items()) == list(big_map.d.items())
        assert [o.note for o in loaded.values()] == ['x'] * 4
        check.close()
        commits = []
        for txn in list(storage.iterator())[1:]:     # the first makes the root
            commits.append({int.from_bytes(r.oid, 'big'): r.data
                            for r in txn if r.oid != b'\0' * 8})
        conn.close()
        return commits
    finally:
        transaction.abort()
        db.close()


def digests(records):
    return {oid: (len(data), hashlib.sha256(data).hexdigest()) for oid, data in records.items()}


# Each record as ZODB stores it: the class, then the state.  A long list's or
# map's state names its chunks (each a record of its own) after its other
# attributes.
SMALL_LIST = (b'\x80\x03costinato.vm.values\nOList\nq\x00.\x80\x03}q\x01(X\x05\x00\x00\x00itemsq'
              b'\x02]q\x03(K\x01X\x03\x00\x00\x00twoq\x04G@\x08\x00\x00\x00\x00\x00\x00eX\x04\x00'
              b'\x00\x00noteq\x05X\x01\x00\x00\x00xq\x06u.')
SMALL_MAP = (b'\x80\x03costinato.vm.values\nOMap\nq\x00.\x80\x03}q\x01(X\x01\x00\x00\x00dq\x02}q'
             b'\x03(X\x01\x00\x00\x00aq\x04K\x01X\x01\x00\x00\x00bq\x05X\x03\x00\x00\x00twoq\x06u'
             b'X\x04\x00\x00\x00noteq\x07X\x01\x00\x00\x00xq\x08u.')


def index(cls, chunk_cls, oids):
    """The record of a chunked OList or OMap whose chunks are `oids`."""
    refs = b''.join(
        b'C\x08' + oid.to_bytes(8, 'big') + memo
        for oid, memo in zip(oids, (b'q\x06costinato.vm.values\n' + chunk_cls + b'\nq\x07\x86q\x08Q',
                                    b'q\th\x07\x86q\nQ', b'q\x0bh\x07\x86q\x0cQ')))
    return (b'\x80\x03costinato.vm.values\n' + cls + b'\nq\x00.\x80\x03}q\x01(X\x04\x00\x00\x00'
            b'noteq\x02X\x01\x00\x00\x00xq\x03X\x06\x00\x00\x00chunksq\x04]q\x05(' + refs + b'eu.')


# (length, sha256) of every record: the chunks' too.
FIRST = {
    1: (96, '5ca5f49e4b098bc2d3654709f763c6ca11c5fbddf5e561463b38614390304c53'),
    2: (160, '6703d51ad7e44f2ee1f2588e08c579224155ceb2563a8a516a553e7ad3343a33'),
    3: (98, 'de9741f888acb0779e7c4319e369f420d5349115f5c61e352334c0ce3b8e463d'),
    4: (158, '2886ffa57f7f73cc168dec4a286216bcc56476926dc18ebe9223b4066604d416'),
    5: (2008, 'bc20d12afeccf308eca2652ed2b71b9e7019a80670bbe3594189b43bcfd6d8e0'),
    6: (2118, 'b61da64f955220740d5a2a08005fe0b190dcfe813a0cf2767d976cf1a05ee9ec'),
    7: (806, '1eaf49a34ae43e711c49eb14d7c570ef10c3aec12372ee5c43a68e134b2f78b4'),
    8: (571, '0ffe21b0792277e1e408da18eb823ddd66541aa1008771ea663e8a38566ef4f3'),
    9: (827, '5f55f1d1c9756914945ee616d208e7610d0b2abe6c8ff80ff3a973cc6d0e1af3'),
    10: (323, '8648044bc77aa21dbdd4fb5c36187ebf09a42df7b833d26059a2569cbe14647d'),
}
SECOND = {
    2: (160, '1fc9d784d8fadb34f53e1966f3d484aac633b6e24a7c93fdd3714c14a9ba2bd0'),
    4: (158, '967dc6f75328e3937dfeaad679d3cf4a63726e217b80a25ac4394320bda785d6'),
    11: (838, '5bb9f0c36c51aed284102255a3815cfcaa4a37524645b93d45d79c91e048da55'),
    12: (333, '01778d969e41e85c6f4649ff572bc0ce24e8b6d3c54f679a4f63dc8aceec9aa6'),
    13: (1988, '6b467443ec4e7fa3f51daa9d2e7e0e8a6141eacec6a5aaa0956efb9ca76342b6'),
    14: (2121, '257594f76cfaf85c5ceb6ce1fcb45010669480ec978fca837bc090e85c9e994f'),
    15: (821, 'f62dae15b3c3f6055cdffefd94880774aa036d2f2ba04c65e65347a0ef8ddee0'),
}


def test_short_lists_and_maps_are_stored_whole():
    first, _ = committed_records()
    assert first[1] == SMALL_LIST
    assert first[3] == SMALL_MAP


def test_long_lists_and_maps_are_stored_as_an_index_of_chunks():
    first, second = committed_records()
    # 600 items: chunks of 256, 256 and 88 (oids 8-10); 300 entries: chunks
    # of 128, 128 and 44 (oids 5-7).
    assert first[2] == index(b'OList', b'ListChunk', [8, 9, 10])
    assert first[4] == index(b'OMap', b'MapChunk', [5, 6, 7])
    assert digests(first) == FIRST
    # The change rewrites the index and the chunks that changed, no more:
    # the list's first chunk (oid 8) stays; every chunk of the map changed.
    assert second[2] == index(b'OList', b'ListChunk', [8, 11, 12])
    assert second[4] == index(b'OMap', b'MapChunk', [13, 14, 15])
    assert digests(second) == SECOND


# A big map's store reuses the chunks whose entries did not change, whatever
# happened to the map: entries changed, replaced by an equal value, deleted,
# added.  What a store returns must always be the map itself, in order, and a
# chunk may be reused only when it holds exactly the current entries, and a
# store with no change since the last reuses every chunk.
MAP_STEP = st.one_of(
    st.tuples(st.just('set'), st.integers(0, 700), st.integers(0, 3)),
    st.tuples(st.just('same'), st.integers(0, 700), st.just(0)),
    st.tuples(st.just('del'), st.integers(0, 700), st.just(0)),
    st.tuples(st.just('add'), st.integers(0, 50), st.just(0)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(MAP_STEP, max_size=12), min_size=1, max_size=6))
def test_a_big_maps_chunks_always_hold_the_map_and_only_unchanged_ones_are_reused(rounds):
    from ostinato.vm.values import MapChunk
    m = OMap({'k%d' % i: OList([i]) for i in range(600)})
    for added, steps in enumerate(rounds):
        for op, i, v in steps:
            key = 'k%d' % i
            if op == 'set':
                m.d[key] = OList([v])
            elif op == 'same' and key in m.d:
                m.d[key] = m.d[key]           # the same object again: unchanged
            elif op == 'del':
                m.d.pop(key, None)
            elif op == 'add':
                m.d['new%d-%d' % (added, i)] = i
        state = m.__getstate__()
        if 'chunks' not in state:              # small again: stored whole
            assert state['d'] is m.d
            break
        chunks = state['chunks']
        assert all(type(c) is MapChunk and 0 < len(c.pairs) <= OMap.CHUNK for c in chunks)
        stored = [p for c in chunks for p in c.pairs]
        assert [k for k, _ in stored] == list(m.d)
        assert all(v is m.d[k] for k, v in stored)
        # Nothing changed since this store: every chunk is reused.
        again = m.__getstate__()['chunks']
        assert [id(c) for c in again] == [id(c) for c in chunks]


# A very long list or map (more than 2 * INDEX chunks) stores its chunks in
# runs of INDEX (IndexChunk records), so growing it rewrites the short index,
# the last run and the last chunk -- not a reference to every chunk.  These
# run with small chunks and runs (the stored form does not depend on the
# sizes), so that they stay quick.

def small_chunks(monkeypatch, chunk=4, index=2):
    from ostinato.vm import values
    monkeypatch.setattr(values, 'INDEX', index)
    monkeypatch.setattr(OMap, 'CHUNK', chunk)
    monkeypatch.setattr(OList, 'CHUNK', chunk)


def test_a_very_long_map_grows_by_rewriting_its_last_run_only(monkeypatch):
    from ostinato.vm.values import IndexChunk, MapChunk
    small_chunks(monkeypatch)
    storage = MappingStorage()
    db = ZODB.DB(storage)
    try:
        conn = db.open()
        m = conn.root()['m'] = OMap({'k%d' % i: i for i in range(100)})
        transaction.commit()
        runs = m.__getstate__()['index']
        assert [len(r.chunks) for r in runs] == [2] * 12 + [1]   # 25 chunks of 4
        assert all(type(c) is MapChunk for r in runs for c in r.chunks)
        for i in range(100, 110):
            m.d['k%d' % i] = i
            m.changed()
            transaction.commit()
        # Each commit wrote the map's record (14 references at most, not a
        # reference to each of its 28 chunks), its last run and its last
        # chunk, new or changed.
        for txn in list(storage.iterator())[-10:]:
            records = {type(conn.get(r.oid)).__name__: r.data for r in txn}
            assert sorted(records) == ['IndexChunk', 'MapChunk', 'OMap'], sorted(records)
            assert b'MapChunk' not in records['OMap']
            assert records['OMap'].count(b'C\x08') <= 14
        check = db.open(transaction.TransactionManager())
        loaded = check.root()['m']
        assert list(loaded.d.items()) == [('k%d' % i, i) for i in range(110)]
        assert type(loaded._v_index[0]) is IndexChunk
        check.close()
    finally:
        transaction.abort()
        db.close()


def test_a_map_stored_with_one_flat_index_by_schema_4_loads_and_is_reindexed(monkeypatch, tmp_path):
    from ostinato.vm import values
    small_chunks(monkeypatch)
    storage = str(tmp_path / 'db.fs')
    db = ZODB.DB(storage)
    try:
        conn = db.open()
        # Schema 4 knew no runs: its index was every chunk, however many.
        monkeypatch.setattr(values, 'INDEX', 10 ** 9)
        conn.root()['m'] = OMap({'k%d' % i: OList([i]) for i in range(100)})
        conn.root()['l'] = OList(list(range(100)))
        transaction.commit()
        monkeypatch.setattr(values, 'INDEX', 2)
        conn.close()
        db.close()
        db = ZODB.DB(storage)
        conn = db.open()
        m, lst = conn.root()['m'], conn.root()['l']
        assert [k for k in m.d] == ['k%d' % i for i in range(100)]
        assert [v.items for v in m.d.values()] == [[i] for i in range(100)]
        assert lst.items == list(range(100))
        m.d['new'] = 1
        m.changed()
        lst.items.append(100)
        lst.changed()
        transaction.commit()
        assert 'index' in m.__getstate__() and 'index' in lst.__getstate__()
        conn.close()
        db.close()
        db = ZODB.DB(storage)
        conn = db.open()
        assert list(conn.root()['m'].d)[-2:] == ['k99', 'new']
        assert conn.root()['l'].items == list(range(101))
    finally:
        transaction.abort()
        db.close()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(MAP_STEP, max_size=12), min_size=1, max_size=6))
def test_a_very_long_maps_runs_always_hold_its_chunks_and_only_unchanged_ones_are_reused(rounds):
    # hypothesis runs the body many times per test: the sizes are set here,
    # not with the function-scoped monkeypatch fixture.
    from ostinato.vm import values
    saved = values.INDEX, OMap.CHUNK
    values.INDEX, OMap.CHUNK = 2, 16
    try:
        m = OMap({'k%d' % i: OList([i]) for i in range(700)})
        for added, steps in enumerate(rounds):
            for op, i, v in steps:
                key = 'k%d' % i
                if op == 'set':
                    m.d[key] = OList([v])
                elif op == 'del':
                    m.d.pop(key, None)
                elif op == 'add':
                    m.d['new%d-%d' % (added, i)] = i
            state = m.__getstate__()
            runs = state['index']
            chunks = [c for r in runs for c in r.chunks]
            assert all(0 < len(r.chunks) <= 2 for r in runs)
            assert chunks == m._v_chunks
            stored = [p for c in chunks for p in c.pairs]
            assert [k for k, _ in stored] == list(m.d)
            assert all(v is m.d[k] for k, v in stored)
            again = m.__getstate__()['index']
            assert [id(r) for r in again] == [id(r) for r in runs]
    finally:
        values.INDEX, OMap.CHUNK = saved


def test_tasks_frames_and_watches_are_stored_without_their_defaults(tmp_path):
    """What equals its class-level default is left out of a stored task,
    frame or watch (vm/values.py `without_defaults`), and reads the same
    after loading; a value of another type than the default (0 for False)
    or another value is kept."""
    from ostinato.compiler.code import Code
    from ostinato.runtime.world import Watch
    from ostinato.vm.values import Frame, Task
    code = Code.__new__(Code)
    code.nlocals = 1
    frame = Frame(code, None, None, None, None)
    task = Task(7, 'dialogue', frame)
    task.state = 'waiting'
    task.result = 0                 # not the default None
    task.watch_depth = False        # not the default 0: another type
    watch = Watch(3, task, [], 'change')
    assert sorted(task.__getstate__()) == ['frame', 'id', 'name', 'result', 'state', 'watch_depth']
    assert sorted(frame.__getstate__()) == ['code', 'goal', 'locals', 'module', 'stack']
    assert sorted(watch.__getstate__()) == ['id', 'objs', 'task']
    db = ZODB.DB(str(tmp_path / 'db.fs'))
    try:
        conn = db.open()
        conn.root()['t'] = task
        conn.root()['w'] = watch
        transaction.commit()
        check = db.open(transaction.TransactionManager())
        t, w = check.root()['t'], check.root()['w']
        assert (t.id, t.state, t.done, t.error, t.resume, t.reads, t.reported) == \
            (7, 'waiting', False, None, None, None, False)
        assert t.result == 0 and t.result is not None
        assert t.watch_depth is False
        assert (t.frame.pc, t.frame.handlers, t.frame.parent, t.frame.caller) == (0, (), None, None)
        assert (w.kind, w.dirty, w.task is t) == ('change', False, True)
        check.close()
    finally:
        transaction.abort()
        db.close()
