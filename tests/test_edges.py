"""Edges where a command used to give a silently wrong answer or a traceback (issue 24): the thread
count and the run id, memory, strict JSON from `measure`, a sweep whose every run failed, output
folders of the user's own, escaped report fields and checkpoints that inflate."""

from __future__ import annotations

import json
import math
import sqlite3
import time
import zipfile
from pathlib import Path

import pytest
import torch

from cli_run import run_cli
from learnability.config import config_hash, from_dict, yaml_values
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, save_model
from learnability.train import seeded_model

TINY = {
    "task": {"name": "boolean", "function": "majority", "n": 4},
    "model": {"arch": "boolean_transformer", "n_layers": 1, "n_heads": 1, "d_model": 8, "d_ff": 8},
    "train": {"steps": 2, "batch_size": 8, "eval_every": 1},
    "save_model": False,
}


def _rows(results: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(results / "learnability.db") as conn:
        rows = conn.execute("SELECT run_id, config FROM runs ORDER BY run_id").fetchall()
    conn.close()
    return rows


# -- 3: a setting that changes results is in the run id, or refused ------------------------------
def test_sweep_threads_is_part_of_a_train_runs_id(tmp_path: Path, capsys):
    sweep = tmp_path / "t.yaml"
    sweep.write_text(f"name: edge/threads\njob: train\nbase: {json.dumps(TINY)}\n")
    results = tmp_path / "results"
    before = torch.get_num_threads()
    try:
        for threads in ("1", "2", "1"):
            code, _, err = run_cli(
                ["sweep", sweep, "--threads", threads, "--workers", "0", "--results", results],
                capsys,
            )
            assert code == 0, err
    finally:
        torch.set_num_threads(before)
    rows = _rows(results)
    assert len(rows) == 2  # one run per thread count; the second `--threads 1` ran nothing new
    threads = sorted(json.loads(config)["threads"] for _, config in rows)
    assert threads == [1, 2]
    config = from_dict(TrainJobConfig, TINY)
    ids = {run_id for run_id, _ in rows}
    assert config_hash("train", config) in ids  # threads=1 keeps the id runs had before
    assert config_hash("train", from_dict(TrainJobConfig, {**TINY, "threads": 2})) in ids


def test_run_sweep_refuses_threads_for_a_job_that_cannot_record_them(tmp_path: Path):
    from learnability.sweep import Sweep, run_sweep

    with pytest.raises(UserError, match=r"testing\.probe.*threads"):
        run_sweep(Sweep("edge/p", "testing.probe"), tmp_path / "r", workers=0, threads_per_worker=2)
    assert not (tmp_path / "r").exists()


# -- 6: memory ----------------------------------------------------------------------------------------
def test_running_out_of_memory_is_one_line(tmp_path, monkeypatch, capsys):
    import learnability.cli.train as cli_train

    def oom(*_, **__):
        raise RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you "
            "tried to allocate 4000000000000 bytes."
        )

    monkeypatch.setattr(cli_train, "run_train", oom)
    code, _, err = run_cli(["train", "task.n=4", "--out", tmp_path / "run"], capsys)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith("error: out of memory") and "4000000000000 bytes" in lines[0]


def test_train_refuses_a_model_larger_than_the_memory_before_writing(tmp_path, monkeypatch, capsys):
    import learnability.cli.train as cli_train

    monkeypatch.setattr(cli_train, "_memory_of", lambda dev: 2**20)  # a 1 MiB machine
    code, _, err = run_cli(["train", "task.n=4", "--out", tmp_path / "run"], capsys)
    assert code == 2 and "GiB to train" in err and "has 0.0 GiB" in err
    assert not (tmp_path / "run").exists()


# -- 10: measure -----------------------------------------------------------------------------------
def test_measure_json_is_strict_json(tmp_path, monkeypatch, capsys):
    import learnability.cli.train as cli_train

    config = from_dict(TrainJobConfig, TINY)
    path = save_model(tmp_path / "model.pt", seeded_model(config.model, 0), config)
    monkeypatch.setattr(
        cli_train, "run_measures", lambda *a, **k: {"blowup": math.inf, "loss": math.nan, "ok": 1.5}
    )
    code, out, err = run_cli(["measure", path, "--json"], capsys)
    assert code == 0, err

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    data = json.loads(out, parse_constant=refuse)
    assert data["blowup"] == "inf" and data["loss"] is None and data["ok"] == 1.5


def test_a_model_without_its_hash_and_an_edited_task_is_refused(tmp_path):
    from learnability.jobs.train import read_model_checkpoint

    config = from_dict(TrainJobConfig, TINY)
    path = save_model(tmp_path / "model.pt", seeded_model(config.model, 0), config)
    payload = torch.load(path, weights_only=True)
    payload["job_config"]["task"]["function"] = "parity"  # same shapes, another task
    del payload["config_hash"]
    torch.save(payload, path)
    with pytest.raises(UserError, match="config_hash"):
        read_model_checkpoint(path)


