"""The `lemma` built-in: a text's words in their dictionary form.

"swam 20 laps" is "swim 20 lap", "walked the dog" is "walk the dog": a
skill that logs what the user did can name it as a dictionary does, so a
log reads the same however it was told.  The words are simplemma's (a
maintained, rule-and-lexicon lemmatizer with its data in the package); what
is here is the argument checking and keeping the text's own spelling where
the lemma differs only in case ("pilates", not "Pilates").
"""
from __future__ import annotations

import re

from . import limits, printing
from .values import OstError, kind

__all__ = ['b_lemma']

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
MAX_TEXT = 4096


def _lemmatize(word, lang):
    if "'" in word:
        return word         # "didn't" is not "do"
    import simplemma        # loaded on first use: its tables take ~0.3 s
    try:
        found = simplemma.lemmatize(word, lang=lang)
    except ValueError:
        raise OstError('lemma() does not know the language %s' % printing.display(lang)) from None
    return word if found.lower() == word.lower() else found


def b_lemma(text, lang):
    if type(text) is not str:
        raise OstError('lemma() does not accept ' + kind(text))
    if lang is None:
        lang = 'en'
    if type(lang) is not str:
        raise OstError('lemma() does not accept ' + kind(lang) + ' as a language')
    if len(text) > MAX_TEXT:
        raise limits.too_large('lemma() text', len(text), MAX_TEXT, 'characters')
    return _WORD.sub(lambda m: _lemmatize(m.group(0), lang), text)
