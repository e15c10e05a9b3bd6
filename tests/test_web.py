"""The web channel over HTTP: the real `ostinato serve --web` (a subprocess on
a FileStorage) and real HTTP requests.

The program (tests/telegram/counter.ost) numbers each user message of a
thread in its reply ("3: text"), so a message taken twice or lost shows in
the numbers.  What must hold (issue 15):
- without a session everything is 401, the live stream included; a bad
  link is 403; an invited user sees neither the inspector nor anyone
  else's conversations;
- POSTs need the session's CSRF token, JSON and a same-origin Origin;
- text is text: a <script> message is shown escaped;
- a message above 16 KB gets a clear error; a flood is rate-limited and
  nothing accepted is lost;
- a message is taken exactly once, however often it is sent again with
  its key, also after a kill -9 between the commit and the answer;
- the live stream pushes each message after its commit and picks up
  where it left off after a reconnect, across a kill -9 of the server.
"""
from __future__ import annotations

import json
import subprocess
import threading

import pytest
import requests

from web_support import (DIET, DIET_SCRIPT, HERE, LUNCH, OSTINATO, Client, Served,
                         free_port, wait_until)

# Slow (whole served processes): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

PAGES = ['/', '/new', '/c/1', '/api/conversations', '/api/conversations/1', '/events?c=1',
         '/inspect', '/inspect/tasks/1', '/inspect/calls', '/inspect/calls/0',
         '/inspect/threads', '/inspect/threads/web:ann:1', '/inspect/db', '/inspect/events']
INSPECTOR = [p for p in PAGES if p.startswith('/inspect')]


@pytest.fixture(scope='module')
def served(tmp_path_factory):
    with Served(tmp_path_factory.mktemp('web')) as s:
        yield s


@pytest.fixture(scope='module')
def ann(served):
    return served.client()


def replies(client, conversation, n):
    """Wait for `n` messages in the conversation; its texts."""
    wait_until(lambda: len(client.messages(conversation)) >= n, '%d messages' % n)
    return client.texts(conversation)


# ------------------------------------------------------------------ who may come in

def test_without_a_session_everything_is_401(served):
    anon = Client(served.base)
    for path in PAGES:
        r = anon.get(path, stream=True)
        assert r.status_code == 401, (path, r.status_code)
        r.close()
    for path in ('/api/send', '/logout'):
        assert anon.post(path, {}).status_code == 401
    page = anon.get('/')
    assert 'personal link' in page.text
    assert anon.get('/api/conversations').json()['error']
    # a cookie the server never gave out is no session either
    anon.http.cookies.set('ostinato_session', 'made-up')
    assert anon.get('/inspect').status_code == 401
    assert anon.get('/static/chat.js').status_code == 200


def test_a_bad_link_is_403_and_signs_nobody_in(served):
    anon = Client(served.base)
    for path in ('/login?token=not-the-token', '/login', '/login?token=' + 'x' * 500,
                 '/?token=wrong'):
        r = anon.get(path)
        assert r.status_code == 403, path
        assert 'set-cookie' not in r.headers
    assert anon.get('/').status_code == 401


def test_the_owner_link_sets_a_strict_httponly_session_cookie(served):
    c = Client(served.base)
    r = c.http.get(served.link, timeout=60)
    assert r.status_code == 200 and 'Signed in as ann' in r.text
    cookie = r.headers['set-cookie']
    assert 'HttpOnly' in cookie and 'SameSite=strict' in cookie.replace('Strict', 'strict')
    assert 'Path=/' in cookie
    # the link works again (another browser of the owner's) until replaced
    assert Client(served.base).login(served.link).status_code == 200


def test_every_answer_has_the_security_headers(served, ann):
    for r in (ann.get('/new'), ann.get('/inspect'), Client(served.base).get('/'),
              ann.get('/static/style.css')):
        csp = r.headers['content-security-policy']
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert 'unsafe-inline' not in csp
        assert r.headers['x-content-type-options'] == 'nosniff'
        assert r.headers['referrer-policy'] == 'no-referrer'


