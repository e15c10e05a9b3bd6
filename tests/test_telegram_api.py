"""The Telegram Bot API client without the database: configuration, each
method against the fake Bot API server, the sorting of failures, and the
pure helpers (split_text, RateLimiter, backoff, update_message).

The fake is a real HTTP server on 127.0.0.1 (tests/fakes/telegram.py).
"""
import logging
import threading
import time
import traceback

import pytest
import requests

from fakes.telegram import TOKEN, FakeTelegram
from waiting import wait_for
from ostinato.effects.channels.telegram_api import (
    IncomingMessage, RateLimiter, TelegramAPI, TelegramConfig, TelegramConflict,
    TelegramError, TelegramRetry, backoff, parse_allowed_users, read_update, split_text,
    update_message)


@pytest.fixture
def tg():
    with FakeTelegram() as fake:
        yield fake


def client(fake, token=TOKEN, **kw):
    return TelegramAPI(TelegramConfig(token=token, api_url=fake.url, **kw))


def no_token(exc, token=TOKEN):
    """Nothing that shows the exception — str, repr, args, the printed
    traceback with its chain — contains the token."""
    texts = [str(exc), repr(exc), ' '.join(map(str, exc.args)),
             ''.join(traceback.format_exception(type(exc), exc, exc.__traceback__))]
    for text in texts:
        assert token not in text
        assert token.split(':')[1] not in text
    return True


# --- configuration -----------------------------------------------------------

def test_config_from_env():
    cfg = TelegramConfig.from_env({'TELEGRAM_BOT_TOKEN': ' %s\n' % TOKEN,
                                   'TELEGRAM_ALLOWED_USERS': '42, 7,,  1001 '})
    assert cfg.token == TOKEN
    assert cfg.api_url == 'https://api.telegram.org'
    assert cfg.allowed_users == {42, 7, 1001}
    assert cfg.poll_timeout == 30
    assert cfg.allows(42) and not cfg.allows(43)
    cfg = TelegramConfig.from_env({'TELEGRAM_BOT_TOKEN': TOKEN,
                                   'TELEGRAM_API_URL': 'http://127.0.0.1:8081/'})
    assert cfg.api_url == 'http://127.0.0.1:8081'
    assert cfg.allowed_users == set()           # nobody
    assert TOKEN not in repr(cfg) and '***' in repr(cfg)
    assert cfg.masked_url('getUpdates') == 'http://127.0.0.1:8081/bot***/getUpdates'
    assert cfg.redact('GET /bot%s/getMe' % TOKEN) == 'GET /bot***/getMe'


def test_config_errors():
    with pytest.raises(TelegramError, match='TELEGRAM_BOT_TOKEN is not set.*BotFather'):
        TelegramConfig.from_env({})
    with pytest.raises(TelegramError, match='does not look like a bot token') as e:
        TelegramConfig.from_env({'TELEGRAM_BOT_TOKEN': '12 34/secret'})
    assert 'secret' not in str(e.value)
    with pytest.raises(TelegramError, match="'ann' is not one"):
        parse_allowed_users('42,ann')
    assert parse_allowed_users('') == set() and parse_allowed_users(None) == set()


# --- the methods -------------------------------------------------------------

def test_get_me_and_delete_webhook(tg):
    api = client(tg)
    assert api.get_me()['username'] == 'ostinato_test_bot'
    tg.set_webhook('https://example.org/hook')
    with pytest.raises(TelegramConflict, match='webhook.*deleteWebhook') as e:
        api.get_updates(timeout=0)
    assert no_token(e.value)
    assert api.delete_webhook() is True
    assert tg.webhook is None
    assert api.get_updates(timeout=0) == []
    assert TOKEN not in repr(api)


def test_get_updates_offset_confirms(tg):
    api = client(tg)
    first = tg.user_writes(42, 'hello')
    second = tg.user_writes(42, 'again')
    updates = api.get_updates(timeout=0)
    assert [u['update_id'] for u in updates] == [first['update_id'], second['update_id']]
    # Without a higher offset nothing is confirmed: the same updates come again.
    assert api.get_updates(offset=first['update_id'], timeout=0) == updates
    # offset = last + 1 confirms both: Telegram forgets them.
    assert api.get_updates(offset=second['update_id'] + 1, timeout=0) == []
    assert tg.pending == []
    method, params = tg.calls[-1]
    assert method == 'getUpdates'
    assert params['offset'] == second['update_id'] + 1
    assert params['allowed_updates'] == ['message']
    assert params['timeout'] == 0


