"""The `ostinato` command.

Exit codes (DESIGN.md §7): 0 done, 65 syntax or compile error, 70 uncaught
runtime error in the main task (or an internal error), 2 bad usage (also a
--db that is a folder or no database), 69 a service cannot go on (Telegram:
the token was rejected, another poller), 74 the database cannot be written
(a full disk: nothing committed is lost, run the same command again once
there is room) or is damaged (its end is missing or a record cannot be
read: runtime/filestore.py), 130 interrupted.

Modules are imported inside the commands, so `ostinato --help` and
`ostinato check` start fast.
"""
from __future__ import annotations

import os
import sys
import traceback

import click

EXIT_USAGE = 2
EXIT_SYNTAX = 65
EXIT_RUNTIME = 70
EXIT_UNAVAILABLE = 69     # a service cannot go on (Telegram: token rejected, another poller)
EXIT_IOERR = 74           # the database cannot be written (sysexits' EX_IOERR)
EXIT_DAMAGED = 74         # the database is damaged (runtime/filestore.py)

ENVIRONMENT = """\
\b
Environment:
  OSTINATO_DB            the database (default ostinato.fs), as --db
  OSTINATO_LLM           the model backend: auto, ollama, openai, embedded,
                         scripted (default auto), as --llm
  OSTINATO_MODEL         the model's name, as --model
  OLLAMA_HOST            where Ollama answers (default http://127.0.0.1:11434)
  OSTINATO_OPENAI_URL    an OpenAI-compatible server, for --llm openai
  OSTINATO_OPENAI_KEY    its API key, when it needs one
  OSTINATO_LLM_SCRIPT    the replies of --llm scripted (a JSON file)
  OSTINATO_LLM_SERVERS   several model servers, comma-separated, as --llm-server
  OSTINATO_LLM_TIMEOUT   seconds to wait for one model reply (default 300)
  OSTINATO_LOG           the operator's log file, as --log
  OSTINATO_PATH          more folders to import modules from, ':'-separated
  TELEGRAM_BOT_TOKEN     the bot's token, for --telegram (never stored or logged)
  TELEGRAM_ALLOWED_USERS the Telegram user ids allowed to talk to the bot
  TELEGRAM_API_URL       another Bot API server
  NO_COLOR               no colour, even on a terminal
"""


def _examples(*lines):
    """An epilog of examples, kept as written (click's \\b)."""
    return '\b\nExamples:\n' + '\n'.join('  ' + line for line in lines)


def fail(message, status=EXIT_USAGE):
    """One line `ostinato: MESSAGE` on standard error, and exit."""
    click.echo('ostinato: %s' % message, err=True)
    sys.exit(status)


def _syntax_error_exit(e):
    """Report a syntax error (message, source line, caret) and exit 65."""
    sys.stderr.write(e.format() + '\n')
    sys.exit(EXIT_SYNTAX)


def _not_a_program(path):
    """Why `path` cannot be read as a program, or None: one style of
    message for every command.  A device or a named pipe is named as what
    it is (`/dev/zero` never ends, a pipe waits for a writer)."""
    import stat
    try:
        st = os.stat(path)
    except OSError:
        return 'no such file: %s' % path
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return '%s is a folder, not a program file' % path
    if stat.S_ISREG(mode):
        from .runtime.modules import MAX_SOURCE
        if st.st_size > MAX_SOURCE:
            return '%s is larger than a program may be ({:,} bytes; at most {:,})'.format(
                st.st_size, MAX_SOURCE) % path
        return None
    what = ('a named pipe (FIFO)' if stat.S_ISFIFO(mode) else
            'a character device' if stat.S_ISCHR(mode) else
            'a block device' if stat.S_ISBLK(mode) else
            'a socket' if stat.S_ISSOCK(mode) else 'not a regular file')
    return '%s is %s, not a program file' % (path, what)


def _source_file(path):
    """A program file to read, or exit with why it is not one."""
    problem = _not_a_program(path)
    if problem is not None:
        fail(problem)
    return path


def _quiet_storage_logs():
    # FileStorage warns when it rebuilds its index or drops an uncommitted
    # transaction after a crash: expected after `kill -9`, and the damage it
    # also warns about is checked and reported by runtime/filestore.py.
    # ZEO logs every client that disconnects; a REPL leaving is normal.  A
    # record that cannot be loaded is reported by the store as damage.
    import logging

    class OneLine(logging.Handler):
        """A record as one line, without the Python traceback that
        `logger.exception` attaches."""

        def emit(self, record):
            if record.funcName == 'panic':
                return      # ZODB raises right after: the command reports it as damage
            exc = record.exc_info[1] if record.exc_info else None
            if type(exc).__name__ == 'DamagedRecord':
                return      # the serve process's ZEO server: its client reports it
            try:
                text = record.getMessage()
            except Exception:
                text = str(record.msg)
            if exc is not None:
                text += ' (%s: %s)' % (type(exc).__name__, ' '.join(str(exc).split())[:200])
            sys.stderr.write('ostinato: %s: %s\n' % (record.name, ' '.join(text.split())))

    handler = OneLine()
    for name, level in (('ZODB', logging.ERROR), ('ZEO', logging.ERROR),
                        # A lost PostgreSQL server is reported once, in words
                        # (runtime/pg.py), not at every connection RelStorage tries.
                        ('relstorage', logging.CRITICAL + 1),
                        ('ZODB.Connection', logging.CRITICAL + 1),
                        ('ZODB.serialize', logging.CRITICAL + 1)):
        log = logging.getLogger(name)
        log.setLevel(level)
        log.propagate = False
        log.handlers[:] = [handler]


