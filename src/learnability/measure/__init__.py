"""Measurements of a model: plain functions of `(model, ...)` (see docs/ARCHITECTURE.md)."""

from learnability.measure.layernorm import Blowup, layernorm_blowup
from learnability.measure.norms import lipschitz_constant, parameter_norm
from learnability.measure.probes import attention_maps, length_generalisation, pca_vs_neurons
from learnability.measure.sensitivity import (
    ModelProfile,
    model_outputs,
    model_profile,
    model_truth_table,
)
from learnability.measure.sharpness import Estimate, sharpness

__all__ = [
    "Blowup",
    "Estimate",
    "ModelProfile",
    "attention_maps",
    "layernorm_blowup",
    "length_generalisation",
    "lipschitz_constant",
    "model_outputs",
    "model_profile",
    "model_truth_table",
    "parameter_norm",
    "pca_vs_neurons",
    "sharpness",
]
