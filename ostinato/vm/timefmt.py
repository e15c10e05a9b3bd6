"""Time for the `now`, `format_time`, `later`, `is_time`, `time_of_day`,
`clock_time` and `in_unit` built-ins (docs/language.md §18).

Times are ISO-8601 texts with a numeric UTC offset.  A skill reads what it
needs of one (its time of day, whether a text is one, a length in minutes)
through these, never by slicing texts or dividing seconds in Ostinato: the
calendar and the clock are Python's.  Formatting is done here with English
names rather than by `strftime`, whose names and padding depend on the C
library and the process locale.  `clock` is the source of the
current time; the runtime may replace it (a test clock, or the scheduler's
notion of now).
"""
from __future__ import annotations

import re
import time as _time
from datetime import datetime, timedelta, timezone

from . import limits
from .printing import quote_str
from .values import OstError, kind

__all__ = ['clock', 'now_iso', 'format_time', 'later', 'iso', 'iso_at', 'is_time', 'time_of_day',
           'clock_time', 'in_unit']

clock = _time.time

_DAYS = ('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday')
_MONTHS = ('January', 'February', 'March', 'April', 'May', 'June', 'July',
           'August', 'September', 'October', 'November', 'December')


def _offset(dt, sep):
    """±HH<sep>MM of an aware datetime (seconds of historic offsets dropped)."""
    secs = int(dt.utcoffset().total_seconds())
    sign = '-' if secs < 0 else '+'
    secs = abs(secs)
    return '%s%02d%s%02d' % (sign, secs // 3600, sep, secs // 60 % 60)


def iso(dt):
    """`YYYY-MM-DDTHH:MM:SS±HH:MM` of an aware datetime."""
    return '%04d-%02d-%02dT%02d:%02d:%02d%s' % (
        dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, _offset(dt, ':'))


def _local(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).astimezone()


def iso_at(seconds, tz=None):
    """The time `seconds` (Unix) in the IANA zone `tz`, in the `now()` form;
    in the server's local zone when tz is none or not a known zone."""
    if tz is not None:
        try:
            from zoneinfo import ZoneInfo
            zone = ZoneInfo(str(tz))
        except Exception:
            zone = None
        if zone is not None:
            return iso(datetime.fromtimestamp(seconds, timezone.utc).astimezone(zone))
    return iso(_local(seconds))


def now_iso():
    """The current local time in the `now()` form."""
    return iso(_local(clock()))


def _parse(t, who='format_time()'):
    """An aware datetime for format_time's `time` argument."""
    tt = type(t)
    if tt is str:
        try:
            dt = datetime.fromisoformat(t.strip())
        except ValueError:
            raise OstError("%s cannot read the time %s" % (who, quote_str(t))) from None
        try:
            # Without an offset the text is local time; astimezone() on a
            # naive datetime takes it so and attaches the local offset.
            return dt if dt.tzinfo is not None else dt.astimezone()
        except (OverflowError, OSError, ValueError):
            raise OstError(who + ' time out of range') from None
    if tt is int or tt is float:
        try:
            return _local(t)
        except (OverflowError, OSError, ValueError):
            raise OstError(who + ' time out of range') from None
    raise OstError(who + ' does not accept ' + kind(t))


def later(t, seconds):
    """later(time, seconds): the time `seconds` after `time` (before, when
    negative), in the `now()` form at time's offset.  A skill places one
    thing by another ("right after the meeting": its start and its length)
    without arithmetic on clock times of its own."""
    dt = _parse(t, 'later()')
    if type(seconds) not in (int, float):
        raise OstError('later() does not accept %s as seconds' % kind(seconds))
    try:
        # In UTC, then back: Python adds to an aware time on its wall clock.
        return iso((dt.astimezone(timezone.utc) + timedelta(seconds=seconds)).astimezone(dt.tzinfo))
    except (OverflowError, OSError, ValueError):
        raise OstError('later() time out of range') from None


# The `now()` form, in ASCII digits (`\d` would take any script's).
_NOW_FORM = re.compile(r'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}')


def is_time(value):
    """is_time(value): whether `value` is a text in the `now()` form naming
    a real time.  Any other value is simply not one: a model's reply is
    tested before it is used as a time."""
    if type(value) is not str or _NOW_FORM.fullmatch(value) is None:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _hours(dt):
    return dt.hour + dt.minute / 60 + dt.second / 3600


def time_of_day(t):
    """time_of_day(time): the hours since midnight on time's own wall
    clock, as a number (07:30 is 7.5), to compare with a skill's hours."""
    return _hours(_parse(t, 'time_of_day()'))


_CLOCK = re.compile(r'([0-9]{1,2}):([0-9]{2})')


def clock_time(text):
    """clock_time(text): a clock text of the 24-hour clock ("7:15",
    "13:05") as hours since midnight, or none when the text is not one: the
    words a user or a model wrote are tested, not trusted."""
    if type(text) is not str:
        raise OstError('clock_time() does not accept ' + kind(text))
    m = _CLOCK.fullmatch(text.strip())
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        return None
    return int(m.group(1)) + int(m.group(2)) / 60


# Units of a fixed length.  A month or a year is not one.
_UNITS = {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400, 'week': 604800}


def in_unit(seconds, unit):
    """in_unit(seconds, unit): how many `unit`s the seconds are (1680
    seconds are 28 minutes); an unknown unit is an error naming it."""
    if type(seconds) not in (int, float):
        raise OstError('in_unit() does not accept %s as seconds' % kind(seconds))
    if type(unit) is not str:
        raise OstError('in_unit() does not accept %s as unit' % kind(unit))
    if unit not in _UNITS:
        raise OstError('in_unit() does not know the unit %s (the units: %s)'
                       % (quote_str(unit), ', '.join(_UNITS)))
    return seconds / _UNITS[unit]


def _code(dt, c):
    if c == 'Y':
        return '%04d' % dt.year
    if c == 'm':
        return '%02d' % dt.month
    if c == 'd':
        return '%02d' % dt.day
    if c == 'H':
        return '%02d' % dt.hour
    if c == 'M':
        return '%02d' % dt.minute
    if c == 'S':
        return '%02d' % dt.second
    if c == 'y':
        return '%02d' % (dt.year % 100)
    if c == 'j':
        return '%03d' % dt.timetuple().tm_yday
    if c == 'z':
        return _offset(dt, '')
    if c == 'a':
        return _DAYS[dt.weekday()][:3]
    if c == 'A':
        return _DAYS[dt.weekday()]
    if c == 'b':
        return _MONTHS[dt.month - 1][:3]
    if c == 'B':
        return _MONTHS[dt.month - 1]
    if c == 'p':
        return 'AM' if dt.hour < 12 else 'PM'
    if c == '%':
        return '%'
    raise OstError("format_time() does not know the format code '%%%s'" % c)


def format_time(t, fmt=None):
    """format_time(time, format): the `now()` form without a format."""
    dt = _parse(t)
    if fmt is None:
        return iso(dt)
    if type(fmt) is not str:
        raise OstError('format_time() does not accept ' + kind(fmt))
    out = []
    i = 0
    n = len(fmt)
    size = 0        # a code may make several times its length ('%B'): held to the limit
    while i < n:
        j = fmt.find('%', i)
        if j < 0:
            out.append(fmt[i:])
            break
        out.append(fmt[i:j])
        if j + 1 >= n:
            raise OstError("format_time() format ends with a lone '%'")
        code = _code(dt, fmt[j + 1])
        size += j - i + len(code)
        if size > limits.MAX_STRING:
            limits.check_string(size)
        out.append(code)
        i = j + 2
    return ''.join(out)
