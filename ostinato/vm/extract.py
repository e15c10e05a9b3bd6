"""The `extract` built-in: the times, durations, numbers and quantities a text names.

    extract(text, kinds = none, now = none, zone = none, prefer = 'future')

The words of the language are Duckling's (vm/duckling.py); what is here is
the part a skill needs around them: arguments checked with Ostinato errors,
the reference time (`now()`'s clock, the runtime's, by default: a virtual
one during an eval), the zone the results are given in, and the choice
between past and future for a time that recurs.  Duckling resolves "at 8"
to its next occurrence; a log wants the last one ("at 8" said at 21:00 is
20:00 today).  That choice is made by Duckling too, reading the text again
from a reference time one period (the step between the occurrences it
gave) earlier, so weekdays and months are its business, not ours; zones
and DST are Python's zoneinfo (vm/duckling.py says why not Duckling's).
And with the past preferred, a time that only lies ahead and holds a
duration ("5k in 28 min") is that duration: nothing logged happens later;
nor ends later: a recurring time beside the one duration the text names
is the last occurrence that ends by now ("30 mins at 6:30" said at 18:45).
A time of day is on the one day the text names apart ("yesterday - ...,
evening around 6"), as Duckling reads the two side by side.

Each result is a map: `kind`, `text` (the words), `start`, `end`
(character offsets, `text[start:end]`), and per kind the fields
docs/language.md §18.1 lists.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone, tzinfo
import os
import re
import sys
import zoneinfo

from . import duckling, limits, printing, timefmt
from .values import OList, OMap, OSet, OstError, kind

__all__ = ['b_extract', 'KINDS', 'MAX_TEXT']

# Ostinato's kind -> Duckling's dimension.
KINDS = {'time': 'time', 'duration': 'duration', 'number': 'number', 'ordinal': 'ordinal',
         'quantity': 'quantity', 'volume': 'volume', 'distance': 'distance',
         'temperature': 'temperature', 'money': 'amount-of-money'}
_KIND_OF = {v: k for k, v in KINDS.items()}
# Without `kinds`: what a log of things done needs.  Distance is left out
# because Duckling reads "5k in" as 5 inches; a skill that wants it asks.
DEFAULT_KINDS = ('time', 'duration', 'number', 'quantity', 'volume')

# Characters of one text: a Telegram message's most.  Duckling reads it in
# pieces (vm/duckling.py), so its time grows with the length; the worst
# text measured here (4,096 characters of nothing but clock times) takes a
# few seconds, a chat message milliseconds.
MAX_TEXT = 4096


def _err(text):
    return OstError('extract() ' + text)


def _reject(x):
    return OstError('extract() does not accept ' + kind(x))


def _kinds(kinds):
    if kinds is None:
        return list(DEFAULT_KINDS)
    if type(kinds) is str:
        names = [kinds]
    elif type(kinds) in (OList, tuple, OSet):
        names = list(kinds.items if type(kinds) is OList else
                     kinds.d if type(kinds) is OSet else kinds)
    else:
        raise _reject(kinds)
    out = []
    for k in names:
        if type(k) is not str:
            raise _reject(k)
        if k not in KINDS:
            raise _err('does not know the kind %s (the kinds: %s)'
                       % (printing.display(k), ', '.join(KINDS)))
        if k not in out:
            out.append(k)
    if not out:
        raise _err('needs at least one kind')
    return out


def _now(now):
    """The reference time as an aware datetime, and the tzinfo its text
    named (None when it named none)."""
    if now is None:
        seconds = timefmt.clock()
    elif type(now) in (int, float) and type(now) is not bool:
        seconds = now
    elif type(now) is str:
        try:
            dt = datetime.fromisoformat(now.strip())
        except ValueError:
            raise _err('cannot read the time %s' % printing.display(now)) from None
        try:
            return (dt if dt.tzinfo is not None else dt.astimezone()), dt.tzinfo
        except (OverflowError, OSError, ValueError):
            raise _err('time out of range') from None
    else:
        raise _reject(now)
    try:
        return datetime.fromtimestamp(seconds, timezone.utc), None
    except (OverflowError, OSError, ValueError):
        raise _err('time out of range') from None


def _local_zone_name():
    """The IANA name of the process's zone (what `now()` shows: $TZ, as an
    eval sets it for each simulated user, else /etc/localtime), when it
    can be told."""
    tz = os.environ.get('TZ')
    if tz is not None:
        name = tz.lstrip(':')
    else:
        try:
            name = os.path.realpath('/etc/localtime')
        except OSError:
            return None
    if '/zoneinfo/' in name:
        name = name.split('/zoneinfo/', 1)[1]
    try:
        zoneinfo.ZoneInfo(name)
    except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
        return None
    return name


def _zone(zone, now, named):
    """The tzinfo the results are given in."""
    if zone is not None:
        if type(zone) is not str:
            raise _reject(zone)
        try:
            return zoneinfo.ZoneInfo(zone)
        except (ValueError, OSError, zoneinfo.ZoneInfoNotFoundError):
            raise _err('does not know the time zone %s (an IANA name such as '
                       "'Europe/Paris')" % printing.display(zone)) from None
    if named is not None:
        return now.tzinfo
    name = _local_zone_name()
    if name is not None:
        return zoneinfo.ZoneInfo(name)
    return now.astimezone().tzinfo


class _Reader:
    """Duckling in one zone: it reads in UTC at the zone's wall clock
    (vm/duckling.py says why), and each time it gives is read back as a
    wall-clock time of the zone, its aware datetime put beside it as 'at'."""

    def __init__(self, tz: tzinfo):
        self.tz = tz

    def wall(self, now: datetime) -> datetime:
        return now.astimezone(self.tz).replace(tzinfo=None)

    def parse(self, text, dims, now: datetime):
        wall = self.wall(now)
        # Duckling reads a number of one or two digits after a comma as a
        # year ("at 5:30, 45 mins" was 05:30 in 2045); in a chat it starts
        # the next thing said.  A semicolon keeps the offsets and the times.
        text = _COMMA_NUMBER.sub(r';\1', text)
        text = _ALSO_WORDS.sub(_as_word, text)
        seconds = int(wall.replace(tzinfo=timezone.utc).timestamp())
        entities = duckling.parse(text, dims, seconds)
        if 'time' in dims:
            entities = _joined(text, entities, seconds)
        for e in entities:
            if e.get('dim') != 'time':
                continue
            value = e.get('value') or {}
            for v in [value] + list(value.get('values') or []):
                for node in (v, v.get('from'), v.get('to')):
                    if isinstance(node, dict) and isinstance(node.get('value'), str):
                        self._at(node)
        return entities

    def _at(self, node):
        """Put 'at' into one of Duckling's times, and 'fold1' when its wall
        clock time happens twice (the night clocks go back): the second."""
        try:
            naive = datetime.fromisoformat(node['value']).replace(tzinfo=None)
        except ValueError:
            return
        node['at'] = _wall(naive, self.tz)
        second = _wall(naive.replace(fold=1), self.tz)
        if _utc(second) != _utc(node['at']):
            node['fold1'] = second


# Names of days and months that are also common English words, which
# Duckling reads as dates anywhere and in any case: "at 6 for an hour, then
# sat in the sauna" was Saturday 18:00 to 20:00.  Written in lower case
# (a chat's habit for both) they are the words, but for a word beside them
# that makes them a date: before ("on sat", "last sun", "since wed", "in
# march") or after ("sat morning", "sat 7th", "sat at 6", "march 3").  A
# capital ("Sat") names the day.
_ALSO_WORDS = re.compile(r'\b(sat|sun|wed|march)\b')
_DATE_BEFORE = re.compile(r'\b(on|this|next|last|every|each|past|coming|by|till|til|until|since|'
                          r'from|before|after|in)\s+$', re.IGNORECASE)
_DATE_AFTER = re.compile(r'\s*(\d|(at\s+)\d|(morning|afternoon|evening|night|noon|am|pm)\b)',
                         re.IGNORECASE)


def _as_word(m):
    """One of _ALSO_WORDS as the word (blanked, so offsets stay), or as
    written when a word beside it makes it a date."""
    if _DATE_BEFORE.search(m.string, 0, m.start()) or _DATE_AFTER.match(m.string, m.end()):
        return m.group(0)
    return ' ' * len(m.group(0))


_BARE_HOUR = re.compile(r'(?<![\d:.])(\d{1,2})(?![\d:.])')


def _joined(text, entities, seconds):
    """Two time readings that share words, read as one where Duckling can:
    "4 to 5:30" is read as "4 to 5" (four minutes to five) beside "5:30",
    which the clock time after it rules out.  Their words are read again
    with each bare hour a clock time ("4:00 to 5:30", as Duckling reads
    "4 to 5:30pm"); one time reading of all of them replaces the two."""
    times = sorted((e for e in entities if e.get('dim') == 'time'), key=_span)
    for a, b in zip(times, times[1:]):
        if not (a['start'] < b['start'] < a['end'] < b['end']):
            continue
        start, end = a['start'], b['end']
        again = _BARE_HOUR.sub(r'\1:00', text[start:end])
        found = [e for e in duckling.parse(again, ['time'], seconds) if e.get('dim') == 'time']
        if len(found) != 1 or _span(found[0]) != (0, len(again)):
            continue
        whole = dict(found[0], start=start, end=end, body=text[start:end])
        return _joined(text, [e for e in entities if e is not a and e is not b] + [whole],
                       seconds)
    return entities


# A time counted from now in these units ("20 min ago", "in 2 hours") is
# now plus an amount of seconds, not a wall-clock time: across a DST change
# the two differ by an hour.  Days and longer are counted on the calendar.
_CLOCK_UNITS = ('second', 'minute', 'hour')


def _from_now(reader, now, entities, durations):
    """Set 'at' of the times counted from now in clock units (above)."""
    for e in entities:
        value = e.get('value') or {}
        values = value.get('values') or []
        # Duckling gives these the grain second or minute ("in 2 hours" is
        # now to the minute); only then is the text read for durations.
        if e.get('dim') != 'time' or len(values) != 1 or values[0].get('type') != 'value' \
                or not values[0].get('at') or values[0].get('grain') not in ('second', 'minute'):
            continue
        inside = [d for d in durations() if e['start'] <= d['start'] and d['end'] <= e['end']]
        if not inside or (inside[0].get('value') or {}).get('unit') not in _CLOCK_UNITS:
            continue
        naive = datetime.fromisoformat(values[0]['value']).replace(tzinfo=None)
        # In UTC: Python adds to an aware time of a zone on its wall clock.
        at = (now.astimezone(timezone.utc) + (naive - reader.wall(now))).astimezone(reader.tz)
        values[0]['at'] = value['at'] = at
        values[0].pop('fold1', None)
        value.pop('fold1', None)


def _settle(entities, now, prefer):
    """Of a wall-clock time that happens twice, the one on the side of
    `now` that `prefer` says (the first, when neither is)."""
    for e in entities:
        if e.get('dim') != 'time':
            continue
        value = e.get('value') or {}
        chosen = (value.get('values') or [value])[0]
        for node in (chosen, chosen.get('from'), chosen.get('to')):
            if not isinstance(node, dict) or not node.get('fold1'):
                continue
            both = [node['at'], node['fold1']]
            if prefer == 'past':
                fit = [t for t in both if _utc(t) <= _utc(now)]
                pick = max(fit, key=_utc) if fit else None
            else:
                fit = [t for t in both if _utc(t) >= _utc(now)]
                pick = min(fit, key=_utc) if fit else None
            if pick is not None:
                node['at'] = pick


def _wall(naive: datetime, tz: tzinfo) -> datetime:
    """A wall-clock time of `tz` as an aware datetime (an hour skipped by a
    DST change is read with the offset before it; one that happens twice,
    by its `fold`)."""
    aware = naive.replace(tzinfo=tz)
    try:
        return aware.astimezone(timezone.utc).astimezone(tz)
    except (OverflowError, ValueError):
        return aware


def _utc(t: datetime) -> datetime:
    """`t` in UTC: Python compares two times of one zone by their wall
    clocks, blind to the hour that happens twice."""
    return t.astimezone(timezone.utc)


def _instant(value: dict):
    """The aware datetime that dates one of Duckling's time values."""
    if value.get('type') == 'interval':
        side = value.get('from') or value.get('to') or {}
        return side.get('at')
    return value.get('at')


