"""Duckling, loaded in process through its C interface: the parser under `extract`.

Duckling is a Haskell library; tools/install_duckling.py unpacks its
libraries (from the `pyduckling-native` wheel, whose Python part needs
CPython 3.9) into ~/.cache/ostinato/duckling, and this module calls their
exported C functions with ctypes.  The libraries are loaded lazily, on the
first parse, and once per process; when they are missing or do not load,
`parse` raises `Unavailable` with a sentence saying what to run, which the
built-in turns into a catchable Error.

A Haskell exception escaping a C call ends the whole process, so nothing
reaches Duckling that is known to make it throw:

- text: its regular expressions are compiled for the process's locale
  encoding, and under a C locale a non-ASCII character kills the process.
  So it sees ASCII only, with every other character replaced by one
  character (typographic quotes and dashes by their ASCII forms, anything
  else by a space): offsets into the text stay offsets into the caller's.
- time zones: its zone loader throws on many valid zone files (UTC, EST,
  Asia/Kolkata, Asia/Kathmandu ...), and with a zone it can load (New York)
  its offsets are wrong all through the day of a DST change ("20 min ago"
  said at 03:10 EDT comes out as 02:50 EST, an hour late).  So it gets no
  zone: it reads every text in UTC at the reference time's wall clock, and
  the caller reads the results as wall-clock times of the user's zone,
  with Python's zoneinfo (vm/extract.py).
- signals: the Haskell runtime is started without its signal handlers
  and without its timer, which would take SIGINT (Ctrl-C) from Python.

Calls are serialised by a lock: the Haskell runtime is single-threaded.
A long text is read in pieces (`pieces`): Duckling's time grows with the
square of a text's length.
"""
from __future__ import annotations

import ctypes
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading

__all__ = ['Unavailable', 'parse', 'pieces', 'install_folder']

VERSION = '0.1.0'
EXTENSION = 'duckling/duckling.cpython-39-x86_64-linux-gnu.so'   # as tools/install_duckling.py

INSTALL = 'run `python tools/install_duckling.py` (`make run` and `make test` run it)'


class Unavailable(Exception):
    """Duckling cannot be used here; the message says why and what to run."""


def install_folder() -> str:
    if os.environ.get('OSTINATO_DUCKLING'):
        return os.environ['OSTINATO_DUCKLING']
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'ostinato', 'duckling', 'pyduckling-native-' + VERSION)


_lock = threading.RLock()
_lib = None              # the loaded library, once loaded
_failure = None          # why it could not be loaded (then it is not tried again)
_locale = None
_dims: dict = {}         # tuple of dimension names -> Duckling's list of them
_tzdb = None
_free = None
_keep: list = []


def _load():
    global _lib, _failure, _locale, _tzdb, _free
    if _lib is not None:
        return _lib
    if _failure is not None:
        raise Unavailable(_failure)
    if not (sys.platform.startswith('linux') and platform.machine() in ('x86_64', 'AMD64')):
        _failure = ('Duckling is available for x86-64 Linux only (this is %s %s)'
                    % (sys.platform, platform.machine()))
        raise Unavailable(_failure)
    path = os.path.join(install_folder(), EXTENSION)
    if not os.path.exists(path):
        # Not remembered: once installed, the next call loads it.
        raise Unavailable('Duckling is not installed (no %s): %s' % (path, INSTALL))
    try:
        # RTLD_GLOBAL: the Haskell libraries refer to each other's symbols;
        # RTLD_LAZY: the extension's Python 3.9 symbols are never called.
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL | os.RTLD_LAZY)
        V, S = ctypes.c_void_p, ctypes.c_char_p
        for name, res, args in (
                ('hs_init_with_rtsopts', None, [ctypes.POINTER(ctypes.c_int),
                                                ctypes.POINTER(ctypes.POINTER(S))]),
                ('wloadTimeZoneSeries', V, [S]),
                ('wparseRefTime', V, [V, S, ctypes.c_long]),
                ('duckTimeDestroy', None, [V]),
                ('wparseLang', V, [S]),
                ('wmakeDefaultLocale', V, [V]),
                ('wparseDimensions', V, [ctypes.c_int, ctypes.POINTER(S)]),
                ('wparseText', V, [S, V, V, V, ctypes.c_bool])):
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        # Duckling's answers are C strings from malloc.
        free = ctypes.CDLL(None).free
        free.argtypes = [V]
        free.restype = None
        # The Haskell runtime's own signal handlers would take SIGINT from
        # Python (Ctrl-C then ends the process at the next call), and
        # SIGPIPE, SIGTSTP, SIGQUIT; its timer signal interrupts system
        # calls.  Duckling runs single-threaded, so it needs neither.
        args = [b'ostinato', b'+RTS', b'--install-signal-handlers=no', b'-V0', b'-RTS']
        argc = ctypes.c_int(len(args))
        argv = (S * (len(args) + 1))(*args, None)
        lib.hs_init_with_rtsopts(ctypes.byref(argc),
                                 ctypes.pointer(ctypes.cast(argv, ctypes.POINTER(S))))
        _keep.append((argc, argv))        # the runtime may keep pointers into them
        _locale = lib.wmakeDefaultLocale(lib.wparseLang(b'EN'))
        # No zone files: Duckling's loader throws on many valid ones (UTC,
        # Asia/Kolkata ...), and its offsets are wrong on the day of a DST
        # change.  It reads every text in UTC (the module docstring).
        empty = tempfile.mkdtemp(prefix='ostinato-duckling-')
        try:
            _tzdb = lib.wloadTimeZoneSeries(empty.encode())
        finally:
            os.rmdir(empty)
    except (OSError, AttributeError) as e:
        _failure = 'Duckling does not load from %s (%s): %s' % (install_folder(), e, INSTALL)
        raise Unavailable(_failure) from None
    _lib = lib
    _free = free
    return lib


