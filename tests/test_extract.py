"""The `extract` built-in (docs/language.md §18): the times, durations, numbers
and quantities a text names, each with its span, resolved in the user's zone
against a reference time, with the past or the future preferred.

Duckling must be installed (`make test` installs it; by hand:
`python tools/install_duckling.py`): without it these tests fail, never skip.
Most run the built-in from .ost code through the real VM; a few call the
Python function directly to cover what .ost cannot reach (a broken install).
"""
import io
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ostinato.runtime.runner import run_file
from ostinato.vm import duckling, extract
from ostinato.vm.values import OList

NY_EVENING = '2026-12-04T21:00:00-05:00'     # a Friday, 9 pm in New York
NY_AFTERNOON = '2026-12-04T15:04:00-05:00'


def run_ost(tmp_path, source):
    """Run .ost source with the real VM; (stdout, stderr)."""
    path = tmp_path / 'prog.ost'
    path.write_text(textwrap.dedent(source))
    out, err = io.StringIO(), io.StringIO()
    run_file(str(path), out, err)
    return out.getvalue(), err.getvalue()


def ex(text, kinds=None, now=NY_AFTERNOON, zone='America/New_York', prefer='past', hours=None):
    """extract() called as .ost calls it (missing arguments as None)."""
    if isinstance(kinds, list):
        kinds = OList(kinds)
    if isinstance(hours, list):
        hours = OList(hours)
    return [dict(m.d) for m in extract.b_extract(text, kinds, now, zone, prefer, hours).items]


def one(text, **kw):
    found = ex(text, **kw)
    assert len(found) == 1, found
    return found[0]


def test_duckling_is_installed():
    """Not a skip: a machine without Duckling fails here, saying what to run."""
    assert duckling.parse('at 8', ['time'], 0), \
        'Duckling is missing: run `python tools/install_duckling.py`'


# ------------------------------------------------------------ the phrases

@pytest.mark.parametrize('text, when', [
    ('around 12:30', '2026-12-04T12:30:00-05:00'),
    ('20 min ago', '2026-12-04T14:44:00-05:00'),
    ('half an hour ago', '2026-12-04T14:34:00-05:00'),
    ('quarter past 12', '2026-12-04T12:15:00-05:00'),
    ('at 7.30 this morning', '2026-12-04T07:30:00-05:00'),
    ('at 7:15 this morning', '2026-12-04T07:15:00-05:00'),
    ('yesterday at 9pm', '2026-12-03T21:00:00-05:00'),
    ('at 8', '2026-12-04T08:00:00-05:00'),     # said at 15:04: this morning
])
def test_times_a_log_names_are_in_the_past(text, when):
    m = one(text)
    assert (m['kind'], m['text'], m['start'], m['end'], m['when']) == \
        ('time', text, 0, len(text), when)


def test_a_bare_clock_time_is_the_last_one_for_a_log_and_the_next_one_for_a_reminder():
    assert one('at 8', now=NY_EVENING, prefer='past')['when'] == '2026-12-04T20:00:00-05:00'
    assert one('at 8', now=NY_EVENING, prefer='future')['when'] == '2026-12-05T08:00:00-05:00'
    assert one('at 8', now=NY_EVENING, prefer=None)['when'] == '2026-12-05T08:00:00-05:00'


def test_with_the_past_preferred_the_latest_reading_not_after_now_wins():
    # exercise-blind4: "today at 7:00" said at 08:10 is Duckling's 07:00 or
    # 19:00 today; read again 12 hours earlier it is yesterday's, and today's
    # 07:00 was lost to yesterday's 19:00.
    morning = '2026-12-04T08:10:00-05:00'
    assert one('today at 7:00', now=morning)['when'] == '2026-12-04T07:00:00-05:00'
    assert one('today at 7', now=morning)['when'] == '2026-12-04T07:00:00-05:00'
    assert one('at 7', now=morning)['when'] == '2026-12-04T07:00:00-05:00'
    assert one('at 9', now=morning)['when'] == '2026-12-03T21:00:00-05:00'


