"""What `ostinato eval` shows and writes: the progress line, the table,
transcripts of runs, JSON (`--json`) and Markdown (`--markdown`).

A transcript is the whole story of one run, for finding out why it
failed: the chat with its timestamps, each expectation's outcome, the
user's state at the end, error reports of the skill's tasks, and every
prompt the model got in that run with its replies (re-asks included).
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections import Counter
from datetime import datetime

from .dialogue import CHATTY, ENDED, SILENT, STUCK, TOO_MANY_CALLS

BEGIN = '<!-- ostinato eval: begin -->'
END = '<!-- ostinato eval: end -->'


# ------------------------------------------------------------------ progress

class Progress:
    """What the operator sees while an eval runs, on standard error: a
    line for each run that ends (done/total, pass or FAIL, the case and
    run, its seconds, the time since the eval began, and why it failed),
    so that a long eval is never silent; and on a terminal also a status
    line, redrawn in place, with the dialogue under way and for how long.
    Piped into a log, only the lines of ended runs: one per dialogue."""

    EVERY = 0.2

    def __init__(self, stream, total, done, tty=None):
        self.stream = stream
        self.total = total
        self.done = done
        self.passed = 0
        self.drawn = 0.0
        self.shown = False
        self.began = time.monotonic()
        if tty is None:
            tty = hasattr(stream, 'isatty') and stream.isatty()
        self.tty = tty

    def finished(self, result):
        self.done += 1
        self.passed += bool(result['passed'])
        self.clear()
        line = '[%d/%d] %s  %s, run %d  (%s; %s in all)' % (
            self.done, self.total, 'pass' if result['passed'] else 'FAIL', result['case'],
            result['run'], _duration(result['seconds'] or 0),
            _duration(time.monotonic() - self.began))
        if not result['passed']:
            line += ': ' + _short(failure_text(result).replace('\n', ' '), 160)
        self.stream.write(line + '\n')
        self.stream.flush()
        self.drawn = 0.0                # the status line again at once

    def update(self, active):
        if not self.tty:
            return
        now = time.monotonic()
        if now - self.drawn < self.EVERY:
            return
        self.drawn = now
        text = '[%d/%d runs, %d passed]' % (self.done, self.total, self.passed)
        if active:
            run = active[0]
            text += ' %s, run %d: %s' % (_short(run.case.name, 40), run.number,
                                         _duration(now - run.started))
            if len(active) > 1:
                text += ' (+%d more)' % (len(active) - 1)
        self.stream.write('\r' + text + '\x1b[K')
        self.stream.flush()
        self.shown = True

    def clear(self):
        if self.shown:
            self.stream.write('\r\x1b[K')
            self.stream.flush()
            self.shown = False


def _short(text, width):
    return text if len(text) <= width else text[:width - 3] + '...'


def _duration(seconds):
    seconds = int(seconds)
    if seconds < 60:
        return '%d s' % seconds
    return '%d:%02d' % (seconds // 60, seconds % 60)


# ------------------------------------------------------------------ a run

def chat_lines(messages):
    """The chat as the model sees it: `[time] name: text`."""
    from ..vm.printing import to_str
    lines = []
    for m in messages:
        sender = m.vals.get('sender')
        who = 'bot' if sender is None else (sender.vals.get('name') or 'user')
        lines.append('[%s] %s: %s' % (m.vals.get('when'), who, to_str(m.vals.get('text'))))
    return lines


def user_state(user):
    from ..vm.printing import pformat
    if user is None:
        return 'none'
    try:
        return pformat(user)
    except Exception as e:       # showing the state must never lose the result
        return '(cannot show the user: %s)' % e


def end_problem(run, bot_messages, llm_calls):
    case = run.case
    if run.end == CHATTY:
        return 'too chatty: %d bot messages (at most %d)' % (bot_messages, case.max_bot_messages)
    if run.end == TOO_MANY_CALLS:
        return 'too many LLM calls: %d (at most %d)' % (llm_calls, case.max_llm_calls)
    if run.end == STUCK:
        return 'stuck: the dialogue waits for something no one will do'
    return run.end


ENDINGS = {
    ENDED: 'the dialogue ended',
    SILENT: "the user went silent (no answer rule matched the bot's message, and no "
            "'otherwise')",
}


def llm_stats(entries):
    """Figures of a run's exchanges with the model."""
    # A failed request records no timings: from its asking to its answer
    # is what it cost (the dialogues wait for the model one at a time).
    seconds = [e.seconds if e.seconds is not None else max(0.0, (e.answered or 0) - (e.asked or 0))
               for e in entries]
    prompt = [e.prompt_tokens for e in entries if e.prompt_tokens is not None]
    reply = [e.reply_tokens for e in entries if e.reply_tokens is not None]
    timed = [e.seconds for e in entries if e.reply_tokens is not None and e.seconds is not None]
    models = Counter(e.model for e in entries if e.model)
    backends = Counter(e.backend for e in entries if e.backend)
    return {
        'attempts': sum(e.attempts or 1 for e in entries),
        'llm_errors': [e.error for e in entries if e.error],
        'llm_seconds': round(sum(seconds), 3),
        'token_seconds': round(sum(timed), 3),      # of the requests that report tokens
        'prompt_tokens': sum(prompt) if prompt else None,
        'reply_tokens': sum(reply) if reply else None,
        'model': models.most_common(1)[0][0] if models else None,
        'backend': backends.most_common(1)[0][0] if backends else None,
    }


