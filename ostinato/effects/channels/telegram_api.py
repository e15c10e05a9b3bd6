"""The Telegram Bot API over `requests`, with no database in sight.

This module is the wire half of the Telegram channel: configuration, one
HTTP call per Bot API method, the sorting of failures into final and
transient, and the small pure helpers the durable half needs (splitting long
texts, pacing sends, backing off, reading an update).  The durable half —
committing each inbound message together with the offset that confirms it,
and an outbox that marks a message sent only after `send_message` returned —
lives elsewhere and calls in here with plain values.

Failures come in three kinds:

- `TelegramError` is final: asking again will fail the same way (a rejected
  token, a bad request, a user who blocked the bot).
- `TelegramConflict` (a `TelegramError`) is HTTP 409: another process polls
  with the same token, or a webhook is set.  Nothing in this process can fix
  it; the message says what the operator must do.
- `TelegramRetry` is transient: flood control (429, with the server's
  `retry_after` in `.after`), HTTP 5xx, a refused or broken connection, or no
  answer in time.  Ask again later; `.retry_in(attempt)` says when.

The bot token is a password.  It appears in every request URL, so no text
this module produces — exception messages, reprs — contains it: URLs are
shown as `https://api.telegram.org/bot***/getUpdates`, and exceptions are
raised outside the `except` block, so no chained `requests` exception (whose
text names the full URL) travels with them.  urllib3 logs request lines at
DEBUG level; `TelegramAPI` installs a filter on that logger that masks the
token too.
"""
from __future__ import annotations

import json
import logging
import os
import random
import time
import unicodedata
from collections import deque
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Set,
                    TypeGuard)
from urllib.parse import quote

import requests

from ..net import deadline, deadline_session, exception_chain, is_loopback, read_capped

DEFAULT_API_URL = 'https://api.telegram.org'
MAX_MESSAGE_LENGTH = 4096           # sendMessage: 1-4096 characters
DEFAULT_POLL_TIMEOUT = 30           # seconds a getUpdates call may wait on the server
READ_MARGIN = 10.0                  # extra seconds before a silent long poll counts as dead
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 30.0              # read timeout of every call but getUpdates
MAX_ANSWER = 16 << 20               # bytes: 100 updates are far less
MAX_RETRY_AFTER = 600.0             # seconds: a longer flood wait is asked again after this
MASK = '***'


# --- errors ------------------------------------------------------------------

class TelegramError(Exception):
    """A final failure: the same call will fail the same way again.

    `method` is the Bot API method, `status` the HTTP status (None when there
    was no answer), `description` Telegram's own words, and
    `migrate_to_chat_id` the new id of a group that became a supergroup (send
    there instead).  `str(e)` starts with 'telegram: ' and never contains the
    token.
    """

    def __init__(self, message: str, *, method: Optional[str] = None,
                 status: Optional[int] = None, description: Optional[str] = None,
                 migrate_to_chat_id: Optional[int] = None):
        if not message.startswith('telegram: '):
            message = 'telegram: ' + message
        super().__init__(message)
        self.method = method
        self.status = status
        self.description = description
        self.migrate_to_chat_id = migrate_to_chat_id


class TelegramConflict(TelegramError):
    """HTTP 409: another getUpdates poller uses this token, or a webhook is set."""


