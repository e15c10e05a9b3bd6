"""What the web channel keeps in the database, and the writes it makes.

`WebState` holds the web users (the owner, and those invited with
`ostinato web invite NAME`), the hashes of their link tokens and of their
session cookies, and the idempotency keys of the messages they sent.  No
token or cookie is stored in the clear: a leaked database or backup lets
nobody in.  The tokens are 256 random bits, so a plain SHA-256 is enough
(a slow password hash protects guessable secrets; these are not).

The functions that change the state run in the scheduler's thread, inside
its transactions (the web server hands them over as jobs: web/channel.py),
or in the `ostinato web` commands; the web server itself only reads.

Idempotency keys live in a BTree keyed by (user, key), with a second index
by time, so the record of each key is written in a small bucket and keys
older than KEEP_KEYS are pruned a few at a time by later sends.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import time
from itertools import islice

from BTrees.OOBTree import OOBTree, OOTreeSet
from persistent import Persistent

from ...runtime.world import service_state

SESSION_DAYS = 30              # a session cookie lasts this long; the link makes a new one
SESSIONS_PER_USER = 20         # older sessions of a user are dropped beyond this
KEEP_KEYS = 7 * 86400          # how long a message's idempotency key is remembered
PRUNE_AT_ONCE = 200            # old keys dropped per send, at most

NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}$')
KEY_RE = re.compile(r'^[A-Za-z0-9_-]{8,64}$')


class WebError(Exception):
    """A request the web channel refuses; `status` is its HTTP status."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def new_secret():
    return secrets.token_urlsafe(32)


def secret_hash(secret):
    return hashlib.sha256(secret.encode('utf-8')).hexdigest()


def check_name(name):
    """A web user's name: 1 to 40 letters, digits, spaces, '.', '_' or '-'."""
    if not isinstance(name, str) or not NAME_RE.match(name) or name != name.strip():
        raise WebError('a web user name is 1 to 40 letters, digits, spaces, ".", "_" or "-", '
                       'starting with a letter or digit (not %r)' % (name,))
    return name


class WebUser(Persistent):
    """Someone who may use the web page."""

    def __init__(self, name):
        self.name = name
        self.link = None        # the hash of their link's token, or None when revoked
        self.user = None        # their channels.User, made with their first message
        self.threads = 0        # the conversations they started
        self.created = time.time()


class WebState(Persistent):
    def __init__(self):
        self.owner = None             # the name of the user `serve --web` runs for
        self.users = OOBTree()        # name -> WebUser
        self.links = OOBTree()        # token hash -> name
        self.sessions = OOBTree()     # cookie hash -> (name, created)
        self.keys = OOBTree()         # (name, key) -> (when, conversation, index)
        self.key_times = OOTreeSet()  # (when, name, key), to prune old keys
        self.base_url = None          # where the page was last served, for invite links
        self.received = 0             # messages taken

    def summary(self):
        """For `ostinato db info`."""
        return '%d users, %d sessions, %d messages in, %d message keys kept' % (
            len(self.users), len(self.sessions), self.received, len(self.keys))


SERVICE = 'web'


def web_state(world, create=True):
    """The web channel's state, world.services['web'] (made on first use in
    a turn that may write); with create=False, None while it never ran."""
    return service_state(world, SERVICE, WebState if create else None)


# ------------------------------------------------------------------ links

def _user(st, name):
    u = st.users.get(name)
    if u is None:
        u = st.users[name] = WebUser(name)
    return u


def new_link(st, name):
    """A new personal link token for `name` (made a user if new); the
    user's previous link stops working.  Returns the token."""
    check_name(name)
    u = _user(st, name)
    if u.link is not None:
        st.links.pop(u.link, None)
    token = new_secret()
    u.link = secret_hash(token)
    st.links[u.link] = name
    return token


def set_owner(st, name, base_url):
    """At the start of `--web`: `name` is the owner, with a fresh link."""
    st.owner = name
    st.base_url = base_url
    return new_link(st, name)


def revoke(st, name):
    """`name`'s link and sessions stop working; returns how many sessions ended."""
    u = st.users.get(name) if st is not None else None
    if u is None:
        raise WebError('there is no web user %r' % (name,), 404)
    if u.link is not None:
        st.links.pop(u.link, None)
        u.link = None
    gone = [h for h, (who, _) in st.sessions.items() if who == name]
    for h in gone:
        del st.sessions[h]
    return len(gone)


def login(st, token_hash, cookie_hash, now=None):
    """Open a session (cookie_hash) for the link token_hash; returns the
    user's name, or None when the link is not (or no longer) valid."""
    now = time.time() if now is None else now
    name = st.links.get(token_hash)
    if name is None:
        return None
    mine = sorted((created, h) for h, (who, created) in st.sessions.items() if who == name)
    for _, h in mine[:max(0, len(mine) - SESSIONS_PER_USER + 1)]:
        del st.sessions[h]
    for h, (who, created) in list(st.sessions.items()):
        if now - created > SESSION_DAYS * 86400:
            del st.sessions[h]
    st.sessions[cookie_hash] = (name, now)
    return name


def logout(st, cookie_hash):
    st.sessions.pop(cookie_hash, None)


def session_user(st, cookie_hash, now=None):
    """The name of the session's user, or None (unknown or expired)."""
    if st is None or not cookie_hash:
        return None
    s = st.sessions.get(cookie_hash)
    if s is None:
        return None
    now = time.time() if now is None else now
    name, created = s
    if now - created > SESSION_DAYS * 86400 or name not in st.users:
        return None
    return name


# ------------------------------------------------------------------ keys

def seen_key(st, name, key):
    return st.keys.get((name, key))


def remember_key(st, name, key, conversation, index, now=None):
    now = time.time() if now is None else now
    st.keys[(name, key)] = (now, conversation, index)
    st.key_times.add((now, name, key))
    prune_keys(st, now)


def prune_keys(st, now, at_once=PRUNE_AT_ONCE):
    old = list(islice(st.key_times.keys(max=(now - KEEP_KEYS, '\uffff', '\uffff')), at_once))
    for entry in old:
        st.key_times.remove(entry)
        st.keys.pop((entry[1], entry[2]), None)
    return len(old)
