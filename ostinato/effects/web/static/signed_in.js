// After a link signed this browser in: go to the conversations.  (A page of
// our own does this, not a redirect, so the SameSite=Strict cookie is sent
// even when the link was opened from another site.)
'use strict';
window.location.replace(document.getElementById('go').getAttribute('href'));
