"""One HTTP exchange with a model server, and what its failures mean.

Both HTTP backends sort failures the same way, and the sorting is what the
durable queue acts on: anything that may pass by waiting (refused, timed
out, cut off, HTTP 5xx or 429) becomes `LLMUnavailable` (`LLMTimeout` for
no reply in time) with one log line naming the server; an answer too big
to be a reply is a final `LLMError`; everything else is returned to the
backend, which knows how its server words a rejection.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Optional, Tuple

import requests

from ..net import deadline, deadline_session, exception_chain, is_loopback, read_capped
from .errors import LLMError, LLMTimeout, LLMUnavailable

CONNECT_TIMEOUT = 5.0
# A whole answer: the model's reply with its JSON envelope.  Replies are
# capped at num_predict tokens (a few KB), so this only stops a broken or
# hostile server from filling memory and the audit log.
MAX_BODY = 4 << 20


def _why_unreachable(exc: BaseException) -> str:
    text = ' '.join(str(e) for e in exception_chain(exc))
    if any(isinstance(e, ConnectionRefusedError) for e in exception_chain(exc)) or 'refused' in text:
        return 'connection refused'
    if 'Name or service not known' in text or 'nodename nor servname' in text \
            or 'getaddrinfo failed' in text or 'Failed to resolve' in text:
        return 'host not found'
    if 'RemoteDisconnected' in text or 'aborted' in text or 'reset' in text:
        return 'the connection was closed before a reply'
    last = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return last[:200]


def server_message(payload: Any, text: str) -> str:
    """The error text a server put in its body, in the shapes Ollama and
    OpenAI-compatible servers use, else the start of the body."""
    if isinstance(payload, dict):
        err = payload.get('error', payload.get('message', payload.get('detail')))
        if isinstance(err, dict):
            err = err.get('message') or json.dumps(err)
        if err:
            return ' '.join(str(err).split())[:500]
    body = ' '.join((text or '').split())
    return body[:300] or '(empty body)'


def exchange(method: str, url: str, *, service: str, hint: str, read_timeout: float,
             body: Optional[dict] = None, headers: Optional[dict] = None,
             connect_timeout: float = CONNECT_TIMEOUT,
             message_of: Callable[[Any, str], str] = server_message,
             rejection: Optional[Callable[[Any, str], bool]] = None) -> Tuple[int, Any, str]:
    """(status, parsed JSON body or None, body text) for a 2xx-4xx answer,
    and for a 5xx answer that `rejection(payload, text)` says is the
    server refusing this request (some servers answer a request they cannot
    validate with HTTP 500) rather than breaking down.

    `service` names the server in messages ("Ollama at http://..."), `hint`
    is the fix suggested when it cannot be reached.  `read_timeout` bounds
    the whole exchange, however slowly the server sends its answer
    (connecting included; the connection alone must succeed within
    `connect_timeout`), and a body of more than MAX_BODY bytes is refused.
    """
    # A proxy from the environment must not capture a model server on this
    # machine (the Ollama CLI bypasses proxies for loopback the same way).
    session = deadline_session(trust_env=not is_loopback(url))
    too_slow = LLMTimeout('%s did not reply within %g s (raise OSTINATO_LLM_TIMEOUT or use a '
                          'smaller model)' % (service, read_timeout))
    failure: Optional[Exception] = None
    try:
        with deadline(read_timeout) as limit:
            try:
                resp = session.request(method, url, json=body, headers=headers, stream=True,
                                       timeout=(connect_timeout, read_timeout))
                text = read_capped(resp, MAX_BODY)
                if limit.expired:           # cut: what was read may be a part only
                    failure = too_slow
            except requests.exceptions.ConnectTimeout:
                failure = LLMUnavailable('cannot reach %s (no connection within %g s); %s'
                                         % (service, connect_timeout, hint))
            except requests.exceptions.RequestException as e:
                # A timeout while the body is being read arrives as a ConnectionError.
                if limit.expired or isinstance(e, requests.exceptions.ReadTimeout) or (
                        any('timed out' in str(x).lower() for x in exception_chain(e)) and
                        not any(isinstance(x, ConnectionRefusedError)
                                for x in exception_chain(e))):
                    failure = too_slow
                else:
                    failure = LLMUnavailable('cannot reach %s (%s); %s'
                                             % (service, _why_unreachable(e), hint))
    finally:
        session.close()
    if failure is not None:         # raised here, so no requests exception is chained to it
        raise failure
    if text is None:
        raise LLMError('llm: %s sent an answer of more than %d bytes; a model reply is never '
                       'that long, so it was refused' % (service, MAX_BODY))
    try:
        payload = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        payload = None
    if resp.status_code >= 500 and not (rejection is not None and rejection(payload, text)):
        raise LLMUnavailable('%s failed with HTTP %d: %s'
                             % (service, resp.status_code, message_of(payload, text)))
    if resp.status_code == 429:
        raise LLMUnavailable('%s is busy (HTTP 429: %s)' % (service, message_of(payload, text)))
    return resp.status_code, payload, text
