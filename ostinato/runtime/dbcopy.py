"""`ostinato db copy SRC DST`: a database moved, whole, between a file,
a ZEO server and PostgreSQL (runtime/pg.py) -- ZODB's copyTransactionsFrom,
as ZODB's zodbconvert does, into a destination that holds nothing yet.

Records are copied as they are stored, except for the checksum a file adds
to each (runtime/filestore.py's seal): checked as it is read, so a damaged
record stops the copy instead of travelling; left off in a database server
(which checks its own pages); added again in a file."""
from __future__ import annotations

from ZODB.utils import z64

from .filestore import CheckedFileStorage, DamagedRecord, StoreError, seal, unseal
from .pg import shown


class _Records:
    """The source as copyTransactionsFrom reads it: its transactions, each
    record's data unsealed and checked (and sealed again for a file)."""

    def __init__(self, source, seal_for_file):
        self.source = source
        self.seal_for_file = seal_for_file
        self.transactions = 0
        self.records = 0

    def __getattr__(self, name):
        # Not the source's interfaces nor its record_iternext: RelStorage
        # would read the records through them, past the checks here.
        if name.startswith('__') or name == 'record_iternext':
            raise AttributeError(name)
        return getattr(self.source, name)

    def __len__(self):
        return len(self.source)

    def iterator(self, start=None, stop=None):
        for txn in self.source.iterator(start, stop):
            self.transactions += 1
            yield _Transaction(txn, self)


class _Transaction:
    def __init__(self, txn, records):
        self.txn = txn
        self.records = records

    def __getattr__(self, name):
        return getattr(self.txn, name)

    def __iter__(self):
        from ZODB.utils import oid_repr
        for rec in self.txn:
            if rec.data is not None:
                try:
                    data = unseal(rec.data)
                except ValueError as e:
                    raise DamagedRecord(oid_repr(rec.oid), 'in the source', str(e)) from None
                rec.data = seal(data) if self.records.seal_for_file else data
            self.records.records += 1
            yield rec


def copy(source, destination):
    """Copy every transaction of the open storage `source` into the open,
    empty storage `destination`.  Returns (transactions, records)."""
    if source.lastTransaction() == z64:
        raise StoreError('the source %s holds nothing to copy' % shown(source.getName()))
    if destination.lastTransaction() != z64:
        raise StoreError('the destination %s is not empty: db copy only fills a new database'
                         % shown(destination.getName()))
    records = _Records(source, isinstance(destination, CheckedFileStorage))
    destination.copyTransactionsFrom(records)
    return records.transactions, records.records
