// What the chat page and the inspector share: times in the browser's zone,
// the connection status, and an event stream that comes back after the
// server restarts.
'use strict';
const Ostinato = (function () {
  const fmt = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short'});
  const precise = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'medium'});

  function showTime(el) {
    const iso = el.getAttribute('datetime');
    const d = iso ? new Date(iso) : null;
    if (d && !isNaN(d)) {
      el.textContent = (el.hasAttribute('data-precise') ? precise : fmt).format(d);
      el.title = iso;
    }
  }

  function showTimes(root) {
    (root || document).querySelectorAll('time[datetime]').forEach(showTime);
  }

  function setStatus(state, text) {
    const el = document.getElementById('status');
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }

  // An EventSource reconnects by itself after a network error; after a
  // refused reconnection (the server restarting) it gives up, so we open
  // it again, unless the session is gone (then we say so and stop).
  function stream(url, handlers, onOpen) {
    let source = null;
    let delay = 1000;
    function open() {
      source = new EventSource(typeof url === 'function' ? url() : url);
      source.addEventListener('open', function () {
        delay = 1000;
        setStatus('live', 'live');
        if (onOpen) onOpen();
      });
      for (const name of Object.keys(handlers)) {
        source.addEventListener(name, function (ev) { handlers[name](JSON.parse(ev.data)); });
      }
      source.addEventListener('signed-out', function () {
        source.close();
        setStatus('out', 'signed out: open your personal link again');
      });
      source.onerror = function () {
        setStatus('offline', 'reconnecting\u2026');
        if (source.readyState === EventSource.CLOSED) {
          setTimeout(check, delay);
          delay = Math.min(delay * 2, 8000);
        }
      };
    }
    async function check() {
      try {
        const r = await fetch('/api/conversations', {credentials: 'same-origin'});
        if (r.status === 401) {
          setStatus('out', 'signed out: open your personal link again');
          return;
        }
      } catch (e) { /* the server is not back yet: try again below */ }
      open();
    }
    open();
    return {
      reopen: function () { if (source) source.close(); open(); },
    };
  }

  return {showTime, showTimes, setStatus, stream};
})();