def test_a_number_after_a_comma_is_no_year():
    # Duckling read "5:30, 45" as 05:30 in 2045 (exercise-blind2: "a hiit
    # class at 5pm, no sorry 5:30, 45 mins").
    found = ex('a hiit class at 5pm, no sorry 5:30, 45 mins', now=NY_EVENING)
    assert [(m['text'], m.get('when') or m['seconds']) for m in found] == [
        ('at 5pm', '2026-12-04T17:00:00-05:00'), ('5:30', '2026-12-04T17:30:00-05:00'),
        ('45 mins', 2700)]
    assert one('on May 4, 2019 at 8am', kinds=['time'])['when'].startswith('2019-05-04T08:00')


def test_a_past_time_beside_a_duration_ended_by_now():
    """With the past preferred, something done for the one duration a text
    names ended by the time it was told: "30 mins ... at 6:30" said at 18:45
    began at 06:30, not at 18:30 (exercise-blind3)."""
    at = '2026-11-21T18:45:00-07:00'
    found = ex('30 mins on the elliptical at 6:30', kinds=['time', 'duration'], now=at,
               zone='America/Denver')
    assert [(m['text'], m.get('when') or m['seconds']) for m in found] == [
        ('30 mins', 1800), ('at 6:30', '2026-11-21T06:30:00-07:00')]
    # What fits ends by now; the future is not moved; nor a time read
    # without its durations.
    assert one('30 mins at 6:30', kinds=['time'], now=at, zone='America/Denver')['when'] \
        == '2026-11-21T18:30:00-07:00'
    assert ex('10 mins at 6:30', kinds=['time', 'duration'], now=at,
              zone='America/Denver')[1]['when'] == '2026-11-21T18:30:00-07:00'
    assert ex('30 mins at 6:30', kinds=['time', 'duration'], now=at, zone='America/Denver',
              prefer='future')[1]['when'] == \
        one('at 6:30', kinds=['time'], now=at, zone='America/Denver', prefer='future')['when']
    # Two durations: which one the time has is not told.
    assert ex('30 mins at 6:30, then 5 min', kinds=['time', 'duration'], now=at,
              zone='America/Denver')[1]['when'] == '2026-11-21T18:30:00-07:00'


def test_an_amount_an_unknown_word_may_qualify_is_unsure():
    """An amount with no digit ("an hour") right after a word no English
    dictionary knows may have lost that word: "hafl an hour" is half of one
    (exercise-blind2).  Duckling mends no typo, so the reading is marked."""
    assert one('wnet swimming arond 12, hafl an hour', kinds=['duration'])['unsure'] is True
    for text in ('swam for like an hour lol', 'abt 30 min', 'hafl 30 min', 'half an hour'):
        assert 'unsure' not in one(text, kinds=['duration']), text
    assert 'unsure' not in one('arond noon', kinds=['time'])


def test_overlapping_readings_of_a_span_of_clock_times_are_read_as_one():
    """Duckling reads "4 to 5:30" as "4 to 5" (four minutes to five) beside
    "5:30": the clock time after it rules that out.  The whole is read again
    with its bare hours as clock times ("4:00 to 5:30"), as Duckling reads
    "4:00 to 5:30" and "4 to 5:30pm" (exercise-blind3)."""
    at = '2026-11-21T18:45:00-07:00'
    m = one('bball w the guys 4 to 5:30', kinds=['time'], now=at, zone='America/Denver')
    assert (m['text'], m['from'], m['seconds']) == ('4 to 5:30', '2026-11-21T16:00:00-07:00', 5400)
    m = one('swam 10 to 11:45 today', kinds=['time'], now=at, zone='America/Denver')
    assert (m['text'], m['from'], m['seconds']) == ('10 to 11:45 today',
                                                    '2026-11-21T10:00:00-07:00', 6300)
    # No overlap, nothing read again: "10 to 5" is ten minutes to five.
    assert one('at 10 to 5', kinds=['time'], now=at, zone='America/Denver')['when'] \
        == '2026-11-21T16:50:00-07:00'


