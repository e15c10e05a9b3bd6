"""Case files of `ostinato eval`: reading and checking them.

A case file is TOML (parsed by the standard library's `tomllib`, or the
`tomli` package on Python 3.10); its keys are a contract documented in the
README ("Measure a skill") and in `evals/`.  Everything is checked before
any dialogue runs, and every mistake is reported as `FILE:LINE:COL: error:
KEY: WHAT` -- where the offending value (or key) starts, the key's path
inside the file and what is wrong -- so a typo never costs an hour of model
time; `ostinato eval --check` does only that.  The checker goes on after a
mistake, so one look shows them all.  tomllib gives values without
positions, so `key_positions` scans the (already valid) text once more for
where each key and value starts.
"""
from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime, time as dtime
from typing import List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:                                   # pragma: no cover -- Python 3.10
    import tomli as tomllib

from ..compiler.check import unbound_reads
from ..compiler.compiler import compile_module
from ..syntax import OstSyntaxError, parse
from ..syntax import ast as A

# What an expectation can read besides the built-ins.
EXPECT_NAMES = ('user', 'thread', 'bot', 'asked', 'llm_calls', 'near', 'mentions', 'only')

DEFAULT_RUNS = 1
DEFAULT_MAX_BOT_MESSAGES = 10
DEFAULT_MAX_LLM_CALLS = 40
DEFAULT_REPLY_SECONDS = 40

FILE_KEYS = ('skill', 'timezone', 'start', 'runs', 'reply_seconds', 'max_bot_messages',
             'max_llm_calls', 'case')
CASE_KEYS = ('name', 'user', 'say', 'answers', 'otherwise', 'max_bot_messages',
             'max_llm_calls', 'expect', 'holdout', 'runs', 'start', 'timezone')
ANSWER_KEYS = ('when', 'say')
SAY_KEYS = ('text', 'at')


class CaseFileError(Exception):
    """An invalid case file; str() is the whole message for the operator."""


@dataclass
class Say:
    """One message the user starts with (after the previous dialogue ended)."""
    text: str
    at: Optional[dtime] = None          # the clock time to send it at, if given


@dataclass
class Answer:
    """How the user answers a bot message its regular expression matches."""
    pattern: re.Pattern
    says: List[str]                     # successive answers; the last repeats


@dataclass
class Expectation:
    text: str
    code: object                        # the compiled Code of `__result__ = (text)`
    index: int


@dataclass
class Case:
    name: str
    file: 'CaseFile'
    line: int
    user: str
    say: List[Say]
    answers: List[Answer]
    otherwise: Optional[str]
    max_bot_messages: int
    max_llm_calls: int
    expect: List[Expectation]
    holdout: bool
    runs: int
    start: datetime                     # aware, in `zone`
    zone: object                        # a ZoneInfo
    zone_name: str


@dataclass
class CaseFile:
    path: str                           # as given on the command line
    skill: str                          # absolute path of the skill file
    reply_seconds: float
    cases: List[Case] = field(default_factory=list)


# ------------------------------------------------------------------ loading

def load_case_file(path: str) -> CaseFile:
    """Read and check one case file; raises CaseFileError."""
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise CaseFileError('%s: error: cannot read the case file: %s'
                            % (path, e.strerror or e)) from None
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        raise CaseFileError('%s: error: the case file is not UTF-8 text (%s)'
                            % (path, e.reason)) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CaseFileError(_toml_error(path, e)) from None
    checker = _Checker(path, text, doc)
    cf = checker.case_file()
    if checker.errors:
        raise CaseFileError('\n'.join(checker.errors))
    return cf


def load_case_files(paths) -> List[CaseFile]:
    """Every case file, checked before anything runs; raises CaseFileError
    with the mistakes of every file that is not valid."""
    files, errors = [], []
    for p in paths:
        try:
            files.append(load_case_file(p))
        except CaseFileError as e:
            errors.append(str(e))
    if errors:
        raise CaseFileError('\n'.join(errors))
    return files


_AT = re.compile(r'\s*\((?:at line (\d+), column (\d+)|at end of document)\)\s*$')


