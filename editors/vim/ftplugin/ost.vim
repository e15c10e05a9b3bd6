" Vim filetype plugin for Ostinato (*.ost)
" Indentation must be spaces (a tab in indentation is a syntax error);
" comments start with '--'.

if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal expandtab shiftwidth=4 softtabstop=4
setlocal comments=:-- commentstring=--\ %s
setlocal iskeyword=@,48-57,_,192-255

let b:undo_ftplugin = 'setlocal expandtab< shiftwidth< softtabstop< comments< commentstring< iskeyword<'
