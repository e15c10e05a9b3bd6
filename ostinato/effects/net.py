"""Small facts about HTTP that every effect needs alike.

Proxy settings are ignored for servers on this machine (as the Ollama CLI
does), a failed request's cause is found by walking the exceptions
`requests` nests inside each other, and one exchange can be given a total
deadline that a server dripping its answer cannot stretch.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine (localhost or a loopback address)."""
    return is_loopback_host(urlsplit(url).hostname or '')


def is_loopback_host(host: str) -> bool:
    """Whether a host name or address is this machine's loopback."""
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exception_chain(exc: BaseException):
    """The exception and everything it wraps: requests nests urllib3's errors
    in args as well as in __cause__/__context__/reason."""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo.extend(a for a in getattr(e, 'args', ()) if isinstance(a, BaseException))
        for nxt in (e.__cause__, e.__context__, getattr(e, 'reason', None)):
            if isinstance(nxt, BaseException):
                todo.append(nxt)


# --- a total deadline for one HTTP exchange -----------------------------------
#
# `requests` (like urllib3 and httpx) only bounds each wait for the socket: a
# server that sends one byte every few seconds keeps a request alive for
# ever.  So a request made inside `deadline(seconds)` through a session with
# a `DeadlineAdapter` mounted has its connection shut down when the time is
# up, wherever it is (connecting, sending, waiting for the headers, reading
# the body); the request then fails and `expired` says why.  A watchdog
# thread per deadline does the cutting: the thread that waits cannot.

_local = threading.local()


def _tracking(pool_cls: Any) -> Any:
    class Tracked(pool_cls):
        def _get_conn(self, timeout=None):
            conn = super()._get_conn(timeout)
            watched = getattr(_local, 'conns', None)
            if watched is not None:
                watched.append(conn)
            return conn
    Tracked.__name__ = Tracked.__qualname__ = 'Tracked' + pool_cls.__name__
    return Tracked


_TRACKED = {'http': _tracking(HTTPConnectionPool), 'https': _tracking(HTTPSConnectionPool)}
_PLAIN = {'http': HTTPConnectionPool, 'https': HTTPSConnectionPool}


def _track(manager):
    if dict(manager.pool_classes_by_scheme) == _PLAIN:     # not a SOCKS proxy's pools
        manager.pool_classes_by_scheme = _TRACKED
    return manager


class DeadlineAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections a `deadline` can cut."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        _track(self.poolmanager)

    def proxy_manager_for(self, proxy, **kwargs):
        return _track(super().proxy_manager_for(proxy, **kwargs))


def deadline_session(trust_env=True):
    """A requests Session whose requests a `deadline` can cut."""
    session = requests.Session()
    session.trust_env = trust_env
    for prefix in ('http://', 'https://'):
        session.mount(prefix, DeadlineAdapter())
    return session


class deadline:
    """`with deadline(seconds) as d:` cuts the connections of the requests made
    in the block (by this thread, through a `deadline_session`) once
    `seconds` have passed; `d.expired` tells whether it did."""

    CUT_AGAIN = 0.1     # a connection may still be opening at the first cut

    def __init__(self, seconds):
        self.seconds = max(0.0, float(seconds))
        self.expired = False
        self._conns = []
        self._done = threading.Event()

    def __enter__(self):
        self._outer = getattr(_local, 'conns', None)
        _local.conns = self._conns
        threading.Thread(target=self._watch, name='ostinato-deadline', daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        _local.conns = self._outer
        return False

    def _watch(self):
        if self._done.wait(self.seconds):
            return
        self.expired = True
        while not self._done.is_set():
            for conn in list(self._conns):
                sock = getattr(conn, 'sock', None)
                if sock is not None:
                    try:
                        # socket.socket's own method: on a TLS socket the
                        # subclass's would unwrap it under the reading thread.
                        socket.socket.shutdown(sock, socket.SHUT_RDWR)
                    except (OSError, TypeError):
                        pass
            self._done.wait(self.CUT_AGAIN)


def read_capped(resp, limit):
    """The body of a streamed response as text, or None when it is longer
    than `limit` bytes (then only that much was read, and the response is
    closed)."""
    data = bytearray()
    for chunk in resp.iter_content(65536):
        data += chunk
        if len(data) > limit:
            resp.close()
            return None
    try:
        return bytes(data).decode(resp.encoding or 'utf-8', 'replace')
    except LookupError:                 # a charset Python does not know
        return bytes(data).decode('utf-8', 'replace')
