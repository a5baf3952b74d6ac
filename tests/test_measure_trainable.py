"""The measures over trainable parameters, the corrected Lipschitz constant and the bound measures,
checked against closed forms and invariants (and the old names keep their meaning)."""

from __future__ import annotations

import math

import pytest
import torch

from learnability.config import _hashed, config_hash, from_dict
from learnability.jobs.train import TrainJobConfig, run_train
from learnability.measure.bounds import bound_radius, lipschitz_scaled
from learnability.measure.norms import lipschitz_constant, parameter_norm
from learnability.measure.registry import MEASURES, run_measures
from learnability.tasks import build_task
from learnability.train import Trainer, seeded_model

SMALL = {"n_layers": 2, "d_model": 8, "d_ff": 8, "max_len": 5}


def _config(**extra):
    data = {
        "task": {"function": "parity", "n": 5},
        "model": SMALL,
        "train": {"steps": 30, "lr": 1e-2},
        "save_model": False,
    }
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return from_dict(TrainJobConfig, data)


def _trained(config):
    task = build_task(config.task, data_seed=config.data_seed)
    model = seeded_model(config.model, config.seed)
    Trainer(model, task, config.train).fit(config.data_seed)
    return model, task


def _sq(model, prefixes):
    return sum(
        float(p.detach().double().pow(2).sum())
        for n, p in model.named_parameters()
        if n.startswith(prefixes)
    )


def test_new_names_are_registered_and_old_ones_kept():
    new = {"param_norm_trainable", "sharpness_trainable", "sharpness_gauss_trainable"}
    new |= {"lipschitz_scaled", "real_sensitivity", "sharpness_bound"}
    assert new <= set(MEASURES)
    assert {"param_norm", "lipschitz", "sharpness", "sharpness_gauss"} <= set(MEASURES)


def test_param_norm_trainable_under_full_training_is_param_norm_and_tracks_the_change():
    config = _config()
    model, task = _trained(config)
    m = run_measures(model, task, config, ["param_norm", "param_norm_trainable"], "cpu")
    assert m["param_norm_trainable"] == pytest.approx(m["param_norm"], rel=1e-12)
    initial = seeded_model(config.model, config.seed)
    assert m["param_norm_trainable_init"] == pytest.approx(parameter_norm(initial), rel=1e-12)
    skip = {"position_embedding.weight"}
    moved = math.sqrt(
        sum(
            float((p.detach().double() - q.detach().double()).pow(2).sum())
            for (n, p), (_, q) in zip(model.named_parameters(), initial.named_parameters())
            if n not in skip
        )
    )
    assert moved > 0
    assert m["param_distance_trainable"] == pytest.approx(moved, rel=1e-12)
    assert m["param_distance_trainable_relative"] == pytest.approx(
        moved / m["param_norm_trainable_init"], rel=1e-12
    )
    assert m["param_norm_trainable_ratio"] == pytest.approx(
        m["param_norm_trainable"] / m["param_norm_trainable_init"], rel=1e-12
    )


def test_param_norm_trainable_counts_only_what_the_freeze_spec_trains():
    config = _config(train={"freeze": "embeddings"})
    model, task = _trained(config)
    m = run_measures(model, task, config, ["param_norm", "param_norm_trainable"], "cpu")
    # embeddings preset: token embedding and readout train (positional ones are left out, as always)
    expected = math.sqrt(_sq(model, ("token_embedding.", "readout.")))
    assert m["param_norm_trainable"] == pytest.approx(expected, rel=1e-12)
    assert m["param_norm"] > 2 * m["param_norm_trainable"]  # the generic norm counts frozen layers
    # the frozen layers did not move, so the whole change is in the trained ones
    initial = seeded_model(config.model, config.seed)
    for (n, p), (_, q) in zip(model.named_parameters(), initial.named_parameters()):
        if n.startswith("layers."):
            assert torch.equal(p, q)
    untrained = run_measures(initial, task, config, ["param_norm_trainable"], "cpu")
    assert untrained["param_distance_trainable"] == 0.0
    assert untrained["param_norm_trainable_ratio"] == 1.0


def test_sharpness_trainable_is_sharpness_under_full_training():
    config = _config()
    model, task = _trained(config)
    m = run_measures(model, task, config, ["sharpness", "sharpness_trainable"], "cpu")
    assert m["sharpness_trainable"] == m["sharpness"]  # same directions, same parameters