class Commands(click.Group):
    """The commands in the order they are defined (the order a newcomer
    meets them), not alphabetically.

    A damaged database ends any command the same way: its report on stderr
    and exit 74, never a Python traceback (DamagedDatabase is a
    BaseException, which click does not catch)."""

    def list_commands(self, ctx):
        return list(self.commands)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BaseException as e:
            filestore = sys.modules.get('ostinato.runtime.filestore')
            if filestore is None or not isinstance(e, filestore.DamagedDatabase):
                raise
            sys.stderr.write('ostinato: %s\n' % str(e).replace('\n', '\nostinato: '))
            sys.exit(EXIT_DAMAGED)


@click.group(cls=Commands, invoke_without_command=True, epilog=ENVIRONMENT,
             context_settings={'help_option_names': ['-h', '--help'], 'max_content_width': 100})
@click.version_option(package_name='ostinato')
@click.pass_context
def main(ctx):
    """Ostinato: skills are durable programs; the model is a leaf.

    Start with `ostinato run skills/diet.ost` (a dialogue on the console),
    `ostinato new skill NAME` (your own skill) or `ostinato doctor` (what
    this machine gives Ostinato)."""
    _quiet_storage_logs()
    _printable_output()
    from .runtime.settings import SettingError, check_environment
    try:
        check_environment()
    except SettingError as e:
        fail(str(e))
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)


def _printable_output():
    # A string may hold what the terminal's encoding cannot (a lone
    # surrogate from parse_json('"\\ud800"')): it is printed escaped, as
    # Python prints its own errors, instead of failing after the commit.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors='backslashreplace')
        except (AttributeError, ValueError):
            pass


# ------------------------------------------------------------------ options

def _options(*decorators):
    """Apply option decorators so that --help lists them in the order given."""
    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


def _db_option(help_text='the database file (env OSTINATO_DB)'):
    return click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs',
                        show_default=True, metavar='PATH', help=help_text)


_accept_option = click.option(
    '--accept-truncation', 'accept_truncation', is_flag=True,
    help='open a database whose end is missing or damaged anyway, going on from its '
         'last good transaction (the cut-off bytes are kept in DB.trN; the work done '
         'after it is done again)')

_memory_option = click.option('--memory', is_flag=True,
                              help='a throw-away database in memory instead')
_db_options = _options(_db_option(), _memory_option)
_json_option = click.option('--json', 'as_json', is_flag=True, help='JSON for programs')

_llm_options = _options(
    click.option('--llm', 'llm', default=None, metavar='BACKEND',
                 type=click.Choice(['auto', 'ollama', 'openai', 'embedded', 'scripted']),
                 help='the model backend: auto, ollama, openai, embedded or scripted '
                      '(env OSTINATO_LLM; default auto: Ollama if it answers, else the '
                      'embedded model)'),
    click.option('--model', 'model', default=None, metavar='NAME',
                 help='the model (env OSTINATO_MODEL; Ollama: llama3.2)'),
    click.option('--llm-server', 'llm_servers', multiple=True, metavar='URL',
                 help='a model server (Ollama, or OpenAI-compatible with --llm openai); '
                      'repeat it to share the requests among several '
                      '(env OSTINATO_LLM_SERVERS, comma-separated)'),
    click.option('--llm-parallel', 'llm_parallel', default=1, show_default=True, metavar='N',
                 type=click.IntRange(1, 64), help='model requests at once, per server'),
)

_telegram_option = click.option(
    '--telegram', is_flag=True,
    help='also talk on Telegram (env TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS, '
         'TELEGRAM_GROUPS, TELEGRAM_API_URL)')

def _turn_limit_option(f):
    def set_limit(ctx, param, value):
        if value is not None:
            from .runtime.scheduler import Scheduler
            Scheduler.TURN_LIMIT = _setting('OSTINATO_TURN_LIMIT', value, ctx, param)
        return value
    return click.option('--turn-limit', type=str, default=None,
                        metavar='SECONDS', expose_value=False, callback=set_limit,
                        envvar='OSTINATO_TURN_LIMIT',
                        help='how long a task may run without waiting before it gets an '
                             'Error (env OSTINATO_TURN_LIMIT)  [default: 30]')(f)


def _setting(name, value, ctx, param):
    """A flag's value for the setting `name`, checked as the variable's is
    (runtime/settings.py); a bad one is one line naming the flag (or the
    variable it came from), exit 2."""
    from .runtime.settings import SettingError, parse
    source = ctx.get_parameter_source(param.name)
    flag = name if source == click.core.ParameterSource.ENVIRONMENT else param.opts[0]
    try:
        return parse(name, value, flag)
    except SettingError as e:
        fail(str(e))


def _finite(ctx, param, value):
    """A float flag must be a finite number: `nan` passes every range check."""
    import math
    if value is not None and not math.isfinite(value):
        fail('%s must be a finite number, not %r' % (param.opts[0], value))
    return value


_log_option = click.option(
    '--log', 'log_path', envvar='OSTINATO_LOG', default=None, metavar='FILE',
    help="the operator's log: reports of failed dialogues (env OSTINATO_LOG; default: "
         "standard error, or DB.log while you chat on the terminal)")


def _telegram_channel(enabled):
    """The Telegram channel when --telegram was given; a configuration
    mistake (no token, a bad allowlist) ends the command with exit 2."""
    if not enabled:
        return []
    from .effects.channels.telegram import TelegramChannel
    from .effects.channels.telegram_api import TelegramConfig, TelegramError
    try:
        return [TelegramChannel(TelegramConfig.from_env())]
    except TelegramError as e:
        fail(str(e))


def _web_option(f):
    return click.option('--web', 'web', default=None, metavar='[HOST:]PORT',
                        help='also serve the web page (chat and inspector) on HOST:PORT; '
                             '--web alone: 127.0.0.1:8765')(f)


class _WebCommand(click.Command):
    """`--web` may stand alone (`serve --web skills/diet.ost`): when the word
    after it is not [HOST:]PORT, it is the default address."""

    def parse_args(self, ctx, args):
        from .effects.web import DEFAULT_ADDRESS, looks_like_address
        args = list(args)
        for i, a in enumerate(args):
            if a == '--':
                break
            if a == '--web' and (i + 1 == len(args) or args[i + 1].startswith('-')
                                 or not looks_like_address(args[i + 1])):
                args[i] = '--web=' + DEFAULT_ADDRESS
        return super().parse_args(ctx, args)


