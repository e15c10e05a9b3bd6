"""What the web tests share: `ostinato serve --web` as a real subprocess on a
FileStorage, signed-in HTTP clients (requests), and an event-stream reader.

Nothing here waits for a fixed time: every wait polls for what it waits
for, and its timeout only turns a hang into a failure that says what was
awaited.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COUNTER = HERE / 'telegram' / 'counter.ost'
DIET = ROOT / 'skills' / 'diet.ost'
DIET_SCRIPT = HERE / 'skills' / 'diet.json'
_EXE = os.path.join(os.path.dirname(sys.executable), 'ostinato')
OSTINATO = [_EXE] if os.path.exists(_EXE) else [sys.executable, '-m', 'ostinato']
LUNCH = 'Had a turkey sandwich and an apple for lunch, and a hot chocolate later'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_until(cond, what, server=None, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        if server is not None and server.proc is not None and server.proc.poll() is not None:
            pytest.fail('the server stopped (exit %s) while waiting for %s:\n%s'
                        % (server.proc.returncode, what, server.stderr()))
        time.sleep(0.02)
    pytest.fail('timed out waiting for %s%s' % (what, '' if server is None else
                                                 ':\n' + server.stderr()))


class Served:
    """`ostinato serve --web 127.0.0.1:PORT PROGRAM` (or `run`) on a database
    in tmp_path; restartable on the same port and database."""

    def __init__(self, tmp_path, program=COUNTER, command='serve', user='ann', port=None,
                 address=None, **env):
        self.tmp = tmp_path
        self.db = tmp_path / 'web.fs'
        self.program = program
        self.command = command
        self.port = port or free_port()
        self.address = address or '127.0.0.1:%d' % self.port
        self.env = dict(os.environ, USER=user, TZ='UTC', **{k: str(v) for k, v in env.items()})
        self.env.pop('OSTINATO_TEST_WEB_CRASH', None)
        self.proc = None
        self.runs = 0
        self.errs = []
        self.link = None

    @property
    def base(self):
        return 'http://127.0.0.1:%d' % self.port

    def start(self, **env):
        self.runs += 1
        err = self.tmp / ('web-stderr-%d.txt' % self.runs)
        self.errs.append(err)
        args = OSTINATO + [self.command, '--db', str(self.db), '--web', self.address,
                           str(self.program)]
        self.proc = subprocess.Popen(args, env=dict(self.env, **env), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(err, 'w'),
                                     cwd=str(self.tmp))
        self.link = wait_until(lambda: self._link(err), 'the owner link', self)
        return self

    def _link(self, err):
        m = re.search(r'web: open (https?://\S+/login\?token=\S+)', err.read_text())
        return m.group(1) if m else None

    def stderr(self):
        return ''.join('--- run %d:\n%s' % (i + 1, e.read_text()) for i, e in enumerate(self.errs))

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self, sig=signal.SIGINT):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=60)

    def ostinato(self, *args):
        return subprocess.run(OSTINATO + list(args) + ['--db', str(self.db)], capture_output=True,
                              text=True, env=self.env, cwd=str(self.tmp), timeout=120)

    def client(self, link=None):
        c = Client(self.base)
        c.login(link or self.link)
        return c

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.stop()


class Client:
    """A browser's session, as HTTP requests."""

    def __init__(self, base):
        self.base = base
        self.http = requests.Session()
        # A kept-alive connection the server closes just as a request goes out
        # is reset; a browser sends again, and so does this client.  Sending
        # again is safe: every message carries its key, which the server
        # takes once.
        again = Retry(total=2, connect=2, read=2, status=0, allowed_methods=None,
                      raise_on_status=False, backoff_factor=0)
        self.http.mount('http://', HTTPAdapter(max_retries=again))
        self.csrf = None

    def url(self, path):
        return self.base + path

    def get(self, path, **kw):
        return self.http.get(self.url(path), timeout=60, **kw)

    def login(self, link):
        r = self.http.get(link, timeout=60)
        assert r.status_code == 200, (r.status_code, r.text)
        page = self.get('/new')
        assert page.status_code == 200, page.text
        self.csrf = re.search(r'data-csrf="([0-9a-f]+)"', page.text).group(1)
        return r

    def post(self, path, body, headers=None, **kw):
        h = {'Content-Type': 'application/json', 'X-CSRF-Token': self.csrf or ''}
        h.update(headers or {})
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return self.http.post(self.url(path), data=data, headers=h, timeout=90, **kw)

    def send(self, text, key=None, conversation=None, zone='UTC', **kw):
        key = key or os.urandom(12).hex()
        return self.post('/api/send', {'key': key, 'conversation': conversation, 'text': text,
                                       'zone': zone}, **kw)

    def messages(self, conversation):
        r = self.get('/api/conversations/%d' % conversation)
        assert r.status_code == 200, r.text
        return r.json()['messages']

    def texts(self, conversation):
        return [m['text'] for m in self.messages(conversation)]

    def events(self, path='/events?c=1', last_id=None):
        return Events(self, path, last_id)


class Events:
    """An event stream read in a thread: `.events` is what came, in order.
    (http.client, so that `close` can shut the socket under the reader.)"""

    def __init__(self, client, path, last_id=None):
        import http.client
        from urllib.parse import urlsplit
        u = urlsplit(client.base)
        headers = {'Accept': 'text/event-stream',
                   'Cookie': '; '.join('%s=%s' % (c.name, c.value) for c in client.http.cookies)}
        if last_id is not None:
            headers['Last-Event-ID'] = str(last_id)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        self.conn.request('GET', path, headers=headers)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.events = []
        self.ended = False
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.body = self.response.read()
            self.conn.close()

    def _read(self):
        event = {}
        try:
            while True:
                raw = self.response.readline()
                if not raw:
                    break
                line = raw.decode('utf-8').rstrip('\r\n')
                if line == '':
                    if 'data' in event:
                        event['data'] = json.loads(event['data'])
                        self.events.append(event)
                    event = {}
                elif not line.startswith(':'):
                    field, _, value = line.partition(':')
                    event[field] = value[1:] if value.startswith(' ') else value
        except Exception:
            pass
        self.ended = True

    def of(self, kind):
        return [e['data'] for e in list(self.events) if e.get('event') == kind]

    def messages(self):
        return [m['text'] for m in self.of('message')]

    def close(self):
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.conn.close()
