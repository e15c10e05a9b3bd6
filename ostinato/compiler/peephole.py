"""Superinstructions: a peephole pass over a finished instruction list.

A fused instruction replaces the first instruction of a short, frequent
sequence and does the work of the whole sequence in one dispatch.  The
instructions it covers stay in place behind it, unchanged, and the positions
table is not touched: a jump into the middle of a sequence runs the plain
instructions, and before or after a fused instruction the frame (pc, value
stack, locals) is exactly what the plain sequence leaves.

  RETURN_LOCAL a     LOAD_LOCAL a; RETURN
  RETURN_CONST c     CONST c; RETURN

(Runs of loads, stores, arithmetic and jumps are fused at run time instead,
by vm.blocks.)
"""
# The opcodes are globals made from code.OPCODES by a loop, which mypy cannot see.
from .code import CONST, LOAD_LOCAL, RETURN, RETURN_CONST, RETURN_LOCAL  # type: ignore[attr-defined]

FUSED = {(LOAD_LOCAL, RETURN): RETURN_LOCAL, (CONST, RETURN): RETURN_CONST}


def fuse(instrs):
    """`instrs` (a list of (opcode, arg) tuples) with a fused instruction at
    the start of every fusable sequence; the covered instructions stay."""
    out = list(instrs)
    for i in range(len(instrs) - 1):
        fused = FUSED.get((instrs[i][0], instrs[i + 1][0]))
        if fused is not None:
            out[i] = (fused, instrs[i][1])
    return out
