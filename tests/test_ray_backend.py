"""The Ray backend against a real local Ray cluster: same stored results as the local backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from learnability.cli import main
from learnability.sweep import Store, Sweep, run_sweep
from learnability.sweep.testing import LocalRayCluster

pytest.importorskip("ray")  # an optional extra; the dev environment installs it

SWEEP = """\
name: ray/check
job: testing.probe
base: {size: 12, work: 2000}
grid:
  mode: [ok, raise, diverge]
  x: [0.5, 1.5]
seeds: [0, 1]
"""


@pytest.fixture(scope="session")
def ray_cluster():
    # a real cluster started with `ray start --head`, stopped by killing only its own processes
    with LocalRayCluster(num_cpus=2) as address:
        yield address


def _cli(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_ray_results_equal_local_bit_for_bit(ray_cluster, tmp_path: Path):
    address = ray_cluster
    sweep_file = tmp_path / "ray.yaml"
    sweep_file.write_text(SWEEP)
    ray_dir, local_dir = tmp_path / "ray", tmp_path / "local"
    assert (
        _cli(
            [
                "sweep",
                str(sweep_file),
                "--backend",
                "ray",
                "--address",
                address,
                "--results",
                str(ray_dir),
            ]
        )
        == 0
    )
    assert _cli(["sweep", str(sweep_file), "--workers", "2", "--results", str(local_dir)]) == 0
    with Store(ray_dir) as a, Store(local_dir) as b:
        via_ray = {r.run_id: (r.status, r.config, r.metrics, r.error) for r in a.records()}
        local = {r.run_id: (r.status, r.config, r.metrics, r.error) for r in b.records()}
        assert a.integrity_check() == "ok"
    assert len(via_ray) == 12
    assert via_ray == local
    statuses = sorted(s for s, *_ in via_ray.values())
    assert statuses == ["diverged"] * 4 + ["failed"] * 4 + ["ok"] * 4
    # a worker that dies takes only its own run down, and the sweep goes on
    crash = Sweep("ray/crash", "testing.probe", grid={"mode": ["exit", "ok"]})
    summary = run_sweep(crash, ray_dir, backend="ray", address=address, progress=False)
    assert (summary.failed, summary.ok, summary.crashed) == (1, 1, 1)
    with Store(ray_dir) as store:
        (dead,) = store.records(sweep="ray/crash", status="failed")
        assert dead.config["mode"] == "exit" and "Ray worker died" in dead.error


def test_ray_started_on_demand_matches_local(tmp_path: Path):
    # no address: the executor starts a Ray of its own on loopback for the run, then shuts it down
    import ray

    sweep = Sweep("ray/on-demand", "testing.probe", base={"size": 8}, grid={"x": [0.5, 1.5]})
    on_demand = run_sweep(sweep, tmp_path / "ray", backend="ray", workers=2, progress=False)
    local = run_sweep(sweep, tmp_path / "local", workers=0, progress=False)
    assert on_demand.ok == local.ok == 2
    assert not ray.is_initialized()
    with Store(tmp_path / "ray") as a, Store(tmp_path / "local") as b:
        assert {r.run_id: r.metrics for r in a.records()} == {
            r.run_id: r.metrics for r in b.records()
        }