def shown_path(path):
    """A path as short as it can be said from here."""
    rel = os.path.relpath(path)
    return path if rel.startswith('..') else rel


def _indent(text, prefix='    '):
    return '\n'.join(prefix + line for line in str(text).split('\n'))


def write_transcript(path, run, result, chat, user, entries):
    case = run.case
    lines = ['ostinato eval transcript',
             'case:    %s (%s%s)' % (case.name, case.file.path, ', holdout' if case.holdout else ''),
             'run:     %d' % run.number]
    if result['passed']:
        lines.append('result:  passed')
    else:
        lines.append('result:  FAILED: %s' % failure_text(result))
    how = ENDINGS.get(run.end) or end_problem(run, result['bot_messages'], len(run.seqs))
    lines.append('ended:   %s; %d bot messages, %d answered, %d LLM calls, %.1f s'
                 % (how, result['bot_messages'], result['asked'], result['llm_calls'],
                    result['seconds']))
    lines += ['', 'expectations:']
    problems = {f['index']: f['problem'] for f in result['failed_expectations']}
    for e in case.expect:
        p = problems.get(e.index)
        lines.append('  %-6s %s%s' % ('ok' if p is None else 'FAILED', e.text,
                                      '' if p is None else '  -- ' + p))
    lines += ['', 'chat (the times are in %s):' % case.zone_name]
    lines += ['  ' + ln for ln in '\n'.join(chat).split('\n')] if chat else ['  (empty)']
    lines += ['', 'the user at the end:', _indent(user, '  ')]
    if result['errors']:
        lines += ['', "errors of the skill's tasks:"]
        lines += [_indent(e.rstrip('\n'), '  ') for e in result['errors']]
    lines += ['', 'exchanges with the model (%d):' % len(entries), '']
    if entries:
        from ..effects.llm.queue import log_text
        lines.append(log_text(entries))
    retried = [e for e in entries if len(e.exchanges or ()) > 1]
    if retried:
        # What the model said before the reply that counted, and why that
        # was asked again: where a small model goes wrong.
        from ..effects.llm.queue import unpack_exchanges
        lines += ['', 'replies that were asked again:']
        for e in retried:
            for k, x in enumerate(unpack_exchanges(e.exchanges, e.raw), 1):
                lines.append('  #%d attempt %d: %s' % (e.seq, k, x.get('raw')))
                if x.get('problem'):
                    lines.append('      problem: %s' % x['problem'])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def failure_text(result):
    f = result.get('failure')
    if not f:
        return ''
    if 'expectation' in f:
        return 'expect[%d] %s %s' % (f['index'], f['expectation'], f['problem'])
    return f['problem']


# ------------------------------------------------------------------ the whole eval

def _rate(passed, runs):
    return {'runs': runs, 'passed': passed, 'pass_rate': (passed / runs) if runs else None}


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.mean(xs), 3) if xs else None


