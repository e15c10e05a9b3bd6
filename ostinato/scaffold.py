"""`ostinato new skill NAME`: a starter skill and an eval case file for it.

The skill has the shape of a logging skill -- a goal blurb, one structured
question (`get_answer_to_question`), the user's phrases picked by category
(`pick_phrases`), each one's time read from the text or asked (`time_in`,
`ask_time`), a reply, `serve` -- so it runs as it is, and the
case file is in the format of `ostinato eval` (the simulated user, their
answers, expectations on the end state), so it is measured from the start.
"""
from __future__ import annotations

import os
import re

NAME = re.compile(r'[a-z_][a-z0-9_]*\Z')

SKILL = '''\
-- {name}: a skill that keeps a log of what the user did and when.  Talk to
-- it on the console with `ostinato run {name}.ost`; measure it with
-- `ostinato eval {name}.toml`.  Its shape is every logging skill's: ask,
-- extract, ask what is missing, log.

from channels    import send_message_to_thread, User
from core_skills import get_answer_to_question, time_in, ask_time, serve
from phrases     import pick_phrases, parts_of

type Entry:
    val when                    -- ISO time string
    val when_text               -- How the user described the time
    val what                    -- What the user did

add_property(User, 'one', '{name}_log')

-- What this skill logs: the model picks the user's phrases that name it.
WHAT = "something the user did (an activity, a task, a chore)"

{{| Keep a log of what the user did, and when. |}}
def {name}(thread, user):
    -- The model answers from the chat, or asks the user (the dialogue waits
    -- for the reply on disk); if the user calls it off, or the model cannot
    -- give a usable reply, the user is told and the dialogue ends here.
    told = get_answer_to_question(thread, "What did you do, and when?")
    things = pick_phrases(told, WHAT)
    if length(things) == 0:
        send_message_to_thread(thread, "I didn't catch anything to log.  What did you do?")
        return
    if not user.{name}_log?:
        user.{name}_log = []
    now = thread.messages[-1].when
    -- Each thing with its part of the text: its time is read there (by the
    -- extract built-in), else asked.
    for pair in parts_of(told, things):
        when = time_in(pair[1], now) \\ ask_time(thread, "When did you do {{quote(pair[0])}}?")
        append(user.{name}_log, Entry(when = when.when, when_text = when.text, what = pair[0]))
    send_message_to_thread(thread, "Logged: {{sjoin([e.what for e in user.{name}_log], ', ')}}")

serve({name})
'''

CASES = '''\
# Cases for {name}.ost, for `ostinato eval {name}.toml`: simulated users,
# how they answer the bot (the first rule whose regular expression matches
# the bot's message), and what must be true at the end.
skill    = "{name}.ost"              # relative to this file
timezone = "UTC"
start    = "2025-03-14T16:00:00"
runs     = 3

[[case]]
name = "says it at once"
user = "ann"
say  = ["I mowed the lawn at 9am"]
otherwise = "I don't know"
max_bot_messages = 3
expect = [
  "length(user.{name}_log) == 1",
  "only([e.what for e in user.{name}_log], ['mow', 'lawn'])",
  "near(user.{name}_log[0].when, '09:00')",
  "asked == 0",
]

[[case]]
name = "is asked when"
user = "bob"
say  = ["painted the fence"]
answers = [
  {{ when = "(?i)when", say = "around 2pm" }},
]
max_bot_messages = 4
expect = [
  "length(user.{name}_log) == 1",
  "near(user.{name}_log[0].when, '14:00')",
  "asked >= 1",
]
'''


class ScaffoldError(Exception):
    """A name or a target file that will not do; the message says why."""


def new_skill(name, folder='.'):
    """Write NAME.ost and NAME.toml into `folder`; returns their paths.
    Never overwrites a file."""
    if not NAME.match(name):
        raise ScaffoldError("a skill's name is its module's name: lower-case letters, digits "
                            "and '_', not starting with a digit (not %r)" % name)
    paths = [os.path.join(folder, name + '.ost'), os.path.join(folder, name + '.toml')]
    for p in paths:
        if os.path.exists(p):
            raise ScaffoldError('%s exists already; nothing was written' % p)
    os.makedirs(folder, exist_ok=True)
    for p, text in zip(paths, (SKILL, CASES)):
        with open(p, 'x', encoding='utf-8') as f:
            f.write(text.format(name=name))
    return paths
