"""Limits on what one task may build (DESIGN.md §9, "Operating it").

Scheduling is cooperative: between two waits a task runs alone, so a value
that grows without bound (a string doubled in a loop, `'ab' * 10 ^ 9`, a
power with millions of digits) would exhaust memory or freeze every other
dialogue inside one instruction -- and, being durable, do it again at every
restart.  These bounds make such a value a catchable Error at the
instruction that would build it, naming its `file:line:col` like any other.
They are far beyond what a chat skill needs; an operator can change them
(`ostinato run/serve --max-...`).  How long a turn may run, how deep a task
may recurse and how much one turn may write are the runtime's limits
(runtime/scheduler.py), since only the runtime sees time and storage.
"""
from __future__ import annotations

from .values import OstError

MAX_STRING = 1 << 24      # characters in one string (16 Mi)
MAX_ITEMS = 1 << 24       # items in one list, map or set (16 Mi)
MAX_INT_BITS = 1 << 18    # bits of one integer (about 79,000 decimal digits)


def too_large(what, size, limit, unit):
    return OstError('%s too large: %s %s (the limit is %s)' % (
        what, _count(size), unit, _count(limit)))


def _count(n):
    return '{:,}'.format(n)


def check_string(n):
    """Raise if a string of `n` characters may not be built."""
    if n > MAX_STRING:
        raise too_large('string', n, MAX_STRING, 'characters')


def check_items(n):
    if n > MAX_ITEMS:
        raise too_large('collection', n, MAX_ITEMS, 'items')


def check_int_bits(bits):
    if bits > MAX_INT_BITS:
        raise too_large('number', bits, MAX_INT_BITS, 'bits')


# log2(10): a number of d significant decimal digits has at least
# (d - 1) * log2(10) + 1 bits.
_BITS_PER_DIGIT = 3.321928094887362


def int_from_digits(text):
    """The int that `text` (an optional sign and decimal digits) writes,
    checked against MAX_INT_BITS before it is converted: Python's conversion
    of a decimal string is quadratic (10,000,000 digits take minutes, in one
    call no turn limit can stop)."""
    digits = len(text.lstrip('+-').lstrip('0'))
    if digits and int((digits - 1) * _BITS_PER_DIGIT) + 1 > MAX_INT_BITS:
        raise too_large('number', int((digits - 1) * _BITS_PER_DIGIT) + 1, MAX_INT_BITS, 'bits')
    n = int(text)
    check_int_bits(n.bit_length())
    return n
