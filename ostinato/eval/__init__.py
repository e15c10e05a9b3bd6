"""`ostinato eval`: measuring a skill against simulated users.

cases.py reads and checks the TOML case files; dialogue.py plays the
simulated users on the real runtime (a chat channel, a virtual clock per
run) and evaluates the expectations; runner.py drives a whole eval;
workdir.py keeps its results so that an interrupted eval goes on;
report.py shows and writes them.  The package sits beside the command
(cli.py), above the runtime and the effects it drives.
"""
