"""The cost of the `extract` built-in (Duckling through ctypes) per phrase:
the issue's phrases, read with the past preferred and with the future, in
the default kinds.  Prints `extract_past MS ms` and `extract_future MS ms`
(the mean over ROUNDS rounds, after one call that loads Duckling, whose
time is printed as `extract_load S s`).  Nothing is asserted: figures only.
    python bench/extract.py [--rounds N]
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from ostinato.vm.extract import b_extract

PHRASES = ['around 12:30', '20 min ago', 'half an hour ago', 'quarter past 12',
           'at 7.30 this morning', 'at 8', 'at 7:15 this morning', '5k in 28 min',
           'did 30 minutes of yoga', '3 coffees', 'yesterday at 9pm',
           'went for a run this morning, 5k in 28 min, then 20 pushups at lunch']
NOW = '2026-12-04T21:00:00-05:00'


def main(argv):
    rounds = int(argv[argv.index('--rounds') + 1]) if '--rounds' in argv else 50
    start = time.perf_counter()
    b_extract('at 8', None, NOW, 'America/New_York', 'past')
    print('extract_load %.3f s' % (time.perf_counter() - start))
    for prefer in ('past', 'future'):
        start = time.perf_counter()
        for _ in range(rounds):
            for phrase in PHRASES:
                b_extract(phrase, None, NOW, 'America/New_York', prefer)
        per = (time.perf_counter() - start) / (rounds * len(PHRASES))
        print('extract_%s %.3f ms' % (prefer, per * 1000))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
