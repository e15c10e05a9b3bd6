// A login link for another account, opened in a signed-in browser: the
// switch happens only when the person here confirms it.  The POST carries
// the current session's CSRF token, which a link made elsewhere cannot.
'use strict';
(function () {
  const box = document.getElementById('switch');
  const token = new URLSearchParams(window.location.search).get('token') || '';
  document.getElementById('yes').addEventListener('click', async () => {
    const r = await fetch('/login', {
      method: 'POST',
      headers: {'Content-Type': 'application/json', 'X-CSRF-Token': box.dataset.csrf},
      body: JSON.stringify({token: token}),
    });
    if (r.ok) {
      window.location.replace('/');
    } else {
      const data = await r.json().catch(() => ({}));
      document.getElementById('message').textContent = data.error || 'That did not work.';
    }
  });
})();
