"""The web page in a real browser: Debian's chromium, driven by Selenium
through Debian's chromedriver (never a downloaded one), against the real
`ostinato serve --web` with the diet skill on the scripted model.

The seed's exchange, as a newcomer would have it: open the owner link,
send the lunch message, see the bot's question appear without a reload,
answer both questions, see the diet log.  Meanwhile the inspector (a second
browser) shows the waiting dialogue's goal stack and follows the dialogue
live.  The server is killed with kill -9 mid-dialogue; a message written
while it is down waits on the page and goes out once it is back, exactly
once.  A <script> message is shown as text.  Screenshots of the chat and
of the inspector are taken every time; `make screenshots` (which sets
OSTINATO_SCREENSHOTS=docs/images) keeps them for the README, and a plain
test run leaves the tracked images alone.

A missing browser or driver fails this test: install them with
`apt-get install chromium chromium-driver` (.ci/run does).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
import time

import pytest

from web_support import DIET, DIET_SCRIPT, LUNCH, ROOT, Served, free_port, wait_until

# Slow (a real browser): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
IMAGES = Path(os.environ.get('OSTINATO_SCREENSHOTS') or tempfile.mkdtemp(prefix='ostinato-shots-'))
if not IMAGES.is_absolute():
    IMAGES = ROOT / IMAGES
GOALS = 'Track what the user eats and drinks. > get_diet_answer > '
ZONE = 'America/New_York'


def browser(tmp_path, name):
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.path.exists(path):
            pytest.fail('%s is missing: the browser tests need Debian\'s chromium and '
                        'chromium-driver (apt-get install chromium chromium-driver)' % path)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync', '--window-size=1280,820',
                '--user-data-dir=%s' % (tmp_path / ('chrome-' + name))):
        options.add_argument(arg)
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    service = Service(CHROMEDRIVER, env=dict(os.environ, TZ=ZONE, SE_OFFLINE='true'))
    return webdriver.Chrome(service=service, options=options)


def texts(driver, css='#messages li .text'):
    return driver.execute_script(
        'return Array.from(document.querySelectorAll(arguments[0]), function (e) {'
        '  return e.textContent; });', css)


def console_errors(driver):
    """Severe console entries, less the refused connections of the kill."""
    return [e['message'] for e in driver.get_log('browser') if e['level'] == 'SEVERE'
            and 'ERR_CONNECTION_REFUSED' not in e['message']
            and 'net::ERR_' not in e['message']]


def task_rows(driver):
    """(id, text, last-call link text) of the inspector's task rows, read in
    one script: the page replaces them whenever the database changes."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('tr.task'), function (r) {"
        "  var a = r.querySelector('a.last-call');"
        "  return [r.dataset.task, r.innerText, a ? a.innerText : null]; });")


def send(driver, text):
    box = driver.find_element('id', 'text')
    box.clear()
    driver.execute_script('arguments[0].value = arguments[1]', box, text)
    started = time.monotonic()
    driver.find_element('id', 'send-button').click()
    return started