class TelegramRetry(Exception):
    """A transient failure: try the same call again later.

    `after` is the wait Telegram asked for (429's `retry_after`, in seconds),
    or None when the server gave no hint (network errors, 5xx): then back off
    with `retry_in(attempt)`.
    """

    def __init__(self, message: str, *, after: Optional[float] = None,
                 method: Optional[str] = None, status: Optional[int] = None):
        if not message.startswith('telegram: '):
            message = 'telegram: ' + message
        super().__init__(message)
        self.after = after
        self.method = method
        self.status = status

    def retry_in(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before attempt number `attempt` (1 = the first retry):
        Telegram's `retry_after` when it gave one, else `backoff(attempt)`."""
        if self.after is not None:
            return self.after
        return backoff(attempt, rand=rand)


# --- configuration -----------------------------------------------------------

def parse_allowed_users(text: Optional[str]) -> Set[int]:
    """The user ids in a comma-separated list ('123, 456'); blank means none."""
    users: Set[int] = set()
    for part in (text or '').replace(';', ',').split(','):
        part = part.strip()
        if not part:
            continue
        try:
            users.add(int(part))
        except ValueError:
            raise TelegramError('TELEGRAM_ALLOWED_USERS must list numeric Telegram user ids '
                                'separated by commas; %r is not one' % part[:40]) from None
    return users


def _check_token(token: str) -> None:
    if not token:
        raise TelegramError('TELEGRAM_BOT_TOKEN is not set; create a bot with @BotFather in '
                            'Telegram and put its token in TELEGRAM_BOT_TOKEN')
    if any(c.isspace() or c in '/?#' for c in token):
        raise TelegramError('TELEGRAM_BOT_TOKEN does not look like a bot token (it looks like '
                            '123456789:AA... and has no spaces or slashes)')


@dataclass
class TelegramConfig:
    """How to reach the bot, and who may talk to it.

    `allowed_users` empty means nobody: the channel must ignore every message
    (and should say so in its start-up log line).  `groups` (TELEGRAM_GROUPS)
    serves group chats too, one conversation per member; without it the bot
    talks in private chats only.  `poll_timeout` is how long
    one getUpdates call may wait on Telegram's side for a message; the HTTP
    read timeout is that plus `read_margin`, so a connection that died
    silently is noticed.
    """
    token: str = field(default='', repr=False)
    api_url: str = DEFAULT_API_URL
    allowed_users: Set[int] = field(default_factory=set)
    groups: bool = False
    poll_timeout: int = DEFAULT_POLL_TIMEOUT
    read_margin: float = READ_MARGIN
    connect_timeout: float = CONNECT_TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT

    def __post_init__(self):
        self.token = (self.token or '').strip()
        self.api_url = (self.api_url or DEFAULT_API_URL).strip().rstrip('/')
        self.allowed_users = set(self.allowed_users)

    def __repr__(self) -> str:
        return ('TelegramConfig(token=%s, api_url=%r, allowed_users=%r, poll_timeout=%r)'
                % (MASK if self.token else "''", self.api_url, sorted(self.allowed_users),
                   self.poll_timeout))

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **overrides) -> 'TelegramConfig':
        """TELEGRAM_BOT_TOKEN (required), TELEGRAM_API_URL, TELEGRAM_ALLOWED_USERS,
        TELEGRAM_GROUPS (1/true/yes/on), TELEGRAM_POLL_TIMEOUT (seconds a long
        poll waits at Telegram, 0-50; default 30)."""
        env = os.environ if environ is None else environ
        from ...runtime.settings import SettingError, switch
        try:
            overrides.setdefault('groups', switch('TELEGRAM_GROUPS', env))
        except SettingError as e:
            raise TelegramError(str(e)) from None
        poll = (env.get('TELEGRAM_POLL_TIMEOUT') or '').strip()
        if poll:
            from ...runtime.settings import SettingError, parse
            try:
                overrides.setdefault('poll_timeout', parse('TELEGRAM_POLL_TIMEOUT', poll))
            except SettingError as e:
                raise TelegramError(str(e)) from None
        config = cls(token=env.get('TELEGRAM_BOT_TOKEN', ''),
                     api_url=env.get('TELEGRAM_API_URL') or DEFAULT_API_URL,
                     allowed_users=parse_allowed_users(env.get('TELEGRAM_ALLOWED_USERS')),
                     **overrides)
        _check_token(config.token)
        return config

    def allows(self, user_id: Any) -> bool:
        return user_id in self.allowed_users

    def redact(self, text: str) -> str:
        """`text` with the token (plain or URL-quoted) replaced by ***."""
        if not self.token or not text:
            return text
        for form in {self.token, quote(self.token, safe=''), quote(self.token)}:
            text = text.replace(form, MASK)
        return text

    def masked_url(self, method: str) -> str:
        return '%s/bot%s/%s' % (self.api_url, MASK, method)


# --- the client --------------------------------------------------------------