# -- 12: checkpoints that inflate, YAML bombs, an all-failed sweep, escaping ----------------------
def test_a_checkpoint_that_inflates_is_refused_before_loading(tmp_path):
    from learnability.checkpoints import read_checkpoint

    config = from_dict(TrainJobConfig, TINY)
    path = save_model(tmp_path / "model.pt", seeded_model(config.model, 0), config)
    assert read_checkpoint(path)["kind"] == "learnability.model"  # a real one reads
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("model/data/99", bytes(32 << 20))
    assert path.stat().st_size < 1 << 20  # 32 MB in well under 1 MB
    with pytest.raises(UserError, match=r"inflates to 33,5\d\d,\d\d\d bytes"):
        read_checkpoint(path)


def test_a_billion_laughs_is_refused_in_well_under_a_second():
    text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)
    )  # 10^10 values when expanded
    t0 = time.perf_counter()
    with pytest.raises(Exception, match="aliases expand"):
        yaml_values(text)
    assert time.perf_counter() - t0 < 1.0
    # aliases themselves are fine: a shared base is a small value
    assert yaml_values("base: &b {x: 1}\nother: *b\n") == {"base": {"x": 1}, "other": {"x": 1}}


def test_a_sweep_whose_every_run_failed_exits_nonzero(tmp_path, capsys):
    sweep = tmp_path / "f.yaml"
    sweep.write_text("name: edge/fail\njob: testing.probe\nbase: {mode: raise}\nseeds: [0, 1]\n")
    code, out, err = run_cli(
        ["sweep", sweep, "--workers", "0", "--results", tmp_path / "r"], capsys
    )
    assert code == 1 and "2 failed" in out
    assert err.strip().startswith("error: every run failed (2 of 2)")
    # one failure among successes is a result to look at, not a failed command
    sweep.write_text(
        "name: edge/mixed\njob: testing.probe\ngrid: {mode: [ok, raise]}\nseeds: [0]\n"
    )
    code, out, _ = run_cli(["sweep", sweep, "--workers", "0", "--results", tmp_path / "r2"], capsys)
    assert code == 0 and "1 failed" in out


def test_train_writes_again_into_its_own_run_folder(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["train", "task.n=4", "train.steps=2", "model.d_model=8", "model.d_ff=8", "--quiet"]
    for _ in range(2):
        code, _, err = run_cli([*args, "--out", out], capsys)
        assert code == 0, err
    manifest = json.loads((out / ".learnability.json").read_text())
    assert {"config.yaml", "model.pt", "result.json"} <= set(manifest["written"])


def _hostile_claim(text: str):
    from learnability.claims import ClaimResult

    return ClaimResult(
        id="s/c", title=text, statement=text, paper_statement=text, verdict="reproduced",
        rule={"text": text, "id": "r", "version": text}, control={"name": text, "value": text},
        units={"count": 3, "kind": text, "min_per_cell": text, "note": text}, robustness=[],
        robust=True, history=[
            {"version": text, "verdict": "reproduced", "why": "current rule", "date": ""},
            {"version": text, "verdict": "reproduced", "why": text, "date": text},
        ], scale="quick", scale_note=text, measured=text, details={},
    )  # fmt: skip


def test_report_fields_and_claims_md_cells_are_escaped(tmp_path):
    from learnability.report.html import build_report
    from learnability.report.study_report import StudyReport

    text = "<script>x()</script> | a"
    report = StudyReport("s", text, text, text, "quick", [_hostile_claim(text)], notes=[text])
    build_report([report], tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "<script>x()" not in page and "&lt;script&gt;x()" in page
    md = (tmp_path / "claims.md").read_text()
    # escaped for Markdown (a backslash, claims.md's own way) or as an HTML entity: never a live tag
    assert "<script>" not in md.replace("\\<script>", "") and "script" in md
    assert "\\| a" in md  # a cell's own pipe is escaped: a table row keeps its cells


def test_results_json_is_strict_json_with_nan_metrics(tmp_path, capsys):
    sweep = tmp_path / "n.yaml"
    sweep.write_text("name: edge/nan\njob: testing.probe\nbase: {x: .nan}\n")
    results = tmp_path / "r"
    assert run_cli(["sweep", sweep, "--workers", "0", "--results", results], capsys)[0] == 0
    code, out, err = run_cli(["results", "--results", results, "--format", "json"], capsys)
    assert code == 0, err

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    (row,) = json.loads(out, parse_constant=refuse)
    assert row["metrics"]["value"] is None and row["config"]["x"] is None
