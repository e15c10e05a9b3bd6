"""The `ostinato` command.

Exit codes (DESIGN.md §7): 0 done, 65 syntax or compile error, 70 uncaught
runtime error in the main task (or an internal error), 2 bad usage (also a
--db that is a folder or no database), 69 a service cannot go on, 74 the
database is damaged (its end is missing or a record cannot be read:
runtime/filestore.py), 130 interrupted.
"""
from __future__ import annotations

import functools
import logging
import os
import sys
import traceback

import click

from .runtime.filestore import EXIT_DAMAGED, DamagedDatabase, DamagedRecord

EXIT_SYNTAX = 65
EXIT_RUNTIME = 70
EXIT_UNAVAILABLE = 69     # a service cannot go on (Telegram: token rejected, another poller)


def _syntax_error_exit(e):
    """Report a syntax error (message, source line, caret) and exit 65."""
    sys.stderr.write(e.format() + '\n')
    sys.exit(EXIT_SYNTAX)


class _OneLine(logging.Handler):
    """ZODB's and ZEO's log records as one line each on stderr, without the
    Python traceback that `logger.exception` attaches."""

    def emit(self, record):
        if record.funcName == 'panic':
            return      # ZODB raises right after: the command reports it as damage
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, DamagedRecord):
            return      # the serve process's ZEO server: its client reports it
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        if exc is not None:
            text += ' (%s: %s)' % (type(exc).__name__, ' '.join(str(exc).split())[:200])
        sys.stderr.write('ostinato: %s: %s\n' % (record.name, ' '.join(text.split())))


def _quiet_storage_logs():
    # FileStorage warns when it rebuilds its index or drops an uncommitted
    # transaction after a crash: expected after `kill -9`, and the damage it
    # also warns about is checked and reported by runtime/filestore.py.
    # ZEO logs every client that disconnects; a REPL leaving is normal.  A
    # record that cannot be loaded is reported by the store as damage.
    handler = _OneLine()
    for name, level in (('ZODB', logging.ERROR), ('ZEO', logging.ERROR),
                        ('ZODB.Connection', logging.CRITICAL + 1),
                        ('ZODB.serialize', logging.CRITICAL + 1)):
        log = logging.getLogger(name)
        log.setLevel(level)
        log.propagate = False
        log.handlers[:] = [handler]


def _damage_exits(command):
    """A damaged database ends any command the same way: its one report on
    stderr and exit 74, never a Python traceback."""
    @functools.wraps(command)
    def wrapper(*args, **kw):
        try:
            return command(*args, **kw)
        except DamagedDatabase as e:
            sys.stderr.write('ostinato: %s\n' % str(e).replace('\n', '\nostinato: '))
            sys.exit(EXIT_DAMAGED)
    return wrapper


@click.group(context_settings={'help_option_names': ['-h', '--help']})
@click.version_option(package_name='ostinato')
def main():
    """Ostinato: skills are durable programs; the model is a leaf."""
    _quiet_storage_logs()


def _db_options(f):
    f = click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs',
                     show_default=True, help='database file (env OSTINATO_DB)')(f)
    f = click.option('--memory', is_flag=True, help='use a throw-away in-memory database')(f)
    return f


def _accept_option(f):
    return click.option(
        '--accept-truncation', 'accept_truncation', is_flag=True,
        help='open a database whose end is missing or damaged anyway, going on '
             'from its last good transaction (the cut-off bytes are kept in DB.trN; '
             'the work done after it is done again)')(f)


def _llm_options(f):
    f = click.option('--llm', 'llm', default=None,
                     type=click.Choice(['auto', 'ollama', 'openai', 'embedded', 'scripted']),
                     help='model backend (env OSTINATO_LLM; default auto)')(f)
    f = click.option('--model', 'model', default=None, help='model name (env OSTINATO_MODEL)')(f)
    f = click.option('--llm-parallel', 'llm_parallel', default=1, show_default=True,
                     type=click.IntRange(1, 64),
                     help='LLM requests performed at once (per server)')(f)
    f = click.option('--llm-server', 'llm_servers', multiple=True, metavar='URL',
                     help='a model server (Ollama, or OpenAI-compatible with --llm openai); '
                          'repeat it to share the requests among several '
                          '(env OSTINATO_LLM_SERVERS, comma-separated)')(f)
    return f


def _telegram_option(f):
    return click.option('--telegram', is_flag=True,
                        help='also talk on Telegram (env TELEGRAM_BOT_TOKEN, '
                             'TELEGRAM_ALLOWED_USERS, TELEGRAM_API_URL)')(f)


def _telegram_channel(enabled):
    """The Telegram channel when --telegram was given; a configuration
    mistake (no token, a bad allowlist) ends the command with exit 2."""
    if not enabled:
        return []
    from .effects.telegram import TelegramChannel
    from .effects.telegram_api import TelegramConfig, TelegramError
    try:
        return [TelegramChannel(TelegramConfig.from_env())]
    except TelegramError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)