def _number(x):
    if type(x) is float and x.is_integer() and abs(x) < 2 ** 53:
        return int(x)
    return x


def _span(e):
    return (e.get('start'), e.get('end'))


def _past(reader, text, now, entities, kinds, durations):
    """The entities with the past preferred (module docstring)."""
    out = []
    redo: dict = {}     # period in seconds -> entities of a reading that much earlier
    for e in entities:
        if e.get('dim') != 'time':
            out.append(e)
            continue
        values = [v for v in e.get('value', {}).get('values', []) if _instant(v)]
        instants = [_instant(v) for v in values]
        if len(values) <= 1:
            later = instants and _utc(instants[0]) > _utc(now)
            if later and 'duration' in kinds:
                inside = [d for d in durations()
                          if e['start'] <= d['start'] and d['end'] <= e['end']]
                if inside:
                    out.append(inside[0])
                    continue
            out.append(e)
            continue
        period = max((b - a).total_seconds() for a, b in zip(instants, instants[1:]))
        if period <= 0:
            out.append(e)
            continue
        period = int(period)
        if e.get('_on_day'):
            # Its day is named (_on_the_day): its own occurrences are that day's.
            same = [e]
        else:
            if period not in redo:
                redo[period] = reader.parse(text, ['time'], now - timedelta(seconds=period))
            same = [x for x in redo[period] if x.get('dim') == 'time' and _span(x) == _span(e)]
        chosen = None
        # Of both readings: Duckling's own may hold the one meant ("today at
        # 7:00" said at 08:10 is 07:00 or 19:00 today; read 12 hours earlier,
        # yesterday's).
        earlier = values + ([v for v in same[0].get('value', {}).get('values', []) if _instant(v)]
                            if same else [])
        past = [v for v in earlier if _utc(_instant(v)) <= _utc(now)]
        if past:
            chosen = max(past, key=lambda v: _utc(_instant(v)))
        if chosen is not None and 'duration' in kinds:
            chosen = _ended(chosen, e, now, entities, durations)
        if chosen is not None:
            e = dict(e, value=dict(chosen, values=[chosen]))
        out.append(e)
    return out


