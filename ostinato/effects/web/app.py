"""The web server: the chat page, the owner's inspector, live updates.

Starlette (routing, requests, responses, static files) on uvicorn (the
HTTP server), in a thread of its own with its own event loop, beside the
scheduler; pages are Jinja2 templates, with autoescaping on, and a little
plain JavaScript from static/ (no build step).

It only reads the database, on connections of its own (views.Reader).
Every write -- a message, a login, a logout -- is a job for the web
channel (channel.py), run by the scheduler's thread in a transaction, and
the request is answered after that commit.  It never runs a task's turn.

Safety: the owner's link (printed at start) and invited users' links carry
a token whose hash is stored; opening one sets an HttpOnly, SameSite=Strict
session cookie -- in a browser signed in as someone else only after its
person confirms the switch (a POST with that session's CSRF token).  Without a session everything but the static files is 401;
an invited user gets 403 for the inspector.  POSTs take JSON only and need
the session's CSRF token in a header and a same-origin Origin.  Messages
are capped at MAX_MESSAGE bytes and each session at a rate; every page has
a Content-Security-Policy that runs only our own script files.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import threading
import time
from typing import Any
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...runtime import report
from ..net import is_loopback_host as is_loopback
from . import views
from .channel import HOLD_SECONDS, take_message
from .state import (KEY_RE, SESSION_DAYS, WebError, login, logout, new_secret, secret_hash,
                    web_state)

HERE = os.path.dirname(os.path.abspath(__file__))
COOKIE = 'ostinato_session'
MAX_MESSAGE = 16 * 1024          # bytes of UTF-8 in one message
MAX_BODY = 64 * 1024             # bytes of one request body
RATE_BURST = 20                  # messages a session may send at once ...
RATE_PER_SECOND = 2.0            # ... and then this many a second
KEEPALIVE = 15.0                 # seconds between comments on an idle event stream
LOOK_EVERY = 0.25                # seconds between looks for other processes' commits
INSPECT_EVERY = 0.2              # the inspector is told of changes at most this often
LARGEST = 1 << 31                # ids and numbers in the database's BTrees are below this

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b'content-security-policy', CSP.encode()),
    (b'x-content-type-options', b'nosniff'),
    (b'x-frame-options', b'DENY'),
    (b'referrer-policy', b'no-referrer'),
    (b'cache-control', b'no-store'),
]


class Refused(Exception):
    retry = 0.0         # for 429: the seconds to wait

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# ------------------------------------------------------------------ the live feed

class Feed:
    """A counter of the commits seen; streams wait for it to move."""

    def __init__(self):
        self.version = 0
        self.event = asyncio.Event()
        self.closed = False

    def bump(self):
        self.version += 1
        event, self.event = self.event, asyncio.Event()
        event.set()

    async def wait(self, version, timeout):
        """Until the version differs from `version`; False on timeout."""
        if self.version != version or self.closed:
            return True
        try:
            await asyncio.wait_for(self.event.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False


class Bucket:
    """A token bucket: RATE_BURST messages at once, then RATE_PER_SECOND."""

    def __init__(self):
        self.tokens = float(RATE_BURST)
        self.at = time.monotonic()

    def take(self):
        """0 when a message may go now, else the seconds to wait."""
        now = time.monotonic()
        self.tokens = min(RATE_BURST, self.tokens + (now - self.at) * RATE_PER_SECOND)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / RATE_PER_SECOND


# ------------------------------------------------------------------ the server

class WebServer:
    def __init__(self, channel, sock, db):
        self.channel = channel
        self.sock = sock
        self.db = db
        self.reader = views.Reader(db)
        self.failed = None
        self.loop = None
        self.feed: Any = None
        self.poked: Any = None
        self.buckets = {}
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(os.path.join(HERE, 'templates')),
            autoescape=True, undefined=jinja2.StrictUndefined)
        public = urlsplit(channel.public_url) if channel.public_url else None
        # The origins a POST may come from besides the request's own: the
        # public address a reverse proxy serves the page at.
        self.origins = {'%s://%s' % (public.scheme, public.netloc)} if public else set()
        self.hosts = None
        if is_loopback(channel.host):
            # A page on loopback answers only to loopback names (and its
            # public name behind a proxy), so a rebinding DNS name cannot
            # reach it from a browser.
            self.hosts = {'127.0.0.1', 'localhost', '::1', '[::1]'}
            if public is not None and public.hostname:
                self.hosts.add(public.hostname)
        self.app = Guard(build_app(self), self)
        # An idle connection is kept longer than a reverse proxy's own keep-alive
        # (nginx: 60 s), so the server is never the one to close a connection
        # the proxy or a browser is just reusing (uvicorn's default is 5 s).
        config = uvicorn.Config(self.app, log_config=None, access_log=False, lifespan='on',
                                http='h11', ws='none', loop='asyncio', server_header=False,
                                timeout_graceful_shutdown=2, limit_concurrency=512,
                                timeout_keep_alive=75)
        self.uv = uvicorn.Server(config)
        self.thread = None

    def start(self):
        self.thread = threading.Thread(target=self._run, name='ostinato-web', daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.uv.run(sockets=[self.sock])
        except BaseException as e:        # noqa: B036 -- uvicorn exits with SystemExit
            self.failed = 'the web server stopped: %s: %s' % (type(e).__name__, e)
            self.channel.event.set()

    def poke(self):
        """A commit happened (called from the scheduler's thread)."""
        loop, poked = self.loop, self.poked
        if loop is not None and poked is not None:
            try:
                loop.call_soon_threadsafe(poked.set)
            except RuntimeError:        # the loop closed: we are stopping
                pass

    def stop(self):
        self.uv.should_exit = True
        loop = self.loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._close_feed)
            except RuntimeError:
                pass
        if self.thread is not None:
            self.thread.join(5)

    def _close_feed(self):
        if self.feed is not None:
            self.feed.closed = True
            self.feed.bump()

    async def watch(self):
        """Bump the feed whenever the database has a new commit: at once
        when poked, else after a short look (other processes' commits)."""
        last = None
        while not self.feed.closed:
            try:
                await asyncio.wait_for(self.poked.wait(), LOOK_EVERY)
            except asyncio.TimeoutError:
                pass
            self.poked.clear()
            try:
                tid = self.db.lastTransaction()
            except Exception:
                continue
            if tid != last:
                last = tid
                self.feed.bump()

    def bucket(self, chash):
        b = self.buckets.get(chash)
        if b is None:
            if len(self.buckets) > 10000:
                self.buckets.clear()
            b = self.buckets[chash] = Bucket()
        return b

    def render(self, template, fragment=False, **context):
        tmpl = self.templates.get_template(template)
        if fragment:
            ctx = tmpl.new_context(context)
            return ''.join(tmpl.blocks['main'](ctx))
        return tmpl.render(**context)