def test_the_diet_dialogue_in_the_browser(tmp_path):
    server = Served(tmp_path, program=DIET, port=free_port(), OSTINATO_LLM='scripted',
                    OSTINATO_LLM_SCRIPT=DIET_SCRIPT)
    server.start()
    chat = inspector = None
    timings = {}
    try:
        chat = browser(tmp_path, 'chat')
        inspector = browser(tmp_path, 'inspector')
        chat.get(server.link)
        wait_until(lambda: chat.current_url.rstrip('/') == server.base, 'the chat page', server)
        wait_until(lambda: chat.find_element('id', 'status').text == 'live', 'the live stream',
                   server)
        inspector.get(server.link)
        wait_until(lambda: inspector.current_url.rstrip('/') == server.base, 'signed in', server)
        inspector.get(server.base + '/inspect')
        wait_until(lambda: inspector.find_element('id', 'status').text.startswith('live'),
                   "the inspector's live stream", server)

        # the lunch message; the question comes without a reload
        started = send(chat, LUNCH)
        wait_until(lambda: texts(chat)[:1] == [LUNCH], 'my message in the list', server)
        timings['own message shown'] = time.monotonic() - started
        wait_until(lambda: texts(chat) == [LUNCH, 'About what time was lunch?'],
                   "the bot's question", server)
        timings['send to question shown'] = time.monotonic() - started
        assert chat.current_url == server.base + '/c/1'
        assert texts(chat, '#conversations li.current a')[0].startswith('Had a turkey sandwich')

        # the inspector followed: the waiting dialogue with its goal stack
        wait_until(lambda: any(GOALS + 'wait_for_new_messages_on_thread' in r[1]
                               and 'waiting' in r[1] for r in task_rows(inspector)),
                   "the waiting dialogue's goal stack in the inspector", server)
        timings['send to goal stack in inspector'] = time.monotonic() - started
        row = [r for r in task_rows(inspector) if GOALS in r[1]][0]
        assert 'waiting' in row[1]
        assert row[2].startswith('last call #')
        IMAGES.mkdir(parents=True, exist_ok=True)
        inspector.save_screenshot(str(IMAGES / 'web-inspector.png'))

        # the first answer; the inspector's page changes by itself
        updated = "return document.getElementById('live').dataset.updated"
        before = inspector.execute_script(updated)
        started = send(chat, 'around 12:30')
        wait_until(lambda: texts(chat)[-1] == 'And when did you have the hot chocolate?',
                   'the second question', server)
        timings['send to second question shown'] = time.monotonic() - started
        wait_until(lambda: inspector.execute_script(updated) != before,
                   'the inspector to update itself', server)
        timings['send to inspector updated'] = time.monotonic() - started
        assert [r[0] for r in task_rows(inspector) if GOALS in r[1]] == [row[0]]

        # kill -9 mid-dialogue: the page says so; what the user writes now waits
        server.kill()
        wait_until(lambda: chat.find_element('id', 'status').text == 'reconnecting\u2026',
                   'the page to notice', None)
        send(chat, 'at 2:30 or so')
        wait_until(lambda: texts(chat, '#outgoing li .text') == ['at 2:30 or so'],
                   'the message waiting on the page', None)
        killed_at = time.monotonic()
        server.start()
        wait_until(lambda: chat.find_element('id', 'status').text == 'live',
                   'the page to reconnect', server, timeout=120)
        timings['restart to page live again'] = time.monotonic() - killed_at
        wait_until(lambda: texts(chat)[-1].startswith('Your diet log to date:'),
                   'the diet log', server)
        log = texts(chat)[-1]
        assert '(lunch) turkey sandwich, apple' in log and '(later) hot chocolate' in log
        assert texts(chat) == [LUNCH, 'About what time was lunch?', 'around 12:30',
                               'And when did you have the hot chocolate?', 'at 2:30 or so', log]
        assert texts(chat, '#outgoing li') == []
        chat.refresh()          # a reload shows exactly the stored history
        wait_until(lambda: chat.find_element('id', 'status').text == 'live', 'live again',
                   server)
        assert texts(chat)[-1] == log and len(texts(chat)) == 6
        times = [e.get_attribute('title') for e in
                 chat.find_elements('css selector', '#messages time')]
        assert all(t.endswith('-05:00') or t.endswith('-04:00') for t in times), times
        chat.save_screenshot(str(IMAGES / 'web-chat.png'))

        # the inspector shows the task frames and the thread in the user's zone
        inspector.get(server.base + '/inspect/threads/web:ann:1')
        assert ZONE in texts(inspector, 'h1')[0]

        # a new conversation: a <script> message is text, and runs nothing
        chat.find_element('id', 'new').click()
        wait_until(lambda: chat.current_url == server.base + '/new', 'a new conversation')
        wait_until(lambda: chat.find_element('id', 'status').text == 'live', 'live', server)
        evil = ('never mind <script>document.title="pwned"</script>'
                '<img src=x onerror="document.title=\'pwned\'">')
        send(chat, evil)
        wait_until(lambda: texts(chat)[:1] == [evil], 'the message, as text', server)
        assert chat.current_url == server.base + '/c/2'
        assert chat.find_elements('css selector', '#messages img, #messages script') == []
        chat.refresh()
        wait_until(lambda: texts(chat)[:1] == [evil], 'the message after a reload', server)
        assert chat.find_elements('css selector', '#messages img, #messages script') == []
        assert chat.title != 'pwned'
        assert console_errors(chat) == [] and console_errors(inspector) == []
    finally:
        for d in (chat, inspector):
            if d is not None:
                d.quit()
        server.stop()
    print('\nweb page timings (scripted model): ' + ', '.join(
        '%s %.0f ms' % (k, v * 1000) for k, v in timings.items()))


def test_another_users_link_asks_before_switching_in_the_browser(tmp_path):
    """The switch page of a signed-in browser (issue 29, item 9): it asks,
    and its button signs in as the link's user."""
    server = Served(tmp_path, port=free_port())
    server.start()
    driver = None
    try:
        link = server.ostinato('web', 'invite', 'bo').stdout.strip()
        driver = browser(tmp_path, 'switch')
        driver.get(server.link)
        wait_until(lambda: driver.current_url.rstrip('/') == server.base, 'signed in', server)
        driver.get(link)
        wait_until(lambda: 'Switch accounts?' in driver.page_source, 'the question', server)
        assert 'Inspector' in driver.execute_script(
            "return fetch('/new').then(function (r) { return r.text(); })")   # still ann
        driver.find_element('id', 'yes').click()
        wait_until(lambda: driver.current_url.rstrip('/') == server.base
                   or '/c/' in driver.current_url or driver.current_url.endswith('/new'),
                   'the conversations of bo', server)
        page = driver.execute_script("return fetch('/new').then(function (r) { return r.text(); })")
        assert 'Inspector' not in page and 'bo' in page
        assert console_errors(driver) == []
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