def _web_channel(address):
    """The web channel when --web was given; an address that cannot be
    listened on ends the command with exit 2."""
    if address is None:
        return []
    from .effects.web import WebChannel, WebError
    try:
        return [WebChannel(address)]
    except WebError as e:
        fail(str(e))


# ------------------------------------------------------------------ signals

def _stop_on_signals():
    """Ctrl-C or SIGTERM stops the run between two turns, after the services
    have finished what is in flight (a model reply on its way is waited for
    and kept); it says so at once.  A second one stops at once: the turn in
    progress is not committed, so even that leaves the database consistent."""
    import signal
    from .runtime.scheduler import interrupt, request_stop

    def stop(signum, frame):
        if not request_stop():
            interrupt()
            return
        again = 'Ctrl-C' if signum == signal.SIGINT else 'the signal'
        # os.write, not sys.stderr: the signal may interrupt a write to it.
        _say('ostinato: stopping after this step (%s again to stop now)' % again)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)


def _say(text):
    """One line on stderr from a signal handler; on a terminal it replaces
    what the line showed (the `^C`, a prompt, the model spinner)."""
    from .runtime.terminal import isatty
    lead = '\r\x1b[K' if isatty(sys.stderr) else ''
    try:
        os.write(2, (lead + text + '\n').encode('utf-8', 'replace'))
    except OSError:
        pass


def _exit(status, services):
    """Exit with `status`.  A model request still in flight (a stop that did
    not wait for it) holds a worker thread that Python would wait for at
    exit; the database is closed and the request stays in its queue, so the
    process ends without waiting."""
    if any(getattr(s, 'inflight', None) for s in services):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


# ------------------------------------------------------------------ the model

def _llm_choice(llm, servers):
    """The backend (flag, else OSTINATO_LLM, else auto) and the server list."""
    servers = [u for u in servers if u.strip()] or \
        [u for u in os.environ.get('OSTINATO_LLM_SERVERS', '').replace(',', ' ').split()]
    backend = (llm or os.environ.get('OSTINATO_LLM') or 'auto').strip().lower()
    if servers and backend not in ('auto', 'ollama', 'openai'):
        fail('--llm-server is for the ollama and openai backends, not %s' % backend)
    return backend, servers


def _llm_config(llm, model, url=None):
    from .effects.llm import LLMConfig
    from .effects.llm.config import parse_ollama_host
    config = LLMConfig.from_env(backend=llm, model=model)
    if url is not None:
        if config.backend == 'openai':
            config.openai_url = url
        else:
            config.ollama_host = parse_ollama_host(url)
    return config


def _check_model(llm, model, servers, waits):
    """Check the chosen backend before anything runs: a mistake is one line
    and exit 2.  A server that does not answer: with `waits` (serve, or run
    with a person at the terminal) say so once and go on, the questions
    wait for it; else (run in a script) that is an error too."""
    from .effects.llm import LLMError
    from .effects.llm.check import check
    backend, servers = _llm_choice(llm, servers)
    try:
        for url in servers or [None]:
            note = check(_llm_config(backend, model, url))
            if note is None:
                continue
            if not waits:
                fail(note)
            click.echo('ostinato: %s; the questions for the model wait until it answers%s'
                       % (note, ' (Ctrl-C to stop)' if sys.stdin.isatty() else ''), err=True)
    except LLMError as e:
        fail(str(e)[len('llm: '):] if str(e).startswith('llm: ') else str(e))
    return backend, servers


def _llm_service(backend, model, parallel, worker, spinner=False, servers=()):
    """The LLM worker; the backend is resolved when the first request comes.
    With several servers each gets `parallel` requests at a time."""
    from .effects.llm import LLMClient
    from .effects.llm.queue import LLMService

    def maker(url=None):
        return lambda: LLMClient(_llm_config(backend, model, url))
    makers = [maker(u.strip()) for u in servers] or [maker()]
    return LLMService(makers, parallel, worker=worker, spinner=spinner)


def _operator_log(log_path, db, memory, console, world):
    """Where `run` puts the reports of failed dialogues: --log FILE; else,
    while a person chats on this terminal, DB.log beside the database (the
    chat shows only the bot's friendly words and a pointer there); else
    standard error, as the language reports uncaught errors."""
    from .runtime.oplog import OperatorLog
    from .runtime.terminal import isatty
    if log_path:
        return OperatorLog(path=log_path)       # checked before the database was opened
    if console.terminal and isatty(sys.stderr):
        from .effects.channels.chat import channels_module
        base = 'ostinato' if memory or _shared(db) else os.path.splitext(db)[0]
        return OperatorLog(path=_log_file(base + '.log'), notice=sys.stderr,
                           active=lambda: channels_module(world) is not None)
    return None


def _log_file(path):
    """The operator's log file, checked before it is used: one line and
    exit 2 for a symlink or what is no file, a warning for loose modes."""
    from .runtime.oplog import check_log_file
    from .runtime.store import StoreError
    try:
        check_log_file(path)
    except StoreError as e:
        fail(str(e))
    return path


# ------------------------------------------------------------------ run

@main.command(cls=_WebCommand, epilog=_examples(
    'ostinato run skills/diet.ost                       # chat on the console',
    'ostinato run --llm ollama --model llama3.2 --db diet.fs skills/diet.ost'))
