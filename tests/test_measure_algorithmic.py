"""Diagnostics of algorithmic-task predictions on hand-made predictions: decimal scored the published way and
the full way, per digit and as whole sums; needle accuracy by m and its copy baseline; the majority line."""

from __future__ import annotations

import pytest
import torch

from learnability.measure.algorithmic import (
    blind_rate,
    blind_table,
    decimal_scores,
    majority_rate,
    needle_by_m,
)
from learnability.tasks import build_task
from learnability.tasks.algorithmic import DecimalAddConfig, DecimalAddTask, NeedleConfig, lm_batch
from learnability.tasks.base import Batch


def _decimal_batch() -> Batch:
    """Two hand-written 2-digit sums: 12 + 34 = 46 (two answer digits) and 57 + 68 = 125 (three)."""
    rows = []
    for a, b in ((12, 34), (57, 68)):
        s = a + b
        digits = [int(c) for c in str(s)[::-1]]
        row = [int(c) for c in str(a)[::-1]] + [10] + [int(c) for c in str(b)[::-1]] + [11]
        row += [20 + d for d in digits] + [30]
        row += [12] * (10 - len(row))
        rows.append(row)
    full = torch.tensor(rows)
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[0, 5:8] = True  # digits 1, 2 and the stop of 46
    mask[1, 5:9] = True  # digits 1, 2, 3 and the stop of 125
    return lm_batch(full, mask)


def test_decimal_scoring_both_ways_on_hand_made_predictions():
    batch = _decimal_batch()
    task = build_task(DecimalAddConfig(digits=2, test_size=4), data_seed=0)
    full, _ = task.generate(1, torch.Generator().manual_seed(0))
    assert full.shape[1] == 10  # the hand-made rows have the task's layout
    perfect = batch.targets.clone()
    s = decimal_scores(perfect, batch, digits=2)
    assert s["acc_published"] == s["acc_full"] == s["exact_match"] == s["stop_acc"] == 1.0
    assert s["digit_acc"] == [1.0, 1.0, 1.0]
    # wrong first answer digit everywhere: the published scoring never sees it
    wrong_first = perfect.clone()
    wrong_first[:, 5] = 29
    s = decimal_scores(wrong_first, batch, digits=2)
    assert s["acc_published"] == 1.0
    assert s["acc_full"] == pytest.approx(5 / 7)  # 7 scored positions, 2 wrong
    assert s["digit_acc"] == [0.0, 1.0, 1.0] and s["exact_match"] == 0.0
    # a wrong padding token after the stop of the short sum: only the published scoring counts it
    wrong_pad = perfect.clone()
    wrong_pad[0, 8] = 5
    s = decimal_scores(wrong_pad, batch, digits=2)
    published_positions = int(
        DecimalAddTask.published_mask(torch.cat([batch.inputs, batch.targets[:, -1:]], 1)).sum()
    )
    assert published_positions == 6  # (digit 2, stop, pad) + (digits 2, 3, stop)
    assert (
        s["acc_published"] == pytest.approx(5 / 6)
        and s["acc_full"] == 1.0
        and s["exact_match"] == 1.0
    )
    # the third digit exists only in the second row
    wrong_third = perfect.clone()
    wrong_third[1, 7] = 20
    s = decimal_scores(wrong_third, batch, digits=2)
    assert s["digit_acc"] == [1.0, 1.0, 0.0] and s["exact_match"] == 0.5


def test_needle_accuracy_by_m_and_copy_baseline():
    task = build_task(NeedleConfig(max_pairs=3, test_size=300), data_seed=0)
    test = task.test_set()
    pred = test.targets.clone()
    m = test.mask.float().argmax(1) // 2
    pred[m == 2] = 0  # every row with two pairs wrong
    out = needle_by_m(pred, test)
    assert (
        out["acc_by_m"]["1"] == 1.0 and out["acc_by_m"]["2"] == 0.0 and out["acc_by_m"]["3"] == 1.0
    )
    assert sum(out["count_by_m"].values()) == 300
    assert out["copy_baseline"] == pytest.approx(float((1.0 / m.float()).mean()))
    assert 1 / 3 < out["copy_baseline"] < 1.0


def test_majority_rate():
    batch = Batch(
        torch.zeros(4, 2, dtype=torch.long),
        torch.tensor([[0, 1], [0, 1], [0, 2], [0, 1]]),
        torch.tensor([[False, True]] * 4),
    )
    assert majority_rate(batch) == 0.75


def test_blind_predictor_knows_the_format_not_the_sum():
    task = build_task(DecimalAddConfig(digits=2, test_size=4), data_seed=0)
    rows = task.fresh_set(16384, seed=1)
    table = blind_table(rows, 31)
    # after the stop comes padding and after a carry digit the stop: read off the current token, always right
    after_stop = (rows.inputs == DecimalAddTask.STOP) & rows.mask
    assert after_stop.any() and blind_rate(table, rows, after_stop) == 1.0
    # the first answer digit (predicted at `=`) is the last digit of a + b: no better than its most common value
    first = torch.zeros_like(rows.mask)
    first[:, 5] = True
    digit0 = rows.targets[:, 5]
    assert blind_rate(table, rows, first) == pytest.approx(
        float(torch.bincount(digit0).max()) / len(digit0)
    )
    assert blind_rate(table, rows, first) < 0.15
    # published scoring: a predictor that never reads the addends scores far above 0.1 per digit (issue 21)
    full = torch.cat([rows.inputs, rows.targets[:, -1:]], 1)
    published = DecimalAddTask.published_mask(full)
    assert 0.55 < blind_rate(blind_table(rows, 31, published), rows, published) < 0.7


def test_blind_predictor_of_modular_addition_is_one_over_p():
    p = 29
    a, b = (x.reshape(-1) for x in torch.meshgrid(torch.arange(p), torch.arange(p), indexing="ij"))
    full = torch.stack([a, b, (a + b) % p], 1)
    mask = torch.tensor([[False, True]]).expand(p * p, 2)
    rows = lm_batch(full, mask)
    assert blind_rate(blind_table(rows, p), rows) == pytest.approx(
        1 / p
    )  # every answer once per b: ties


def test_blind_predictor_fitted_elsewhere_does_not_overfit_the_rows():
    """Needle at k = 30: 900 (position, query) cells. Scored on the rows it was fitted on, the per-cell maxima
    overfit (≈ 0.14); fitted on other draws it scores about 1/127, a value's chance."""
    task = build_task(NeedleConfig(max_pairs=30, test_size=100), data_seed=0)
    fit, rows = task.fresh_set(8192, seed=1), task.fresh_set(4096, seed=2)
    assert blind_rate(blind_table(rows, 256), rows) > 0.1
    assert blind_rate(blind_table(fit, 256), rows) < 0.03