def _stop_on_signals():
    """Ctrl-C or SIGTERM stops the run between two turns, after the services
    have finished what is in flight; a second one stops at once (the turn in
    progress is not committed, so even that leaves the database consistent)."""
    import signal
    from .runtime.scheduler import request_stop

    def stop(signum, frame):
        if not request_stop():
            raise KeyboardInterrupt
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def _llm_service(llm, model, parallel, worker, spinner=False, servers=()):
    """The LLM worker; the backend is chosen when the first request comes.
    With several servers each gets `parallel` requests at a time."""
    from .effects.llm import LLMClient, LLMConfig
    from .effects.llm.config import parse_ollama_host
    from .effects.llm_queue import LLMService
    servers = [u for u in servers if u.strip()] or \
        [u for u in os.environ.get('OSTINATO_LLM_SERVERS', '').replace(',', ' ').split()]
    backend = (llm or os.environ.get('OSTINATO_LLM') or 'auto').strip().lower()
    if servers and backend not in ('auto', 'ollama', 'openai'):
        click.echo('ostinato: --llm-server is for the ollama and openai backends, not %s'
                   % backend, err=True)
        sys.exit(2)

    def maker(url=None):
        def make_client():
            config = LLMConfig.from_env(backend=llm, model=model)
            if url is not None:
                if config.backend == 'openai':
                    config.openai_url = url
                else:
                    config.ollama_host = parse_ollama_host(url)
            return LLMClient(config)
        return make_client
    makers = [maker(u.strip()) for u in servers] or [maker()]
    return LLMService(makers, parallel, worker=worker, spinner=spinner)


@main.command()
@click.argument('file', type=click.Path(dir_okay=False))
@_db_options
@_accept_option
@_llm_options
@_telegram_option
@_damage_exits
def run(file, db, memory, accept_truncation, llm, model, llm_parallel, llm_servers, telegram):
    """Run FILE until nothing can run any more.

    Running it again on the same database resumes every suspended task."""
    from .runtime.runner import run_file
    from .runtime.store import Store, StoreError
    if not os.path.isfile(file):
        click.echo('ostinato: no such file: %s' % file, err=True)
        sys.exit(2)
    try:
        store = Store(db, memory=memory, accept_truncation=accept_truncation)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    # A spinner while the model thinks, only for a person at a terminal.
    from .effects.console import ConsoleChannel
    from .runtime.scheduler import ServiceStopped
    channels = _telegram_channel(telegram)
    service = _llm_service(llm, model, llm_parallel, 'run',
                           spinner=sys.stdout.isatty() and sys.stderr.isatty(),
                           servers=llm_servers)
    services = [service, ConsoleChannel()] + channels
    _stop_on_signals()
    try:
        status = run_file(file, sys.stdout, sys.stderr, store=store, services=services)
    except KeyboardInterrupt:
        status = 130
    except ServiceStopped as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_UNAVAILABLE
    except BrokenPipeError:
        # The reader of our output went away (`ostinato run x | head`).
        sys.stderr.close()
        status = 0
    except Exception:
        sys.stderr.write('ostinato: internal error (please report it):\n')
        traceback.print_exc()
        status = EXIT_RUNTIME
    finally:
        for s in services:
            s.close()
        store.close()
    sys.exit(status)


@main.command()
@click.argument('file', required=False, type=click.Path(exists=True, dir_okay=False))
@click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs', show_default=True,
              help='database file, or zeo://HOST:PORT of a shared ZEO server (env OSTINATO_DB)')
@click.option('--worker', default='main', show_default=True,
              help='this worker\'s name, when several serve one database')
@_accept_option
@_llm_options
@_telegram_option
@_damage_exits
def serve(file, db, worker, accept_truncation, llm, model, llm_parallel, llm_servers,
          telegram):
    """Run every task in the database until interrupted, and serve the live
    database to `ostinato repl` and `ostinato tasks` over a local socket.

    With FILE, load it first as `ostinato run` does."""
    from .runtime.scheduler import ServiceStopped
    from .runtime.serve import Server
    from .runtime.store import StoreError
    from .syntax import OstSyntaxError
    channels = _telegram_channel(telegram)
    try:
        server = Server(db, worker=worker, accept_truncation=accept_truncation,
                        services=[_llm_service(llm, model, llm_parallel, worker,
                                                  servers=llm_servers)] + channels)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    _stop_on_signals()
    status = 0
    try:
        if file:
            try:
                server.sched.start_main(os.path.abspath(file))
            except OstSyntaxError as e:
                sys.stderr.write(e.format() + '\n')
                sys.exit(EXIT_SYNTAX)
            server.store.commit()
        if server.zeo is not None:
            click.echo('ostinato: serving %s on %s' % (db, server.zeo.path), err=True)
        else:
            click.echo('ostinato: worker %s serving %s' % (worker, db), err=True)
        server.serve()
    except KeyboardInterrupt:
        pass
    except ServiceStopped as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_UNAVAILABLE
    finally:
        server.sched.flush()
        server.close()
    sys.exit(status)