def _ended(chosen, e, now, entities, durations):
    """Of a recurring time `chosen` for a log, the occurrence before it when
    the one duration the text names would end after now ("30 mins at 6:30"
    said at 18:45 began at 06:30): what is logged was done when it was
    told.  With several durations (or none) which one the
    time has is not told, and `chosen` stays."""
    times = [_span(x) for x in entities if x.get('dim') == 'time']
    free = [d for d in durations() if (d.get('value') or {}).get('normalized') and
            not any(a < d['end'] and d['start'] < b for a, b in times)]
    period = e.get('_period')
    if len(free) != 1 or not period or chosen.get('type') != 'value' or not chosen.get('at'):
        return chosen
    seconds = free[0]['value']['normalized']['value']
    if _utc(chosen['at']) + timedelta(seconds=seconds) <= _utc(now):
        return chosen
    tz = chosen['at'].tzinfo
    earlier = _wall(chosen['at'].replace(tzinfo=None) - timedelta(seconds=period), tz)
    if _utc(earlier) + timedelta(seconds=seconds) > _utc(now):
        return chosen
    # Its wall-clock time happens once here, as far as we know: the fold
    # of the later occurrence is not its.
    out = {k: v for k, v in chosen.items() if k != 'fold1'}
    out.update(at=earlier, value=earlier.replace(tzinfo=None).isoformat())
    return out


