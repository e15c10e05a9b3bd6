"""Time for the `now`, `format_time` and `later` built-ins (docs/language.md §18).

Times are ISO-8601 texts with a numeric UTC offset.  Formatting is done here
with English names rather than by `strftime`, whose names and padding depend
on the C library and the process locale.  `clock` is the source of the
current time; the runtime may replace it (a test clock, or the scheduler's
notion of now).
"""
from __future__ import annotations

import time as _time
from datetime import datetime, timedelta, timezone

from . import limits
from .printing import quote_str
from .values import OstError, kind

__all__ = ['clock', 'now_iso', 'format_time', 'later', 'iso', 'iso_at']

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