class _RedactToken(logging.Filter):
    """Masks one token in the records of a logger (urllib3 logs request lines)."""

    def __init__(self, config: TelegramConfig):
        super().__init__()
        self.config = config

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:
            return True
        clean = self.config.redact(text)
        if clean != text:
            record.msg, record.args = clean, None
        return True


_filtered_tokens: Set[str] = set()


def _guard_logs(config: TelegramConfig) -> None:
    if config.token and config.token not in _filtered_tokens:
        _filtered_tokens.add(config.token)
        logging.getLogger('urllib3.connectionpool').addFilter(_RedactToken(config))


def _why(exc: BaseException, config: TelegramConfig) -> str:
    chain = list(exception_chain(exc))
    text = ' '.join(str(e) for e in chain)
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or 'refused' in text.lower():
        return 'connection refused'
    if any(s in text for s in ('Name or service not known', 'nodename nor servname',
                               'getaddrinfo failed', 'Failed to resolve',
                               'Temporary failure in name resolution')):
        return 'host not found'
    if any(isinstance(e, requests.exceptions.SSLError) for e in chain):
        return 'TLS error'
    if any(s in text for s in ('RemoteDisconnected', 'aborted', 'reset', 'Connection broken')):
        return 'the connection was closed before an answer'
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return config.redact(first)[:200]


def _timed_out(exc: BaseException) -> bool:
    chain = list(exception_chain(exc))
    return (not any(isinstance(e, ConnectionRefusedError) for e in chain)
            and any(isinstance(e, (TimeoutError, requests.exceptions.Timeout))
                    or 'timed out' in str(e).lower() for e in chain))


def _description(payload: Any, text: str) -> str:
    """What the server said, as one printable line (it goes into the log)."""
    if isinstance(payload, dict) and payload.get('description'):
        return printable(' '.join(str(payload['description']).split()), 500)
    body = ' '.join((text or '').split())
    return printable(body, 200) or '(empty body)'


