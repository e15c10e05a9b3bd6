"""Fake model servers on 127.0.0.1, for tests that must not need a real model.

Each fake is a real HTTP server (ThreadingHTTPServer on a free port, in a
daemon thread), so the client's whole HTTP path is exercised: bodies,
status codes, timeouts, refused connections.  A test queues what the next
chat requests get, one behaviour per request, and reads back every request
the fake received:

    from fakes.ollama import FakeOllama

    with FakeOllama() as fake:                 # fake.url is the base URL
        fake.reply({'action': 'answer'})       # a JSON reply (here: any JSON value)
        fake.reply('not json')                 # a string is the raw model text
        fake.reply({'wrong': 1})               # a schema miss is just another reply
        fake.fail(500, 'boom')                 # an HTTP error with the server's error body
        fake.delay(2.0, {'late': True})        # answer only after 2 s
        fake.hold({'late': True})              # answer only when the test calls fake.release()
        fake.model_not_found()                 # the server's "unknown model" answer
        fake.hang_up()                         # close the connection without answering
        fake.drip({'late': True}, every=0.2)   # send the answer one byte at a time
        fake.drip(..., headers=True)           # ... its headers too
        ...
        fake.refuse()                          # stop listening: connections are refused
        fake.resume()                          # listen on the same port again
        fake.bodies                            # the JSON bodies of the chat requests

With nothing queued a chat request gets the reply set by
`fake.always(value)`, if any, or else HTTP 500 naming the problem, so a test
that asks more than it queued fails loudly.  Subclasses (fakes.ollama, fakes.openai) give each server's
wire format.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional


class _Handler(BaseHTTPRequestHandler):
    server_version = 'fake-model-server'

    def log_message(self, format, *args):    # keep test output clean
        pass

    def do_GET(self):
        self.server.fake._handle(self, 'GET')

    def do_POST(self):
        self.server.fake._handle(self, 'POST')


class FakeServer:
    chat_path = '/chat'

    def __init__(self, models=('llama3.2:latest',)):
        self.models = list(models)
        self.default = None
        self.requests: list = []             # every request: method, path, headers, body
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._released = threading.Event()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self.url = ''

    # lifecycle ----------------------------------------------------------

    def start(self, port: int = 0) -> 'FakeServer':
        self._stopped.clear()
        self._server = ThreadingHTTPServer(('127.0.0.1', port), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self
        self.url = 'http://127.0.0.1:%d' % self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={'poll_interval': 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()                  # wakes handlers that are delaying
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def refuse(self) -> None:
        """Close the listening port, so connections to `url` are refused."""
        self.stop()

    def resume(self) -> None:
        """Listen on the same port again, after `refuse`."""
        self.start(int(self.url.rsplit(':', 1)[1]))

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # behaviours ---------------------------------------------------------

    def _push(self, behaviour) -> None:
        with self._lock:
            self._queue.append(behaviour)

    def reply(self, value: Any, **extras) -> None:
        """Answer with the model text `value` (a string as is, else its JSON).
        extras: prompt_tokens, reply_tokens, truncated (stopped at the cap)."""
        self._push(('text', value if isinstance(value, str) else json.dumps(value), extras))

    def content(self, value: Any) -> None:
        """Answer with `value` itself as the message's content, not as text:
        a server that sends a number, an object or a list there."""
        self._push(('text', value, {}))

    def always(self, value: Any, **extras) -> None:
        """Answer `value` (as in `reply`) whenever nothing is queued."""
        self.default = ('text', value if isinstance(value, str) else json.dumps(value), extras)

    def fail(self, status: int, message: str = 'internal error') -> None:
        self._push(('http', status, lambda body: self.error_payload(message)))

    def model_not_found(self, name: Optional[str] = None) -> None:
        self._push(('http', 404, lambda body: self.not_found_payload(
            name or (body or {}).get('model') or '?')))

    def delay(self, seconds: float, value: Any = None) -> None:
        """Wait `seconds` (longer than the client's timeout, say), then reply."""
        then = ('text', value if isinstance(value, str) else json.dumps(value), {})
        self._push(('delay', seconds, then))

    def hold(self, value: Any = None) -> None:
        """Answer `value` (as in `reply`) only once the test calls `release()`:
        a model that thinks exactly as long as the test needs."""
        then = ('text', value if isinstance(value, str) else json.dumps(value), {})
        self._push(('hold', then))

    def release(self) -> None:
        self._released.set()

    def hang_up(self) -> None:
        self._push(('hangup',))

    def drip(self, value: Any = None, every: float = 0.2, headers: bool = False) -> None:
        """Answer `value` (as in `reply`), but one byte every `every` seconds:
        the whole answer when `headers`, else the body after prompt headers.
        A server that never stops sending defeats a per-read timeout."""
        then = ('text', value if isinstance(value, str) else json.dumps(value), {})
        self._push(('drip', every, headers, then))

    @property
    def bodies(self) -> list:
        return [r['body'] for r in self.requests
                if r['method'] == 'POST' and r['path'] == self.chat_path]

    # wire format, given by subclasses ------------------------------------

    def chat_payload(self, raw: str, body: dict, extras: dict) -> dict:
        raise NotImplementedError

    def error_payload(self, message: str) -> dict:
        raise NotImplementedError

    def not_found_payload(self, model: str) -> dict:
        raise NotImplementedError

    def get_routes(self) -> dict:
        """path -> payload, for GET requests."""
        return {}

    # serving ------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get('Content-Length') or 0)
        data = handler.rfile.read(length) if length else b''
        try:
            body = json.loads(data) if data else None
        except ValueError:
            body = data.decode('utf-8', 'replace')
        path = handler.path.split('?')[0]
        with self._lock:
            self.requests.append({'method': method, 'path': path,
                                  'headers': dict(handler.headers), 'body': body})
        if method == 'GET' and path in self.get_routes():
            return self._send(handler, 200, self.get_routes()[path])
        if method != 'POST' or path != self.chat_path:
            return self._send(handler, 404, '404 page not found')
        with self._lock:
            behaviour = self._queue.popleft() if self._queue else self.default
        if behaviour is None:
            return self._send(handler, 500, self.error_payload(
                'fake server: no behaviour queued for this request'))
        self._perform(handler, behaviour, body)

    def _perform(self, handler, behaviour, body) -> None:
        kind = behaviour[0]
        if kind == 'text':
            self._send(handler, 200, self.chat_payload(behaviour[1], body, behaviour[2]))
        elif kind == 'http':
            self._send(handler, behaviour[1], behaviour[2](body))
        elif kind == 'delay':
            if not self._stopped.wait(behaviour[1]):
                self._perform(handler, behaviour[2], body)
        elif kind == 'hold':
            while not (self._released.wait(0.05) or self._stopped.is_set()):
                pass
            if not self._stopped.is_set():
                self._perform(handler, behaviour[1], body)
        elif kind == 'hangup':
            handler.close_connection = True
        elif kind == 'drip':
            _, every, headers, then = behaviour
            payload = self.chat_payload(then[1], body, then[2])
            self._drip(handler, 200, payload, every, headers)
        else:
            raise ValueError('unknown behaviour %r' % (kind,))

    def _drip(self, handler, status, payload, every, headers) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode('utf-8')
        head = ('HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n'
                '\r\n' % (status, len(data))).encode('ascii')
        handler.close_connection = True
        try:
            if not headers:
                handler.wfile.write(head)
                handler.wfile.flush()
            for b in (head if headers else b'') + data:
                if self._stopped.wait(every):
                    return
                handler.wfile.write(bytes([b]))
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass                             # the client gave up: what the test wants

    def _send(self, handler, status: int, payload) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload)
        data = text.encode('utf-8')
        try:
            handler.send_response(status)
            handler.send_header('Content-Type', 'text/plain' if isinstance(payload, str)
                                else 'application/json; charset=utf-8')
            handler.send_header('Content-Length', str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass                             # the client gave up (a timeout test)
