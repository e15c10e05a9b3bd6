"""Short codes for the classes of stored objects: part of the stored format.

A database record names the class of its object, and every reference to
another stored object names that object's class too, so that ZODB can make
a ghost of it without a read.  Named in full ('ostinato.vm.values\\nOObject')
that is about 30 bytes each time: a third of what a waiting dialogue kept
on disk (1,144 of its 3,375 bytes of records, measured before the codes).
Pickle's extension registry (copyreg, PEP 307) replaces the name of a
registered class with a code of one byte; this table registers the sixteen
classes stored most often, under the codes PEP 307 leaves to private use
(240-255).  A waiting dialogue: 3,644 -> 2,501 bytes (bench/durable.py's,
2,000 of them, packed).

The table is a contract like the opcode numbers (compiler/code.py): a code
is never changed or given to another class, and a class that moves keeps
its old module path importable (runtime/migrations.py).  Every process that
reads the database must have registered the codes before it loads a record:
importing any part of Ostinato does it (ostinato/__init__.py), and a ZEO
server shared by workers, which resolves conflicts by reading records, is
started with `python -m ostinato.zeo` for that reason.  Records written
before the codes (schema 4 and older) name their classes in full, and still
load.
"""
from __future__ import annotations

import copyreg

# code -> (module, class).  Full: 240-255 are all the private-use codes.
CODES = {
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
    254: ('ostinato.runtime.world', 'WatchTree'),
    255: ('BTrees.IOBTree', 'IOBucket'),
}


def register():
    """Register the codes with pickle (again: no change).  Raises ValueError
    if something else in this process took one of them."""
    for code, (module, name) in CODES.items():
        copyreg.add_extension(module, name, code)


def record_class(data):
    """(module, name) of the class a stored record names, in full or by a
    code; imports nothing (ZODB's `get_pickle_metadata` does not know the
    codes)."""
    import pickletools      # here, not at start-up: every command imports this module
    strings: list[str] = []
    for op, arg, _ in pickletools.genops(data):     # the first pickle: the class
        if op.name == 'GLOBAL' and isinstance(arg, str):
            module, name = arg.split(' ', 1)
            return module, name
        if op.name in ('EXT1', 'EXT2', 'EXT4') and isinstance(arg, int):
            return CODES.get(arg, ('', ''))
        if op.name == 'STACK_GLOBAL' and len(strings) >= 2:
            return strings[-2], strings[-1]
        if isinstance(arg, str):
            strings.append(arg)
    return '', ''


register()