class TelegramAPI:
    """One Bot API call per method; see the module doc for what each failure means.

    Calls are plain JSON POSTs to `{api_url}/bot{token}/{method}`.  getUpdates
    runs on a session of its own, so one thread may long-poll while another
    sends; do not run two getUpdates at once (Telegram answers the older one
    with 409).  A `session` passed in is used for every call.
    """

    def __init__(self, config: TelegramConfig, session: Optional[requests.Session] = None):
        _check_token(config.token)
        self.config = config
        loopback = is_loopback(config.api_url)
        if session is None:
            # A proxy from the environment must not capture a fake or local
            # Bot API server on this machine.
            self._sessions = {'poll': deadline_session(trust_env=not loopback),
                              'call': deadline_session(trust_env=not loopback)}
            self._own = True
        else:
            self._sessions = {'poll': session, 'call': session}
            self._own = False
        _guard_logs(config)

    def __repr__(self) -> str:
        return 'TelegramAPI(%s/bot%s)' % (self.config.api_url, MASK)

    def close(self) -> None:
        if self._own:
            for s in self._sessions.values():
                s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # methods ----------------------------------------------------------------

    def get_me(self) -> dict:
        """The bot's own User object (id, first_name, username); a cheap token check."""
        return self.call('getMe')

    def delete_webhook(self, drop_pending_updates: bool = False) -> bool:
        """Remove any webhook, so getUpdates may be used.  Pending updates stay
        queued unless `drop_pending_updates`."""
        params = {'drop_pending_updates': True} if drop_pending_updates else {}
        return bool(self.call('deleteWebhook', params))

    def get_updates(self, offset: Optional[int] = None, timeout: Optional[int] = None, *,
                    limit: int = 100,
                    allowed_updates: Optional[Iterable[str]] = ('message',)) -> List[dict]:
        """Updates with update_id >= `offset`, waiting up to `timeout` seconds
        (default: the config's poll_timeout) on the server for one to arrive.

        Calling with `offset` confirms every update below it: Telegram
        forgets them for good.  So pass last update_id + 1 only after the
        updates up to it have been stored.  `allowed_updates` (default: only
        new messages) is remembered by Telegram for later calls too.
        """
        if timeout is None:
            timeout = self.config.poll_timeout
        timeout = max(0, int(timeout))
        params: Dict[str, Any] = {'timeout': timeout, 'limit': limit}
        if offset is not None:
            params['offset'] = int(offset)
        if allowed_updates is not None:
            params['allowed_updates'] = list(allowed_updates)
        result = self.call('getUpdates', params, read_timeout=timeout + self.config.read_margin,
                           session=self._sessions['poll'])
        if not isinstance(result, list):
            # A garbled answer (a proxy's page, a cut body) passes: ask again.
            raise TelegramRetry('getUpdates at %s answered %s instead of a list of updates'
                                % (self.config.masked_url('getUpdates'), type(result).__name__),
                                method='getUpdates')
        return result

    def send_message(self, chat_id: Any, text: str,
                     message_thread_id: Optional[int] = None,
                     reply_to: Optional[int] = None) -> dict:
        """Send `text` as plain text (no parse_mode, so nothing in it is markup);
        returns the sent Message (its `message_id`, `date`, `chat`...).
        With `reply_to`, as a reply to that message of the chat (sent all
        the same if that message is gone).

        `text` must be 1-4096 characters and not blank: split longer texts
        with `split_text` first.  A TelegramRetry from a timeout is ambiguous:
        Telegram may have delivered the message anyway.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError('send_message: the text is empty (Telegram refuses blank messages)')
        if len(text) > MAX_MESSAGE_LENGTH:
            raise ValueError('send_message: the text has %d characters, more than Telegram\'s '
                             '%d; split it with split_text() first' % (len(text), MAX_MESSAGE_LENGTH))
        params: Dict[str, Any] = {'chat_id': chat_id, 'text': text}
        if message_thread_id is not None:
            params['message_thread_id'] = message_thread_id
        if reply_to is not None:
            params['reply_parameters'] = {'message_id': reply_to,
                                          'allow_sending_without_reply': True}
        return self.call('sendMessage', params)

    def send_typing(self, chat_id: Any, message_thread_id: Optional[int] = None) -> bool:
        """Show "typing..." in the chat for about 5 seconds (or until the bot's
        next message there)."""
        params: Dict[str, Any] = {'chat_id': chat_id, 'action': 'typing'}
        if message_thread_id is not None:
            params['message_thread_id'] = message_thread_id
        return bool(self.call('sendChatAction', params))

    # the one HTTP exchange --------------------------------------------------

    def call(self, method: str, params: Optional[dict] = None, *,
             read_timeout: Optional[float] = None,
             session: Optional[requests.Session] = None) -> Any:
        """POST `params` as JSON to `method`; the `result` of an ok answer."""
        cfg = self.config
        url = '%s/bot%s/%s' % (cfg.api_url, cfg.token, method)
        where = cfg.masked_url(method)
        read_timeout = cfg.request_timeout if read_timeout is None else read_timeout
        session = session or self._sessions['call']
        failure = None          # (kind, message): raised after the except block
        resp = None
        slow = ('retry', 'no answer from %s within %g s' % (where, read_timeout))
        # The read timeout bounds the whole answer (with the connection), so
        # a server that drips it byte by byte cannot hold the poller.
        with deadline(cfg.connect_timeout + read_timeout) as limit:
            try:
                resp = session.post(url, json=params or {}, stream=True,
                                    timeout=(cfg.connect_timeout, read_timeout))
                text = read_capped(resp, MAX_ANSWER)
                if limit.expired:           # cut: what was read may be a part only
                    failure = slow
                elif text is None:
                    failure = ('retry', '%s answered with more than %d bytes'
                               % (where, MAX_ANSWER))
            except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                    requests.exceptions.InvalidSchema, requests.exceptions.URLRequired):
                failure = ('final', 'TELEGRAM_API_URL %r is not a usable http(s) URL'
                           % cfg.api_url)
            except requests.exceptions.ConnectTimeout:
                failure = ('retry', 'cannot reach %s (no connection within %g s)'
                           % (where, cfg.connect_timeout))
            except requests.exceptions.ReadTimeout:
                failure = slow
            except requests.exceptions.RequestException as e:
                if limit.expired or _timed_out(e):
                    failure = slow
                else:
                    failure = ('retry', 'cannot reach %s (%s)' % (where, _why(e, cfg)))
        # Raised here, outside the handler, so no requests exception (whose
        # text holds the full URL) is chained to ours.
        if failure is not None:
            kind, message = failure
            if kind == 'final':
                raise TelegramError(message, method=method)
            raise TelegramRetry(message, method=method)
        assert resp is not None         # no failure: the post answered
        return self._result(method, where, resp.status_code, text)

    def _result(self, method: str, where: str, status: int, text: str) -> Any:
        redact = self.config.redact
        try:
            payload = json.loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            payload = None
        if isinstance(payload, dict) and payload.get('ok') is True and 200 <= status < 300:
            return payload.get('result')
        description = redact(_description(payload, text))
        params = payload.get('parameters') if isinstance(payload, dict) else None
        params = params if isinstance(params, dict) else {}
        code = payload.get('error_code') if isinstance(payload, dict) else None
        code = code if isinstance(code, int) else status

        if 429 in (status, code):
            after = params.get('retry_after')
            # 1e400, 10**400 or a year: ask again sooner; NaN or junk: back off.
            after = float(min(after, MAX_RETRY_AFTER)) if isinstance(after, (int, float)) and \
                not isinstance(after, bool) and after >= 0 else None
            raise TelegramRetry('%s: flood control (HTTP 429: %s)%s'
                                % (where, description,
                                   '; retry after %g s' % after if after is not None else ''),
                                after=after, method=method, status=status)
        if 409 in (status, code):
            if 'webhook' in description.lower():
                fix = ('a webhook is set for this bot; remove it with deleteWebhook '
                       '(the channel calls it at start) and stop whatever set it')
            else:
                fix = ('another process is polling getUpdates with the same bot token; '
                       'stop the other bot instance (Telegram allows one poller per token) '
                       'or give this one a token of its own')
            raise TelegramConflict('%s: conflict (HTTP 409: %s): %s' % (where, description, fix),
                                   method=method, status=status, description=description)
        if status >= 500 or status == 408 or (isinstance(code, int) and code >= 500):
            raise TelegramRetry('%s failed (HTTP %d: %s)' % (where, status, description),
                                method=method, status=status)
        if status == 401 or code == 401:
            raise TelegramError('%s: the bot token was rejected (HTTP 401: %s); check '
                                'TELEGRAM_BOT_TOKEN (@BotFather shows the current token)'
                                % (where, description),
                                method=method, status=status, description=description)
        if status == 404 or code == 404:
            raise TelegramError('%s: not found (HTTP 404: %s); the bot token is malformed or '
                                'TELEGRAM_API_URL does not point at a Bot API server'
                                % (where, description),
                                method=method, status=status, description=description)
        if status < 300:
            # A garbled 2xx (a proxy's page, a cut body, `ok` missing): it
            # may pass, and ending the bot for it would end it for good.
            raise TelegramRetry('%s did not answer like the Telegram Bot API (HTTP %d: %s); '
                                'is TELEGRAM_API_URL right?' % (where, status, description),
                                method=method, status=status)
        migrate = params.get('migrate_to_chat_id')
        raise TelegramError('%s was refused (HTTP %d: %s)' % (where, status, description),
                            method=method, status=status, description=description,
                            migrate_to_chat_id=migrate if isinstance(migrate, int) else None)


# --- reading updates ---------------------------------------------------------

class IncomingMessage(NamedTuple):
    chat_id: int
    message_thread_id: Optional[int]
    user_id: int
    user_name: str
    text: Optional[str]     # None: a message without text (a photo, a sticker...)
    date: int               # unix seconds, UTC
    message_id: int
    too_long: int = 0       # a text over MAX_TEXT: its length (`text` is then None)


MAX_TEXT = 65536              # Telegram's own limit is 4096; more is not a real message
MAX_NAME = 128
MAX_ID = 1 << 53               # user and chat ids have at most 52 significant bits
MAX_UPDATE_ID = 1 << 31        # update ids are 32-bit (an offset above them deafens the poller)
MAX_DATE = 253402300799        # 9999-12-31T23:59:59Z, the last time the clock can show


def _int_in(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value < high


def valid_update_id(value: Any) -> TypeGuard[int]:
    """Whether `value` can be an update_id: storing a bigger one as the
    offset would ask Telegram for updates that never come."""
    return _int_in(value, 0, MAX_UPDATE_ID)


_UNPRINTABLE = {'Cc', 'Cf', 'Zl', 'Zp', 'Cs', 'Co', 'Cn'}


def printable(text: Any, limit: int = 200) -> str:
    """`text` for one line of the operator's log: control and format
    characters (a newline, an ANSI escape, a right-to-left override) are
    shown escaped, so a user's name cannot forge or colour a log line."""
    text = str(text)
    if len(text) > limit:
        text = text[:limit] + '...'
    if text.isprintable():
        return text
    return ''.join(c if unicodedata.category(c) not in _UNPRINTABLE or c == ' '
                   else c.encode('unicode_escape').decode('ascii') for c in text)


