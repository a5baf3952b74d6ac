"""Workers die with their driver: SIGKILL a driver mid-sweep, and no pool process survives it.

A real driver (`learnability sweep ... --workers 2` in a subprocess) runs probe jobs that each leave a
marker file when they complete. Once some runs are stored, the test records the driver's process
tree (forkserver, workers, resource tracker), SIGKILLs the driver alone, and checks that within a few
seconds every process of that tree is gone and no run completes any more. It then resumes the sweep
and checks that no stored run was executed again, by orphans or by the resumed driver. (A run a
worker finished in the instant before the kill, whose result never reached the store, is rightly run
again: at most one per worker, and never one that was stored.)
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]
RUNS = 24


def _count_ok(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as conn:
            return conn.execute("SELECT COUNT(*) FROM runs WHERE status='ok'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.timeout(240)
def test_sigkilled_driver_takes_its_pool_along_and_resume_runs_nothing_twice(tmp_path: Path):
    markers = tmp_path / "markers"
    sweep_file = tmp_path / "slow.yaml"
    seeds = ", ".join(map(str, range(RUNS)))
    sweep_file.write_text(
        "name: orphan/slow\njob: testing.probe\n"
        f"base: {{mode: sleep, sleep_s: 0.4, marker_dir: '{markers}'}}\nseeds: [{seeds}]\n"
    )
    results = tmp_path / "results"
    cmd = [sys.executable, "-c", "from learnability.cli import main; main()", "sweep"]
    cmd += [str(sweep_file), "--results", str(results), "--workers", "2"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    driver = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    tree: list[psutil.Process] = []
    try:
        deadline = time.time() + 120
        while _count_ok(results / "learnability.db") < 3:
            assert driver.poll() is None, driver.stderr.read().decode()
            assert time.time() < deadline, "the sweep made no progress"
            time.sleep(0.05)
        tree = psutil.Process(driver.pid).children(recursive=True)
        # whole command lines: the forkserver's starts with the interpreter's path, as long as the
        # clone's path (tests/test_long_path.py runs this test from a 150-character one)
        names = [" ".join(p.cmdline()) for p in tree]
        assert any("forkserver" in n for n in names), names  # the pool is up: something to kill
        assert len(tree) >= 3, names  # forkserver and two workers (and the resource tracker)
        os.kill(driver.pid, signal.SIGKILL)  # the driver only, as the OOM killer would
        driver.wait(timeout=30)
        killed_at = time.time()
        while any(_alive(p) for p in tree) and time.time() < killed_at + 5:
            time.sleep(0.1)
        survivors = [(p.pid, " ".join(p.cmdline())[-120:]) for p in tree if _alive(p)]
        assert not survivors, f"still alive 5 s after the driver died: {survivors}"
        completed = len(list(markers.iterdir()))
        with sqlite3.connect(results / "learnability.db") as conn:
            stored = {r[0] for r in conn.execute("SELECT run_id FROM runs WHERE status='ok'")}
        time.sleep(1.5)  # longer than a run: an orphan still working would complete one now
        assert len(list(markers.iterdir())) == completed, "runs completed after the driver died"
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(driver.pid, signal.SIGKILL)  # never leave anything behind, even on failure
        for p in tree:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                p.kill()
    assert completed < RUNS  # killed mid-sweep
    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(results / "learnability.db") as conn:
        rows = conn.execute("SELECT run_id, status FROM runs").fetchall()
    assert len(rows) == RUNS and {status for _, status in rows} == {"ok"}
    executions = collections.Counter(m.name.split(".")[0] for m in markers.iterdir())
    assert set(executions) == {run_id for run_id, _ in rows}
    twice = {run_id: n for run_id, n in executions.items() if n != 1}
    assert not set(twice) & stored, f"stored runs executed again: {twice}"
    assert len(twice) <= 2 and set(twice.values()) <= {2}, f"runs executed again: {twice}"
