" Ostinato source files (see ../README.md)
autocmd BufRead,BufNewFile *.ost setlocal filetype=ost
