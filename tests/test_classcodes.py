"""The class codes of stored records (ostinato/classcodes.py) are part of
the stored format: pinned here, registered in every process that imports
Ostinato, and known to the ZEO server that workers share."""
from __future__ import annotations

import copyreg
import importlib
import os
import subprocess
import sys

import pytest
import transaction
from ZODB.POSException import ConflictError

from ostinato.classcodes import CODES, record_class
from waiting import wait_for

# Never change a line of this: databases on disk name their classes so.
PINNED = {
    240: ('ostinato.vm.values', 'OObject'),
    241: ('ostinato.vm.values', 'OList'),
    242: ('ostinato.vm.values', 'OMap'),
    243: ('ostinato.vm.values', 'OType'),
    244: ('ostinato.vm.values', 'OModule'),
    245: ('ostinato.vm.values', 'Frame'),
    246: ('ostinato.vm.values', 'Task'),
    247: ('ostinato.vm.values', 'Function'),
    248: ('ostinato.vm.values', 'MapChunk'),
    249: ('ostinato.vm.interp', 'SpanIter'),
    250: ('ostinato.compiler.code', 'Code'),
    251: ('ostinato.runtime.world', 'Watch'),
    252: ('ostinato.runtime.world', 'ReadyLink'),
    253: ('ostinato.runtime.world', 'OutMessage'),
    254: ('BTrees.IOBTree', 'IOBTree'),
    255: ('BTrees.IOBTree', 'IOBucket'),
}


def test_the_codes_are_the_stored_formats_and_name_classes_that_exist():
    assert CODES == PINNED
    for code, (module, name) in CODES.items():
        assert copyreg._extension_registry[(module, name)] == code
        assert isinstance(getattr(importlib.import_module(module), name), type)


def test_a_process_that_imports_any_part_of_ostinato_has_them():
    r = subprocess.run([sys.executable, '-c', 'import copyreg, ostinato.vm.values; '
                        'print(copyreg._extension_registry[("ostinato.vm.values", "Frame")])'],
                       capture_output=True, text=True)
    assert r.stdout == '245\n', r.stderr


def test_the_class_a_record_names_is_read_by_code_or_in_full(tmp_path):
    import ZODB
    from ostinato.vm.values import ListChunk, OList
    db = ZODB.DB(str(tmp_path / 'db.fs'))
    try:
        conn = db.open()
        conn.root()['x'] = OList([ListChunk([1])])
        transaction.commit()
        records = [r.data for t in db.storage.iterator() for r in t]
        assert [record_class(d) for d in records] == [
            ('persistent.mapping', 'PersistentMapping'),                 # the root, first made
            ('persistent.mapping', 'PersistentMapping'),
            ('ostinato.vm.values', 'OList'), ('ostinato.vm.values', 'ListChunk')]
        assert records[2][2:4] == bytes([0x82, 241])                 # EXT1, OList's code
    finally:
        transaction.abort()
        db.close()


def concurrent_additions(tmp_path, server_module):
    """Two clients of a ZEO server run by `python -m server_module` add an
    entry each to the same BTree bucket, from the same state; returns the
    keys the tree holds after both commits, or 'conflict' if the second
    was refused."""
    import ZEO
    from BTrees.IOBTree import IOBTree
    from ostinato.vm.values import OList
    sock = str(tmp_path / 'zeo.sock')
    server = subprocess.Popen([sys.executable, '-m', server_module, '-a', sock, '-f',
                               str(tmp_path / 'shared.fs')], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    dbs = []
    try:
        wait_for(lambda: os.path.exists(sock), 'the ZEO server')
        dbs = [ZEO.DB(sock), ZEO.DB(sock)]
        tm0, tm1 = transaction.TransactionManager(), transaction.TransactionManager()
        c0, c1 = dbs[0].open(tm0), dbs[1].open(tm1)
        c0.root()['tree'] = IOBTree({i: OList([i]) for i in range(10)})
        tm0.commit()
        # ZEO tells the other client of the commit in its own time.
        def sees_the_tree():
            tm1.begin()
            return 'tree' in c1.root()
        wait_for(sees_the_tree, 'the first commit, seen by the other client')
        tree1 = c1.root()['tree']       # loaded before the other's change
        len(tree1)
        c0.root()['tree'][100] = OList([100])
        tm0.commit()
        tree1[200] = OList([200])
        try:
            tm1.commit()
        except ConflictError:
            tm1.abort()
            return 'conflict'
        dbs.append(ZEO.DB(sock))         # a new client reads what the server holds
        return sorted(dbs[-1].open(transaction.TransactionManager()).root()['tree'].keys())
    finally:
        for db in dbs:
            db.close()
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.slow
def test_the_shared_zeo_server_resolves_conflicts_on_records_named_by_code(tmp_path):
    assert concurrent_additions(tmp_path, 'ostinato.zeo') == list(range(10)) + [100, 200]


@pytest.mark.slow
def test_zeos_own_server_cannot_read_them_so_workers_need_ostinatos(tmp_path):
    # Why README says `python -m ostinato.zeo`: ZEO's server does not know
    # the codes, so the same conflict is refused.
    assert concurrent_additions(tmp_path, 'ZEO.runzeo') == 'conflict'
