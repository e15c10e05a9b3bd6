"""A correct model for every case of evals/diet.toml, evals/recipes.toml,
evals/diet-fresh.toml, evals/diet-fresh2.toml, evals/diet-fresh3.toml,
evals/diet-fresh4.toml, evals/diet-fresh5.toml, evals/diet-fresh6.toml,
evals/diet-fresh7.toml, evals/diet-fresh8.toml, evals/diet-fresh9.toml and
evals/diet-fresh10.toml, and of the exercise log's files (evals/exercise*.toml), as a script for the
scripted backend.

Each case's dialogue is written down as a careful model would conduct it:
it extracts every item with its time, asks when the user named only a meal,
asks again after a vague answer, picks the right skill, knows an apple from
a dish and asks for a dish's ingredients.  test_eval runs the shipped case
files against it: every case must pass, which shows that the expectations
accept a correct dialogue (and do not merely describe what some model
happened to do).
"""
import re

DAY = '2025-03-14T%s:00-04:00'


def _iso(hhmm):
    """'HH:MM' on the cases' day; a whole ISO date-time (another day) as it is."""
    return hhmm if len(hhmm) > 5 else DAY % hhmm


def _user_said(user, text):
    """The prompt's chat has `user` writing `text` (its start)."""
    return r'\] %s: %s' % (re.escape(user), re.escape(text))


def diet(user, said, answer, items, times, confer_first=None, anchored=False):
    """A diet dialogue: `said` is the user's message (its start), `answer`
    the extracted list, `items` the itemized mapping; `times` maps each
    key to an 'HH:MM' (known from the message) or to a list of steps
    [(question, reply start), ..., 'HH:MM']: ask, and after the reply that
    starts so, ask the next question or answer the time.  `anchored`: the
    time questions are answered only where the prompt holds `said`, so
    that the entries do not answer another case of the same user asking
    about the same phrase."""
    lead = _user_said(user, said) + '.*' if anchored else ''
    anyway = lead or r'\] %s: .*' % re.escape(user)      # any message of the user's
    entries = []
    if confer_first is not None:
        question, reply, outcome = confer_first
        entries.append({'match': _user_said(user, reply) + r'[^\n]*\n\nQuestion: What did you eat',
                        'reply': outcome})
        entries.append({'match': _user_said(user, said) + r'[^\n]*\n\nQuestion: What did you eat',
                        'reply': {'action': 'confer', 'text': question}})
    else:
        entries.append({'match': _user_said(user, said) + r'[^\n]*\n\nQuestion: What did you eat',
                        'reply': {'action': 'answer', 'text': answer}})
    if answer is not None:
        entries.append({'match': r'Re-format "%s"' % re.escape(answer),
                        'reply': {'action': 'itemize',
                                  'groups': [{'items': names, 'key': key}
                                             for key, names in items.items()]}})
    for key, how in times.items():
        asked = r"Question: When, roughly, was %s\?" % re.escape(_quote(key))
        if isinstance(how, str):
            entries.append({'match': anyway + asked,
                            'reply': {'action': 'answer', 'text': _iso(how)}})
            continue
        *steps, hhmm = how
        # The last reply answers the question; each earlier one asks again.
        replies = [r for _, r in steps]
        entries.append({'match': lead + _user_said(user, replies[-1]) + r'[^\n]*\n\n' + asked,
                        'reply': {'action': 'answer', 'text': _iso(hhmm)}})
        for k in range(len(steps) - 1, 0, -1):
            entries.append({'match': (lead + _user_said(user, replies[k - 1]) + r'[^\n]*\n\n'
                                      + asked),
                            'reply': {'action': 'confer', 'text': steps[k][0]}})
        entries.append({'match': anyway + asked,
                        'reply': {'action': 'confer', 'text': steps[0][0]}})
    return entries


def _quote(s):
    return "'%s'" % s.replace('\\', '\\\\').replace("'", "\\'")


def skill(user, said, name):
    return {'match': _user_said(user, said) + r'[^\n]*\n\nWhich skill', 'reply': {'skill': name}}


def basic(item):
    return {'match': r'Question: Is %s a single basic food' % re.escape(_quote(item)),
            'reply': {'action': 'answer', 'text': 'basic food'}}


def dish(user, item, question, reply, listed, ingredients):
    """A dish: its ingredients asked for; `reply` starts the user's answer,
    `listed` is the answer (None: the user would not say), `ingredients`
    the re-formatted list of (name, quantity, unit)."""
    q = r'Question: What is in %s' % re.escape(_quote(item))
    entries = [{'match': r'Question: Is %s a single basic food' % re.escape(_quote(item)),
                'reply': {'action': 'answer', 'text': 'dish'}}]
    if listed is None:
        entries.append({'match': _user_said(user, reply) + r'[^\n]*\n\n' + q,
                        'reply': {'action': 'cancel', 'text': 'The user does not know.'}})
    else:
        entries.append({'match': _user_said(user, reply) + r'[^\n]*\n\n' + q,
                        'reply': {'action': 'answer', 'text': listed}})
        entries.append({'match': r'Re-format this ingredient list of one serving of "%s"'
                                 % re.escape(item),
                        'reply': {'ingredients': [{'name': n, 'quantity': qty, 'unit': u}
                                                  for n, qty, u in ingredients]}})
    entries.append({'match': r'\] %s: .*%s' % (re.escape(user), q),
                    'reply': {'action': 'confer', 'text': question}})
    return entries


def diet_script():
    e = []
    e += diet('ann', 'Had a turkey sandwich', 'lunch: turkey sandwich, apple; later: hot chocolate',
              {'lunch': ['turkey sandwich', 'apple'], 'later': ['hot chocolate']},
              {'lunch': [('About what time was lunch?', 'around 12:30'), '12:30'],
               'later': [('And when did you have the hot chocolate?', 'at 2:30'), '14:30']})
    e += diet('ann', 'cookie just now', 'a cookie, just now', {'just now': ['cookie']},
              {'just now': '16:05'})
    e += diet('bo', 'Breakfast was oatmeal', 'oatmeal with blueberries at 7:15; chicken caesar '
              'salad at 12:45', {'7:15': ['oatmeal with blueberries'],
                                 '12:45': ['chicken caesar salad']},
              {'7:15': '07:15', '12:45': '12:45'})
    e += diet('cy', 'eggs and toast at 8', 'eggs and toast at 8, a burrito at 1pm, pasta at 7:30pm',
              {'8': ['eggs', 'toast'], '1pm': ['burrito'], '7:30pm': ['pasta']},
              {'8': '08:00', '1pm': '13:00', '7:30pm': '19:30'})
    e += diet('dee', 'for lunch at noon', 'lunch at noon: burger, fries, coke',
              {'noon': ['burger', 'fries', 'coke']}, {'noon': '12:00'})
    e += diet('eli', 'breakfast: 2 eggs', 'breakfast: 2 eggs, toast; lunch: tuna sandwich',
              {'breakfast': ['2 eggs', 'toast'], 'lunch': ['tuna sandwich']},
              {'breakfast': [('When was breakfast?', 'around 8'), '08:00'],
               'lunch': [('And lunch?', 'about 1pm'), '13:00']})
    e += diet('fay', 'had oatmeal at 7:30', 'oatmeal at 7:30; salad for lunch',
              {'7:30': ['oatmeal'], 'lunch': ['salad']},
              {'7:30': '07:30', 'lunch': [('What time was lunch?', '12:15'), '12:15']})
    e += diet('gus', 'I had a banana an hour ago', 'a banana, an hour ago',
              {'hour ago': ['banana']}, {'hour ago': '15:00'})
    e += diet('hal', 'just finished a bowl', 'a bowl of ramen, just now',
              {'just now': ['bowl of ramen']}, {'just now': '16:00'})
    e += diet('ivy', 'ate an orange', 'an orange, half an hour ago',
              {'half an hour ago': ['orange']}, {'half an hour ago': '15:30'})
    e += diet('jo', 'a handful of almonds', 'a handful of almonds, a few minutes ago',
              {'few minutes ago': ['almonds']}, {'few minutes ago': '15:55'})
    e += diet('kim', 'Had pizza for dinner', 'pizza for dinner', {'dinner': ['pizza']},
              {'dinner': [('What time was dinner?', 'around 7pm'), '19:00']})
    e += diet('lee', 'For breakfast I had', 'breakfast: bagel with cream cheese, coffee',
              {'breakfast': ['bagel with cream cheese', 'coffee']},
              {'breakfast': [('When was breakfast?', '8:30'), '08:30']})
    e += diet('max', 'had a granola bar', 'a granola bar as a snack', {'snack': ['granola bar']},
              {'snack': [('When did you have the snack?', 'mid-morning'), '10:30']})
    e += diet('ned', 'I had soup for lunch', 'soup for lunch', {'lunch': ['soup']},
              {'lunch': [('When was lunch?', 'the usual time'),
                         ('Roughly what time is that?', 'oh, around noon'), '12:00']})
    e += diet('ola', 'Had a salad for dinner', 'a salad for dinner', {'dinner': ['salad']},
              {'dinner': [('When was dinner?', 'earlier'),
                          ('About what time?', 'about 6:30'), '18:30']})
    e += diet('pat', 'I had a donut', 'a bagel for breakfast at 8', {'8': ['bagel']},
              {'8': '08:00'})
    e += diet('quinn', 'Had a coffee at 9', 'a coffee at 10', {'10': ['coffee']}, {'10': '10:00'})
    e += diet('ray', "I haven't eaten", 'nothing', {}, {})
    e += diet('sam', 'skipped breakfast', 'nothing', {}, {})
    e += diet('tia', 'I want to log my lunch', None, None, {},
              confer_first=('What did you have for lunch?', 'never mind',
                            {'action': 'cancel', 'text': 'The user changed their mind.'}))
    e += diet('uma', 'log breakfast', None, None, {},
              confer_first=('What did you have for breakfast?', 'forget it',
                            {'action': 'cancel', 'text': 'Not now.'}))
    e.append({'match': r'Re-format "none"', 'reply': {'action': 'itemize'}})
    e += diet('val', 'Two cups of coffee', 'coffee around 8; coffee around 10',
              {'8': ['coffee'], '10': ['coffee']}, {'8': '08:00', '10': '10:00'})
    e += diet('wes', 'a glass of orange juice', 'orange juice at 7; latte at 9:30',
              {'7': ['orange juice'], '9:30': ['latte']}, {'7': '07:00', '9:30': '09:30'})
    e += diet('fin', '2 beers and a glass', '2 beers and a glass of wine around 8pm',
              {'8pm': ['2 beers', 'glass of wine']}, {'8pm': '20:00'})
    e += diet('xan', 'had a chiken sandwhich', 'lunch at 12:30: chicken sandwich, coffee',
              {'12:30': ['chicken sandwich', 'coffee']}, {'12:30': '12:30'})
    e += diet('yas', 'ate a banan', 'a banana and some yogurt at 9am',
              {'9am': ['banana', 'yogurt']}, {'9am': '09:00'})
    e += diet('gil', 'jsut had a cofee', 'a coffee just now', {'just now': ['coffee']},
              {'just now': '16:00'})
    e += diet('zoe', 'So today was crazy', 'a donut around 10; a turkey wrap at 1:30',
              {'10': ['donut'], '1:30': ['turkey wrap']},
              {'10': '10:00', '1:30': '13:30'})
    e += diet('abe', 'ugh long day', 'a big plate of pad thai at 3',
              {'3': ['pad thai']}, {'3': '15:00'})
    e += diet('bea', 'Lunch at 13:15', 'lunch at 13:15: lentil soup, bread',
              {'13:15': ['lentil soup', 'bread']}, {'13:15': '13:15'})
    e += diet('cal', 'had cereal at 7am', 'cereal at 7am; a sandwich at 12pm',
              {'7am': ['cereal'], '12pm': ['sandwich']}, {'7am': '07:00', '12pm': '12:00'})
    e += diet('dan', 'dinner 19:45', 'dinner at 19:45: grilled salmon, rice',
              {'19:45': ['grilled salmon', 'rice']}, {'19:45': '19:45'})
    e += diet('eve', 'chips at 3pm', 'chips at 3pm; an apple at 5:30pm',
              {'3pm': ['chips'], '5:30pm': ['apple']}, {'3pm': '15:00', '5:30pm': '17:30'})
    e += diet('hana', 'dinner at a quarter', 'dinner at 7:15pm: steak, potatoes',
              {'7:15pm': ['steak', 'potatoes']}, {'7:15pm': '19:15'})
    e += diet('ian', 'a smoothie and a blueberry', 'a smoothie and a blueberry muffin at 10:30am',
              {'10:30am': ['smoothie', 'blueberry muffin']}, {'10:30am': '10:30'})
    return e


BREAKDOWN = ['break my diet down by ingredient', "what's in my diet by ingredient?"]


