"""Fuzzing the edges (issue 11): random and malformed Telegram updates, Bot
API answers and model replies go through the validators that stand
between the outside and the database.  No exception may escape them:
anything from outside is either used, or refused with a reason.

- Telegram: `read_update` (and its two faces), the channel's `intake` of
  whole batches into a real world with the channels module loaded (each
  batch committed; the offset only ever an update id), and the Bot API
  answer classifier.
- The model: `check_reply` with and without a schema, `reply_value` (what
  the queue turns a reply into), and the queue's `apply` of any outcome.
"""
from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ostinato.effects.llm.errors import LLMError, LLMTimeout, LLMUnavailable
from ostinato.effects.llm.replies import check_reply
from ostinato.effects.llm.queue import LLMService, llm_state, reply_value
from ostinato.effects.channels.telegram import TelegramChannel, telegram_state
from ostinato.effects.channels.telegram_api import (
    MAX_UPDATE_ID, IncomingMessage, TelegramAPI, TelegramConfig, TelegramError, TelegramRetry,
    printable, read_update, update_message, update_non_text, valid_update_id)
from ostinato.runtime.runner import run_file
from ostinato.runtime.scheduler import Scheduler
from ostinato.runtime.txn import StoreTransactions
from ostinato.runtime.store import Store

# Slow (thousands of generated inputs): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

TOKEN = '123456789:AAFakeTokenForTests-abcdefghijk'
# The same examples at every run (a suite that fails by chance is no test);
# to explore further, run it with derandomize=False and more examples.
FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --- values from outside -------------------------------------------------------

any_char = st.characters(codec=None, exclude_categories=())        # surrogates too
texts = st.text(any_char, max_size=40) | st.sampled_from(
    ['', ' ', '\n', '\x1b[31m', '\u202e', '\ud800', '1e400', 'null', '/timezone', '/timezone x'])
numbers = (st.integers() | st.integers(min_value=-2 ** 70, max_value=2 ** 70)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.sampled_from([0, -1, 2 ** 31, 2 ** 53, 2 ** 63, 10 ** 400, 1.5, True, False]))
scalars = st.none() | st.booleans() | numbers | texts
json_like = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(texts, inner, max_size=4), max_leaves=20)


def maybe(strategy):
    """A field that is there with a likely value, there with junk, or missing."""
    return st.one_of(st.just(...), strategy, json_like)


users = st.fixed_dictionaries({}, optional={
    'id': st.one_of(st.sampled_from([42, 43, 666]), numbers, json_like),
    'is_bot': st.one_of(st.booleans(), json_like),
    'first_name': st.one_of(texts, json_like),
    'last_name': texts, 'username': st.one_of(texts, json_like)})
chats = st.fixed_dictionaries({}, optional={
    'id': st.one_of(st.sampled_from([42, 43, 666, -100555]), numbers, json_like),
    'type': st.one_of(st.sampled_from(['private', 'group', 'supergroup', 'channel']), texts)})
messages = st.fixed_dictionaries({}, optional={
    'message_id': st.one_of(st.integers(min_value=1, max_value=10 ** 6), numbers, json_like),
    'date': st.one_of(st.integers(min_value=0, max_value=2 ** 34), numbers, json_like),
    'text': st.one_of(texts, json_like),
    'from': st.one_of(users, json_like),
    'chat': st.one_of(chats, json_like),
    'message_thread_id': st.one_of(st.integers(min_value=1, max_value=99), json_like),
    'is_topic_message': st.one_of(st.booleans(), json_like),
    'photo': json_like})
updates = st.one_of(
    st.fixed_dictionaries({}, optional={
        'update_id': st.one_of(st.integers(min_value=0, max_value=MAX_UPDATE_ID - 1),
                               numbers, json_like),
        'message': st.one_of(messages, json_like),
        'edited_message': messages}),
    json_like)


# --- Telegram ------------------------------------------------------------------

@FUZZ
@given(updates)
def test_read_update_never_raises(update):
    m, problem = read_update(update)
    assert m is None or problem is None
    if problem is not None:
        assert isinstance(problem, str) and problem
    if m is not None:
        assert isinstance(m, IncomingMessage)
        assert type(m.user_id) is int and type(m.chat_id) is int
        assert type(m.date) is int and type(m.message_id) is int
        assert m.text is None or isinstance(m.text, str)
        assert isinstance(m.user_name, str) and '\n' not in m.user_name
        assert m.user_name.isprintable() or m.user_name.startswith('user ')
    update_message(update)
    update_non_text(update)


@FUZZ
@given(json_like)
def test_printable_is_one_printable_line(value):
    line = printable(value)
    assert '\n' not in line and '\x1b' not in line and '\r' not in line
    assert valid_update_id(value) in (True, False)


class _NoAPI:
    """The channel's intake never calls Telegram."""


