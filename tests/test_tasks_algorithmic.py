"""Algorithmic task generators against their formats: vocab bounds, lengths, masks, answers recomputed,
test/train disjointness, split sizes, and a tiny model learning a tiny modular addition."""

from __future__ import annotations

import pytest
import torch

from learnability.errors import UserError
from learnability.tasks import build_task
from learnability.tasks.algorithmic import (
    DecimalAddConfig,
    DecimalAddTask,
    MemoriseConfig,
    ModAddConfig,
    NeedleConfig,
    ParensConfig,
    ParensTask,
    row_hash,
)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _check_lm_layout(task, batch) -> None:
    """inputs / targets are one sequence shifted by one; tokens within the vocabulary."""
    assert batch.inputs.shape == batch.targets.shape == batch.mask.shape
    assert batch.inputs.shape[1] == task.seq_len
    assert batch.mask.dtype == torch.bool
    assert torch.equal(batch.inputs[:, 1:], batch.targets[:, :-1])
    assert int(batch.inputs.min()) >= 0 and int(batch.targets.max()) < task.vocab_size


def test_mod_add_split_sizes_and_answers():
    task = build_task(ModAddConfig(), data_seed=3)
    assert task.vocab_size == 199
    assert (len(task.train_pairs), len(task.test_pairs)) == (37_620, 1_981)
    assert not set(task.train_pairs.tolist()) & set(task.test_pairs.tolist())
    assert len(set(task.train_pairs.tolist()) | set(task.test_pairs.tolist())) == 199**2
    b = task.test_set()
    _check_lm_layout(task, b)
    a, bb, c = b.inputs[:, 0], b.inputs[:, 1], b.targets[:, 1]
    assert torch.equal(c, (a + bb) % 199)
    assert b.mask[:, 1].all() and not b.mask[:, 0].any()
    # the split follows the data seed, and only it
    assert torch.equal(build_task(ModAddConfig(), data_seed=3).test_pairs, task.test_pairs)
    assert not torch.equal(build_task(ModAddConfig(), data_seed=4).test_pairs, task.test_pairs)
    train_codes = set(task.train_pairs.tolist())
    s = task.sample(500, _gen())
    assert {int(x) * 199 + int(y) for x, y in s.inputs.tolist()} <= train_codes


@pytest.mark.parametrize("k", [30, 2])
def test_needle_format(k):
    """The published format at every k: markers are the k ids 128..128+k-1, the query is marker + k."""
    task = build_task(NeedleConfig(max_pairs=k, test_size=100 if k == 2 else 300), data_seed=1)
    assert (task.vocab_size, task.seq_len) == (256, 2 * k + 2)
    b = task.sample(400, _gen(2))
    _check_lm_layout(task, b)
    assert (b.mask.sum(1) == 1).all()
    full = torch.cat([b.inputs, b.targets[:, -1:]], 1)
    seen = set()
    for row, mask in zip(full.tolist(), b.mask.tolist()):
        q = mask.index(True)  # the query position
        m = q // 2
        markers, values = row[0:q:2], row[1:q:2]
        assert 1 <= m <= k and len(set(markers)) == m
        assert all(128 <= t < 128 + k for t in markers) and all(1 <= v <= 127 for v in values)
        query = row[q]
        assert 128 + k <= query < 128 + 2 * k
        assert row[q + 1] == values[markers.index(query - k)]
        assert all(t == 0 for t in row[q + 2 :])
        seen.update(markers)
    assert seen == set(range(128, 128 + k))


def test_decimal_add_answers_and_scored_digits():
    task = build_task(DecimalAddConfig(test_size=200), data_seed=0)
    assert (task.vocab_size, task.seq_len) == (31, 33)
    b = task.sample(300, _gen(5))
    _check_lm_layout(task, b)
    full = torch.cat([b.inputs[:, :1], b.targets], 1)
    for row, mask in zip(full.tolist(), b.mask.tolist()):
        a = sum(d * 10**i for i, d in enumerate(row[:10]))
        c = sum(d * 10**i for i, d in enumerate(row[11:21]))
        assert row[10] == 10 and row[21] == 11
        assert 10**9 <= a < 10**10 and 10**9 <= c < 10**10
        assert DecimalAddTask.decode_answer(torch.tensor(row)) == a + c
        n = len(str(a + c))
        # scored: the first answer digit (predicted at '='), every other answer digit, the stop token and
        # (as published) the padding after a short sum's stop
        scored = [i + 1 for i, m in enumerate(mask) if m]
        assert scored == list(range(22, min(22 + n + 2, 34)))
        assert row[22 + n] == 30