def _toml_error(path, e):
    """tomllib's message ends '(at line 3, column 5)'; the operator gets the
    position first, as every other error of ours gives it."""
    msg = str(e)
    line = getattr(e, 'lineno', None)
    col = getattr(e, 'colno', None)
    m = _AT.search(msg)
    if m:
        msg = msg[:m.start()]
        if m.group(1):
            line, col = int(m.group(1)), int(m.group(2))
    where = '%s:%d:%d' % (path, line, col) if line else path
    return '%s: error: not valid TOML: %s' % (where, msg)


class _Bad(Exception):
    """One mistake, already worded, and where it is ((line, col) or None);
    the checker notes it and goes on."""

    def __init__(self, message, at=None):
        super().__init__(message)
        self.at = at


class _Checker:
    def __init__(self, path, text, doc):
        self.path = path
        self.text = text
        self.doc = doc
        self.problems: List[Tuple[Tuple[int, int], str]] = []
        try:
            self.keys, self.values = key_positions(text)
        except Exception:       # only positions for messages: never worth failing on
            self.keys, self.values = {}, {}

    # ------------------------------------------------------------ errors
    @property
    def errors(self):
        """The mistakes found, in the order of the file."""
        return [m for _, m in sorted(self.problems, key=lambda p: p[0])]

    def position(self, keypath, key=False):
        """(line, col) of the value at `keypath` (of its key with `key`), or
        of its nearest enclosing key (an array of tables has only the
        positions of its tables' headers); None when nothing encloses it."""
        keypath = tuple(keypath)
        if not key and keypath in self.values:
            return self.values[keypath]
        while keypath:
            if keypath in self.keys:
                return self.keys[keypath]
            inside = [n for k, n in self.keys.items() if k[:len(keypath)] == keypath]
            if inside:
                return min(inside)
            keypath = keypath[:-1]
        return None

    def line(self, keypath):
        at = self.position(keypath, key=True)
        return at[0] if at else None

    def fail(self, keypath, what, case=None, key=False, offset=None):
        """Raise the mistake at `keypath`: `offset` is a column inside the
        string value there, counted from 1, when its text is that of the
        file (no escapes)."""
        at = self.position(keypath, key)
        if at is not None and offset is not None:
            at = self.inside_string(at, offset)
        where = '%s:%d:%d' % ((self.path,) + tuple(at)) if at else self.path
        shown = _show_path(keypath[2:] if case is not None else keypath)
        parts = (['case %s' % _quote(case)] if case is not None else []) + \
            ([shown] if shown else []) + [what]
        raise _Bad('%s: error: %s' % (where, ': '.join(parts)), at)

    def inside_string(self, at, offset):
        """The position of column `offset` of a one-line string that starts at
        `at`, when it is written without escapes; else `at`."""
        line, col = at
        lines = self.text.split('\n')
        if not 1 <= line <= len(lines):
            return at
        rest = lines[line - 1][col - 1:]
        if rest[:1] not in ('"', "'") or rest[:3] in ('"""', "'''"):
            return at
        q = rest[0]
        body = rest[1:].split(q, 1)[0]
        if (q == '"' and '\\' in body) or len(body) < offset - 1:
            return at
        return (line, col + offset)

    def attempt(self, fn, *args, default=None, **kwargs):
        """fn(...), or `default` after noting its mistake."""
        try:
            return fn(*args, **kwargs)
        except _Bad as e:
            self.problems.append((e.at or (0, 0), str(e)))
            return default

    def unknown_keys(self, table, allowed, keypath, case=None):
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = " (did you mean '%s'?)" % close[0] if close else \
                    ' (known keys: %s)' % ', '.join(allowed)
                self.attempt(self.fail, keypath + (key,), 'unknown key%s' % hint, case,
                             key=True)

    # ------------------------------------------------------------ typed values
    def get(self, table, key, kinds, keypath, default=None, required=False, case=None):
        if key not in table:
            if required:
                self.fail(keypath, "the key '%s' is missing" % key, case)
            return default
        value = table[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in _tuple(kinds)):
            self.fail(keypath + (key,), 'must be %s, not %s' % (_kind_names(kinds), _toml_kind(value)),
                      case)
        return value

    def positive_int(self, table, key, keypath, default, case=None):
        value = self.get(table, key, int, keypath, default, case=case)
        if value < 1:
            self.fail(keypath + (key,), 'must be at least 1, not %d' % value, case)
        return value

    def zone(self, name, keypath, case=None):
        try:
            from zoneinfo import ZoneInfo
            return ZoneInfo(name)
        except Exception:
            self.fail(keypath, 'unknown time zone %s (an IANA name such as '
                               "'America/New_York' or 'UTC')" % _quote(name), case)

    def start(self, value, zone, keypath, case=None):
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.strip())
            except ValueError:
                self.fail(keypath, 'not a date and time %s (write it as '
                                   "'2025-03-14T16:00:00')" % _quote(value), case)
        elif isinstance(value, date) and not isinstance(value, datetime):
            self.fail(keypath, 'a date without a time of day (write it as '
                               '2025-03-14T16:00:00)', case)
        elif not isinstance(value, datetime):
            self.fail(keypath, 'must be a date and time, not %s' % _toml_kind(value), case)
        if value.tzinfo is None:
            return value.replace(tzinfo=zone)
        return value.astimezone(zone)

    # ------------------------------------------------------------ the file
    def case_file(self):
        """The CaseFile; each mistake is noted in `errors` and the check
        goes on with a stand-in, so one look shows them all."""
        doc = self.doc
        a = self.attempt
        self.unknown_keys(doc, FILE_KEYS, ())
        here = os.path.dirname(os.path.abspath(self.path))
        skill = a(self.get, doc, 'skill', str, (), required=True)
        skill_path = os.path.normpath(os.path.join(here, skill)) if skill else ''
        if skill and not os.path.isfile(skill_path):
            a(self.fail, ('skill',), 'no such file %s (the path is relative to the case file)'
              % skill_path)
        zone_name = a(self.get, doc, 'timezone', str, (), 'UTC') or 'UTC'
        zone = a(self.zone, zone_name, ('timezone',))
        if zone is None:
            zone_name, zone = 'UTC', self.zone('UTC', ())
        start = None
        if 'start' not in doc:
            a(self.fail, (), "the key 'start' is missing (the clock at each case's first "
                             "message, e.g. start = \"2025-03-14T16:00:00\")")
        else:
            start = a(self.start, doc['start'], zone, ('start',))
        if start is None:               # a stand-in, so that the cases are checked
            start = datetime(2000, 1, 1, tzinfo=zone)
        runs = a(self.positive_int, doc, 'runs', (), DEFAULT_RUNS, default=DEFAULT_RUNS)
        reply = a(self.get, doc, 'reply_seconds', (int, float), (), DEFAULT_REPLY_SECONDS,
                  default=DEFAULT_REPLY_SECONDS)
        if reply <= 0:
            a(self.fail, ('reply_seconds',), 'must be more than 0')
        cases = a(self.get, doc, 'case', list, (), required=True, default=[])
        if not cases and 'case' in doc and type(doc['case']) is list:
            a(self.fail, ('case',), 'no cases: add [[case]] tables')
        limits = (a(self.positive_int, doc, 'max_bot_messages', (), DEFAULT_MAX_BOT_MESSAGES,
                    default=DEFAULT_MAX_BOT_MESSAGES),
                  a(self.positive_int, doc, 'max_llm_calls', (), DEFAULT_MAX_LLM_CALLS,
                    default=DEFAULT_MAX_LLM_CALLS))
        cf = CaseFile(self.path, skill_path, float(reply))
        names = set()
        for i, table in enumerate(cases):
            if not isinstance(table, dict):
                a(self.fail, ('case', i), 'must be a table ([[case]]), not %s'
                  % _toml_kind(table))
                continue
            c = self.case(cf, i, table, zone, zone_name, start, runs, limits)
            if c is None:
                continue
            if c.name in names:
                a(self.fail, ('case', i, 'name'), 'a second case named %s (names must differ)'
                  % _quote(c.name))
            names.add(c.name)
            cf.cases.append(c)
        return cf

    def case(self, cf, i, t, zone, zone_name, start, runs, limits):
        """The Case of the table `t`, or None when it has mistakes (noted)."""
        before = len(self.problems)
        a = self.attempt
        kp = ('case', i)
        name = a(self.get, t, 'name', str, kp, required=True)
        if name is not None and not name.strip():
            a(self.fail, kp + ('name',), 'must not be empty')
            name = None
        self.unknown_keys(t, CASE_KEYS, kp, name)
        user = a(self.get, t, 'user', str, kp, 'user', case=name)
        if user is not None and not user.strip():
            a(self.fail, kp + ('user',), 'must not be empty', name)
        if 'timezone' in t:
            zone_name = a(self.get, t, 'timezone', str, kp, case=name)
            zone = a(self.zone, zone_name, kp + ('timezone',), name) if zone_name else None
            if zone is not None:
                start = start.astimezone(zone)
        if 'start' in t and zone is not None:
            start = a(self.start, t['start'], zone, kp + ('start',), name)
        say = self.says(t, kp, name)
        answers = self.answers(t, kp, name)
        otherwise = a(self.get, t, 'otherwise', str, kp, case=name)
        expect = self.expectations(t, kp, name)
        max_bot = a(self.positive_int, t, 'max_bot_messages', kp, limits[0], name)
        max_calls = a(self.positive_int, t, 'max_llm_calls', kp, limits[1], name)
        holdout = a(self.get, t, 'holdout', bool, kp, False, case=name)
        runs = a(self.positive_int, t, 'runs', kp, runs, name)
        if len(self.problems) > before:
            return None
        return Case(
            name=name, file=cf, line=self.line(kp) or 0, user=user, say=say,
            answers=answers, otherwise=otherwise, max_bot_messages=max_bot,
            max_llm_calls=max_calls, expect=expect, holdout=holdout, runs=runs,
            start=start, zone=zone, zone_name=zone_name)

    def says(self, t, kp, name):
        raw = self.attempt(self.get, t, 'say', (str, list), kp, required=True, case=name)
        if raw is None:
            return []
        items = [raw] if isinstance(raw, str) else raw
        if not items:
            self.attempt(self.fail, kp + ('say',), 'must hold at least one message', name)
        says = []
        for k, item in enumerate(items):
            say = self.attempt(self.say, item, kp + ('say', k), name)
            if say is not None:
                says.append(say)
        return says

    def say(self, item, ikp, name):
        if isinstance(item, dict):
            self.unknown_keys(item, SAY_KEYS, ikp, name)
            text = self.get(item, 'text', str, ikp, required=True, case=name)
            at = item.get('at')
            if at is not None:
                at = self.clock_time(at, ikp + ('at',), name)
        elif isinstance(item, str):
            text, at = item, None
        else:
            self.fail(ikp, 'must be a message (a string, or a table with text and at), '
                           'not %s' % _toml_kind(item), name)
        if not text.strip():
            self.fail(ikp, 'an empty message', name)
        return Say(text, at)

    def clock_time(self, value, keypath, case):
        if isinstance(value, dtime):
            return value
        if isinstance(value, str):
            m = re.fullmatch(r'\s*(\d{1,2}):(\d{2})\s*', value)
            if m and int(m.group(1)) < 24 and int(m.group(2)) < 60:
                return dtime(int(m.group(1)), int(m.group(2)))
        self.fail(keypath, "must be a clock time 'HH:MM', not %s" % _quote(value), case)

    def answers(self, t, kp, name):
        rules = self.attempt(self.get, t, 'answers', list, kp, [], case=name, default=[])
        out = []
        for k, rule in enumerate(rules):
            answer = self.attempt(self.answer, rule, kp + ('answers', k), name)
            if answer is not None:
                out.append(answer)
        return out

    def answer(self, rule, rkp, name):
        if not isinstance(rule, dict):
            self.fail(rkp, 'must be a table { when = "REGEX", say = "TEXT" }, not %s'
                      % _toml_kind(rule), name)
        self.unknown_keys(rule, ANSWER_KEYS, rkp, name)
        when = self.attempt(self.get, rule, 'when', str, rkp, required=True, case=name)
        pattern = None
        if when is not None:
            try:
                pattern = re.compile(when)
            except re.error as e:
                self.attempt(self.fail, rkp + ('when',), 'not a regular expression: %s' % e,
                             name, offset=None if e.pos is None else e.pos + 1)
        says = self.get(rule, 'say', (str, list), rkp, required=True, case=name)
        says = [says] if isinstance(says, str) else says
        if not says:
            self.fail(rkp + ('say',), 'must hold at least one answer', name)
        for j, s in enumerate(says):
            if not isinstance(s, str):
                self.fail(rkp + ('say', j), 'must be a string, not %s' % _toml_kind(s), name)
            if not s.strip():
                self.fail(rkp + ('say', j), 'an empty answer (leave the rule out to '
                                            'let the user go silent)', name)
        if pattern is None:
            return None
        return Answer(pattern, list(says))

    def expectations(self, t, kp, name):
        raw = self.attempt(self.get, t, 'expect', (str, list), kp, required=True, case=name)
        if raw is None:
            return []
        items = [raw] if isinstance(raw, str) else raw
        if not items:
            self.attempt(self.fail, kp + ('expect',), 'must hold at least one expression', name)
        out = []
        for k, text in enumerate(items):
            e = self.attempt(self.expectation, text, k, kp, name, isinstance(raw, str))
            if e is not None:
                out.append(e)
        return out

    def expectation(self, text, k, kp, name, alone):
        ekp = kp + ('expect',) if alone else kp + ('expect', k)
        if not isinstance(text, str):
            self.fail(ekp, 'must be an Ostinato expression in a string, not %s'
                      % _toml_kind(text), name)
        try:
            code = compile_expectation(text)
        except ExpressionError as e:
            self.fail(ekp, '%s in %s' % (e, _quote(text)), name, offset=e.col)
        return Expectation(text, code, k)