_GRAIN_SECONDS = {'second': 1, 'minute': 60, 'hour': 3600}


def _time_fields(m, value):
    if value.get('type') == 'interval':
        for side in ('from', 'to'):
            if (value.get(side) or {}).get('at'):
                m[side] = timefmt.iso(value[side]['at'])
        first = value.get('from') or value.get('to') or {}
        m['when'] = timefmt.iso(value['mid']) if value.get('mid') else m.get('from') or m.get('to')
        if first.get('grain'):
            m['grain'] = first['grain']
        # How long a span of clock times lasts ("7-7:30am", not "this
        # afternoon"): Duckling's `to` is the end of its grain (07:31), so one
        # grain less.
        ends = [(value.get(side) or {}).get('at') for side in ('from', 'to')]
        step = _GRAIN_SECONDS.get(((value.get('to') or {}).get('grain')))
        if ends[0] and ends[1] and step and any(c.isdigit() for c in m['text']):
            seconds = (_utc(ends[1]) - _utc(ends[0])).total_seconds() - step
            if seconds > 0:
                m['seconds'] = _number(seconds)
    else:
        m['when'] = timefmt.iso(value['at'])
        if value.get('grain'):
            m['grain'] = value['grain']


def _result(e, text):
    dim = e.get('dim')
    start, end = e.get('start'), e.get('end')
    m = {'kind': _KIND_OF.get(dim, dim), 'text': text[start:end], 'start': start, 'end': end}
    value = e.get('value') or {}
    if dim == 'time':
        chosen = (value.get('values') or [value])[0]
        if not _instant(chosen):
            return None
        _time_fields(m, chosen)
    elif dim == 'duration':
        seconds = (value.get('normalized') or {}).get('value')
        if seconds is not None:
            m['seconds'] = _number(seconds)
        m['value'] = _number(value.get('value'))
        m['unit'] = value.get('unit')
    elif value.get('type') == 'interval':
        for side in ('from', 'to'):
            if side in value and value[side].get('value') is not None:
                m[side] = _number(value[side]['value'])
                m['unit'] = value[side].get('unit')
    else:
        m['value'] = _number(value.get('value'))
        if value.get('unit'):
            m['unit'] = value['unit']
        if value.get('product'):
            m['product'] = value['product']
    return OMap({k: v for k, v in m.items() if v is not None})


