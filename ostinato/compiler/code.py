"""Compiled code: immutable `Code` objects and the opcode table.

A `Code` holds plain data only -- instruction tuples `(opcode, arg)`, names,
a position table -- so it pickles and can be stored once per source version
and shared by every frame and function that runs it.  It is a Persistent
object so that the database keeps it as one record instead of copying it into
each frame that refers to it.  Nothing mutates a Code after the compiler made
it.
"""
from persistent import Persistent

# The bytecode version: what the instruction tuples of a Code mean.  It is
# part of the stored format (DESIGN.md §3): every Code records the version
# it was compiled for, the compiled-code cache is keyed by it, and a stored
# Code of another version is translated on load by the migrations in
# BYTECODE_MIGRATIONS, or refused -- never run as other instructions.
# Bump it whenever an opcode's meaning, operand or stack effect changes, and
# register the translation from the previous version.
#
# Version 1 is the numbering below as of the first versioned release; Codes
# stored before versions were recorded carry no version and are version 1.
BYTECODE_VERSION = 1

# The code generator's version: bump it when the compiler emits different
# code for the same source (a fix, a new optimisation) without changing
# what opcodes mean.  It keys the compiled-code cache too, so a source is
# never given code an older compiler made for it.  (Loaded modules keep
# their code until their source changes: an upgrade of Ostinato does not
# re-run anyone's top level.)
COMPILER_VERSION = 1

# The opcode table: (number, name, operand, stack effect), the stack effect
# written `before -- after` with the top on the right.  Numbers are fixed
# forever: a new opcode takes a new number, a removed one goes to RETIRED
# and its number is never used again (tests/test_bytecode.py pins this).
OPCODES = (
    (0, 'LOAD_LOCAL', 'slot', '-- value'),
    (1, 'STORE_LOCAL', 'slot', 'value --'),
    (2, 'CONST', 'the constant', '-- value'),
    (3, 'LOAD_GLOBAL', 'name', '-- value  (module namespace, then built-ins; none if unbound)'),
    (4, 'STORE_GLOBAL', 'name', 'value --  (none unbinds)'),
    (5, 'JUMP_IF_FALSE', 'target pc', 'cond --  (cond must be a bool)'),
    (6, 'JUMP', 'target pc', '--'),
    (7, 'CALL', '(npositional, keyword names, callee name for errors)',
     'f a1..an k1..km -- result  (a Function pushes a frame)'),
    (8, 'RETURN', 'none', 'value --  (pops the frame; the caller gets value)'),
    (9, 'ADD', 'none', 'a b -- a+b'),
    (10, 'SUB', 'none', 'a b -- a-b'),
    (11, 'LT', 'none', 'a b -- a<b'),
    (12, 'LE', 'none', 'a b -- a<=b'),
    (13, 'GT', 'none', 'a b -- a>b'),
    (14, 'GE', 'none', 'a b -- a>=b'),
    (15, 'EQ', 'none', 'a b -- a==b'),
    (16, 'NE', 'none', 'a b -- a!=b'),
    (17, 'MUL', 'none', 'a b -- a*b'),
    (18, 'POP', 'none', 'value --'),
    (19, 'FOR_ITER', '(exit pc, n iterators, with-index flags)',
     'it1..itn -- it1..itn [i1] v1 .. [in] vn;  at the end of any: it1..itn -- and jump'),
    (20, 'LOAD_OUTER', '(depth, slot)', '-- value  (a local of the depth-th defining frame)'),
    (21, 'FIELD', 'name', 'obj -- obj.name'),
    (22, 'INDEX', 'none', 'obj i -- obj[i]'),
    (23, 'STORE_FIELD', 'name', 'value obj --'),
    (24, 'STORE_INDEX', 'none', 'value obj i --'),
    (25, 'JUMP_IF_TRUE', 'target pc', 'cond --  (cond must be a bool)'),
    (26, 'DIV', 'none', 'a b -- a/b'),
    (27, 'FLOORDIV', 'none', 'a b -- a//b'),
    (28, 'MOD', 'none', 'a b -- a%b'),
    (29, 'POW', 'none', 'a b -- a^b'),
    (30, 'IN', 'none', 'x c -- x in c'),
    (31, 'NOT_IN', 'none', 'x c -- x not in c'),
    (32, 'NEG', 'none', 'a -- -a'),
    (33, 'NOT', 'none', 'a -- not a'),
    (34, 'KNOWN', 'none', 'a -- a?  (a is not none)'),
    (35, 'DUP', 'none', 'a -- a a'),
    (36, 'ROT2', 'none', 'a b -- b a'),
    (37, 'ROT3', 'none', 'a b c -- c a b'),
    (38, 'JUMP_IF_FALSE_OR_POP', 'target pc', 'cond -- cond and jump if false, else cond --'),
    (39, 'JUMP_IF_TRUE_OR_POP', 'target pc', 'cond -- cond and jump if true, else cond --'),
    (40, 'JUMP_IF_NOT_NONE_OR_POP', 'target pc', 'v -- v and jump if v is known, else v --'),
    (41, 'JUMP_IF_NOT_NONE', 'target pc', 'v --  (jump if v is known)'),
    (42, 'BUILD_LIST', 'n', 'x1..xn -- list'),
    (43, 'BUILD_TUPLE', 'n', 'x1..xn -- tuple'),
    (44, 'BUILD_MAP', 'n pairs', 'k1 v1..kn vn -- map'),
    (45, 'BUILD_SET', 'n', 'x1..xn -- set'),
    (46, 'BUILD_SPAN', 'none', 'a b -- a..b'),
    (47, 'BUILD_STRING', 'n', 's1..sn -- s1+..+sn'),
    (48, 'FORMAT', 'indent for continuation lines, or none', 'value -- str(value)'),
    (49, 'LIST_APPEND', 'depth of the list below the top', 'list x1..xd v -- list x1..xd'),
    (50, 'MAP_ADD', 'depth of the map below the pair', 'map x1..xd k v -- map x1..xd'),
    (51, 'SET_ADD', 'depth of the set below the top', 'set x1..xd v -- set x1..xd'),
    (52, 'GET_ITER', 'reactive: a function or queue may be iterated', 'source -- iterator'),
    (54, 'JUMP_UNWIND', '(target pc, handler depth, stack depth)',
     '... --  (drops try handlers and watch marks above the depths)'),
    (55, 'MAKE_FUNCTION', 'Code', '-- function  (closes over the running frame)'),
    (56, 'DEF_GLOBAL', '(Code, name)', '--  (defines name, or gives its Function the new code)'),
    (57, 'CURRY', '(npositional, keyword names)', 'f a1..an k1..km -- curried'),
    (58, 'SETUP_TRY', 'handler pc', '--  (the handler gets the stack as it is now, plus the error)'),
    (59, 'POP_TRY', 'none', '--'),
    (60, 'LOAD_SPECIAL', "'goal', 'caller' or 'parent'", '-- value'),
    (61, 'TYPE', '(name, n supertypes or none, fields, blurb)',
     'old [s1..sn] [defaults] -- type'),
    (62, 'IMPORT', 'module name', '-- module  (may wait for the module\'s top level)'),
    (63, 'FROM_IMPORT', 'name', 'module -- value'),
    (64, 'SPAWN', '(npositional, keyword names, spawn(...) form)', 'f a1..an k1..km -- task'),
    (65, 'WATCH_BEGIN', 'none', '--  (start noting what is read)'),
    (66, 'WATCH_END_BANG', 'pc to go back to after a change', 'v -- v, or waits if v is none'),
    (67, 'WATCH_END_UNTIL', 'pc to go back to after a change', 'cond --, or waits if false'),
    (68, 'WATCH_END_WHILE', 'pc to go back to after a change', 'cond --, or waits if true'),
    (69, 'LOAD_GLOBAL_NS', 'name', '-- value  (module namespace only; none if unbound)'),
    (70, 'RETURN_LOCAL', 'slot', '--  (fused LOAD_LOCAL slot; RETURN)'),
    (71, 'RETURN_CONST', 'the constant', '--  (fused CONST c; RETURN)'),
)

