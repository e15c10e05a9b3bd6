"""A hostile or broken Telegram (issue 11, items 2, 4, 6 and 10): the real
`ostinato serve --telegram` (and `run`) against the fake Bot API server in
its hostile modes.

What must hold (DESIGN.md §9): an update that cannot be used is logged,
skipped and confirmed, and the bot goes on -- no crash, and no crash loop
at the next start; a garbled answer, a flood wait of a year, a storm of
429 and 5xx, an answer dripped byte by byte, a huge update_id or a poller
that fails leave the bot answering; strangers do not delay allowed users;
a name cannot forge a log line; groups are not served unless asked, and
then one conversation per member.
"""
from __future__ import annotations

import json
import re
import signal

import pytest

from fakes.telegram import FakeTelegram
from test_telegram_channel import ANN, Bot, outbox_counts, replied, texts, wait_until

# Slow (whole bot processes): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

EVE = 666


@pytest.fixture
def tg():
    with FakeTelegram() as fake:
        yield fake


def message(user_id=EVE, chat_id=None, **fields):
    """A raw update from `user_id` (fields replace or add to the message)."""
    m = {'message_id': 77, 'date': 1700000000, 'text': 'hello',
         'from': {'id': user_id, 'is_bot': False, 'first_name': 'X'},
         'chat': {'id': user_id if chat_id is None else chat_id, 'type': 'private'}}
    m.update(fields)
    return {'message': {k: v for k, v in m.items() if v is not ...}}


def hostile_updates(user_id):
    """Updates a broken or hostile server could send, from `user_id`."""
    deep = []
    for _ in range(500):               # as deep as a JSON parser takes (1,000 levels)
        deep = [deep]
    return [
        message(user_id, date='yesterday'),
        message(user_id, date=['2024', 1]),
        message(user_id, date=1.5),
        message(user_id, date=10 ** 30),
        message(user_id, date=-5),
        message(user_id, date=True),
        message(user_id, date=float('inf')),
        message(user_id, date=...),
        message(user_id, message_id='77'),
        message(user_id, message_id={'id': 77}),
        message(user_id, message_id=None),
        message(user_id, message_id=-1),
        message(user_id, text=['a', 'list']),
        message(user_id, text={'a': 1}),
        message(user_id, text=5),
        message(user_id, chat={'id': 'not a number'}),
        message(user_id, chat='a chat'),
        message(user_id, chat={'id': 10 ** 40}),
        message(user_id, **{'from': 'someone'}),
        message(user_id, **{'from': {'id': 'abc'}}),
        message(user_id, **{'from': {'id': user_id, 'first_name': ['A', 'list']}}),
        message(user_id, message_thread_id='7', is_topic_message=True),
        message(user_id, text=deep),
        {'message': 'a string'},
        {'message': ['a', 'list']},
        {'message': None},
        {'edited_message': message(user_id)['message']},
        {'channel_post': {'text': 'news'}},
        {},
    ]


BOGUS_IDS = ['1', 'x', None, 1.5, 10 ** 30, -7, 2 ** 40, True, [1], {'a': 1}]