def _on_the_day(reader, text, now, entities):
    """A time of day that recurs ("evening around 6") in a text naming one
    day apart from it ("yesterday - ..., evening around 6"),
    read as Duckling reads the two side by side ("yesterday evening around
    6"): Duckling joins them only when nothing comes between."""
    times = [e for e in entities if e.get('dim') == 'time']
    days = [e for e in times if _period(e) is None and _grain(e) == 'day']
    if len(days) != 1:
        return entities
    day = days[0]
    out = []
    for e in entities:
        if e in times and _period(e) is not None and _grain(e) in _CLOCK_UNITS:
            both = text[day['start']:day['end']] + ' ' + text[e['start']:e['end']]
            found = [x for x in reader.parse(both, ['time'], now) if x.get('dim') == 'time']
            if len(found) == 1 and _span(found[0]) == (0, len(both)) \
                    and _grain(found[0]) in _CLOCK_UNITS:
                e = dict(e, value=found[0]['value'], _on_day=True)
        out.append(e)
    return out


def _grain(e):
    value = e.get('value') or {}
    chosen = (value.get('values') or [value])[0]
    return (chosen.get('from') or chosen).get('grain') if chosen.get('type') == 'interval' \
        else chosen.get('grain')


def _period(e):
    """The step between the occurrences Duckling gave for a time, in
    seconds (43,200 for "at 8": am or pm), or None."""
    instants = [_instant(v) for v in (e.get('value') or {}).get('values') or []]
    instants = [t for t in instants if t is not None]
    steps = [(_utc(b) - _utc(a)).total_seconds() for a, b in zip(instants, instants[1:])]
    return int(min(steps)) if steps and min(steps) > 0 else None


def _hours(hours):
    """`hours` as (first, last), each an hour 0..23, or None."""
    if hours is None:
        return None
    items = hours.items if type(hours) is OList else hours if type(hours) is tuple else None
    if items is None or len(items) != 2 or not all(type(h) is int for h in items) \
            or not all(0 <= h <= 23 for h in items):
        raise _err('hours must be [first, last], two hours from 0 to 23, not %s'
                   % printing.display(hours))
    return items[0], items[1]


def _in_hours(t, hours):
    first, last = hours
    return first <= t.hour <= last if first <= last else (t.hour >= first or t.hour <= last)


