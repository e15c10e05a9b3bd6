// The chat page: sends each message with a key of its own until the server
// says it is stored (so a retry after a network error or a server restart
// never doubles it), and shows what the server pushes: messages, "typing",
// the list of conversations.  Text is always put in as text, never as HTML.
'use strict';
(function () {
  const body = document.body;
  const csrf = body.dataset.csrf;
  const user = body.dataset.user;
  const maxBytes = parseInt(body.dataset.max, 10);
  let conversation = body.dataset.conversation ? parseInt(body.dataset.conversation, 10) : null;
  const list = document.getElementById('messages');
  const outgoing = document.getElementById('outgoing');
  const typingEl = document.getElementById('typing');
  const form = document.getElementById('send');
  const textEl = document.getElementById('text');
  const errorEl = document.getElementById('error');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || null;
  const STORE = 'ostinato-outbox:' + user;

  Ostinato.showTimes();
  scrollDown();

  function scrollDown() {
    const last = outgoing.lastElementChild || list.lastElementChild;
    if (last) last.scrollIntoView({block: 'end'});
  }

  function count() {
    const last = list.lastElementChild;
    return last ? parseInt(last.dataset.index, 10) + 1 : 0;
  }

  function messageElement(cls, name, when, text) {
    const li = document.createElement('li');
    li.className = 'msg ' + cls;
    const meta = document.createElement('div');
    meta.className = 'meta';
    const who = document.createElement('span');
    who.className = 'name';
    who.textContent = name;
    const time = document.createElement('time');
    if (when) {
      time.setAttribute('datetime', when);
      time.textContent = when;
      Ostinato.showTime(time);
    }
    meta.append(who, ' ', time);
    const div = document.createElement('div');
    div.className = 'text';
    div.textContent = text;
    li.append(meta, div);
    return li;
  }

  function addMessage(m) {
    let before = null;
    for (const el of list.children) {
      const i = parseInt(el.dataset.index, 10);
      if (i === m.index) return;
      if (i > m.index) { before = el; break; }
    }
    if (m.bot && m.index === count()) {
      clearTimeout(typingOff);
      typingEl.hidden = true;
    }
    const li = messageElement(m.bot ? 'bot' : 'me', m.name, m.when, m.text);
    li.dataset.index = String(m.index);
    list.insertBefore(li, before);
    scrollDown();
  }

  // ------------------------------------------------------------ sending
  function load() {
    try { return JSON.parse(localStorage.getItem(STORE) || '[]'); } catch (e) { return []; }
  }
  function save() { localStorage.setItem(STORE, JSON.stringify(pending)); }
  let pending = load();

  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const a = new Uint8Array(16);
    crypto.getRandomValues(a);
    return Array.from(a, function (b) { return b.toString(16).padStart(2, '0'); }).join('');
  }

  function showPending() {
    outgoing.replaceChildren();
    for (const p of pending) {
      if (p.conversation !== conversation) continue;
      const li = messageElement('me sending', user, null, p.text);
      li.querySelector('time').textContent = 'sending\u2026';
      outgoing.append(li);
    }
    scrollDown();
  }

  function showError(text) {
    errorEl.textContent = text;
    errorEl.hidden = !text;
  }

  // A wait between two tries that ends early when the stream is back.
  let wake = null;
  function sleep(ms) {
    return new Promise(function (ok) {
      const timer = setTimeout(ok, ms);
      wake = function () { clearTimeout(timer); ok(); };
    });
  }
  function retryNow() {
    if (delivering && wake) wake();
    else deliver();
  }

  let delivering = false;
  async function deliver() {
    if (delivering) return;
    delivering = true;
    let delay = 500;
    try {
      while (pending.length) {
        const p = pending[0];
        let r;
        try {
          r = await fetch('/api/send', {
            method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
            body: JSON.stringify({key: p.key, conversation: p.conversation, text: p.text,
                                  zone: zone}),
          });
        } catch (e) {
          Ostinato.setStatus('offline', 'reconnecting\u2026');
          await sleep(delay);
          delay = Math.min(delay * 2, 8000);
          continue;
        }
        let answer = {};
        try { answer = await r.json(); } catch (e) { /* not JSON: a proxy's error page */ }
        if (r.ok) {
          pending.shift();
          if (p.conversation === null) {
            for (const q of pending) if (q.conversation === null) q.conversation = answer.conversation;
          }
          save();
          if (conversation === null && p.conversation === null) switchTo(answer.conversation);
          if (answer.message && answer.conversation === conversation) addMessage(answer.message);
          showPending();
          delay = 500;
          continue;
        }
        if (r.status === 429) {
          await sleep(1000 * (parseInt(r.headers.get('Retry-After'), 10) || 1));
          continue;
        }
        if (r.status === 502 || r.status === 503 || r.status === 504) {
          await sleep(delay);
          delay = Math.min(delay * 2, 8000);
          continue;
        }
        if (r.status === 401) {
          // Kept, and sent once this browser is signed in again.
          showError(answer.error || 'Signed out: open your personal link again.');
          return;
        }
        // Refused for good (too long, no such conversation...): say why,
        // and give the text back to edit.
        pending.shift();
        save();
        showPending();
        showError(answer.error || ('The server refused the message (' + r.status + ').'));
        if (!textEl.value) textEl.value = p.text;
      }
    } finally {
      delivering = false;
    }
  }

  function submit() {
    const text = textEl.value;
    if (!text.trim()) return;
    const size = new TextEncoder().encode(text).length;
    if (size > maxBytes) {
      showError('The message is too long: ' + size.toLocaleString() + ' bytes, and at most ' +
                maxBytes.toLocaleString() + ' (16 KB) go in one message. Please split it.');
      return;
    }
    showError('');
    pending.push({key: newKey(), conversation: conversation, text: text});
    save();
    textEl.value = '';
    showPending();
    deliver();
  }

  form.addEventListener('submit', function (ev) { ev.preventDefault(); submit(); });
  textEl.addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      submit();
    }
  });

  document.getElementById('logout').addEventListener('click', async function () {
    await fetch('/logout', {method: 'POST', credentials: 'same-origin', body: '{}',
                            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf}});
    window.location.replace('/');
  });

  // ------------------------------------------------------------ live
  // Between two model requests of one answer the server says "not typing"
  // for a moment: hide it only when that lasts, or when the answer came.
  let typingOff = null;
  function showTyping(on) {
    clearTimeout(typingOff);
    if (on) typingEl.hidden = false;
    else typingOff = setTimeout(function () { typingEl.hidden = true; }, 1500);
  }

  function showConversations(convs) {
    const ul = document.getElementById('conversations');
    ul.replaceChildren();
    for (const c of convs) {
      const li = document.createElement('li');
      if (c.n === conversation) li.className = 'current';
      const a = document.createElement('a');
      a.href = '/c/' + c.n;
      a.textContent = c.title;
      li.append(a);
      ul.append(li);
    }
  }

  const live = Ostinato.stream(
    function () { return '/events?c=' + (conversation || '') + '&after=' + count(); },
    {
      message: function (m) { if (m.conversation === conversation) addMessage(m); },
      typing: function (t) { if (t.conversation === conversation) showTyping(t.on); },
      conversations: showConversations,
    },
    retryNow);

  function switchTo(n) {
    conversation = n;
    body.dataset.conversation = String(n);
    history.replaceState(null, '', '/c/' + n);
    live.reopen();
  }

  showPending();
  deliver();
})();
