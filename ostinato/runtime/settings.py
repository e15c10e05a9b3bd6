"""The operator's numeric settings: each parsed in one place, with its range.

A setting comes from the environment (and some also from a flag).  A value
that is not a number, or is out of range, must not crash a command with a
Python traceback -- nor, worse, switch a guard off: `nan` compares false with
everything, so a turn limit of `nan` (or `inf`, or `1e400`, which Python
reads as inf) let an endless loop run for ever.  So every setting is read
through `value()`, which gives a finite number in its range or raises
SettingError, one line that names the setting; the command line checks them
all before anything runs (`check_environment`) and exits 2.

Code that reads a setting while it is imported (the scheduler's class
attributes) uses `value(..., strict=False)`: the default for a bad value,
which the command line has refused already.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Union

Number = Union[int, float]


class SettingError(ValueError):
    """A setting's value is not a number in its range; the message is one
    line that names the setting and the value."""


@dataclass(frozen=True)
class Setting:
    name: str               # the environment variable
    kind: type              # int or float
    default: Number
    low: Number             # the smallest value allowed
    high: Number            # the largest
    unit: str               # what it counts, for the message
    low_open: bool = False  # the value must be more than `low`, not equal to it

    def describe(self):
        whole = 'a whole number of ' if self.kind is int else 'a number of '
        if self.low_open:
            return '%s%s more than %s and at most %s' % (whole, self.unit, _num(self.low),
                                                         _num(self.high))
        return '%s%s from %s to %s' % (whole, self.unit, _num(self.low), _num(self.high))

    def parse(self, raw, source=None):
        """`raw` (text, or a number from a flag) as a number in range;
        raises SettingError naming `source` (the flag) or the variable."""
        what = source or self.name
        text = str(raw).strip()
        try:
            number: Number = int(text) if self.kind is int else float(text)
        except (ValueError, OverflowError):
            number = math.nan
        if isinstance(number, float) and not math.isfinite(number) or \
                number < self.low or number > self.high or \
                (self.low_open and number == self.low):
            shown = text if len(text) <= 40 else text[:37] + '...'
            raise SettingError('%s must be %s (default %s), not %r'
                               % (what, self.describe(), _num(self.default), shown))
        return number


def _num(n):
    return '{:,}'.format(n) if isinstance(n, int) else '%g' % n


DAY = 86400
SETTINGS = {s.name: s for s in [
    Setting('OSTINATO_TURN_LIMIT', float, 30.0, 0.1, 7 * DAY, 'seconds'),
    Setting('OSTINATO_MAX_DEPTH', int, 50000, 1, 10 ** 7, 'calls'),
    Setting('OSTINATO_MAX_CRASHES', int, 3, 1, 10 ** 9, 'crashes'),
    Setting('OSTINATO_CACHE_OBJECTS', int, 20000, 1, 10 ** 9, 'objects'),
    Setting('OSTINATO_LLM_TIMEOUT', float, 300.0, 0, 7 * DAY, 'seconds', low_open=True),
    Setting('TELEGRAM_POLL_TIMEOUT', int, 30, 0, 50, 'seconds'),
]}


# Settings that are yes or no.
YES, NO = ('1', 'true', 'yes', 'on'), ('', '0', 'false', 'no', 'off')
SWITCHES = ('TELEGRAM_GROUPS',)


def switch(name, environ=None):
    """A yes-or-no setting; anything else raises SettingError (a typo must
    not quietly mean no)."""
    raw = (os.environ if environ is None else environ).get(name) or ''
    text = raw.strip().lower()
    if text in YES:
        return True
    if text in NO:
        return False
    raise SettingError('%s must be 1, true, yes or on (or 0, false, no, off), not %r'
                       % (name, raw[:40]))


def value(name, strict=True, environ=None) -> Number:
    """The setting `name` from the environment, or its default when unset
    or empty.  A bad value raises SettingError (with `strict`) or gives the
    default."""
    setting = SETTINGS[name]
    raw = (os.environ if environ is None else environ).get(name)
    if raw is None or not raw.strip():
        return setting.default
    try:
        return setting.parse(raw)
    except SettingError:
        if strict:
            raise
        return setting.default


def parse(name, raw, source=None) -> Number:
    """A value given for the setting `name` some other way (a flag named
    `source`), checked as the variable's would be."""
    return SETTINGS[name].parse(raw, source)


def check_environment(environ=None):
    """Raise SettingError for the first setting in the environment whose
    value is bad."""
    for name in SETTINGS:
        value(name, environ=environ)
    for name in SWITCHES:
        switch(name, environ)
