"""Circuit imitation: the rescaled target, distributions, exclusion of test rows, and memory-bounded
no-grad generation."""

from __future__ import annotations

import math
import resource

import pytest
import torch

from learnability.errors import UserError
from learnability.tasks import build_task
from learnability.tasks.algorithmic import row_hash
from learnability.tasks.circuit import CircuitConfig, build_target, kl_last

SMALL = CircuitConfig(target_width=16, vocab_size=32, seq_len=8, test_size=200, chunk=64)


def test_target_recipe_scales_weights():
    from learnability.models import GPTConfig, build_model

    plain = build_model(
        GPTConfig(vocab_size=32, max_len=8, n_layers=3, n_heads=2, d_model=16),
        seed=SMALL.target_seed,
    )
    target = build_target(SMALL)
    p, t = dict(plain.named_parameters()), dict(target.named_parameters())
    assert torch.allclose(t["layers.0.attn.in_proj.weight"], 10 * p["layers.0.attn.in_proj.weight"])
    assert torch.allclose(t["layers.2.mlp.proj.weight"], 20 * p["layers.2.mlp.proj.weight"])
    assert torch.allclose(t["unembedding.weight"], 100 / math.sqrt(16) * p["unembedding.weight"])
    assert torch.equal(t["layers.1.mlp.fc.weight"], p["layers.1.mlp.fc.weight"])
    assert not any(q.requires_grad for q in target.parameters())


def test_targets_are_distributions_and_test_rows_excluded():
    task = build_task(SMALL, data_seed=0)
    test = task.test_set()
    assert test.inputs.shape == (200, 8) and test.targets.shape == (200, 32)
    assert torch.allclose(test.targets.sum(1), torch.ones(200), atol=1e-5)
    assert not test.targets.requires_grad
    # the rescaled target is far from uniform
    assert test.targets.max(1).values.mean() > 3 / 32
    b = task.sample(300, torch.Generator().manual_seed(1))
    assert not set(row_hash(b.inputs).tolist()) & set(row_hash(test.inputs).tolist())
    # same target whatever the data seed
    other = build_task(SMALL, data_seed=5)
    assert torch.allclose(other.target_distribution(test.inputs[:10]), test.targets[:10])


def test_kl_last_matches_trainer_loss_and_is_zero_on_itself():
    from learnability.train import compute_loss

    task = build_task(SMALL, data_seed=0)
    b = task.test_set().slice(0, 50)
    logits = torch.randn(50, 8, 32)
    assert torch.allclose(
        kl_last(logits, b.targets).mean(), compute_loss("kl", logits, b), atol=1e-5
    )
    assert kl_last(b.targets.log(), b.targets).abs().max() < 1e-5


def test_generation_is_chunked_without_grad_and_memory_bounded():
    task = build_task(SMALL, data_seed=0)
    seen = []
    hook = task.target.register_forward_hook(
        lambda m, inp, out: seen.append((inp[0].shape[0], torch.is_grad_enabled()))
    )
    try:
        task.target_distribution(torch.randint(0, 32, (1000, 8)))
    finally:
        hook.remove()
    assert max(n for n, _ in seen) <= SMALL.chunk and not any(g for _, g in seen)
    # a width-128 target over 1,000 sequences of 32 tokens stays within a few hundred MB of extra RSS
    # (with autograd on and one pass, as published, activations of every layer would be kept)
    big = CircuitConfig(target_width=128, vocab_size=128, seq_len=32, test_size=1000, chunk=250)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    build_task(big, data_seed=0)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 300


def test_bad_config_raises():
    with pytest.raises(UserError, match="target_heads"):
        build_task(CircuitConfig(target_width=10, target_heads=3))
