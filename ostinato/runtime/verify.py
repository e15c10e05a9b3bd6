"""`ostinato db verify` for a database that is no file (PostgreSQL): every
object reachable from the root loaded, unpickled, and its references
resolved -- what runtime/filestore.py's verify does after it has checked
the file's records, which a database server checks itself."""
from __future__ import annotations

from .filestore import plural, unpickle_problem


def verify_objects(store, name, out, limit=20):
    """Write what is wrong to `out`; return the number of problems."""
    from ZODB.POSException import POSKeyError
    from ZODB.serialize import referencesf
    from ZODB.utils import oid_repr, z64
    storage, conn = store.storage, store.conn
    problems = []
    seen = {z64}
    todo = [z64]
    while todo:
        oid = todo.pop()
        where = 'object %s' % oid_repr(oid)
        try:
            data, _ = storage.load(oid)
        except POSKeyError:
            problems.append('%s is referred to but does not exist' % where)
            continue
        except Exception as e:
            problems.append('%s cannot be read: %s' % (where, ' '.join(str(e).split())[:200]))
            continue
        try:
            refs = referencesf(data)
        except Exception as e:
            problems.append('%s is not a whole pickle: %s: %s' % (where, type(e).__name__, e))
            continue
        for ref in refs:
            if ref not in seen:
                seen.add(ref)
                todo.append(ref)
        problem = unpickle_problem(conn, oid, where)
        if problem is not None:
            problems.append(problem)
        if len(seen) % 1000 == 999:
            conn.cacheMinimize()
    for p in problems[:limit]:
        out.write('%s\n' % p)
    if len(problems) > limit:
        out.write('... and %d more\n' % (len(problems) - limit))
    if problems:
        out.write('%s: damaged (%s)\n' % (name, plural(len(problems), 'problem')))
    else:
        out.write('%s: %s reachable from the root: no damage found\n'
                  % (name, plural(len(seen), 'object')))
    return len(problems)
