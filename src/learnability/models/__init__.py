"""The networks. See docs/ARCHITECTURE.md ("Models") for the contract every model keeps.

`build_model(config, seed=None, device=None)` builds the model a config dataclass names by its `arch` tag:

| arch | config | model | output |
|---|---|---|---|
| `boolean_transformer` | `BooleanTransformerConfig` | `BooleanTransformer` | (B,) or (B, T) |
| `gpt` | `GPTConfig` | `GPT` | (B, T, V) |
| `lstm` | `LSTMConfig` | `LSTM` | (B, T, V) or (B,) |
| `mlp` | `MLPConfig` | `MLP` | (B,) |
| `two_head` | `TwoHeadConfig` | `TwoHeadModel` | (B,) |

`two_head` is the sparse-XOR model of Han & Ghoshdastidar (`learnability.models.two_head`): fixed random
positional embeddings V (d × m) and two trainable query vectors, 2m trainable parameters. Train it on a
Boolean task of length n = d with targets "pm1" and the function `x{p} ^ x{q}` (the paper's y = −x_p x_q in
±1 bits). Built from a seed (as the train job does), the seed is added to both `embedding_seed` and
`init_seed`, so seeds are independent draws of V and θ; seed 0 gives the model `TwoHead(config)` builds.

Initialisation: every model kind but `two_head` takes the same `init` / `init_scale` fields (PyTorch's
default, uniform ±B, Gaussian σ, Xavier; `learnability.models.init`), and those with a token embedding
(`boolean_transformer`, `gpt`, `lstm`) take `token_scale="sqrt_d"` (the token embedding times √d_model
in the forward, as Bhattamishra et al.'s code does). The two-head model has none: its θ starts on the
unit sphere and V is the paper's fixed random embedding, both part of the one-step theorem it checks
(`embedding_seed`, `init_seed` draw them).

A model class may list `fixed_parameters` (names): parameters that belong to its definition and that no
freeze spec trains (`fixed_parameter_names`). The two-head model's V is one.

With `seed`, the initialisation is drawn from a `torch.Generator` seeded with it (the global RNG is left
alone); without, from the global RNG.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from learnability.device import resolve_device
from learnability.errors import UserError
from learnability.models.baselines import LSTM, MLP, LSTMConfig, MLPConfig
from learnability.models.boolean_transformer import BooleanTransformer, BooleanTransformerConfig
from learnability.models.gpt import GPT, GPTConfig
from learnability.models.trace import Trace
from learnability.models.two_head import TwoHead, TwoHeadConfig


class TwoHeadModel(TwoHead):
    """`TwoHead` as `build_model` builds it: a seed offsets both of its draws (see the module docstring)."""

    def __init__(self, config: TwoHeadConfig, generator: torch.Generator | None = None) -> None:
        offset = generator.initial_seed() if generator is not None else 0
        if offset:
            config = replace(
                config,
                embedding_seed=config.embedding_seed + offset,
                init_seed=config.init_seed + offset,
            )
        super().__init__(config)


ModelConfig = BooleanTransformerConfig | GPTConfig | LSTMConfig | MLPConfig | TwoHeadConfig

MODELS: dict[str, tuple[type, type[nn.Module]]] = {
    "boolean_transformer": (BooleanTransformerConfig, BooleanTransformer),
    "gpt": (GPTConfig, GPT),
    "lstm": (LSTMConfig, LSTM),
    "mlp": (MLPConfig, MLP),
    "two_head": (TwoHeadConfig, TwoHeadModel),
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


def fixed_parameter_names(model_or_config: nn.Module | ModelConfig) -> set[str]:
    """Parameters of a model (or of the model a config describes) that no freeze spec trains."""
    if isinstance(model_or_config, nn.Module):
        cls: type = type(model_or_config)
    else:
        arch = getattr(model_or_config, "arch", None)
        if arch not in MODELS:
            return set()
        cls = MODELS[arch][1]
    return set(getattr(cls, "fixed_parameters", ()))


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
    "TwoHeadConfig",
    "TwoHeadModel",
    "build_model",
    "count_parameters",
    "fixed_parameter_names",
]