def _cpu_name():
    try:
        with open('/proc/cpuinfo', encoding='utf-8') as f:
            for line in f:
                if line.lower().startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def summarize(files, plan, results, options, work_path):
    """Everything the table, --json and --markdown show."""
    from .. import __version__
    by_case = {}
    for r in results:
        by_case.setdefault((r['file'], r['case']), []).append(r)
    cases = []
    seen = set()
    for fi, ci, case, n in plan:
        key = (case.file.path, case.name)
        if key in seen or key not in by_case:      # not run: an interrupted eval
            continue
        seen.add(key)
        rs = sorted(by_case[key], key=lambda r: r['run'])
        passed = sum(1 for r in rs if r['passed'])
        cases.append({
            'file': case.file.path, 'name': case.name, 'line': case.line,
            'holdout': case.holdout, 'runs': len(rs), 'passed': passed,
            'pass_rate': (passed / len(rs)) if rs else None,
            'mean_bot_messages': _mean([r['bot_messages'] for r in rs]),
            'mean_llm_calls': _mean([r['llm_calls'] for r in rs]),
            'mean_seconds': _mean([r['seconds'] for r in rs]),
            'results': rs,
        })
    runs = len(results)
    passed = sum(1 for r in results if r['passed'])
    tuned = [r for r in results if not r['holdout']]
    hold = [r for r in results if r['holdout']]
    secs = [r['seconds'] for r in results]
    reply_tokens = sum(r.get('reply_tokens') or 0 for r in results)
    prompt_tokens = sum(r.get('prompt_tokens') or 0 for r in results)
    llm_seconds = sum(r.get('llm_seconds') or 0 for r in results)
    token_seconds = sum(r.get('token_seconds', r.get('llm_seconds')) or 0 for r in results)
    errors = Counter(x for r in results for x in r.get('llm_errors') or ())
    models = Counter(r['model'] for r in results if r.get('model'))
    backends = Counter(r['backend'] for r in results if r.get('backend'))
    return {
        'ostinato': __version__,
        'date': datetime.now().astimezone().isoformat(timespec='seconds'),
        'backend': backends.most_common(1)[0][0] if backends else None,
        'model': models.most_common(1)[0][0] if models else None,
        'machine': {'cores': os.cpu_count(), 'cpu': _cpu_name(),
                    'system': '%s %s' % (platform.system(), platform.machine())},
        'jobs': options.jobs,
        'work': work_path,
        'files': [{'path': cf.path, 'skill': cf.skill, 'cases': len(cf.cases)} for cf in files],
        'cases': cases,
        'complete': runs == len(plan), 'planned_runs': len(plan),
        'runs': runs, 'passed': passed, 'pass_rate': (passed / runs) if runs else 0.0,
        'tuned': _rate(sum(1 for r in tuned if r['passed']), len(tuned)),
        'holdout': _rate(sum(1 for r in hold if r['passed']), len(hold)),
        'seconds': {'mean': _mean(secs), 'median': round(statistics.median(secs), 3)
                    if secs else None},
        'llm': {
            'calls': sum(r['llm_calls'] for r in results),
            'seconds': round(llm_seconds, 3),
            'prompt_tokens': prompt_tokens or None,
            'reply_tokens': reply_tokens or None,
            # Generation speed over the time the model worked on the
            # requests that report tokens (reading their prompts included):
            # what a dialogue waits for.  A failed request reports none.
            'tokens_per_second': round(reply_tokens / token_seconds, 2)
            if reply_tokens and token_seconds else None,
            'failed': sum(errors.values()),
            'errors': [{'error': e, 'count': n} for e, n in errors.most_common()],
        },
    }


def header_line(files, plan, options, identity):
    cases = len({(c.file.path, c.name) for _, _, c, _ in plan})
    backend = identity.get('llm') or 'auto'
    model = identity.get('model')
    return 'ostinato eval: %d case%s, %d run%s, on %s%s, %d at a time' % (
        cases, '' if cases == 1 else 's', len(plan), '' if len(plan) == 1 else 's',
        backend, ' (%s)' % model if model else '', options.jobs)


def _num(x, fmt='%.1f'):
    return '-' if x is None else fmt % x


def _pct(rate):
    return '-' if rate is None else '%.1f %%' % (100 * rate)