@click.argument('file', type=click.Path(dir_okay=True))
@_db_options
@_accept_option
@_llm_options
@_telegram_option
@_log_option
@_turn_limit_option
@_web_option
def run(file, db, memory, accept_truncation, llm, model, llm_servers, llm_parallel, telegram,
        log_path, web):
    """Run FILE until nothing can run any more.

    A skill that serves dialogues talks on the console (and on Telegram
    with --telegram).  Stop at any point (Ctrl-D, Ctrl-C, even kill -9): the
    same command again continues every task where it stopped."""
    from .effects.channels.console import ConsoleChannel
    from .runtime.runner import run_file
    from .runtime.scheduler import ServiceStopped
    from .runtime.store import Store, StoreError, StoreFailed
    _source_file(file)
    if log_path:
        _log_file(log_path)
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    backend, servers = _check_model(llm, model, llm_servers, waits=terminal)
    channels = _telegram_channel(telegram) + _web_channel(web)
    try:
        store = Store(db, memory=memory, accept_truncation=accept_truncation)
    except StoreError as e:
        fail(str(e))
    # A spinner while the model thinks, only for a person at a terminal.
    service = _llm_service(backend, model, llm_parallel, 'run',
                           spinner=sys.stdout.isatty() and sys.stderr.isatty(),
                           servers=servers)
    console = ConsoleChannel()
    oplog = _operator_log(log_path, db, memory, console, store.world)
    services = [service, console] + channels
    _stop_on_signals()
    try:
        status = run_file(file, sys.stdout, sys.stderr, store=store, services=services,
                          oplog=oplog)
    except KeyboardInterrupt:
        status = 130
    except ServiceStopped as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_UNAVAILABLE
    except StoreFailed as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_IOERR
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
        if oplog is not None:
            oplog.close()
    _exit(status, services)


# ------------------------------------------------------------------ serve

@main.command(cls=_WebCommand, epilog=_examples(
    'ostinato serve --telegram --db diet.fs skills/diet.ost',
    'ostinato serve --db zeo:/tmp/zeo.sock --worker w2    # a second worker'))
@click.argument('file', required=False, type=click.Path(dir_okay=True))
@_options(
    _db_option('the database file, or a shared ZEO server: zeo://HOST:PORT or zeo:SOCKET '
               '(env OSTINATO_DB)'),
    click.option('--memory', is_flag=True,
                 help='a throw-away database in memory (nothing is kept, and repl and tasks '
                      'cannot attach)'),
    click.option('--worker', default='main', show_default=True, metavar='NAME',
                 help="this worker's name, when several serve one database"),
    _accept_option)
@_llm_options
@_telegram_option
@_log_option
@_turn_limit_option
@_web_option
def serve(file, db, memory, worker, accept_truncation, llm, model, llm_servers, llm_parallel,
          telegram, log_path, web):
    """Run every task in the database until stopped, and share the live
    database with `ostinato repl` and `ostinato tasks` (a local socket).

    With FILE, load it first as `ostinato run` does.  Users reach the skills
    through a chat channel: --telegram here, or the channel of another
    worker on the same database.  Ctrl-C or SIGTERM stops between two steps;
    a second one stops at once.  Either way nothing is lost."""
    from .runtime.oplog import OperatorLog
    from .runtime.scheduler import ServiceStopped
    from .runtime.serve import Server
    from .runtime.store import StoreError, StoreFailed
    from .syntax import OstSyntaxError
    if file:
        _source_file(file)
    backend, servers = _check_model(llm, model, llm_servers, waits=True)
    channels = _telegram_channel(telegram) + _web_channel(web)
    oplog = OperatorLog(path=_log_file(log_path)) if log_path else OperatorLog(stream=sys.stderr)
    try:
        server = Server(db, worker=worker, memory=memory, accept_truncation=accept_truncation,
                        services=[_llm_service(backend, model, llm_parallel, worker,
                                               servers=servers)] + channels)
    except StoreError as e:
        fail(str(e))
    server.sched.oplog = oplog
    if server.lease is not None:
        # Workers on PostgreSQL: one of them polls the bot at a time.
        from .effects.channels.telegram import TelegramChannel
        for channel in channels:
            if isinstance(channel, TelegramChannel):
                channel.gate = server.gate('telegram')
    _stop_on_signals()
    status = 0
    where = 'memory' if memory else db
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
            click.echo('ostinato: worker %s serving %s' % (worker, _shown(where)), err=True)
        if not channels:
            click.echo('ostinato: no chat channel in this process (add --telegram or --web): users reach '
                       'the skills only through another worker\'s channel', err=True)
        server.serve()
    except KeyboardInterrupt:
        from .runtime.runner import stopped_now
        sys.stderr.write(stopped_now(server.sched) + '\n')
        server.sched.abort()
    except ServiceStopped as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_UNAVAILABLE
    except StoreFailed as e:
        sys.stderr.write('ostinato: %s\n' % e)
        status = EXIT_IOERR
    else:
        sys.stderr.write('ostinato: stopped; the tasks wait in %s\n' % where)
    finally:
        server.sched.flush()
        server.close()
        oplog.close()
    _exit(status, server.services)


# ------------------------------------------------------------------ repl

@main.command(epilog=_examples(
    'ostinato repl --db diet.fs',
    "echo 'import channels; print(length(channels.threads))' | ostinato repl"))
@_db_options
@_accept_option
def repl(db, memory, accept_truncation):
    """An interactive prompt on the live database (attached to `serve`).

    Every module is there; what a statement changes is committed.  Ctrl-C
    stops a running statement and rolls it back.  Input piped in runs as a
    script: its exit status is 65 after a syntax error, 70 after an error."""
    from .repl import Repl
    from .runtime.serve import attach, live_socket
    from .runtime.store import StoreError
    try:
        store = attach(db, memory, accept_truncation=accept_truncation)
    except StoreError as e:
        fail(str(e))
    standalone = memory or not (_shared(db) or live_socket(db))
    # Ctrl-C stops a running statement, but never in the middle of a commit.
    import signal
    from .runtime.scheduler import interrupt
    signal.signal(signal.SIGINT, lambda signum, frame: interrupt())
    try:
        if sys.stdin.isatty():
            click.echo('Ostinato %s on %s -- :help for help' % (
                __import__('ostinato').__version__, 'memory' if memory else _shown(db)))
        status = Repl(store, standalone=standalone).loop()
    finally:
        store.close()
    # A script piped in fails like a script; a person's session ends well.
    sys.exit(0 if sys.stdin.isatty() else status)


