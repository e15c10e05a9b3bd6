" Vim syntax file
" Language:   Ostinato (docs/language.md §2 lexical structure, §3 strings,
"             §13.1 blurbs, §18 built-ins, §20 grammar)
" Filenames:  *.ost
"
" Highlighted: the '#' header lines at the top, '--' and nested '(| |)'
" comments, '{| |}' goal blurbs, reserved words ('none true false' as
" constants), the mode words 'val var one' starting a field line, the names
" after 'def' and 'type', numbers, every string form with its escapes,
" '{{' '}}' and '{expr}' interpolations (the expression highlighted as code),
" '__goal__ __caller__ __parent__', the built-in functions and 'Error'.
" After '.' every word is a field name, so 'msg.from' shows no keyword.

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syntax case match
syntax iskeyword @,48-57,_,192-255
" Strings and block comments may span many lines; files are small.
syntax sync fromstart

" --------------------------------------------------------------- keywords

syntax keyword ostStatement     return break continue wait until spawn as
syntax keyword ostConditional   if else then
syntax keyword ostRepeat        while for
syntax keyword ostException     try catch
syntax keyword ostOperatorWord  and or not in
syntax keyword ostInclude       import
syntax keyword ostInclude       from nextgroup=ostModuleName skipwhite
syntax keyword ostConstant      none true false
syntax keyword ostDefine        def nextgroup=ostFuncName skipwhite
syntax keyword ostDefine        type nextgroup=ostTypeName skipwhite
syntax match   ostFuncName      "\h\w*" contained
syntax match   ostTypeName      "\h\w*" contained
syntax match   ostModuleName    "\h\w*" contained

" Frame names (§13.2), built-ins (§18) and the predefined Error type.
syntax keyword ostFrame         __goal__ __caller__ __parent__
syntax keyword ostBuiltin       print pprint pformat str quote int float type_of
syntax keyword ostBuiltin       length append extend insert pop truncate
syntax keyword ostBuiltin       reversed sorted keys values list set tuple span
syntax keyword ostBuiltin       sum min max abs round sjoin joinlines split strip
syntax keyword ostBuiltin       lower upper replace startswith endswith find json
syntax keyword ostBuiltin       parse_json now format_time sleep Queue put take
syntax keyword ostBuiltin       raise add_property later extract lemma is_time time_of_day
syntax keyword ostBuiltin       clock_time in_unit known_word dictionary_word
syntax keyword ostErrorType     Error

" The mode word starting a field line of a type block: 'var sound = 1',
" 'val name, other'.  Elsewhere val/var/one are plain names.
syntax match ostMode "^\s*\zs\<\%(val\|var\|one\)\>\ze\s\+\h\w*\s*\%(==\@!\|,\|--\|(|\|$\)"

" After '.' any word is a field name, reserved or not.  The match starts at
" the '.', before any keyword could, so it wins; it is left unhighlighted.
" ('..' and '...' are operators: a '.' after a '.' starts no field.)
syntax match ostField "\.\@1<!\.\s*\h\w*" contains=NONE

" ---------------------------------------------------------------- numbers

syntax match ostNumber "\<\d\+\>"
syntax match ostFloat  "\<\d\+\.\d\+\%([eE][+-]\=\d\+\)\=\>"
syntax match ostFloat  "\<\d\+[eE][+-]\=\d\+\>"

" -------------------------------------------------------------- operators

syntax match ostOperator  "//\|==\|!=\|<=\|>=\|\.\.\.\=\|[-+*/%^\\<>=?!]"
syntax match ostDelimiter "#\["

" --------------------------------------------------------------- comments
" (after the operators: at the same position the later item wins, so '--'
" is a comment, not two minus signs)

syntax keyword ostTodo contained TODO FIXME XXX NOTE
syntax match  ostComment      "--.*$" contains=ostTodo,@Spell
syntax region ostBlockComment start="(|" end="|)" contains=ostBlockComment,ostTodo,@Spell

" A goal blurb ends at the first '|}'; it does not nest.
syntax region ostBlurb start="{|" end="|}" contains=ostTodo,@Spell

" ---------------------------------------------------------------- strings

" Escapes of unguarded literals (§3.1), backslash-line-break included.
syntax match ostEscape contained +\\\%([\\'"abfnrtv0 ]\|x\x\{2}\|u\x\{4}\|U\x\{8}\|$\)+

" '{expr}' in "..." and $"..."$: the braces are delimiters, the inside is
" code (nested literals of any kind allowed), and braces inside only nest.
" An interpolation cannot span lines.
syntax region ostInterp contained oneline matchgroup=ostInterpDelim start="{" end="}" contains=@ostCode,ostInterpBraces
syntax region ostInterpBraces contained oneline transparent start="{" end="}" contains=@ostCode,ostInterpBraces
" Literal braces; defined after ostInterp so '{{' is not an interpolation.
syntax match ostBraceEscape contained "{{\|}}"

syntax region ostString  start=+'+ skip=+\\\\\|\\'+ end=+'+ contains=ostEscape,@Spell
syntax region ostDString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=ostEscape,ostInterp,ostBraceEscape,@Spell
" Guarded literals: raw (no escapes); they end at the quote followed by as
" many '$' as opened them.
syntax region ostRawString  start=+\z(\$\+\)'+ end=+'\z1+ contains=@Spell
syntax region ostRawDString start=+\z(\$\+\)"+ end=+"\z1+ contains=ostInterp,ostBraceEscape,@Spell

" What an interpolation may hold.
syntax cluster ostCode contains=ostStatement,ostConditional,ostRepeat,ostException,
      \ostOperatorWord,ostConstant,ostFrame,ostBuiltin,ostErrorType,ostField,
      \ostNumber,ostFloat,ostOperator,ostDelimiter,ostComment,ostBlockComment,
      \ostString,ostDString,ostRawString,ostRawDString

" ----------------------------------------------------------------- header

" '#' lines at the very top of the file ('#!' included) are ignored.
syntax match ostHeader "\%^\%(#.*\n\)*#.*"

" ------------------------------------------------------------------ links

highlight default link ostStatement    Statement
highlight default link ostConditional  Conditional
highlight default link ostRepeat       Repeat
highlight default link ostException    Exception
highlight default link ostOperatorWord Operator
highlight default link ostInclude      Include
highlight default link ostConstant     Constant
highlight default link ostDefine       Statement
highlight default link ostFuncName     Function
highlight default link ostTypeName     Type
highlight default link ostModuleName   Identifier
highlight default link ostMode         StorageClass
highlight default link ostFrame        Special
highlight default link ostBuiltin      Function
highlight default link ostErrorType    Type
highlight default link ostNumber       Number
highlight default link ostFloat        Float
highlight default link ostOperator     Operator
highlight default link ostDelimiter    Delimiter
highlight default link ostTodo         Todo
highlight default link ostComment      Comment
highlight default link ostBlockComment Comment
highlight default link ostBlurb        SpecialComment
highlight default link ostHeader       PreProc
highlight default link ostEscape       SpecialChar
highlight default link ostBraceEscape  SpecialChar
highlight default link ostInterpDelim  Special
highlight default link ostString       String
highlight default link ostDString      String
highlight default link ostRawString    String
highlight default link ostRawDString   String

let b:current_syntax = 'ost'

let &cpo = s:cpo_save
unlet s:cpo_save
