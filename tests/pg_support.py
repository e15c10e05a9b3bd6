"""A PostgreSQL database of its own for each test: made on the server at
OSTINATO_TEST_PG (an administrator's address; default: the local server
over its unix socket, as the user running the tests -- .ci/run makes that
role) and dropped afterwards.  No server answering FAILS the test: these
tests never skip (CI installs and starts PostgreSQL)."""
from __future__ import annotations

import os
import uuid

import pytest

ADMIN = os.environ.get('OSTINATO_TEST_PG') or 'postgresql:///postgres'


def _admin():
    import psycopg2
    try:
        conn = psycopg2.connect(ADMIN, connect_timeout=10)
    except psycopg2.Error as e:
        pytest.fail('no PostgreSQL server answers at %s (set OSTINATO_TEST_PG, or start one: '
                    '.ci/run shows how): %s' % (ADMIN, ' '.join(str(e).split())), pytrace=False)
    conn.autocommit = True
    return conn


def url_of(name):
    """The address of database `name` on the administrator's server."""
    base, _, rest = ADMIN.partition('://')
    netloc, _, tail = rest.partition('/')
    _, _, query = tail.partition('?')
    return '%s://%s/%s%s' % (base, netloc, name, '?' + query if query else '')


def make_database():
    name = 'ostinato_test_' + uuid.uuid4().hex[:12]
    conn = _admin()
    try:
        with conn.cursor() as cur:
            cur.execute('CREATE DATABASE %s' % name)
    finally:
        conn.close()
    return name


def drop_database(name):
    conn = _admin()
    try:
        with conn.cursor() as cur:
            cur.execute('DROP DATABASE IF EXISTS %s WITH (FORCE)' % name)
    finally:
        conn.close()


@pytest.fixture
def pg_db():
    """The address of a new, empty PostgreSQL database (dropped after)."""
    name = make_database()
    try:
        yield url_of(name)
    finally:
        drop_database(name)
