"""The standard train job: run_train end to end, measures, saved model, the job registry and the CLI."""

from __future__ import annotations

import json

import pytest
import torch

from learnability.config import from_dict, to_dict
from learnability.errors import UserError
from learnability.jobs.train import TrainJobConfig, load_model, run_train, save_model

BASE = {
    "task": {"name": "boolean", "function": "majority", "n": 5},
    "model": {
        "arch": "boolean_transformer",
        "n_layers": 1,
        "n_heads": 1,
        "d_model": 16,
        "d_ff": 16,
        "max_len": 5,
    },
    "train": {
        "steps": 300,
        "batch_size": 64,
        "lr": 3e-3,
        "weight_decay": 0.0,
        "eval_every": 25,
        "converge_acc": 1.0,
    },
    "measure": [
        "accuracy",
        "profile",
        "blowup",
        "param_norm",
        "lipschitz",
        "sharpness",
        "sharpness_gauss",
    ],
    "sharpness_directions": 4,
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    config = from_dict(TrainJobConfig, BASE)
    rows = []
    metrics = run_train(config, run_dir, "cpu", log=lambda step, m: rows.append((step, m)))
    return config, run_dir, metrics, rows


def test_run_train_metrics(trained):
    _config, _run_dir, m, rows = trained
    assert m["status"] == "converged" and m["converged"] and m["test_acc"] == 1.0
    # MAJORITY learned exactly: the model's profile is the target's (n = 5: K_0 = 12, K_3 = 20)
    assert m["function_agreement"] == 1.0
    assert m["model_counts"] == [12.0, 0.0, 0.0, 20.0, 0.0, 0.0]
    assert m["model_as"] == pytest.approx(m["target_as"]) and m["target_K0"] == 12
    # its balance is MAJORITY's: half of the 32 strings (odd n, no ties) accepted
    assert m["model_accept"] == 16
    for key in (
        "blowup_paper",
        "blowup_published",
        "param_norm",
        "log10_lipschitz",
        "sharpness",
        "sharpness_gauss",
    ):
        assert isinstance(m[key], float), key
    assert m["sharpness_ci_low"] <= m["sharpness"] <= m["sharpness_ci_high"]
    assert rows and rows[-1][0] == m["steps"] and "test_acc" in rows[-1][1]
    json.dumps(m)  # JSON-serialisable


def test_saved_model_round_trip(trained):
    config, run_dir, _, _ = trained
    model, loaded = load_model(run_dir / "model.pt")
    assert to_dict(loaded) == to_dict(config)
    x = torch.randint(0, 2, (8, 5))
    again, _ = load_model(run_dir / "model.pt")
    assert torch.equal(model(x), again(x))


def test_checkpoint_errors(trained, tmp_path):
    _config, run_dir, _, _ = trained
    model, _ = load_model(run_dir / "model.pt")
    other = from_dict(TrainJobConfig, {**BASE, "model": {**BASE["model"], "d_model": 8, "d_ff": 8}})
    save_model(tmp_path / "bad.pt", model, other)  # weights of one model, config of another
    with pytest.raises(UserError, match="does not fit"):
        load_model(tmp_path / "bad.pt")
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(UserError):
        load_model(tmp_path / "junk.pt")
    with pytest.raises(UserError):
        load_model(tmp_path / "missing.pt")


def test_diverged_run_and_unknown_measure():
    bad = from_dict(
        TrainJobConfig,
        {
            **BASE,
            "train": {
                "steps": 100,
                "optimizer": "sgd",
                "lr": 1e12,
                "weight_decay": 0.0,
                "eval_every": 10,
            },
        },
    )
    m = run_train(bad)
    assert m["status"] == "diverged" and not m["converged"] and "blowup_paper" not in m
    with pytest.raises(UserError, match="unknown measure"):
        run_train(from_dict(TrainJobConfig, {**BASE, "measure": ["sharpnes"]}))


def test_registered_as_train_job(tmp_path):
    from learnability.sweep.jobs import RunContext, get_job

    job = get_job("train")
    assert job.config_cls is TrainJobConfig
    cfg = from_dict(
        TrainJobConfig, {**BASE, "train": {**BASE["train"], "steps": 20}, "measure": ["param_norm"]}
    )
    ctx = RunContext("r1", tmp_path / "r1", "cpu")
    m = job.fn(cfg, ctx)
    ctx.close()
    assert m["steps"] == 20 and "param_norm" in m
    assert (tmp_path / "r1" / "model.pt").is_file()
    assert len((tmp_path / "r1" / "metrics.jsonl").read_text().splitlines()) >= 1


def test_cli_train_and_measure(tmp_path):
    from typer.testing import CliRunner

    from learnability.cli import app

    runner = CliRunner()
    out = tmp_path / "cli"
    args = [
        "train",
        "task.function=first",
        "task.n=4",
        "model.d_model=8",
        "model.d_ff=8",
        "model.n_layers=1",
    ]
    args += [
        "model.n_heads=1",
        "model.max_len=4",
        "train.steps=20",
        "train.eval_every=10",
        "--out",
        str(out),
        "--quiet",
    ]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} >= {
        "config.yaml",
        "metrics.jsonl",
        "model.pt",
        "result.json",
    }
    res = runner.invoke(
        app, ["measure", str(out / "model.pt"), "--measure", "profile,param_norm", "--json"]
    )
    assert res.exit_code == 0, res.output
    m = json.loads(res.output.strip().splitlines()[-1])
    assert "model_as" in m and "param_norm" in m and m["target_as"] == 1.0


def test_tracked_measures_and_freeze_override():
    from learnability.config import apply_overrides

    data = apply_overrides(
        BASE,
        [
            "train.steps=20",
            "train.eval_every=10",
            "train.freeze=embeddings",
            "track=[param_norm]",
            "measure=[]",
        ],
        TrainJobConfig,
    )
    cfg = from_dict(TrainJobConfig, data)
    assert cfg.train.freeze == "embeddings"
    m = run_train(cfg)
    # the untrained model first (step 0), then every evaluation
    assert [row["step"] for row in m["history"]] == [0, 10, 20]
    assert all("param_norm" in row for row in m["history"])
    cfg2 = from_dict(
        TrainJobConfig, apply_overrides(BASE, ["train.freeze=[readout.*]"], TrainJobConfig)
    )
    assert cfg2.train.freeze == ["readout.*"]