def test_get_updates_long_poll_waits_then_returns_empty(tg):
    api = client(tg)
    t0 = time.monotonic()
    assert api.get_updates(timeout=1) == []
    assert 0.9 <= time.monotonic() - t0 < 60        # held the poll, and let go


def test_get_updates_long_poll_wakes_on_message(tg):
    api = client(tg)
    threading.Timer(0.2, tg.user_writes, args=(42, 'late')).start()
    t0 = time.monotonic()
    updates = api.get_updates(timeout=120)
    assert time.monotonic() - t0 < 60       # woken by the message, not by the poll's end
    assert [update_message(u).text for u in updates] == ['late']


def test_second_poller_ends_the_first_with_conflict(tg):
    api = client(tg)
    caught = []

    def poll():
        try:
            api.get_updates(timeout=5)
        except Exception as e:
            caught.append(e)

    first = threading.Thread(target=poll)
    first.start()
    wait_for(lambda: any(m == 'getUpdates' for m, _ in tg.calls), 'the first poll')
    client(tg).get_updates(timeout=0)       # another instance polls
    first.join(60)
    assert len(caught) == 1 and isinstance(caught[0], TelegramConflict)
    assert 'another process is polling' in str(caught[0])


def test_send_message_body(tg):
    api = client(tg)
    sent = api.send_message(42, 'Hi *there* <b>', message_thread_id=7)
    assert sent['message_id'] and sent['text'] == 'Hi *there* <b>'
    assert tg.sent == [{'chat_id': 42, 'text': 'Hi *there* <b>', 'message_thread_id': 7}]
    api.send_message(-100123, 'plain')
    assert tg.sent[-1] == {'chat_id': -100123, 'text': 'plain'}       # no parse_mode
    with pytest.raises(ValueError, match='empty'):
        api.send_message(42, '  ')
    with pytest.raises(ValueError, match='split_text'):
        api.send_message(42, 'x' * 4097)
    assert len(tg.sent) == 2


# --- failures ----------------------------------------------------------------

def test_429_is_retry_with_retry_after(tg):
    api = client(tg)
    tg.fail_next('sendMessage', 429, retry_after=7)
    with pytest.raises(TelegramRetry, match='flood control.*retry after 7 s') as e:
        api.send_message(42, 'hi')
    assert e.value.after == 7 and e.value.status == 429 and e.value.method == 'sendMessage'
    assert e.value.retry_in(1) == 7
    assert no_token(e.value)
    assert tg.sent == []
    api.send_message(42, 'hi')                  # the next call goes through
    assert len(tg.sent) == 1


def test_409_is_conflict(tg):
    tg.fail_next('getUpdates', 409)
    with pytest.raises(TelegramConflict) as e:
        client(tg).get_updates(timeout=0)
    assert isinstance(e.value, TelegramError)
    assert 'stop the other bot instance' in str(e.value)
    assert e.value.status == 409
    assert no_token(e.value)


@pytest.mark.parametrize('status', [500, 502, 503])
def test_5xx_is_retry(tg, status):
    tg.fail_next('getUpdates', status, 'Internal Server Error')
    with pytest.raises(TelegramRetry, match='HTTP %d' % status) as e:
        client(tg).get_updates(timeout=0)
    assert e.value.after is None and e.value.status == status
    assert 1 * 0.75 <= e.value.retry_in(1) <= 1.25
    assert no_token(e.value)


def test_proxy_page_is_retry(tg):
    tg.raw_next('sendMessage', 502, '<html><body>Bad Gateway</body></html>')
    with pytest.raises(TelegramRetry, match='Bad Gateway') as e:
        client(tg).send_message(42, 'hi')
    assert no_token(e.value)