@main.command()
@_db_options
@_accept_option
@_damage_exits
def repl(db, memory, accept_truncation):
    """An interactive prompt on the live database (attaches to `serve`)."""
    from .repl import Repl
    from .runtime.serve import attach, live_socket
    from .runtime.store import StoreError
    try:
        store = attach(db, memory, accept_truncation=accept_truncation)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    standalone = memory or not (db.startswith('zeo:') or live_socket(db))
    try:
        if sys.stdin.isatty():
            click.echo('Ostinato %s on %s -- :help for help' % (
                __import__('ostinato').__version__, 'memory' if memory else db))
        Repl(store, standalone=standalone).loop()
    finally:
        store.close()


def _existing_address(db):
    """Where to reach the database `db` that must exist already: the socket of
    a running `serve`, else the file.  Exits 2 when there is neither."""
    from .runtime.serve import live_socket
    if db.startswith('zeo:'):
        return db
    sock = live_socket(db)
    if sock is not None:
        return 'zeo:' + sock
    if not os.path.exists(db):
        click.echo('ostinato: no database at %s (give --db PATH or set OSTINATO_DB)' % db,
                   err=True)
        sys.exit(2)
    return db


def _open_for_reading(db, memory):
    """The database for `tasks` and `db info`: through the socket of a running
    `serve` when there is one, else the file itself, read-only (so it can be
    looked at while `run` holds it).  Exits 2 with a message on failure."""
    from ZODB.POSException import ReadOnlyError
    from .runtime.store import Store, StoreError, open_storage
    if memory:
        return Store(memory=True)
    address = _existing_address(db)
    storage = None
    try:
        storage = open_storage(address, read_only=True)
        report = getattr(storage, 'end_report', None)
        if report is not None:
            click.echo('ostinato: warning: %s' % report.warning(), err=True)
        return Store(address, storage=storage)
    except ReadOnlyError:
        storage.close()
        click.echo('ostinato: %s holds no Ostinato world yet' % db, err=True)
    except StoreError as e:
        if storage is not None:
            storage.close()
        click.echo('ostinato: %s' % e, err=True)
    except DamagedDatabase:
        if storage is not None:
            storage.close()
        raise
    except Exception as e:
        click.echo('ostinato: cannot open the database %s: %s' % (db, e), err=True)
    sys.exit(2)


@main.command()
@click.argument('task_id', metavar='[ID]', required=False, type=int)
@_db_options
@_damage_exits
def tasks(task_id, db, memory):
    """Every live task: state, what it waits for and since when, its goal
    stack, and whether it runs old code.  With ID: that task's frames."""
    from .runtime import inspect
    store = _open_for_reading(db, memory)
    try:
        if task_id is None:
            text = inspect.tasks_text(store.world)
        else:
            try:
                text = inspect.task_text(store.world, task_id)
            except inspect.NoSuchTask as e:
                click.echo('ostinato: %s in %s' % (e, 'memory' if memory else db), err=True)
                sys.exit(2)
    finally:
        store.close()
    click.echo(text)


@main.command('log')
@click.option('--task', 'task_id', type=int, default=None, help='only this task\'s exchanges')
@click.option('--last', type=click.IntRange(1), default=None, help='only the last N exchanges')
@click.option('--json', 'as_json', is_flag=True, help='one JSON object per line')
@_db_options
@_damage_exits
def log_command(task_id, last, as_json, db, memory):
    """The LLM exchanges: prompt, reply, model, timings, task and goal stack."""
    import json as _json
    from .effects.llm_queue import log_entries, log_text
    store = _open_for_reading(db, memory)
    try:
        entries = log_entries(store.world, task_id, last)
        if as_json:
            for e in entries:
                click.echo(_json.dumps(e.as_dict(), ensure_ascii=False))
        else:
            click.echo(log_text(entries) if entries else 'no LLM exchanges')
    finally:
        store.close()


@main.group('db')
def db_group():
    """Storage upkeep and figures."""


@db_group.command('info')
@_db_options
@_damage_exits
def db_info(db, memory):
    """Storage figures: path, size, objects, transactions, schema, tasks.

    Also the tasks by state, the modules (and whether their files changed
    since they were loaded), timers and watches."""
    from .runtime import inspect
    store = _open_for_reading(db, memory)
    try:
        where = 'memory' if memory else db
        if not memory and store.address != db:
            where = '%s (live, through %s)' % (db, store.address)
        text = inspect.db_report(store.world, store.storage, where)
    finally:
        store.close()
    click.echo(text, nl=False)


