"""Syntax highlighting: the Pygments lexer of ostinato/highlight.py, its
prompt_toolkit wrapper and its plugin registration, plus a smoke test of the
Vim syntax file in editors/vim when Vim is installed."""
import configparser
import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip('pygments', reason='pygments is not installed')

from pygments.token import (Comment, Error, Keyword, Name, Number,
                            Operator, Punctuation, String, Whitespace)

from goldens import CORPUS, GOLDEN, ROOT
from ostinato.highlight import OstinatoLexer, prompt_lexer

PROGRAMS = sorted(set(CORPUS.glob('*.ost')) | set(GOLDEN.rglob('*.ost'))
                  | set((ROOT / 'stdlib').glob('*.ost'))
                  | set((ROOT / 'examples').rglob('*.ost')))


def prog_id(path):
    return str(path.relative_to(path.parents[1]))


def lex(src):
    """(token type, text) pairs of src, whitespace left out."""
    return [(t, v) for _, t, v in OstinatoLexer().get_tokens_unprocessed(src)
            if t is not Whitespace]


def text_of(src, ttype):
    """The text of all tokens of src within ttype, joined."""
    return ''.join(v for t, v in lex(src) if t in ttype)


# ------------------------------------------------------------ whole programs

def test_programs_present():
    assert len(PROGRAMS) >= 100, 'corpus or golden programs missing: %s' % CORPUS


@pytest.mark.parametrize('path', PROGRAMS, ids=[prog_id(p) for p in PROGRAMS])
def test_program_lexes_without_errors(path):
    raw = path.read_bytes().decode('utf-8')
    errors = [(pos, v) for pos, t, v in OstinatoLexer().get_tokens_unprocessed(raw)
              if t in Error]
    assert errors == []
    # The tokens cover the source exactly (\r\n kept), none empty.
    toks = list(OstinatoLexer().get_tokens_unprocessed(raw))
    assert ''.join(v for _, _, v in toks) == raw
    assert all(v for _, _, v in toks)
    # The ordinary Pygments path too (it normalises line ends).
    assert not [v for t, v in OstinatoLexer().get_tokens(raw) if t in Error]


# ------------------------------------------------------------ single tokens

def test_keywords_constants_and_word_operators():
    toks = lex('while x and not done:\n    return none\n')
    assert (Keyword, 'while') in toks
    assert (Keyword, 'return') in toks
    assert (Keyword.Constant, 'none') in toks
    assert (Operator.Word, 'and') in toks
    assert (Operator.Word, 'not') in toks
    assert (Name, 'x') in toks


def test_def_and_type_names():
    toks = lex('def plan(a, b = 2):\n    none\ntype Dog in Animal:\n    var tricks = 0\n')
    assert toks[:2] == [(Keyword, 'def'), (Name.Function, 'plan')]
    assert (Keyword, 'type') in toks
    assert (Name.Class, 'Dog') in toks
    assert (Name, 'Animal') in toks
    # A word merely starting with a keyword is a name or built-in.
    assert lex('type_of(define)')[:3] == [(Name.Builtin, 'type_of'), (Punctuation, '('),
                                          (Name, 'define')]


def test_field_names_after_a_dot_are_never_keywords():
    toks = lex('m.if = msg.from\n')
    assert toks == [(Name, 'm'), (Punctuation, '.'), (Name, 'if'), (Operator, '='),
                    (Name, 'msg'), (Punctuation, '.'), (Name, 'from')]


def test_mode_words_only_start_a_field_line():
    src = ('type Animal:\n'
           '    val name                 -- set once\n'
           '    var sound = \'noise\', legs = 4\n'
           '    one owner\n'
           'val = 1\n'
           'one in xs\n')
    toks = lex(src)
    assert [v for t, v in toks if t is Keyword.Declaration] == ['val', 'var', 'one']
    assert (Name, 'val') in toks and (Name, 'one') in toks


def test_import_names():
    toks = lex('import llm, channels\nfrom core_skills import format_goal_stack\n')
    assert (Keyword.Namespace, 'import') in toks
    assert (Name.Namespace, 'llm') in toks and (Name.Namespace, 'channels') in toks
    assert (Name.Namespace, 'core_skills') in toks
    assert (Name, 'format_goal_stack') in toks


