"""Fingerprints of the run ids every built-in study and example sweep expands to (tests/data/run_ids.json).

    .venv/bin/python tests/run_id_golden.py tests/data/run_ids.json   # regenerate (only on purpose)

A run id is the hash of a resolved config, and stored results are found by it: a library change that
adds a config field, or changes how a sweep expands, must leave these fingerprints unchanged."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fingerprint(ids: list[str]) -> list:
    ids = sorted(set(ids))
    return [len(ids), hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]]


def fingerprints() -> dict[str, list]:
    from learnability.studies import available_studies, get_study
    from learnability.sweep.spec import load_sweep

    out: dict[str, list] = {}
    for name in available_studies():
        study = get_study(name)
        for scale in ("quick", "paper"):
            sweeps = study.sweeps(study.plan(scale))
            out[f"{name}:{scale}"] = fingerprint([s.run_id for w in sweeps for s in w.expand()])
    for path in sorted((ROOT / "configs" / "sweeps").glob("*.yaml")):
        out[f"configs/sweeps/{path.name}"] = fingerprint(
            [s.run_id for s in load_sweep(path).expand()]
        )
    return out


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(fingerprints(), indent=1, sort_keys=True) + "\n")
