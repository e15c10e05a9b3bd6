// The inspector: whenever the server says the database changed, fetch this
// page's content again (rendered and escaped by the server) and put it in
// place, keeping open details open.  Nothing here can change the database.
'use strict';
(function () {
  const main = document.getElementById('live');
  let busy = false;
  let again = false;

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
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
