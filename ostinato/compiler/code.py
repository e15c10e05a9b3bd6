"""Compiled code: immutable `Code` objects and the opcode table.

A `Code` holds plain data only -- instruction tuples `(opcode, arg)`, names,
a position table -- so it pickles and can be stored once per source version
and shared by every frame and function that runs it.  It is a Persistent
object so that the database keeps it as one record instead of copying it into
each frame that refers to it.  Nothing mutates a Code after the compiler made
it.
"""
from persistent import Persistent

# Opcodes.  Ints so the interpreter loop compares cheaply.  New opcodes go at
# the end, so that stored code keeps its meaning; the loop tests them in an
# order of its own.  RETURN_LOCAL and RETURN_CONST are made by
# compiler.peephole.
OPNAMES = """
LOAD_LOCAL STORE_LOCAL CONST LOAD_GLOBAL STORE_GLOBAL JUMP_IF_FALSE JUMP
CALL RETURN ADD SUB LT LE GT GE EQ NE MUL POP FOR_ITER LOAD_OUTER
FIELD INDEX STORE_FIELD STORE_INDEX JUMP_IF_TRUE DIV FLOORDIV MOD POW
IN NOT_IN NEG NOT KNOWN DUP ROT2 ROT3 JUMP_IF_FALSE_OR_POP JUMP_IF_TRUE_OR_POP
JUMP_IF_NOT_NONE_OR_POP JUMP_IF_NOT_NONE BUILD_LIST BUILD_TUPLE BUILD_MAP BUILD_SET
BUILD_SPAN BUILD_STRING FORMAT LIST_APPEND MAP_ADD SET_ADD GET_ITER POP_ITERS
JUMP_UNWIND MAKE_FUNCTION DEF_GLOBAL CURRY SETUP_TRY POP_TRY LOAD_SPECIAL
TYPE IMPORT FROM_IMPORT SPAWN WATCH_BEGIN WATCH_END_BANG WATCH_END_UNTIL
WATCH_END_WHILE LOAD_GLOBAL_NS
RETURN_LOCAL RETURN_CONST
""".split()

for _i, _n in enumerate(OPNAMES):
    globals()[_n] = _i

__all__ = ['Code'] + OPNAMES


class Code(Persistent):
    """One compiled function body, lambda, `spawn:` block or module top level.

    name      goal name: the def's name, '<lambda>', '<spawn>' or the module name
    kind      'def', 'lambda', 'spawn' or 'module'
    qualname  identifies the def across source versions (module upgrades replace
              a function's code in place only when the qualnames match)
    instrs    tuple of (opcode, arg)
    positions tuple of (line, col), one per instruction
    nparams, params, varnames, nlocals: the frame layout
    summary, details: the goal blurb
    source_hash: hash of the module source this was compiled from
    """

    def __init__(self, name, kind, filename, line, col, instrs, positions,
                 params, varnames, summary=None, details=None, qualname=None,
                 source_hash=None):
        self.name = name
        self.kind = kind
        self.filename = filename
        self.line = line
        self.col = col
        self.instrs = tuple(instrs)
        self.positions = tuple(positions)
        self.params = tuple(params)
        self.nparams = len(params)
        self.varnames = tuple(varnames)
        self.nlocals = len(varnames)
        self.summary = summary
        self.details = details
        self.qualname = qualname or name
        self.source_hash = source_hash

    def __repr__(self):
        return '<Code %s %s:%d>' % (self.name, self.filename, self.line)