# ------------------------------------------------------------------ looking at a database

def _shared(db):
    """Whether `db` names a database server (ZEO, PostgreSQL) rather than a
    file: no socket of a serve process, no file beside it."""
    from .runtime.pg import is_postgres
    return db.startswith('zeo:') or is_postgres(db)


def _shown(db):
    """`db` as it may be printed (a PostgreSQL address without its password)."""
    from .runtime.pg import shown
    return shown(db)


def _existing_address(db):
    """Where to reach the database `db` that must exist already: the socket of
    a running `serve`, else the file.  Exits 2 when there is neither."""
    from .runtime.serve import live_socket
    if _shared(db):
        return db
    sock = live_socket(db)
    if sock is not None:
        return 'zeo:' + sock
    if not os.path.exists(db):
        fail('no database at %s (give --db PATH or set OSTINATO_DB)' % db)
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
        fail('%s holds no Ostinato world yet' % _shown(db))
    except StoreError as e:
        if storage is not None:
            storage.close()
        fail(str(e))
    except Exception as e:
        fail('cannot open the database %s: %s' % (_shown(db), e))
    except BaseException:           # DamagedDatabase: reported by Commands
        if storage is not None:
            storage.close()
        raise


def _echo_json(value):
    import json
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


@main.command(epilog=_examples(
    'ostinato tasks --db diet.fs 7 --json',
    'ostinato tasks cancel 7 --db diet.fs      # or: tasks retry 7 (a parked task)'))
@click.argument('words', metavar='[cancel|retry] [ID]', nargs=-1)
@_db_options
@_json_option
@_accept_option
def tasks(words, db, memory, as_json, accept_truncation):
    """Every live task: state, what it waits for and since when, its goal
    stack, and whether it runs old code.  With ID: that task's frames.

    `tasks cancel ID` ends a task: where it waits or runs it gets an Error
    "cancelled by the operator" (which it may catch), and whoever waits for
    it wakes when it ends.  `tasks retry ID` runs a parked task (one the
    runtime stopped: state failed, e.g. past the turn limit) again from its
    last commit.  Both work on the live database of a running serve."""
    from .runtime import report
    _wait_words()
    action, task_id = _task_words(words)
    if action is not None:
        _act_on_task(action, task_id, db, memory, accept_truncation)
        return
    store = _open_for_reading(db, memory)
    try:
        try:
            if task_id is None:
                value = [report.task_data(t, store.world) for t in report.live_tasks(store.world)] \
                    if as_json else report.tasks_text(store.world)
            else:
                value = report.task_detail_data(store.world, task_id) if as_json \
                    else report.task_text(store.world, task_id)
        except report.NoSuchTask as e:
            fail('%s in %s' % (e, 'memory' if memory else _shown(db)))
    finally:
        store.close()
    if as_json:
        _echo_json(value)
    else:
        click.echo(value)


def _wait_words():
    """The effects that say in words what a task waits for (a user's
    reply, the model) register with runtime/report.py when imported."""
    from .effects.channels import chat  # noqa: F401
    from .effects.llm import queue  # noqa: F401


def _task_words(words):
    """(action or None, task id or None) from `tasks`'s words."""
    words = list(words)
    action = None
    if words and words[0] in ('cancel', 'retry'):
        action = words.pop(0)
    if len(words) > 1 or (words and not words[0].isdigit()) or (action and not words):
        fail('usage: ostinato tasks [ID] | tasks cancel ID | tasks retry ID (got: %s)'
             % ' '.join(['tasks'] + ([action] if action else []) + words))
    return action, int(words[0]) if words else None


def _act_on_task(action, task_id, db, memory, accept_truncation=False):
    from .runtime import report
    from .runtime.control import act
    from .runtime.scheduler import Scheduler
    from .runtime.serve import attach, live_socket
    from .runtime.store import StoreError
    if not memory and not _shared(db):
        _existing_address(db)
    try:
        store = attach(db, memory, accept_truncation=accept_truncation)
    except StoreError as e:
        fail(str(e))
    try:
        ok, text = act(store, Scheduler(store.world), task_id, action)
    except report.NoSuchTask as e:
        fail('%s in %s' % (e, 'memory' if memory else _shown(db)))
    finally:
        store.close()
    if not ok:
        fail(text)
    click.echo(text)
    if not memory and not _shared(db) and live_socket(db) is None:
        click.echo('(no serve runs on %s: it happens when `ostinato run` or `serve` next '
                   'starts on it)' % db)


@main.command('log', epilog=_examples(
    'ostinato log --db diet.fs --last 3',
    'ostinato log --db diet.fs --task 7 --json'))
@click.option('--task', 'task_id', type=int, default=None, metavar='ID',
              help="only this task's exchanges")
@click.option('--last', type=click.IntRange(1), default=None, metavar='N',
              help='only the last N exchanges')
@_db_options
@click.option('--json', 'as_json', is_flag=True, help='one JSON object per line')
def log_command(task_id, last, db, memory, as_json):
    """The model exchanges: prompt, reply, model, timings, task and goal
    stack; for a request the model failed, what it said at every attempt."""
    import json as _json
    from .effects.llm.queue import log_entries, log_text
    store = _open_for_reading(db, memory)
    try:
        world = store.world
        entries = log_entries(world, task_id, last)
        if task_id is not None and not entries and task_id not in world.tasks \
                and not 0 < task_id < world.next_task_id:
            fail('no task with id %s in %s' % (task_id, 'memory' if memory else _shown(db)))
        if as_json:
            for e in entries:
                click.echo(_json.dumps(e.as_dict(), ensure_ascii=False))
        elif entries:
            click.echo(log_text(entries))
        else:
            click.echo('no LLM exchanges' + (' of task %d' % task_id if task_id else ''))
    finally:
        store.close()