def table(s):
    lines = []
    several = len(s['files']) > 1
    for f in s['files']:
        rows = [c for c in s['cases'] if c['file'] == f['path']]
        if not rows:
            continue
        lines.append('')
        lines.append('%s (%s)' % (f['path'], shown_path(f['skill'])))
        lines.append('  passed  bot msgs  LLM calls  seconds  case')
        for c in rows:
            lines.append('  %6s  %8s  %9s  %7s  %s%s' % (
                '%d/%d' % (c['passed'], c['runs']), _num(c['mean_bot_messages']),
                _num(c['mean_llm_calls']), _num(c['mean_seconds']), c['name'],
                '  [holdout]' if c['holdout'] else ''))
    lines.append('')
    if not s['complete']:
        lines.append('(interrupted: %d of %d runs finished)' % (s['runs'], s['planned_runs']))
    for label, part in (('tuned', s['tuned']), ('holdout', s['holdout'])):
        if part['runs']:
            lines.append('%-8s %d/%d runs passed (%s)' % (label, part['passed'], part['runs'],
                                                        _pct(part['pass_rate'])))
    lines.append('%-8s %d/%d runs passed (%s)' % ('total', s['passed'], s['runs'],
                                                _pct(s['pass_rate'])))
    figures = 'mean %s s per dialogue (median %s s)' % (_num(s['seconds']['mean']),
                                                          _num(s['seconds']['median']))
    if s['llm']['tokens_per_second']:
        figures += ', %.1f tokens/s' % s['llm']['tokens_per_second']
    if s['model']:
        figures += '; model %s (%s)' % (s['model'], s['backend'])
    lines.append(figures)
    if s['llm']['failed']:
        # Most often the model's own trouble; but a model that cannot be
        # reached or loaded fails every request the same way: say it here.
        top = s['llm']['errors'][0]
        lines.append('%d of %d model requests failed; the most frequent error (%d):\n  %s' % (
            s['llm']['failed'], s['llm']['calls'], top['count'], top['error']))
    failed = [r for c in s['cases'] for r in c['results'] if not r['passed']]
    if failed:
        lines.append('')
        lines.append('failed runs:')
        for r in failed:
            prefix = '%s: ' % r['file'] if several else ''
            lines.append('  %s%s, run %d: %s' % (prefix, r['case'], r['run'], failure_text(r)))
            lines.append('    %s' % shown_path(r['transcript']))
    return '\n'.join(lines).lstrip('\n')


def write_json(s, path):
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        json.dump(s, f, ensure_ascii=False, indent=1)
        f.write('\n')
    os.replace(tmp, path)


def markdown(s):
    m = s['machine']
    lines = [
        BEGIN,
        '## Latest measurement',
        '',
        '| | |',
        '| --- | --- |',
        '| date | %s |' % s['date'],
        '| model | %s |' % (s['model'] or '-'),
        '| backend | %s |' % (s['backend'] or '-'),
        '| machine | %s cores, %s%s |' % (m['cores'], m['system'],
                                         ', %s' % m['cpu'] if m['cpu'] else ''),
        '| dialogues at once | %d |' % s['jobs'],
        '| runs | %d%s |' % (s['runs'], '' if s['complete'] else
                             ' of %d planned (the eval was stopped)' % s['planned_runs']),
        '| ostinato | %s |' % s['ostinato'],
        '| tuned | %d/%d runs passed (%s) |' % (s['tuned']['passed'], s['tuned']['runs'],
                                                _pct(s['tuned']['pass_rate'])),
        '| holdout | %d/%d runs passed (%s) |' % (s['holdout']['passed'], s['holdout']['runs'],
                                                  _pct(s['holdout']['pass_rate'])),
        '| total | %d/%d runs passed (%s) |' % (s['passed'], s['runs'], _pct(s['pass_rate'])),
        '| seconds per dialogue | mean %s, median %s |' % (_num(s['seconds']['mean']),
                                                           _num(s['seconds']['median'])),
        '| model time | %s s in %d requests, %d failed |' % (
            _num(s['llm']['seconds']), s['llm']['calls'], s['llm']['failed']),
        '| tokens/s | %s (generated per second of model time, over the requests that '
        'succeeded) |' % _num(s['llm']['tokens_per_second']),
        '',
    ]
    for f in s['files']:
        rows = [c for c in s['cases'] if c['file'] == f['path']]
        if not rows:
            continue
        lines += ['### %s' % f['path'], '',
                  '| case | holdout | passed | bot msgs | LLM calls | seconds |',
                  '| --- | --- | --- | --- | --- | --- |']
        for c in rows:
            lines.append('| %s | %s | %d/%d | %s | %s | %s |' % (
                c['name'].replace('|', '\\|'), 'yes' if c['holdout'] else '',
                c['passed'], c['runs'], _num(c['mean_bot_messages']),
                _num(c['mean_llm_calls']), _num(c['mean_seconds'])))
        lines.append('')
    lines.append(END)
    return '\n'.join(lines)


def write_markdown(s, path):
    """Write the measurement into `path`: between the markers if the file
    has them (the rest -- history, notes -- is kept), else as the file."""
    text = markdown(s)
    try:
        with open(path, encoding='utf-8') as f:
            old = f.read()
    except OSError:
        old = None
    if old is not None and BEGIN in old and END in old:
        before, rest = old.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        text = before + text + after
    else:
        text = '# Eval results\n\n' + text + '\n'
    tmp = path + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)