# ------------------------------------------------------------------ text

_ASCII = {ord('\u2018'): "'", ord('\u2019'): "'", ord('\u201c'): '"', ord('\u201d'): '"',
          ord('\u2013'): '-', ord('\u2014'): '-', ord('\u00a0'): ' ', 0: ' '}


def _ascii(text: str) -> bytes:
    """`text` with one ASCII character for each of its characters."""
    text = text.translate(_ASCII)
    if not text.isascii():
        text = ''.join(c if c < '\x80' else ' ' for c in text)
    return text.encode('ascii')


def _dimension_list(dims):
    key = tuple(dims)
    found = _dims.get(key)
    if found is None:
        names = (ctypes.c_char_p * len(key))(*[d.encode() for d in key])
        found = _dims[key] = (_lib.wparseDimensions(len(key), names), names)
    return found[0]


# Duckling's time grows with the square of a text's length (1,000
# characters of clock times took 3 s here, 10,000 of numbers 85 s), so a
# long text is read in pieces of at most PIECE characters, cut after a line,
# a sentence, a clause or at least a word.
PIECE = 200
_CUTS = ('\n', '. ', '! ', '? ', '; ', ', ', ' ')


def pieces(text: str):
    """(offset, piece) covering `text`, each piece at most PIECE long."""
    at = 0
    while len(text) - at > PIECE:
        window = text[at:at + PIECE]
        cut = PIECE
        for mark in _CUTS:
            i = window.rfind(mark)
            if i > 0:
                cut = i + len(mark)
                break
        yield at, window[:cut]
        at += cut
    yield at, text[at:]


class Failed(Exception):
    """Duckling failed on this text (its process died on it); the next
    call starts it again."""


_child = None            # the process Duckling runs in (Popen), once started


def parse(text: str, dims, wall: int) -> list:
    """Duckling's entities (dicts, as its JSON has them) in `text`, of the
    dimensions `dims`, read at the wall-clock time `wall` (seconds since
    1970-01-01T00:00 of the caller's zone): the times in them are
    wall-clock times of that zone, written as UTC.  Raises Unavailable, or
    Failed for a text Duckling dies on.

    Duckling runs in a process of its own: a Haskell error escaping a call
    ends the process it runs in (`extract('the', ['time'])` did: "Ix{Int}.
    index: Index (3) out of range"), and no user's text may end ours."""
    global _child
    request = json.dumps({'text': text, 'dims': list(dims), 'wall': int(wall)}) + '\n'
    with _lock:
        if _child is None or _child.poll() is not None:
            _child = subprocess.Popen(
                [sys.executable, '-c', 'from ostinato.vm import duckling; duckling.serve()'],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                text=True, encoding='utf-8', start_new_session=True)
        try:
            _child.stdin.write(request)
            _child.stdin.flush()
            line = _child.stdout.readline()
        except OSError:
            line = ''
        try:
            answer = json.loads(line) if line else None
        except ValueError:
            answer = None       # a line that is not the child's answer
        if not isinstance(answer, dict):
            _child.kill()
            _child.wait()
            _child = None
            raise Failed('Duckling failed on this text')
    if 'unavailable' in answer:
        raise Unavailable(answer['unavailable'])
    return answer['found']


def serve():
    """The child's loop: a JSON request a line in, a JSON answer a line out."""
    for line in sys.stdin:
        r = json.loads(line)
        try:
            answer = {'found': _parse_here(r['text'], r['dims'], r['wall'])}
        except Unavailable as e:
            answer = {'unavailable': str(e)}
        sys.stdout.write(json.dumps(answer) + '\n')
        sys.stdout.flush()


def _parse_here(text: str, dims, wall: int) -> list:
    """`parse`, in this process."""
    with _lock:
        _load()
        ref = _lib.wparseRefTime(_tzdb, b'UTC', int(wall))
        try:
            found = []
            for at, piece in pieces(text):
                if not piece.strip():
                    continue
                for e in _parse_piece(piece, ref, dims):
                    if isinstance(e, dict) and type(e.get('start')) is int \
                            and type(e.get('end')) is int:
                        e['start'] += at
                        e['end'] += at
                        found.append(e)
            return found
        finally:
            _lib.duckTimeDestroy(ref)


def _parse_piece(text, ref, dims):
    out = _lib.wparseText(_ascii(text), ref, _locale, _dimension_list(dims), False)
    try:
        return json.loads(ctypes.string_at(out).decode('utf-8', 'replace'))
    finally:
        _free(out)