def _clean_name(text: str) -> str:
    """A name as one line of plain text: control and format characters
    become spaces, runs of spaces one (a name goes into the chat log the
    model reads, where a line break would forge a line)."""
    text = ''.join(' ' if unicodedata.category(c) in _UNPRINTABLE else c
                   for c in text[:MAX_NAME * 4])
    return ' '.join(text.split())[:MAX_NAME]


def user_display_name(user: Mapping[str, Any]) -> str:
    """'First Last', else the @username (without @), else 'user <id>'."""
    name = _clean_name(' '.join(p for p in (user.get('first_name'), user.get('last_name'))
                                if isinstance(p, str)))
    username = user.get('username')
    return name or (_clean_name(username) if isinstance(username, str) else '') \
        or 'user %s' % user.get('id')


def read_update(update: Any):
    """(the user's message, None) for an update holding a message from a
    user -- its `text` None when it is no text (a photo, a sticker...);
    (None, None) for anything else (edits, channel posts, bots, joins...);
    (None, what is wrong) for an update whose message cannot be used (a
    date that is no number, an id that is no id...).  Never raises: every
    field comes from outside and is checked here, at the edge.

    `message_thread_id` is the forum topic the message was written in, else
    None: Telegram also sets message_thread_id on replies in ordinary
    supergroups, where sending to it fails, so it is kept only for topic
    messages.  A private chat's id is its user's id."""
    if not isinstance(update, Mapping):
        return None, 'the update is not an object'
    message = update.get('message')
    if message is None:
        return None, None
    if not isinstance(message, Mapping):
        return None, 'its message is not an object'
    user, chat = message.get('from'), message.get('chat')
    if user is None:
        return None, None                   # a channel post: nobody to answer
    if not isinstance(user, Mapping) or not isinstance(chat, Mapping):
        return None, 'its sender or chat is not an object'
    if user.get('is_bot') is True:
        return None, None
    problems = []
    if not _int_in(user.get('id'), 1, MAX_ID):
        problems.append("the sender's id")
    if not _int_in(chat.get('id'), -MAX_ID * 1000, MAX_ID):
        problems.append("the chat's id")    # supergroups: -100 followed by the group id
    if not _int_in(message.get('message_id'), 0, 1 << 63):
        problems.append('message_id')
    if not _int_in(message.get('date'), 0, MAX_DATE + 1):
        problems.append('date')
    text = message.get('text')
    too_long = 0
    if text is not None and not isinstance(text, str):
        problems.append('text')
    elif isinstance(text, str) and len(text) > MAX_TEXT:
        # Not kept, but the user is told (telegram.py): they did write.
        too_long, text = len(text), None
    if problems:
        return None, 'its %s cannot be used' % ', '.join(problems)
    topic = message.get('message_thread_id') if message.get('is_topic_message') is True else None
    return IncomingMessage(chat_id=chat['id'],
                           message_thread_id=topic if _int_in(topic, 1, 1 << 63) else None,
                           user_id=user['id'],
                           user_name=user_display_name(user),
                           text=text if text else None,
                           date=message['date'],
                           message_id=message['message_id'],
                           too_long=too_long), None


