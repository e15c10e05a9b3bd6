"""A disassembler for `Code` objects, for debugging (`ostinato dis FILE`)."""
from .code import OPNAMES, Code


def disassemble(code):
    """Text listing of `code` and every code object nested in it."""
    lines: list = []
    todo = [code]
    while todo:       # not recursive: lambdas may nest as deep as the syntax allows
        if lines:
            lines.append('')
        todo[:0] = _listing(todo.pop(0), lines)
    return '\n'.join(lines)


def _listing(code, lines):
    """Append the listing of `code` to `lines`; returns the codes nested in it."""
    lines.append('code %s (%s) %s:%d  params=%s locals=%s' % (
        code.name, code.kind, code.filename, code.line, list(code.params), list(code.varnames)))
    nested = []
    for i, ((op, arg), (line, col)) in enumerate(zip(code.instrs, code.positions)):
        name = OPNAMES.get(op, str(op))
        shown = arg
        if isinstance(arg, Code):
            nested.append(arg)
            shown = '<code %s>' % arg.name
        elif isinstance(arg, tuple) and arg and isinstance(arg[0], Code):
            nested.append(arg[0])
            shown = ('<code %s>' % arg[0].name,) + arg[1:]
        lines.append('  %4d  %4d:%-3d %-24s %s' % (i, line, col, name, '' if shown is None else repr(shown)))
    return nested
