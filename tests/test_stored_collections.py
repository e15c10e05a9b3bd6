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


# Three chunks and a tail of 8 items.
BIG_LIST = 3 * OList.CHUNK + 8


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
        big_list = OList(list(range(BIG_LIST)))
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
        big_list.items[OList.CHUNK + 5] = 'changed'
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
        assert loaded['big_list'].items == (list(range(OList.CHUNK + 5)) + ['changed']
                                            + list(range(OList.CHUNK + 6, BIG_LIST)) + ['new'])
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


def list_index(oids, tail):
    """The record of a chunked OList whose chunks are `oids`, and whose
    items after them pickle as `tail`: ListChunk has no code, so the first
    reference names it and the others recall it."""
    refs = b''.join(
        b'C\x08' + oid.to_bytes(8, 'big') + memo
        for oid, memo in zip(oids, (b'q\x05costinato.vm.values\nListChunk\nq\x06\x86q\x07Q',
                                    b'q\x08h\x06\x86q\tQ', b'q\nh\x06\x86q\x0bQ')))
    return INDEX_HEAD % b'\xf1' + refs + b'eX\x04\x00\x00\x00tailq\x0c]q\r(' + tail + b'eu.'


# The tail of BIG_LIST (96 to 103, as BININT1), and after the change.
TAIL = b'K`KaKbKcKdKeKfKg'
TAIL_NEW = TAIL + b'X\x03\x00\x00\x00newq\x0e'


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
    2: (166, '813d77fab0b363b7bbddb5d7ee27c87d8edf9b769c8ed69bc2c5db7455234212'),
    3: (73, '2325d80ceea8e608f813f95d8ebb66e67fae7926bdcac16baffc2f887d7ae4fa'),
    4: (104, '3b4921684e5872737e3b9b61059ba177e72d0955016c99101478b59d2c26d61f'),
    5: (1976, 'ba90afa75634e2919c0da6a145749a75d9ae6c5eef2e7322d2f452343a8beb46'),
    6: (2086, '42a2cf80d6dc9e2c773f8597f3e2ef224cafa8660d3392b59a84c0d59c526b06'),
    7: (777, '56b971c39ff303a0d7c68c366b332d109365bd9e2e77813f8196723704182f67'),
    8: (123, 'bdbe3b87ca5a66cafeebc5385be00c193ace2047bed578c2d105bf744b460d86'),
    9: (123, '3fe0a2f42a98dc9387da728d33f48a83212c837d9683592e73e1d495fa92c519'),
    10: (123, '94e50c15256901f0bc20363a0fbdbefa85ffe6537b4561cfcfe4d7529c37a31c'),
}
SECOND = {
    2: (176, '069760fc9393eeaf99a603be7a6aa6896bb42a3cde732a81717850ad241f14d4'),
    4: (104, '9c8b1f93ad56c072a22bd10c405358f52bfe0fbd7eaeae30fd980f3c9acd4ece'),
    11: (135, 'caf4ff5cdfba58de3bb3db0683a5924059ced18057abd750c2601b0a6365568e'),
    12: (1956, 'c03748555b6cc8d52d8406f356a0d9b6783e0abbfd965ac09b9ad967cb172b9a'),
    13: (2089, '2806ba6bf8831dba0f5d248b04c3aebbbc2425b83623ad86b2bd0577bab17c0c'),
    14: (792, '69d60bd015fa8fa73c9f1c986b97b702303ad580e07a7ed703f8a7e4feb70ca6'),
}


def test_short_lists_and_maps_are_stored_whole():
    first, _ = committed_records()
    assert first[1] == SMALL_LIST
    assert first[3] == SMALL_MAP


def test_long_lists_and_maps_are_stored_as_an_index_of_chunks():
    first, second = committed_records()
    # 104 items: chunks of 32 (oids 8-10) and 8 in the list's own record;
    # 300 entries: chunks of 128, 128 and 44 (oids 5-7).
    assert first[2] == list_index([8, 9, 10], TAIL)
    assert first[4] == map_index([5, 6, 7])
    assert digests(first) == FIRST
    # The change rewrites the index and the chunks that changed, no more:
    # the list's first and last chunks (oids 8, 10) stay, the item appended
    # joins its tail; every chunk of the map changed.
    assert second[2] == list_index([8, 11, 10], TAIL_NEW)
    assert second[4] == map_index([12, 13, 14])
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
        lst = conn.root()['l'] = OList(list(range(2 * OList.INDEX * OList.CHUNK)))
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


def test_a_long_list_grows_by_rewriting_its_own_record_only():
    """A long list keeps its full chunks (never changed once stored) and,
    in its own record, the items after them: appending an item writes that
    one record, however long the list (a chat thread's messages, every
    message twice); a chunk that fills is written once, with the last run
    of each level of the index above it.  The chunks and the index are
    small (OList.CHUNK, OList.INDEX), so that record stays small too."""
    from ostinato.classcodes import record_class
    storage = MappingStorage()
    db = ZODB.DB(storage)
    try:
        conn = db.open()
        n = 40 * OList.CHUNK + 3
        lst = conn.root()['l'] = OList(list(range(n)))
        transaction.commit()
        written = []
        for i in range(OList.CHUNK):
            lst.items.append('x%d' % i)
            lst.changed()
            transaction.commit()
            txn = list(storage.iterator())[-1]
            written.append(sorted(record_class(r.data)[1] for r in txn))
        fills = [w for w in written if w != ['OList']]
        assert len(fills) == 1, written           # the chunk that filled
        assert fills[0].count('ListChunk') == 1 and fills[0].count('OList') == 1, fills
        state = lst.__getstate__()
        assert len(state['tail']) == 3 and len(state['index']) <= 2 * OList.INDEX, state
        check = db.open(transaction.TransactionManager())
        assert check.root()['l'].items == list(range(n)) + ['x%d' % i for i in range(OList.CHUNK)]
        check.close()
    finally:
        transaction.abort()
        db.close()


def test_a_list_chunked_by_schema_19_loads_and_is_cut_again():
    """A list stored before tails (schema 19 and older: chunks of 256, the
    last one holding the rest, no `tail`) loads whole, and is stored in
    today's chunks and tail when next written."""
    from ostinato.vm.values import ListChunk
    old = OList.__new__(OList)
    old.__setstate__({'chunks': [ListChunk(list(range(256))), ListChunk(list(range(256, 300)))],
                      '_ow': None})
    assert old.items == list(range(300))
    state = old.__getstate__()
    n = 300 - 300 % OList.CHUNK
    assert state['tail'] == list(range(n, 300))
    chunks = state['chunks'] if 'chunks' in state else [
        c for run in state['index'] for c in run.chunks]
    assert [c.items for c in chunks] == [list(range(i, i + OList.CHUNK))
                                         for i in range(0, n, OList.CHUNK)]