def update_message(update: Mapping[str, Any]) -> Optional[IncomingMessage]:
    """The text message a user sent, from one getUpdates update, or None for
    anything else (see `read_update`)."""
    m, _ = read_update(update)
    return m if m is not None and m.text is not None else None


def update_non_text(update: Mapping[str, Any]) -> Optional[IncomingMessage]:
    """A user's message without text (a photo, a sticker, a voice note...),
    with `text` empty; None for anything else."""
    m, _ = read_update(update)
    return m._replace(text='') if m is not None and m.text is None else None


# --- pure helpers ------------------------------------------------------------

def split_text(text: str, limit: int = MAX_MESSAGE_LENGTH) -> List[str]:
    """`text` in pieces of at most `limit` characters, in order.

    Each cut is made at the last line break that fits, else at the last
    space, else exactly at `limit`; the line break or space cut at is
    dropped, nothing else is.  An empty text gives no pieces.  Pieces may be
    blank (a run of empty lines): skip those when sending.
    """
    if limit < 1:
        raise ValueError('split_text: limit must be at least 1')
    pieces: List[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit + 1]       # a break just after `limit` characters still fits
        for sep in ('\n', ' '):
            cut = window.rfind(sep)
            if cut > 0:
                pieces.append(rest[:cut])
                rest = rest[cut + 1:]
                break
        else:
            pieces.append(rest[:limit])
            rest = rest[limit:]
    if rest:
        pieces.append(rest)
    return pieces