def recipes_script():
    e = []
    for user in ('ann', 'bo', 'cy', 'dee', 'eli', 'fay', 'gus', 'hal', 'ivy'):
        for text in BREAKDOWN:
            e.append(skill(user, text, 'break_down_diet'))
        e.append({'match': r'\] %s: [^\n]*\n\nWhich skill' % user, 'reply': {'skill': 'track_diet'}})
    shakshuka = ('What goes into your shakshuka, roughly?', '2 eggs',
                 'egg: 2 piece\ntomato sauce: 200 g\nonion: 0.5 piece\nolive oil: 1 tbsp',
                 [('egg', 2, 'piece'), ('tomato sauce', 200, 'g'), ('onion', 0.5, 'piece'),
                  ('olive oil', 1, 'tbsp')])
    e += diet('ann', 'I had a shakshuka', 'shakshuka for lunch at 12:30', {'12:30': ['shakshuka']},
              {'12:30': '12:30'})
    e += dish('ann', 'shakshuka', *shakshuka)
    e += diet('bo', 'I ate an apple', 'an apple at 3pm', {'3pm': ['apple']}, {'3pm': '15:00'})
    e.append(basic('apple'))
    e += diet('cy', 'had a glass of milk', 'a glass of milk at 8am', {'8am': ['milk']},
              {'8am': '08:00'})
    e.append(basic('milk'))
    e += diet('dee', 'had a tuna sandwich', 'a tuna sandwich and a banana at 1',
              {'1': ['tuna sandwich', 'banana']}, {'1': '13:00'})
    e += dish('dee', 'tuna sandwich', 'What is in your tuna sandwich?', '2 slices of bread',
              'bread: 2 slice\ntuna: 1 can\nmayonnaise: 1 tbsp',
              [('bread', 2, 'slice'), ('tuna', 1, 'can'), ('mayonnaise', 1, 'tbsp')])
    e.append(basic('banana'))
    e += diet('eli', "had my grandma's stew", "grandma's stew at 7pm", {'7pm': ["grandma's stew"]},
              {'7pm': '19:00'})
    e += dish('eli', "grandma's stew", "What is in your grandma's stew?", 'no idea', None, None)
    e += diet('fay', 'had a smoothie', 'a smoothie at 10am', {'10am': ['smoothie']},
              {'10am': '10:00'})
    e += dish('fay', 'smoothie', 'What is in your smoothie?', 'a banana, a cup',
              'banana: 1 piece\nmilk: 250 ml\nstrawberry: 100 g',
              [('banana', 1, 'piece'), ('milk', 250, 'ml'), ('strawberry', 100, 'g')])
    e += diet('gus', 'for lunch at noon', 'caesar salad and lasagna at noon',
              {'noon': ['caesar salad', 'lasagna']}, {'noon': '12:00'})
    e += dish('gus', 'caesar salad', 'What is in your caesar salad?', 'romaine',
              'romaine: 100 g\nparmesan: 20 g\ncrouton: 30 g\ncaesar dressing: 30 ml',
              [('romaine', 100, 'g'), ('parmesan', 20, 'g'), ('crouton', 30, 'g'),
               ('caesar dressing', 30, 'ml')])
    e += dish('gus', 'lasagna', 'And what is in the lasagna?', 'pasta sheets',
              'pasta sheet: 3 piece\nground beef: 100 g\ntomato sauce: 100 g\ncheese: 50 g',
              [('pasta sheet', 3, 'piece'), ('ground beef', 100, 'g'), ('tomato sauce', 100, 'g'),
               ('cheese', 50, 'g')])
    e += diet('hal', 'had a shakshuka', 'a shakshuka at 9am', {'9am': ['shakshuka']},
              {'9am': '09:00'})
    e += diet('hal', 'had another shakshuka', 'another shakshuka at 7pm', {'7pm': ['shakshuka']},
              {'7pm': '19:00'})
    e += dish('hal', 'shakshuka', *shakshuka)
    return e


def fresh_script():
    """The cases of evals/diet-fresh.toml (written blind, tuned on now),
    conducted as a careful model would."""
    e = []
    e += diet('priya', 'Breakfast was 2 scrambled eggs',
              '2 scrambled eggs at 6:45am; a turkey club at 12:15pm; a protein shake at 3pm',
              {'6:45am': ['2 scrambled eggs'], '12:15pm': ['turkey club'],
               '3pm': ['protein shake']},
              {'6:45am': '06:45', '12:15pm': '12:15', '3pm': '15:00'})
    e += diet('lars', '07:30 porridge', 'porridge with blueberries at 07:30; leftover lentil curry '
              'at 13:05; green tea and 2 digestive biscuits at 15:20',
              {'07:30': ['porridge with blueberries'], '13:05': ['leftover lentil curry'],
               '15:20': ['green tea', '2 digestive biscuits']},
              {'07:30': '07:30', '13:05': '13:05', '15:20': '15:20'})
    e += diet('marco', 'had a latte like 20 min ago', 'a latte and a blueberry muffin, 20 minutes ago',
              {'20 minutes ago': ['latte', 'blueberry muffin']}, {'20 minutes ago': '15:40'})
    e += diet('dee', 'lunch was a bowl of ramen', 'a bowl of ramen for lunch around 1',
              {'1': ['bowl of ramen']}, {'1': '13:00'})
    e += diet('dee', 'just had a protein bar', 'a protein bar just now',
              {'just now': ['protein bar']}, {'just now': '18:30'})
    e += diet('tomasz', 'Had eggs and toast', 'breakfast: eggs, toast; lunch: burrito bowl',
              {'breakfast': ['eggs', 'toast'], 'lunch': ['burrito bowl']},
              {'breakfast': [('When did you have breakfast?', 'about 7:30'), '07:30'],
               'lunch': [('And when was lunch?', '12ish'), '12:00']})
    e += diet('noor', 'had a smoothie earlier', 'a smoothie, earlier', {'earlier': ['smoothie']},
              {'earlier': [('When did you have the smoothie?', 'sometime after the gym'),
                           ('Roughly what time did you finish at the gym?', 'gym was 9 to 10'),
                           '10:15']})
    e += diet('jo', 'grabbed a granola bar', 'a granola bar from the break room',
              {'granola bar': ['granola bar']},
              {'granola bar': [('When did you have the granola bar?', 'mid-afternoon'), '15:00']})
    e += diet('ruth', 'avocado toast and a coffee', 'avocado toast and a coffee this morning',
              {'morning': ['avocado toast', 'coffee']},
              {'morning': [('About what time this morning?', 'around 8:30'), '08:30']})
    e += diet('kenji', 'breakfast at 8 was a bagel',
              'an english muffin with peanut butter at 8; a pear around 11',
              {'8': ['english muffin', 'peanut butter'], '11': ['pear']},
              {'8': '08:00', '11': '11:00'})
    e += diet('sam', 'coffee at 7, another one', 'coffee at 7; coffee around 10:30; diet coke at 2',
              {'7': ['coffee'], '10:30': ['coffee'], '2': ['diet coke']},
              {'7': '07:00', '10:30': '10:30', '2': '14:00'})
    e += diet('bex', 'had a chikcen ceasar salad', 'chicken caesar salad at 12:30; banana at 3ish',
              {'12:30': ['chicken caesar salad'], '3ish': ['banana']},
              {'12:30': '12:30', '3ish': '15:00'})
    e += diet('gail', 'ok so today has been a mess',
              'yogurt and granola at 7:15; black coffee at 9; almonds and a string cheese at 2:30; '
              'kombucha just now',
              {'7:15': ['yogurt', 'granola'], '9': ['black coffee'],
               '2:30': ['almonds', 'string cheese'], 'just now': ['kombucha']},
              {'7:15': '07:15', '9': '09:00', '2:30': '14:30', 'just now': '16:00'})
    e += diet('olu', 'nothing yet today', 'nothing', {}, {})
    e += diet('vic', 'can you log my food', None, None, {},
              confer_first=('Sure! What did you eat, and roughly when?', 'ugh actually never mind',
                            {'action': 'cancel', 'text': 'The user called it off.'}))
    e += diet('hana', 'Oatmeal at 7:30, then a tuna melt',
              'oatmeal at 7:30; tuna melt for lunch; trail mix a little while ago',
              {'7:30': ['oatmeal'], 'lunch': ['tuna melt'], 'little while ago': ['trail mix']},
              {'7:30': '07:30', 'lunch': [('What time was lunch?', 'like 12:45'), '12:45'],
               'little while ago': [('About how long ago was the trail mix?',
                                     'maybe half an hour ago'), '15:30']})
    return e


def fresh2_script():
    """The cases of evals/diet-fresh2.toml (the second file written blind,
    tuned on now), conducted as a careful model would.  Its summary of what
    the user ate (the answer to the first question) is the user's meals in
    plain words, in the order eaten, each with the time the user gave."""
    e = []
    e += diet('priya', 'cereal w milk at 07:30', 'cereal with milk at 07:30; a burrito bowl at 13:15',
              {'07:30': ['cereal with milk'], '13:15': ['burrito bowl']},
              {'07:30': '07:30', '13:15': '13:15'})
    e += diet('dwayne', 'night shift again', 'chicken curry and rice at 02:00; a red bull and a '
              'cereal bar at 05:30; toast at 14:00',
              {'02:00': ['chicken curry', 'rice'], '05:30': ['red bull', 'cereal bar'],
               '14:00': ['toast']},
              {'02:00': '02:00', '05:30': '05:30', '14:00': '14:00'})
    e += diet('meg', 'kids pb&j crusts', 'pb&j crusts and cold coffee for lunch',
              {'lunch': ['pb&j crusts', 'cold coffee']},
              {'lunch': [('What time was lunch?', '12:15 or so'), '12:15']})
    e += diet('tomasz', 'Today I eat rice', 'two cup of tea in the morning; rice with chicken '
              'in the midday', {'morning': ['two cup of tea'], 'midday': ['rice with chicken']},
              {'morning': [('What time in the morning did you drink the tea?', "at 8 o'clock"),
                           '08:00'],
               'midday': '12:00'})
    e += diet('jules', 'granola bar about 2 hrs ago', 'a granola bar about 2 hrs ago; an iced '
              'latte right now', {'2 hrs ago': ['granola bar'], 'right now': ['iced latte']},
              {'2 hrs ago': '14:00', 'right now': '16:00'})
    e += diet('hank', 'breakfast at 8 was a bagel', 'an english muffin with cream cheese at 8',
              {'8': ['english muffin', 'cream cheese']}, {'8': '08:00'})
    e += diet('rosa', 'Only had coffee at 6:45', 'coffee at 6:45; a Diet Coke around 2',
              {'6:45': ['coffee'], '2': ['diet coke']}, {'6:45': '06:45', '2': '14:00'})
    # The model's 14:00 (mid-span) is no time the user named: the program
    # reads "about 1" of "from about 1 to 3" and logs 13:00.
    e += diet('kev', 'been grazing all afternoon', 'a bag of chips, grapes, a handful of almonds '
              'and 3 oreos, all afternoon',
              {'afternoon': ['bag of chips', 'grapes', 'handful of almonds', '3 oreos']},
              {'afternoon': [('Roughly what time this afternoon?', 'on and off from about 1 to 3'),
                             '14:00']})
    e += diet('sam', 'late lunch today', 'late lunch: 2 slices of pepperoni pizza and a sprite',
              {'late lunch': ['slices of pepperoni pizza', 'sprite']},
              {'late lunch': [('What time was your late lunch?', 'after my meeting ended'),
                              ('Roughly what time did your meeting end?', 'meeting ended at'),
                              '14:45']})
    # Nothing to log: said so, and the dialogue ends there.  (Answered
    # 'nothing', the seed's skill, itemizing no meal, never makes the log
    # and fails listing it: "cannot iterate over none".)
    e.append({'match': _user_said('lin', 'nothing. literally nothing')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': 'OK, nothing to log yet today. Good luck '
                                                    'with the exams!'}})
    e += diet('bea', 'hey can u log my lunch', None, None, {},
              confer_first=('Sure! What did you have for lunch, and when?', 'ugh actually never mind',
                            {'action': 'cancel', 'text': "OK, I won't log anything."}))
    e += diet('omar', 'smoothie at 9 and a chicken wrap', 'a smoothie at 9; a chicken wrap for '
              'lunch at 12:30', {'9': ['smoothie'], '12:30': ['chicken wrap']},
              {'9': '09:00', '12:30': '12:30'})
    e += diet('omar', 'dinner just now', 'dinner just now: spaghetti and meatballs, a glass of red',
              {'just now': ['spaghetti and meatballs', 'glass of red']}, {'just now': '19:30'})
    e += diet('carla', 'ok so today was chaos', 'half a cup of coffee at 7:20; two donuts at about '
              '10; a cheese stick and some goldfish crackers around 3:30',
              {'7:20': ['cup of coffee'], '10': ['two donuts'],
               '3:30': ['cheese stick', 'goldfish crackers']},
              {'7:20': '07:20', '10': '10:00', '3:30': '15:30'})
    # The summary spells the user's '8ish' and '1230' as times ("around 8",
    # "12:30"); keyed '8ish', the time reader would not know the word and
    # would ask (as for 'fresh: typos' of diet-fresh.toml).
    e += diet('tyler', 'brekky: 2 scrambld eggs', '2 scrambled eggs and toast with avocado around '
              '8; a blt and fries around 12:30',
              {'8': ['2 scrambled eggs', 'toast with avocado'], '12:30': ['blt', 'fries']},
              {'8': '08:00', '12:30': '12:30'})
    e += diet('grace', 'Half past seven this morning', 'greek yogurt with berries at half past '
              'seven; a protein shake at 11am; a pear at noon',
              {'half past seven': ['greek yogurt with berries'], '11am': ['protein shake'],
               'noon': ['pear']},
              {'half past seven': '07:30', '11am': '11:00', 'noon': '12:00'})
    e += diet('ines', 'breakfast was a banana', 'breakfast: a banana; lunch: a tuna melt and '
              'tomato soup', {'breakfast': ['banana'], 'lunch': ['tuna melt', 'tomato soup']},
              {'breakfast': [('What time was breakfast?', '7am'), '07:00'],
               'lunch': [('And when was lunch?', 'uhh 11'), '12:30']})
    e += diet('minh', 'pho', 'pho around 1:30', {'1:30': ['pho']}, {'1:30': '13:30'},
              confer_first=('When did you have the pho?', '1:30ish',
                            {'action': 'answer', 'text': 'pho around 1:30'}))
    e += diet('dot', 'had a blueberry muffin earlier', 'a blueberry muffin, earlier',
              {'earlier': ['blueberry muffin']},
              {'earlier': [('When did you have the muffin?', 'earlier today'),
                           ('Roughly what time was that?', 'around 10:30'), '10:30']})
    e += diet('ahmed', 'I am eat one apple', 'one apple and 2 glass water one hour before',
              {'one hour before': ['one apple', '2 glass water']}, {'one hour before': '15:00'})
    e += diet('vivienne', 'Lunch today was at that new ramen', 'tonkotsu ramen with extra chashu '
              'and a soft egg, gyoza (6 pc) and half a matcha soda, at 12:45',
              {'12:45': ['tonkotsu ramen', 'extra chashu', 'soft egg', 'gyoza', 'matcha soda']},
              {'12:45': '12:45'})
    return e