def test_parens_format_and_balance_rate():
    task = build_task(ParensConfig(test_size=2000, split="hash"), data_seed=0)
    assert (task.vocab_size, task.seq_len) == (4, 62)
    b = task.test_set()
    _check_lm_layout(task, b)
    assert (b.mask.sum(1) == 1).all()
    full = torch.cat([b.inputs[:, :1], b.targets], 1)
    for row, mask in zip(full.tolist()[:500], b.mask.tolist()):
        q = mask.index(True) + 1
        s = row[: q - 1]
        assert row[q - 1] == 3 and 1 <= len(s) <= 60 and set(s) <= {1, 2}
        assert row[q] == (2 if ParensTask.is_balanced(s) else 1)
    balanced = (b.targets[b.mask] == 2).float().mean().item()
    assert 0.47 < balanced < 0.57  # the published generator gives about 52%


def test_memorise_table():
    task = build_task(MemoriseConfig(n_keys=16, n_values=8), data_seed=2)
    b = task.train_set()
    _check_lm_layout(task, b)
    assert len(b) == 256 and torch.equal(task.test_set().inputs, b.inputs)
    assert int(b.targets[:, 1].max()) < 8
    again = build_task(MemoriseConfig(n_keys=16, n_values=8), data_seed=2)
    assert torch.equal(again.values, task.values)


@pytest.mark.parametrize(
    "config",
    [
        NeedleConfig(max_pairs=2, test_size=100),
        ParensConfig(max_pairs=2, test_size=20, max_rejection=None),
        ParensConfig(max_pairs=6, test_size=200, split="hash"),
        DecimalAddConfig(digits=2, test_size=200, split="hash"),
    ],
)
def test_streamed_training_batches_exclude_test(config):
    task = build_task(config, data_seed=0)
    test = set(
        row_hash(torch.cat([task.test_set().inputs, task.test_set().targets[:, -1:]], 1)).tolist()
    )
    g = _gen(1)
    for _ in range(5):
        b = task.sample(200, g)
        rows = row_hash(torch.cat([b.inputs, b.targets[:, -1:]], 1)).tolist()
        assert not test & set(rows)


def test_hash_partition_is_disjoint_fixed_and_reports_its_rejection_rate():
    config = ParensConfig(max_pairs=6, test_size=300, split="hash", hash_test_fraction=0.05)
    task = build_task(config, data_seed=0)
    test = torch.cat([task.test_set().inputs, task.test_set().targets[:, -1:]], 1)
    assert task.held_out(test).all()  # every test row is on the held-out side
    # a large sample of the generator: rows on either side are disjoint sets of strings
    full, _ = task.generate(20_000, _gen(5))
    side = task.held_out(full)
    held = set(row_hash(full[side]).tolist())
    kept = set(row_hash(full[~side]).tolist())
    assert held and kept and not held & kept
    assert set(row_hash(test).tolist()) <= held | set(row_hash(test).tolist()) - kept
    assert not set(row_hash(test).tolist()) & kept
    # the rejection rate is the held-out share of the generator's draws, and it is reported
    assert abs(task.rejection_rate - side.float().mean().item()) < 0.01
    assert 0.0 < task.rejection_rate <= 0.10
    assert task.test_distinct == len(set(row_hash(test).tolist()))
    # the partition is a property of the strings, not of the data seed
    other = build_task(config, data_seed=9)
    assert torch.equal(other.held_out(full), side)
    # training batches never contain a held-out string; fresh draws are the unrestricted generator
    b = task.sample(500, _gen(1))
    assert not task.held_out(torch.cat([b.inputs, b.targets[:, -1:]], 1)).any()
    fresh = task.fresh_set(2000, seed=3)
    share = task.held_out(torch.cat([fresh.inputs, fresh.targets[:, -1:]], 1)).float().mean().item()
    assert abs(share - task.rejection_rate) < 0.03


def test_exclusion_in_a_small_space_fails_loudly_above_the_rejection_limit():
    # the published exclusion at 12 symbols: most of the stream equals some test row
    with pytest.raises(UserError, match="fall in the test set"):
        build_task(ParensConfig(max_pairs=6, test_size=500), data_seed=0)
    task = build_task(ParensConfig(max_pairs=6, test_size=500, max_rejection=None), data_seed=0)
    assert task.rejection_rate > 0.5 and task.test_distinct < 300


