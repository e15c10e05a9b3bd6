"""A fake Telegram Bot API server on 127.0.0.1, for tests of the Telegram channel.

A real HTTP server (see fakes/__init__.py), so the client's whole HTTP path
runs: URLs with the token, JSON bodies, status codes, long polls, timeouts,
refused connections.  It speaks the Bot API's shapes — every answer is
{"ok": true, "result": ...} or {"ok": false, "error_code": N, "description":
"...", "parameters": {...}} — for the methods the channel uses:

    from fakes.telegram import FakeTelegram

    with FakeTelegram() as tg:              # tg.url is the API base, tg.token the token
        tg.user_writes(42, 'hello')         # queue a text message from user 42 (update)
        tg.user_writes(42, 'hi', chat_id=-100, name='Ann Lee', thread_id=7)
        tg.push_update({'message': {...}})  # any raw update (photo, edit...)
        tg.fail_next('sendMessage', 429, retry_after=3)
        tg.fail_next('getUpdates', 409)     # 'terminated by other getUpdates request'
        tg.fail_next('getUpdates', 500, 'Internal Server Error')
        tg.raw_next('getUpdates', 502, '<html>Bad Gateway</html>')   # a proxy's page
        tg.hang_next('getUpdates')          # accept, never answer (until stop)
        tg.set_webhook('https://x')         # getUpdates gets 409 until deleteWebhook
        ...
        tg.refuse()                         # stop listening: connections are refused
        tg.sent                             # the sendMessage request bodies, as sent
        tg.sent_messages                    # the Message objects answered to them
        tg.actions                          # the sendChatAction bodies
        tg.pending                          # the updates not yet confirmed
        tg.calls                            # (method, params) of every call

getUpdates follows Telegram: a call with `offset` first confirms (drops)
every update below it, then returns the updates with update_id >= offset at
once, or waits up to `timeout` seconds for one to arrive.  A newer getUpdates
call ends a waiting older one with 409, as Telegram does when two bot
instances poll.  A wrong token gets 401, an unknown method 404.
"""
from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from typing import Optional
from urllib.parse import parse_qsl, urlsplit

from fakes import FakeServer

TOKEN = '123456789:AAFakeTokenForTests-abcdefghijk'
BOT = {'id': 123456789, 'is_bot': True, 'first_name': 'Ostinato test bot',
       'username': 'ostinato_test_bot', 'can_join_groups': True,
       'can_read_all_group_messages': False, 'supports_inline_queries': False}

DESCRIPTIONS = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden: bot was blocked by the user',
    404: 'Not Found',
    409: 'Conflict: terminated by other getUpdates request; '
         'make sure that only one bot instance is running',
    429: 'Too Many Requests: retry after %(retry_after)s',
    500: 'Internal Server Error',
    502: 'Bad Gateway',
}
WEBHOOK_CONFLICT = ("Conflict: can't use getUpdates method while webhook is active; "
                    "use deleteWebhook to delete the webhook first")
METHODS = ('getMe', 'getUpdates', 'sendMessage', 'sendChatAction', 'deleteWebhook')
INT_PARAMS = ('offset', 'limit', 'timeout', 'chat_id', 'message_thread_id')