# ------------------------------------------------------------------ expressions

class ExpressionError(Exception):
    """`col`: where in a one-line expression the mistake is (from 1), or None."""

    def __init__(self, message, col=None):
        super().__init__(message)
        self.col = col


def compile_expectation(text):
    """The Code of a module that sets `__result__` to the expression's value.
    The expression goes on a line of its own inside parentheses, so that a
    syntax error's line and column are its own (line 2 of the module)."""
    from ..vm.values import BUILTINS
    from ..vm.interp import VM  # noqa: F401 -- registers every built-in
    if not text.strip():
        raise ExpressionError('an empty expression')
    source = '__result__ = (\n%s\n)\n' % text
    try:
        mod = parse(source, '<expect>')
    except OstSyntaxError as e:
        raise _syntax(e, text) from None
    body = mod.body
    if len(body) != 1 or not isinstance(body[0], A.Assign):
        raise ExpressionError('not one expression')
    for node, unbound, close in unbound_reads(mod, set(BUILTINS) | set(EXPECT_NAMES)):
        hint = " (did you mean '%s'?)" % close[0] if close else \
            ' (an expectation reads %s and the built-ins)' % ', '.join(EXPECT_NAMES)
        col = node.col if node.line == 2 and '\n' not in text else None
        raise ExpressionError("unknown name '%s'%s" % (unbound, hint), col)
    try:
        return compile_module(mod, source, '<expect>', '<expect>')
    except OstSyntaxError as e:
        raise _syntax(e, text) from None


