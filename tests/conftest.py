import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

# A PostgreSQL database of its own for a test (tests/pg_support.py).
from pg_support import pg_db  # noqa: F401