def test_a_time_of_day_is_on_the_day_the_text_names_apart():
    """Duckling reads "yesterday" apart from "evening around 6" when other
    words come between: the time of day is on that day (exercise-blind3)."""
    late = '2026-11-21T21:00:00-07:00'
    found = ex('forgot to log yesterday - swam 40 laps, took about 50 min, evening around 6',
               kinds=['time'], now=late, zone='America/Denver')
    assert [(m['text'], m['when']) for m in found] == [
        ('yesterday', '2026-11-20T00:00:00-07:00'), ('evening around 6', '2026-11-20T18:00:00-07:00')]
    # Am or pm: the last one of that day before now.
    assert ex('it was yesterday. around 6 i think', kinds=['time'], now=late,
              zone='America/Denver')[-1]['when'] == '2026-11-20T18:00:00-07:00'
    # A time that names its own day keeps it; two days name none.
    found = ex('yesterday, and at 7 this morning', kinds=['time'], now=late, zone='America/Denver')
    assert found[-1]['when'] == '2026-11-21T07:00:00-07:00'
    found = ex('yesterday or today, at 6', kinds=['time'], now=late, zone='America/Denver')
    assert found[-1]['when'] == '2026-11-21T18:00:00-07:00'


def test_a_day_name_that_is_also_a_word_is_a_day_only_when_said_as_one():
    """Duckling reads "sat", "sun", "wed" and "march" as days and a month in
    any case and anywhere: "at 6 for an hour, then sat in the sauna" became
    Saturday 18:00 to 20:00 (exercise-blind4).  Written in lower case they
    are the words, but for a word before or after that makes them a date
    ("on sat", "last sun", "sat morning", "march 3")."""
    at = '2025-06-10T21:45:00-05:00'        # a Tuesday
    kw = dict(kinds=['time', 'duration'], now=at, zone='America/Chicago')
    found = ex('kickbxing class at 6 for an hour, sat in the sauna 20 min', **kw)
    assert [(m['text'], m.get('from') or m.get('seconds')) for m in found] == [
        ('at 6 for an hour', '2025-06-10T18:00:00-05:00'), ('20 min', 1200)]
    for text in ('i sat there a while', 'the sun was out', 'we march on', 'wed the girl'):
        assert ex(text, **kw) == [], text
    for text, when in [('ran on sat', '2025-06-07'), ('last sun', '2025-06-08'),
                       ('a long run sat morning', '2025-06-07'), ('Sat', '2025-06-07'),
                       ('sat 7th', '2025-06-07'), ('since wed', '2025-06-04'),
                       ('march 3', '2025-03-03')]:
        assert one(text, **kw)['when'][:10] == when, text


def test_hours_choose_am_or_pm_where_the_skill_knows_the_likely_hours():
    """A clock time that may be am or pm is read within the skill's hours
    (a meal's) when one reading is; a time said with am/pm is not moved."""
    assert one('eggs at 8', kinds=['time'], now=NY_EVENING, hours=[5, 11])['when'] \
        == '2026-12-04T08:00:00-05:00'
    assert one('eggs at 8', kinds=['time'], now=NY_EVENING)['when'] == '2026-12-04T20:00:00-05:00'
    assert one('dinner at 8', kinds=['time'], hours=[17, 22])['when'] \
        == '2026-12-03T20:00:00-05:00'                   # said at 15:04: yesterday's
    assert one('at 8', kinds=['time'], prefer='future', hours=[5, 11])['when'] \
        == '2026-12-05T08:00:00-05:00'
    assert one('at 8pm', kinds=['time'], now=NY_EVENING, hours=[5, 11])['when'] \
        == '2026-12-04T20:00:00-05:00'


def test_hours_narrow_an_interval_within_a_day_only():
    """A week or a decade is not walked hour by hour for the skill's hours:
    its middle is the same with them as without."""
    for text in ('from monday to friday', 'this weekend', 'between 2020 and 2023'):
        assert ex(text, kinds=['time'], prefer='future', hours=[5, 11]) \
            == ex(text, kinds=['time'], prefer='future'), text