def test_hostile_updates_are_skipped_and_confirmed_and_serve_goes_on(tg, tmp_path):
    """Each hostile update from a stranger and from an allowed user, between
    good messages of the allowed user: every good message is answered once,
    in order; every hostile one is logged and skipped (two are usable after
    all: a name that is no text, a topic id that is no number); the bogus
    update ids are ignored; after a restart nothing is left to crash on."""
    bot = Bot(tg, tmp_path, command='serve').start()
    hostile = hostile_updates(EVE) + hostile_updates(ANN)
    want = []

    def answered():
        bodies = [t.split(': ', 1)[1] for t in texts(tg)]
        return [b for b in bodies if b != 'hello'] == want

    try:
        for i, update in enumerate(hostile):
            tg.push_update(update)
            if i % 10 == 0:
                tg.user_writes(ANN, 'm%d' % i)
                want.append('m%d' % i)
        for uid in BOGUS_IDS:
            tg.push_raw(dict(message(ANN), update_id=uid))
        tg.push_raw('not an object')
        tg.push_raw(['a', 'list'])
        tg.user_writes(ANN, 'last')
        want.append('last')
        wait_until(answered, 'every good message answered', bot, timeout=180)
        assert bot.stop(signal.SIGTERM) == 0
        bot.start()                         # no crash loop: the next start goes on too
        tg.user_writes(ANN, 'after')
        want.append('after')
        wait_until(answered, 'the answer after the restart', bot)
    finally:
        status = bot.stop(signal.SIGTERM)
    assert status == 0
    got = texts(tg)
    assert [int(t.split(':')[0]) for t in got] == list(range(1, len(got) + 1))  # once each
    assert [t.split(': ', 1)[1] for t in got].count('hello') == 2
    err = bot.stderr()
    assert 'Traceback' not in err
    assert err.count('skipped update') == 2 * (len(hostile_updates(0)) - 6), err
    for uid in ('1' + '0' * 30, "'x'", '1.5', '-7', 'None', str(2 ** 40)):
        assert 'ignored an update whose update_id %s is no update id' % uid in err, uid
    from ostinato.runtime.store import Store
    store = Store(str(bot.db))
    try:
        from ostinato.effects.channels.telegram import telegram_state
        assert telegram_state(store.world).offset < 2 ** 31
    finally:
        store.close()
    assert len(texts(tg, EVE)) == 1             # the stranger: one refusal, whatever he sent
    assert outbox_counts(bot.db)['pending'] == 0


@pytest.mark.parametrize('body', [
    '<html>Bad Gateway</html>',
    '{"ok": true, "result": "not a list"}',
    '{"ok": true}',
    '{"result": []}',
    '[1, 2',
    '',
], ids=['html', 'result-not-a-list', 'no-result', 'no-ok', 'cut', 'empty'])
def test_a_garbled_get_updates_answer_does_not_end_serve(tg, tmp_path, body):
    tg.raw_next('getUpdates', 200, body)
    tg.raw_next('getUpdates', 200, body)
    bot = Bot(tg, tmp_path, command='serve').start()
    try:
        tg.user_writes(ANN, 'hi')
        wait_until(replied(tg, '1: hi'), 'the reply after the garbled answers', bot, timeout=120)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    err = bot.stderr()
    assert 'did not answer like the Telegram Bot API' in err or 'instead of a list' in err
    assert err.count('will keep trying') == 1 and 'reachable again' in err
    assert 'Traceback' not in err


def test_a_flood_wait_of_1e400_or_a_year_does_not_kill_the_sender(tg, tmp_path):
    """Before, a retry_after of 1e400 raised (an infinite wait) in the sender
    thread, which died without a word: no reply left the bot again.  Now
    the wait is clamped (to 600 s): that chat waits, the others go on."""
    tg.raw_next('sendMessage', 429, '{"ok": false, "error_code": 429, "description": '
                '"Too Many Requests", "parameters": {"retry_after": 1e400}}')
    tg.fail_next('sendMessage', 429, retry_after=365 * 24 * 3600)
    bot = Bot(tg, tmp_path, command='serve', allowed='42,43,44').start()
    try:
        tg.user_writes(43, 'first')          # its reply meets the 1e400 flood wait
        wait_until(lambda: len([c for c in tg.calls if c[0] == 'sendMessage']) >= 1,
                   'the first send', bot)
        tg.user_writes(44, 'second')         # a year
        wait_until(lambda: len([c for c in tg.calls if c[0] == 'sendMessage']) >= 2,
                   'the second send', bot)
        tg.user_writes(ANN, 'third')
        wait_until(replied(tg, '1: third'), 'a reply in another chat', bot)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    err = bot.stderr()
    assert 'retry after 600 s' in err and 'Traceback' not in err


def test_a_storm_of_429_and_5xx_backs_off_and_recovers(tg, tmp_path):
    for status in (500, 502, 503):
        tg.fail_next('getUpdates', status)
    tg.fail_next('getUpdates', 429, retry_after=1)
    for _ in range(3):
        tg.fail_next('sendMessage', 429, retry_after=1)
    tg.fail_next('sendMessage', 500)
    tg.raw_next('sendMessage', 502, '<html>Bad Gateway</html>')
    bot = Bot(tg, tmp_path, command='serve').start()
    try:
        tg.user_writes(ANN, 'a')
        tg.user_writes(ANN, 'b')
        wait_until(replied(tg, '1: a', '2: b'), 'both replies after the storm', bot,
                   timeout=240)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    assert texts(tg) == ['1: a', '2: b']
    polls = [c for c in tg.calls if c[0] == 'getUpdates']
    assert len(polls) >= 5
    err = bot.stderr()
    assert 'will keep trying' in err and 'reachable again' in err and 'Traceback' not in err


