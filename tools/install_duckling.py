"""Install Duckling, the extractor behind the `extract` built-in, once per machine.

    python tools/install_duckling.py           # install unless it is there; print where
    python tools/install_duckling.py --check   # exit 0 when installed and loadable, else 1

Duckling (Facebook's rule-based extractor of times, durations, numbers and
quantities, the one Rasa uses) is written in Haskell.  Its Python binding,
`pyduckling-native` 0.1.0, ships wheels for CPython up to 3.9 only, and its
source no longer builds; but the x86-64 Linux wheel carries Duckling as
ordinary shared libraries with a C interface, which any Python loads through
ctypes (ostinato/vm/duckling.py).  So this does not `pip install` it: it
downloads that one wheel from PyPI with pip (its hash pinned below), unpacks
the libraries into a cache outside the checkout,

    ~/.cache/ostinato/duckling/pyduckling-native-0.1.0/   (about 1.7 GB, a 26 MB download)

and checks that they load, in a child process.  ostinato/vm/duckling.py
looks there (or in $OSTINATO_DUCKLING).  Two installs at once wait for each
other (a lock file).  Only the standard library is used.

Why Duckling (issue 26, measured on the diet's phrases): it found "around
12:30", "20 min ago", "half an hour ago", "quarter past 12", "at 7.30 this
morning", "at 8" and "at 7:15 this morning", each with its span, at under
1 ms a phrase; dateparser missed "at 8", "quarter past 12" and "around 3",
ctparse missed "at 8".
"""
from __future__ import annotations

import fcntl
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import zipfile

VERSION = '0.1.0'
WHEEL = 'pyduckling_native-%s-cp39-cp39-manylinux2014_x86_64.whl' % VERSION
SHA256 = 'aeecc3f68b9e800181c0a4cfe1f388ee0911c9c81fb04a4cbcb393992e094c9f'
NAME = 'pyduckling-native-%s' % VERSION     # the folder in the cache
EXTENSION = 'duckling/duckling.cpython-39-x86_64-linux-gnu.so'   # keep in step with vm/duckling.py


def say(text: str) -> None:
    print('install_duckling: ' + text, flush=True)


def cache_root() -> str:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'ostinato', 'duckling')


def target() -> str:
    return os.environ.get('OSTINATO_DUCKLING') or os.path.join(cache_root(), NAME)


def supported() -> bool:
    return sys.platform.startswith('linux') and platform.machine() in ('x86_64', 'AMD64')


def loads(folder: str) -> bool:
    """True when Duckling in `folder` loads and parses, tried in a child
    process (a broken library may take the process down with it)."""
    probe = ('import ctypes, sys\n'
             'lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL | 1)\n'
             'lib.hs_init(None, None)\n'
             'lib.wparseLang.restype = ctypes.c_void_p\n'
             'assert lib.wparseLang(b"EN")\n')
    path = os.path.join(folder, EXTENSION)
    if not os.path.exists(path):
        return False
    return subprocess.call([sys.executable, '-c', probe, path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


def _download(tmp: str) -> str:
    requirements = os.path.join(tmp, 'requirements.txt')
    with open(requirements, 'w') as f:
        f.write('pyduckling-native==%s --hash=sha256:%s\n' % (VERSION, SHA256))
    code = subprocess.call([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                            '--only-binary', ':all:', '--python-version', '3.9',
                            '--platform', 'manylinux2014_x86_64', '--require-hashes',
                            '-r', requirements, '-d', tmp])
    wheel = os.path.join(tmp, WHEEL)
    if code != 0 or not os.path.exists(wheel):
        say('could not download pyduckling-native %s from PyPI (pip exit %d); '
            'it needs network access to PyPI' % (VERSION, code))
        sys.exit(1)
    return wheel


def install() -> str:
    folder = target()
    if loads(folder):
        return folder
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    with open(folder + '.lock', 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say('another install is unpacking Duckling; waiting for it...')
            fcntl.flock(lock, fcntl.LOCK_EX)
        if loads(folder):
            return folder
        say('downloading Duckling (pyduckling-native %s, 26 MB) and unpacking it into %s '
            '(about 1.7 GB; once per machine)' % (VERSION, folder))
        tmp = tempfile.mkdtemp(prefix='.unpack-', dir=os.path.dirname(folder))
        try:
            wheel = _download(tmp)
            unpacked = os.path.join(tmp, NAME)
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.namelist()
                           if m.startswith(('duckling/', 'duckling.libs/'))
                           and '/tests/' not in m]
                archive.extractall(unpacked, members)
            if not loads(unpacked):
                say('Duckling was unpacked into %s but does not load on this machine' % unpacked)
                sys.exit(1)
            if os.path.exists(folder):
                shutil.rmtree(folder)
            os.replace(unpacked, folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    say('installed: %s' % folder)
    return folder


def main(argv) -> int:
    if not supported():
        say('Duckling is available for x86-64 Linux only (this is %s %s); '
            'the extract() built-in will raise an Error here' % (sys.platform, platform.machine()))
        return 1
    if argv == ['--check']:
        return 0 if loads(target()) else 1
    if argv:
        say('usage: python tools/install_duckling.py [--check]')
        return 2
    print(install())
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
