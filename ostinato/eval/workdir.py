"""Where an eval keeps its databases, its results and its transcripts, and
how an interrupted eval goes on.

Each command (its case files, backend, model, --runs and --only) has a
directory of its own under the work directory (`.ostinato-eval` by
default).  A run's result is appended to `results.jsonl` (and flushed to
disk) only after its transcript was written, so after a crash -- kill -9,
a segfault of the model, a reboot -- the same command again keeps every run
that finished and runs the others anew: a dialogue that was under way starts
over on a fresh database, so its result never mixes two processes.  When
the case files, the skills, the standard library or the backend changed
since, or the eval had finished, the same command starts afresh.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from datetime import datetime, timezone

STATE = 'state.json'
RESULTS = 'results.jsonl'


class WorkDirError(Exception):
    pass


def slug(text, width=48):
    s = re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')
    return (s[:width].rstrip('-')) or 'x'


def _digest(parts):
    h = hashlib.sha256()
    for p in parts:
        data = p if isinstance(p, bytes) else str(p).encode('utf-8')
        h.update(len(data).to_bytes(8, 'big'))
        h.update(data)
    return h.hexdigest()


def _read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return b''


def _ost_files(directory):
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith('.ost'))
    except OSError:
        return []
    return [os.path.join(directory, n) for n in names]


def fingerprint(files, backend_identity):
    """What the results depend on: the case files, every Ostinato source
    beside each skill and in the standard library, the backend settings
    (and a script's text), and this Ostinato's version."""
    from .. import __version__
    from ..runtime.modules import stdlib_dir
    parts = ['ostinato', __version__]
    dirs = []
    for cf in files:
        parts += ['case file', os.path.abspath(cf.path), _read(cf.path)]
        d = os.path.dirname(cf.skill)
        if d not in dirs:
            dirs.append(d)
    sd = stdlib_dir()
    if sd and sd not in dirs:
        dirs.append(sd)
    for d in dirs:
        for p in _ost_files(d):
            parts += ['source', p, _read(p)]
    for k, v in sorted(backend_identity.items()):
        parts += [k, '' if v is None else v]
    script = backend_identity.get('script')
    if script:
        parts += ['script text', _read(script)]
    return _digest(parts)


# What a recorded result must hold for this version to report it; a record
# of another shape (written by another version) is not kept: its run is
# simply run again.
_FIELDS = {'file': str, 'case': str, 'run': int, 'holdout': bool, 'passed': bool,
           'failed_expectations': list, 'bot_messages': int, 'asked': int, 'llm_calls': int,
           'seconds': (int, float), 'bot': list, 'errors': list, 'transcript': str,
           'llm_errors': list, 'llm_seconds': (int, float), 'attempts': int}


def _readable(r):
    return isinstance(r, dict) and all(
        isinstance(r.get(k), t) and (t is bool or not isinstance(r.get(k), bool))
        for k, t in _FIELDS.items())


class WorkDir:
    def __init__(self, root, files, identity, say):
        stems = '+'.join(slug(os.path.splitext(os.path.basename(cf.path))[0], 20)
                         for cf in files)
        key = _digest([os.path.abspath(cf.path) for cf in files]
                      + ['%s=%s' % kv for kv in sorted(identity.items())])[:10]
        self.path = os.path.join(root, '%s-%s' % (stems[:60], key))
        self.say = say
        self.lock = None

    # ------------------------------------------------------------ opening
    def open(self, fp, total):
        """Lock the directory; return the results of the finished runs of an
        interrupted eval with the same fingerprint (else start afresh: [])."""
        try:
            return self._open(fp, total)
        except OSError as e:
            raise WorkDirError('cannot use the work directory %s: %s (choose another with '
                               '--work DIR)' % (self.path, e.strerror or e)) from None

    def _open(self, fp, total):
        import zc.lockfile
        os.makedirs(self.path, exist_ok=True)
        try:
            self.lock = zc.lockfile.LockFile(os.path.join(self.path, 'lock'))
        except zc.lockfile.LockError:
            raise WorkDirError('another ostinato eval is running the same cases in %s'
                               % self.path) from None
        state = self._state()
        done = []
        if state and state.get('fingerprint') == fp and not state.get('complete'):
            done = self._results()
        elif state and not state.get('complete') and state.get('fingerprint') != fp:
            self.say('ostinato eval: the case files, skills or model settings changed since '
                       'the interrupted eval in %s: starting over' % self.path)
        if not done:
            self._clear()
        for sub in ('db', 'transcripts'):
            os.makedirs(os.path.join(self.path, sub), exist_ok=True)
        # The databases of an interrupted eval hold dialogues under way:
        # their runs start over, on fresh databases.
        self._remove_tree(os.path.join(self.path, 'db'))
        os.makedirs(os.path.join(self.path, 'db'), exist_ok=True)
        self._write_state({'fingerprint': fp, 'complete': False, 'runs': total,
                           'started': datetime.now(timezone.utc).isoformat(timespec='seconds')})
        return done

    def _state(self):
        try:
            with open(os.path.join(self.path, STATE), encoding='utf-8') as f:
                state = json.load(f)
            return state if isinstance(state, dict) else None
        except (OSError, ValueError):
            return None

    def _write_state(self, state):
        tmp = os.path.join(self.path, STATE + '.tmp')
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.path, STATE))

    def _results(self):
        """The recorded results; a line cut short by a crash is left out
        (its run is simply run again)."""
        out = []
        try:
            with open(os.path.join(self.path, RESULTS), encoding='utf-8') as f:
                for line in f:
                    try:
                        r = json.loads(line)
                    except ValueError:
                        continue
                    if _readable(r):
                        out.append(r)
        except OSError:
            pass
        return out

    def _clear(self):
        for name in (STATE, RESULTS):
            try:
                os.unlink(os.path.join(self.path, name))
            except OSError:
                pass
        self._remove_tree(os.path.join(self.path, 'transcripts'))

    @staticmethod
    def _remove_tree(path):
        shutil.rmtree(path, ignore_errors=True)

    # ------------------------------------------------------------ while running
    def db_path(self, index, cf):
        stem = slug(os.path.splitext(os.path.basename(cf.path))[0], 30)
        return os.path.join(self.path, 'db', '%d-%s.fs' % (index + 1, stem))

    def transcript_path(self, run, case_index):
        cf = run.case.file
        stem = slug(os.path.splitext(os.path.basename(cf.path))[0], 20)
        name = '%s.%02d-%s.run%d.txt' % (stem, case_index + 1, slug(run.case.name, 40), run.number)
        return os.path.join(self.path, 'transcripts', name)

    def record(self, result):
        with open(os.path.join(self.path, RESULTS), 'a', encoding='utf-8') as f:
            f.write(json.dumps(result, ensure_ascii=False) + '\n')
            f.flush()
            os.fsync(f.fileno())

    def complete(self):
        state = self._state() or {}
        state['complete'] = True
        state['finished'] = datetime.now(timezone.utc).isoformat(timespec='seconds')
        self._write_state(state)

    def close(self):
        if self.lock is not None:
            self.lock.close()
            self.lock = None
