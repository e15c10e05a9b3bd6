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
    sys.stderr.write(e.format() + '\n')
    sys.exit(EXIT_SYNTAX)


@click.group(context_settings={'help_option_names': ['-h', '--help']})
@click.version_option(package_name='ostinato')
def main():
    """Ostinato: skills are durable programs; the model is a leaf."""


def _db_options(f):
    f = click.option('--db', 'db', envvar='OSTINATO_DB', default='ostinato.fs',
                     show_default=True, help='database file (env OSTINATO_DB)')(f)
    f = click.option('--memory', is_flag=True, help='use a throw-away in-memory database')(f)
    return f


@main.command()
@click.argument('file', type=click.Path(dir_okay=False))
@_db_options
def run(file, db, memory):
    """Run FILE until nothing can run any more."""
    from .runtime.scheduler import Scheduler
    from .syntax import OstSyntaxError
    if not os.path.isfile(file):
        click.echo('ostinato: no such file: %s' % file, err=True)
        sys.exit(2)
    sched = Scheduler()
    try:
        main_task = sched.start_main(os.path.abspath(file))
    except OstSyntaxError as e:
        _syntax_error_exit(e)
    except UnicodeDecodeError as e:
        click.echo('%s: error: the file is not UTF-8 text (%s)' % (file, e.reason), err=True)
        sys.exit(EXIT_SYNTAX)
    try:
        sched.run()
    except KeyboardInterrupt:
        sched.flush()
        sys.exit(130)
    except Exception:
        sched.flush()
        sys.stderr.write('ostinato: internal error (please report it):\n')
        traceback.print_exc()
        sys.exit(EXIT_RUNTIME)
    sched.flush()
    if main_task.state == 'failed':
        sys.exit(EXIT_RUNTIME)
    sys.exit(0)


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
