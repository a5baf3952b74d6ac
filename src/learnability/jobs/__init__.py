"""The standard jobs: each module here registers its jobs with the sweep registry on import.

A job is `fn(config, ctx) -> metrics` with a config dataclass (`learnability.sweep.jobs.register_job`).
The registry knows nothing about this package beyond its name: when a job name is unknown it asks
`load(prefix)` / `load_all()` here, so `sweep` never imports `studies` or anything above it.
Job names are "<prefix>.<name>" ("volume.random_profiles"); the prefix picks the module.
"""

from __future__ import annotations

import importlib

# job-name prefix -> module registering those jobs
MODULES: dict[str, str] = {
    "train": "learnability.jobs.train",
    "testing": "learnability.sweep.testing",
    "sensitivity": "learnability.jobs.sensitivity",
    "volume": "learnability.jobs.volume",
    "sparse_xor": "learnability.jobs.sparse_xor",
    "random": "learnability.jobs.random_transformers",
}

import_errors: dict[str, str] = {}  # module -> why it could not be imported
_tried: set[str] = set()


def _import(module: str) -> None:
    if module in _tried:
        return
    _tried.add(module)
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:  # present but broken; absent (not written yet) is fine
            import_errors[module] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # one broken module must not hide every other job
        import_errors[module] = f"{type(exc).__name__}: {exc}"


def load(prefix: str) -> None:
    """Import the module registering jobs named '<prefix>.*' (or the job named `prefix`)."""
    if prefix in MODULES:
        _import(MODULES[prefix])


def load_all() -> None:
    for module in MODULES.values():
        _import(module)


__all__ = ["MODULES", "import_errors", "load", "load_all"]
