"""Small facts about HTTP that every effect needs alike.

Proxy settings are ignored for servers on this machine (as the Ollama CLI
does), and a failed request's cause is found by walking the exceptions
`requests` nests inside each other.
"""
from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


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
