"""`ostinato eval`: run case files against a model and score the dialogues.

For each case file: a fresh database in the eval's work directory, the
skill loaded as `ostinato run` loads it (its `serve(...)` starts the
router), the LLM worker of the chosen backend, and the simulated users
(dialogue.Simulation) -- then the scheduler runs until every run of the
file has ended.  Each ended run is scored there and then: its expectations
are evaluated on the database's state, its transcript written, its result
recorded (workdir.WorkDir).  At the end the report (report.py) shows the
table, and writes JSON and Markdown when asked.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional

from ..runtime.txn import StoreTransactions
from ..vm import timefmt
from ..vm.values import OList
from .cases import CaseFileError, load_case_files
from .dialogue import FAILING_ENDS, EvalScheduler, Run, Simulation, SkillError, evaluate
from . import report as R
from .workdir import WorkDir, WorkDirError, fingerprint

EXIT_OK, EXIT_BELOW_MIN, EXIT_USAGE, EXIT_DATA, EXIT_RUNTIME, EXIT_INTERRUPTED = 0, 1, 2, 65, 70, 130


@dataclass
class Options:
    runs: Optional[int] = None          # runs per case; None: each case file's
    jobs: int = 1
    json_path: Optional[str] = None
    markdown_path: Optional[str] = None
    min_pass: float = 0.0
    only: List[str] = field(default_factory=list)
    work: str = '.ostinato-eval'


def select(files, only):
    """The cases to run: all, or those whose name contains one of `only`
    (ignoring case)."""
    wanted = [o.lower() for o in only]
    chosen = []
    for cf in files:
        for i, case in enumerate(cf.cases):
            if not wanted or any(w in case.name.lower() for w in wanted):
                chosen.append((cf, i, case))
    return chosen


def check_command(paths, out=None, err=None) -> int:
    """`ostinato eval --check`: read and check the case files and compile
    their skills, running nothing; every mistake on `err` as FILE:LINE:COL,
    a line per valid file on `out`.  Returns 0, or 65 when any is wrong."""
    from ..compiler.check import check_file
    from ..vm.interp import VM  # noqa: F401 -- registers every built-in
    from ..vm.values import BUILTINS
    from .cases import load_case_file
    out = out or sys.stdout
    err = err or sys.stderr
    status = EXIT_OK
    skills = {}
    for path in paths:
        try:
            cf = load_case_file(path)
        except CaseFileError as e:
            err.write('%s\n' % e)
            status = EXIT_DATA
            continue
        if cf.skill not in skills:
            skills[cf.skill] = check_file(cf.skill, out, err, BUILTINS)
        if skills[cf.skill] != 0:
            status = EXIT_DATA
            continue
        out.write('%s: ok: %d case%s of %s\n' % (
            path, len(cf.cases), '' if len(cf.cases) == 1 else 's', R.shown_path(cf.skill)))
    return status


def run_command(paths, options: Options, make_llm_service: Callable, identity: dict,
                out=None, err=None) -> int:
    """The whole command; returns its exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    seen = set()
    for p in paths:
        if os.path.abspath(p) in seen:
            err.write('ostinato eval: the case file %s is given twice\n' % p)
            return EXIT_USAGE
        seen.add(os.path.abspath(p))
    try:
        files = load_case_files(paths)
    except CaseFileError as e:
        err.write('%s\n' % e)
        return EXIT_DATA
    for path in (options.json_path, options.markdown_path):
        # Found out now, not after hours of dialogues.
        where = os.path.dirname(os.path.abspath(path)) if path else None
        if where and not (os.path.isdir(where) and os.access(where, os.W_OK)):
            err.write('ostinato eval: cannot write %s: no such directory, or not writable\n' % path)
            return EXIT_USAGE
    chosen = select(files, options.only)
    if not chosen:
        err.write('ostinato eval: no case name contains %s; the cases are:\n%s\n' % (
            ' or '.join(repr(o) for o in options.only),
            '\n'.join('  %s' % c.name for cf in files for c in cf.cases)))
        return EXIT_USAGE
    plan = []            # (file index, case index, case, run number)
    for cf, ci, case in chosen:
        fi = files.index(cf)
        for n in range(1, (options.runs or case.runs) + 1):
            plan.append((fi, ci, case, n))
    identity = dict(identity, runs=options.runs, only='\n'.join(options.only))
    work = WorkDir(options.work, files, identity, say=lambda m: err.write(m + '\n'))
    try:
        return _run(files, plan, options, make_llm_service, identity, work, out, err)
    except WorkDirError as e:
        err.write('ostinato eval: %s\n' % e)
        return EXIT_USAGE
    finally:
        work.close()


