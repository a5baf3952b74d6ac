"""Run ownership is a lease with a heartbeat: what two drivers sharing one store may and may not do.

Each `Store` instance is one driver (its own owner token), so two instances in this process stand for
two drivers; a dead driver is a subprocess that has exited, a stopped one a subprocess sent SIGSTOP,
and a driver on another host an owner token naming another host.
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from learnability.sweep import Store, Sweep, run_sweep
from learnability.sweep.store import Heartbeat

pytestmark = pytest.mark.timeout(60)

SWEEP = Sweep("lease/probe", "testing.probe", grid={"x": [1.0, 2.0, 3.0]})


def _result(status: str = "ok") -> dict:
    now = time.time()
    return {"status": status, "metrics": {"v": 1}, "error": None, "started": now, "finished": now}


def _row(store: Store, run_id: str) -> tuple:
    with sqlite3.connect(store.path) as conn:
        return conn.execute(
            "SELECT status, owner, lease_expires, attempts FROM runs WHERE run_id=?", (run_id,)
        ).fetchone()


@pytest.mark.parametrize("status", ["ok", "failed", "diverged"])
def test_finished_runs_are_never_claimed_again_without_retry(tmp_path: Path, status: str):
    spec = SWEEP.expand()[0]
    with Store(tmp_path) as a, Store(tmp_path) as b:
        assert a.acquire(spec) == "claimed"
        assert a.record_result(spec, _result(status))
        # the other driver (and this one) sees a finished run: not run again
        assert b.acquire(spec) == "done" and a.acquire(spec) == "done"
        assert not b.claim(spec)
        # only --retry-failed re-runs, and only failed runs
        assert b.acquire(spec, retry_failed=True) == ("claimed" if status == "failed" else "done")
        assert _row(b, spec.run_id)[3] == (2 if status == "failed" else 1)


def test_a_result_never_overwrites_a_finished_run(tmp_path: Path):
    spec = SWEEP.expand()[0]
    with Store(tmp_path) as a:
        a.acquire(spec)
        assert a.record_result(spec, _result("diverged"))
        assert not a.record_result(spec, _result("ok"))  # a late duplicate is dropped
        (rec,) = a.records()
        assert rec.status == "diverged"


def test_a_live_lease_is_respected_while_its_heartbeat_beats(tmp_path: Path):
    spec = SWEEP.expand()[0]
    with Store(tmp_path, lease_seconds=0.4) as a, Store(tmp_path, lease_seconds=0.4) as b:
        assert a.acquire(spec) == "claimed"
        with Heartbeat(a):
            deadline = time.time() + 1.5  # several lease lengths
            while time.time() < deadline:
                assert b.acquire(spec) == "busy"
                time.sleep(0.1)
        status, owner, _, attempts = _row(a, spec.run_id)
        assert status == "running" and owner == a.owner and attempts == 1


def _on_another_host(store: Store, run_id: str) -> None:
    # the lease's owner as a driver on another host: its process cannot be seen from here
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE runs SET owner='elsewhere.invalid:1:1:abc' WHERE run_id=?", (run_id,))


def test_another_hosts_stale_lease_is_taken_over_after_its_timeout(tmp_path: Path):
    spec = SWEEP.expand()[0]
    with Store(tmp_path, lease_seconds=0.5) as a, Store(tmp_path, lease_seconds=0.5) as b:
        assert a.acquire(spec) == "claimed"  # ...by a driver on another host that then hangs
        _on_another_host(a, spec.run_id)
        assert b.acquire(spec) == "busy"  # within its lease
        time.sleep(0.6)
        assert b.acquire(spec) == "claimed"
        status, owner, _, attempts = _row(b, spec.run_id)
        assert status == "running" and owner == b.owner and attempts == 2
        assert a.acquire(spec) == "busy"  # a, waking up, sees b's lease (b lives on this host)


def test_a_live_owner_on_this_host_keeps_its_lease_past_the_expiry(tmp_path: Path):
    # a driver stopped (Ctrl-Z) beats no heartbeat, but its workers may still be running the run:
    # taking it over would run it twice, so on its own host the lease lasts as long as its process
    spec = SWEEP.expand()[0]
    with Store(tmp_path, lease_seconds=0.2) as a, Store(tmp_path, lease_seconds=0.2) as b:
        assert a.acquire(spec) == "claimed"  # no heartbeat from here on
        time.sleep(0.5)
        assert b.acquire(spec) == "busy"
        a.release([spec.run_id])  # ...until it gives the run up
        assert b.acquire(spec) == "claimed"


_STOPPED_DRIVER = """
import sys
from learnability.sweep import Store, Sweep
spec = Sweep("lease/probe", "testing.probe", grid={"x": [1.0, 2.0, 3.0]}).expand()[0]
store = Store(sys.argv[1], lease_seconds=0.3)
assert store.acquire(spec) == "claimed"
print("claimed", flush=True)
sys.stdin.read()  # holds the lease until its stdin closes
"""


def test_a_stopped_driver_keeps_its_lease_and_a_killed_one_loses_it(tmp_path: Path):
    import os
    import signal

    spec = SWEEP.expand()[0]
    driver = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_DRIVER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert driver.stdout is not None and driver.stdout.readline().strip() == "claimed"
        os.kill(driver.pid, signal.SIGSTOP)  # Ctrl-Z: no heartbeat for many lease lengths
        time.sleep(1.0)
        with Store(tmp_path, lease_seconds=0.3) as other:
            assert other.acquire(spec) == "busy"
            os.kill(driver.pid, signal.SIGCONT)
            driver.kill()
            driver.wait(timeout=30)
            assert other.acquire(spec) == "claimed"  # its owner is gone: taken over at once
    finally:
        with contextlib.suppress(ProcessLookupError):
            driver.kill()
        driver.wait(timeout=30)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_dead_owner_on_this_host_is_taken_over_at_once(tmp_path: Path):
    import os
    import socket

    from learnability.sweep.store import process_start_ticks

    specs = SWEEP.expand()
    host = socket.gethostname()
    far = time.time() + 3600  # leases that would not expire for an hour
    owners = [
        f"{host}:{_dead_pid()}:123:abc",  # the driver's process is gone
        f"{host}:{os.getpid()}:{int(process_start_ticks(os.getpid()) or 0) + 7}:abc",  # pid reused
        f"{host}:{_dead_pid()}",  # a row written before leases (host:pid, no expiry)
    ]
    with Store(tmp_path) as store:
        for spec, owner in zip(specs, owners):
            store.acquire(spec)
            with sqlite3.connect(store.path) as conn:
                expiry = None if owner.count(":") == 1 else far
                conn.execute(
                    "UPDATE runs SET owner=?, lease_expires=? WHERE run_id=?",
                    (owner, expiry, spec.run_id),
                )
        with Store(tmp_path) as other:
            assert [other.acquire(s) for s in specs] == ["claimed"] * 3


def test_a_sweep_waits_for_another_drivers_run_and_counts_it_only_once_done(tmp_path: Path):
    specs = SWEEP.expand()
    with Store(tmp_path, lease_seconds=0.5) as a:
        assert a.acquire(specs[0]) == "claimed"  # driver a is running this one

        def finish_later() -> None:
            time.sleep(1.5)  # three lease lengths: a's heartbeat keeps the lease meanwhile
            with Store(tmp_path) as connection:  # (a thread needs its own SQLite connection)
                connection.record_result(specs[0], _result("ok"))

        with Heartbeat(a):
            worker = threading.Thread(target=finish_later)
            worker.start()
            with Store(tmp_path, lease_seconds=0.5) as b:
                t0 = time.monotonic()
                summary = run_sweep(specs, b, workers=0, progress=False)
                waited = time.monotonic() - t0
                worker.join()
                statuses = {r.run_id: r.status for r in b.records()}
    assert summary.executed == 2 and summary.skipped == 1 and summary.by_others == 1
    assert waited >= 1.2  # it did not call the run done while a was still running it
    assert statuses == {s.run_id: "ok" for s in specs}
    assert "1 already done (1 by another driver)" in summary.line()


def test_a_sweep_takes_over_a_run_whose_driver_stopped_beating(tmp_path: Path):
    specs = SWEEP.expand()
    with Store(tmp_path, lease_seconds=0.5) as a, Store(tmp_path, lease_seconds=0.5) as b:
        assert a.acquire(specs[0]) == "claimed"  # then a hangs (no heartbeat, never finishes)
        _on_another_host(a, specs[0].run_id)  # (on this host its live process would keep it)
        summary = run_sweep(specs, b, workers=0, progress=False)
        assert summary.executed == 3 and summary.skipped == 0
        records = {r.run_id: r for r in b.records()}
        assert all(r.status == "ok" for r in records.values())
        assert records[specs[0].run_id].attempts == 2  # a's attempt, then b's
