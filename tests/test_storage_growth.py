"""A list that grows by one item per commit (a thread's messages, a log)
does not rewrite its whole history: long lists are stored in chunks."""
import io
import os

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
    sleep(0)
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
    assert short.__getstate__() == {'items': [1, 2]}