def _fit(entities, now, tz, prefer, hours):
    """The time a skill means, of what Duckling gave: a clock time that
    could be am or pm ("at 8") in the span of `hours` the skill says it is
    likely in, on the side of `now` that `prefer` says; and an interval
    ("this morning", "after work") as its middle, within `hours` when they
    meet it, and with the past preferred, not after now."""
    for e in entities:
        if e.get('dim') != 'time':
            continue
        value = e.get('value') or {}
        chosen = (value.get('values') or [value])[0]
        period = e.get('_period')
        if chosen.get('type') == 'value' and chosen.get('at') and hours and period == 43200 \
                and not _in_hours(chosen['at'], hours):
            sign = -1 if prefer == 'past' else 1
            for k in (1, 2, 3):
                naive = chosen['at'].replace(tzinfo=None) + timedelta(seconds=sign * k * period)
                t = _wall(naive, tz)
                if _in_hours(t, hours) and (_utc(t) <= _utc(now) if prefer == 'past'
                                            else _utc(t) >= _utc(now)):
                    chosen['at'] = t
                    break
        elif chosen.get('type') == 'interval':
            start = (chosen.get('from') or {}).get('at')
            end = (chosen.get('to') or {}).get('at')
            if start is None or end is None or _utc(end) <= _utc(start):
                continue
            # Hours narrow an interval within a day ("this morning"), not a
            # week or a decade, which would be walked hour by hour.
            if hours and _utc(end) - _utc(start) <= timedelta(days=1):
                wall = start.replace(tzinfo=None, minute=0, second=0, microsecond=0)
                inside = []
                while wall < end.replace(tzinfo=None):
                    if hours[0] <= wall.hour <= hours[1]:
                        inside.append(wall)
                    wall += timedelta(hours=1)
                if inside:
                    start = _wall(inside[0], tz)
                    end = _wall(inside[-1] + timedelta(hours=1), tz)
            if prefer == 'past' and _utc(start) <= _utc(now) < _utc(end):
                end = now
            mid = _utc(start) + (_utc(end) - _utc(start)) / 2
            chosen['mid'] = mid.astimezone(tz).replace(second=0, microsecond=0)


_COMMA_NUMBER = re.compile(r',(\s*\d{1,2})(?!\d)')

# Units Duckling reads abbreviated alone ("2 hrs") but not in a longer
# amount ("4 and a half hrs" was "half hrs", 30 minutes), spelled out.
_ABBREVIATED = re.compile(r'\b(hrs?|mins?)\b', re.IGNORECASE)
_SPELLED = {'hr': 'hour', 'hrs': 'hours', 'min': 'minute', 'mins': 'minutes'}
# A bare number of minutes after hours, ending what is said ("an hour 15").
_MINUTES_AFTER = re.compile(r'[ \t]+(\d{1,2})(?=\s*(?:[^\w\s]|$))')


def _spelled_out(text):
    """`text` with its abbreviated units spelled out, and for each offset of
    it (and its end) the offset in `text`: (starts, ends)."""
    out, starts, ends, at = [], [], [0], 0
    for m in _ABBREVIATED.finditer(text):
        out.append(text[at:m.start()])
        starts.extend(range(at, m.start()))
        ends.extend(range(at + 1, m.start() + 1))
        word = _SPELLED[m.group(1).lower()]
        out.append(word)
        starts.extend([m.start()] * len(word))
        ends.extend([m.end()] * len(word))
        at = m.end()
    out.append(text[at:])
    starts.extend(range(at, len(text) + 1))
    ends.extend(range(at + 1, len(text) + 1))
    return ''.join(out), starts, ends


