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


# Each record as ZODB stores it: the class, then the state.  A class with a
# code (ostinato/classcodes.py) is named by it -- b'\x82\xf1' is OList's
# (241), b'\x82\xf2' OMap's, b'\x82\xf8' MapChunk's -- and one without by
# module and name (ListChunk).  A long list's or map's state names its
# chunks (each a record of its own) after its other attributes.
SMALL_LIST = (b'\x80\x03\x82\xf1.\x80\x03}q\x00(X\x05\x00\x00\x00itemsq\x01]q\x02(K\x01X\x03\x00\x00'
              b'\x00twoq\x03G@\x08\x00\x00\x00\x00\x00\x00eX\x04\x00\x00\x00noteq\x04X\x01\x00\x00'
              b'\x00xq\x05u.')
SMALL_MAP = (b'\x80\x03\x82\xf2.\x80\x03}q\x00(X\x01\x00\x00\x00dq\x01}q\x02(X\x01\x00\x00\x00aq\x03K'
             b'\x01X\x01\x00\x00\x00bq\x04X\x03\x00\x00\x00twoq\x05uX\x04\x00\x00\x00noteq\x06X\x01'
             b'\x00\x00\x00xq\x07u.')


def list_index(oids):
    """The record of a chunked OList whose chunks are `oids`: ListChunk has
    no code, so the first reference names it and the others recall it."""
    refs = b''.join(
        b'C\x08' + oid.to_bytes(8, 'big') + memo
        for oid, memo in zip(oids, (b'q\x05costinato.vm.values\nListChunk\nq\x06\x86q\x07Q',
                                    b'q\x08h\x06\x86q\tQ', b'q\nh\x06\x86q\x0bQ')))
    return INDEX_HEAD % b'\xf1' + refs + b'eu.'


def map_index(oids):
    """The record of a chunked OMap whose chunks are `oids` (MapChunk's code
    in each reference)."""
    refs = b''.join(
        b'C\x08' + oid.to_bytes(8, 'big') + b'q' + bytes([5 + 2 * k]) + b'\x82\xf8\x86q'
        + bytes([6 + 2 * k]) + b'Q'
        for k, oid in enumerate(oids))
    return INDEX_HEAD % b'\xf2' + refs + b'eu.'


INDEX_HEAD = (b'\x80\x03\x82%b.\x80\x03}q\x00(X\x04\x00\x00\x00noteq\x01X\x01\x00\x00\x00xq\x02X\x06'
              b'\x00\x00\x00chunksq\x03]q\x04(')


# (length, sha256) of every record: the chunks' too.
FIRST = {
    1: (70, '044ae20c1743c5fbc0130d7c732cfe3fe3142ca7195a2d5dc31cb55d38fe9b19'),
    2: (134, '3e8ed905456541f18b478aa8e96bc1f3aaeca6c4d15c27c234117a1df789256b'),
    3: (73, '2325d80ceea8e608f813f95d8ebb66e67fae7926bdcac16baffc2f887d7ae4fa'),
    4: (104, '3b4921684e5872737e3b9b61059ba177e72d0955016c99101478b59d2c26d61f'),
    5: (1976, 'ba90afa75634e2919c0da6a145749a75d9ae6c5eef2e7322d2f452343a8beb46'),
    6: (2086, '42a2cf80d6dc9e2c773f8597f3e2ef224cafa8660d3392b59a84c0d59c526b06'),
    7: (777, '56b971c39ff303a0d7c68c366b332d109365bd9e2e77813f8196723704182f67'),
    8: (571, '0ffe21b0792277e1e408da18eb823ddd66541aa1008771ea663e8a38566ef4f3'),
    9: (827, '5f55f1d1c9756914945ee616d208e7610d0b2abe6c8ff80ff3a973cc6d0e1af3'),
    10: (323, '8648044bc77aa21dbdd4fb5c36187ebf09a42df7b833d26059a2569cbe14647d'),
}
SECOND = {
    2: (134, 'b7b783fce8d5f3065961e54e428b6fbfc65c29264bc43a52197f5ccfe40038b9'),
    4: (104, '90a29e248025d533a6eed1b1d8c5fdb2fe5011be2681dab60c6d56cb511b3dd3'),
    11: (838, '5bb9f0c36c51aed284102255a3815cfcaa4a37524645b93d45d79c91e048da55'),
    12: (333, '01778d969e41e85c6f4649ff572bc0ce24e8b6d3c54f679a4f63dc8aceec9aa6'),
    13: (1956, 'c03748555b6cc8d52d8406f356a0d9b6783e0abbfd965ac09b9ad967cb172b9a'),
    14: (2089, '2806ba6bf8831dba0f5d248b04c3aebbbc2425b83623ad86b2bd0577bab17c0c'),
    15: (792, '69d60bd015fa8fa73c9f1c986b97b702303ad580e07a7ed703f8a7e4feb70ca6'),
}