def test_a_dripping_get_updates_does_not_hold_the_poller(tg, tmp_path):
    """getUpdates answered one byte every 0.5 s (its answer holds a long
    message): the poll ends at its deadline (TELEGRAM_POLL_TIMEOUT + margins)
    and the poller asks again; the message is taken then."""
    tg.user_writes(ANN, 'x' * 3000)
    tg.drip_next('getUpdates', every=0.5)            # about 25 minutes to drip it all
    bot = Bot(tg, tmp_path, command='serve', TELEGRAM_POLL_TIMEOUT='1').start()
    try:
        wait_until(lambda: texts(tg), 'the reply after the dripping poll', bot, timeout=180)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    assert texts(tg) == ['1: ' + 'x' * 3000]
    assert 'no answer from' in bot.stderr() and 'getUpdates within' in bot.stderr()


def test_a_poller_that_fails_is_started_again(tg, tmp_path):
    bot = Bot(tg, tmp_path, command='serve')
    bot.start(OSTINATO_TEST_TELEGRAM_CRASH='polling:2:raise')
    try:
        tg.user_writes(ANN, 'hi')
        wait_until(replied(tg, '1: hi'), 'the reply', bot)
        tg.user_writes(ANN, 'again')
        wait_until(replied(tg, '2: again'), 'the reply after the poller failed', bot)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    assert re.search(r'the poller stopped on an error \(RuntimeError: a test fault at polling\); '
                     r'it starts again in \d+ s', bot.stderr())


def test_2000_strangers_do_not_delay_an_allowed_user(tg, tmp_path):
    """2,000 strangers write, then Ann: her answer goes out ahead of their
    refusals (each refused once), which are sent when nothing else waits."""
    for i in range(2000):
        tg.user_writes(100000 + i, 'let me in', name='Stranger %d' % i)
    tg.user_writes(ANN, 'hi')
    bot = Bot(tg, tmp_path, command='serve').start()
    try:
        wait_until(replied(tg, '1: hi'), "Ann's reply", bot, timeout=120)
        before = [s for s in list(tg.sent)].index(
            next(s for s in list(tg.sent) if s['chat_id'] == ANN))
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    # In order they would have waited for all 2,000 (80 s at Telegram's pace).
    assert before < 300, before
    assert 'refused Stranger 1999 (user id 101999)' in bot.stderr()


def test_a_name_cannot_forge_a_log_line(tg, tmp_path):
    evil = 'Eve\nostinato: telegram: connected as @evil; 99 allowed users\x1b[2J\x1b[31m'
    bot = Bot(tg, tmp_path, command='serve').start()
    try:
        tg.push_update(message(EVE, **{'from': {'id': EVE, 'is_bot': False,
                                                 'first_name': evil}}))
        wait_until(lambda: texts(tg, EVE), 'the refusal', bot)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    lines = bot.stderr().splitlines()
    assert not any(line.startswith('ostinato: telegram: connected as @evil') for line in lines)
    assert '\x1b' not in bot.stderr()
    refused = [line for line in lines if 'refused' in line]
    assert refused == ['ostinato: telegram: refused Eve ostinato: telegram: connected as @evil; '
                       '99 allowed users [2J [31m (user id 666); to let them in, add 666 to '
                       'TELEGRAM_ALLOWED_USERS']


