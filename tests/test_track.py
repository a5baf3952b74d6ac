"""`track`: measures taken on the untrained model (step 0) and at every evaluation, without changing
the training itself."""

from __future__ import annotations

import pytest

from learnability.config import from_dict
from learnability.jobs.train import TrainJobConfig, run_train
from learnability.measure.norms import parameter_norm
from learnability.tasks import build_task
from learnability.train import evaluate, seeded_model

BASE = {
    "task": {"function": "parity", "n": 4},
    "model": {"n_layers": 1, "d_model": 8, "d_ff": 8},
    "train": {"steps": 20, "eval_every": 10, "lr": 1e-2},
    "save_model": False,
}


def _run(**extra):
    config = from_dict(TrainJobConfig, {**BASE, **extra})
    logged: list[tuple[int, dict]] = []
    metrics = run_train(config, log=lambda step, row: logged.append((step, row)))
    return config, metrics, logged


def test_track_records_the_untrained_model_at_step_0_then_every_evaluation():
    config, metrics, logged = _run(track=["param_norm"])
    history = metrics["history"]
    assert [row["step"] for row in history] == [0, 10, 20]
    untrained = seeded_model(config.model, config.seed)
    task = build_task(config.task, data_seed=config.data_seed)
    first = evaluate(untrained, task, task.test_set())
    assert history[0]["test_loss"] == pytest.approx(first["loss"], rel=1e-6)
    assert history[0]["param_norm"] == pytest.approx(parameter_norm(untrained), rel=1e-12)
    assert "loss" not in history[0]  # no training batch has been seen at step 0
    assert {"loss", "acc", "lr", "test_loss", "test_acc", "param_norm"} <= set(history[1])
    assert [step for step, _ in logged] == [0, 10, 20]  # the metrics log gets the same rows


def test_tracking_does_not_change_the_training():
    _, tracked, _ = _run(track=["param_norm", "sharpness"])
    _, plain, _ = _run(keep_history=True)
    assert [r["step"] for r in plain["history"]] == [10, 20]  # keep_history: no step 0
    for a, b in zip(tracked["history"][1:], plain["history"]):
        assert a["test_loss"] == b["test_loss"] and a["loss"] == b["loss"]  # bit-identical
    assert tracked["test_loss"] == plain["test_loss"]