def test_a_foreign_host_name_is_refused_on_loopback(served, ann):
    # a DNS name rebound to 127.0.0.1 must not reach the page
    r = ann.http.get(served.base + '/', headers={'Host': 'evil.example:%d' % served.port})
    assert r.status_code == 403
    assert ann.http.get('http://localhost:%d/static/chat.js' % served.port).status_code == 200


def test_an_invited_user_sees_only_their_own_conversations(served, ann):
    assert ann.send('hello from ann').status_code == 200
    out = served.ostinato('web', 'invite', 'bo')
    assert out.returncode == 0, out.stderr
    link = out.stdout.strip()
    assert link.startswith(served.base + '/login?token=')
    bo = served.client(link)
    for path in INSPECTOR:
        r = bo.get(path, stream=True)
        assert r.status_code == 403, path
        r.close()
    assert 'Inspector' not in bo.get('/new').text and 'Inspector' in ann.get('/new').text
    assert bo.get('/api/conversations').json() == []
    assert bo.get('/c/1').status_code == 404            # ann's conversation 1 is not his
    assert bo.get('/api/conversations/1').status_code == 404
    r = bo.send('hi from bo')
    assert r.status_code == 200 and r.json()['conversation'] == 1
    assert replies(bo, 1, 2) == ['hi from bo', '1: hi from bo']
    assert 'hi from bo' not in json.dumps(ann.get('/api/conversations').json())
    assert 'hello from ann' not in bo.get('/c/1').text
    # a new link for bo: the old one no longer signs in; his session stays
    again = served.ostinato('web', 'invite', 'bo').stdout.strip()
    assert Client(served.base).get(link[len(served.base):]).status_code == 403
    assert bo.get('/api/conversations').status_code == 200
    # revoked: his browser is out, the live stream too
    stream = bo.events('/events?c=1')
    assert stream.status == 200
    out = served.ostinato('web', 'revoke', 'bo')
    assert out.returncode == 0 and '1 session' in out.stdout, out.stdout + out.stderr
    assert bo.get('/api/conversations').status_code == 401
    assert bo.events('/events?c=1').status == 401
    ann.send('anything, so the stream looks again')
    wait_until(lambda: stream.of('signed-out'), 'the open stream to end')
    assert Client(served.base).get(again[len(served.base):]).status_code == 403
    users = served.ostinato('web', 'users').stdout
    assert 'ann (owner)' in users and 'bo  link revoked' in users


def test_behind_a_proxy_the_public_address_is_welcome(tmp_path):
    public = 'https://chat.example.org'
    with Served(tmp_path, OSTINATO_WEB_URL=public + '/') as s:
        assert s.link.startswith(public + '/login?token=')
        c = Client(s.base)
        c.login(s.base + s.link[len(public):])
        # (401, not 403: the name passes; the cookie is 127.0.0.1's)
        assert c.get('/new', headers={'Host': 'chat.example.org'}).status_code == 401
        assert c.get('/new', headers={'Host': 'evil.example'}).status_code == 403
        assert c.send('via the proxy', headers={'Origin': public}).status_code == 200
        assert c.send('elsewhere', headers={'Origin': 'https://evil.example'}).status_code == 403
        assert s.ostinato('web', 'invite', 'bo').stdout.startswith(public + '/login?token=')


