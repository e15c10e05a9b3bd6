"""The syntax layer: Ostinato source text to the AST of `ast.py`.

`parse(source, filename)` gives an `ast.Module` or raises `OstSyntaxError`;
nothing else of Lark or of the scanner leaves this package (DESIGN.md §1).
"""
from .errors import OstSyntaxError
from .parser import decode_source, parse

__all__ = ['parse', 'decode_source', 'OstSyntaxError']