def test_frame_names_and_builtins():
    toks = lex('print(__goal__, __caller__, __parent__, Error, sjoin, Queue)')
    assert (Name.Builtin, 'print') in toks
    assert [v for t, v in toks if t is Name.Builtin.Pseudo] == [
        '__goal__', '__caller__', '__parent__']
    assert (Name.Exception, 'Error') in toks
    assert (Name.Builtin, 'sjoin') in toks and (Name.Builtin, 'Queue') in toks


def test_header_lines_only_at_the_top():
    src = '#!/usr/bin/env ostinato\n#second\nx = #[1]\n'
    toks = lex(src)
    assert toks[0] == (Comment.Hashbang, '#!/usr/bin/env ostinato\n#second\n')
    assert (Punctuation, '#[') in toks
    assert not [t for t, v in lex('x = 1\n# late\n') if t in Comment]


def test_numbers():
    toks = lex('x = [42, 2.5, 1e3, 2.5e-1, 1E+2, 1..3]')
    assert (Number.Integer, '42') in toks
    assert [v for t, v in toks if t is Number.Float] == ['2.5', '1e3', '2.5e-1', '1E+2']
    # `1..3` is 1, `..`, 3
    assert toks[-4:-1] == [(Number.Integer, '1'), (Operator, '..'), (Number.Integer, '3')]


def test_dash_comment():
    toks = lex('x = 5--1\ny = 5 - -1  -- minus minus\n')
    assert [v for t, v in toks if t is Comment.Single] == ['--1', '-- minus minus']
    assert (Operator, '-') in toks


def test_dashes_and_comment_marks_inside_strings_are_text():
    src = 'print(\'a -- b\', "c -- d", $"e -- f"$, \'(| g |)\')   -- real\n'
    toks = lex(src)
    assert [v for t, v in toks if t in Comment] == ['-- real']
    strings = text_of(src, String)
    for piece in ('a -- b', 'c -- d', 'e -- f', '(| g |)'):
        assert piece in strings


def test_nested_block_comment():
    src = 'x = 1 (| outer (| inner |) still "not a string" -- nor this |) + 2\n'
    toks = lex(src)
    comment = text_of(src, Comment.Multiline)
    assert comment == '(| outer (| inner |) still "not a string" -- nor this |)'
    assert toks[-2:] == [(Operator, '+'), (Number.Integer, '2')]
    # Spanning lines, nested, as a comment line.
    src = '(| a\n   (| b\n   |) c |)\nprint(1)\n'
    assert text_of(src, Comment.Multiline) == '(| a\n   (| b\n   |) c |)'
    assert (Name.Builtin, 'print') in lex(src)


def test_blurb():
    src = ('{|\n'
           ' | Plan the trip.\n'
           ' |\n'
           ' | Details (| not a comment |) here.\n'
           ' |}\n'
           'def plan_trip():\n'
           '    none\n')
    assert text_of(src, String.Doc) == src[:src.index('|}') + 2]
    assert not [t for t, v in lex(src) if t in Comment]
    assert (Name.Function, 'plan_trip') in lex(src)
    assert lex('{| One line. |}\ntype T\n')[0] == (String.Doc, '{|')


def test_interpolation_in_double_quoted_string():
    src = 'print("n+1 = {n + 1}, {{braces}}, {[1, \'a\', none]}")\n'
    toks = lex(src)
    start = toks.index((String.Interpol, '{'))
    assert toks[start:start + 5] == [
        (String.Interpol, '{'), (Name, 'n'), (Operator, '+'),
        (Number.Integer, '1'), (String.Interpol, '}')]
    assert [v for t, v in toks if t is String.Escape] == ['{{', '}}']
    assert (Keyword.Constant, 'none') in toks
    assert (String.Single, 'a') in toks          # a nested literal


def test_interpolation_with_nested_literals_and_braces():
    toks = lex('s = "{f(\'x}\', "y{{")} and { {1} } and {\'{\'}"\n')
    assert (String.Single, 'x}') in toks         # braces in nested literals are text
    assert (String.Escape, '{{') in toks         # (the nested "..." has its own)
    assert (Punctuation, '{') in toks and (Punctuation, '}') in toks   # a set
    assert (String.Single, '{') in toks
    assert toks[-1] == (String.Double, '"')
    # Single-quoted strings do not interpolate.
    assert lex("'no {n} here'") == [(String.Single, "'"), (String.Single, 'no {n} here'),
                                    (String.Single, "'")]


