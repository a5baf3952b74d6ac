"""The CUDA paths: every model, the train job with every measure, and the closed-form sparse-XOR step run
on a GPU and agree with the CPU. Skipped where no GPU is present (CI); run on a GPU machine with
`pytest tests/test_cuda.py`."""

from __future__ import annotations

import pytest
import torch

from learnability.config import from_dict
from learnability.jobs.train import TrainJobConfig, run_train
from learnability.measure import model_profile
from learnability.models import build_model

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

BOOLEAN = {
    "task": {"name": "boolean", "function": "majority", "n": 7, "mode": "online", "targets": "01"},
    "model": {
        "arch": "boolean_transformer",
        "n_layers": 2,
        "n_heads": 2,
        "d_model": 32,
        "d_ff": 32,
    },
    "train": {"steps": 300, "batch_size": 128, "lr": 1e-3, "eval_every": 100},
    "measure": [
        "accuracy",
        "profile",
        "blowup",
        "param_norm",
        "lipschitz",
        "sharpness",
        "sharpness_gauss",
    ],
}


def test_boolean_train_job_with_every_measure_on_cuda(tmp_path):
    metrics = run_train(from_dict(TrainJobConfig, BOOLEAN), tmp_path, device="cuda")
    assert metrics["status"] in ("finished", "converged")
    assert metrics["test_acc"] > 0.9  # MAJORITY on 7 bits is easy in 300 steps
    for key in ("model_as", "blowup_paper", "param_norm", "sharpness", "sharpness_gauss"):
        assert isinstance(metrics[key], float), key


def test_profile_of_the_same_weights_agrees_between_cpu_and_cuda():
    config = from_dict(TrainJobConfig, BOOLEAN).model
    cpu = build_model(config, seed=3, device="cpu")
    gpu = build_model(config, seed=3, device="cuda")
    gpu.load_state_dict(cpu.state_dict())
    a = model_profile(cpu, 7, "cpu")
    b = model_profile(gpu, 7, "cuda")
    assert a.counts == b.counts and a.average_sensitivity == pytest.approx(b.average_sensitivity)


@pytest.mark.parametrize(
    "task,model,freeze",
    [
        (
            {"name": "mod_add", "p": 13},
            {"arch": "gpt", "d_model": 32, "n_layers": 2, "n_heads": 4},
            "embeddings",
        ),
        ({"name": "needle"}, {"arch": "gpt", "d_model": 32, "n_layers": 2, "n_heads": 4}, "full"),
        ({"name": "parens"}, {"arch": "lstm", "d_model": 32, "vocab_size": 4}, "full"),
    ],
)
def test_token_tasks_train_on_cuda(tmp_path, task, model, freeze):
    config = from_dict(
        TrainJobConfig,
        {
            "task": task,
            "model": model,
            "train": {"steps": 20, "batch_size": 32, "freeze": freeze},
            "measure": ["accuracy"],
        },
    )
    metrics = run_train(config, tmp_path, device="cuda")
    assert metrics["status"] in ("finished", "converged") and 0.0 <= metrics["test_acc"] <= 1.0


def test_sparse_xor_population_step_agrees_between_cpu_and_cuda():
    from learnability.models.two_head import TwoHead, TwoHeadConfig, population_grad

    cfg = TwoHeadConfig(
        d=1024, m=16, attention="softmax", embedding_seed=0, init_seed=1, support_seed=2
    )
    grads = []
    for device in ("cpu", "cuda"):
        model = TwoHead(cfg, device=torch.device(device))
        p, q = model.support
        params = torch.stack([model.theta, model.theta_tilde]).detach()
        loss, grad = population_grad(model.V, params, "softmax", p, q)
        grads.append((float(loss), grad.cpu()))
    assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-10)
    assert torch.allclose(grads[0][1], grads[1][1], rtol=1e-8, atol=1e-12)


def test_sparse_xor_jobs_agree_between_cpu_and_cuda():
    # one step at every step size, population descent, and the finite-sample ladder (strings drawn on CPU)
    from learnability.jobs.sparse_xor import (
        ManyStepsConfig,
        OneStepConfig,
        SamplesConfig,
        many_steps,
        one_step,
        samples,
    )
    from learnability.models.two_head_steps import StepGrid

    for kind in ("softmax", "erf_norm"):
        cfg = OneStepConfig(d=2048, attention=kind, seed=3, grid=StepGrid(-2.0, 8.0, 4))
        cpu, gpu = one_step(cfg, "cpu"), one_step(cfg, "cuda")
        assert cpu["best_index"] == gpu["best_index"]
        assert cpu["loss"] == pytest.approx(gpu["loss"], rel=1e-8, abs=1e-12)
    cfg_many = ManyStepsConfig(d=256, seed=1, steps=20)
    assert (
        many_steps(cfg_many, "cpu")["first_success"]
        == many_steps(cfg_many, "cuda")["first_success"]
    )
    cfg_n = SamplesConfig(d=64, seed=2, n_grid=[2**k for k in range(5, 13)])
    rows = [samples(cfg_n, device)["rows"] for device in ("cpu", "cuda")]
    assert [(r["n"], r["index"]) for r in rows[0]] == [(r["n"], r["index"]) for r in rows[1]]