def test_decimal_published_mask_skips_the_first_digit_and_scores_after_the_stop():
    task = build_task(DecimalAddConfig(digits=2, test_size=10, split="hash"), data_seed=0)
    full, mask = task.generate(200, _gen(3))
    published = DecimalAddTask.published_mask(full)
    first = 2 * 2 + 1  # output position at `=`, predicting the first answer digit
    assert mask[:, first].all() and not published[:, first].any()
    # the trained positions are the published ones plus the first digit; the published ones score the
    # pad after a short sum's stop
    short = full[:, -1] == DecimalAddTask.PAD  # a 2-digit sum: stop, then one pad
    assert published[short, -1].all() and (full[short, -1] == DecimalAddTask.PAD).all()
    assert published[~short, -1].all() and (full[~short, -1] == DecimalAddTask.STOP).all()
    assert torch.equal(
        mask & ~published, torch.zeros_like(mask).index_fill_(1, torch.tensor([first]), True)
    )
    assert not (published & ~mask).any()


def test_memorise_published_format_offsets_y():
    task = build_task(MemoriseConfig(n_keys=16, n_values=16, offset_y=True), data_seed=0)
    b = task.train_set()
    assert task.vocab_size == 32
    assert int(b.inputs[:, 0].max()) < 16 and int(b.inputs[:, 1].min()) >= 16
    assert int(b.targets[:, 1].max()) < 16  # values share ids with x, as published
    plain = build_task(MemoriseConfig(n_keys=16, n_values=16), data_seed=0)
    assert torch.equal(plain.values, task.values) and plain.vocab_size == 16


def test_fixed_test_set_depends_on_data_seed_only():
    a = build_task(DecimalAddConfig(digits=4, test_size=50), data_seed=7).test_set()
    b = build_task(DecimalAddConfig(digits=4, test_size=50), data_seed=7).test_set()
    c = build_task(DecimalAddConfig(digits=4, test_size=50), data_seed=8).test_set()
    assert torch.equal(a.inputs, b.inputs) and not torch.equal(a.inputs, c.inputs)


def test_bad_configs_raise_user_errors():
    with pytest.raises(UserError, match="max_pairs"):
        build_task(NeedleConfig(max_pairs=31))
    with pytest.raises(UserError, match="train_fraction"):
        build_task(ModAddConfig(train_fraction=1.5))
    with pytest.raises(UserError, match="digits"):
        build_task(DecimalAddConfig(digits=0))


def test_tiny_model_learns_tiny_modular_addition():
    from learnability.models import GPTConfig, build_model
    from learnability.train import TrainConfig, Trainer

    task = build_task(ModAddConfig(p=7, train_fraction=0.9), data_seed=0)
    model = build_model(
        GPTConfig(vocab_size=7, max_len=2, n_layers=1, n_heads=2, d_model=32), seed=0
    )
    config = TrainConfig(steps=250, batch_size=64, lr=1e-2, weight_decay=0.0, eval_every=250)
    Trainer(model, task, config).fit(data_seed=0)
    model.eval()
    with torch.no_grad():
        train = task.train_set()
        acc = task.accuracy(model(train.inputs), train)
    assert acc == 1.0  # 44 training pairs, memorised or computed: every answer right


@pytest.mark.parametrize(
    "config",
    [
        ModAddConfig(p=7),
        MemoriseConfig(n_keys=6, n_values=5),
        NeedleConfig(max_pairs=4, test_size=64),
        DecimalAddConfig(digits=3, test_size=64),
    ],
)
def test_scored_positions_hold_every_scored_output(config):
    # a task's declared positions must cover every mask it makes: the trainer reads only those outputs
    task = build_task(config, 3)
    positions = task.scored_positions()
    assert positions is not None and len(positions) < task.seq_len
    batch = task.sample(512, torch.Generator().manual_seed(1))
    outside = torch.ones(task.seq_len, dtype=torch.bool)
    outside[list(positions)] = False
    assert not batch.mask[:, outside].any()
    assert batch.mask[:, list(positions)].any(0).all()  # and each is scored by some string
    sub = batch.at(torch.tensor(positions))
    assert sub.mask.sum() == batch.mask.sum() and sub.targets.shape == sub.mask.shape
