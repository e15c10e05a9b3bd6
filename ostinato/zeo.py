"""`python -m ostinato.zeo`: a ZEO server for a database that Ostinato
workers share (`ostinato serve --db zeo:SOCKET --worker NAME`).

It is ZEO's own server (ZEO.runzeo, with its options: `-a ADDRESS -f
FILE`), started after Ostinato's class codes are registered
(ostinato/classcodes.py).  The server reads records when it resolves a
conflict -- two workers that added to the same BTree bucket in the same
moment, such as the tasks by id -- and records name their classes by those
codes: a plain `python -m ZEO.runzeo` cannot read them, so such conflicts
would not be resolved, and each would cost a worker a turn run again.
"""
from __future__ import annotations

from ZEO import runzeo

from . import classcodes  # noqa: F401  (registered on import)


def main(args=None):
    runzeo.main(args)


if __name__ == '__main__':
    main()