def test_hanging_get_updates_is_retry_after_read_timeout(tg):
    api = client(tg, read_margin=0.3)
    tg.hang_next('getUpdates')
    t0 = time.monotonic()
    with pytest.raises(TelegramRetry, match=r'no answer from .*/bot\*\*\*/getUpdates within 0.3 s') as e:
        api.get_updates(timeout=0)
    assert time.monotonic() - t0 < 60       # the fake hangs until the test ends
    assert no_token(e.value)
    assert api.get_updates(timeout=0) == []     # the client carries on


def test_hanging_send_is_retry(tg):
    api = client(tg, request_timeout=0.3)
    tg.hang_next('sendMessage')
    with pytest.raises(TelegramRetry, match='no answer') as e:
        api.send_message(42, 'hi')
    assert no_token(e.value)


@pytest.mark.slow           # waits out a read deadline
def test_a_dripping_answer_is_cut_at_the_deadline(tg):
    """A server that answers one byte every 0.2 s never lets a per-read
    timeout fire; the call's total deadline (connect + read timeout) does."""
    api = client(tg, request_timeout=1, connect_timeout=1)
    tg.drip_next('sendMessage', every=0.2)
    t0 = time.monotonic()
    with pytest.raises(TelegramRetry, match=r'no answer from .*/bot\*\*\*/sendMessage within 1 s'):
        api.send_message(42, 'x' * 2000)
    assert time.monotonic() - t0 < 60
    assert api.send_message(42, 'hi')['text'] == 'hi'      # the client carries on


@pytest.mark.parametrize('body', ['<html>oops</html>', '{"ok": true, "result": 5}', '{}', '[1',
                                  '{"ok": 1, "result": []}'])
def test_a_garbled_ok_answer_is_retry_not_the_end(tg, body):
    tg.raw_next('getUpdates', 200, body)
    with pytest.raises(TelegramRetry) as e:
        client(tg).get_updates(timeout=0)
    assert no_token(e.value)


@pytest.mark.parametrize('after, want', [('1e400', 600), ('31536000', 600), ('1' + '0' * 400, 600),
                                         ('NaN', None), ('-3', None), ('"soon"', None),
                                         ('true', None), ('2.5', 2.5)])
def test_retry_after_is_clamped(tg, after, want):
    tg.raw_next('sendMessage', 429, '{"ok": false, "error_code": 429, "description": "Too Many '
                'Requests", "parameters": {"retry_after": %s}}' % after)
    with pytest.raises(TelegramRetry) as e:
        client(tg).send_message(42, 'hi')
    assert e.value.after == want
    assert 0 <= e.value.retry_in(3) <= 600


def test_refused_connection_is_retry(tg):
    api = client(tg)
    tg.refuse()
    with pytest.raises(TelegramRetry, match=r'cannot reach http://127\.0\.0\.1:\d+/bot\*\*\*/getMe '
                                            r'\(connection refused\)') as e:
        api.get_me()
    assert e.value.__cause__ is None and e.value.__context__ is None
    assert no_token(e.value)


def test_wrong_token_is_final(tg):
    other = '987654321:AAOtherTokenThatIsWrong-xyz'
    with pytest.raises(TelegramError, match='token was rejected.*HTTP 401') as e:
        client(tg, token=other).get_me()
    assert not isinstance(e.value, TelegramRetry) and e.value.status == 401
    assert no_token(e.value, other)


def test_400_is_final_with_description(tg):
    tg.fail_next('sendMessage', 400, 'Bad Request: chat not found')
    with pytest.raises(TelegramError, match='HTTP 400: Bad Request: chat not found') as e:
        client(tg).send_message(1, 'hi')
    assert e.value.description == 'Bad Request: chat not found'
    tg.fail_next('sendMessage', 400, 'Bad Request: group chat was upgraded to a supergroup chat',
                 migrate_to_chat_id=-1001234)
    with pytest.raises(TelegramError) as e:
        client(tg).send_message(-1234, 'hi')
    assert e.value.migrate_to_chat_id == -1001234
    tg.fail_next('sendMessage', 403)
    with pytest.raises(TelegramError, match='blocked by the user'):
        client(tg).send_message(1, 'hi')