def test_an_interpolation_ends_at_the_line_end():
    toks = lex('s = "open {a\nstill text"\nx = 1\n')
    assert (String.Double, '\nstill text') in toks
    assert toks[-3:] == [(Name, 'x'), (Operator, '='), (Number.Integer, '1')]


def test_escapes():
    toks = lex(r'"tab\t \x41 \u00e9 \U0001F600 \" \\" + ' + "'\\''")
    assert [v for t, v in toks if t is String.Escape] == [
        r'\t', r'\x41', r'\u00e9', r'\U0001F600', r'\"', r'\\', r"\'"]
    # Backslash-line-break is an escape too.
    assert (String.Escape, '\\\n') in lex('"one, \\\n    two"')


def test_guarded_string_with_inner_quotes():
    src = 'x = $"say "hi" to {who}, raw \\t"$ + 1\n'
    toks = lex(src)
    assert (Name, 'who') in toks
    assert not [t for t, v in toks if t is String.Escape]      # raw: no escapes
    assert toks[-2:] == [(Operator, '+'), (Number.Integer, '1')]
    strings = text_of(src, String)
    assert strings.startswith('$"say "hi" to {') and strings.endswith('}, raw \\t"$')
    # More guards: `"$` does not close `$$"...`; single quotes do not interpolate.
    toks = lex('$$"a "$ b {n}"$$ $$\'c \'$ {d}\'$$ x')
    assert (Name, 'n') in toks and (Name, 'x') in toks and (Name, 'd') not in toks
    assert (String.Single, "$$'c '$ {d}'$$") in toks
    # Many guards.
    assert lex('$$$$$$$$$$"a"$ "$$$$$$$$$$ y')[-1] == (Name, 'y')


def test_multi_line_strings():
    src = 'page = "\n    Header:\n        {body}\n    Footer"\nprint(page)\n'
    toks = lex(src)
    assert (Name, 'body') in toks
    assert toks[-4:] == [(Name.Builtin, 'print'), (Punctuation, '('), (Name, 'page'),
                         (Punctuation, ')')]
    src = "x = $'\n    raw \\n\n  '$\ny = 'one\n     two'\n"
    toks = lex(src)
    assert (Name, 'y') in toks
    assert text_of(src, String.Single) == "$'\n    raw \\n\n  '$'one\n     two'"


def test_removed_forms_are_not_errors():
    # Syntax errors are the parser's business; the highlighter stays quiet.
    toks = lex('x := 1; for k -> v in m:\n    none\n')
    assert not [t for t, v in toks if t in Error]


def test_unknown_characters_are_errors():
    assert [v for t, v in lex('x = 1 @ 2') if t in Error] == ['@']


# ------------------------------------------------------- integration points

def test_lexer_metadata_and_lookup():
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    assert OstinatoLexer.name == 'Ostinato'
    assert OstinatoLexer.aliases == ['ostinato', 'ost']
    assert OstinatoLexer.filenames == ['*.ost']
    assert OstinatoLexer.__module__ == 'ostinato.highlight'
    try:        # found through the plugin entry point once installed
        lexer = get_lexer_by_name('ost')
    except Exception:
        pytest.skip('the installed metadata does not have the entry point yet '
                    '(reinstall Ostinato)')
    assert isinstance(lexer, OstinatoLexer)
    assert isinstance(get_lexer_for_filename('skill.ost'), OstinatoLexer)


def test_setup_cfg_registers_the_pygments_plugin():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / 'setup.cfg')
    entry_points = cfg['options.entry_points']
    assert 'ostinato = ostinato.cli:main' in entry_points['console_scripts']
    lines = [line.strip() for line in entry_points['pygments.lexers'].splitlines()
             if line.strip()]
    name, value = [part.strip() for part in lines[0].split('=')]
    ep = importlib.metadata.EntryPoint(name, value, 'pygments.lexers')
    assert ep.load() is OstinatoLexer
    requires = cfg['options']['install_requires']
    assert 'pygments>=2.10' in requires and 'prompt_toolkit>=3.0' in requires


def test_prompt_lexer():
    pytest.importorskip('prompt_toolkit', reason='prompt_toolkit is not installed')
    from prompt_toolkit.document import Document
    from prompt_toolkit.lexers import PygmentsLexer
    lexer = prompt_lexer()
    assert isinstance(lexer, PygmentsLexer)
    line = lexer.lex_document(Document('x = "a {n}" -- c'))(0)
    assert ('class:pygments.literal.string.interpol', '{') in line
    assert ('class:pygments.comment.single', '-- c') in line