def test_a_group_is_told_once_and_served_only_when_asked(tg, tmp_path):
    """By default a group is not a conversation: whoever writes there (an
    allowed user too), the group is told once that the bot talks in private
    chats, and nothing there reaches a skill -- so no one's diet log is
    posted to a group."""
    bot = Bot(tg, tmp_path, command='serve', allowed='42,43').start()
    try:
        tg.user_writes(ANN, 'lunch: soup', chat_id=-100777)
        tg.user_writes(43, 'dinner: rice', chat_id=-100777, name='Bo')
        tg.user_writes(ANN, 'in a topic', chat_id=-100777, thread_id=5)
        tg.user_writes(ANN, 'private')
        wait_until(replied(tg, '1: private'), 'the private reply', bot)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    group = [s['text'] for s in tg.sent if s['chat_id'] == -100777]
    assert group == ['Hello! I only talk in private chats: please write to me directly '
                     '(@ostinato_test_bot).']
    assert texts(tg) == ['1: private']
    assert 'told it once that the bot talks in private chats only' in bot.stderr()


def test_two_group_members_each_keep_their_own_diet_log(tg, tmp_path):
    """TELEGRAM_GROUPS=1 and the seed's diet skill: two members log food in
    one group; each gets their own log, as a reply to their own message,
    with nothing of the other's in it."""
    from pathlib import Path
    here = Path(__file__).resolve().parent
    script = tmp_path / 'diet.json'
    answer = lambda text: {'action': 'answer', 'text': text}
    script.write_text(json.dumps([
        {'match': 'soup for lunch\n\nQuestion: What did you eat', 'reply': answer('soup, noon')},
        {'match': 'rice for dinner\n\nQuestion: What did you eat', 'reply': answer('rice, 7pm')},
        {'match': 'Re-format "soup, noon"',
         'reply': {'action': 'itemize', 'groups': [{'items': ['soup'], 'key': 'noon'}]}},
        {'match': 'Re-format "rice, 7pm"',
         'reply': {'action': 'itemize', 'groups': [{'items': ['rice'], 'key': '7pm'}]}},
        {'match': "When, roughly, was 'noon'", 'reply': answer('2025-03-14T12:00:00+00:00')},
        {'match': "When, roughly, was '7pm'", 'reply': answer('2025-03-14T19:00:00+00:00')},
    ]))
    bot = Bot(tg, tmp_path, command='serve', allowed='42,43', program=here.parent / 'skills' /
              'diet.ost', TELEGRAM_GROUPS='1', OSTINATO_LLM='scripted',
              OSTINATO_LLM_SCRIPT=str(script)).start()
    try:
        a = tg.user_writes(ANN, 'soup for lunch', chat_id=-100888, name='Ann')
        b = tg.user_writes(43, 'rice for dinner', chat_id=-100888, name='Bo')
        wait_until(lambda: len([s for s in tg.sent if s['chat_id'] == -100888]) == 2,
                   'both logs', bot, timeout=120)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    sent = {s['reply_parameters']['message_id']: s['text'] for s in tg.sent}
    # "noon" and "7pm" are read by the program (core_skills' time
    # grounding), on the date of the message; the script's date is not
    # taken, as the user wrote none of its numbers.
    assert re.fullmatch(r'Your diet log to date:\n   \[\d{4}-\d\d-\d\dT12:00:00\+00:00\] \(noon\) soup\n',
                        sent[a['message']['message_id']])
    assert re.fullmatch(r'Your diet log to date:\n   \[\d{4}-\d\d-\d\dT19:00:00\+00:00\] \(7pm\) rice\n',
                        sent[b['message']['message_id']])


def test_a_message_over_64_kb_gets_a_friendly_answer(tg, tmp_path):
    """A text longer than any Telegram message (100,000 characters) is not
    handed to a skill, but its allowed sender hears why (they heard
    nothing); a stranger still gets only the refusal; the log says it."""
    bot = Bot(tg, tmp_path, command='serve').start()
    try:
        tg.user_writes(EVE, 'y' * 100_000, name='Eve')
        tg.user_writes(ANN, 'x' * 100_000)
        tg.user_writes(ANN, 'short')
        wait_until(replied(tg, '1: short'), 'the answer to the short message', bot)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    assert texts(tg) == ['Sorry, that message is too long for me (100000 characters); please '
                         'send it in shorter parts.', '1: short']
    assert [t for t in texts(tg, chat=EVE) if 'too long' in t] == []
    err = bot.stderr()
    assert 'a text of 100000 characters from Ann (more than 65536); told them it was too long' \
        in err, err
    assert 'Traceback' not in err