@db_group.command('check')
@click.option('--repair', is_flag=True,
              help='queue orphaned tasks again and drop entries of ended tasks')
@_db_options
@_accept_option
@_damage_exits
def db_check(repair, db, memory, accept_truncation):
    """Check that every live task is ready, running, waiting or done.

    A task in none of these places would never run again (an orphan); one
    in two would run twice.  Exit status 0 when all is well, 1 when problems
    were found (and not repaired)."""
    from .runtime import invariants
    from .runtime.scheduler import Scheduler
    from .runtime.store import Store, StoreError
    if repair:
        address = db if memory else _existing_address(db)
        try:
            store = Store(address, memory=memory, accept_truncation=accept_truncation)
        except StoreError as e:
            click.echo('ostinato: %s' % e, err=True)
            sys.exit(2)
    else:
        store = _open_for_reading(db, memory)
    try:
        problems = invariants.check(store.world)
        for _, _, text in problems:
            click.echo(text)
        if problems and repair:
            sched = Scheduler(store.world)
            for line in store.transact(lambda: invariants.repair(
                    store.world, invariants.check(store.world), sched.make_ready)):
                click.echo('repaired: ' + line)
            problems = invariants.check(store.world)
        elif problems:
            click.echo('%d problem%s; `ostinato db check --repair` fixes them'
                       % (len(problems), '' if len(problems) == 1 else 's'))
        live = len(store.world.tasks)
    finally:
        store.close()
    if not problems:
        click.echo('ok: %d live task%s, each ready, running or waiting'
                   % (live, '' if live == 1 else 's'))
    sys.exit(1 if problems else 0)


@db_group.command('pack')
@click.option('--days', type=click.FloatRange(min=0), default=0, show_default=True,
              help='keep the revisions of the last N days')
@_db_options
@_accept_option
@_damage_exits
def db_pack(days, db, memory, accept_truncation):
    """Prune ended tasks, then drop old revisions and unreachable objects."""
    from .runtime import inspect
    from .runtime.store import Store, StoreError
    address = db if memory else _existing_address(db)
    try:
        store = Store(address, memory=memory, accept_truncation=accept_truncation)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    try:
        local = not memory and not db.startswith('zeo:')

        def size():
            return os.path.getsize(db) if local else store.storage.getSize()
        before = size()
        pruned = inspect.prune_ended(store.world)
        if pruned:
            store.commit('ostinato: prune %d ended task%s' % (pruned, '' if pruned == 1 else 's'))
        store.pack(days=days)
        after = size()
    finally:
        store.close()
    if pruned:
        click.echo('pruned %d ended task%s' % (pruned, '' if pruned == 1 else 's'))
    click.echo('packed %s: %s -> %s' % ('memory' if memory else db, inspect.human_size(before),
                                         inspect.human_size(after)))


@db_group.command('verify')
@click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs', show_default=True,
              help='database file (env OSTINATO_DB)')
@_damage_exits
def db_verify(db):
    """Check every record of the database file: exit 0 if no damage is
    found, 74 otherwise.

    Reads the whole file: its end (as every open does), every transaction
    and data record header, and every current object, loaded, unpickled and
    with its references resolved.  It only reads, so it may run while
    `serve` or `run` use the file."""
    from .runtime.filestore import verify
    from .runtime.store import StoreError
    if db.startswith('zeo:'):
        click.echo('ostinato: db verify reads a database file; give --db the path of the '
                   'file the ZEO server serves', err=True)
        sys.exit(2)
    try:
        problems = verify(db, sys.stdout)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    sys.exit(EXIT_DAMAGED if problems else 0)


@main.command()
@click.argument('files', nargs=-1, required=True, type=click.Path(dir_okay=False))
def check(files):
    """Parse and compile FILES; report syntax errors and warnings."""
    from .compiler.check import check_file
    from .vm.interp import VM  # noqa: F401 -- registers every built-in
    from .vm.values import BUILTINS
    status = 0
    for f in files:
        status = max(status, check_file(f, sys.stdout, sys.stderr, BUILTINS))
    sys.exit(status)


@main.command()
@click.argument('file', type=click.Path(exists=True, dir_okay=False))
def dis(file):
    """Show the compiled instructions of FILE (for debugging)."""
    from .compiler.compiler import compile_module
    from .compiler.dis import disassemble
    from .syntax import OstSyntaxError, parse
    with open(file, encoding='utf-8') as fh:
        src = fh.read()
    name = os.path.splitext(os.path.basename(file))[0]
    try:
        code = compile_module(parse(src, os.path.basename(file)), src, os.path.basename(file), name)
    except OstSyntaxError as e:
        _syntax_error_exit(e)
    click.echo(disassemble(code))
