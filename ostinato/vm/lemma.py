"""The `lemma` built-in: a text's words in their dictionary form.

"swam 20 laps" is "swim 20 lap", "walked the dog" is "walk the dog": a
skill that logs what the user did can name it as a dictionary does, so a
log reads the same however it was told.  The words are simplemma's (a
maintained, rule-and-lexicon lemmatizer with its data in the package); what
is here is the argument checking and keeping the text's own spelling where
the lemma differs only in case ("pilates", not "Pilates").

With `keep_endings`, a word that begins with its lemma keeps the ending the
user wrote ("walked", "boxes") and only a changed stem is replaced ("sang"
is "sing", "wrote" is "write"): a log that keeps the user's words but names
an irregular form as the dictionary does.  The user's word then still holds
its dictionary form, and a plural the dictionary reads as another word stays
the user's ("glasses" is not "glass").
"""
from __future__ import annotations

import re
import unicodedata

from . import limits, printing
from .values import OstError, kind

__all__ = ['b_lemma', 'dictionary_word', 'known_word']

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
MAX_TEXT = 4096


def _lemmatize(word, lang, keep_endings=False):
    if "'" in word:
        return word         # "didn't" is not "do"
    import simplemma        # loaded on first use: its tables take ~0.3 s
    try:
        found = simplemma.lemmatize(word, lang=lang)
    except ValueError:
        raise OstError('lemma() does not know the language %s' % printing.display(lang)) from None
    if found.lower() == word.lower() or keep_endings and word.lower().startswith(found.lower()):
        return word
    return found


def b_lemma(text, lang, keep_endings=None):
    if type(text) is not str:
        raise OstError('lemma() does not accept ' + kind(text))
    if lang is None:
        lang = 'en'
    if type(lang) is not str:
        raise OstError('lemma() does not accept ' + kind(lang) + ' as a language')
    if len(text) > MAX_TEXT:
        raise limits.too_large('lemma() text', len(text), MAX_TEXT, 'characters')
    if keep_endings is not None and type(keep_endings) is not bool:
        raise OstError('lemma() keep_endings must be true or false, not ' + kind(keep_endings))
    keep = bool(keep_endings)
    return _WORD.sub(lambda m: _lemmatize(m.group(0), lang, keep), text)


def dictionary_word(word, lang):
    """`dictionary_word`: whether simplemma's dictionary of the language holds
    `word` (any form of it).  A word it does not know may be a name of its own
    -- a dish of another cuisine ("kape", "jajecznica"), a brand -- where a
    word it knows is the language's ("canteen", "far"): a skill's check of
    what a model picked keeps the one and drops the other."""
    import simplemma
    if word == '':
        return False
    try:
        return bool(simplemma.is_known(word, lang=lang) or simplemma.is_known(word.lower(), lang=lang))
    except ValueError:
        raise OstError('dictionary_word() does not know the language %s' % printing.display(lang)) from None


def _unaccented(word):
    """The word without its accents: "guaraná" is "guarana" as typed on
    most keyboards."""
    return ''.join(c for c in unicodedata.normalize('NFKD', word) if not unicodedata.combining(c))


def known_word(word, vocabulary):
    """`known_word`: whether `word` is one of `vocabulary`'s words (a Python set
    of lower-case words): as written (its accents aside), as its lemma, or,
    a word no dictionary of English knows, one of them misspelt at
    its end by up to three letters ("swimmin", "coffees"; a word of four
    letters or more), or, a word of five letters or more, one of them with
    a letter left out ("kickbxing").  A skill's vocabulary checks what a
    model picked in a text; looked up here, not in the VM, because a
    vocabulary may hold thousands of words and each word of a text is
    looked up."""
    w = _unaccented(word.lower())
    if w == '':
        return False
    if w in vocabulary or _lemmatize(w, 'en').lower() in vocabulary:
        return True
    # A word of the dictionary is itself, not another misspelt ("match" is
    # no "matcha" with a letter left out).
    if dictionary_word(w, 'en'):
        return False
    n = len(w)
    if any(w[:k] in vocabulary for k in range(max(4, n - 3), n)):
        return True
    return n >= 5 and any(len(v) == n + 1 and _left_out(v, w) for v in vocabulary)


def _left_out(v, w):
    """Whether `w` is `v` with one letter left out."""
    i = 0
    while i < len(w) and v[i] == w[i]:
        i += 1
    return v[i + 1:] == w[i:]