def test_a_private_diet_log_is_never_posted_in_a_group(tg, tmp_path):
    """The seed's diet skill, TELEGRAM_GROUPS=1: Ann logs soup in her private
    chat, then rice in a group.  The group's answer holds the rice only (it
    held her private log, issue 29 item 4); her private log keeps the soup."""
    from pathlib import Path
    here = Path(__file__).resolve().parent
    script = tmp_path / 'diet.json'
    answer = lambda text: {'action': 'answer', 'text': text}
    script.write_text(json.dumps([
        {'match': 'soup for lunch\n\nQuestion: What did you eat', 'reply': answer('soup, noon')},
        {'match': 'rice for dinner\n\nQuestion: What did you eat', 'reply': answer('rice, 7pm')},
        {'match': 'Re-format "soup, noon"',
         'reply': {'action': 'itemize', 'groups': [{'items': ['soup'], 'key': 'noon'}]}},
        {'match': 'Re-format "rice, 7pm"',
         'reply': {'action': 'itemize', 'groups': [{'items': ['rice'], 'key': '7pm'}]}},
        {'match': "When, roughly, was 'noon'", 'reply': answer('2025-03-14T12:00:00+00:00')},
        {'match': "When, roughly, was '7pm'", 'reply': answer('2025-03-14T19:00:00+00:00')},
    ]))
    bot = Bot(tg, tmp_path, command='serve', allowed='42', program=here.parent / 'skills' /
              'diet.ost', TELEGRAM_GROUPS='1', OSTINATO_LLM='scripted',
              OSTINATO_LLM_SCRIPT=str(script)).start()
    try:
        tg.user_writes(ANN, 'soup for lunch', name='Ann')
        wait_until(lambda: any('Your diet log' in t for t in texts(tg)), 'the private log', bot,
                   timeout=120)
        tg.user_writes(ANN, 'rice for dinner', chat_id=-100888, name='Ann')
        wait_until(lambda: texts(tg, chat=-100888), 'the group log', bot, timeout=120)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    private = [t for t in texts(tg) if 'Your diet log' in t]
    group = texts(tg, chat=-100888)
    assert len(private) == 1 and '(noon) soup' in private[0], texts(tg)
    assert len(group) == 1 and '(7pm) rice' in group[0], group
    assert 'soup' not in group[0], group


@pytest.mark.parametrize('change', ['timezone', 'name'])
def test_a_member_whose_zone_or_name_changed_is_answered_in_a_group(tg, tmp_path, change):
    """TELEGRAM_GROUPS=1: Ann sets her zone in the private chat (as the
    README tells every user to), or renames herself, then writes in a group.
    Her group conversation's User takes the new zone or name -- and that
    update was skipped ('World' object has no attribute 'watches', a name
    schema 7 removed), at every message of hers there: she was never
    answered in the group (found by the issue 29 rerun)."""
    from pathlib import Path
    notes = Path(__file__).resolve().parent / 'telegram' / 'notes.ost'
    bot = Bot(tg, tmp_path, command='serve', allowed='42', program=notes,
              TELEGRAM_GROUPS='1').start()
    try:
        if change == 'timezone':
            tg.user_writes(ANN, '/timezone Europe/Berlin', name='Ann')
            wait_until(lambda: any('Europe/Berlin' in t for t in texts(tg)), 'the zone', bot)
        else:
            tg.user_writes(ANN, 'hello all', chat_id=-100888, name='Ann')
            wait_until(lambda: texts(tg, chat=-100888), 'the first group answer', bot)
            tg.user_writes(ANN, 'private', name='Ann Lee')
            wait_until(lambda: texts(tg), 'the private answer', bot)
        tg.user_writes(ANN, 'later words', chat_id=-100888, name='Ann Lee')
        wait_until(lambda: any('later words' in t for t in texts(tg, chat=-100888)),
                   'the group answer', bot, timeout=120)
    finally:
        assert bot.stop(signal.SIGTERM) == 0
    assert 'could not be taken' not in bot.stderr(), bot.stderr()
    assert texts(tg, chat=-100888)[-1].startswith('Ann Lee (42): '), texts(tg, chat=-100888)
