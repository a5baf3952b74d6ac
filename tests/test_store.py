"""The SQLite store: rows, filters, membership, two concurrent writers, and SIGKILL mid-sweep."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from learnability.errors import UserError
from learnability.sweep import Store, Sweep
from learnability.sweep.store import open_existing

ROOT = Path(__file__).resolve().parents[1]
N_KILL = 40  # runs of 0.15 s on 2 workers: ~3 s, long enough to be killed mid-way


def _result(status="ok", **metrics):
    return {
        "status": status,
        "metrics": metrics,
        "error": None,
        "seconds": 0.5,
        "started": 1.0,
        "finished": 1.5,
        "versions": {"python": "3"},
    }


def test_rows_filters_and_membership(tmp_path: Path):
    a = Sweep("st/a", "testing.probe", grid={"x": [1.0, 2.0]}, seeds=[0, 1]).expand()
    b = Sweep(
        "st/b", "testing.probe", base={"x": 2.0}, seeds=[0]
    ).expand()  # shares a run with st/a
    with Store(tmp_path) as store:
        assert store.integrity_check() == "ok"
        assert (tmp_path / "learnability.db").is_file()
        store.add_members(a + b)
        for spec in a:
            assert store.claim(spec)
            store.record_result(
                spec, _result("ok" if spec.config.x == 1.0 else "failed", v=spec.config.x)
            )
        assert not store.claim(a[0])  # already ok: not run again
        assert store.done_ids() == {s.run_id for s in a if s.config.x == 1.0}
        assert len(store.records()) == 4
        assert {r.config["x"] for r in store.records(status="ok")} == {1.0}
        assert len(store.records(sweep="st/a")) == 4
        (shared,) = store.records(sweep="st/b")
        assert shared.run_id == b[0].run_id and shared.sweep == "st/b" and shared.status == "failed"
        assert len(store.records(study="st")) == 4  # the shared run is listed once
        assert [r.seed for r in store.records(where={"x": 2.0, "seed": 1})] == [1]
        rec = store.records(where={"v": 1.0, "seed": 0})[0]
        assert rec.metrics == {"v": 1.0} and rec.get("v") == 1.0 and rec.get("size") == 8
        assert rec.versions == {"python": "3"} and rec.attempts == 1 and rec.seconds == 0.5
        assert rec.run_dir == tmp_path / "runs" / rec.run_id
        # a retry counts attempts and replaces the outcome
        failed = next(s for s in a if s.config.x == 2.0)
        store.mark_running(failed)
        store.record_result(failed, _result("diverged"))
        (again,) = store.records(run_ids=[failed.run_id])
        assert again.status == "diverged" and again.attempts == 2
        assert store.sweeps() == ["st/a", "st/b"] and store.studies() == ["st"]
        with pytest.raises(UserError, match="unknown status 'done'"):
            store.records(status="done")
    with pytest.raises(UserError, match="no results store"):
        open_existing(tmp_path / "elsewhere")


_WRITER = textwrap.dedent(
    """
    import sys
    from learnability.sweep import Store, Sweep
    tag, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    specs = Sweep(f"cw/{tag}", "testing.probe", base={"size": 2 + (tag == "b")}, seeds=list(range(n))).expand()
    store = Store(root, timeout=60)
    store.add_members(specs)
    for spec in specs:
        store.claim(spec)
        store.record_result(spec, {"status": "ok", "metrics": {"tag": tag, "seed": spec.seed}, "seconds": 0.0})
    print("done", len(specs))
    """
)


def test_two_processes_write_at_once(tmp_path: Path):
    n = 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, tag, str(tmp_path), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == f"done {n}"
    with Store(tmp_path) as store:
        assert store.integrity_check() == "ok"
        for tag in ("a", "b"):
            records = store.records(sweep=f"cw/{tag}")
            assert len(records) == n
            assert {r.metrics["seed"] for r in records} == set(range(n))
            assert all(r.status == "ok" and r.metrics["tag"] == tag for r in records)


def _count_ok(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=10) as conn:
            return conn.execute("SELECT COUNT(*) FROM runs WHERE status='ok'").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_sigkill_mid_sweep_then_resume(tmp_path: Path):
    sweep_file = tmp_path / "slow.yaml"
    sweep_file.write_text(
        "name: kill/slow\njob: testing.probe\nbase: {mode: sleep, sleep_s: 0.15}\nseeds: ["
        + ", ".join(map(str, range(N_KILL)))
        + "]\n"
    )
    results = tmp_path / "results"
    cli = "from learnability.cli import main; main()"
    cmd = [
        sys.executable,
        "-c",
        cli,
        "sweep",
        str(sweep_file),
        "--results",
        str(results),
        "--workers",
        "2",
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    driver = subprocess.Popen(
        cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    db = results / "learnability.db"
    try:
        deadline = time.time() + 90
        while _count_ok(db) < 4:
            assert driver.poll() is None, driver.stderr.read().decode()
            assert time.time() < deadline, "sweep made no progress"
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGKILL)  # the driver only: its workers are orphaned mid-run
        driver.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(driver.pid, signal.SIGKILL)  # then clean up the orphans
    killed_at = _count_ok(db)
    assert 4 <= killed_at < N_KILL, killed_at
    with Store(results) as store:
        assert store.integrity_check() == "ok"
        before = {r.run_id: r for r in store.records(status="ok")}
    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} already done" in " ".join(resumed.stdout.split())
    with Store(results) as store:
        assert store.integrity_check() == "ok"
        records = store.records(sweep="kill/slow")
        assert len(records) == N_KILL and all(r.status == "ok" for r in records)
        assert sorted(r.seed for r in records) == list(range(N_KILL))  # every run exactly once
        for run_id, old in before.items():  # finished runs were not re-run
            (now,) = store.records(run_ids=[run_id])
            assert now.finished == old.finished and now.attempts == 1
        assert all((r.run_dir / "metrics.jsonl").is_file() for r in records)


# -- migrating an older store: all or nothing ---------------------------------------------------
_PRE_LEASE_RUNS = """CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, sweep TEXT NOT NULL, study TEXT NOT NULL DEFAULT '', job TEXT NOT NULL,
    config TEXT NOT NULL, status TEXT NOT NULL, metrics TEXT NOT NULL DEFAULT '{}', error TEXT,
    traceback TEXT, started REAL, finished REAL, seconds REAL, seed INTEGER,
    versions TEXT NOT NULL DEFAULT '{}', attempts INTEGER NOT NULL DEFAULT 0, owner TEXT)"""


def _old_store(folder: Path, runs_table: str, members: str = "table") -> Path:
    folder.mkdir()
    db = folder / "learnability.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute(runs_table)
        conn.execute(
            "INSERT INTO runs(run_id, sweep, study, job, config, status, metrics, attempts) "
            "VALUES ('r1', 'old/s', 'old', 'testing.probe', '{}', 'ok', '{\"v\": 1}', 1)"
        )
        if members == "table":
            conn.execute("CREATE TABLE members (sweep TEXT, study TEXT, run_id TEXT)")
            conn.execute("INSERT INTO members VALUES ('old/s', 'old', 'r1')")
        else:
            conn.execute("CREATE VIEW members AS SELECT sweep, study, run_id FROM runs")
        conn.commit()
    return db


def _unchanged(db: Path, before: bytes) -> None:
    assert db.read_bytes() == before, "the refused store was changed"
    assert sorted(p.name for p in db.parent.iterdir()) == ["learnability.db"]


def test_a_store_from_before_leases_is_migrated_and_keeps_its_runs(tmp_path: Path):
    db = _old_store(tmp_path / "old", _PRE_LEASE_RUNS)
    with Store(db.parent) as store:
        (rec,) = store.records(sweep="old/s")
        assert rec.run_id == "r1" and rec.metrics == {"v": 1}
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert "lease_expires" in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}


@pytest.mark.parametrize("kind", ["columns missing", "members a view"])
def test_a_store_that_cannot_be_used_is_refused_before_it_is_changed(tmp_path: Path, kind: str):
    if kind == "columns missing":  # e.g. another program's table, or one damaged by hand
        runs = _PRE_LEASE_RUNS.replace("traceback TEXT,", "").replace(", owner TEXT", "")
        db = _old_store(tmp_path / "old", runs)
    else:
        db = _old_store(tmp_path / "old", _PRE_LEASE_RUNS, members="view")
    before = db.read_bytes()
    for read_only in (False, True):
        with pytest.raises(UserError, match="cannot be used") as info:
            Store(db.parent, read_only=read_only)
        assert "\n" not in str(info.value)
        _unchanged(db, before)


def test_a_migration_that_fails_half_way_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch):
    from learnability.sweep import store as store_module

    db = _old_store(tmp_path / "old", _PRE_LEASE_RUNS)
    before = db.read_bytes()
    # the last statement of the migration fails, after tables and indexes were made in it
    failing = store_module._SCHEMA + "\nCREATE INDEX boom ON no_such_table(x);"
    monkeypatch.setattr(store_module, "_SCHEMA", failing)
    with pytest.raises(UserError, match="no such table"):
        Store(db.parent)
    _unchanged(db, before)