def test_an_interval_is_its_middle_not_after_now_for_a_log():
    assert one('this afternoon', kinds=['time'], now=NY_EVENING)['when'] == '2026-12-04T15:30:00-05:00'
    assert one('tonight', kinds=['time'], now=NY_EVENING)['when'] == '2026-12-04T19:30:00-05:00'
    assert one('this morning', kinds=['time'], hours=[5, 11])['when'] == '2026-12-04T08:30:00-05:00'


@pytest.mark.parametrize('hours', [[5], [5, 24], ['5', '11'], 7])
def test_bad_hours_are_an_error(hours):
    with pytest.raises(Exception, match='hours must be'):
        ex('at 8', hours=hours)


def test_the_past_is_chosen_by_the_calendar_not_by_a_fixed_step():
    assert one('on monday')['when'] == '2026-11-30T00:00:00-05:00'
    assert one('on monday', prefer='future')['when'] == '2026-12-07T00:00:00-05:00'
    assert one('the 5th')['when'] == '2026-11-05T00:00:00-05:00'


def test_a_duration_is_not_a_time():
    m = one('did 30 minutes of yoga')
    assert m == {'kind': 'duration', 'text': '30 minutes', 'start': 4, 'end': 14,
                 'seconds': 1800, 'value': 30, 'unit': 'minute'}
    assert one('an hour and a half')['seconds'] == 5400


def test_a_duration_is_read_whole_not_in_part():
    # exercise-blind4: Duckling read "4 and a half hrs" as "half hrs" (it
    # reads "4 and a half hours" whole), and "like an hour 15" as an hour.
    assert one('4 and a half hrs', kinds=['duration'])['seconds'] == 16200
    m = one('took like 4 and a half hrs 🙄 shot a 97', kinds=['duration'])
    assert (m['text'], m['seconds']) == ('4 and a half hrs', 16200)
    assert [(m['kind'], m['text']) for m in ex('1 and a half hrs')] == [('duration', '1 and a half hrs')]
    m = one('ok like an hour 15', kinds=['duration', 'number'])
    assert (m['text'], m['seconds'], m['value'], m['unit']) == ('an hour 15', 4500, 75, 'minute')
    assert one('2 hrs 30', kinds=['duration'])['seconds'] == 9000
    # A number counting something else, or minutes already said, is not added.
    assert [m['text'] for m in ex('an hour 15 laps', kinds=['duration'])] == ['an hour']
    assert [m['text'] for m in ex('an hour 15 min', kinds=['duration'])] == ['an hour', '15 min']
    assert [m['text'] for m in ex('an hour, 15', kinds=['duration'])] == ['an hour']
    assert [m['text'] for m in ex('20 mins, 2 hrs', kinds=['duration'])] == ['20 mins', '2 hrs']


def test_with_the_past_preferred_in_n_minutes_is_a_duration():
    """"5k in 28 min": nothing logged happens 28 minutes from now."""
    assert ex('5k in 28 min') == [
        {'kind': 'number', 'text': '5k', 'start': 0, 'end': 2, 'value': 5000},
        {'kind': 'duration', 'text': '28 min', 'start': 6, 'end': 12,
         'seconds': 1680, 'value': 28, 'unit': 'minute'}]
    future = ex('5k in 28 min', prefer='future')
    assert future[1]['kind'] == 'time' and future[1]['when'] == '2026-12-04T15:32:00-05:00'
    # Asked for times only, it stays what the words say.
    assert one('5k in 28 min', kinds=['time'])['kind'] == 'time'


def test_numbers_and_quantities():
    assert one('3 coffees') == {'kind': 'number', 'text': '3', 'start': 0, 'end': 1, 'value': 3}
    assert one('2 cups of coffee') == {'kind': 'quantity', 'text': '2 cups of coffee',
                                       'start': 0, 'end': 16, 'value': 2, 'unit': 'cup',
                                       'product': 'coffee'}
    assert one('500 ml water')['unit'] == 'millilitre'
    assert one('5 km run', kinds=['distance'])['unit'] == 'kilometre'
    assert one('the 2nd one', kinds='ordinal')['value'] == 2
    assert one('it was $5', kinds=['money'])['value'] == 5