def fresh3_script():
    """The cases of evals/diet-fresh3.toml (the third file written blind,
    tuned on now), conducted as a careful model would, in the manner of
    fresh2_script.  Its users' names recur in the other files (ines asks
    about 'lunch' in both diet-fresh2.toml and here), so the time questions
    are answered only in the dialogue of the case's own message
    (`anchored`), and test_eval puts these entries first.  The keys and
    items it itemizes are phrases of the summary as the request's schema
    has them: up to four words, neither first nor last a stop word ('hour
    ago', not 'an hour ago')."""
    e = []
    e += diet('quinn', 'Breakfast was oatmeal with blueberries', 'oatmeal with blueberries at '
              '7:30am; a chicken caesar wrap at 1pm',
              {'7:30am': ['oatmeal with blueberries'], '1pm': ['chicken caesar wrap']},
              {'7:30am': '07:30', '1pm': '13:00'}, anchored=True)
    e += diet('bea', '09:15 two boiled eggs + toast\n13:45 lentil soup\n15:30 double espresso',
              'two boiled eggs and toast at 09:15; lentil soup at 13:45; a double espresso at '
              '15:30',
              {'09:15': ['two boiled eggs', 'toast'], '13:45': ['lentil soup'],
               '15:30': ['double espresso']},
              {'09:15': '09:15', '13:45': '13:45', '15:30': '15:30'}, anchored=True)
    e += diet('carlos', 'bowl of cheerios at half past seven', 'a bowl of cheerios at half past '
              'seven; a banana at quarter to eleven',
              {'half past seven': ['bowl of cheerios'], 'quarter to eleven': ['banana']},
              {'half past seven': '07:30', 'quarter to eleven': '10:45'}, anchored=True)
    e += diet('dmitri', 'ate a bag of salt and vinegar chips', 'a bag of salt and vinegar chips, '
              '20 mins ago', {'20 mins ago': ['salt and vinegar chips']},
              {'20 mins ago': '15:40'}, anchored=True)
    e += diet('efua', 'Had a slice of pepperoni pizza', 'a slice of pepperoni pizza about an hour '
              'ago; a can of ginger ale just now',
              {'hour ago': ['slice of pepperoni pizza'], 'just now': ['can of ginger ale']},
              {'hour ago': '15:00', 'just now': '16:00'}, anchored=True)
    e += diet('sven', 'had leftover pad thai earlier', 'leftover pad thai, earlier',
              {'earlier': ['leftover pad thai']},
              {'earlier': [('About what time did you have the pad thai?', 'around 2:30'), '14:30']},
              anchored=True)
    e += diet('farah', 'Breakfast: greek yogurt with granola', 'breakfast: greek yogurt with '
              'granola; lunch: leftover chili and rice',
              {'breakfast': ['greek yogurt with granola'], 'lunch': ['leftover chili', 'rice']},
              {'breakfast': [('What time was breakfast?', 'about 8'), '08:00'],
               'lunch': [('And when was lunch?', 'around 12:15'), '12:15']}, anchored=True)
    e += diet('yuki', 'brunch w friends today', 'brunch: eggs benedict, hashbrowns and a mimosa',
              {'brunch': ['eggs benedict', 'hashbrowns', 'mimosa']},
              {'brunch': [('What time was brunch?', 'we sat down around 11:30'), '11:30']},
              anchored=True)
    e += diet('gus', 'got a burrito bowl for lunch', 'a burrito bowl for lunch',
              {'lunch': ['burrito bowl']},
              {'lunch': [('What time was lunch?', 'right after my meeting'),
                         ('Roughly what time did your meeting end?', 'it wrapped up around 1:30'),
                         '13:30']}, anchored=True)
    e += diet('priya', 'snack report: cheese and crackers', 'cheese and crackers around 3; a '
              'handful of gummy bears a bit ago',
              {'3': ['cheese', 'crackers'], 'bit ago': ['handful of gummy bears']},
              {'3': '15:00',
               'bit ago': [('About how long ago did you have the gummy bears?',
                            'like 15 min ago'), '15:45']}, anchored=True)
    # The summary has what the user corrected it to: a scone, not a muffin.
    e += diet('hana', 'had a blueberry muffin w my latte', 'a scone with a latte at 10 this '
              'morning', {'10': ['scone', 'latte']}, {'10': '10:00'}, anchored=True)
    # The reply's time is the corrected one: "closer to 1", not "around 12".
    e += diet('ines', 'I had a turkey club for lunch', 'a turkey club for lunch',
              {'lunch': ['turkey club']},
              {'lunch': [('What time was lunch?', 'around 12. actually no, closer to 1'), '13:00']},
              anchored=True)
    # Nothing to log: said so, and the dialogue ends there (as lin's of
    # diet-fresh2.toml).
    e.append({'match': _user_said('jamal', 'havent eaten anything yet today')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': "OK, nothing to log yet. Hope work eases up!"}})
    # Asked when, the user calls it off: nothing is logged.
    e += diet('kenji', 'had some crackers earlier', 'some crackers, earlier',
              {'earlier': ['crackers']}, {}, anchored=True)
    said = _user_said('kenji', 'had some crackers')
    asked = r"Question: When, roughly, was 'earlier'\?"
    e.append({'match': said + '.*' + _user_said('kenji', 'ugh never mind') + r'[^\n]*\n\n' + asked,
              'reply': {'action': 'cancel', 'text': "OK, I won't log it."}})
    e.append({'match': said + '.*' + asked,
              'reply': {'action': 'confer', 'text': 'About what time did you have the crackers?'}})
    e += diet('lena', 'only drinks so far today', 'coffee at 6:45; another coffee around 9; a '
              'green tea at 2', {'6:45': ['coffee'], '9': ['coffee'], '2': ['green tea']},
              {'6:45': '06:45', '9': '09:00', '2': '14:00'}, anchored=True)
    # The summary spells the user's words out ("cheeseburger", "1230" as
    # "12:30"), as tyler's of diet-fresh2.toml.
    e += diet('marco', 'had a cheezburger n fries', "a cheeseburger, fries and a chocolate shake "
              "from McDonald's around 12:30",
              {'12:30': ['cheeseburger', 'fries', 'chocolate shake']}, {'12:30': '12:30'},
              anchored=True)
    e += diet('nadia', 'just had a', 'a banana and a handful of almonds, just now',
              {'just now': ['banana', 'handful of almonds']}, {'just now': '16:00'}, anchored=True)
    e += diet('omar', 'ok so breakfast was 2 eggs', 'breakfast: 2 eggs and toast at 8; a protein '
              'bar around 11; lunch: a poke bowl at 1',
              {'8': ['2 eggs', 'toast'], '11': ['protein bar'], '1': ['poke bowl']},
              {'8': '08:00', '11': '11:00', '1': '13:00'}, anchored=True)
    e += diet('rosa', 'So today was kind of chaotic', 'half a coffee around 8:15; a donut around '
              '10:30; a tuna salad sandwich and a diet coke about 12:45; a small piece of birthday '
              'cake around 3',
              {'8:15': ['half a coffee'], '10:30': ['donut'],
               '12:45': ['tuna salad sandwich', 'diet coke'], '3': ['birthday cake']},
              {'8:15': '08:15', '10:30': '10:30', '12:45': '12:45', '3': '15:00'}, anchored=True)
    # Two dialogues, each asking about 'just now': the second one's entries
    # first, as the first message is in its prompt too.
    e += diet('tariq', 'just finished a strawberry yogurt', 'a strawberry yogurt, just now',
              {'just now': ['strawberry yogurt']}, {'just now': '17:30'}, anchored=True)
    e += diet('tariq', 'just had an apple', 'an apple, just now', {'just now': ['apple']},
              {'just now': '16:00'}, anchored=True)
    return e


def fresh4_script():
    """The cases of evals/diet-fresh4.toml (the fourth file written blind,
    tuned on now), conducted as a careful model would, in the manner of
    fresh3_script: anchored to each case's own message, and put first by
    test_eval, as its users' names recur in the other files."""
    e = []
    e += diet('kofi', 'Breakfast was 2 scrambled eggs and wheat toast', 'breakfast: 2 scrambled '
              'eggs and wheat toast at 7:45am; a chicken caesar wrap around 12:30pm',
              {'7:45am': ['2 scrambled eggs', 'wheat toast'], '12:30pm': ['chicken caesar wrap']},
              {'7:45am': '07:45', '12:30pm': '12:30'}, anchored=True)
    e += diet('lena', '09:10 porridge w/ blueberries', 'porridge with blueberries at 09:10; '
              'lentil soup and a bread roll at 13:20',
              {'09:10': ['porridge with blueberries'], '13:20': ['lentil soup', 'bread roll']},
              {'09:10': '09:10', '13:20': '13:20'}, anchored=True)
    e += diet('marco', 'Bowl of cereal at half past seven', 'a bowl of cereal at half past seven '
              'this morning; a ham and cheese toastie at quarter to one',
              {'half past seven': ['bowl of cereal'], 'quarter to one': ['ham and cheese toastie']},
              {'half past seven': '07:30', 'quarter to one': '12:45'}, anchored=True)
    e += diet('nadia', 'had a greek yogurt about an hour ago', 'a greek yogurt about an hour ago; '
              'a banana just now', {'hour ago': ['greek yogurt'], 'just now': ['banana']},
              {'hour ago': '15:00', 'just now': '16:00'}, anchored=True)
    e += diet('otto', 'Ate a granola bar like 20 mins ago', 'a granola bar and a glass of oj, '
              'about 20 mins ago', {'20 mins ago': ['granola bar', 'glass of oj']},
              {'20 mins ago': '15:40'}, anchored=True)
    e += diet('vera', 'Only drinks today honestly', 'black coffee at 8; another black coffee at '
              '11; a diet coke at 2:30',
              {'8': ['black coffee'], '11': ['black coffee'], '2:30': ['diet coke']},
              {'8': '08:00', '11': '11:00', '2:30': '14:30'}, anchored=True)
    # The salad was the coworker's: not the user's to log.
    e += diet('xena', 'ugh what a day', 'a blueberry muffin and an oat latte around 9:30; a glazed '
              'donut at 11; leftover pad thai around 1:45',
              {'9:30': ['blueberry muffin', 'oat latte'], '11': ['glazed donut'],
               '1:45': ['leftover pad thai']},
              {'9:30': '09:30', '11': '11:00', '1:45': '13:45'}, anchored=True)
    # An item is a phrase of up to four words: the slices' count is left out.
    e += diet('yusuf', 'croissant', 'a croissant and a cappuccino around 8; 2 slices of pepperoni '
              'pizza at 12:30',
              {'8': ['croissant', 'cappuccino'], '12:30': ['slices of pepperoni pizza']},
              {'8': '08:00', '12:30': '12:30'}, anchored=True)
    e += diet('zoe', 'turkey wrap at noon then chips', 'a turkey wrap at noon; chips and salsa '
              'about 10 min ago', {'noon': ['turkey wrap'], '10 min ago': ['chips and salsa']},
              {'noon': '12:00', '10 min ago': '15:50'}, anchored=True)
    e += diet('aiden', 'Snacks so far: some trail mix', 'some trail mix around 3; a string cheese '
              'a few minutes ago', {'3': ['trail mix'], 'few minutes ago': ['string cheese']},
              {'3': '15:00', 'few minutes ago': '15:55'}, anchored=True)
    # The summary has what the user corrected it to: today's lunch, not
    # yesterday's.
    e += diet('rosa', 'For lunch I had a tuna melt, no wait', 'a grilled cheese and a pickle for '
              'lunch, around 12:15', {'12:15': ['grilled cheese', 'pickle']},
              {'12:15': '12:15'}, anchored=True)
    e += diet('priya', 'Had breakfast and lunch today', 'breakfast: a veggie omelette; lunch: a '
              'burrito bowl', {'breakfast': ['veggie omelette'], 'lunch': ['burrito bowl']},
              {'breakfast': [('What time was breakfast?', 'around 8:30'), '08:30'],
               'lunch': [('And when was lunch?', '1pm'), '13:00']}, anchored=True)
    e += diet('chen', 'oatmeal for breakfast at 7', 'oatmeal for breakfast at 7; sushi for lunch',
              {'7': ['oatmeal'], 'lunch': ['sushi']},
              {'7': '07:00', 'lunch': [('What time was lunch?', '12:45ish'), '12:45']},
              anchored=True)
    # No time at all: asked when before the summary; the first answer is
    # vague, so asked again.
    said = _user_said('quinn', 'Had some pancakes and bacon')
    first = r'[^\n]*\n\nQuestion: What did you eat'
    e += [{'match': said + '.*' + _user_said('quinn', 'ok, around 10:30') + first,
           'reply': {'action': 'answer', 'text': 'pancakes and bacon around 10:30'}},
          {'match': said + '.*' + _user_said('quinn', 'a while ago') + first,
           'reply': {'action': 'confer', 'text': 'Roughly what time was that?'}},
          {'match': said + first,
           'reply': {'action': 'confer', 'text': 'When did you have the pancakes and bacon?'}}]
    # Then the summary itemized and its time read (but the first question,
    # answered above).
    e += diet('quinn', 'Had some pancakes and bacon', 'pancakes and bacon around 10:30',
              {'10:30': ['pancakes', 'bacon']}, {'10:30': '10:30'}, anchored=True)[1:]
    e += diet('bianca', 'I had a jelly donut earlier', 'a jelly donut, earlier',
              {'earlier': ['jelly donut']},
              {'earlier': [('About what time did you have the donut?', 'around 11 this morning'),
                           '11:00']}, anchored=True)
    # The reply's time is the corrected one: noon, not 2.
    e += diet('sven', 'chicken salad for lunch', 'chicken salad and a diet snapple for lunch',
              {'lunch': ['chicken salad', 'diet snapple']},
              {'lunch': [('What time was lunch?', 'around 2.. no wait'), '12:00']}, anchored=True)
    # The summary spells the user's words out; "a bacon egg and cheese" is
    # the sandwich's name, and an item is a phrase of up to four words.
    e += diet('walt', 'brekkie was a bacon egg n cheese sammy', 'a bacon egg and cheese sandwich '
              'around 8; a mango smoothie for lunch',
              {'8': ['bacon egg and cheese'], 'lunch': ['mango smoothie']},
              {'8': '08:00', 'lunch': [('What time was lunch?', 'bout 12:30'), '12:30']},
              anchored=True)
    # Nothing to log, or the user calls it off: said so, and the dialogue
    # ends there.
    e.append({'match': _user_said('tomas', "haven't eaten anything yet today")
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': 'OK, nothing to log yet. Hope work eases up!'}})
    e += diet('uma', 'can you log my lunch', None, None, {},
              confer_first=('Sure! What did you have for lunch, and when?',
                            'eh actually never mind',
                            {'action': 'cancel', 'text': "OK, I won't log anything."}))
    e.append({'match': _user_said('dara', 'ok so I had a bagel at 9 and then... actually never mind')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': "OK, I won't log anything now. Talk tonight!"}})
    return e


def fresh5_script():
    """The cases of evals/diet-fresh5.toml (the fifth file written blind,
    all held out), conducted as a careful model would, in the manner of
    fresh4_script: anchored to each case's own message, and put first by
    test_eval, as its users' names recur in the other files."""
    e = []
    e += diet('marcus', 'Breakfast was oatmeal with blueberries at 7:30am', 'oatmeal with '
              'blueberries at 7:30am; a chicken caesar wrap at 1pm',
              {'7:30am': ['oatmeal with blueberries'], '1pm': ['chicken caesar wrap']},
              {'7:30am': '07:30', '1pm': '13:00'}, anchored=True)
    e += diet('ingrid', 'Logging: 09:15 two boiled eggs', 'two boiled eggs and rye toast at '
              '09:15; lentil soup with a bread roll at 13:40',
              {'09:15': ['two boiled eggs', 'rye toast'], '13:40': ['lentil soup', 'bread roll']},
              {'09:15': '09:15', '13:40': '13:40'}, anchored=True)
    e += diet('tomasz', 'cereal at half past seven', 'cereal at half past seven this morning; a '
              'banana at quarter to eleven',
              {'half past seven': ['cereal'], 'quarter to eleven': ['banana']},
              {'half past seven': '07:30', 'quarter to eleven': '10:45'}, anchored=True)
    e += diet('dev', 'grabbed a slice of pepperoni pizza', 'a slice of pepperoni pizza, about an '
              'hour ago', {'hour ago': ['slice of pepperoni pizza']}, {'hour ago': '15:00'},
              anchored=True)
    # An item is a phrase of up to four words: the latte's size is left out.
    e += diet('priya', 'just now: a large iced oat milk latte', 'a large iced oat milk latte, '
              'just now', {'just now': ['iced oat milk latte']}, {'just now': '16:00'},
              anchored=True)
    e += diet('lena', 'ate a granola bar like 20 mins ago', 'a granola bar, about 20 mins ago',
              {'20 mins ago': ['granola bar']}, {'20 mins ago': '15:40'}, anchored=True)
    e += diet('amara', 'cereal at 7, coffee at 10', 'cereal at 7; coffee at 10; a pb&j right now',
              {'7': ['cereal'], '10': ['coffee'], 'right now': ['pb&j']},
              {'7': '07:00', '10': '10:00', 'right now': '16:00'}, anchored=True)
    # "An hour after that" of a shake around 6: the eggs around 7.
    e += diet('theo', 'protein shake around 6 after the gym', 'a protein shake around 6 after the '
              'gym; eggs and toast around 7',
              {'6': ['protein shake'], '7': ['eggs', 'toast']},
              {'6': '06:00', '7': '07:00'}, anchored=True)
    e += diet('rosa', 'had pancakes for breakfast and a burrito', 'pancakes for breakfast; a '
              'burrito for lunch', {'breakfast': ['pancakes'], 'lunch': ['burrito']},
              {'breakfast': [('What time was breakfast?', 'around 8'), '08:00'],
               'lunch': [('And when was lunch?', '12:30ish'), '12:30']}, anchored=True)
    e += diet('kenji', 'two waffles at 8:15', 'two waffles at 8:15; a bowl of chili for lunch',
              {'8:15': ['two waffles'], 'lunch': ['bowl of chili']},
              {'8:15': '08:15', 'lunch': [('What time was lunch?', 'lunch was 12:45'), '12:45']},
              anchored=True)
    e += diet('sven', 'had a strawberry banana smoothie earlier', 'a strawberry banana smoothie, '
              'earlier', {'earlier': ['strawberry banana smoothie']},
              {'earlier': [('About what time did you have the smoothie?',
                            'around 11 this morning'), '11:00']}, anchored=True)
    e += diet('kofi', 'had leftover pad thai for lunch', 'leftover pad thai for lunch',
              {'lunch': ['leftover pad thai']},
              {'lunch': [('What time was lunch?', 'dunno, sometime after my morning meetings'),
                         ('Roughly what time was that?', 'ok i think it was about 1:15'),
                         '13:15']}, anchored=True)
    # The summary has what the user corrected it to: a bagel, not the
    # muffin (yesterday's).
    e += diet('hana', 'had a blueberry muffin around 10, oh wait', 'a bagel with cream cheese '
              'around 10', {'10': ['bagel with cream cheese']}, {'10': '10:00'}, anchored=True)
    # The reply's time is the corrected one: noon, not 1.
    e += diet('oskar', 'Had a greek salad for lunch.', 'a greek salad for lunch',
              {'lunch': ['greek salad']},
              {'lunch': [('What time was lunch?', 'At 1. No wait, sorry'), '12:00']},
              anchored=True)
    # Nothing to log, or the user calls it off: said so, and the dialogue
    # ends there.
    e.append({'match': _user_said('yusuf', 'nothing to log yet, havent eaten a thing today')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': 'OK, nothing to log yet. Hope the day '
                                                    'calms down!'}})
    e += diet('bea', 'hey can you log my food', None, None, {},
              confer_first=('Sure! What did you eat, and roughly when?',
                            'ah never mind, gotta run',
                            {'action': 'cancel', 'text': "OK, I won't log anything. Later!"}))
    e += diet('gus', 'only coffee so far today', 'coffee at 6:30; another coffee around 10',
              {'6:30': ['coffee'], '10': ['coffee']}, {'6:30': '06:30', '10': '10:00'},
              anchored=True)
    # The summary spells the user's words out ("chicken sandwich", "1230"
    # as "12:30"); the lemonade was had with them.
    e += diet('jayden', 'had a chikn sandwhich n fries', 'a chicken sandwich, fries and a '
              'lemonade around 12:30', {'12:30': ['chicken sandwich', 'fries', 'lemonade']},
              {'12:30': '12:30'}, anchored=True)
    e += diet('noor', 'avocado toast', 'avocado toast and a flat white at 8:30 this morning',
              {'8:30': ['avocado toast', 'flat white']}, {'8:30': '08:30'}, anchored=True)
    # Lunch was skipped: nothing to log for it.
    e += diet('carmen', 'ok so today has been a mess lol', 'a strawberry yogurt around 7:45; a '
              'donut around 10; a turkey club wrap and a diet coke around 2:30',
              {'7:45': ['strawberry yogurt'], '10': ['donut'],
               '2:30': ['turkey club wrap', 'diet coke']},
              {'7:45': '07:45', '10': '10:00', '2:30': '14:30'}, anchored=True)
    return e


def fresh6_script():
    """The cases of evals/diet-fresh6.toml (the sixth file written blind,
    all held out), conducted as a careful model would, in the manner of
    fresh5_script: anchored to each case's own message, and put first by
    test_eval.  Only what the user ate or drank is logged: not the donuts
    left alone, not Sam's curry, not the kids' mac and cheese, not the
    pizza corrected to a calzone."""
    e = []
    e += diet('ann', 'had oatmeal with a banana and a coffee at 7:30', 'oatmeal with a banana and '
              'a coffee at 7:30 this morning', {'7:30': ['oatmeal', 'banana', 'coffee']},
              {'7:30': '07:30'}, anchored=True)
    e += diet('bea', 'caesar salad for lunch', 'a caesar salad for lunch',
              {'lunch': ['caesar salad']},
              {'lunch': [('What time was lunch?', 'around 12:30'), '12:30']}, anchored=True)
    e += diet('carl', 'breakfast was 2 eggs and toast around 8', '2 eggs and toast around 8; a '
              'turkey wrap at 1; an apple at 3',
              {'8': ['2 eggs', 'toast'], '1': ['turkey wrap'], '3': ['apple']},
              {'8': '08:00', '1': '13:00', '3': '15:00'}, anchored=True)
    e += diet('dina', '2 cups of coffee today', 'a coffee around 7; a coffee at 10',
              {'7': ['coffee'], '10': ['coffee']}, {'7': '07:00', '10': '10:00'}, anchored=True)
    e += diet('eli', 'just ate a granola bar', 'a granola bar, just now',
              {'just now': ['granola bar']}, {'just now': '16:00'}, anchored=True)
    # The donuts were not touched: only the banana.
    e += diet('fran', 'skipped breakfast today and did NOT touch', 'a banana around 10',
              {'10': ['banana']}, {'10': '10:00'}, anchored=True)
    # Sam's green curry is not the user's; the spring rolls were shared.
    e += diet('gus', 'lunch at the thai place', 'pad thai and spring rolls at 12:30',
              {'12:30': ['pad thai', 'spring rolls']}, {'12:30': '12:30'}, anchored=True)
    e += diet('hana', 'grabbed a bagel w/ cream cheese', 'a bagel with cream cheese around 6am',
              {'6am': ['bagel with cream cheese']}, {'6am': '06:00'}, anchored=True)
    # Corrected in the same message: a calzone, not the slice of pizza.
    e += diet('ivan', 'had a slice of pizza for lunch at noon', 'a calzone for lunch at noon',
              {'noon': ['calzone']}, {'noon': '12:00'}, anchored=True)
    # The reply's time is the corrected one: 11:45, not 1.
    e += diet('jo', 'soup and crackers for lunch', 'soup and crackers for lunch',
              {'lunch': ['soup', 'crackers']},
              {'lunch': [('What time was lunch?', 'around 1. oh wait no'), '11:45']},
              anchored=True)
    # Told at 9:30 pm: "around 7" is 7 pm.  The diet names the pictographs before it
    # itemizes (meals.ost's foods_named): the prompt quotes pizza and a beer.
    kai = diet('kai', '2 slices of', '2 slices of 🍕 and a 🍺 around 7',
               {'7': ['2 slices of pizza', 'beer']}, {'7': '19:00'}, anchored=True)
    e += [dict(x, match=r'Re-format "2 slices of pizza and a beer around 7"')
          if x['match'].startswith('Re-format') else x for x in kai]
    # The mac and cheese was the kids'.
    e += diet('lou', 'made the kids mac and cheese', 'leftover chili for dinner',
              {'dinner': ['leftover chili']},
              {'dinner': [('What time was dinner?', 'like 6:30'), '18:30']}, anchored=True)
    # Calling it off: said so, and nothing is logged.
    e += diet('mo', 'log my lunch', None, None, {},
              confer_first=('Sure! What did you have for lunch, and when?', 'ugh never mind',
                            {'action': 'cancel', 'text': "OK, I won't log anything."}))
    e += diet('nell', 'had a smoothie and some almonds', None, None, {},
              confer_first=('Nice! When did you have the smoothie and the almonds?',
                            'actually forget it',
                            {'action': 'cancel', 'text': "OK, nothing logged today."}))
    # The coffee was spilt, not drunk: nothing to log.
    e.append({'match': _user_said('otto', 'lol my cat just knocked my coffee off the desk')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': "Oh no, poor coffee! Nothing to log then."}})
    # The summary spells the user's words out ("chicken sandwich", "1230"
    # as "12:30").
    e += diet('pat', 'had a chiken sandwhich and chips', 'a chicken sandwich and chips for lunch '
              'at 12:30', {'12:30': ['chicken sandwich', 'chips']}, {'12:30': '12:30'},
              anchored=True)
    # "Call it 2" is a time the program does not read (a bare number): the
    # model's 14:00 is refused once and the program asks again; after the
    # same reply it takes the model's answer.
    e += diet('quinn', 'been snacking all afternoon', 'pretzels, a cheese stick and a handful of '
              'grapes, all afternoon', {'afternoon': ['pretzels', 'cheese stick', 'grapes']},
              {'afternoon': [('Roughly when this afternoon?', 'between 1 and 3'), '14:00']},
              anchored=True)
    # Last night: the day before the cases' day.
    e += diet('rosa', '2 glasses of red wine last night', '2 glasses of red wine last night '
              'around 9', {'last night around 9': ['glasses of red wine']},
              {'last night around 9': '2025-03-13T21:00:00-04:00'}, anchored=True)
    e += diet('sam', 'protein shake after the gym at 6:45', 'a protein shake at 6:45; scrambled '
              'eggs, spinach and a coffee around 8',
              {'6:45': ['protein shake'], '8': ['scrambled eggs', 'spinach', 'coffee']},
              {'6:45': '06:45', '8': '08:00'}, anchored=True)
    # "Mid-morning" names no clock time: the model's 10:30 is not taken,
    # and the program asks the user.
    e += diet('tess', 'big bowl of cheerios', 'a big bowl of cheerios with almond milk at 7; a '
              'Clif bar mid-morning', {'7': ['cheerios with almond milk'],
                                       'mid-morning': ['clif bar']},
              {'7': '07:00', 'mid-morning': '10:30'}, anchored=True)
    return e


def logged(user, said, picked, question='What exercise did you do'):
    """A dialogue of a skill on core_skills' generic routines (the exercise
    log): the model answers the first question with the user's message and
    picks the phrases that name what is logged; times and durations are
    read by the program, or asked."""
    return [{'match': _user_said(user, said) + r'[^\n]*\n\nQuestion: ' + question,
             'reply': {'action': 'answer', 'text': said}},
            {'match': r'Text: "%s"' % re.escape(said), 'reply': {'phrases': picked}}]


def exercise_script():
    e = []
    e += logged('ana', 'went for a 30 minute run at 7am', ['run'])
    e += logged('bo', 'did 30 minutes of yoga', ['yoga'])
    e += logged('cy', 'had a workout at 7am', ['workout'])
    e += logged('di', '5k in 28 min this morning at 6:30', ['5k'])
    e += logged('ed', 'swam for 45 min at 7, then 20 minutes of stretching at noon',
                ['swam', 'stretching'])
    e += logged('fa', 'just finished a 40 min bike ride', ['bike ride'])
    e += logged('gu', 'I did an hour of tennis an hour ago', ['tennis'])
    # 'gym' alone is too general to log: the skill asks what was done.
    e += logged('hu', 'gym after work yesterday... no wait, today! about 50 minutes', ['gym'])
    e += [{'match': r'Text: "50 minutes at the gym"', 'reply': {'phrases': ['gym']}}]
    e += logged('io', 'did some pilates for half an hour', ['pilates'])
    e += logged('jo', 'went climbing', ['climbing'])
    e += logged('ka', 'ugh long day at the office. walked the dog for 20 min at 6 though',
                ['walked the dog'])
    e += logged('li', 'went for a run this morning at 7, 5k in 28 min, then 20 pushups at lunch',
                ['run', '20 pushups'])
    return e


def exercise_blind_script():
    """evals/exercise-blind.toml, written after its blind measurement."""
    e = []
    e += logged('maya', 'Went for a 30 minute run at 7am before work', ['run'])
    e += logged('theo', 'did half an hour on the rowing machine, finished up about an hour ago',
                ['rowing machine'])
    e += logged('priya', 'ran a 5k in 28 min this morning at 6:30 🏃‍♀️', ['5k'])
    e += logged('dev', '3 sets of 10 pushups at lunch', ['pushups'])
    e += logged('lena', 'swam 20 laps this morning', ['swam'])
    e += logged('marcus', 'got a 1h15 bike ride in after work', ['bike ride'])
    e += logged('sofia', 'walked the dog for 20 min at 8 and did 45 min yoga at noon',
                ['walked', 'yoga'])
    e += logged('jamal', 'gym this morning, got there at 7: 20 min on the treadmill, then weights, '
                'then 10 min of stretching', ['treadmill', 'weights', 'stretching'])
    e += logged('ben', 'ran for 30 minutes at 7 this morning, no wait, it was 40 minutes', ['ran'])
    e += logged('claire', 'went on a hike this morning around 9 with my sister and the dogs', ['hike'])
    e += [{'match': _user_said('nina', 'got a workout in today') + r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'confer', 'text': 'Nice! What workout did you do?'}}]
    e += logged('nina', 'a kettlebell class at 6am', ['kettlebell class'])
    e += [{'match': _user_said('omar', "oh I didn't exercise today") + r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'cancel', 'text': 'OK, a rest day: nothing to log.'}},
          {'match': _user_said('omar', "hey! how's it going?") + r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'confer', 'text': 'Hi! Did you do any exercise today?'}}]
    e += logged('kate', "ugh what a week. my knee's been bugging me and my boss keeps booking 8am "
                "meetings lol. anyway managed a 25 min jog around the park at lunch, 12:15ish", ['jog'])
    e += logged('raj', 'want to log a swim', ['swim'])
    # A careful model answers with the user's words, their typo mended.
    e += [{'match': _user_said('alex', 'jsut finished') + r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'answer', 'text': 'just finished 45 min on the eliptical'}},
          {'match': r'Text: "just finished 45 min on the eliptical"', 'reply': {'phrases': ['eliptical']}}]
    e += logged('alex', 'oh and 15 min of stretching after, done just now', ['stretching'])
    e += logged('grace', 'did an hour of pilates around 6', ['pilates'])
    return e


# A reply to a time question adds no food, but where a case's entry says so
# (the last entry: match entries are tried in order).
NO_MORE_FOOD = [{'match': r'List the phrases of the text that name a food or drink',
                 'reply': {'phrases': []}}]

# The user's answers to the skill's questions name nothing more to log, but
# where a case's entry above says so (the last entry: match entries are
# tried in order).
NO_MORE_EXERCISE = [{'match': r'List the phrases of the text that name a kind of exercise',
                     'reply': {'phrases': []}},
                    {'match': r'Then the user wrote: ', 'reply': {'field': 'none'}}]


def exercise_blind2_script():
    """evals/exercise-blind2.toml, written after its blind measurement."""
    e = []
    e += logged('dana', 'went for a run this mornign, 5k in 28 min 💪', ['run'])
    e += logged('marcus', 'hit the gym after work, leg day, about an hour. then walked the dog '
                'for 20 min', ['gym', 'walked the dog'])
    e += logged('keiko', 'yoga an hour ago. 45 min flow, felt amazing lol', ['yoga'])
    e += logged('keiko', 'oh forgot, also did 15 min of abs just now', ['abs'])
    e += logged('tomas', 'swam at 7 b4 work, 40 laps, took me 35 mins', ['swam'])
    e += logged('jo', 'hiked w/ sam and priya this afternoon, took an hour and a half', ['hiked'])
    e += logged('ben', 'rowed for 30 min at 6:30 this morning, no wait, it was 20 minutes',
                ['rowed'])
    e += logged('lena', 'did a boxing class today, an hour. arms r jelly', ['boxing class'])
    e += logged('ravi', 'went bouldering after lunch', ['bouldering'])
    e += [{'match': _user_said('sofia', "ugh nvm, forget it. don't log anything"),
           'reply': {'action': 'cancel', 'text': 'OK, nothing logged.'}}]
    e += logged('sofia', 'did a workout earlier', ['workout'])
    e += [{'match': _user_said('greg', "didn't work out today tbh, total rest day 😴") +
           r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'cancel', 'text': 'A rest day: nothing to log.'}}]
    e += logged('amara', 'went for a run at 6:45 this morning', ['run'])
    e += [{'match': r'Text: "[^"]*stretched for 15 after"', 'reply': {'phrases': ['stretched']}}]
    e += logged('deshawn', 'played basketball for like an hour', ['basketball'])
    e += [{'match': r'Text: "[^"]*i biked home after"',
           'reply': {'phrases': ['biked home']}}]
    e += logged('chloe', 'busy day!! 30 min peloton at 6am, walked to work (20 min), and pilates '
                'at lunch for 45 minutes', ['peloton', 'walked to work', 'pilates'])
    e += logged('nina', 'did a hiit class at 5pm, no sorry 5:30, 45 mins', ['hiit class'])
    e += logged('owen', 'hopped on the elliptical at 7 this morning', ['elliptical'])
    e += logged('pat', 'wnet swimming arond 12, hafl an hour', ['swimming'])
    return e


def exercise_blind3_script():
    """evals/exercise-blind3.toml (held out), conducted as a careful model
    would: the user's message quoted, the activities picked in the user's
    words (not the gym, the food, the people), a reminder declined."""
    e = []
    e += logged('kit', 'went for a jog this mornign around 7, about 40 mins, then did pushups',
                ['jog', 'pushups'])
    e += logged('lee', 'ran 5k in 25 min at 7 🏃', ['ran'])
    # The gym is where the weights were done.
    e += logged('mo', 'did some weights at the gym today', ['weights'])
    e += logged('ola', 'cycled 45 min at 4 - no sorry, it was at 5 not 4', ['cycled'])
    # 'Hit the gym' names no exercise: the skill asks what was done there.
    e += logged('pia', 'hit the gym this afternoon 💪', ['hit the gym'])
    e += [{'match': r'Text: "treadmill for 20 min then the rowing machine for 15, started around 3"',
           'reply': {'phrases': ['treadmill', 'rowing machine']}}]
    # The hike is to be logged, but the user calls it off when asked about it.
    e += logged('quin', 'can u log a hike from today', ['hike'])
    # No exercise, and a reminder is no exercise log's to set.
    e += [{'match': _user_said('rae', 'hey can u remind me to call the vet tmrw') +
           r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'cancel', 'text': "Sorry, I can't set reminders: I only log "
                                                 "exercise."}}]
    e += logged('sol', 'yoga 7-7:30am, walked the dog 20 min at noon, and bball w the guys 4 to '
                '5:30', ['yoga', 'walked the dog', 'bball'])
    e += logged('tam', '30 mins on the elliptical at 6:30', ['elliptical'])
    e += logged('uma', 'played tennis for 2 hours at 2 w/ sam', ['tennis'])
    e += logged('vic', 'forgot to log yesterday - swam 40 laps, took about 50 min, evening '
                'around 6', ['swam'])
    e += logged('wes', 'quick walk after lunch, 15 min', ['walk'])
    e += logged('wes', 'also just did 20 min of stretching', ['stretching'])
    # Corrected in the same message: the rowing machine, not the stairmaster.
    e += logged('xan', 'did 25 min on the stairmaster, i mean the rowing machine, around 5',
                ['rowing machine'])
    e += logged('yara', 'went swimmin', ['swimmin'])
    e += logged('zed', 'hiked 3.5 hrs this morning, started at 8', ['hiked'])
    # The pizza was eaten, not exercise: only the walk home.
    e += logged('abe', 'long day lol. had pizza at my desk, then walked home from work, like 35 '
                'min, left at 5:15. legs are dead', ['walked home'])
    return e



def exercise_blind4_script():
    """evals/exercise-blind4.toml (held out), conducted as a careful model
    would: the user's message quoted, the activities picked in the user's
    words (not the pool, the sauna, the friends, the feelings), nothing
    logged from a message that reports no exercise."""
    e = []
    # The pool is where the laps were swum.
    e += logged('maya', 'just got back from the pool, swam laps for 40 min, feel amazing '
                '🏊\u200d♀️', ['swam laps'])
    # "Leg day" is the workout's name; the squats and deadlifts are what was done.
    e += logged('dre', 'leg day done 💀 squats n deadlifts from 6 to 7ish then 20 min on the '
                'stairmaster', ['squats', 'deadlifts', 'stairmaster'])
    e += logged('rosa', 'played pickleball w my sister at the rec center this afternoon, knees are '
                'killing me lol', ['pickleball'])
    e += logged('tomas', 'yday did a 2hr hike up mt tam w the bois, today just 15 min jump rope '
                'this am', ['hike', 'jump rope'])
    # The ride is to be logged, but the user calls it off when asked about it.
    e += logged('kev', 'log a bike ride for me', ['bike ride'])
    # The yoga mat is where the cat was sick: no exercise, and the user
    # says there is nothing to log.
    e += [{'match': _user_said('jules', 'lmao my cat just threw up on my yoga mat') +
           r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'confer', 'text': 'Oh no, poor mat! Did you do any exercise today?'}},
          {'match': _user_said('jules', 'nah nothing to log, was just sharing') +
           r'[^\n]*\n\nQuestion: What exercise',
           'reply': {'action': 'cancel', 'text': 'Ha, OK: nothing to log.'}}]
    e += logged('priya', 'ran 5k in 25 min at 7 this morning, new pb!!', ['ran'])
    e += logged('ben', 'did 30 min on the rowing machine at 5', ['rowing machine'])
    # The correction, a dialogue of its own, names no exercise to log: it
    # corrects how long the row took.
    e += logged('ben', 'wait sorry it was 45 min not 30', [])
    e += [{'match': r'rowing machine, 30 min\n\nThen the user wrote: "wait sorry it was 45 min not 30"',
           'reply': {'field': 'minutes'}}]
    e += logged('nadia', 'spin class at 6 tonight 🚴 legs r jelly', ['spin class'])
    # "My usual workout" names no exercise: the skill asks what was done.
    e += logged('li', 'did my usual morning workout', ['workout'])
    e += [{'match': r'Text: "a 20 min hiit video at 6:45 then 10 min of stretching"',
           'reply': {'phrases': ['hiit video', 'stretching']}}]
    e += logged('gary', 'mowed the lawn like an hour this morning then raked n weeded the garden '
                'after lunch maybe 40 mins. that counts as exercise right??',
                ['mowed the lawn', 'raked', 'weeded the garden'])
    e += logged('claire', 'shovled the driveway 45 min before work, back is DONE ❄️',
                ['shovled the driveway'])
    # Movement is the gym, Jake a friend, the V4 a route: only the bouldering.
    e += logged('sam', 'went bouldering at movement w jake 7:30 to 9:45, sent my first v4!!! 🧗',
                ['bouldering'])
    e += logged('marcus', 'hooped at the park like 2 hrs after work then walked the dog 20 min',
                ['hooped', 'walked the dog'])
    e += logged('kai', 'surfed dawn patrol 5:45 till 7, waves were trash tho n the water was '
                'freezing 🥶', ['surfed'])
    e += logged('ellie', 'tennis today', ['tennis'])
    e += logged('gloria', 'zumba at 9:30 + 15 min on the elliptical after, im dead 😵',
                ['zumba', 'elliptical'])
    # The sauna is no exercise.
    e += logged('omar', 'kickbxing class at 6 for an hour, then sat in the sauna 20 min w my gym '
                'buddy', ['kickbxing class'])
    # Eighteen holes walked are a round of golf.
    e += logged('hank', 'walked 18 holes this morning, teed off 7:40, took like 4 and a half '
                'hrs 🙄 shot a 97', ['walked 18 holes'])
    e += logged('ines', 'did 30 min of pilates at noon', ['pilates'])
    # A dialogue of its own: the ride to work and the ride back.
    e += logged('ines', 'oh and i biked to work and back, 20 min each way',
                ['biked to work and back'])
    return e

