"""Compute benchmark: the same programs in Ostinato and in CPython, timed in
one run.  Prints `ratio NAME VALUE` (Ostinato time / CPython time) per
program, and the absolute times as `time NAME.ost|NAME.py SECONDS s`, each
the best of REPEAT runs.
Target (issue: language core): every ratio <= 25."""
import io
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from ostinato.runtime.runner import run_file

PROGRAMS = {
    'fib25': ('''
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
print(fib(25))
''', '''
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
print(fib(25))
'''),
    'loop_sum': ('''
total = 0
i = 0
while i < 1000000:
    total = total + i
    i = i + 1
print(total)
''', '''
def main():
    total = 0
    i = 0
    while i < 1000000:
        total = total + i
        i = i + 1
    print(total)
main()
'''),
    'string_build': ('''
def build(n):
    s = ''
    for i in 0..n:
        s = s + str(i % 10)
    return s
print(length(build(200000)))
''', '''
def build(n):
    s = ''
    for i in range(0, n):
        s = s + str(i % 10)
    return s
print(len(build(200000)))
'''),
}


def time_ost(src):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, 'bench.ost')
        with open(p, 'w') as f:
            f.write(src)
        out = io.StringIO()
        t0 = time.perf_counter()
        code = run_file(p, out, sys.stderr)
        t = time.perf_counter() - t0
        assert code == 0, out.getvalue()
        return t, out.getvalue()


def time_py(src):
    out = io.StringIO()
    old = sys.stdout
    sys.stdout = out
    t0 = time.perf_counter()
    try:
        exec(compile(src, 'bench.py', 'exec'), {'__name__': 'bench'})
    finally:
        sys.stdout = old
    return time.perf_counter() - t0, out.getvalue()


REPEAT = 3    # the best of a few runs: the machine is shared and noisy


def best(timer, src):
    runs = [timer(src) for _ in range(REPEAT)]
    return min(t for t, _ in runs), runs[0][1]


def main():
    for name, (ost, py) in PROGRAMS.items():
        t_ost, o1 = best(time_ost, ost)
        t_py, o2 = best(time_py, py)
        assert o1 == o2, (name, o1, o2)
        print('time %s.ost %.3f s' % (name, t_ost))
        print('time %s.py %.3f s' % (name, t_py))
        print('ratio %s %.1f' % (name, t_ost / t_py))


if __name__ == '__main__':
    main()