def test_an_interval_has_its_ends():
    m = one('between 2 and 3pm', prefer='future')
    assert m['from'] == '2026-12-04T14:00:00-05:00'
    assert m['to'] == '2026-12-04T16:00:00-05:00'      # the end of the hour 3pm
    assert m['when'] == '2026-12-04T15:00:00-05:00'    # its middle


# ------------------------------------------------------------ spans

def test_spans_are_offsets_into_the_text_even_past_emoji_and_accents():
    text = 'café 🍕 at 8, then 2 slices at “noon”'
    found = ex(text, kinds=['time'])
    assert [text[m['start']:m['end']] for m in found] == [m['text'] for m in found]
    assert [m['text'] for m in found] == ['at 8', 'noon']


def test_a_long_text_is_read_whole_in_pieces():
    """Duckling's time grows with the square of the length, so a long text
    is read in pieces: nothing is lost or misplaced at their seams."""
    sentence = 'Had 2 eggs at 8, then 30 minutes of yoga'
    text = '. '.join([sentence] * 60) + ' and a nap at 3pm'
    assert len(text) > 2000
    found = ex(text, kinds=['time', 'duration'])
    assert [m['text'] for m in found] == ['at 8', '30 minutes'] * 60 + ['at 3pm']
    assert all(text[m['start']:m['end']] == m['text'] for m in found)
    assert ex('x ' * 150 + 'at 8' + ' y' * 150, kinds='time')[0]['start'] == 300


def test_results_come_in_the_order_of_the_text():
    found = ex('at 8 had 2 eggs, 20 min ago a coffee')
    assert [m['start'] for m in found] == sorted(m['start'] for m in found)
    assert [m['text'] for m in found] == ['at 8', '2', '20 min ago']


def test_nothing_found_is_an_empty_list():
    assert ex('just some words') == []
    assert ex('') == []


# ------------------------------------------------------------ zones and DST

def test_the_zone_is_an_iana_name_else_the_offset_of_now():
    assert one('at 8', now=NY_EVENING, zone='Asia/Kolkata', prefer='future')['when'] \
        == '2026-12-05T08:00:00+05:30'        # 21:00 in New York is 07:30 in Kolkata
    assert one('at 8', now=NY_EVENING, zone='UTC')['when'] == '2026-12-04T20:00:00+00:00'
    assert one('at 8', now=NY_EVENING, zone='Europe/Paris')['when'] \
        == '2026-12-04T20:00:00+01:00'
    assert one('at 8', now='2026-12-04T21:00:00+05:45', zone=None)['when'] \
        == '2026-12-04T20:00:00+05:45'


def test_dst_in_new_york():
    zone = 'America/New_York'
    # Spring forward, 2026-03-08 at 02:00 EST: 03:10 EDT is 07:10 UTC.
    assert one('20 min ago', now='2026-03-08T03:10:00-04:00', zone=zone)['when'] \
        == '2026-03-08T01:50:00-05:00'
    assert one('at 8', now='2026-03-08T09:00:00-04:00', zone=zone)['when'] \
        == '2026-03-08T08:00:00-04:00'
    assert one('yesterday at 9pm', now='2026-03-08T09:00:00-04:00', zone=zone)['when'] \
        == '2026-03-07T21:00:00-05:00'
    assert one('tomorrow at 9', now='2026-03-07T23:30:00-05:00', zone=zone,
               prefer='future')['when'] == '2026-03-08T09:00:00-04:00'
    # Fall back, 2026-11-01.
    assert one('in 2 hours', now='2026-11-01T00:30:00-04:00', zone=zone, kinds=['time'],
               prefer='future')['when'] == '2026-11-01T01:30:00-05:00'
    # 01:00 to 02:00 happens twice that night: the one meant is the one
    # on the side of `now` that `prefer` says.
    assert one('at 1:30', now='2026-11-01T01:50:00-04:00', zone=zone)['when'] \
        == '2026-11-01T01:30:00-04:00'
    assert one('at 1:30', now='2026-11-01T01:50:00-05:00', zone=zone)['when'] \
        == '2026-11-01T01:30:00-05:00'
    assert one('at 1:30', now='2026-11-01T01:10:00-05:00', zone=zone, prefer='future')['when'] \
        == '2026-11-01T01:30:00-05:00'
    assert one('at 1:30', now='2026-11-01T01:10:00-04:00', zone=zone, prefer='future')['when'] \
        == '2026-11-01T01:30:00-04:00'