DAY7 = '2026-11-18T%s:00-08:00'     # evals/diet-fresh7.toml's day, in Los Angeles


def _fresh7_times(times):
    """`times` of diet() with each 'HH:MM' on diet-fresh7.toml's day."""
    return {key: (DAY7 % how if isinstance(how, str) else [*how[:-1], DAY7 % how[-1]])
            for key, how in times.items()}


def diet_fresh7_script():
    """The cases of evals/diet-fresh7.toml (the seventh file written blind,
    all held out), conducted as a careful model would, in the manner of
    fresh6_script: anchored to each case's own message, and put first by
    test_eval.  Its day is another one (2026-11-18, Los Angeles).  Only
    what the user ate or drank is logged: not the sister, the office, the
    walk, the wife's steak, the muffin corrected to a bagel."""
    def d7(user, said, answer, items, times, **kw):
        return diet(user, said, answer, items, _fresh7_times(times), anchored=True, **kw)
    e = []
    e += d7('ines', "b'fast was 2 eggs and toast around 7:30", 'breakfast: 2 eggs and toast around '
            '7:30; lunch: a burrito; dinner: pasta',
            {'7:30': ['2 eggs', 'toast'], 'lunch': ['burrito'], 'dinner': ['pasta']},
            {'7:30': '07:30', 'lunch': [('What time was lunch?', 'lunch was 12ish'), '12:00'],
             'dinner': [('What time was dinner?', 'dinner was around 6:30'), '18:30']})
    e += d7('jon', '3 coffees today lol', 'a coffee at 7; a coffee around 10; a coffee at 2; a la '
            'croix with lunch', {'7': ['coffee'], '10': ['coffee'], '2': ['coffee'],
                                 'lunch': ['la croix']},
            {'7': '07:00', '10': '10:00', '2': '14:00',
             'lunch': [('What time was lunch?', 'lunch was noon'), '12:00']})
    # Corrected in the same message: a bagel, not the muffin.
    e += d7('kai', 'had a muffin for breakfast around 8, no wait', 'a bagel with cream cheese for '
            'breakfast around 8', {'8': ['bagel with cream cheese']}, {'8': '08:00'})
    # Breakfast was skipped: nothing to log for it.
    e += d7('lia', 'skipped breakfast, just had a big salad at 1', 'a big salad at 1; some almonds '
            'at 4', {'1': ['big salad'], '4': ['almonds']}, {'1': '13:00', '4': '16:00'})
    e += d7('max', 'had oatmeal around 9ish and a banana an hour ago', 'oatmeal around 9; a banana '
            'an hour ago', {'9': ['oatmeal'], 'hour ago': ['banana']},
            {'9': '09:00', 'hour ago': '10:15'})
    # The pizza is written out; the roommates are not the user's food.
    e += d7('nia', '🍕🍕 for dinner w/ roommates', 'pizza and a beer for dinner',
            {'dinner': ['pizza', 'beer']},
            {'dinner': [('What time was dinner?', 'like 7'), '19:00']})
    # Asked when, the user calls it off: nothing is logged.
    e += d7('oli', 'had a smoothie and a muffin this morning', 'a smoothie and a muffin this '
            'morning', {'morning': ['smoothie', 'muffin']}, {})
    e.append({'match': _user_said('oli', 'had a smoothie and a muffin this morning') + '.*'
              + r"Question: When, roughly, was 'morning'\?",
              'reply': {'action': 'confer', 'text': 'About what time this morning?'}})
    # The walk, jen, the office and mom are no food.
    e += d7('pat', 'ok so today: coffee at 8 with jen', 'coffee at 8; a turkey wrap at 12:30; chips '
            'at 3', {'8': ['coffee'], '12:30': ['turkey wrap'], '3': ['chips']},
            {'8': '08:00', '12:30': '12:30', '3': '15:00'})
    e += d7('quinn', 'had a protein bar and some green tea this afternoon', 'a protein bar and some '
            'green tea this afternoon', {'afternoon': ['protein bar', 'green tea']},
            {'afternoon': [('About what time this afternoon?', 'this afternoon'),
                           ('Roughly what time was that?', 'around 3:30'), '15:30']})
    # The steak was the wife's.
    e += d7('ray', 'my wife had the steak', 'the salmon and some rice around 7',
            {'7': ['salmon', 'rice']}, {'7': '19:00'})
    e += d7('sam', 'lunch was a bowl of pho', 'a bowl of pho for lunch', {'lunch': ['bowl of pho']},
            {'lunch': [('What time was lunch?', '1:30, oh and i also had a spring roll'),
                       '13:30']})
    e += [{'match': r'Text: "[^"]*i also had a spring roll', 'reply': {'phrases': ['spring roll']}}]
    e += d7('tia', 'had a bowl of ramen like an hour ago', 'a bowl of ramen, about an hour ago',
            {'hour ago': ['bowl of ramen']}, {'hour ago': '19:30'})
    # Three dialogues: no time at first, so asked when before the summary.
    # The third one's entries first, as the first one's message (and its
    # "just now") is in its prompt too.
    first = r'[^\n]*\n\nQuestion: What did you eat'
    for said, question, reply, answer, items, times in [
            ('an apple', 'When did you have the apple?', 'just now', 'an apple, just now',
             {'just now': ['apple']}, {'just now': '16:00'}),
            ('lunch: leftover chili + cornbread', None, None, 'leftover chili and cornbread for '
             'lunch', {'lunch': ['leftover chili', 'cornbread']},
             {'lunch': [('What time was lunch?', 'like 12:30'), '12:30']}),
            ('greek yogurt w granola and a coffee', 'When did you have the yogurt, granola and '
             'coffee?', 'just now', 'greek yogurt with granola and a coffee, just now',
             {'just now': ['greek yogurt with granola', 'coffee']}, {'just now': '08:00'})]:
        if question is None:
            e += d7('uri', said, answer, items, times)
            continue
        told = _user_said('uri', said)
        e += [{'match': told + '.*' + _user_said('uri', reply) + first,
               'reply': {'action': 'answer', 'text': answer}},
              {'match': told + first, 'reply': {'action': 'confer', 'text': question}}]
        e += d7('uri', said, answer, items, times)[1:]
    # The hedges are no food; class is when, not what.
    e += d7('val', 'ugh im so bad at this', 'cereal and a red bull before class at 9',
            {'9': ['cereal', 'red bull']}, {'9': '09:00'})
    # A question about food, nothing eaten: nothing to log.
    e.append({'match': _user_said('wen', 'how many calories are in an avocado')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': "I can't look up calories, sorry: I only log "
                                                    "what you eat and drink."}})
    e += d7('xia', 'for lunch a blt and iced tea', 'a blt and iced tea for lunch; a slice of '
            'cheesecake at 4', {'lunch': ['blt', 'iced tea'], '4': ['slice of cheesecake']},
            {'lunch': [('What time was lunch?', 'lunch was 12:15'), '12:15'], '4': '16:00'})
    e += d7('yan', 'dinner was 2 tacos', '2 tacos for dinner', {'dinner': ['2 tacos']},
            {'dinner': [('What time was dinner?', '7ish. oh and it was 3 tacos'), '19:00']})
    e += [{'match': r'Text: "[^"]*it was 3 tacos', 'reply': {'phrases': ['3 tacos']}}]
    # The girls and bluestone are no food.
    e += d7('zoe', 'brunch w/ the girls at bluestone', 'eggs benny and a mimosa around 11; popcorn '
            'just now', {'11': ['eggs benny', 'mimosa'], 'just now': ['popcorn']},
            {'11': '11:00', 'just now': '20:30'})
    e += d7('ada', 'dinner was chicken stir fry', 'chicken stir fry for dinner',
            {'dinner': ['chicken stir fry']},
            {'dinner': [('What time was dinner?', 'dinner time lol'),
                        ('Roughly what time was that?', 'like 6:45'), '18:45']})
    e += d7('ben', 'had a cup of hot cocoa around 9ish', 'a cup of hot cocoa around 9 this morning; '
            'a handful of pretzels at 10', {'9': ['cup of hot cocoa'], '10': ['handful of pretzels']},
            {'9': '09:00', '10': '10:00'})
    return e


