#!/usr/bin/env python3
"""Compare the full standard error of golden programs with their NAME.stderr files.

Usage: check_stderr.py [--ostinato CMD] [DIR_OR_FILE...]   (default: this folder, recursively)
Each program runs as `ostinato run NAME.ost` with a fresh database in a temporary folder;
folder prefixes before file names are removed from stderr before comparing.
"""
import argparse, os, re, shlex, shutil, subprocess, sys, tempfile
from pathlib import Path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ostinato", default=None)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    if a.ostinato:
        cmd = shlex.split(a.ostinato)
    else:
        venv = Path.cwd() / ".venv/bin/ostinato"
        cmd = [str(venv) if venv.exists() else (shutil.which("ostinato") or "ostinato")]
    roots = [Path(p) for p in a.paths] or [Path(__file__).resolve().parent]
    files = []
    for r in roots:
        files += [r] if r.suffix == ".stderr" else sorted(r.rglob("*.stderr"))
    passed = failed = 0
    for st in files:
        prog = st.with_suffix(".ost").resolve()
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, OSTINATO_DB=str(Path(tmp) / "ostinato.fs"))
            try:
                p = subprocess.run(cmd + ["run", str(prog)], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, timeout=a.timeout)
                got = p.stderr
            except subprocess.TimeoutExpired:
                got = "<timed out>\n"
        got = re.sub(r"(?m)^(\s*(?:at )?)[^\s:]*/", r"\1", got)
        want = st.read_text()
        if got == want:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {st.name}:\n--- want\n{want}--- got\n{got}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


main()