def _whole_durations(reader, text, entities, now):
    """The durations Duckling read in part, read whole: with abbreviated
    units spelled out ("4 and a half hrs"), and hours with the bare number
    of minutes after them ("an hour 15").  What the longer one holds goes."""
    def within(e, start, end):
        return start <= e['start'] and e['end'] <= end

    def replace(entities, whole):
        start, end = whole['start'], whole['end']
        if any(e.get('dim') == 'time' and e['start'] < end and start < e['end'] for e in entities):
            return entities
        return [e for e in entities if not within(e, start, end)] + [whole]

    if _ABBREVIATED.search(text):
        spelled, starts, ends = _spelled_out(text)
        for d in reader.parse(spelled, ['duration'], now):
            if d.get('dim') != 'duration':
                continue
            d = dict(d, start=starts[d['start']], end=ends[d['end']])
            inside = [e for e in entities if e.get('dim') == 'duration' and within(e, d['start'], d['end'])]
            if inside and all(_span(e) != _span(d) for e in inside):
                entities = replace(entities, d)
    for d in [e for e in entities if e.get('dim') == 'duration']:
        value = d.get('value') or {}
        seconds = (value.get('normalized') or {}).get('value')
        m = _MINUTES_AFTER.match(text, d['end'])
        if value.get('unit') != 'hour' or seconds is None or not m or not 0 < int(m.group(1)) < 60:
            continue
        minutes = int(seconds // 60) + int(m.group(1))
        entities = replace(entities, dict(d, end=m.end(), body=text[d['start']:m.end()], value=dict(
            value, value=minutes, unit='minute', normalized={'value': minutes * 60, 'unit': 'second'})))
    return entities


def b_extract(text, kinds, now, zone, prefer, hours=None):
    if type(text) is not str:
        raise _reject(text)
    if len(text) > MAX_TEXT:
        raise limits.too_large('extract() text', len(text), MAX_TEXT, 'characters')
    wanted = _kinds(kinds)
    if prefer is None:
        prefer = 'future'
    if type(prefer) is not str:
        raise _reject(prefer)
    if prefer not in ('past', 'future'):
        raise _err("prefer must be 'past' or 'future', got %s" % printing.display(prefer))
    window = _hours(hours)
    ref, named = _now(now)
    tz = _zone(zone, ref, named)
    try:
        reader = _Reader(tz)
        entities = reader.parse(text, [KINDS[k] for k in wanted], ref)
        if 'duration' in wanted:
            entities = _whole_durations(reader, text, entities, ref)
        found: list = []

        def durations():
            if not found:
                found.append(reader.parse(text, ['duration'], ref))
            return found[0]

        entities = _on_the_day(reader, text, ref, entities)
        if any(e.get('dim') == 'time' for e in entities):
            _from_now(reader, ref, entities, durations)
        for e in entities:
            if e.get('dim') == 'time':
                e['_period'] = _period(e)
        if prefer == 'past':
            entities = _past(reader, text, ref, entities, wanted, durations)
        _settle(entities, ref, prefer)
        _fit(entities, ref, tz, prefer, window)
    except duckling.Unavailable as e:
        raise _err('needs Duckling: %s' % e) from None
    except duckling.Failed:
        # Duckling died on this text (in its own process): what it cannot
        # read names nothing, as for any text it finds nothing in; the
        # operator hears of it.
        sys.stderr.write('ostinato: warning: Duckling failed on %s; extract() found nothing in it\n'
                         % printing.display(text if len(text) <= 60 else text[:57] + '...'))
        return OList([])
    results = []
    seen = set()
    for e in entities:
        r = _result(e, text)
        # Two readings of one span as one kind ("5k in": 5 and 5000 inches)
        # would be two answers to one question: the first is kept.
        key = (r.d['kind'], r.d['start'], r.d['end']) if r is not None else None
        if r is not None and r.d['kind'] in wanted and key not in seen:
            seen.add(key)
            results.append(r)
    results.sort(key=lambda r: (r.d['start'], r.d['end']))
    for r in results:
        if _unsure(text, r.d):
            r.d['unsure'] = True
    return OList(results)


# The language Duckling reads (vm/duckling.py's locale), for simplemma.
LANG = 'en'
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\s+$")


def _unsure(text, m):
    """Whether an amount said without a digit ("an hour", "a cup") follows
    a word no dictionary of the language knows: a typo may be what
    qualified it ("hafl an hour"), and neither Duckling nor simplemma mends
    one.  A time is no amount ("arond noon" is noon)."""
    if m['kind'] == 'time' or any(c.isdigit() for c in m['text']):
        return False
    before = _WORD_BEFORE.search(text[:m['start']])
    if before is None:
        return False
    import simplemma        # loaded on first use, as by lemma()
    return not simplemma.is_known(before.group(1).lower(), lang=LANG)