def test_now_may_be_seconds_and_defaults_to_the_runtime_clock(monkeypatch):
    from ostinato.vm import timefmt
    at = 1796400000          # 2026-12-04T16:00:00Z
    assert one('at 8', now=at, zone='UTC', prefer='future')['when'] \
        == '2026-12-04T20:00:00+00:00'
    monkeypatch.setattr(timefmt, 'clock', lambda: at)
    assert one('at 8', now=None, zone='UTC', prefer='future')['when'] \
        == '2026-12-04T20:00:00+00:00'


@pytest.fixture
def process_zone(monkeypatch):
    """Set the process's zone as an eval does for each simulated user."""
    def set_zone(name):
        monkeypatch.setenv('TZ', name)
        time.tzset()
    yield set_zone
    monkeypatch.undo()
    time.tzset()


def test_without_zone_or_offset_the_process_zone_is_used(process_zone):
    at = 1796400000          # 2026-12-04T16:00:00Z
    process_zone('Asia/Tokyo')
    assert one('at 8', now=at, zone=None, prefer='future')['when'] == '2026-12-05T08:00:00+09:00'
    process_zone('America/New_York')
    assert one('20 min ago', now=at, zone=None)['when'] == '2026-12-04T10:40:00-05:00'
    # A POSIX rule, not a zone name: its offset now.
    process_zone('XYZ-3')
    assert one('at 8', now=at, zone=None)['when'] == '2026-12-04T08:00:00+03:00'


# ------------------------------------------------------------ errors

@pytest.mark.parametrize('call, message', [
    ("extract(3)", "extract() does not accept int"),
    ("extract('x', kinds = 'colour')",
     "extract() does not know the kind 'colour' (the kinds: time, duration"),
    ("extract('x', kinds = [3])", "extract() does not accept int"),
    ("extract('x', kinds = [])", "extract() needs at least one kind"),
    ("extract('x', zone = 'Mars/Olympus')",
     "extract() does not know the time zone 'Mars/Olympus'"),
    ("extract('x', zone = 5)", "extract() does not accept int"),
    ("extract('x', prefer = 'soon')", "extract() prefer must be 'past' or 'future', got 'soon'"),
    ("extract('x', now = 'teatime')", "extract() cannot read the time 'teatime'"),
    ("extract('x', now = [])", "extract() does not accept list"),
    ("extract('x' * 4097)", "extract() text too large: 4,097 characters (the limit is 4,096)"),
])
def test_bad_arguments_are_catchable_errors(tmp_path, call, message):
    out, err = run_ost(tmp_path, """
        try:
            %s
        catch e:
            print(e.message)
            print(e.where)
        """ % call)
    assert err == ''
    assert out.startswith(message), out
    assert out.splitlines()[-1].startswith('prog.ost:3:')


