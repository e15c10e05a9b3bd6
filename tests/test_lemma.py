"""The `lemma` built-in (docs/language.md §18): a text's words in their
dictionary form, on simplemma, from .ost code through the real VM."""
import io
import textwrap

from ostinato.runtime.runner import run_file


def run_ost(tmp_path, source):
    path = tmp_path / 'prog.ost'
    path.write_text(textwrap.dedent(source))
    out, err = io.StringIO(), io.StringIO()
    code = run_file(str(path), out, err)
    return code, out.getvalue(), err.getvalue()


def test_words_in_their_dictionary_form(tmp_path):
    code, out, err = run_ost(tmp_path, '''
        for t in ['swam 20 laps', 'walked the dog', 'did some Pilates', "ran a 5k, didn't stop",
                  'stretching', 'got a 1h15 bike ride in', '']:
            print(quote(lemma(t)))
        ''')
    assert (code, err) == (0, '')
    assert out.splitlines() == ["'swim 20 lap'", "'walk the dog'", "'do some Pilates'",
                                "'run a 5k, didn\\'t stop'", "'stretch'",
                                "'get a 1h15 bike ride in'", "''"]


def test_bad_arguments_are_catchable_errors(tmp_path):
    code, out, err = run_ost(tmp_path, '''
        for args in [[3, 'en'], ['x', 'xx'], ['x', 5]]:
            try:
                lemma(args[0], args[1])
            catch e:
                print(e.message)
        try:
            lemma(sjoin(['a' for i in 0..5000], ''))
        catch e:
            print(e.message)
        try:
            lemma('abs', keep_endings = 'yes')
        catch e:
            print(e.message)
        ''')
    assert (code, err) == (0, '')
    assert out.splitlines() == [
        'lemma() does not accept int',
        "lemma() does not know the language 'xx'",
        'lemma() does not accept int as a language',
        'lemma() text too large: 5,000 characters (the limit is 4,096)',
        "lemma() keep_endings must be true or false, not str",
    ]


def test_keep_endings_replaces_only_a_changed_stem(tmp_path):
    # "abs" begins with its lemma "ab": the user's word stays, as do the
    # other regular endings; an irregular form is the dictionary's.
    code, out, err = run_ost(tmp_path, '''
        for t in ['did 15 min of abs', 'swam 20 laps', 'ran a 5k', 'the rowing machine', 'hiked']:
            print(quote(lemma(t, keep_endings = true)))
        print(quote(lemma('did 15 min of abs')))
        ''')
    assert (code, err) == (0, '')
    assert out.splitlines() == ["'do 15 min of abs'", "'swim 20 laps'", "'run a 5k'",
                                "'the rowing machine'", "'hiked'", "'do 15 min of ab'"]


def test_a_known_word_is_in_the_vocabulary_as_written_as_its_lemma_or_misspelt(tmp_path):
    code, out, err = run_ost(tmp_path, '''
        kinds = set(['swim', 'kickboxing', 'row', 'fry', 'matcha', 'guarana'])
        for w in ['swim', 'Swam', 'swimmin', 'swimmingly', 'kickbxing', 'fries', 'rowing', 'ro', 'bike', '',
                  'match', 'matha', 'Guaraná']:
            print(w, known_word(w, kinds))
        print(known_word('row', ['row']), known_word('row', []))
        for args in [[3, ['a']], ['a', 3], ['a', ['a', 3]]]:
            try:
                known_word(args[0], args[1])
            catch e:
                print(e.message)
        ''')
    assert (code, err) == (0, '')
    # "swimmingly" is "swim" and six letters more: not a misspelling.
    assert out.splitlines() == ['swim true', 'Swam true', 'swimmin true', 'swimmingly false',
                                'kickbxing true', 'fries true', 'rowing true', 'ro false', 'bike false', ' false',
                                # a word of the dictionary is no misspelling of another;
                                # accents are not letters of their own
                                'match false', 'matha true', 'Guaraná true',
                                'true false', 'known_word() does not accept int',
                                'known_word() does not accept int',
                                'known_word() vocabulary holds int, not only words']


def test_a_dictionary_word_is_a_word_of_the_language(tmp_path):
    code, out, err = run_ost(tmp_path, '''
        for w in ['canteen', 'Coworkers', 'swam', 'kape', 'jajecznica', 'gbegiri', "o'clock", '']:
            print(w, dictionary_word(w))
        print(dictionary_word('kawa', 'pl'), dictionary_word('kawa', 'en'))
        for args in [[3, 'en'], ['a', 3], ['a', 'xx']]:
            try:
                dictionary_word(args[0], args[1])
            catch e:
                print(e.message)
        ''')
    assert (code, err) == (0, '')
    assert out.splitlines() == ['canteen true', 'Coworkers true', 'swam true', 'kape false',
                                'jajecznica false', 'gbegiri false', "o'clock true", ' false', 'true false',
                                'dictionary_word() does not accept int',
                                'dictionary_word() does not accept int as a language',
                                "dictionary_word() does not know the language 'xx'"]


def test_a_character_has_its_unicode_name(tmp_path):
    code, out, err = run_ost(tmp_path, '''
        print(char_name('🍕'), '|', char_name('🍺'), '|', char_name('A'), '|', char_name('\\ue000'))
        for c in ['ab', '', 3]:
            try:
                char_name(c)
            catch e:
                print(e.message)
        ''')
    assert (code, err) == (0, '')
    assert out.splitlines() == ['slice of pizza | beer mug | latin capital letter a | none',
                                'char_name() takes one character, not a string of 2',
                                'char_name() takes one character, not a string of 0',
                                'char_name() does not accept int']
