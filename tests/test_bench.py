"""The benchmarks run: bench/durable.py and bench/peers.py at tiny sizes, each
a real process on real FileStorage and SQLite files, print every figure
they promise as a number.  No figure's value is checked (the machine is
shared and noisy); a benchmark whose workload breaks (a dialogue that does
not reply, a LangGraph that is not installed) exits non-zero and fails
here."""
import math
import os
import re
import subprocess
import sys

import pytest

# Slow (a benchmark process each): `make test-fast` leaves these out.
pytestmark = pytest.mark.slow

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'bench')
FIGURE = re.compile(r'^(\w+) (\S+) (\S+)$')
RATIO = re.compile(r'^ratio (\w+) (\S+)$')


def run_bench(name, *args, tmp_path):
    r = subprocess.run([sys.executable, os.path.join(BENCH, name), '--keep', str(tmp_path), *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    figures, ratios = {}, {}
    for line in r.stdout.splitlines():
        m = RATIO.match(line)
        if m:
            ratios[m.group(1)] = float(m.group(2))
            continue
        m = FIGURE.match(line)
        assert m, 'not a figure: %r' % line
        figures[m.group(1)] = float(m.group(2))
    for name, value in list(figures.items()) + list(ratios.items()):
        assert math.isfinite(value), (name, value)
    return figures, ratios, r.stderr


def RECORDS(case):
    """The records and persistent references written per message, and the
    CPU time a message takes (issue 28)."""
    return ['%s_%s' % (case, name) for name in (
        'intake_records_per_msg', 'intake_refs_per_msg', 'turn_records_per_msg',
        'turn_refs_per_msg', 'records_per_msg', 'cpu_per_msg')]


def test_durable_prints_every_figure(tmp_path):
    figures, ratios, err = run_bench(
        'durable.py', '--tasks', '20', '--rounds', '5', '--wakes', '3', '--one', '3',
        '--burst', '5', '--ready', '2,5', '--ready-sample', '3', '--waiting', '6', '--echo', '8',
        '--explain',
        tmp_path=tmp_path)
    assert ratios == {}
    assert sorted(figures) == sorted([
        'durable_turn_p50', 'durable_turn_p99', 'durable_turn_cpu_p50', 'fsync_ms',
        'bytes_per_waiting_task', 'bytes_per_waiting_task_unpacked', 'peak_rss_mb',
        'peak_rss_mb_10', 'wake_one_ms_10', 'wake_one_ms_20', 'cold_start_s',
        'one_at_a_time_msgs_per_s', 'resume_p50', 'resume_p99', 'resume_turn_p50',
        'resume_turn_p99', 'one_at_a_time_bytes_per_msg', 'one_at_a_time_intake_bytes_per_msg',
        'one_at_a_time_fsyncs_per_msg', 'burst_msgs_per_s', 'burst_bytes_per_msg',
        'burst_fsyncs_per_msg', 'burst_intake_msgs_per_s', 'burst_intake_bytes_per_msg',
        'bytes_per_msg_ready_2', 'msgs_per_s_ready_2', 'bytes_per_msg_ready_5',
        'msgs_per_s_ready_5', 'bytes_per_msg_ready_flatness', 'bytes_per_waiting_dialogue_6',
        'bytes_per_waiting_dialogue_6_unpacked', 'rss_mb_waiting_dialogues_6',
        'resume_ms_waiting_dialogues_6', 'new_dialogue_bytes_6', 'new_dialogue_ms_6',
        'echo_records_per_msg', 'echo_bytes_per_msg', 'echo_cpu_per_msg']
        + RECORDS('one_at_a_time') + RECORDS('burst'))
    assert 'what the burst wrote in' in err


def test_durable_runs_only_the_sections_asked_for(tmp_path):
    figures, _, _ = run_bench('durable.py', '--only', 'burst', '--burst', '4', tmp_path=tmp_path)
    assert sorted(figures) == sorted(['burst_bytes_per_msg', 'burst_fsyncs_per_msg',
                                      'burst_intake_bytes_per_msg', 'burst_intake_msgs_per_s',
                                      'burst_msgs_per_s'] + RECORDS('burst'))


def test_durable_names_an_unknown_section(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(BENCH, 'durable.py'), '--only', 'brust'],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert 'no section brust' in r.stderr


def test_peers_prints_both_systems_and_the_ratios(tmp_path):
    figures, ratios, err = run_bench('peers.py', '--one', '3', '--burst', '4', '--waiting', '10',
                                     '--resumes', '3', tmp_path=tmp_path)
    assert sorted(figures) == sorted(
        ['%s_%s' % (system, name) for system in ('ostinato', 'langgraph')
         for name in ('resume_p50', 'resume_p99', 'one_at_a_time_msgs_per_s', 'burst_msgs_per_s',
                      'rss_mb_waiting_10', 'resume_ms_waiting_10')]
        + ['ostinato_burst_with_intake_msgs_per_s'])
    assert sorted(ratios) == sorted(['resume_p50', 'resume_p99', 'rss_mb_waiting_10',
                                     'burst_msgs_per_s', 'burst_with_intake_msgs_per_s'])
    assert 'peers: langgraph ' in err


def test_scale_prints_every_store_and_the_ratios(tmp_path, monkeypatch):
    """bench/scale.py at a tiny size: FileStorage, ZEO and PostgreSQL (a
    real server: no server fails this) with one and two workers."""
    from pg_support import ADMIN, _admin
    _admin().close()            # no PostgreSQL answering fails here, in words
    monkeypatch.setenv('OSTINATO_BENCH_PG', ADMIN)
    figures, _, _ = run_bench('scale.py', '--jobs', '3', '--steps', '2', '--rounds', '2',
                              '--workers', '1,2', tmp_path=tmp_path)
    for name in ('file_w1', 'zeo_w1', 'zeo_w2', 'pg_w1', 'pg_w2'):
        for what in ('burst_turns_per_s', 'resume_p50', 'resume_p99', 'bytes_per_turn'):
            assert '%s_%s' % (name, what) in figures, sorted(figures)
    for name in ('pg_w1_vs_file_burst', 'pg_w2_vs_pg_w1_burst', 'zeo_w2_vs_zeo_w1_burst'):
        assert figures[name] > 0


def test_extract_prints_its_figures(tmp_path):
    figures, _, _ = run_bench('extract.py', '--rounds', '1', tmp_path=tmp_path)
    assert set(figures) == {'extract_load', 'extract_past', 'extract_future'}


def test_threads_prints_a_new_dialogues_cost_at_each_size_and_the_ratio(tmp_path):
    figures, _, _ = run_bench('threads.py', '--sizes', '12,40', '--new', '2', '--dialogues', '3',
                              tmp_path=tmp_path)
    assert sorted(figures) == sorted(
        ['new_dialogue_%s_%d' % (what, n) for what in ('ms', 'cpu_ms', 'records', 'bytes')
         for n in (12, 40)] + ['new_dialogue_ratio', 'new_dialogue_cpu_ratio'])
    assert figures['new_dialogue_records_40'] > 0