def test_web_users_and_revoke_need_a_database(tmp_path):
    for args in (['users'], ['revoke', 'bo']):
        out = subprocess.run(OSTINATO + ['web'] + args + ['--db', str(tmp_path / 'none.fs')],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and 'no database' in out.stderr
    assert not (tmp_path / 'none.fs').exists()


def test_invite_refuses_a_bad_name(served):
    out = served.ostinato('web', 'invite', 'no/slashes')
    assert out.returncode == 2 and "web user name" in out.stderr


# ------------------------------------------------------------------ posts

def test_posts_need_the_csrf_token_json_and_a_same_origin(served, ann):
    body = {'key': 'csrf-test-0001', 'conversation': None, 'text': 'forged', 'zone': 'UTC'}
    before = ann.get('/api/conversations').json()
    assert ann.post('/api/send', body, headers={'X-CSRF-Token': ''}).status_code == 403
    assert ann.post('/api/send', body, headers={'X-CSRF-Token': '0' * 32}).status_code == 403
    r = ann.post('/api/send', body, headers={'Origin': 'http://evil.example'})
    assert r.status_code == 403 and 'another site' in r.json()['error']
    r = ann.post('/api/send', 'text=forged',
                 headers={'Content-Type': 'application/x-www-form-urlencoded'})
    assert r.status_code == 415
    assert ann.post('/logout', {}, headers={'X-CSRF-Token': 'nope'}).status_code == 403
    assert ann.get('/api/conversations').json() == before
    ok = ann.post('/api/send', body, headers={'Origin': served.base})
    assert ok.status_code == 200


def test_bad_messages_get_a_clear_error_and_store_nothing(served, ann):
    def stored():
        convs = ann.get('/api/conversations').json()
        return [c['n'] for c in convs], [t for c in convs for t in ann.texts(c['n'])]
    before = stored()
    cases = [
        ('not json', 400, 'not valid JSON'),
        (json.dumps([1, 2]), 400, 'JSON object'),
        ({'text': 'no key'}, 400, 'key'),
        ({'key': 'short', 'text': 'x'}, 400, 'key'),
        ({'key': 'bad key with spaces', 'text': 'x'}, 400, 'key'),
        ({'key': 'k' * 20, 'text': 5}, 400, 'no text'),
        ({'key': 'k' * 20, 'text': '   \n '}, 400, 'empty'),
        ({'key': 'k' * 20, 'text': 'x', 'conversation': 'one'}, 400, 'conversation'),
        ({'key': 'k' * 20, 'text': 'x', 'conversation': 0}, 400, 'conversation'),
        ({'key': 'k' * 20, 'text': 'x', 'conversation': True}, 400, 'conversation'),
        ({'key': 'k' * 20, 'text': 'x', 'conversation': 999}, 404, 'no conversation 999'),
    ]
    for body, status, words in cases:
        r = ann.post('/api/send', body)
        assert r.status_code == status, (body, r.status_code, r.text)
        assert words in r.json()['error'], (body, r.json())
    after = stored()
    assert after[0] == before[0]
    assert [t for t in after[1] if t not in before[1] and not t[0].isdigit()] == []


def test_a_message_above_16_kb_gets_a_clear_error(served, ann):
    r = ann.send('é' * 8193)                    # 16386 bytes of UTF-8
    assert r.status_code == 413
    err = r.json()['error']
    assert '16,386 bytes' in err and '16 KB' in err
    r = ann.post('/api/send', 'x' * (70 * 1024))
    assert r.status_code == 413 and 'too large' in r.json()['error']
    r = ann.send('a' * 16384)                   # exactly the limit goes in
    assert r.status_code == 200
    n = r.json()['conversation']
    assert replies(ann, n, 2)[1] == '1: ' + 'a' * 16384


def test_numbers_out_of_range_are_refused_without_a_failure(served, ann):
    huge = '9' * 25
    for path, status in [('/inspect/calls/' + huge, 404), ('/inspect/tasks/' + huge, 404),
                         ('/c/' + huge, 404), ('/api/conversations/' + huge, 404),
                         ('/inspect/calls?before=' + huge, 400), ('/inspect/calls?task=-1', 400),
                         ('/events?c=' + huge, 400), ('/events?c=424242', 404),
                         ('/api/conversations/1?after=x', 400)]:
        assert ann.get(path).status_code == status, path
    r = ann.send('x', conversation=int(huge))
    assert r.status_code == 400
    assert 'failed' not in served.stderr()


# ------------------------------------------------------------------ text is text

XSS = '<script>alert(1)</script><img src=x onerror="alert(2)"> & "quotes" \'too\''


def test_html_in_a_message_is_shown_as_text(served, ann):
    r = ann.send(XSS)
    n = r.json()['conversation']
    assert replies(ann, n, 2) == [XSS, '1: ' + XSS]
    for page in (ann.get('/c/%d' % n).text, ann.get('/inspect/threads/web:ann:%d' % n).text,
                 ann.get('/inspect/threads').text, ann.get('/inspect').text):
        assert '<script>alert' not in page and '<img src=x' not in page
    chat = ann.get('/c/%d' % n).text
    assert '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&#34;alert(2)&#34;&gt;' in chat
    assert ann.get('/api/conversations/%d' % n).headers['content-type'] == 'application/json'


# ------------------------------------------------------------------ exactly once

def test_a_message_sent_again_with_its_key_is_taken_once(served, ann):
    key = 'same-key-0001'
    first = ann.send('once', key=key)
    assert first.status_code == 200 and first.json()['duplicate'] is False
    n = first.json()['conversation']
    results = []

    def again():
        results.append(ann.send('once', key=key).json())
    threads = [threading.Thread(target=again) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r['duplicate'] and r['conversation'] == n and r['index'] == 0 for r in results)
    assert replies(ann, n, 2) == ['once', '1: once']
    ann.send('twice', key='same-key-0002', conversation=n)
    assert replies(ann, n, 4) == ['once', '1: once', 'twice', '2: twice']
    # a key is the user's own: bo's same key is another message
    bo = served.client(served.ostinato('web', 'invite', 'cy').stdout.strip())
    assert bo.send('mine', key=key).json()['duplicate'] is False


def test_the_database_holds_only_hashes_of_links_and_cookies(tmp_path):
    import hashlib
    with Served(tmp_path) as s:
        ann = s.client()
        ann.send('hello')
        replies(ann, 1, 2)
        cookie = ann.http.cookies.get('ostinato_session')
        token = s.link.split('token=')[1]
        invited = s.ostinato('web', 'invite', 'bo').stdout.strip().split('token=')[1]
    data = s.db.read_bytes()
    for secret in (token, cookie, invited):
        assert secret.encode() not in data
    assert hashlib.sha256(token.encode()).hexdigest().encode() in data
    assert b'hello' in data                     # the file is readable as it is


def test_a_resend_after_a_kill_between_commit_and_answer(tmp_path):
    """The server dies after committing a message and before answering the
    request; the page sends it again with its key after the restart."""
    with Served(tmp_path) as s:
        ann = s.client()
        assert ann.send('first').status_code == 200
        s.stop()
        s.start(OSTINATO_TEST_WEB_CRASH='taken:1')
        ann = s.client()
        with pytest.raises(requests.exceptions.RequestException):  # the connection drops
            ann.send('second', key='resend-after-kill', conversation=1)
        s.proc.wait(timeout=60)
        s.start()
        ann = s.client()
        r = ann.send('second', key='resend-after-kill', conversation=1)
        assert r.status_code == 200 and r.json()['duplicate'] is True
        assert replies(ann, 1, 4) == ['first', '1: first', 'second', '2: second']


def test_a_flood_is_rate_limited_and_no_accepted_message_is_lost(served):
    ann = served.client()           # a session of its own: the limit is per session
    first = ann.send('flood 0')
    n = first.json()['conversation']
    accepted, limited = ['flood 0'], []
    for i in range(1, 60):
        r = ann.send('flood %d' % i, key='flood-key-%04d' % i, conversation=n)
        if r.status_code == 200:
            accepted.append('flood %d' % i)
        else:
            assert r.status_code == 429, r.text
            assert int(r.headers['retry-after']) >= 1
            limited.append(i)
    assert limited, 'sixty messages at once were all taken'
    users = [t for t in replies(ann, n, 2 * len(accepted)) if not t[0].isdigit()]
    assert users == accepted
    # the page sends the refused ones again later, with their keys
    for i in limited:
        wait_until(lambda: ann.send('flood %d' % i, key='flood-key-%04d' % i,  # noqa: B023
                                    conversation=n).status_code == 200, 'a token')  # runs now
    texts = replies(ann, n, 120)
    users = [t for t in texts if not t[0].isdigit()]
    assert sorted(users) == sorted('flood %d' % i for i in range(60))
    assert [t for t in texts if t[0].isdigit()] == ['%d: %s' % (i + 1, t) for i, t in
                                                    enumerate(users)]


# ------------------------------------------------------------------ live

def test_the_live_stream_pushes_messages_and_resumes_after_a_reconnect(served, ann):
    n = ann.send('live one').json()['conversation']
    stream = ann.events('/events?c=%d' % n)
    wait_until(lambda: stream.messages() == ['live one', '1: live one'], 'the first two')
    ann.send('live two', conversation=n)
    wait_until(lambda: stream.messages()[2:] == ['live two', '2: live two'], 'the next two')
    ids = [int(e['id']) for e in stream.events if e.get('event') == 'message']
    assert ids == [1, 2, 3, 4]
    stream.close()
    # the browser reconnects with the last id it saw: only what came later
    ann.send('live three', conversation=n)
    again = ann.events('/events?c=%d' % n, last_id=3)
    wait_until(lambda: again.messages() == ['2: live two', 'live three', '3: live three'],
               'the rest after id 3')
    again.close()
    assert ann.events('/events?c=%d&after=x' % n).status == 400


def test_a_reconnect_after_kill_9_shows_exactly_the_stored_history(tmp_path):
    s = Served(tmp_path, port=free_port())
    with s:
        ann = s.client()
        ann.send('before')
        stream = ann.events('/events?c=1')
        wait_until(lambda: stream.messages() == ['before', '1: before'], 'the reply')
        s.kill()
        wait_until(lambda: stream.ended, 'the stream to break')
        s.start()               # the same port; the session cookie is still good
        ann.send('after', conversation=1)
        last = [e['id'] for e in stream.events if e.get('event') == 'message'][-1]
        again = ann.events('/events?c=1', last_id=last)
        wait_until(lambda: again.messages() == ['after', '2: after'], 'the new messages')
        assert stream.messages() + again.messages() == ann.texts(1)
        assert ann.texts(1) == ['before', '1: before', 'after', '2: after']


def test_typing_shows_while_the_model_works(tmp_path):
    from fakes.ollama import FakeOllama
    with FakeOllama() as model:
        model.delay(3.0, {'text': 'hello'})
        with Served(tmp_path, program=HERE / 'telegram' / 'ask.ost', OSTINATO_LLM='ollama',
                    OLLAMA_HOST=model.url, OSTINATO_MODEL='llama3.2:latest') as s:
            ann = s.client()
            ann.send('hi')
            stream = ann.events('/events?c=1')
            wait_until(lambda: 'hello' in stream.messages(), 'the answer', s)
            wait_until(lambda: stream.of('typing')[-1]['on'] is False, 'typing to end', s)
    on = [t['on'] for t in stream.of('typing')]
    assert True in on, on
    assert stream.messages() == ['hi', 'hello']


def test_the_browser_zone_becomes_the_users_zone(served, ann):
    r = ann.send('when', zone='Asia/Tokyo')
    n = r.json()['conversation']
    assert r.json()['message']['when'].endswith('+09:00')
    texts = replies(ann, n, 3)
    assert texts[2].startswith('ann wrote at ') and texts[2].split(' in ')[0].endswith('+09:00')
    # a zone nobody knows is ignored; the message is taken all the same
    r = ann.send('still here', zone='Mars/Olympus_Mons', conversation=n)
    assert r.status_code == 200 and r.json()['message']['when'].endswith('+09:00')


def test_logout_ends_the_session(served):
    c = served.client()
    cookie = c.http.cookies.get('ostinato_session')
    r = c.post('/logout', {})
    assert r.status_code == 200
    stale = Client(served.base)
    stale.http.cookies.set('ostinato_session', cookie)
    assert stale.get('/api/conversations').status_code == 401


# ------------------------------------------------------------------ the inspector

@pytest.fixture(scope='module')
def diet(tmp_path_factory):
    with Served(tmp_path_factory.mktemp('diet'), program=DIET, OSTINATO_LLM='scripted',
                OSTINATO_LLM_SCRIPT=DIET_SCRIPT) as s:
        yield s


def test_the_inspector_shows_the_waiting_dialogue(diet):
    ann = diet.client()
    changes = ann.events('/inspect/events')
    ann.send(LUNCH, zone='America/New_York')
    assert replies(ann, 1, 2)[1] == 'About what time was lunch?'
    wait_until(lambda: changes.of('changed'), 'the inspector to hear of the change')
    page = ann.get('/inspect').text
    assert 'Track what the user eats and drinks. &gt; get_diet_answer &gt; ' in page
    assert 'waiting for a change of' in page
    # What the dialogue waits for, in words, before how.
    assert 'ann&#39;s reply to: About what time was lunch? -- waiting for a change of' in page
    waiting = ann.get('/inspect?state=waiting&q=get_diet_answer').text
    assert 'dialogue' in waiting and 'route' not in waiting.split('<tbody>')[1]
    assert 'no ready tasks' in ann.get('/inspect?state=ready').text
    fragment = ann.get('/inspect?fragment=1').text
    assert '<html' not in fragment and '<table' in fragment
    # the dialogue task: its frames with their source lines, and its last call
    tid = int(page.split('get_diet_answer')[0].rsplit('data-task="', 1)[1].split('"')[0])
    task = ann.get('/inspect/tasks/%d' % tid).text
    assert 'diet.ost:' in task and 'Track what the user eats and drinks.' in task
    assert 'when_iso = get_diet_answer(thread, &#34;When, roughly' in task
    assert "<th>items</th><td><code>[&#39;lunch&#39;: [&#39;turkey sandwich&#39;" in task
    call = int(task.split('class="last-call" href="/inspect/calls/')[1].split('"')[0])
    detail = ann.get('/inspect/calls/%d' % call).text
    assert 'About what time was lunch?' in detail and 'Question: When, roughly' in detail
    calls = ann.get('/inspect/calls').text
    assert 'scripted' in calls and 'lunch: turkey sandwich' in calls
    assert '/inspect/calls/%d' % call in ann.get('/inspect/calls?task=%d' % tid).text
    threads = ann.get('/inspect/threads').text
    assert 'ann:1' in threads and 'web' in threads
    thread = ann.get('/inspect/threads/web:ann:1').text
    assert 'About what time was lunch?' in thread and 'America/New_York' in thread
    db = ann.get('/inspect/db').text
    assert 'outbox' in db and '0 waiting' in db and 'exchanges logged' in db and 'diet' in db
    assert 'message keys kept' in db
    for missing in ('/inspect/tasks/9999', '/inspect/calls/9999', '/inspect/threads/web:x:1'):
        assert ann.get(missing).status_code == 404
    assert ann.get('/inspect/calls?task=abc').status_code == 400
    # both answers; the log comes, and the inspector hears of every turn
    seen = len(changes.of('changed'))
    ann.send('around 12:30', conversation=1)
    assert replies(ann, 1, 4)[3] == 'And when did you have the hot chocolate?'
    ann.send('at 2:30 or so', conversation=1)
    log = replies(ann, 1, 6)[5]
    assert log == ('Your diet log to date:\n   [2025-03-14T12:30:00-04:00] (lunch) turkey '
                   'sandwich, apple\n   [2025-03-14T14:30:00-04:00] (later) hot chocolate\n')
    wait_until(lambda: len(changes.of('changed')) > seen, 'more changes')
    changes.close()


def test_the_inspector_is_read_only(diet):
    ann = diet.client()
    for path in ('/inspect', '/inspect/tasks/1', '/inspect/db'):
        assert ann.post(path, {}).status_code == 405


# ------------------------------------------------------------------ the command line

def test_web_alone_takes_the_default_address(tmp_path):
    from ostinato.cli import run, serve
    prog = tmp_path / 'x.ost'
    prog.write_text('print(1)\n')
    ctx = serve.make_context('serve', ['--web', str(prog)])
    assert ctx.params['web'] == '127.0.0.1:8765' and ctx.params['file'] == str(prog)
    ctx = run.make_context('run', ['--web', '9000', str(prog)])
    assert ctx.params['web'] == '9000' and ctx.params['file'] == str(prog)
    ctx = run.make_context('run', [str(prog), '--web'])
    assert ctx.params['web'] == '127.0.0.1:8765'
    ctx = serve.make_context('serve', ['--web', '[::1]:80'])
    assert ctx.params['web'] == '[::1]:80'


def test_a_port_in_use_is_a_clear_error(tmp_path):
    import socket
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = subprocess.run(OSTINATO + ['serve', '--db', str(tmp_path / 'x.fs'), '--web',
                                         str(port)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert 'cannot listen on 127.0.0.1:%d' % port in out.stderr
    bad = subprocess.run(OSTINATO + ['serve', '--db', str(tmp_path / 'x.fs'), '--web',
                                     'host:port'], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and 'host:port' in bad.stderr


def test_listening_beyond_loopback_warns_about_tls(tmp_path):
    s = Served(tmp_path, address='0.0.0.0:0')
    s.start()
    try:
        err = s.stderr()
        assert 'warning: listening on 0.0.0.0' in err and 'reverse proxy' in err and 'TLS' in err
    finally:
        s.stop()


def test_run_serves_the_page_too(tmp_path):
    with Served(tmp_path, command='run') as s:
        ann = s.client()
        ann.send('over run')
        assert replies(ann, 1, 2) == ['over run', '1: over run']
        s.stop()
    assert s.proc.returncode == 130


def test_another_users_link_in_a_signed_in_browser_asks_before_switching(served):
    """Opening bo's login link in a browser signed in as ann switched it to
    bo's account without a word (issue 29, item 9): now a page asks, and
    only a POST with ann's session's CSRF token switches."""
    ann = served.client()
    link = served.ostinato('web', 'invite', 'carl').stdout.strip()
    r = ann.http.get(link, timeout=60)
    assert r.status_code == 200 and 'Switch accounts?' in r.text, r.text
    assert 'signed in as <b>ann</b>' in r.text and 'signs in as\n<b>carl</b>' in r.text
    assert 'set-cookie' not in r.headers
    assert 'Inspector' in ann.get('/new').text                 # still ann, the owner
    token = link.split('token=', 1)[1]
    # the switch itself needs ann's CSRF token: a page elsewhere has none
    assert ann.post('/login', {'token': token}, headers={'X-CSRF-Token': 'x'}).status_code == 403
    assert Client(served.base).post('/login', {'token': token}).status_code == 401
    assert 'Inspector' in ann.get('/new').text
    r = ann.post('/login', {'token': token})
    assert r.status_code == 200 and r.json() == {'ok': True, 'name': 'carl'}, r.text
    assert 'set-cookie' in r.headers
    assert 'Inspector' not in ann.get('/new').text             # now carl
    # the link of the account it is signed in as needs no question
    r = ann.http.get(link, timeout=60)
    assert r.status_code == 200 and 'Signed in as carl' in r.text
