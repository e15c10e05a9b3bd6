"""`ostinato new skill NAME`: a starter skill and an eval case file for it.

The skill has what every skill has -- a goal blurb, one structured question
(`get_answer_to_question`), a reply, `serve` -- so it runs as it is, and the
case file is in the format of `ostinato eval` (the simulated user, their
answers, expectations on the end state), so it is measured from the start.
"""
from __future__ import annotations

import os
import re

NAME = re.compile(r'[a-z_][a-z0-9_]*\Z')

SKILL = '''\
-- {name}: a skill.  Talk to it on the console with `ostinato run {name}.ost`;
-- measure it with `ostinato eval {name}.toml`.

from channels    import send_message_to_thread
from core_skills import get_answer_to_question, serve

{{| Find out the user's favourite colour. |}}
def {name}(thread, user):
    -- The model answers from the chat, or asks the user (the dialogue waits
    -- for the reply on disk); if the user calls it off, or the model cannot
    -- give a usable reply, the user is told and the dialogue ends here.
    colour = get_answer_to_question(thread, "What is the user's favourite colour?",
        instructions = "Answer with the colour only, in lower case.")
    send_message_to_thread(thread, "{{colour}}: a fine colour!")

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
say  = ["My favourite colour is green"]
otherwise = "I don't know"
max_bot_messages = 3
expect = ["mentions(bot, 'green')"]

[[case]]
name = "is asked"
user = "bob"
say  = ["hi there"]
answers = [
  {{ when = "(?i)colou?r", say = "blue, I think" }},
]
max_bot_messages = 4
expect = ["mentions(bot, 'blue')", "asked >= 1"]
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
