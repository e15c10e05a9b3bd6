"""Modules: finding, compiling, loading, importing and upgrading them.

A module is loaded by running its top level as a task of its own (its
*top-level task*); an importer waits while it runs first, and gets the
module when that task ends or first waits (docs/language.md §16).  A module
whose file changed is upgraded in place: recompiled, and its top level run
again in the same namespace while the tasks that use it wait (DESIGN.md §5).
Compiled code is kept in the database, keyed by the source text's hash and
the bytecode and compiler versions.

`Modules` works on a `Runtime` -- the world and the few task operations it
needs (the scheduler provides them); it never imports the scheduler.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat as stat_module
from typing import Any, Protocol, TextIO

from ..compiler.code import BYTECODE_VERSION, COMPILER_VERSION
from ..compiler.compiler import compile_module
from ..syntax import OstSyntaxError, decode_source, parse
from ..vm.limits import MAX_STRING
from ..vm.values import Frame, OModule, OstError


class Runtime(Protocol):
    """What module loading needs of the scheduler."""
    world: Any
    err: TextIO

    def new_task(self, frame: Any, name: str) -> Any: ...

    def make_ready(self, task: Any, front: bool = False) -> None: ...

    def report(self, task: Any) -> None: ...


def stdlib_dir():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for cand in (os.path.join(here, 'stdlib'), os.path.join(os.path.dirname(here), 'stdlib')):
        if os.path.isdir(cand):
            return cand
    return None


def find_module(name, from_dir):
    """The file of module NAME: beside the importer, in the standard library,
    or in a folder of OSTINATO_PATH; None if there is none."""
    dirs = []
    if from_dir:
        dirs.append(from_dir)
    sd = stdlib_dir()
    if sd:
        dirs.append(sd)
    dirs += [d for d in os.environ.get('OSTINATO_PATH', '').split(':') if d]
    for d in dirs:
        p = os.path.join(d, name + '.ost')
        if os.path.isfile(p):
            return os.path.abspath(p)
    return None


def compile_source(source, path, module_name, world):
    """Parse and compile a module source, once per source text and compiler:
    the Code is kept in the world (the database), keyed by the text's hash,
    the file, the module name and the bytecode and compiler versions.
    Raises OstSyntaxError."""
    key = (hashlib.sha256(source.encode('utf-8')).hexdigest(), path or '', module_name,
           BYTECODE_VERSION, COMPILER_VERSION)
    cache = world.compiled
    code = cache.get(key)
    if code is None:
        fname = os.path.basename(path)
        tree = parse(source, fname)
        code = compile_module(tree, source, fname, module_name)
        cache[key] = code
    return code


def read_source(path):
    """The text of the module file at `path` (see read_source_bytes); text
    that is not UTF-8 raises the OstSyntaxError it is (file:line:col)."""
    return decode_source(read_source_bytes(path), os.path.basename(path)).replace('\r\n', '\n')


def read_source_bytes(path):
    """The bytes of the module file at `path`.  What a start reads may have
    changed while nothing ran: what is not a regular file (a FIFO would
    block the start for ever, a device never end) or is larger than any
    source raises OSError, as a missing file does."""
    fd = os.open(path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0))
    with os.fdopen(fd, 'rb') as f:
        if not stat_module.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, 'not a regular file', path)
        data = f.read(MAX_SOURCE + 1)
    if len(data) > MAX_SOURCE:
        raise OSError(errno.EFBIG, 'larger than %s bytes' % '{:,}'.format(MAX_SOURCE), path)
    return data


# A module's source is at most one string's worth of bytes.
MAX_SOURCE = MAX_STRING


def stamp(path):
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def syntax_error_at_import(e):
    """A syntax error in an imported module is a runtime error at the import
    (docs/language.md §14)."""
    return OstError('%s:%d:%d: syntax error: %s' % (e.filename, e.line, e.col, e.message))


class Modules:
    def __init__(self, rt: Runtime):
        self.rt = rt

    def top_level_task(self, m, code=None):
        """A new task that runs module m's top level (`code`, else the
        module's own) in m's namespace; not yet queued."""
        code = code if code is not None else m.code
        t = self.rt.new_task(Frame(code, m, m, None, None), m.name)
        t.module = m
        return t

    def load(self, name, path, source=None):
        """Create the module and its top-level task (not yet queued).  Raises
        OstSyntaxError."""
        if source is None:
            source = read_source(path)
        m = OModule(name, path)
        self._set_code(m, source)
        return m, self.top_level_task(m)

    def _set_code(self, m, source):
        code = compile_source(source, m.path, m.name, self.rt.world)
        m.source = source
        m.code = code
        m.summary = code.summary
        m.details = code.details

    # ------------------------------------------------------------ importing
    def import_module(self, task, name, frame):
        """The VM's IMPORT: the module, or None when `task` must first wait
        for its top level (the wait is set up here).  Raises OstError."""
        w = self.rt.world
        m = w.modules.get(name)
        if m is not None:
            try:
                source = self.source_changed(m)
                if source is None:
                    return m
                t = self.upgrade(m, source)
            except OstSyntaxError as e:
                raise syntax_error_at_import(e) from None
            return self._wait_for(task, t, name)
        m = w.loading.get(name)
        if m is not None:            # a circular import gets the module as it is so far
            return m
        from_dir = None
        if frame.module is not None and frame.module.path:
            from_dir = os.path.dirname(frame.module.path)
        path = find_module(name, from_dir)
        if path is None:
            raise OstError("no module named '%s'" % name)
        try:
            m, t = self.load(name, path)
            m.stamp = stamp(path)
        except OstSyntaxError as e:
            raise syntax_error_at_import(e) from None
        except OSError as e:
            raise OstError("cannot read module '%s': %s" % (name, e.strerror))
        w.loading[name] = m
        return self._wait_for(task, t, name)

    def _wait_for(self, importer, t, name):
        """The importer waits while the module's top-level task `t` runs first."""
        t.importer = importer
        importer.state = 'waiting'
        importer.waiting = ('import', name)
        self.rt.world.ready.appendleft(t)
        return None

    def settled(self, t, status):
        """A task ended, failed or waited (not for an import of its own): if
        it runs a module's top level, the module is loaded from then on, and
        the task that imported it continues before any other."""
        w = self.rt.world
        importer = t.importer
        m = t.module
        if importer is None:
            if m is not None and status != 'failed' and w.loading.get(m.name) is m:
                del w.loading[m.name]
                w.modules[m.name] = m
            return
        t.importer = None
        name = m.name
        first_load = w.loading.get(name) is m
        if first_load:
            del w.loading[name]
        if status == 'failed' and first_load:
            # Raised before its first wait: the error propagates out of the import
            # and the module is forgotten.
            importer.resume = ('error', t.error)
            t.reported = True
            w.tasks.pop(t.id, None)
        elif status == 'failed':
            # An upgrade whose top level raised: the import still gives the module.
            self.rt.report(t)
            importer.resume = ('value', m)
        else:
            w.modules[name] = m
            importer.resume = ('value', m)
        self.rt.make_ready(importer, front=True)

    # ------------------------------------------------------------ upgrades
    def source_changed(self, m):
        """The module's file text if it differs from what was loaded, else
        None.  A module whose file is gone is looked for again by name in the
        library folders (an Ostinato installed elsewhere brings its stdlib)."""
        if not m.path:
            return None
        if not os.path.exists(m.path):
            moved = find_module(m.name, None)
            if moved is not None and os.path.basename(moved) == os.path.basename(m.path):
                m.path = moved
        try:
            st = os.stat(m.path)
            if (st.st_mtime_ns, st.st_size) == m.stamp:
                return None
            data = read_source_bytes(m.path)
        except OSError:
            return None
        # Noted before the text is decoded: a file that is not UTF-8 is
        # reported once, as any syntax error of an upgrade is.
        m.stamp = (st.st_mtime_ns, st.st_size)
        source = decode_source(data, os.path.basename(m.path)).replace('\r\n', '\n')
        return source if source != m.source else None

    def upgrade(self, m, source):
        """Recompile `m` from `source` and return a new task that re-runs its top
        level in the same namespace (DESIGN.md §5); not yet queued.  Raises
        OstSyntaxError, leaving the module as it was."""
        self._set_code(m, source)
        return self.top_level_task(m)

    def upgrade_all(self, skip=None):
        """Check every loaded module's source; queue the upgrades (front of the
        ready queue, in name order).  Syntax errors are reported and the old
        version stays."""
        w = self.rt.world
        tasks = []
        for name in list(w.modules.keys()):
            m = w.modules[name]
            if m is skip:
                continue
            try:
                source = self.source_changed(m)
                if source is None:
                    continue
                tasks.append(self.upgrade(m, source))
            except OstSyntaxError as e:
                self.rt.err.write(e.format() + '\n')
        for t in reversed(tasks):
            w.ready.appendleft(t)

    def start_main(self, path, module_name=None):
        """Make FILE's main task ready (docs/language.md §1): on a new database load
        FILE and run its top level; if FILE's main task is still suspended,
        resume it (upgrading FILE in place first if its text changed); if it
        ended, run FILE's top level again as a new main task in the same module
        namespace.  Raises OstSyntaxError (nothing runs then)."""
        name = module_name or os.path.splitext(os.path.basename(path))[0]
        w = self.rt.world
        main = w.main_task
        m = w.modules.get(name) or w.loading.get(name)
        if m is not None and m.path != path:
            if m.path and not os.path.exists(m.path):
                # The same program, moved (or the database copied elsewhere).
                if w.main_path == m.path:
                    w.main_path = path
                m.path = path
            else:
                m = None
        if m is None:
            m, t = self.load(name, path)
            m.stamp = stamp(path)
            w.loading[name] = m
            w.main_task = t
            w.main_path = path
            w.ready.append(t)
        elif main is not None and w.main_path == path and (not main.done or w.run_open):
            # The main task is suspended -- or it ended but the run that ended it
            # was interrupted (a crash), so the other tasks of that run resume.
            source = self.source_changed(m)
            if source is not None:
                w.ready.appendleft(self.upgrade(m, source))
        else:
            source = self.source_changed(m)
            t = self.upgrade(m, source) if source is not None else self.top_level_task(m)
            w.main_task = t
            w.main_path = path
            w.ready.append(t)
        self.upgrade_all(skip=m)
        return w.main_task
