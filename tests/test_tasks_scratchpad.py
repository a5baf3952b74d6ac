"""The autoregressive prefix-parity scratchpad: the teacher-forced layout, and decoding that feeds the
model's own outputs back (never the targets)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from learnability.measure.scratchpad import generate, scratchpad_accuracy
from learnability.tasks import build_task
from learnability.tasks.scratchpad import SEP, ScratchpadParityConfig, prefix_parities
from learnability.train import compute_loss


def test_teacher_forced_layout():
    task = build_task(ScratchpadParityConfig(n=4), data_seed=0)
    bits = torch.tensor([[1, 0, 1, 1]])
    b = task.make_batch(bits)
    # x, SEP, y_1..y_3 (the true prefix parities 1, 1, 0, 1)
    assert b.inputs.tolist() == [[1, 0, 1, 1, SEP, 1, 1, 0]]
    assert b.targets.tolist() == [[0, 0, 0, 0, 1, 1, 0, 1]]
    assert b.mask.tolist() == [[False] * 4 + [True] * 4]
    assert len(task.test_set()) == 16 and task.test_set().inputs.shape == (16, 8)
    # the loss counts the scored positions only
    out = torch.zeros(1, 8)
    out[0, :4] = 100.0  # wildly wrong on the unscored input positions
    out[0, 4:] = b.targets[0, 4:]
    assert compute_loss("mse", out, b).item() == pytest.approx(0.0)


class Stepper(nn.Module):
    """Computes y_t = (previous token) ⊕ x_t from its *input* at every scratchpad position, except that
    its first step is flipped. Under teacher forcing (the true y_{t−1} given) only step 1 is wrong; fed
    its own outputs, the flipped first step propagates to every later step."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.calls: list[torch.Tensor] = []

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        self.calls.append(tokens.clone())
        n, (b, t) = self.n, tokens.shape
        out = torch.zeros(b, t)
        for p in range(n, t):
            prev = torch.zeros(b, dtype=torch.int64) if p == n else tokens[:, p]
            y = prev ^ tokens[:, p - n]
            out[:, p] = (1 - y if p == n else y).float()
        return out


def test_decoding_feeds_back_the_models_own_outputs():
    n = 5
    bits = torch.randint(0, 2, (64, n), generator=torch.Generator().manual_seed(0))
    model = Stepper(n)
    pred = generate(model, bits)
    truth = prefix_parities(bits)
    # every decoded step is wrong: the wrong first output was fed back, not the target
    assert (pred != truth).all()
    # the model saw its own previous outputs after SEP, step by step
    assert len(model.calls) == n
    last = model.calls[-1]
    assert last.shape == (64, 2 * n) and (last[:, n] == SEP).all()
    assert torch.equal(last[:, n + 1 :], pred[:, :-1])
    assert not torch.equal(last[:, n + 1 :], truth[:, :-1])
    scores = scratchpad_accuracy(Stepper(n), bits)
    assert (
        scores["final_bit_acc"] == 0.0
        and scores["exact"] == 0.0
        and scores["per_step"] == [0.0] * n
    )
    # under teacher forcing the same model is right on every step but the first
    task = build_task(ScratchpadParityConfig(n=n), data_seed=0)
    batch = task.make_batch(bits)
    assert task.accuracy(Stepper(n)(batch.inputs), batch) == pytest.approx((n - 1) / n)


def test_a_correct_stepper_decodes_parity_exactly():
    class Exact(Stepper):
        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            n, (b, t) = self.n, tokens.shape
            out = torch.zeros(b, t)
            for p in range(n, t):
                prev = torch.zeros(b, dtype=torch.int64) if p == n else tokens[:, p]
                out[:, p] = (prev ^ tokens[:, p - n]).float()
            return out

    bits = torch.randint(0, 2, (32, 7), generator=torch.Generator().manual_seed(1))
    scores = scratchpad_accuracy(Exact(7), bits)
    assert scores["final_bit_acc"] == 1.0 and scores["exact"] == 1.0
    assert torch.equal(generate(Exact(7), bits)[:, -1], bits.sum(1) % 2)