def test_without_duckling_the_call_is_a_catchable_error_naming_the_fix(tmp_path):
    """In a child process, with Duckling looked for where it is not."""
    prog = tmp_path / 'prog.ost'
    prog.write_text("try:\n    extract('at 8')\ncatch e:\n    print(e.message)\nprint('still here')\n")
    env = {'OSTINATO_DUCKLING': str(tmp_path / 'nowhere'), 'PATH': '/usr/bin:/bin',
           'HOME': str(tmp_path)}
    p = subprocess.run([sys.executable, '-m', 'ostinato', 'run', str(prog)], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert 'extract() needs Duckling: Duckling is not installed' in p.stdout, p
    assert 'python tools/install_duckling.py' in p.stdout
    assert p.stdout.rstrip().endswith('still here')


# ------------------------------------------------------------ from .ost code

def test_from_ost_code(tmp_path):
    out, err = run_ost(tmp_path, """
        said = '2026-12-04T21:00:00-05:00'
        for m in extract('had eggs at 8 and did 30 minutes of yoga', now = said,
                         prefer = 'past'):
            print(m.kind, quote(m.text), m.start, m.end, m.when, m.seconds)
        for m in extract('remind me at 8', kinds = ['time'], now = said,
                         zone = 'America/New_York'):
            print(m.when, m.grain)
        print(extract('nothing here'))
        """)
    assert err == ''
    assert out.splitlines() == [
        "time 'at 8' 9 13 2026-12-04T20:00:00-05:00 none",
        "duration '30 minutes' 22 32 none 1800",
        '2026-12-05T08:00:00-05:00 hour',
        '[]',
    ]


def test_results_are_ordinary_maps(tmp_path):
    out, err = run_ost(tmp_path, """
        m = extract('3 coffees')[0]
        m.note = 'mine'
        print(type_of(m), keys(m))
        """)
    assert err == ''
    assert out == "map ['kind', 'text', 'start', 'end', 'value', 'note']\n"


# ------------------------------------------------------------ the process

SIGNALS_PROBE = r'''
import os, signal, time
def caught():
    return int(open('/proc/self/status').read().split('SigCgt:')[1].split()[0], 16)
before = caught()
from ostinato.vm import duckling
duckling.parse('at 8', ['time'], 0)
print('new handlers', caught() & ~before)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
    print('no KeyboardInterrupt')
except KeyboardInterrupt:
    print('KeyboardInterrupt')
print(duckling.parse('at 9', ['time'], 0)[0]['body'])
'''


def test_loading_duckling_leaves_the_process_signals_to_python():
    """The Haskell runtime would take SIGINT (Ctrl-C then ended the process
    at the next call, "wparseRefTime: interrupted"), SIGPIPE, SIGTSTP ...."""
    p = subprocess.run([sys.executable, '-c', SIGNALS_PROBE], capture_output=True, text=True,
                       timeout=300)
    assert p.stdout.splitlines() == ['new handlers 0', 'KeyboardInterrupt', 'at 9'], p


def test_the_installer_puts_duckling_where_the_vm_looks(monkeypatch, tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tools'))
    try:
        import install_duckling
    finally:
        sys.path.pop(0)
    assert install_duckling.VERSION == duckling.VERSION
    assert install_duckling.EXTENSION == duckling.EXTENSION
    assert install_duckling.target() == duckling.install_folder()
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    assert install_duckling.target() == duckling.install_folder() \
        == str(tmp_path / 'ostinato' / 'duckling' / 'pyduckling-native-0.1.0')
    monkeypatch.setenv('OSTINATO_DUCKLING', str(tmp_path / 'elsewhere'))
    assert install_duckling.target() == duckling.install_folder() == str(tmp_path / 'elsewhere')


def test_a_text_duckling_dies_on_finds_nothing_and_the_process_goes_on(tmp_path, capsys):
    """Duckling's Haskell code ends the process it runs in on some texts
    ("the" alone: "Ix{Int}.index: Index (3) out of range"): it runs in a
    process of its own, so the text finds nothing, the operator is told,
    and the next call works."""
    out, err = run_ost(tmp_path, f"""
        print(extract('the', ['time'], now = '{NY_EVENING}'))
        print([m.when for m in extract('at 8', ['time'], now = '{NY_EVENING}', prefer = 'past')])
        """)
    assert out.splitlines() == ['[]', "['2026-12-04T20:00:00-05:00']"]
    assert "Duckling failed on 'the'" in capsys.readouterr().err
