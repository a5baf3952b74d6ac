"""The training engine: freeze specs, determinism, divergence, learning, checkpoint / resume."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from learnability.errors import UserError
from learnability.models import BooleanTransformerConfig
from learnability.tasks import build_task
from learnability.tasks.base import Batch
from learnability.tasks.boolean import BooleanTaskConfig
from learnability.train import (
    TrainConfig,
    Trainer,
    compute_loss,
    lr_factor,
    seeded_model,
    trainable_names,
)

TINY = BooleanTransformerConfig(n_layers=1, n_heads=1, d_model=16, d_ff=16, max_len=5)


def params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def fit(model, task, data_seed=0, **kw):
    cfg = TrainConfig(**{"steps": 20, "batch_size": 32, "lr": 3e-3, "eval_every": 10, **kw})
    return Trainer(model, task, cfg).fit(data_seed=data_seed)


@pytest.fixture(scope="module")
def parity5():
    return build_task(BooleanTaskConfig(function="parity", n=5))


def test_embedding_only_training_changes_only_embeddings(parity5):
    model = seeded_model(TINY, 0)
    before = params(model)
    fit(model, parity5, freeze="embeddings", weight_decay=0.1)
    allowed = {
        "token_embedding.weight",
        "position_embedding.weight",
        "readout.weight",
        "readout.bias",
    }
    assert set(trainable_names(model, "embeddings")) == allowed
    for name, p in model.named_parameters():
        if name in allowed:
            assert not torch.equal(p, before[name]), name
        else:
            assert torch.equal(p, before[name]), name  # bit-identical: no update, no weight decay
    # frozen parameters cost nothing: no gradient is computed for them, no optimiser state kept
    trainer = Trainer(model, parity5, TrainConfig(steps=2, batch_size=16, freeze="embeddings"))
    trainer.fit()
    frozen = [p for n, p in model.named_parameters() if n not in allowed]
    assert all(p.grad is None and not p.requires_grad for p in frozen)
    assert {id(p) for p in trainer.optimizer.state} == {id(p) for p in trainer.params}
    assert len(trainer.params) == len(allowed)


def test_glob_freeze_spec(parity5):
    model = seeded_model(TINY, 0)
    before = params(model)
    fit(model, parity5, freeze=["layers.*.attn.*"])
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all(n.startswith("layers.0.attn.") for n in changed)


def test_freeze_spec_errors(parity5):
    model = seeded_model(TINY, 0)
    with pytest.raises(UserError, match="matches no parameter"):
        trainable_names(model, ["layers.*.attention.*"])
    with pytest.raises(UserError, match="freeze spec"):
        trainable_names(model, "embedding")
    with pytest.raises(UserError):
        trainable_names(model, [])

    class NoEmbeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(5, 1)])

    with pytest.raises(UserError, match="nothing to train"):
        trainable_names(NoEmbeddings(), "embeddings")


def test_determinism_and_separate_data_seed(parity5):
    a, b, c = seeded_model(TINY, 1), seeded_model(TINY, 1), seeded_model(TINY, 1)
    fit(a, parity5, data_seed=0)
    fit(b, parity5, data_seed=0)
    fit(c, parity5, data_seed=1)
    pa, pb, pc = params(a), params(b), params(c)
    assert all(torch.equal(pa[n], pb[n]) for n in pa)
    assert any(not torch.equal(pa[n], pc[n]) for n in pa)
    d = seeded_model(TINY, 2)
    assert any(not torch.equal(params(seeded_model(TINY, 1))[n], params(d)[n]) for n in pa)


def test_diverging_run_is_recorded_not_raised(parity5):
    model = seeded_model(TINY, 0)
    r = fit(model, parity5, steps=200, optimizer="sgd", lr=1e12, weight_decay=0.0)
    assert r.status == "diverged"
    assert r.steps < 200
    assert not math.isfinite(r.history[-1]["loss"])


@pytest.mark.parametrize("function", ["first", "majority"])
def test_tiny_model_learns(function):
    task = build_task(BooleanTaskConfig(function=function, n=5))
    model = seeded_model(TINY, 0)
    r = fit(
        model, task, steps=600, batch_size=64, weight_decay=0.0, eval_every=25, converge_acc=1.0
    )
    assert r.status == "converged", r.final
    assert r.final["test_acc"] == 1.0 and r.converged_step is not None


def test_checkpoint_resume_equals_uninterrupted(parity5, tmp_path):
    kw = dict(eval_every=10, schedule="warmup_cosine", warmup_steps=5)
    straight = seeded_model(TINY, 3)
    r_straight = fit(straight, parity5, steps=40, **kw)

    class Interrupt(Exception):
        pass

    def stop_at_30(step, metrics):
        if step == 30:
            raise Interrupt

    path = tmp_path / "trainer.pt"
    cfg = TrainConfig(
        steps=40, batch_size=32, lr=3e-3, checkpoint_every=20, checkpoint_path=str(path), **kw
    )
    with pytest.raises(Interrupt):
        Trainer(seeded_model(TINY, 3), parity5, cfg, metrics_log=stop_at_30).fit(data_seed=0)
    cfg.resume = True
    resumed_model = seeded_model(TINY, 3)
    r = Trainer(resumed_model, parity5, cfg).fit(data_seed=0)
    assert r.steps == 40
    ps, pr = params(straight), params(resumed_model)
    assert all(torch.equal(ps[n], pr[n]) for n in ps)
    assert [h["step"] for h in r.history] == [h["step"] for h in r_straight.history]


def test_resume_from_another_model_is_user_error(parity5, tmp_path):
    path = tmp_path / "t.pt"
    fit(seeded_model(TINY, 0), parity5, steps=5, checkpoint_path=str(path))
    other = BooleanTransformerConfig(n_layers=1, n_heads=1, d_model=8, d_ff=8, max_len=5)
    cfg = TrainConfig(steps=10, batch_size=8, checkpoint_path=str(path), resume=True)
    with pytest.raises(UserError, match="another model"):
        Trainer(seeded_model(other, 0), parity5, cfg).fit()


def test_losses_and_schedule():
    out = torch.tensor([0.0, 1.0])
    b = Batch(torch.zeros(2, 3, dtype=torch.long), torch.tensor([1.0, 1.0]))
    assert compute_loss("mse", out, b).item() == pytest.approx(0.5)
    logits = torch.zeros(1, 3, 4)
    logits[0, 2, 1] = 100.0
    tb = Batch(
        torch.zeros(1, 3, dtype=torch.long),
        torch.tensor([[0, 0, 1]]),
        torch.tensor([[False, False, True]]),
    )
    assert compute_loss("ce", logits, tb).item() == pytest.approx(
        0.0, abs=1e-6
    )  # only position 2 is scored
    p = torch.tensor([[0.25, 0.75]])
    kl_batch = Batch(torch.zeros(1, 2, dtype=torch.long), p)
    assert compute_loss("kl", p.log().unsqueeze(1), kl_batch).item() == pytest.approx(0.0, abs=1e-6)
    cfg = TrainConfig(steps=100, schedule="warmup_cosine", warmup_steps=10)
    assert lr_factor(cfg, 0) == pytest.approx(0.1) and lr_factor(cfg, 9) == pytest.approx(1.0)
    assert lr_factor(cfg, 99) < 0.01


def test_bad_train_config(parity5):
    with pytest.raises(UserError):
        Trainer(seeded_model(TINY, 0), parity5, TrainConfig(optimizer="adam"))
    with pytest.raises(UserError):
        Trainer(seeded_model(TINY, 0), parity5, TrainConfig(steps=-1))


def test_scratchpad_trains_with_per_position_readout():
    task = build_task(BooleanTaskConfig(function="parity", n=5, scratchpad=True))
    cfg = BooleanTransformerConfig(
        n_layers=1, n_heads=1, d_model=16, d_ff=16, max_len=5, readout="all", causal=True
    )
    r = fit(seeded_model(cfg, 0), task, steps=20)
    assert (
        r.status == "finished"
        and math.isfinite(r.final["test_loss"])
        and 0 <= r.final["test_acc"] <= 1
    )
