"""The web channel (`--web`): a chat page per user and the owner's inspector.

state.py    what is stored: users, hashed link tokens and sessions, message keys
channel.py  the scheduler's side: every write, in its transactions; the outbox
views.py    what the pages show, read on connections of the server's own
app.py      the Starlette app on uvicorn, in a thread beside the scheduler
templates/, static/  Jinja2 pages, CSS and plain JavaScript (no build step)
"""
from .channel import DEFAULT_ADDRESS, WebChannel, looks_like_address, parse_address
from .state import WebError, web_state

__all__ = ['DEFAULT_ADDRESS', 'WebChannel', 'WebError', 'looks_like_address', 'parse_address',
           'web_state']