def _syntax(e, text):
    one_line = '\n' not in text and e.line == 2
    return ExpressionError(_expression_syntax(e, text), e.col if one_line else None)


def _expression_syntax(e, text):
    lines = text.split('\n')
    if 2 <= e.line <= len(lines) + 1:
        line = e.line - 1
        where = 'column %d' % e.col if len(lines) == 1 else 'line %d, column %d' % (line, e.col)
        return 'syntax error at %s: %s' % (where, e.message)
    return 'syntax error: %s (is a bracket or quote left open?)' % e.message


# ------------------------------------------------------------------ messages

def _quote(s):
    return repr(s) if isinstance(s, str) else str(s)


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


_NAMES = {str: 'a string', int: 'an integer', float: 'a number', bool: 'true or false',
          list: 'an array', dict: 'a table'}


def _kind_names(kinds):
    names = [_NAMES.get(k, k.__name__) for k in _tuple(kinds)]
    if names == ['an integer', 'a number']:
        return 'a number'
    return ' or '.join(names)


def _toml_kind(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, datetime):
        return 'a date and time'
    if isinstance(v, date):
        return 'a date'
    if isinstance(v, dtime):
        return 'a time'
    for t, n in _NAMES.items():
        if isinstance(v, t):
            return n
    return type(v).__name__