def test_unknown_method_and_bad_url(tg):
    with pytest.raises(TelegramError, match='HTTP 404') as e:
        client(tg).call('noSuchMethod')
    assert no_token(e.value)
    with pytest.raises(TelegramError, match='not a usable') as e:
        TelegramAPI(TelegramConfig(token=TOKEN, api_url='api.telegram.org')).get_me()
    assert no_token(e.value)


def test_token_masked_in_urllib3_debug_log(tg, caplog):
    with caplog.at_level(logging.DEBUG, logger='urllib3.connectionpool'):
        client(tg).get_me()
    assert any('/bot***/getMe' in r.getMessage() for r in caplog.records)
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


def test_given_session_is_used(tg):
    session = requests.Session()
    session.trust_env = False
    api = TelegramAPI(TelegramConfig(token=TOKEN, api_url=tg.url), session=session)
    assert api.get_me()['is_bot'] is True
    api.close()
    assert api.get_me()['is_bot'] is True       # not closed: it is the caller's


# --- reading updates ---------------------------------------------------------

def test_update_message(tg):
    private = tg.user_writes(42, 'hello', name='Ann Lee', date=1767225600)
    assert update_message(private) == IncomingMessage(
        chat_id=42, message_thread_id=None, user_id=42, user_name='Ann Lee', text='hello',
        date=1767225600, message_id=private['message']['message_id'])
    topic = update_message(tg.user_writes(7, 'in a topic', chat_id=-100555, thread_id=12))
    assert (topic.chat_id, topic.message_thread_id, topic.user_id) == (-100555, 12, 7)
    chat_id, thread_id, user_id, name, text, date, message_id, too_long = topic  # a plain tuple
    assert too_long == 0
    long = read_update(tg.user_writes(7, 'x' * 65537))[0]
    assert (long.text, long.too_long) == (None, 65537)     # kept, to tell the user why
    assert name == 'Ann'


def test_update_message_ignores_the_rest():
    user = {'id': 1, 'is_bot': False, 'first_name': 'Bo'}
    chat = {'id': 1, 'type': 'private'}
    assert update_message({'update_id': 1, 'edited_message':
                           {'message_id': 1, 'from': user, 'chat': chat, 'text': 'x'}}) is None
    assert update_message({'update_id': 2, 'message':
                           {'message_id': 2, 'from': user, 'chat': chat, 'photo': [{}]}}) is None
    assert update_message({'update_id': 3, 'message':
                           {'message_id': 3, 'chat': chat, 'text': 'no sender'}}) is None
    assert update_message({'update_id': 4, 'message': {'message_id': 4, 'chat': chat,
                           'from': dict(user, is_bot=True), 'text': 'a bot'}}) is None
    assert update_message({'update_id': 5}) is None
    # A reply in an ordinary supergroup carries message_thread_id but is no topic.
    reply = update_message({'update_id': 6, 'message': {
        'message_id': 6, 'from': user, 'chat': {'id': -100, 'type': 'supergroup'},
        'date': 5, 'text': 'a reply', 'message_thread_id': 3}})
    assert reply.message_thread_id is None


def test_user_names():
    def name(**user):
        m = update_message({'update_id': 1, 'message': {
            'message_id': 1, 'date': 0, 'text': 't', 'chat': {'id': 5},
            'from': dict({'id': 5, 'is_bot': False}, **user)}})
        return m.user_name
    assert name(first_name='Ann') == 'Ann'
    assert name(first_name='Ann', last_name='Lee') == 'Ann Lee'
    assert name(first_name=' ', username='annlee') == 'annlee'
    assert name() == 'user 5'


# --- split_text --------------------------------------------------------------

def test_split_text_at_line_breaks():
    assert split_text('aaa\nbbb\nccc', limit=7) == ['aaa\nbbb', 'ccc']
    assert split_text('aaa\nbbb\nccc', limit=4) == ['aaa', 'bbb', 'ccc']
    assert split_text('short') == ['short']
    assert split_text('') == []
    # Spaces when a line is too long, a hard cut when a word is.
    assert split_text('one two three', limit=8) == ['one two', 'three']
    assert split_text('abcdefghij', limit=4) == ['abcd', 'efgh', 'ij']
    assert split_text('ab cdefghij', limit=4) == ['ab', 'cdef', 'ghij']
    # A line break beats a later space.
    assert split_text('ab\ncd ef gh', limit=8) == ['ab', 'cd ef gh']


