"""The `ostinato` command.

Exit codes (DESIGN.md §7): 0 done, 65 syntax or compile error, 70 uncaught
runtime error in the main task (or an internal error), 2 bad usage.
"""
from __future__ import annotations

import os
import sys
import traceback

import click

EXIT_SYNTAX = 65
EXIT_RUNTIME = 70


def _syntax_error_exit(e):
    """Report a syntax error (message, source line, caret) and exit 65."""
    sys.stderr.write(e.format() + '\n')
    sys.exit(EXIT_SYNTAX)


def _quiet_storage_logs():
    # FileStorage warns on stderr when it rebuilds its index after a crash;
    # that is expected after `kill -9` and not the user's business.
    import logging
    logging.getLogger('ZODB.FileStorage').setLevel(logging.ERROR)


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


@main.command()
@click.argument('file', type=click.Path(dir_okay=False))
@_db_options
def run(file, db, memory):
    """Run FILE until nothing can run any more.

    Running it again on the same database resumes every suspended task."""
    from .runtime.runner import run_file
    from .runtime.store import Store, StoreError
    if not os.path.isfile(file):
        click.echo('ostinato: no such file: %s' % file, err=True)
        sys.exit(2)
    try:
        store = Store(db, memory=memory)
    except StoreError as e:
        click.echo('ostinato: %s' % e, err=True)
        sys.exit(2)
    try:
        status = run_file(file, sys.stdout, sys.stderr, store=store)
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        # The reader of our output went away (`ostinato run x | head`).
        sys.stderr.close()
        status = 0
    except Exception:
        sys.stderr.write('ostinato: internal error (please report it):\n')
        traceback.print_exc()
        status = EXIT_RUNTIME
    finally:
        store.close()
    sys.exit(status)


@main.command()
@click.argument('files', nargs=-1, required=True, type=click.Path(dir_okay=False))
def check(files):
    """Parse and compile FILES; report syntax errors and warnings."""
    from .compiler.check import check_file
    status = 0
    for f in files:
        status = max(status, check_file(f, sys.stdout, sys.stderr))
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