class FakeTelegram(FakeServer):

    def __init__(self, token: str = TOKEN, first_update_id: int = 500000001):
        super().__init__(models=())
        self.token = token
        self.bot = dict(BOT, id=int(token.split(':')[0]) if token.split(':')[0].isdigit()
                        else BOT['id'])
        self.calls: list = []               # (method, params) of every call, in order
        self.sent: list = []                # sendMessage bodies, as the client sent them
        self.sent_messages: list = []       # the Message objects answered to them
        self.actions: list = []             # sendChatAction bodies ("typing...")
        self.webhook: Optional[str] = None
        self.allowed_updates = None         # as last given to getUpdates
        self._updates: list = []            # unconfirmed updates, by update_id
        self._next_update_id = first_update_id
        self._next_message_id = 1
        self._poll_generation = 0
        self._behaviours = defaultdict(deque)
        self._cond = threading.Condition(self._lock)

    @property
    def api_url(self) -> str:
        return self.url

    def stop(self) -> None:
        self._stopped.set()
        with self._cond:
            self._cond.notify_all()         # wakes long polls
        super().stop()

    # test helpers ---------------------------------------------------------

    def push_update(self, update: dict) -> dict:
        """Queue a raw update; it gets the next update_id unless it has one."""
        with self._cond:
            update = dict(update)
            if 'update_id' not in update:
                update['update_id'] = self._next_update_id
            self._next_update_id = max(self._next_update_id, update['update_id']) + 1
            self._updates.append(update)
            self._updates.sort(key=lambda u: u['update_id'])
            self._cond.notify_all()
        return update

    def user_writes(self, user_id: int, text: str, chat_id: Optional[int] = None,
                    name: str = 'Ann', thread_id: Optional[int] = None,
                    username: Optional[str] = None, date: Optional[int] = None) -> dict:
        """Queue the update of user `user_id` writing `text` (in the private chat
        with the bot unless `chat_id`; in forum topic `thread_id` if given)."""
        first, _, last = name.partition(' ')
        user = {'id': user_id, 'is_bot': False, 'first_name': first}
        if last:
            user['last_name'] = last
        if username:
            user['username'] = username
        chat_id = user_id if chat_id is None else chat_id
        if chat_id == user_id:
            chat = {'id': chat_id, 'type': 'private', 'first_name': first}
        else:
            chat = {'id': chat_id, 'type': 'supergroup', 'title': 'Test group'}
            if thread_id is not None:
                chat['is_forum'] = True
        with self._lock:
            message_id = self._next_message_id
            self._next_message_id += 1
        message = {'message_id': message_id, 'from': user, 'chat': chat,
                   'date': int(time.time()) if date is None else date, 'text': text}
        if thread_id is not None:
            message['message_thread_id'] = thread_id
            message['is_topic_message'] = True
        return self.push_update({'message': message})

    def fail_next(self, method: str, status: int, description: Optional[str] = None,
                  retry_after: Optional[int] = None, **parameters) -> None:
        """The next call of `method` gets this Bot API error (one per call queued)."""
        if retry_after is not None:
            parameters['retry_after'] = retry_after
        if description is None:
            description = DESCRIPTIONS.get(status, 'Error') % {'retry_after': retry_after}
            if retry_after is None:
                description = description.replace(': retry after None', '')
        payload = {'ok': False, 'error_code': status, 'description': description}
        if parameters:
            payload['parameters'] = parameters
        with self._lock:
            self._behaviours[method.lower()].append(('answer', status, payload))

    def raw_next(self, method: str, status: int, text: str) -> None:
        """The next call of `method` gets `text` (not JSON) with HTTP `status`."""
        with self._lock:
            self._behaviours[method.lower()].append(('answer', status, text))

    def hang_next(self, method: str) -> None:
        """The next call of `method` is accepted and never answered (until stop)."""
        with self._lock:
            self._behaviours[method.lower()].append(('hang',))

    def set_webhook(self, url: str) -> None:
        """As if someone set a webhook: getUpdates gets 409 until deleteWebhook."""
        self.webhook = url

    @property
    def pending(self) -> list:
        """The updates Telegram still holds (not confirmed by an offset)."""
        with self._lock:
            return list(self._updates)

    # serving --------------------------------------------------------------

    def _handle(self, handler, http_method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get('Content-Length') or 0)
        data = handler.rfile.read(length) if length else b''
        params = dict(parse_qsl(parts.query))
        ctype = handler.headers.get('Content-Type') or ''
        if data:
            if 'json' in ctype:
                try:
                    body = json.loads(data)
                except ValueError:
                    return self._answer(handler, 400, self._error(400, "Bad Request: can't parse JSON"))
                if isinstance(body, dict):
                    params.update(body)
            else:
                params.update(parse_qsl(data.decode('utf-8', 'replace')))
        for key in INT_PARAMS:
            if isinstance(params.get(key), str):
                try:
                    params[key] = int(params[key])
                except ValueError:
                    pass

        prefix, _, method = parts.path.lstrip('/').partition('/')
        if not prefix.startswith('bot') or not method or '/' in method:
            return self._answer(handler, 404, self._error(404, 'Not Found'))
        if prefix[3:] != self.token:
            return self._answer(handler, 401, self._error(401, 'Unauthorized'))
        known = {m.lower(): m for m in METHODS}
        name = known.get(method.lower())
        with self._lock:
            self.calls.append((name or method, params))
        if name is None:
            return self._answer(handler, 404, self._error(404, 'Not Found: method not found'))
        with self._lock:
            queue = self._behaviours[name.lower()]
            behaviour = queue.popleft() if queue else None
        if behaviour is not None:
            if behaviour[0] == 'hang':
                self._stopped.wait()
                handler.close_connection = True
                return
            return self._answer(handler, behaviour[1], behaviour[2])
        getattr(self, '_m_' + name)(handler, params)

    def _m_getMe(self, handler, params) -> None:
        self._ok(handler, self.bot)

    def _m_deleteWebhook(self, handler, params) -> None:
        with self._cond:
            self.webhook = None
            if params.get('drop_pending_updates') in (True, 'true', 'True', '1'):
                self._updates.clear()
        self._ok(handler, True)

    def _m_sendMessage(self, handler, params) -> None:
        text = params.get('text')
        if params.get('chat_id') in (None, ''):
            return self._answer(handler, 400, self._error(400, 'Bad Request: chat_id is empty'))
        if not isinstance(text, str) or not text.strip():
            return self._answer(handler, 400, self._error(400, 'Bad Request: message text is empty'))
        if len(text) > 4096:
            return self._answer(handler, 400, self._error(400, 'Bad Request: message is too long'))
        chat_id = params['chat_id']
        with self._lock:
            message_id = self._next_message_id
            self._next_message_id += 1
            chat = {'id': chat_id, 'type': 'private' if isinstance(chat_id, int) and chat_id > 0
                    else 'supergroup'}
            message = {'message_id': message_id, 'from': dict(self.bot), 'chat': chat,
                       'date': int(time.time()), 'text': text}
            if params.get('message_thread_id') is not None:
                message['message_thread_id'] = params['message_thread_id']
                message['is_topic_message'] = True
            self.sent.append(params)
            self.sent_messages.append(message)
        self._ok(handler, message)

    def _m_sendChatAction(self, handler, params) -> None:
        if params.get('chat_id') in (None, '') or not params.get('action'):
            return self._answer(handler, 400, self._error(400, 'Bad Request: chat_id or action is empty'))
        with self._lock:
            self.actions.append(params)
        self._ok(handler, True)

    def _m_getUpdates(self, handler, params) -> None:
        offset = params.get('offset')
        limit = params.get('limit') if isinstance(params.get('limit'), int) else 100
        limit = min(max(limit, 1), 100)
        timeout = params.get('timeout') if isinstance(params.get('timeout'), (int, float)) else 0
        deadline = time.monotonic() + max(0, timeout)
        with self._cond:
            if self.webhook:
                answer = (409, self._error(409, WEBHOOK_CONFLICT))
            else:
                if 'allowed_updates' in params:
                    self.allowed_updates = params['allowed_updates']
                self._poll_generation += 1
                generation = self._poll_generation
                self._cond.notify_all()     # an older waiting poll is now superseded
                if isinstance(offset, int):
                    self._updates = [u for u in self._updates if u['update_id'] >= offset]
                answer = None
                while answer is None:
                    if generation != self._poll_generation:
                        answer = (409, self._error(409, DESCRIPTIONS[409]))
                        break
                    ready = [u for u in self._updates
                             if not isinstance(offset, int) or u['update_id'] >= offset][:limit]
                    remaining = deadline - time.monotonic()
                    if ready or remaining <= 0 or self._stopped.is_set():
                        answer = (200, {'ok': True, 'result': ready})
                        break
                    self._cond.wait(remaining)
        self._answer(handler, *answer)

    # wire -----------------------------------------------------------------

    @staticmethod
    def _error(status: int, description: str) -> dict:
        return {'ok': False, 'error_code': status, 'description': description}

    def _ok(self, handler, result) -> None:
        self._answer(handler, 200, {'ok': True, 'result': result})

    def _answer(self, handler, status: int, payload) -> None:
        self._send(handler, status, payload)
