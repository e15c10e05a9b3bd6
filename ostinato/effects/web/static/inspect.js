// The inspector: whenever the server says the database changed, fetch this
// page's content again (rendered and escaped by the server) and put it in
// place, keeping open details open.  Nothing here can change the database.
'use strict';
(function () {
  const main = document.getElementById('live');
  // A page that is dear to make (the database figures) asks to be made
  // again at most this often.
  const every = parseInt(main.dataset.refreshEvery || '0', 10);
  let busy = false;
  let again = false;
  let last = 0;

  async function refresh() {
    if (busy) { again = true; return; }
    const wait = last + every - Date.now();
    if (wait > 0) {
      busy = true;
      setTimeout(function () { busy = false; refresh(); }, wait);
      return;
    }
    busy = true;
    last = Date.now();
    try {
      const url = new URL(window.location.href);
      url.searchParams.set('fragment', '1');
      const r = await fetch(url, {credentials: 'same-origin'});
      if (r.ok) {
        const open = Array.from(main.querySelectorAll('details[open][id]'), function (d) { return d.id; });
        main.innerHTML = await r.text();
        for (const id of open) {
          const d = document.getElementById(id);
          if (d) d.open = true;
        }
        Ostinato.showTimes(main);
        Ostinato.setStatus('live', 'live \u00b7 updated ' + new Date().toLocaleTimeString());
        main.dataset.updated = String(Date.now());
      } else if (r.status === 401 || r.status === 403) {
        Ostinato.setStatus('out', 'signed out: open your personal link again');
      }
    } catch (e) {
      Ostinato.setStatus('offline', 'reconnecting\u2026');
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  Ostinato.showTimes();
  Ostinato.stream('/inspect/events', {changed: refresh}, refresh);
})();