@main.group('db', cls=Commands)
def db_group():
    """Storage upkeep and figures."""


@db_group.command('info', epilog=_examples('ostinato db info --db diet.fs',
                                           'ostinato db info --db diet.fs --json'))
@_db_options
@_json_option
def db_info(db, memory, as_json):
    """Storage figures: path, size, objects, transactions, schema, tasks.

    Also the tasks by state, the modules (and whether their files changed
    since they were loaded), timers and watches."""
    from .runtime import report
    store = _open_for_reading(db, memory)
    try:
        where = 'memory' if memory else _shown(db)
        if not memory and store.address != db:
            where = '%s (live, through %s)' % (db, store.address)
        if as_json:
            value = report.db_data(store.world, store.storage, where)
        else:
            text = report.db_report(store.world, store.storage, where)
    finally:
        store.close()
    if as_json:
        _echo_json(value)
    else:
        click.echo(text, nl=False)


@db_group.command('check', epilog=_examples('ostinato db check --db diet.fs',
                                            'ostinato db check --db diet.fs --repair'))
@click.option('--repair', is_flag=True,
              help='queue orphaned tasks again and drop entries of ended tasks')
@_db_options
@_accept_option
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
            fail(str(e))
    else:
        store = _open_for_reading(db, memory)
    try:
        damaged = _damaged_records(store, db)
        problems = invariants.check(store.world)
        for _, _, text in problems:
            click.echo(text)
        if problems and repair and not damaged:
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
    if damaged:
        sys.exit(EXIT_DAMAGED)
    if not problems:
        click.echo('ok: %d live task%s, each ready, running or waiting'
                   % (live, '' if live == 1 else 's'))
    sys.exit(1 if problems else 0)


def _damaged_records(store, db, limit=20):
    """`db check` also reads the header of every object's current record: one
    that is damaged is what a later load trips over.  Each problem is one
    line on stderr; returns how many."""
    from .runtime.filestore import WHAT_TO_DO
    check = getattr(store.storage, 'current_record_problems', None)
    found = check() if check is not None else []
    for text in found[:limit]:
        click.echo('ostinato: the database %s is damaged: %s' % (db, text), err=True)
    if len(found) > limit:
        click.echo('ostinato: ... and %d more' % (len(found) - limit), err=True)
    if found:
        click.echo('ostinato: %s' % WHAT_TO_DO.format(path=db), err=True)
    return len(found)


@db_group.command('pack', epilog=_examples('ostinato db pack --db diet.fs',
                                           'ostinato db pack --db diet.fs --days 7'))
@click.option('--days', type=click.FloatRange(min=0, max=1e6), default=0, show_default=True,
              metavar='N', callback=_finite, help='keep the revisions of the last N days')
@_db_options
@_accept_option
def db_pack(days, db, memory, accept_truncation):
    """Prune ended tasks, then drop old revisions and unreachable objects.

    The file as it was before is kept as DB.old (FileStorage's safety copy
    of a pack); delete it once you no longer need it."""
    from .runtime import report
    from .runtime.store import Store, StoreError
    address = db if memory else _existing_address(db)
    try:
        store = Store(address, memory=memory, accept_truncation=accept_truncation)
    except StoreError as e:
        fail(str(e))
    local = not memory and not _shared(address)
    try:
        def size():
            return os.path.getsize(db) if local else store.storage.getSize()
        before = size()
        pruned = report.prune_ended(store.world)
        if pruned:
            store.commit('ostinato: prune %d ended task%s' % (pruned, '' if pruned == 1 else 's'))
        store.pack(days=days)
        after = size()
    finally:
        store.close()
    if pruned:
        click.echo('pruned %d ended task%s' % (pruned, '' if pruned == 1 else 's'))
    click.echo('packed %s: %s -> %s' % ('memory' if memory else _shown(db), report.human_size(before),
                                         report.human_size(after)))
    if local and os.path.exists(db + '.old'):
        click.echo('the file as it was is kept as %s.old (with the old revisions the pack '
                   'dropped, only there now); delete it when you no longer need them' % db)


@db_group.command('copy', epilog=_examples(
    'ostinato db copy diet.fs postgresql://ostinato@db.example/diet',
    'ostinato db copy postgresql:///diet backup.fs'))
@click.argument('source')
@click.argument('destination')
def db_copy(source, destination):
    """Copy the database SOURCE into DESTINATION, which must be new or
    empty: each a file, zeo://HOST:PORT, zeo:SOCKET or postgresql://....

    Stop every worker on SOURCE first (a file served by `serve` is refused
    while it runs); the copy is checked as it is read."""
    from .runtime.dbcopy import copy
    from .runtime.serve import live_socket
    from .runtime.store import StoreError, open_storage
    if not _shared(source):
        _existing_address(source)
        if live_socket(source):
            fail('%s is served by a running `ostinato serve`: stop it first' % source)
    if not _shared(destination) and os.path.exists(destination) \
            and os.path.getsize(destination) > 4:
        fail('%s exists already: db copy only fills a new database' % destination)
    try:
        src = open_storage(source, read_only=True)
    except StoreError as e:
        fail(str(e))
    try:
        try:
            dst = open_storage(destination)
        except StoreError as e:
            fail(str(e))
        try:
            transactions, records = copy(src, dst)
        except StoreError as e:
            fail(str(e))
        except Exception as e:        # a record the source or the destination refused
            fail('the copy stopped: %s: %s; the destination is incomplete: empty it (or '
                 'remove the file) before copying again'
                 % (type(e).__name__, ' '.join(str(e).split())[:300]))
        finally:
            dst.close()
    finally:
        src.close()
    click.echo('copied %s to %s: %d transaction%s, %d record%s'
               % (_shown(source), _shown(destination), transactions,
                  '' if transactions == 1 else 's', records, '' if records == 1 else 's'))