def _run(files, plan, options, make_llm_service, identity, work, out, err):
    done = work.open(fingerprint(files, identity), len(plan))
    finished = {(r['file'], r['case'], r['run']): r for r in done}
    results = list(finished.values())
    if results:
        err.write('ostinato eval: going on with the interrupted eval in %s: %d of %d runs '
                  'had finished\n' % (work.path, len(results), len(plan)))
    progress = R.Progress(err, len(plan), len(results))
    header = R.header_line(files, plan, options, identity)
    out.write(header + '\n')
    out.flush()
    for fi, cf in enumerate(files):
        todo = [(ci, case, n) for (f, ci, case, n) in plan
                if f == fi and (cf.path, case.name, n) not in finished]
        if not todo:
            continue
        try:
            stopped = _run_file(fi, cf, todo, options, make_llm_service, work, results,
                                progress, err)
        except SkillError as e:
            progress.clear()
            err.write('%s: error: %s\n' % (cf.skill, e))
            return EXIT_DATA
        except _SkillSyntax as e:
            progress.clear()
            err.write(str(e) + '\n')
            return EXIT_DATA
        if stopped:
            progress.clear()
            # What finished is worth seeing (and keeping) all the same.
            _report(files, plan, results, options, work, out, err)
            err.write('ostinato eval: interrupted after %d of %d runs; run the same command '
                      'again to go on\n' % (len(results), len(plan)))
            return EXIT_INTERRUPTED
    progress.clear()
    work.complete()
    status, summary = _report(files, plan, results, options, work, out, err)
    if summary['pass_rate'] < options.min_pass:
        err.write('ostinato eval: the pass rate %.1f %% is below --min-pass %.1f %%\n'
                  % (100 * summary['pass_rate'], 100 * options.min_pass))
        status = EXIT_BELOW_MIN
    return status


def _report(files, plan, results, options, work, out, err):
    """The table, and the --json and --markdown files; (status, summary)."""
    status = EXIT_OK
    order = {(files[fi].path, case.name, n): k for k, (fi, ci, case, n) in enumerate(plan)}
    results.sort(key=lambda r: order.get((r['file'], r['case'], r['run']), len(order)))
    summary = R.summarize(files, plan, results, options, work.path)
    out.write(R.table(summary) + '\n')
    out.flush()
    for path, write in ((options.json_path, R.write_json),
                        (options.markdown_path, R.write_markdown)):
        if path:
            try:
                write(summary, path)
            except OSError as e:
                err.write('ostinato eval: cannot write %s: %s\n' % (path, e.strerror or e))
                status = EXIT_USAGE
    return status, summary


class _SkillSyntax(Exception):
    pass


def _run_file(fi, cf, todo, options, make_llm_service, work, results, progress, err):
    """Run the runs `todo` of one case file on a fresh database; returns True
    when the eval was interrupted (Ctrl-C, SIGTERM)."""
    from ..runtime.store import Store
    from ..syntax import OstSyntaxError
    def finish(sched, run, thread):
        result = score(sched, run, thread, work.transcript_path(run, run.case_index))
        work.record(result)
        results.append(result)
        progress.finished(result)

    runs = []
    for ci, case, n in todo:
        runs.append(Run(case, ci, n, 'eval:%d.%d.%d' % (fi + 1, ci + 1, n)))
    sim = Simulation(runs, options.jobs, finish, progress)
    llm = make_llm_service()
    store = Store(work.db_path(fi, cf))
    sched = EvalScheduler(store.world, sim, err)
    sched.txn = StoreTransactions(store)
    sched.services = [llm, sim]
    saved_clock = timefmt.clock
    timefmt.clock = sim.clock
    try:
        try:
            sched.start_main(cf.skill)
        except OstSyntaxError as e:
            raise _SkillSyntax(e.format()) from None
        except UnicodeDecodeError as e:
            raise _SkillSyntax('%s: error: the file is not UTF-8 text (%s)'
                               % (cf.skill, e.reason)) from None
        store.commit()
        try:
            return sched.run() == 'stopped'
        except KeyboardInterrupt:
            return True
    finally:
        timefmt.clock = saved_clock
        sim.restore_zone()
        llm.close()
        store.close()


def score(sched, run, thread, transcript_path):
    """The result of an ended run: its expectations evaluated on the state
    the dialogue left, its figures, and its transcript written."""
    from ..effects.llm.queue import llm_state
    case = run.case
    ms = thread.vals['messages'].items if thread is not None else []
    bot = [m.vals.get('text') for m in ms if m.vals.get('sender') is None]
    st = llm_state(sched.world, make=False)
    entries = [st.log[s] for s in run.seqs if s in st.log] if st is not None else []
    names = {'user': thread.vals.get('user') if thread is not None else None,
             'thread': thread, 'bot': OList(list(bot)), 'asked': run.asked,
             'llm_calls': len(entries)}
    outcomes = evaluate(sched, case, names)
    chat = R.chat_lines(ms)
    user_state = R.user_state(names['user'])
    sched.abort()                   # nothing the expectations did is kept
    failed = [{'index': e.index, 'expectation': e.text, 'problem': p}
              for e, p in outcomes if p is not None]
    failure = None
    if run.end in FAILING_ENDS:
        failure = {'problem': R.end_problem(run, len(bot), len(run.seqs))}
    elif failed:
        failure = dict(failed[0])
    stats = R.llm_stats(entries)
    result = {
        'file': case.file.path, 'case': case.name, 'run': run.number,
        'holdout': case.holdout, 'passed': failure is None, 'end': run.end,
        'failure': failure, 'failed_expectations': failed,
        'bot_messages': len(bot), 'asked': run.asked, 'llm_calls': len(entries),
        'seconds': round(run.seconds, 3), 'bot': bot,
        'errors': [e for e in run.errors if e.strip()],
        'transcript': transcript_path,
    }
    result.update(stats)
    R.write_transcript(transcript_path, run, result, chat, user_state, entries)
    return result