class Guard:
    """The outermost layer: the Host check, the security headers on every
    response, and no Python traceback ever: a failing request is logged in
    one line and answered 500."""

    def __init__(self, app, server):
        self.app = app
        self.server = server

    async def __call__(self, scope, receive, send):
        if scope['type'] != 'http':
            return await self.app(scope, receive, send)
        started = False

        async def send_with_headers(message):
            nonlocal started
            if message['type'] == 'http.response.start':
                started = True
                message = dict(message)
                message['headers'] = list(message.get('headers', [])) + SECURITY_HEADERS
            await send(message)

        hosts = self.server.hosts
        if hosts is not None:
            host = dict(scope.get('headers') or ()).get(b'host', b'').decode('latin-1')
            name = host.rsplit(':', 1)[0] if not host.endswith(']') else host
            if name not in hosts:
                return await _plain(send_with_headers, 403, 'This page answers only to '
                                    '127.0.0.1 or localhost.')
        try:
            await self.app(scope, receive, send_with_headers)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.server.channel.log('%s %s failed: %s: %s' % (
                scope.get('method'), scope.get('path'), type(e).__name__, e))
            if not started:
                await _plain(send_with_headers, 500, 'Something went wrong on the server; '
                             'nothing you sent was lost.')


async def _plain(send, status, text):
    body = text.encode('utf-8')
    await send({'type': 'http.response.start', 'status': status,
                'headers': [(b'content-type', b'text/plain; charset=utf-8'),
                            (b'content-length', str(len(body)).encode())]})
    await send({'type': 'http.response.body', 'body': body})