def test_prompt_lexer_without_prompt_toolkit(monkeypatch):
    monkeypatch.setitem(sys.modules, 'prompt_toolkit.lexers', None)
    assert prompt_lexer() is None


def test_module_imports_without_pygments():
    code = ('import sys\n'
            'sys.modules["pygments"] = None\n'
            'import ostinato.highlight as h\n'
            'assert h.prompt_lexer() is None\n'
            'try:\n'
            '    h.OstinatoLexer\n'
            'except ImportError:\n'
            '    print("ok")\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, '-c', code], capture_output=True,
                         text=True, env=env, cwd=str(ROOT))
    assert out.stdout.strip() == 'ok', out.stderr


# ------------------------------------------------------------------ Vim

VIM_DUMP = r'''
function! Groups(lnum, col) abort
  return join(map(synstack(a:lnum, a:col), 'synIDattr(v:val, "name")'), '>')
endfunction
let s:out = [&filetype]
for [s:l, s:c] in %s
  call add(s:out, Groups(s:l, s:c))
endfor
call add(s:out, v:errmsg)
call writefile(s:out, %s)
'''


@pytest.mark.skipif(shutil.which('vim') is None, reason='vim is not installed')
def test_vim_syntax(tmp_path):
    src = ('#!/usr/bin/env ostinato\n'                        # 1
           '{| Module. |}\n'                                   # 2
           'type Dog in Animal:\n'                            # 3
           '    var tricks = 0   -- comment\n'                # 4
           'def f(x):\n'                                      # 5
           '    return "a {x + 1} {{b}}" + $"q "{x}""$\n'     # 6
           'm.if = 2.5 (| c (| d |) e |) + \'s -- t\'\n'      # 7
           'print(__goal__)\n')                               # 8
    # (line, column) -> the innermost group expected there
    probes = {
        (1, 1): 'ostHeader', (2, 4): 'ostBlurb', (3, 1): 'ostDefine',
        (3, 6): 'ostTypeName', (4, 5): 'ostMode', (4, 22): 'ostComment',
        (5, 5): 'ostFuncName', (6, 5): 'ostStatement', (6, 12): 'ostDString',
        (6, 15): 'ostInterpDelim', (6, 18): 'ostOperator', (6, 23): 'ostBraceEscape',
        (6, 32): 'ostRawDString', (6, 36): 'ostRawDString', (6, 38): 'ostInterp',
        (7, 3): 'ostField',
        (7, 8): 'ostFloat', (7, 17): 'ostBlockComment', (7, 33): 'ostString',
        (8, 1): 'ostBuiltin', (8, 7): 'ostFrame',
    }
    prog = tmp_path / 'sample.ost'
    prog.write_text(src)
    out = tmp_path / 'out.txt'
    script = tmp_path / 'dump.vim'
    script.write_text(VIM_DUMP % ([list(p) for p in probes], "'%s'" % out))
    rtp = ROOT / 'editors' / 'vim'
    subprocess.run(['vim', '-N', '-u', 'NONE', '-i', 'NONE', '-Es',
                    '-c', 'set rtp^=%s' % rtp, '-c', 'filetype plugin on',
                    '-c', 'syntax on', '-c', 'edit %s' % prog,
                    '-c', 'source %s' % script, '-c', 'qa!'],
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    lines = out.read_text().split('\n')
    assert lines[0] == 'ost'
    got = dict(zip(probes, (g.split('>')[-1] for g in lines[1:])))
    assert got == probes
    assert lines[len(probes) + 1] == ''      # no error message


def test_every_reserved_word_and_builtin_of_the_language_is_highlighted():
    from ostinato.syntax.lexer import RESERVED
    from ostinato.vm.interp import VM  # noqa: F401 -- registers every built-in
    from ostinato.vm.values import BUILTINS
    for word in sorted(RESERVED):
        (kind, text), = [tv for tv in lex(word) if tv[1].strip()]
        assert text == word and (kind in Keyword or kind in Operator.Word), (word, kind)
    for name in sorted(n for n in BUILTINS if not n.startswith('_')):
        assert (Name.Builtin, name) in lex('%s(x)' % name), name