def _show_path(keypath):
    out = ''
    for k in keypath:
        if isinstance(k, int):
            out += '[%d]' % k
        else:
            out += ('.' if out else '') + k
    return out


# ------------------------------------------------------------------ key lines

def key_positions(text):
    """Where each key path of a valid TOML text starts, and where its value
    does: two dicts of path -> (line, col), from 1.  Paths are
    ('skill',), ('case', 2), ('case', 2, 'answers', 1, 'when'), ...;
    arrays of tables count as lists: the n-th `[[case]]` is ('case', n),
    at its header.  An array's elements have only value positions."""
    scan = _Lines(text)
    scan.scan()
    return scan.found, scan.values


class _Lines:
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.line = 1
        self.line_start = 0         # the index where the current line starts
        self.found = {}
        self.values = {}
        self.arrays = {}            # path of an array of tables -> its tables so far

    def at(self):
        return (self.line, self.i - self.line_start + 1)

    def peek(self, k=0):
        j = self.i + k
        return self.s[j] if j < len(self.s) else ''

    def advance(self, n=1):
        for _ in range(n):
            if self.peek() == '\n':
                self.line += 1
                self.line_start = self.i + 1
            self.i += 1

    def skip_blank(self, newlines=True):
        while self.i < len(self.s):
            c = self.peek()
            if c == '#':
                while self.i < len(self.s) and self.peek() != '\n':
                    self.advance()
            elif c in ' \t\r' or (newlines and c == '\n'):
                self.advance()
            else:
                return

    def record(self, path, at):
        self.found.setdefault(tuple(path), at)

    def scan(self):
        table = ()
        while True:
            self.skip_blank()
            if self.i >= len(self.s):
                return self.found
            if self.peek() == '[':
                table = self.header()
            else:
                at = self.at()
                keys = self.key()
                self.record(table + keys, at)
                self.skip_blank(newlines=False)
                self.advance()              # '='
                self.skip_blank(newlines=False)
                self.value(table + keys)

    def header(self):
        many = self.peek(1) == '['
        at = self.at()
        self.advance(2 if many else 1)
        keys = self.key()
        self.advance(2 if many else 1)
        # A header's path goes through the latest table of each array of
        # tables it names: [[case.answers]] after the third [[case]] is
        # ('case', 2, 'answers', n).
        path = ()
        for k in keys[:-1]:
            path += (k,)
            if path in self.arrays:
                path += (self.arrays[path] - 1,)
        path += (keys[-1],)
        if many:
            self.arrays[path] = self.arrays.get(path, 0) + 1
            path += (self.arrays[path] - 1,)
        self.found.setdefault(path, at)
        return path

    def key(self):
        keys = []
        while True:
            self.skip_blank(newlines=False)
            c = self.peek()
            if c in '"\'':
                start = self.i
                self.string()
                raw = self.s[start:self.i]
                keys.append(raw[1:-1])
            else:
                start = self.i
                while self.peek() and (self.peek().isalnum() or self.peek() in '_-'):
                    self.advance()
                keys.append(self.s[start:self.i])
            self.skip_blank(newlines=False)
            if self.peek() == '.':
                self.advance()
                continue
            return tuple(keys)

    def string(self):
        q = self.peek()
        if self.s.startswith(q * 3, self.i):
            self.advance(3)
            while self.i < len(self.s):
                if q == '"' and self.peek() == '\\':
                    self.advance(2)
                elif self.s.startswith(q * 3, self.i):
                    self.advance(3)
                    while self.peek() == q:         # up to two quotes may end the text
                        self.advance()
                    return
                else:
                    self.advance()
            return
        self.advance()
        while self.i < len(self.s) and self.peek() != q:
            if q == '"' and self.peek() == '\\':
                self.advance()
            self.advance()
        self.advance()

    def value(self, path):
        self.values.setdefault(tuple(path), self.at())
        c = self.peek()
        if c == '[':
            self.advance()
            n = 0
            while True:
                self.skip_blank()
                if self.peek() in (']', ''):
                    self.advance()
                    return
                self.value(path + (n,))
                n += 1
                self.skip_blank()
                if self.peek() == ',':
                    self.advance()
        elif c == '{':
            self.advance()
            while True:
                self.skip_blank(newlines=False)
                if self.peek() in ('}', ''):
                    self.advance()
                    return
                at = self.at()
                keys = self.key()
                self.record(path + keys, at)
                self.advance()              # '='
                self.skip_blank(newlines=False)
                self.value(path + keys)
                self.skip_blank(newlines=False)
                if self.peek() == ',':
                    self.advance()
        elif c in '"\'':
            self.string()
        else:
            while self.peek() and self.peek() not in ',]}\n#':
                self.advance()