@pytest.fixture(scope='module')
def world():
    """A real (in-memory) database in which a program uses `channels`."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        prog = Path(d) / 'uses_channels.ost'
        prog.write_text('import channels\n')
        store = Store(memory=True)
        assert run_file(str(prog), io.StringIO(), io.StringIO(), store=store) == 0
        yield store
        store.close()


@FUZZ
@given(st.lists(updates, max_size=8), st.booleans())
def test_intake_of_any_batch_commits_and_keeps_the_offset_an_update_id(world, batch, groups):
    config = TelegramConfig(token=TOKEN, allowed_users={42, 43}, groups=groups)
    channel = TelegramChannel(config, err=io.StringIO(), api=_NoAPI())
    channel.username = 'bot'
    sched = Scheduler(world.world, out=io.StringIO(), err=io.StringIO())
    sched.txn = StoreTransactions(world)
    before = telegram_state(world.world).offset
    try:
        notes, places = channel.take(sched, batch)
    except Exception as e:                  # pragma: no cover - the failure to report
        pytest.fail('intake raised %s: %s for %r' % (type(e).__name__, e, batch))
    st_ = telegram_state(world.world)
    assert 0 <= st_.offset <= MAX_UPDATE_ID
    ids = [u.get('update_id') for u in batch if isinstance(u, dict)
           and valid_update_id(u.get('update_id')) and u['update_id'] >= before]
    assert st_.offset == max([before] + [i + 1 for i in ids])
    assert all(isinstance(n, str) and '\n' not in n for n in notes)


@FUZZ
@given(st.integers(min_value=100, max_value=599), st.one_of(texts, json_like.map(json.dumps)),
       st.sampled_from(['getUpdates', 'sendMessage', 'getMe']))
def test_a_bot_api_answer_is_a_result_or_a_telegram_error(status, body, method):
    api = TelegramAPI(TelegramConfig(token=TOKEN, api_url='http://127.0.0.1:9'))
    try:
        api._result(method, 'http://127.0.0.1:9/bot***/' + method, status, body)
    except TelegramRetry as e:
        assert e.after is None or 0 <= e.after <= 600
    except TelegramError as e:
        assert TOKEN not in str(e)
    finally:
        api.close()


@FUZZ
@given(json_like)
def test_a_flood_wait_is_clamped(after):
    api = TelegramAPI(TelegramConfig(token=TOKEN, api_url='http://127.0.0.1:9'))
    body = json.dumps({'ok': False, 'error_code': 429, 'description': 'Too Many Requests',
                       'parameters': {'retry_after': after}})
    with pytest.raises(TelegramRetry) as e:
        api._result('sendMessage', 'x', 429, body)
    api.close()
    assert e.value.after is None or 0 <= e.value.after <= 600
    assert 0 <= e.value.retry_in(5) <= 600


# --- the model -----------------------------------------------------------------

raw_replies = st.one_of(
    texts,
    json_like.map(lambda v: json.dumps(v)),
    st.dictionaries(texts, json_like, max_size=5).map(json.dumps),
    st.integers(min_value=1, max_value=5000).map(lambda n: '{"n": ' + '[' * n + ']' * n + '}'),
    st.sampled_from(['{"n": 1e400}', '{"n": -1e999}', '{"n": NaN}', '{"n": Infinity}',
                     '```json\n{"a": 1}\n```', '{"a": "\\ud800"}', '{"a": 1, "a": 2}',
                     '{"n": %s}' % ('9' * 5000), '\x00{}']))
schemas = st.sampled_from([
    None,
    {'type': 'object', 'required': ['action', 'text'],
     'properties': {'action': {'enum': ['answer', 'confer', 'cancel']},
                    'text': {'type': 'string'}}},
    {'type': 'object', 'properties': {'n': {'type': 'number', 'maximum': 10}}},
])


@FUZZ
@given(raw_replies, schemas)
def test_check_reply_never_raises(raw, schema):
    reply, problem = check_reply(raw, schema)
    assert (reply is None) != (problem is None)
    if reply is not None:
        assert isinstance(reply, dict)
        json.dumps(reply, allow_nan=False)      # only what JSON (and Ostinato) can hold
        how, value = reply_value({'reply': reply})
        assert how == 'value', value


@FUZZ
@given(json_like)
def test_reply_value_never_raises(reply):
    how, value = reply_value({'reply': reply})
    assert how in ('value', 'error')
    if how == 'error':
        assert value.startswith('llm: ')


class _Task:
    def __init__(self):
        self.id, self.name, self.done = 1, 'asker', False
        self.resume = None


def outcomes():
    return st.one_of(
        json_like.map(lambda r: ('ok', {'reply': r, 'raw': 'x'})),
        st.dictionaries(texts, json_like).map(lambda r: ('ok', {'reply': r, 'raw': 'x'})),
        json_like.map(lambda r: ('ok', r)),
        texts.map(lambda m: ('exc', LLMError(m))),
        texts.map(lambda m: ('exc', LLMTimeout(m))),
        texts.map(lambda m: ('exc', LLMUnavailable(m))),
        texts.map(lambda m: ('exc', RuntimeError(m))))


@FUZZ
@given(outcomes())
def test_the_queue_applies_any_outcome_without_raising(world, outcome):
    from ostinato.effects.llm.queue import LLMRequest
    sched = Scheduler(world.world, out=io.StringIO(), err=io.StringIO())
    service = LLMService(lambda: None, err=io.StringIO())
    try:
        def add():
            st_ = llm_state(world.world)
            seq = st_.next_seq
            st_.next_seq += 1
            st_.pending[seq] = LLMRequest(seq, None, {
                'prompt': 'p', 'schema': None, 'system': None, 'model': None,
                'temperature': None, 'goal_stack': ''})
            return seq
        seq = world.transact(add)
        world.transact(lambda: service.apply(sched, seq, outcome))
        req = llm_state(world.world).pending.get(seq)
        if req is not None:                     # a transient failure: asked again later
            assert outcome[0] == 'exc' and isinstance(outcome[1], LLMUnavailable)
            world.transact(lambda: llm_state(world.world).pending.pop(seq))
        else:
            entry = llm_state(world.world).log[seq]
            assert (entry.error is None) == (outcome[0] == 'ok' and entry.error is None)
    finally:
        service.close()