DAY8 = '2026-12-02T%s:00-06:00'     # evals/diet-fresh8.toml's day, in Chicago


def _anchored_day(user, said, answer, items, times, day, mapped=False, **kw):
    """diet() anchored to the case's message, on `day`; `mapped`: the itemize
    reply in the seed's own shape, a map of each time to its items (a group's
    items are phrases of four words at most, and "ben & jerry's half baked"
    is five)."""
    entries = diet(user, said, answer, items, _fresh8_times(times, day), anchored=True, **kw)
    for entry in entries if mapped else []:
        if entry['reply'].get('action') == 'itemize':
            entry['reply'] = {'action': 'itemize', 'items': items}
    return entries


def _fresh8_times(times, day=DAY8):
    """`times` of diet() with each 'HH:MM' on `day` (diet-fresh8.toml's,
    or a case's own); a whole ISO date-time (another day) as it is."""
    on = (lambda hhmm: hhmm if len(hhmm) > 5 else day % hhmm)
    return {key: (on(how) if isinstance(how, str) else [*how[:-1], on(how[-1])])
            for key, how in times.items()}


def diet_fresh8_script():
    """The cases of evals/diet-fresh8.toml (the eighth file written blind,
    all held out), conducted as a careful model would, in the manner of
    diet_fresh7_script: anchored to each case's own message, and put first
    by test_eval.  Its day is 2026-12-02 in Chicago, but where a case says
    otherwise.  Only what the user ate or drank is logged: not the
    coworkers, the boyfriend, the pub, the roommate's toast or the bread
    skipped, not the croissant corrected to a pain au chocolat."""
    def d8(user, said, answer, items, times, day=DAY8, mapped=False, **kw):
        return _anchored_day(user, said, answer, items, times, day, mapped, **kw)
    e = []
    # The coworkers and the place on 5th st are no food; "dinner just
    # leftover lasagna" is no "just now": dinner is asked.
    e += d8('dana', 'bfast was cheerios w oat milk', 'cheerios with oat milk for breakfast; pho for '
            'lunch; leftover lasagna for dinner',
            {'breakfast': ['cheerios with oat milk'], 'lunch': ['pho'],
             'dinner': ['leftover lasagna']},
            {'breakfast': [('What time was breakfast?', 'like 7:15'), '07:15'],
             'lunch': [('What time was lunch?', '12:30ish'), '12:30'],
             'dinner': [('What time was dinner?', 'bout 7'), '19:00']})
    e += d8('jonas', '07:45 flat white + almond croissant', 'a flat white and an almond croissant '
            'at 07:45; katsu curry at 13:10; a myprotein chocolate protein shake at 19:30',
            {'07:45': ['flat white', 'almond croissant'], '13:10': ['katsu curry'],
             '19:30': ['myprotein chocolate protein shake']},
            {'07:45': '07:45', '13:10': '13:10', '19:30': '19:30'})
    # Starbucks is where, not what.
    e += d8('priya', 'had an oat milk matcha latte', 'an oat milk matcha latte and a blueberry '
            'muffin, about an hour ago',
            {'hour ago': ['oat milk matcha latte', 'blueberry muffin']}, {'hour ago': '14:20'})
    # Last night: the day before; the boyfriend and ichiran are no food.
    e += d8('mei', 'last night around 9 i had tonkotsu ramen', 'tonkotsu ramen last night around '
            '9; a chicken caesar wrap for lunch today',
            {'last night around 9': ['tonkotsu ramen'], 'lunch': ['chicken caesar wrap']},
            {'last night around 9': '2026-12-01T21:00:00-06:00',
             'lunch': [('What time was lunch?', 'around 1'), '13:00']})
    # Nothing eaten yet: nothing to log.
    e.append({'match': _user_said('marcus', 'havent eaten anything yet today')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': "OK, nothing to log then."}})
    # Asked when, the user calls it off: nothing is logged.
    e += d8('tyler', 'burger n fries for lunch', 'a burger and fries for lunch',
            {'lunch': ['burger', 'fries']}, {})
    e += [{'match': _user_said('tyler', 'burger n fries for lunch') + '.*'
           + _user_said('tyler', 'ugh actually nvm') + r"[^\n]*\n\nQuestion: When, roughly, was 'lunch'\?",
           'reply': {'action': 'cancel', 'text': "OK, I won't log anything."}},
          {'match': _user_said('tyler', 'burger n fries for lunch') + '.*'
           + r"Question: When, roughly, was 'lunch'\?",
           'reply': {'action': 'confer', 'text': 'What time was lunch?'}}]
    # The croissant was a pain au chocolat: only that is picked from the
    # reply, and the croissant the reply takes back goes.
    e += d8('chloe', 'cappuccino and a croissant for breakfast', 'a cappuccino and a croissant for '
            'breakfast', {'breakfast': ['cappuccino', 'croissant']},
            {'breakfast': [('What time was breakfast?', '8:30'), '08:30']})
    e += [{'match': r'Text: "[^"]*pain au chocolat not a croissant',
           'reply': {'phrases': ['pain au chocolat']}}]
    # The truck is where; the horchata is told with the time.  The model's
    # 19:00 for "like 7, and i had a horchata with it" is refused once and
    # the program asks again; after the same reply it takes the model's.
    e += d8('luis', 'dinner was tacos al pastor', 'tacos al pastor for dinner',
            {'dinner': ['tacos al pastor']},
            {'dinner': [('What time was dinner?', 'like 7'), '19:00']})
    e += [{'match': r'Text: "[^"]*i had a horchata with it', 'reply': {'phrases': ['horchata']}}]
    e += d8('kev', '7am black coffee, 10:30 a banana', 'black coffee at 7am; a banana at 10:30; a '
            'bag of hot cheetos and a sugar free red bull at 3pm',
            {'7am': ['black coffee'], '10:30': ['banana'],
             '3pm': ['hot cheetos', 'sugar free red bull']},
            {'7am': '07:00', '10:30': '10:30', '3pm': '15:00'})
    # Told the next morning: last night is the file's day.
    e += d8('sam', 'feeling kinda guilty lol', "half a pint of ben & jerry's half baked around 10 "
            'last night', {'around 10 last night': ["ben & jerry's half baked"]},
            {'around 10 last night': '2026-12-02T22:00:00-06:00'}, mapped=True)
    # Mom made it: no food of her own.
    e += d8('arjun', 'had dal and rice w roti for dinner', 'dal and rice with roti for dinner',
            {'dinner': ['dal', 'rice', 'roti']},
            {'dinner': [('What time was dinner?', 'earlier'),
                        ('Roughly what time was dinner?', 'ok like 6:30'), '18:30']})
    # The pub and the lads are no food.  The model's 18:00 for "6 till about
    # 8" is refused: the program logs its own reading, 19:54.
    e += d8('liam', '2 pints of guinness at the pub', '2 pints of guinness after work; a doner '
            'kebab on the way home',
            {'after work': ['2 pints of guinness'], 'way home': ['doner kebab']},
            {'after work': [('What time were the pints of guinness?', '6 till about 8'), '18:00'],
             'way home': [('What time was the kebab?', 'dunno, late'),
                          ('Roughly what time was the kebab?', 'bout 10:45'), '22:45']})
    # The run is no food; lunch is keyed by its time as the user wrote it.
    e += d8('nina', 'clif bar + gatorade before my run at 6am', 'a clif bar and a gatorade at 6am; '
            'a double chicken chipotle bowl for lunch ~1',
            {'6am': ['clif bar', 'gatorade'], '~1': ['double chicken chipotle bowl']},
            {'6am': '06:00', '~1': '13:00'})
    e += d8('ethan', 'had a pbj sandwhich n a glass of choc milk', 'a pbj sandwich and a glass of '
            'choc milk for lunch', {'lunch': ['pbj sandwich', 'choc milk']},
            {'lunch': [('What time was lunch?', '12:15 or so'), '12:15']})
    # The roommate's toast is hers, and the bread was skipped.
    e += d8('hana', 'made shakshuka for me and my roommate', 'shakshuka and a mimosa for brunch',
            {'brunch': ['shakshuka', 'mimosa']},
            {'brunch': [('What time was brunch?', '11ish'), '11:00']}, day='2026-12-06T%s:00-06:00')
    # In London; tea is a meal, the nan no food.  "11 obvs" is asked again
    # once, as "like 7" is.
    e += d8('olly', 'cuppa and 2 digestives at elevenses', "a cuppa and 2 digestives at elevenses; "
            "a ploughman's for tea", {'elevenses': ['cuppa', 'digestives'], 'tea': ["ploughman's"]},
            {'elevenses': [('What time was elevenses?', '11 obvs'), '11:00'],
             'tea': [('What time was tea?', 'about half 5'), '17:30']},
            day='2026-12-02T%s:00+00:00')
    # The konbini and the friends are no food.
    e += d8('yuna', 'grabbed onigiri n a pocari sweat', 'onigiri and a pocari sweat around noon; '
            'tteokbokki and a sikhye at 5',
            {'noon': ['onigiri', 'pocari sweat'], '5': ['tteokbokki', 'sikhye']},
            {'noon': '12:00', '5': '17:00'})
    # "Mid-afternoon" is no clock time: asked.
    e += d8('sofia', 'chilaquiles verdes w a fried egg', 'chilaquiles verdes with a fried egg and '
            'cafe de olla at 08:30; a couple of conchas mid-afternoon',
            {'08:30': ['chilaquiles verdes', 'fried egg', 'cafe de olla'],
             'mid-afternoon': ['conchas']},
            {'08:30': '08:30',
             'mid-afternoon': [('About what time in the afternoon?', '3ish'), '15:00']})
    # Two dialogues: the bagel now, lunch told hours later.
    e += d8('rachel', 'bagel w lox n cream cheese just now', 'a bagel with lox and cream cheese, '
            'just now', {'just now': ['bagel', 'lox', 'cream cheese']}, {'just now': '08:55'})
    e += d8('rachel', 'lunch was a banh mi', 'a banh mi and a thai iced tea for lunch',
            {'lunch': ['banh mi', 'thai iced tea']},
            {'lunch': [('What time was lunch?', 'bout 12:45'), '12:45']})
    # An opener: what was had is asked first.
    e += d8('zoe', 'hey can u log stuff for me', 'a coffee at 8; another coffee at 11; a cold brew '
            'at 2', {'8': ['coffee'], '11': ['coffee'], '2': ['cold brew']},
            {'8': '08:00', '11': '11:00', '2': '14:00'},
            confer_first=('Sure! What did you eat or drink today, and when?', 'only coffee so far',
                          {'action': 'answer',
                           'text': 'a coffee at 8; another coffee at 11; a cold brew at 2'}))
    return e


DAY9 = '2026-02-10T%s:00+05:30'     # evals/diet-fresh9.toml's day, in India


def diet_fresh9_script():
    """The cases of evals/diet-fresh9.toml (the ninth file written blind,
    all held out), conducted as a careful model would, in the manner of
    diet_fresh8_script: anchored to each case's own message, and put first
    by test_eval.  Its day is 2026-02-10 in India (UTC+05:30), but where a
    case says yesterday.  Only what the user ate or drank is logged: not
    the guys, the canteen, the kids' pancakes, the sister, the pub, the
    study group, the lunch skipped, not the samosa corrected to kachori."""
    def d9(user, said, answer, items, times, mapped=False, **kw):
        return _anchored_day(user, said, answer, items, times, DAY9, mapped, **kw)
    e = []
    # The guys and the canteen are no food, lunch was skipped; the red bull
    # was before the 9am lecture, so asked when (the program takes 9am, the
    # lecture's time, and does not ask: within the case's half hour).
    e += d9('arjun', 'ok so today: maggi at like 2am', 'maggi at 2am; a redbull before my 9am '
            'lecture; a chicken shawarma wrap just now',
            {'2am': ['maggi'], 'before my 9am lecture': ['redbull'],
             'just now': ['chicken shawarma wrap']},
            {'2am': '02:00',
             'before my 9am lecture': [('What time did you have the red bull?', 'like 8:40'),
                                       '08:40'],
             'just now': '20:15'})
    # Breakfast was when she woke, at 3pm; the car is where.
    e += d9('priya', 'night shift again :(', 'poha and 2 cups of chai at 3pm; a banana and a '
            'protein bar just now', {'3pm': ['poha', 'chai'], 'just now': ['banana', 'protein bar']},
            {'3pm': '15:00', 'just now': '20:15'})
    # The pancakes were the kids'; the desk is where.
    e += d9('megan', 'made pancakes for the kids at 8', 'a coffee and their leftover crusts at 8; '
            'a caesar salad for lunch', {'8': ['coffee', 'leftover crusts'], 'lunch': ['caesar salad']},
            {'8': '08:00', 'lunch': [('What time was lunch?', '1:30ish'), '13:30']})
    # Every time told: nothing is asked.
    e += d9('margaret', 'good evening. i had porridge', 'porridge with stewed prunes at 7; a cup '
            'of earl grey with two digestives at 11; leek and potato soup at half twelve',
            {'7': ['porridge with stewed prunes'], '11': ['earl grey', 'digestives'],
             'half twelve': ['leek and potato soup']},
            {'7': '07:00', '11': '11:00', 'half twelve': '12:30'})
    # What was had is asked first; the time comes with it.
    e += d9('chidi', 'pls log my lunch', 'egusi soup with pounded yam and a chapman around 1:30',
            {'1:30': ['egusi soup', 'pounded yam', 'chapman']}, {'1:30': '13:30'},
            confer_first=('What did you have for lunch?', 'egusi soup with pounded yam',
                          {'action': 'answer',
                           'text': 'egusi soup with pounded yam and a chapman around 1:30'}))
    # "Earlier today" is no time: asked again.
    e += d9('ama', 'had jollof rice n fried plantain earlier', 'jollof rice, fried plantain and a '
            'malta guinness earlier', {'earlier': ['jollof rice', 'fried plantain', 'malta guinness']},
            {'earlier': [('What time did you have them?', 'earlier today lol'),
                         ('Roughly what time was that?', 'ok like 2ish'), '14:00']})
    # Corrected in the same message: kachori, not samosa; the tapri and
    # the office are where.
    e += d9('rohan', 'had 2 samosa and a cutting chai around 5', 'kachori and a cutting chai '
            'around 5', {'5': ['kachori', 'cutting chai']}, {'5': '17:00'})
    # The lassi is told with the time.
    e += d9('harpreet', 'lunch was rajma chawal', 'rajma chawal for lunch',
            {'lunch': ['rajma chawal']},
            {'lunch': [('What time was lunch?', 'around 1:30. had a sweet lassi'), '13:30']})
    e += [{'match': r'Text: "[^"]*had a sweet lassi with it too',
           'reply': {'phrases': ['sweet lassi']}}]
    # The husband is no food; 7:30 for dinner is 19:30.
    e += d9('claire', 'dinner at 7:30 - grilled salmon', 'grilled salmon, quinoa and a glass of '
            'sauvignon blanc for dinner at 7:30',
            {'7:30': ['grilled salmon', 'quinoa', 'sauvignon blanc']}, {'7:30': '19:30'})
    # The preworkout and the banana at 16:45.
    e += d9('kofi', 'log: 06:00 3 egg whites + oats', '3 egg whites and oats at 06:00; a whey shake '
            'at 09:30; chicken breast, rice and broccoli at 13:15; preworkout and a banana at '
            '16:45; salmon and sweet potato at 19:00',
            {'06:00': ['3 egg whites', 'oats'], '09:30': ['whey shake'],
             '13:15': ['chicken breast', 'rice', 'broccoli'], '16:45': ['preworkout', 'banana'],
             '19:00': ['salmon', 'sweet potato']},
            {'06:00': '06:00', '09:30': '09:30', '13:15': '13:15', '16:45': '16:45',
             '19:00': '19:00'})
    e += d9('dev', 'grabbed a big mac meal about an hour ago', 'a big mac meal and a large coke '
            'about an hour ago', {'hour ago': ['big mac meal', 'large coke']}, {'hour ago': '19:15'})
    # Yesterday's wedding is yesterday; the cousin is no food.
    e += d9('lakshmi', 'forgot to log yesterday', 'mutton biryani and gulab jamun yesterday around '
            '10pm; idli sambar for breakfast at 8',
            {'yesterday around 10pm': ['mutton biryani', 'gulab jamun'], '8': ['idli sambar']},
            {'yesterday around 10pm': '2026-02-09T22:00:00+05:30', '8': '08:00'})
    # Nothing eaten: nothing to log.
    e.append({'match': _user_said('tanvi', 'havent eaten anything all day')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': 'OK, nothing to log then. Good luck with '
                                                    'your exams!'}})
    # No time told: asked, the user calls it off; nothing is logged.
    e += [{'match': _user_said('marco', 'ugh nvm, dont log that') + r'[^\n]*\n\nQuestion: ',
           'reply': {'action': 'cancel', 'text': "OK, I won't log anything."}},
          {'match': _user_said('marco', 'had some leftover pepperoni pizza')
           + r'[^\n]*\n\nQuestion: What did you eat',
           'reply': {'action': 'confer', 'text': 'When did you have the pizza?'}}]
    # The sister and the place are no food; the macchiato came after lunch.
    e += d9('selam', 'lunch w my sister', 'injera with misir wot and doro wot for lunch; a '
            'macchiato after', {'lunch': ['injera', 'misir wot', 'doro wot'], 'after': ['macchiato']},
            {'lunch': [('What time was lunch?', 'around 1'), '13:00'],
             'after': [('What time did you have the macchiato?', 'like 2:15'), '14:15']})
    # The pub and the lads are no food; the crisps were had there, from 6
    # to 8: about 7.  The model's 19:00 is no time the user named, and the
    # program logs its own reading of "6 to 8", six minutes to eight (19:54,
    # within the case's hour).
    e += d9('declan', '2 pints of guinness at the pub', '2 pints of guinness and a bag of cheese n '
            'onion crisps from 6 to 8', {'6 to 8': ['2 pints of guinness', 'cheese n onion crisps']},
            {'6 to 8': '19:00'})
    e += d9('jess', 'had a kitkat chunky at like 4', 'a kitkat chunky at 4; spag bol for dinner; '
            'a magnum after dinner',
            {'4': ['kitkat chunky'], 'dinner': ['spag bol'], 'after dinner': ['magnum']},
            {'4': '16:00', 'dinner': [('What time was dinner?', 'like 7'), '19:00'],
             'after dinner': [('What time did you have the magnum?', '7:30ish'), '19:30']})
    # The study group is no food; "afternoon" is no clock time, and the
    # reply "afternoon" says it again: asked again.  The bubble tea is one
    # item of six words: the seed's own shape, as a group's items are
    # phrases of four words at most.
    e += d9('mei', 'brunch was avocado toast', 'avocado toast and a flat white for brunch; a taro '
            'bubble tea with oat milk in the afternoon',
            {'brunch': ['avocado toast', 'flat white'],
             'afternoon': ['taro bubble tea with oat milk']},
            {'brunch': [('What time was brunch?', '11ish'), '11:00'],
             'afternoon': [('About what time did you have the bubble tea?', 'afternoon'),
                           ('Roughly what time was the bubble tea?', 'ok around 4'), '16:00']},
            mapped=True)
    # The baby and the kids' plates are no food.
    e += d9('liam', 'up half the night w the baby', 'cold vegemite toast at 5am; leftover mac n '
            'cheese at lunch', {'5am': ['cold vegemite toast'], 'lunch': ['leftover mac n cheese']},
            {'5am': '05:00', 'lunch': [('What time was lunch?', '12.30 or so'), '12:30']})
    # Two dialogues; the truck and the roommate are no food.
    e += d9('luis', 'ate 3 tacos al pastor', '3 tacos al pastor with a horchata around 12; some '
            'takis around 5', {'12': ['3 tacos al pastor', 'horchata'], '5': ['takis']},
            {'12': '12:00', '5': '17:00'})
    e += d9('luis', 'oh and last nite my roommate made tteokbokki', 'tteokbokki last night around '
            '11', {'last night around 11': ['tteokbokki']},
            {'last night around 11': '2026-02-09T23:00:00+05:30'})
    return e


DAY10 = '2026-12-12T%s:00+01:00'    # evals/diet-fresh10.toml's day, in Lagos


def diet_fresh10_script():
    """The cases of evals/diet-fresh10.toml (the tenth file written blind,
    all held out), conducted as a careful model would, in the manner of
    diet_fresh9_script: anchored to each case's own message, and put first
    by test_eval.  Its day is 2026-12-12 at UTC+01:00, but where a case
    says yesterday or last night.  Only what the user ate or drank is
    logged: not the party, the shop, the club, the hostel, the boss, the
    husband, the customers, not the amala corrected to eba nor the curd
    rice corrected to lemon rice."""
    def d10(user, said, answer, items, times, mapped=False, **kw):
        return _anchored_day(user, said, answer, items, times, DAY10, mapped, **kw)
    e = []
    # The cousin's party is where.
    e += d10('tunde', 'omo i chopped jollof rice n fried chicken', 'jollof rice, fried chicken and '
             '2 cups of zobo around 4', {'4': ['jollof rice', 'fried chicken', '2 cups of zobo']},
             {'4': '16:00'})
    # The hospital is where.
    e += d10('maricel', 'gud eve! just woke up for my night duty', 'pandesal with kape at 6pm; '
             'sinigang na baboy and rice at 7:30',
             {'6pm': ['pandesal', 'kape'], '7:30': ['sinigang na baboy', 'rice']},
             {'6pm': '18:00', '7:30': '19:30'})
    # The grandchildren are no food; the pierogi were yesterday; the tea
    # right after obiad is asked.
    e += d10('halina', 'Good evening. Yesterday evening I made pierogi ruskie', '8 pierogi ruskie '
             'yesterday evening at 6; barszcz with uszka for obiad at 2; a tea with lemon right '
             'after', {'yesterday evening at 6': ['8 pierogi ruskie'], '2': ['barszcz with uszka'],
                       'right after': ['tea with lemon']},
             {'yesterday evening at 6': '2026-12-11T18:00:00+01:00', '2': '14:00',
              'right after': [('What time did you have the tea?', 'Right after obiad'), '14:15']})
    # The canteen is where; "before the bus" is no time: asked again.
    e += d10('rafael', 'e aí! this morning', 'pão de queijo and a cafezinho this morning; feijoada '
             'with farofa for lunch; a guaraná later',
             {'morning': ['pão de queijo', 'cafezinho'], 'lunch': ['feijoada', 'farofa'],
              'later': ['guaraná']},
             {'morning': [('About what time this morning?', 'before i caught the bus'),
                          ('Roughly what time did you catch the bus?', 'the bus comes 6:40'),
                          '06:30'],
              'lunch': [('What time was lunch?', 'meio-dia'), '12:00'],
              'later': [('What time did you have the guaraná?', 'around 3'), '15:00']})
    # The farm and the brothers are no food; the garden egg is told with
    # the time.
    e += d10('emeka', 'good evening. i had abacha with ugba', 'abacha with ugba in the afternoon; '
             'palm wine in the evening',
             {'afternoon': ['abacha', 'ugba'], 'evening': ['palm wine']},
             {'afternoon': [('About what time in the afternoon?', 'about 2'), '14:00'],
              'evening': [('About what time in the evening?', 'around 7'), '19:00']})
    e += [{'match': r'Text: "[^"]*i also ate one garden egg', 'reply': {'phrases': ['garden egg']}}]
    # Corrected in the same message: eba, not amala; the shop is where.
    e += d10('bisi', 'had amala with ewedu and gbegiri', 'eba with ewedu and gbegiri for lunch; a '
             'bottle of malt around 5',
             {'lunch': ['eba', 'ewedu', 'gbegiri'], '5': ['bottle of malt']},
             {'lunch': [('What time was lunch?', 'half past one'), '13:30'], '5': '17:00'})
    # The mallam, the junction and the keke are no food.
    e += d10('musa', 'bought suya from mallam', 'suya with onions and a cold fanta, about an hour '
             'ago', {'hour ago': ['suya', 'onions', 'cold fanta']}, {'hour ago': '19:30'})
    # A dry fast: nothing to log.
    e.append({'match': _user_said('grace', 'nothing today o.')
              + r'[^\n]*\n\nQuestion: What did you eat',
              'reply': {'action': 'cancel', 'text': 'OK, nothing to log today. All the best with '
                                                    'your fast!'}})
    # Asked when, the user calls it off: nothing is logged.
    e += d10('kasia', 'had a zapiekanka and 3 beers last night', 'a zapiekanka and 3 beers last '
             'night after the club', {'last night': ['zapiekanka', '3 beers']}, {})
    e += [{'match': _user_said('kasia', 'had a zapiekanka and 3 beers last night') + '.*'
           + _user_said('kasia', 'ugh actually forget it')
           + r"[^\n]*\n\nQuestion: When, roughly, was 'last night'\?",
           'reply': {'action': 'cancel', 'text': "OK, I won't log anything."}},
          {'match': _user_said('kasia', 'had a zapiekanka and 3 beers last night') + '.*'
           + r"Question: When, roughly, was 'last night'\?",
           'reply': {'action': 'confer', 'text': 'About what time last night?'}}]
    e += d10('marek', 'breakfast 05:15 jajecznica', 'jajecznica, rye bread and kawa at 05:15; '
             'schabowy z ziemniakami, mizeria and kompot at 14:30',
             {'05:15': ['jajecznica', 'rye bread', 'kawa'],
              '14:30': ['schabowy z ziemniakami', 'mizeria', 'kompot']},
             {'05:15': '05:15', '14:30': '14:30'})
    # Last nite is the day before; the vendor and the mall are where.
    e += d10('jun', 'last nite around 11 i had 2 balut', '2 balut and a red horse last nite around '
             '11; pancit canton at 3pm today',
             {'last nite around 11': ['2 balut', 'red horse'], '3pm': ['pancit canton']},
             {'last nite around 11': '2026-12-11T23:00:00+01:00', '3pm': '15:00'})
    # The curd rice was lemon rice: only that is picked from the reply, and
    # the curd rice the reply takes back goes.
    e += d10('anil', 'morning idli sambar at 8', 'idli sambar at 8; curd rice for lunch; filter '
             'coffee with murukku around 5',
             {'8': ['idli sambar'], 'lunch': ['curd rice'], '5': ['filter coffee', 'murukku']},
             {'8': '08:00', 'lunch': [('What time was lunch?', '1 pm'), '13:00'], '5': '17:00'})
    e += [{'match': r'Text: "[^"]*it was lemon rice today, not curd rice',
           'reply': {'phrases': ['lemon rice']}}]
    # Football is no food; "after d match" is no time: asked again.
    e += d10('chidi', 'i ate indomie n egg b4 football', 'indomie and egg before football this '
             'morning; puff puff and chapman after the match',
             {'morning': ['indomie', 'egg'], 'after the match': ['puff puff', 'chapman']},
             {'morning': [('About what time this morning?', 'like 9'), '09:00'],
              'after the match': [('What time did you have the puff puff?', 'after d match'),
                                  ('Roughly what time did the match end?', 'match finish 12'),
                                  '12:30']})
    # The hostel, the market square and the pub are where.
    e += d10('liam', "g'day! had vegemite toast", 'vegemite toast with a flat white round 9; '
             'zapiekanka for lunch; a few piwo tonight',
             {'9': ['vegemite toast', 'flat white'], 'lunch': ['zapiekanka'], 'tonight': ['piwo']},
             {'9': '09:00', 'lunch': [('What time was lunch?', 'bout 1'), '13:00'],
              'tonight': [('What time tonight?', 'round 7'), '19:00']})
    # Work, the boss and the husband are no food; "till 7" is when work ended.
    e += d10('ama', 'so stressed from work today', 'waakye with shito and wele for lunch; kenkey '
             'and fried fish for supper',
             {'lunch': ['waakye', 'shito', 'wele'], 'supper': ['kenkey', 'fried fish']},
             {'lunch': [('What time was lunch?', 'around half 12'), '12:30'],
              'supper': [('What time was supper?', "8 o'clock"), '20:00']})
    # Two dialogues: breakfast, then a tea told at 21:40.
    e += d10('ngozi', 'had moi moi and pap for breakfast at 7', 'moi moi and pap for breakfast at '
             '7', {'7': ['moi moi', 'pap']}, {'7': '07:00'})
    e += d10('ngozi', 'oh and i just had a cup of lipton', 'a cup of lipton with 2 digestive '
             'biscuits, just now', {'just now': ['cup of lipton', '2 digestive biscuits']},
             {'just now': '21:40'})
    # The customers are no food.
    e += d10('felix', 'i tok ogbono soup wit pounded yam', 'ogbono soup with pounded yam for lunch '
             'at 2pm; 1 guiness stout by 6',
             {'2pm': ['ogbono soup', 'pounded yam'], '6': ['guiness stout']},
             {'2pm': '14:00', '6': '18:00'})
    # "The usual time" is no time: asked again.
    e += d10('lucia', 'boa noite! for dinner i had rice', 'rice, beans and steak with onions for '
             'dinner; later a slice of bolo de fubá with café com leite',
             {'dinner': ['rice', 'beans', 'steak with onions'],
              'later': ['bolo de fubá', 'café com leite']},
             {'dinner': [('What time was dinner?', 'the usual time'),
                         ('Roughly what time was dinner?', '7 and a little bit'), '19:10'],
              'later': [('When did you have the bolo de fubá?', 'about 20 minutes ago'), '20:10']})
    # Theatre is work.
    e += d10('fon', 'only had a cup of ovaltine', 'a cup of ovaltine at 6:45 this morning; a coke '
             'zero around 4', {'6:45': ['cup of ovaltine'], '4': ['coke zero']},
             {'6:45': '06:45', '4': '16:00'})
    # The night shift began yesterday: 2am and 7 are this morning.
    e += d10('agnieszka', 'started nights yesterday at 7pm', 'kanapki z serem and a tiger energy '
             'drink at 2am; owsianka at 7 this morning; rosół an hour ago',
             {'2am': ['kanapki z serem', 'tiger energy drink'], '7 this morning': ['owsianka'],
              'hour ago': ['rosół']},
             {'2am': '02:00', '7 this morning': '07:00', 'hour ago': '19:30'})
    return e