# Opcodes no compiler emits any more: their numbers stay taken.
RETIRED = {
    53: 'POP_ITERS',
}

OPNAMES = {num: name for num, name, _, _ in OPCODES}
for _num, _name, _, _ in OPCODES:
    globals()[_name] = _num

# Translations of stored code from one bytecode version to the next:
# BYTECODE_MIGRATIONS[v] is a function (instrs, positions) -> (instrs,
# positions) from version v to v + 1.  Nested Codes (MAKE_FUNCTION's
# operand) are records of their own and are translated when they load.
BYTECODE_MIGRATIONS: dict = {}


def bytecode_problem(version):
    """None when code of bytecode `version` can run here (directly or
    translated), else why not."""
    if version == BYTECODE_VERSION:
        return None
    if version > BYTECODE_VERSION:
        return ('it was compiled by a newer Ostinato (bytecode %d; this one runs %d)'
                % (version, BYTECODE_VERSION))
    missing = [v for v in range(version, BYTECODE_VERSION) if v not in BYTECODE_MIGRATIONS]
    if missing:
        return ('it was compiled for bytecode %d, which this Ostinato (bytecode %d) '
                'cannot translate' % (version, BYTECODE_VERSION))
    return None


def translate_code(version, instrs, positions):
    """`instrs` and `positions` of bytecode `version` as this version's."""
    for v in range(version, BYTECODE_VERSION):
        instrs, positions = BYTECODE_MIGRATIONS[v](instrs, positions)
    return tuple(instrs), tuple(positions)


__all__ = ['Code', 'BYTECODE_VERSION', 'COMPILER_VERSION'] + list(OPNAMES.values())


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
    bytecode  the bytecode version of `instrs` (BYTECODE_VERSION when made)
    compiler  the COMPILER_VERSION that made it

    A Code loaded from the database with an older bytecode version is
    translated in memory as it loads (the stored record keeps what it was);
    one that cannot be translated gets `_v_unrunnable`, the reason, and the
    VM refuses to run it (vm.blocks.runnable).
    """

    bytecode = 1      # Codes stored before versions were recorded
    compiler = 0

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
        self.bytecode = BYTECODE_VERSION
        self.compiler = COMPILER_VERSION

    def __setstate__(self, state):
        super().__setstate__(state)
        version = self.bytecode
        if version != BYTECODE_VERSION:
            problem = bytecode_problem(version)
            if problem is not None:
                self._v_unrunnable = problem
            else:
                # In memory only: setting attributes while loading marks nothing.
                d = self.__dict__
                d['instrs'], d['positions'] = translate_code(version, self.instrs,
                                                             self.positions)
                d['bytecode'] = BYTECODE_VERSION

    def __repr__(self):
        return '<Code %s %s:%d>' % (self.name, self.filename, self.line)
