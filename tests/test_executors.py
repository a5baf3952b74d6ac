"""The driver and the local executors: failures, divergence, worker crashes, resume, retry."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from learnability.errors import UserError
from learnability.sweep import Store, Sweep, run_sweep
from learnability.sweep.executors import cpu_model, execute_run

MIXED = Sweep(
    "ex/mixed",
    "testing.probe",
    base={"size": 6},
    grid={"mode": ["ok", "raise", "diverge", "exit"]},
    seeds=[0, 1, 2],
)


@pytest.fixture(scope="module")
def pool_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool")
    summary = run_sweep(MIXED, root, workers=2, progress=False)
    return root, summary


def _by_mode(store: Store) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in store.records(sweep="ex/mixed"):
        out.setdefault(r.config["mode"], []).append(r)
    return out


def test_failures_divergence_and_crashes_are_recorded(pool_results):
    root, summary = pool_results
    assert (summary.total, summary.ok, summary.diverged, summary.failed) == (12, 3, 3, 6)
    assert summary.crashed == 3
    with Store(root) as store:
        assert store.integrity_check() == "ok"
        runs = _by_mode(store)
    # the runs that shared the pool with a crashing one were re-run alone and succeeded
    assert all(r.status == "ok" and r.error is None for r in runs["ok"])
    assert all(
        r.status == "diverged" and r.metrics["status"] == "diverged" for r in runs["diverge"]
    )
    for r in runs["raise"]:
        assert r.status == "failed"
        assert r.error == f"RuntimeError: probe asked to fail (seed {r.seed})"
        assert "Traceback" in r.traceback and "in probe" in r.traceback
    for r in runs["exit"]:
        assert r.status == "failed" and "worker process died" in r.error
    ok = runs["ok"][0]
    assert yaml.safe_load((ok.run_dir / "config.yaml").read_text()) == ok.config
    assert (ok.run_dir / "metrics.jsonl").read_text().count("\n") == 1
    assert ok.versions["torch"] and ok.versions["python"] and ok.seconds > 0
    assert (
        ok.versions["cpu"] == cpu_model() != ""
    )  # the machine a run trained on is part of its record


def test_inline_gives_bit_identical_results(pool_results, tmp_path: Path):
    root, _ = pool_results
    safe = Sweep(
        "ex/mixed",
        "testing.probe",
        base={"size": 6},
        grid={"mode": ["ok", "diverge"]},
        seeds=[0, 1, 2],
    )
    summary = run_sweep(safe, tmp_path, workers=0, progress=False)
    assert (summary.ok, summary.diverged) == (3, 3)
    with Store(root) as a, Store(tmp_path) as b:
        pool = {r.run_id: r.metrics for r in a.records() if r.status != "failed"}
        inline = {r.run_id: r.metrics for r in b.records()}
    assert pool == inline  # same ids, same floats to the last bit


def test_resume_skips_and_retry_reruns_failed(pool_results):
    root, _ = pool_results
    again = run_sweep(MIXED.expand(), root, workers=2, progress=False)
    assert (again.skipped, again.executed) == (12, 0)
    retry_only_raise = [s for s in MIXED.expand() if s.config.mode in ("raise", "ok")]
    retried = run_sweep(retry_only_raise, root, workers=0, progress=False, retry_failed=True)
    assert (retried.skipped, retried.failed, retried.ok) == (3, 3, 0)
    with Store(root) as store:
        assert all(r.attempts == 2 for r in _by_mode(store)["raise"])
        assert all(r.attempts == 1 for r in _by_mode(store)["ok"])


def test_execute_run_reports_bad_return(tmp_path: Path):
    result = execute_run(
        {
            "run_id": "x",
            "job": "testing.probe",
            "module": "",
            "config": {"mode": "nonsense"},
            "run_dir": str(tmp_path),
            "device": "cpu",
            "threads": 1,
        }
    )
    assert result["status"] == "failed" and "nonsense" in result["error"]


def test_bad_arguments_are_user_errors(tmp_path: Path, monkeypatch):
    with pytest.raises(UserError, match="unknown backend 'slurm'"):
        run_sweep(MIXED, tmp_path, backend="slurm")
    with pytest.raises(UserError, match="workers"):
        run_sweep(MIXED, tmp_path, workers=-1)
    with pytest.raises(UserError, match="device"):
        run_sweep(MIXED, tmp_path, device="tpu")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(UserError, match=r"learnability\[ray\]"):
        run_sweep(Sweep("ex/r", "testing.probe"), tmp_path, backend="ray", progress=False)
    # nothing was run by any of these
    with Store(tmp_path) as store:
        assert store.records() == []


def test_a_log_file_gets_plain_progress_lines(tmp_path: Path, capsys, monkeypatch):
    # stdout redirected (not a terminal: pytest captures it): no bar, which a log file shows only at
    # the end, but one plain line per finished sweep, and one at most every PLAIN_EVERY_S seconds
    import learnability.sweep.runner as runner

    for name in (
        "FORCE_COLOR",
        "TTY_COMPATIBLE",
        "TTY_INTERACTIVE",
    ):  # rich's "a terminal after all"
        monkeypatch.delenv(name, raising=False)
    sweeps = [
        Sweep("log/a", "testing.probe", grid={"x": [1.0, 2.0]}),
        Sweep("log/b", "testing.probe", grid={"x": [3.0, 4.0, 5.0]}, base={"mode": "raise"}),
    ]
    run_sweep(sweeps, tmp_path / "r", workers=0, progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "progress: log/a finished: 2/5 runs done (2 ok, 0 failed, 0 diverged); 0 s elapsed",
        "progress: log/b finished: 5/5 runs done (2 ok, 3 failed, 0 diverged); 0 s elapsed",
    ]
    monkeypatch.setattr(runner, "PLAIN_EVERY_S", 0.0)  # a long sweep: the timed lines too
    run_sweep(sweeps[0], tmp_path / "r2", workers=0, progress=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("progress: log/a: 1/2 runs done (1 ok, 0 failed")
    assert lines[-1].startswith("progress: log/a finished: 2/2 runs done (2 ok")
    run_sweep(sweeps[0], tmp_path / "r3", workers=0, progress=False)
    assert capsys.readouterr().out == ""  # progress=False: nothing


def test_a_log_file_says_when_the_sweep_waits_for_another_driver(
    tmp_path: Path, capsys, monkeypatch
):
    import threading
    import time

    import learnability.sweep.runner as runner

    monkeypatch.setattr(runner, "PLAIN_EVERY_S", 0.2)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    specs = Sweep("log/w", "testing.probe", grid={"x": [1.0, 2.0]}).expand()
    now = time.time()
    result = {"status": "ok", "metrics": {}, "error": None, "started": now, "finished": now}

    def finish_later() -> None:  # the other driver finishes its run a second from now
        time.sleep(1.0)
        with Store(tmp_path) as other:
            other.record_result(specs[0], result)

    with Store(tmp_path) as holder:  # another driver (live, on this host) holds the first run
        assert holder.acquire(specs[0]) == "claimed"
        thread = threading.Thread(target=finish_later)
        thread.start()
        run_sweep(specs, tmp_path, workers=0, progress=True)
        thread.join()
    out = capsys.readouterr().out
    assert "; waiting for 1 run(s) another driver holds" in out
    assert (
        "progress: log/w finished: 2/2 runs done (1 ok, 0 failed, 0 diverged, 1 by another "
        "driver)" in out
    )


@pytest.mark.timeout(120)
def test_a_script_without_a_main_guard_fails_fast_with_the_fix_not_a_hang(tmp_path: Path):
    # workers import the driver's script again (as __mp_main__): without the guard its top level
    # would open the store the driver holds and start a sweep in every worker (a hang before)
    import os
    import subprocess

    script = tmp_path / "script.py"
    script.write_text(
        "from learnability.sweep import Store, Sweep, run_sweep\n"
        f"with Store({str(tmp_path / 'res')!r}) as store:\n"
        "    s = run_sweep(Sweep('demo/p', 'testing.probe', grid={'x': [1.0]}), store, workers=1,"
        " progress=False)\n"
        "    print('failed', s.failed)\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=90,
        env=dict(os.environ, PYTHONPATH=src), cwd=tmp_path,
    )  # fmt: skip
    assert 'top-level code under `if __name__ == "__main__":`' in done.stderr
    assert "failed 1" in done.stdout  # the run is stored as failed, not run inside a worker