@db_group.command('verify', epilog=_examples('ostinato db verify --db diet.fs'))
@_db_option()
def db_verify(db):
    """Read every record of the database file: exit 0 if no damage is
    found, 74 otherwise.

    Checks its end (as every open does), every transaction and data record
    header, the checksum of every record, and every current object, loaded,
    unpickled and with its references resolved.  It only reads, so it may
    run while `serve` or `run` use the file."""
    from .runtime.filestore import verify
    from .runtime.store import StoreError
    if _shared(db) and not db.startswith('zeo:'):
        from .runtime.store import Store, StoreError
        from .runtime.verify import verify_objects
        try:
            store = Store(db)
        except StoreError as e:
            fail(str(e))
        try:
            problems = verify_objects(store, _shown(db), sys.stdout)
        finally:
            store.close()
        sys.exit(EXIT_DAMAGED if problems else 0)
    if db.startswith('zeo:'):
        fail('db verify reads a database file: give --db the path of the file the ZEO '
             'server serves')
    try:
        problems = verify(db, sys.stdout)
    except StoreError as e:
        fail(str(e))
    sys.exit(EXIT_DAMAGED if problems else 0)


# ------------------------------------------------------------------ web

@main.group('web')
def web_group():
    """Who may use the web page of `serve --web`."""


def _web_store(db):
    """The database for `ostinato web`: through the socket of a running
    `serve` when there is one, else the file.  Exits 2 on failure."""
    from .runtime.serve import attach
    from .runtime.store import StoreError
    try:
        return attach(db)
    except StoreError as e:
        fail(str(e))


def _web_change(db, change, create=True):
    """Run change(state) in a transaction (state None when the page never
    ran and not `create`); a WebError exits 2."""
    from .effects.web import WebError, web_state
    if not create:
        _existing_address(db)
    store = _web_store(db)
    try:
        return store.transact(lambda: change(web_state(store.world, create)))
    except WebError as e:
        fail(str(e))
    finally:
        store.close()


@web_group.command('invite')
@click.argument('name')
@click.option('--url', default=None, metavar='URL',
              help='the page\'s address, for the link (default: where --web last served it)')
@click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs', show_default=True,
              help='database file (env OSTINATO_DB)')
def web_invite(name, url, db):
    """Print a personal link for NAME to the web page (a new one each time:
    NAME's previous link stops working)."""
    from .effects.web.state import new_link

    def invite(st):
        return new_link(st, name), st.base_url
    token, base = _web_change(db, invite)
    base = (url or base or 'http://127.0.0.1:8765').rstrip('/')
    click.echo('%s/login?token=%s' % (base, token))


@web_group.command('revoke')
@click.argument('name')
@click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs', show_default=True,
              help='database file (env OSTINATO_DB)')
def web_revoke(name, db):
    """NAME's link and signed-in browsers stop working."""
    from .effects.web.state import revoke
    n = _web_change(db, lambda st: revoke(st, name), create=False)
    click.echo('revoked %s (%d session%s ended)' % (name, n, '' if n == 1 else 's'))


@web_group.command('users')
@click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs', show_default=True,
              help='database file (env OSTINATO_DB)')
def web_users(db):
    """The web page's users: link, sessions, conversations."""
    def users(st):
        if st is None:
            return []
        sessions = {}
        for who, _ in st.sessions.values():
            sessions[who] = sessions.get(who, 0) + 1
        return [(u.name, u.name == st.owner, u.link is not None, sessions.get(u.name, 0),
                 u.threads) for u in st.users.values()]
    rows = _web_change(db, users, create=False)
    if not rows:
        click.echo('no web users yet (serve --web makes the owner; web invite NAME adds one)')
    for name, owner, link, n, threads in rows:
        click.echo('%s%s  link %s  %d session%s  %d conversation%s' % (
            name, ' (owner)' if owner else '', 'valid' if link else 'revoked', n,
            '' if n == 1 else 's', threads, '' if threads == 1 else 's'))


# ------------------------------------------------------------------ source files

@main.command(epilog=_examples('ostinato check skills/*.ost',
                               'ostinato check evals/diet.toml     # a case file: as eval --check'))
@click.argument('files', nargs=-1, required=True, type=click.Path(dir_okay=True),
                metavar='FILE...')
def check(files):
    """Parse and compile FILES; report syntax errors and names bound nowhere.
    A .toml file is an eval's case file: it is checked as `ostinato eval
    --check` checks it."""
    from .compiler.check import check_file
    from .vm.interp import VM  # noqa: F401 -- registers every built-in
    from .vm.values import BUILTINS
    status = 0
    for f in files:
        if f.lower().endswith('.toml') and not os.path.isdir(f):
            # Read as Ostinato, a case file is a wall of syntax errors.
            from .eval.runner import check_command
            status = max(status, check_command([f]))
            continue
        problem = _not_a_program(f)
        if problem is not None:
            click.echo('ostinato: %s' % problem, err=True)
            status = max(status, EXIT_USAGE)
            continue
        status = max(status, check_file(f, sys.stdout, sys.stderr, BUILTINS))
    sys.exit(status)


@main.command(epilog=_examples('ostinato dis skills/diet.ost',
                               'ostinato dis examples/demo.ost | less'))
@click.argument('file', type=click.Path(dir_okay=True))
def dis(file):
    """Show the compiled instructions of FILE (for debugging)."""
    from .compiler.compiler import compile_module
    from .compiler.dis import disassemble
    from .syntax import OstSyntaxError, parse
    _source_file(file)
    with open(file, 'rb') as fh:
        data = fh.read()
    name = os.path.splitext(os.path.basename(file))[0]
    try:
        tree = parse(data, os.path.basename(file))     # bytes: not UTF-8 is a syntax error
        code = compile_module(tree, data.decode('utf-8'), os.path.basename(file), name)
    except OstSyntaxError as e:
        _syntax_error_exit(e)
    click.echo(disassemble(code))