def test_sharpness_trainable_perturbs_only_the_readout_of_a_frozen_mlp():
    # MLP with only its readout trained: the output is linear in (w, b), so for Δ uniform on the
    # sphere of radius ρ in those P = width + 1 coordinates E_Δ (Δ·(h, 1))² = ρ² (‖h‖² + 1) / P.
    width = 6
    config = from_dict(
        TrainJobConfig,
        {
            "task": {"function": "parity", "n": 4, "test_size": 16},
            "model": {"arch": "mlp", "n_inputs": 4, "width": width, "depth": 1},
            "train": {"freeze": ["readout.*"], "steps": 1},
            "sharpness_rho": 0.3,
            "sharpness_directions": 3000,
        },
    )
    model = seeded_model(config.model, config.seed)
    task = build_task(config.task)
    with torch.no_grad():
        x = task.test_set().inputs
        h = torch.relu(model.layers[0](2 * x.float() - 1))  # MLP inputs in ±1 (its default)
    expected = float(0.3**2 * ((h.double().pow(2).sum(1) + 1) / (width + 1)).mean())
    m = run_measures(model, task, config, ["sharpness_trainable"], "cpu")
    assert m["sharpness_trainable_ci_low"] <= expected <= m["sharpness_trainable_ci_high"]
    assert m["sharpness_trainable"] == pytest.approx(expected, rel=0.08)


def test_lipschitz_scaled_is_the_corrected_constant_and_lipschitz_the_old_one():
    config = _config(model={"d_model": 16, "n_heads": 4, "max_len": 5})
    model, task = _trained(config)
    m = run_measures(model, task, config, ["lipschitz", "lipschitz_scaled"], "cpu")
    assert m["log10_lipschitz_scaled"] == lipschitz_scaled(model)["log10_C"]
    assert m["log_lipschitz_scaled"] == lipschitz_scaled(model)["log_C"]
    assert m["log10_lipschitz"] == lipschitz_constant(model)["log10_C"]
    # the uncorrected constant leaves out the 1/√d_h scaling: its exponent is larger
    assert m["log10_lipschitz"] > m["log10_lipschitz_scaled"]


def _exact_two_head(n=4, p=0, q=2):
    """A linear-attention two-head model with a = e_p, b = e_q exactly: f(x) = −x_p x_q."""
    config = from_dict(
        TrainJobConfig,
        {
            "task": {"function": f"x{p} ^ x{q}", "n": n, "targets": "pm1"},
            "model": {"arch": "two_head", "d": n, "m": 8, "attention": "linear"},
            "sharpness_directions": 8,
        },
    )
    model = seeded_model(config.model, config.seed)
    pinv = torch.linalg.pinv(model.V)  # V is n × m of rank n: V · pinv(V) = I
    with torch.no_grad():
        model.theta.copy_(pinv[:, p])
        model.theta_tilde.copy_(pinv[:, q])
    return config, model, build_task(config.task)


def test_real_sensitivity_of_an_exact_two_parity_model_is_two():
    config, model, task = _exact_two_head()
    m = run_measures(model, task, config, ["accuracy", "real_sensitivity"], "cpu")
    assert m["test_acc"] == 1.0
    # T = −x_0 x_2 in ±1: flipping bit 0 or 2 changes T by 2, so as(T) = ¼ · 2 · 2² = 2
    assert m["model_as_real"] == pytest.approx(2.0, rel=1e-9) and m["model_as_real_exact"]
    assert m["bound_level"] == pytest.approx(2.0 / (2 * 4), rel=1e-9)


def test_sharpness_bound_reports_the_profile_and_its_crossing():
    config, model, task = _exact_two_head()
    m = run_measures(model, task, config, ["sharpness_bound"], "cpu")
    rho0 = config.sharpness_eps * math.sqrt(2 * 8)  # P = 2m: V is positional and left out
    assert m["bound_rho0"] == pytest.approx(rho0, rel=1e-12)
    assert m["bound_radii"] == pytest.approx([k * rho0 for k in config.bound_radii])
    assert all(b > a for a, b in zip(m["bound_profile"], m["bound_profile"][1:]))  # L_ρ grows
    hit = bound_radius(m["bound_radii"], m["bound_profile"], m["bound_level"])
    assert (m["bound_radius"], m["bound_radius_status"]) == (hit.radius, hit.status)


def test_bound_radii_enters_the_run_id_only_off_its_default():
    plain, custom = _config(), _config(bound_radii=[0.5, 1.0])
    assert plain.bound_radii == [0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0]
    assert "bound_radii" not in _hashed(plain) and _hashed(custom)["bound_radii"] == [0.5, 1.0]
    assert config_hash("train", plain) != config_hash("train", custom)


def test_measures_run_in_a_train_job(tmp_path):
    config = _config(measure=["param_norm_trainable", "sharpness_trainable", "lipschitz_scaled"])
    metrics = run_train(config)
    for key in ("param_norm_trainable", "sharpness_trainable", "log10_lipschitz_scaled"):
        assert math.isfinite(metrics[key])