def test_split_text_4096_boundary():
    exact = 'x' * 4096
    assert split_text(exact) == [exact]
    assert split_text(exact + 'y') == [exact, 'y']
    # A break right after 4096 characters still fits; it is the only thing lost.
    assert split_text(exact + '\n' + 'tail') == [exact, 'tail']
    line = 'word ' * 2000                       # one long line of 10000 characters
    pieces = split_text(line)
    assert [len(p) for p in pieces] == [4094, 4094, 1810]     # whole words; a space dropped per cut
    assert ' '.join(pieces) == line
    text = '\n'.join('line %04d %s' % (i, 'z' * (i % 70)) for i in range(400))
    pieces = split_text(text)
    assert all(0 < len(p) <= 4096 for p in pieces)
    assert '\n'.join(pieces) == text


def rebuild(pieces, text):
    """Checks that `pieces` are `text` cut at single spaces or line breaks
    (dropped) or between two characters (hard cut), in order."""
    pos = 0
    for i, piece in enumerate(pieces):
        assert text.startswith(piece, pos), (pieces, text)
        pos += len(piece)
        # A hard cut happens only where no break follows, so a break here
        # is the one the cut dropped.
        if i < len(pieces) - 1 and text[pos:pos + 1] in (' ', '\n'):
            pos += 1
    return text[pos:] in ('', ' ', '\n')


def test_split_text_keeps_everything_else():
    import random as _random
    rnd = _random.Random(5)
    for _ in range(500):
        text = ''.join(rnd.choice('ab \n') for _ in range(rnd.randrange(0, 60)))
        limit = rnd.randrange(1, 12)
        pieces = split_text(text, limit)
        assert all(0 < len(p) <= limit for p in pieces)
        assert rebuild(pieces, text)


# --- RateLimiter and backoff -------------------------------------------------

def test_rate_limiter_per_chat():
    clock = [100.0]
    rl = RateLimiter(clock=lambda: clock[0])
    assert rl.delay(1) == 0
    rl.sent(1)
    assert rl.delay(1) == pytest.approx(1.0)
    assert rl.delay(2) == 0                     # other chats are free
    clock[0] += 0.4
    assert rl.delay(1) == pytest.approx(0.6)
    clock[0] += 0.6
    assert rl.delay(1) == 0
    assert rl.delay(1, now=100.5) == pytest.approx(0.5)     # an explicit now wins


def test_rate_limiter_overall():
    rl = RateLimiter(overall=25)
    for chat in range(25):
        assert rl.delay(chat, now=10.0 + chat * 0.01) == 0
        rl.sent(chat, now=10.0 + chat * 0.01)
    # The 26th message in the same second waits for the first to leave the window.
    assert rl.delay(99, now=10.3) == pytest.approx(0.7)
    assert rl.delay(99, now=10.995) == pytest.approx(0.005)
    assert rl.delay(99, now=11.0) == 0
    rl.sent(99, now=11.0)
    assert rl.delay(98, now=11.0) == pytest.approx(0.01)    # now 10.01 must leave


def test_rate_limiter_forgets_idle_chats():
    rl = RateLimiter()
    for chat in range(1000):
        rl.sent(chat, now=chat * 2.0)
    assert len(rl._last) <= 257


def test_backoff():
    mid = lambda: 0.5                           # no jitter
    assert [backoff(n, rand=mid) for n in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff(0, rand=mid) == 1
    assert backoff(10 ** 6, rand=mid) == 60
    assert backoff(3, rand=lambda: 0.0) == pytest.approx(3.0)     # -25%
    assert backoff(3, rand=lambda: 0.999999) == pytest.approx(5.0, abs=1e-4)   # +25%
    assert backoff(7, rand=lambda: 0.0) == pytest.approx(45.0)
    assert backoff(7, rand=lambda: 0.99) <= 60
    retry = TelegramRetry('x')
    assert retry.retry_in(2, rand=mid) == 2