# ------------------------------------------------------------------ eval

def _fraction(value):
    """--min-pass: 0.6, or a percentage such as 60%."""
    text = str(value).strip()
    try:
        f = float(text[:-1]) / 100 if text.endswith('%') else float(text)
    except ValueError:
        raise click.BadParameter('%r is not a fraction (0.6) or a percentage (60%%)' % value)
    if not 0 <= f <= 1:
        raise click.BadParameter('%r is not between 0 and 1 (or 0%% and 100%%)' % value)
    return f


@main.command('eval')
@click.argument('case_files', nargs=-1, required=True, metavar='CASES.toml...',
                type=click.Path(dir_okay=False))
@_llm_options
@click.option('--runs', type=click.IntRange(1), default=None,
              help="runs per case (default: the case file's `runs`)")
@click.option('--jobs', type=click.IntRange(1, 256), default=1, show_default=True,
              help='dialogues at once; they share the model through its queue')
@click.option('--json', 'json_path', type=click.Path(dir_okay=False), default=None,
              help='also write every result to this JSON file')
@click.option('--markdown', 'markdown_path', type=click.Path(dir_okay=False), default=None,
              help='write the results as Markdown into this file (between its '
                   'ostinato-eval markers if it has them)')
@click.option('--min-pass', 'min_pass', default='0', metavar='F',
              help='exit 1 when the pass rate is below F (0.6, or 60%)')
@click.option('--only', multiple=True, metavar='NAME',
              help='only the cases whose name contains NAME (repeatable)')
@click.option('--work', default='.ostinato-eval', show_default=True, envvar='OSTINATO_EVAL_DIR',
              help='where the databases, results and transcripts go (env OSTINATO_EVAL_DIR)')
@click.option('--check', 'check_only', is_flag=True,
              help='only check the case files and compile their skills; run nothing '
                   '(exit 65 on a mistake)')
def eval_command(case_files, llm, model, llm_parallel, llm_servers, runs, jobs, json_path,
                 markdown_path, min_pass, only, work, check_only):
    """Run a skill against the simulated users of CASES.toml and score it.

    Each run is a real dialogue on the runtime with the chosen model, on a
    virtual clock.  An interrupted eval goes on when the same command runs
    again.  With --check, the case files are only checked."""
    from .eval.runner import EXIT_RUNTIME as _EXIT, Options, check_command, run_command
    if check_only:
        sys.exit(check_command(case_files))
    try:
        threshold = _fraction(min_pass)
    except click.BadParameter as e:
        raise click.UsageError('--min-pass: %s' % e.message)
    options = Options(runs=runs, jobs=jobs, json_path=json_path, markdown_path=markdown_path,
                      min_pass=threshold, only=list(only), work=work)
    identity = {
        'llm': llm or os.environ.get('OSTINATO_LLM') or 'auto',
        'model': model or os.environ.get('OSTINATO_MODEL'),
        'script': os.environ.get('OSTINATO_LLM_SCRIPT'),
    }
    _stop_on_signals()
    try:
        status = run_command(case_files, options,
                             lambda: _llm_service(llm, model, llm_parallel, 'eval',
                                                  servers=llm_servers),
                             identity)
    except Exception:
        sys.stderr.write('ostinato: internal error (please report it):\n')
        traceback.print_exc()
        status = _EXIT
    sys.exit(status)


# ------------------------------------------------------------------ new, doctor, completion

@main.group('new', cls=Commands)
def new_group():
    """Start something new from a template."""


@new_group.command('skill', epilog=_examples('ostinato new skill pets',
                                             'ostinato new skill pets --dir skills'))
@click.argument('name')
@click.option('--dir', 'folder', default='.', show_default=True, metavar='DIR',
              help='where to write the files')
def new_skill(name, folder):
    """Write NAME.ost, a starter skill (a goal blurb, one question to the
    model, serve), and NAME.toml, eval cases for it."""
    from .scaffold import ScaffoldError, new_skill as make
    try:
        skill, cases = make(name, folder)
    except ScaffoldError as e:
        fail(str(e))
    except OSError as e:
        fail('cannot write into %s: %s' % (folder, e.strerror or e))
    click.echo('wrote %s (the skill) and %s (its eval cases)' % (skill, cases))
    click.echo('talk to it:   ostinato run %s' % skill)
    click.echo('measure it:   ostinato eval %s' % cases)


@main.command(epilog=_examples('ostinato doctor', 'ostinato doctor --llm ollama --json'))
@_db_option()
@click.option('--llm', 'llm', default=None, metavar='BACKEND',
              help='the backend to check as the chosen one (env OSTINATO_LLM)')
@click.option('--model', 'model', default=None, metavar='NAME',
              help='the model to look for (env OSTINATO_MODEL)')
@_json_option
def doctor(db, llm, model, as_json):
    """What this machine and configuration give Ostinato, one line each:
    Python, the database (size, schema, who holds it), every model backend
    (does it answer? which models? the embedded extra and the CPU features
    llama.cpp uses), Telegram.  Exit 1 when something needed fails."""
    from . import doctor as d
    from .runtime.terminal import colour_on
    findings = d.run_checks(db, llm, model)
    if as_json:
        click.echo(d.as_json(findings))
    else:
        click.echo(d.as_text(findings, colour=colour_on(sys.stdout)))
    sys.exit(1 if any(f.status == 'fail' for f in findings) else 0)


@main.command(epilog=_examples('eval "$(ostinato completion bash)"     # in ~/.bashrc',
                               'ostinato completion fish > ~/.config/fish/completions/'
                               'ostinato.fish'))
@click.argument('shell', type=click.Choice(['bash', 'zsh', 'fish']))
def completion(shell):
    """Print the shell completion script for SHELL (bash, zsh or fish)."""
    from click.shell_completion import get_completion_class
    cls = get_completion_class(shell)
    click.echo(cls(main, {}, 'ostinato', '_OSTINATO_COMPLETE').source())