def _sse(event, data, id=None):
    head = 'event: %s\n' % event
    if id is not None:
        head += 'id: %s\n' % id
    return head + 'data: %s\n\n' % json.dumps(data, ensure_ascii=False)


def csrf_of(cookie):
    return hashlib.sha256(('csrf:' + cookie).encode('utf-8')).hexdigest()[:32]


def build_app(server):
    channel = server.channel
    reader = server.reader

    # -------------------------------------------------------------- helpers
    def wants_json(request):
        return request.url.path.startswith(('/api/', '/events', '/inspect/events', '/logout')) \
            or (request.url.path == '/login' and request.method == 'POST')

    def refusal(request, status, message):
        if wants_json(request):
            return JSONResponse({'error': message}, status_code=status)
        return HTMLResponse(server.render('error.html', status=status, message=message),
                            status_code=status)

    async def identify(request):
        """(name, is_owner, cookie) of the request's session; Refused 401 without one."""
        cookie = request.cookies.get(COOKIE) or ''
        if not cookie or len(cookie) > 100:
            raise Refused(401, 'This page needs your personal link: the owner gets it when '
                          'the server starts, others from the owner '
                          '(ostinato web invite NAME).')
        found = await run_in_threadpool(reader, views.who, secret_hash(cookie))
        if found is None:
            raise Refused(401, 'Your session has ended or is not known here; open your '
                          'personal link again.')
        return found[0], found[1], cookie

    async def owner(request):
        name, is_owner, cookie = await identify(request)
        if not is_owner:
            raise Refused(403, 'Only the owner may see the inspector.')
        return name, cookie

    def check_post(request, cookie):
        origin = request.headers.get('origin')
        if origin is not None:
            own = '%s://%s' % (request.url.scheme, request.headers.get('host', ''))
            if origin != own and origin not in server.origins:
                raise Refused(403, 'This request came from another site (Origin %s).'
                              % origin[:100])
        token = request.headers.get('x-csrf-token', '')
        if not hmac.compare_digest(token.encode('utf-8', 'replace'),
                                   csrf_of(cookie).encode()):
            raise Refused(403, 'This request lacks the page\'s CSRF token; reload the page.')
        ctype = request.headers.get('content-type', '').split(';')[0].strip().lower()
        if ctype != 'application/json':
            raise Refused(415, 'Send JSON (Content-Type: application/json).')

    async def body_json(request):
        size = request.headers.get('content-length')
        if size is not None and size.isdigit() and int(size) > MAX_BODY:
            raise Refused(413, 'The request is too large (at most %d KB).' % (MAX_BODY // 1024))
        chunks, total = [], 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > MAX_BODY:
                raise Refused(413, 'The request is too large (at most %d KB).'
                              % (MAX_BODY // 1024))
            chunks.append(chunk)
        try:
            data = json.loads(b''.join(chunks).decode('utf-8'))
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, 'The request is not valid JSON.')
        if not isinstance(data, dict):
            raise Refused(400, 'The request must be a JSON object.')
        return data

    async def job(fn, needs_channels=False):
        fut = channel.submit(fn, needs_channels)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), HOLD_SECONDS + 30)
        except WebError as e:
            raise Refused(e.status, str(e))
        except asyncio.TimeoutError:
            raise Refused(503, 'The server is busy; your message was not taken and will be '
                          'sent again.')

    def page(handler):
        """Refusals become 401/403/... pages (or JSON for the API)."""
        async def endpoint(request):
            try:
                return await handler(request)
            except Refused as e:
                r = refusal(request, e.status, e.message)
                if e.status == 429:
                    r.headers['retry-after'] = str(int(e.retry) + 1)
                return r
        endpoint.__name__ = handler.__name__
        return endpoint

    def fragment(request):
        return request.query_params.get('fragment') == '1'

    def int_param(request, name):
        v = request.query_params.get(name)
        if v is None or v == '':
            return None
        try:
            n = int(v)
        except ValueError:
            n = -1
        if not 0 <= n < LARGEST:
            raise Refused(400, '%s must be a number from 0 to %d (not %r)'
                          % (name, LARGEST - 1, v[:40]))
        return n

    def path_number(request, name, what):
        n = request.path_params[name]
        if n >= LARGEST:
            raise Refused(404, 'There is no %s %d.' % (what, n))
        return n

    # -------------------------------------------------------------- sign in and out
    def link_token(token):
        if not isinstance(token, str) or not token or len(token) > 200:
            raise Refused(403, 'This link has no valid token.')
        return token

    async def signed_in_as(request):
        """(name, cookie) of the browser's live session, or None."""
        cookie = request.cookies.get(COOKIE) or ''
        if not cookie or len(cookie) > 100:
            return None
        found = await run_in_threadpool(reader, views.who, secret_hash(cookie))
        return (found[0], cookie) if found is not None else None

    @page
    async def login_link(request):
        token = link_token(request.query_params.get('token', ''))
        current = await signed_in_as(request)
        if current is not None:
            # Someone else's link opened here (sent by them, say) would
            # silently put this browser -- and what its person writes next
            # -- into their account: ask first (POST /login confirms).
            other = await run_in_threadpool(reader, views.link_user, secret_hash(token))
            if other is not None and other != current[0]:
                return HTMLResponse(server.render('switch.html', current=current[0],
                                                  other=other, csrf=csrf_of(current[1])))
        return await sign_in(request, token, lambda name: HTMLResponse(
            server.render('signed_in.html', name=name)))

    @page
    async def login_confirmed(request):
        """The switch the page of `login_link` asked about: only with the
        signed-in session's CSRF token."""
        _, _, cookie = await identify(request)
        check_post(request, cookie)
        token = link_token((await body_json(request)).get('token'))
        return await sign_in(request, token, lambda name: JSONResponse({'ok': True,
                                                                         'name': name}))

    async def sign_in(request, token, answer):
        cookie = new_secret()
        name = await job(lambda sched: login(web_state(sched.world), secret_hash(token),
                                             secret_hash(cookie)))
        if name is None:
            raise Refused(403, 'This link is not valid: it may have been replaced by a newer '
                          'one. Ask the owner for a new link.')
        r = answer(name)
        r.set_cookie(COOKIE, cookie, max_age=SESSION_DAYS * 86400, path='/', httponly=True,
                     samesite='strict', secure=request.url.scheme == 'https')
        return r

    @page
    async def logout_post(request):
        _, _, cookie = await identify(request)
        check_post(request, cookie)
        await job(lambda sched: logout(web_state(sched.world), secret_hash(cookie)))
        r = JSONResponse({'ok': True})
        r.delete_cookie(COOKIE, path='/', httponly=True, samesite='strict')
        return r

    # -------------------------------------------------------------- chat
    def chat_data(world, name, conversation):
        convs = views.conversations(world, name)
        if conversation is not None and not any(c['n'] == conversation for c in convs):
            return None
        msgs = views.messages(world, views.thread_key(name, conversation)) \
            if conversation is not None else []
        typing = views.typing(world, views.thread_key(name, conversation)) \
            if conversation is not None else False
        return convs, msgs, typing

    async def chat(request, conversation, new=False):
        if 'token' in request.query_params:
            return await login_link(request)
        name, is_owner, cookie = await identify(request)
        if conversation is None and not new:
            convs = await run_in_threadpool(reader, views.conversations, name)
            if convs:
                return RedirectResponse('/c/%d' % convs[0]['n'], status_code=303)
        data = await run_in_threadpool(reader, chat_data, name, conversation)
        if data is None:
            raise Refused(404, 'There is no conversation %d.' % conversation)
        convs, msgs, typing = data
        return HTMLResponse(server.render(
            'chat.html', name=name, owner=is_owner, csrf=csrf_of(cookie),
            conversation=conversation, conversations=convs, messages=msgs, typing=typing,
            max_message=MAX_MESSAGE))

    @page
    async def home(request):
        return await chat(request, None)

    @page
    async def new_conversation(request):
        return await chat(request, None, new=True)

    @page
    async def conversation_page(request):
        return await chat(request, path_number(request, 'n', 'conversation'))

    @page
    async def api_conversations(request):
        name, _, _ = await identify(request)
        return JSONResponse(await run_in_threadpool(reader, views.conversations, name))

    @page
    async def api_messages(request):
        name, _, _ = await identify(request)
        n = path_number(request, 'n', 'conversation')
        data = await run_in_threadpool(reader, chat_data, name, n)
        if data is None:
            raise Refused(404, 'There is no conversation %d.' % n)
        after = int_param(request, 'after') or 0
        return JSONResponse({'conversation': n, 'messages': data[1][after:],
                             'typing': data[2]})

    @page
    async def send(request):
        name, _, cookie = await identify(request)
        check_post(request, cookie)
        data = await body_json(request)
        key = data.get('key')
        if not isinstance(key, str) or not KEY_RE.match(key):
            raise Refused(400, 'Each message needs a key of 8 to 64 letters, digits, "-" or "_".')
        text = data.get('text')
        if not isinstance(text, str):
            raise Refused(400, 'The message has no text.')
        text = text.replace('\r\n', '\n').replace('\r', '\n')
        try:
            size = len(text.encode('utf-8'))
        except UnicodeEncodeError:
            raise Refused(400, 'The message is not valid text.')
        if not text.strip():
            raise Refused(400, 'The message is empty.')
        if size > MAX_MESSAGE:
            raise Refused(413, 'The message is too long: %s bytes, and at most %s (16 KB) '
                          'go in one message. Please split it.'
                          % (format(size, ','), format(MAX_MESSAGE, ',')))
        conversation = data.get('conversation')
        if conversation is not None and (type(conversation) is not int
                                         or not 0 < conversation < LARGEST):
            raise Refused(400, 'conversation must be a positive number or null.')
        zone = _zone(data.get('zone'))
        wait = server.bucket(secret_hash(cookie)).take()
        if wait:
            e = Refused(429, 'You are sending faster than the server takes messages; '
                        'yours will go in a moment.')
            e.retry = wait
            raise e
        result = await job(lambda sched: take_message(sched, name, key, conversation, text,
                                                      zone), needs_channels=True)
        key_ = views.thread_key(name, result['conversation'])
        msgs = await run_in_threadpool(reader, views.messages, key_, result['index'])
        result['message'] = msgs[0] if msgs else None
        return JSONResponse(result)

    @page
    async def events(request):
        name, _, cookie = await identify(request)
        conversation = int_param(request, 'c')
        after = request.headers.get('last-event-id') or request.query_params.get('after') or '0'
        try:
            after = max(0, int(after))
        except ValueError:
            raise Refused(400, 'after must be a number')
        chash = secret_hash(cookie)
        key = views.thread_key(name, conversation) if conversation else None
        if key is not None and not await run_in_threadpool(reader, views.count, key):
            raise Refused(404, 'There is no conversation %d.' % conversation)

        def look(world, sent):
            if views.who(world, chash) is None:
                return None
            convs = views.conversations(world, name)
            if key is None:
                return [], False, convs
            return views.messages(world, key, sent), views.typing(world, key), convs

        async def stream():
            yield 'retry: 1000\n\n'
            sent, shown_typing, shown_convs = after, None, None
            feed = server.feed
            while not feed.closed:
                version = feed.version
                seen = await run_in_threadpool(reader, look, sent)
                if seen is None:
                    yield _sse('signed-out', {})
                    return
                msgs, typing, convs = seen
                for m in msgs:
                    yield _sse('message', dict(m, conversation=conversation), id=m['index'] + 1)
                    sent = m['index'] + 1
                if typing != shown_typing:
                    shown_typing = typing
                    yield _sse('typing', {'conversation': conversation, 'on': typing})
                if convs != shown_convs:
                    shown_convs = convs
                    yield _sse('conversations', convs)
                if not await feed.wait(version, KEEPALIVE):
                    yield ': still here\n\n'
        return _stream(stream())

    # -------------------------------------------------------------- inspector
    def inspector(handler):
        @page
        async def endpoint(request):
            name, _ = await owner(request)
            template, context = await handler(request)
            return HTMLResponse(server.render(template, fragment=fragment(request), name=name,
                                              **context))
        endpoint.__name__ = handler.__name__
        return endpoint

    @inspector
    async def inspect_tasks(request):
        state = request.query_params.get('state') or None
        text = request.query_params.get('q') or None
        rows, states = await run_in_threadpool(reader, views.tasks, state, text)
        return 'tasks.html', {'tasks': rows, 'states': states, 'state': state or '',
                              'q': text or '', 'section': 'tasks'}

    @inspector
    async def inspect_task(request):
        tid = path_number(request, 'id', 'task')

        def get(world):
            try:
                return views.task(world, tid)
            except report.NoSuchTask:
                return None
        t = await run_in_threadpool(reader, get)
        if t is None:
            raise Refused(404, 'There is no task %d (it may have ended and been pruned).' % tid)
        return 'task.html', {'task': t, 'section': 'tasks'}

    @inspector
    async def inspect_calls(request):
        task_id = int_param(request, 'task')
        before = int_param(request, 'before')

        def get(world):
            rows, more = views.calls(world, task_id, before)
            return rows, more, views.pending_calls(world)
        rows, more, pending = await run_in_threadpool(reader, get)
        if task_id is not None:
            pending = [p for p in pending if p['task_id'] == task_id]
        return 'calls.html', {'calls': rows, 'more': more, 'pending': pending,
                              'task_id': task_id, 'section': 'calls'}

    @inspector
    async def inspect_call(request):
        seq = path_number(request, 'seq', 'model call')
        c = await run_in_threadpool(reader, views.call, seq)
        if c is None:
            raise Refused(404, 'There is no model call %d.' % seq)
        return 'call.html', {'call': c, 'section': 'calls'}

    @inspector
    async def inspect_threads(request):
        rows = await run_in_threadpool(reader, views.all_threads)
        return 'threads.html', {'threads': rows, 'section': 'threads'}

    @inspector
    async def inspect_thread(request):
        key = request.path_params['key']
        t = await run_in_threadpool(reader, views.thread, key)
        if t is None:
            raise Refused(404, 'There is no thread %s.' % key[:100])
        return 'thread.html', {'thread': t, 'section': 'threads'}

    @inspector
    async def inspect_db(request):
        storage = server.db.storage
        address = getattr(storage, '_file_name', None) or getattr(storage, '_addr', None)
        rows, mods = await run_in_threadpool(reader, views.db_info, storage, str(address))
        return 'db.html', {'rows': rows, 'modules': mods, 'section': 'db'}

    @page
    async def inspect_events(request):
        await owner(request)
        chash = secret_hash(request.cookies.get(COOKIE, ''))

        def still_owner(world):
            found = views.who(world, chash)
            return found is not None and found[1]

        async def stream():
            yield 'retry: 1000\n\n'
            feed = server.feed
            version = feed.version
            while not feed.closed:
                if not await feed.wait(version, KEEPALIVE):
                    yield ': still here\n\n'
                    continue
                version = feed.version
                if not await run_in_threadpool(reader, still_owner):
                    yield _sse('signed-out', {})
                    return
                yield _sse('changed', {'at': time.time()})
                await asyncio.sleep(INSPECT_EVERY)
        return _stream(stream())

    # -------------------------------------------------------------- the app
    @asynccontextmanager
    async def lifespan(app):
        server.loop = asyncio.get_running_loop()
        server.feed = Feed()
        server.poked = asyncio.Event()
        watcher = asyncio.ensure_future(server.watch())
        try:
            yield
        finally:
            server.feed.closed = True
            watcher.cancel()

    routes = [
        Route('/', home),
        Route('/new', new_conversation),
        Route('/c/{n:int}', conversation_page),
        Route('/login', login_link),
        Route('/login', login_confirmed, methods=['POST']),
        Route('/logout', logout_post, methods=['POST']),
        Route('/api/send', send, methods=['POST']),
        Route('/api/conversations', api_conversations),
        Route('/api/conversations/{n:int}', api_messages),
        Route('/events', events),
        Route('/inspect', inspect_tasks),
        Route('/inspect/tasks/{id:int}', inspect_task),
        Route('/inspect/calls', inspect_calls),
        Route('/inspect/calls/{seq:int}', inspect_call),
        Route('/inspect/threads', inspect_threads),
        Route('/inspect/threads/{key:path}', inspect_thread),
        Route('/inspect/db', inspect_db),
        Route('/inspect/events', inspect_events),
        Mount('/static', StaticFiles(directory=os.path.join(HERE, 'static')), name='static'),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def _stream(gen):
    return StreamingResponse(gen, media_type='text/event-stream',
                             headers={'x-accel-buffering': 'no'})


def _zone(value):
    """The browser's IANA zone when it is one we know, else None (the
    message is taken all the same; its time is in the zone known before)."""
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        return None
    try:
        from zoneinfo import ZoneInfo
        ZoneInfo(value)
    except Exception:
        return None
    return value