def test_short_lists_and_maps_are_stored_whole():
    first, _ = committed_records()
    assert first[1] == SMALL_LIST
    assert first[3] == SMALL_MAP


def test_long_lists_and_maps_are_stored_as_an_index_of_chunks():
    first, second = committed_records()
    # 600 items: chunks of 256, 256 and 88 (oids 8-10); 300 entries: chunks
    # of 128, 128 and 44 (oids 5-7).
    assert first[2] == list_index([8, 9, 10])
    assert first[4] == map_index([5, 6, 7])
    assert digests(first) == FIRST
    # The change rewrites the index and the chunks that changed, no more:
    # the list's first chunk (oid 8) stays; every chunk of the map changed.
    assert second[2] == list_index([8, 11, 12])
    assert second[4] == map_index([13, 14, 15])
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
    from ostinato.vm import values
    from ostinato.vm.values import IndexChunk, MapChunk
    small_chunks(monkeypatch)
    storage = MappingStorage()
    db = ZODB.DB(storage)
    try:
        conn = db.open()
        m = conn.root()['m'] = OMap({'k%d' % i: i for i in range(100)})
        transaction.commit()
        # 25 chunks of 4 in 13 runs, those in 7 runs, those in the 4 the
        # map's record names (schema 11: a tree of runs, each at most INDEX).
        levels = values._index_levels(m.__getstate__()['index'])
        assert [[len(held) for _, held in level] for level in levels] == \
            [[2] * 12 + [1], [2] * 6 + [1], [2, 2, 2, 1]]
        assert all(type(c) is MapChunk for _, held in levels[0] for c in held)
        for i in range(100, 110):
            m.d['k%d' % i] = i
            m.changed()
            transaction.commit()
        # Each commit wrote the map's record (4 references, not a reference
        # to each of its 28 chunks), the last run of each level and its
        # last chunk, new or changed.
        for txn in list(storage.iterator())[-10:]:
            written = sorted((type(conn.get(r.oid)).__name__, r.data) for r in txn)
            assert [c for c, _ in written] == ['IndexChunk'] * 3 + ['MapChunk', 'OMap'], written
            record = written[-1][1]
            assert b'MapChunk' not in record
            assert record.count(b'C\x08') <= 4
        check = db.open(transaction.TransactionManager())
        loaded = check.root()['m']
        assert list(loaded.d.items()) == [('k%d' % i, i) for i in range(110)]
        assert type(loaded._v_index[0][0][0]) is IndexChunk
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
            levels = values._index_levels(runs)
            chunks = [c for _, held in levels[0] for c in held]
            assert 0 < len(runs) <= 4
            assert all(0 < len(r.chunks) <= 2 for level in levels for r, _ in level)
            assert chunks == [c for c, _ in m._v_chunks]
            stored = [p for c in chunks for p in c.pairs]
            assert [k for k, _ in stored] == list(m.d)
            assert all(v is m.d[k] for k, v in stored)
            again = m.__getstate__()['index']
            assert [id(r) for r in again] == [id(r) for r in runs]
    finally:
        values.INDEX, OMap.CHUNK = saved


def test_tasks_and_watches_are_stored_without_their_defaults_and_frames_as_tuples(tmp_path):
    """What equals its class-level default is left out of a stored task or
    watch (vm/values.py `without_defaults`), and reads the same after
    loading; a value of another type than the default (0 for False) or
    another value is kept.  A frame is stored as a tuple (Frame.FIELDS), in
    its task's record while only the task reaches it (without its caller:
    the next frame there, or the task's `frame`)."""
    from ostinato.compiler.code import Code
    from ostinato.runtime.world import ReadyQueue, Watch
    from ostinato.vm.values import Frame, Task
    code = Code.__new__(Code)
    code.nlocals = 1
    frame = Frame(code, None, None, None, None)
    task = Task(7, 'dialogue', frame)
    task.state = 'waiting'
    task.result = 0                 # not the default None
    task.watch_depth = False        # not the default 0: another type
    watch = Watch(3, task, [], 'change')
    # (id, name, frame, state, waiting, since, waits, its frames, the rest)
    state = task.__getstate__()
    assert state == (7, 'dialogue', None, 'waiting', None, None, 0,
                     ((code, None, None, None, 0, [], [None], ()),),
                     {'result': 0, 'watch_depth': False}), state
    assert frame.__getstate__() == (code, None, None, None, None, 0, [], [None], ())
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
        assert (t.frame.code.nlocals, t.frame.stack, t.frame.locals) == (1, [], [None])
        assert (w.kind, w.dirty, w.task is t) == ('change', False, True)
        check.close()
        # Nothing but the fixed fields: no dict of the rest.
        task.result, task.watch_depth = None, 0
        assert len(task.__getstate__()) == 8
        # The ready queue: (the tree behind the front, front task, its wait
        # if woken).
        q = ReadyQueue()
        q.append(task)
        assert q.__getstate__() == (q.tree, task, None)
        conn.root()['q'] = q
        transaction.commit()
        check = db.open(transaction.TransactionManager())
        q2 = check.root()['q']
        assert list(q2) == [check.root()['t']] and len(q2) == 1 and q2.woken() is None
        check.close()
    finally:
        transaction.abort()
        db.close()


