"""What a FileStorage database's commits wrote, by record class: the tests
that pin how many records a turn writes (tests/test_watch_records.py,
tests/test_frame_records.py) read it the same way."""
from __future__ import annotations

from ZODB.FileStorage import FileStorage

from ostinato.classcodes import record_class


def last_commit_classes(path):
    """The sorted classes of the records the last commit to the database
    file at `path` wrote (the database must be closed)."""
    storage = FileStorage(path, read_only=True)
    try:
        last = None
        for txn in storage.iterator():
            last = [record_class(r.data)[1] for r in txn]
        return sorted(last)
    finally:
        storage.close()