def backoff(attempt: int, *, base: float = 1.0, cap: float = 60.0, jitter: float = 0.25,
            rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait before retry number `attempt` (1, 2, 3...): base * 2**(attempt-1),
    i.e. 1, 2, 4, 8 ... s, times a random factor in [1 - jitter, 1 + jitter],
    never more than `cap`.  `rand` returns a float in [0, 1)."""
    exponent = min(max(int(attempt), 1) - 1, 32)
    delay = min(cap, base * 2.0 ** exponent)
    delay *= 1.0 + jitter * (2.0 * rand() - 1.0)
    return max(0.0, min(cap, delay))


class RateLimiter:
    """Paces sends: at least `per_chat` seconds between two messages to one
    chat (Telegram: about 1/s), and at most `overall` messages in any
    `window` seconds across all chats (Telegram: about 30/s; 25 leaves room).

    Pure bookkeeping: `delay` says how long to wait, `sent` records a send;
    it never sleeps.  `now` defaults to the injected `clock`.  Not
    thread-safe: use it from the one thread that sends.
    """

    def __init__(self, per_chat: float = 1.0, overall: int = 25, window: float = 1.0,
                 clock: Callable[[], float] = time.monotonic):
        self.per_chat = per_chat
        self.overall = overall
        self.window = window
        self.clock = clock
        self._last: Dict[Any, float] = {}
        self._recent: deque = deque()

    def _now(self, now: Optional[float]) -> float:
        return self.clock() if now is None else now

    def _forget_old(self, now: float) -> None:
        while self._recent and self._recent[0] <= now - self.window:
            self._recent.popleft()

    def delay(self, chat_id: Any, now: Optional[float] = None) -> float:
        """Seconds to wait before the next message to `chat_id` may go (0 = now)."""
        now = self._now(now)
        self._forget_old(now)
        wait = 0.0
        last = self._last.get(chat_id)
        if last is not None:
            wait = max(wait, last + self.per_chat - now)
        if self.overall > 0 and len(self._recent) >= self.overall:
            wait = max(wait, self._recent[-self.overall] + self.window - now)
        return max(0.0, wait)

    def sent(self, chat_id: Any, now: Optional[float] = None) -> None:
        """Record one message sent to `chat_id` at `now`."""
        now = self._now(now)
        self._last[chat_id] = now
        self._recent.append(now)
        self._forget_old(now)
        if len(self._last) > 256:       # chats whose pause is over need no entry
            self._last = {c: t for c, t in self._last.items() if t + self.per_chat > now}