def test_storing_a_big_map_again_does_not_load_the_chunks_its_cache_let_go():
    """ZODB's cache makes ghosts of the chunks once there are more than it
    keeps; the next store compares the contents held with the map
    (`_v_chunks`), so it reads no chunk again.  At 100,000 threads, reading
    them made each new dialogue cost 300 ms."""
    loads = []

    class Counting(MappingStorage):
        def loadBefore(self, oid, tid):
            loads.append(oid)
            return super().loadBefore(oid, tid)

    db = ZODB.DB(Counting())
    try:
        conn = db.open()
        m = conn.root()['m'] = OMap({'k%d' % i: i for i in range(40 * OMap.CHUNK)})
        lst = conn.root()['l'] = OList(list(range(40 * OList.CHUNK)))
        transaction.commit()
        # What the cache does when it holds more objects than it keeps.
        chunks = m.__getstate__()['chunks'] + lst.__getstate__()['chunks']
        for c in chunks:
            c._p_deactivate()
        assert {c._p_status for c in chunks} == {'ghost'}
        del loads[:]
        m.d['new'] = 1
        m.changed()
        lst.items.append('new')
        lst.changed()
        transaction.commit()
        assert loads == []
        check = db.open(transaction.TransactionManager())
        assert list(check.root()['m'].d)[-1] == 'new' and check.root()['l'].items[-1] == 'new'
        check.close()
    finally:
        transaction.abort()
        db.close()


def test_objects_and_short_lists_are_stored_as_tuples_with_their_watches(tmp_path):
    """An OObject is stored as (type, vals) or (type, vals, watches), a short
    OList as (items,) or (items, watches); each loads the same, and so do
    the dicts that schema 5 stored.  An attribute beyond those keeps the
    dict form."""
    from ostinato.runtime import watches
    from ostinato.runtime.world import World
    from ostinato.vm.values import OList, OObject, OType, Task
    world = World()
    T = OType('Box')
    plain, watched = OObject(T, {'n': 1}), OObject(T, {'n': 2})
    items, wlist = OList([1, 2]), OList([3])
    task = Task(1, 'waiter', None)
    task.waiting = watches.register(world, task, [watched, wlist], 'change')
    assert plain.__getstate__() == (T, {'n': 1})
    assert watched.__getstate__() == (T, {'n': 2}, task.waiting)
    assert items.__getstate__() == ([1, 2],)
    assert wlist.__getstate__() == ([3], task.waiting)
    other = OObject(T, {'n': 3})
    other.extra = 'x'                  # not a form the tuple knows: a dict
    assert type(other.__getstate__()) is dict
    old_obj, old_list = OObject.__new__(OObject), OList.__new__(OList)
    old_obj.__setstate__({'type': T, 'vals': {'n': 4}})
    old_list.__setstate__({'items': [4]})
    assert (old_obj.type, old_obj.vals, old_list.items) == (T, {'n': 4}, [4])
    db = ZODB.DB(str(tmp_path / 'db.fs'))
    try:
        conn = db.open()
        conn.root()['all'] = [plain, watched, items, wlist, other, task, world]
        transaction.commit()
        check = db.open(transaction.TransactionManager())
        p, w, i, wl, o, t, _ = check.root()['all']
        assert (p.type.name, p.vals, w.vals, i.items, wl.items) == \
            ('Box', {'n': 1}, {'n': 2}, [1, 2], [3])
        assert watches.of(w) == (t.waiting,) and watches.of(wl) == (t.waiting,)
        assert not watches.of(p) and not watches.of(i)
        assert (o.vals, o.extra) == ({'n': 3}, 'x')
        check.close()
    finally:
        transaction.abort()
        db.close()
