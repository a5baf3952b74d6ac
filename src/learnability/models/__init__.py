"""The networks. See docs/ARCHITECTURE.md ("Models") for the contract every model keeps.

`build_model(config, seed=None, device=None)` builds the model a config dataclass names by its `arch` tag:

| arch | config | model | output |
|---|---|---|---|
| `boolean_transformer` | `BooleanTransformerConfig` | `BooleanTransformer` | (B,) or (B, T) |
| `gpt` | `GPTConfig` | `GPT` | (B, T, V) |
| `lstm` | `LSTMConfig` | `LSTM` | (B, T, V) or (B,) |
| `mlp` | `MLPConfig` | `MLP` | (B,) |

With `seed`, the initialisation is drawn from a `torch.Generator` seeded with it (the global RNG is left
alone); without, from the global RNG.
"""

from __future__ import annotations

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.models.baselines import LSTM, MLP, LSTMConfig, MLPConfig
from learnability.models.boolean_transformer import BooleanTransformer, BooleanTransformerConfig
from learnability.models.gpt import GPT, GPTConfig
from learnability.models.trace import Trace

ModelConfig = BooleanTransformerConfig | GPTConfig | LSTMConfig | MLPConfig

MODELS: dict[str, tuple[type, type[nn.Module]]] = {
    "boolean_transformer": (BooleanTransformerConfig, BooleanTransformer),
    "gpt": (GPTConfig, GPT),
    "lstm": (LSTMConfig, LSTM),
    "mlp": (MLPConfig, MLP),
}


def build_model(
    config: ModelConfig, seed: int | None = None, device: str | torch.device | None = None
) -> nn.Module:
    """The model `config` describes, initialised from `seed` (or the global RNG), on `device` (default CPU)."""
    arch = getattr(config, "arch", None)
    if arch not in MODELS or not isinstance(config, MODELS[arch][0]):
        raise UserError(
            f"not a model config: {type(config).__name__} (arch={arch!r}); allowed arch: {', '.join(MODELS)}"
        )
    generator = None
    if seed is not None:
        generator = torch.Generator().manual_seed(int(seed))
    # module constructors draw their throw-away default init from the global RNG: restore it afterwards
    with torch.random.fork_rng(devices=[], enabled=seed is not None):
        model = MODELS[arch][1](config, generator=generator)
    return model.to(resolve_device(device or "cpu"))


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of scalar parameters (only those with requires_grad if `trainable_only`)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


__all__ = [
    "GPT",
    "LSTM",
    "MLP",
    "MODELS",
    "BooleanTransformer",
    "BooleanTransformerConfig",
    "GPTConfig",
    "LSTMConfig",
    "MLPConfig",
    "ModelConfig",
    "Trace",
    "build_model",
    "count_parameters",
]
