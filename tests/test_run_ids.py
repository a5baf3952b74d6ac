"""Run ids of every built-in study (quick and paper plans) and example sweep stay what main stored.

A run id is the hash of the resolved config: adding a config field (with a default) or changing how a
sweep expands would silently orphan stored results. tests/data/run_ids.json holds the fingerprints of
main's expansion (count and digest of the sorted ids per study and scale); regenerate it only when a
change of ids is intended (`python tests/run_id_golden.py tests/data/run_ids.json`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_id_golden import fingerprints  # noqa: E402


def test_every_stored_run_keeps_its_id():
    expected = json.loads((HERE / "data" / "run_ids.json").read_text())
    got = fingerprints()
    # a new study or example adds keys: only those main had are held fixed
    changed = {k: (v, got.get(k)) for k, v in expected.items() if k in got and got[k] != v}
    assert not changed, f"run ids changed (expected, now): {changed}"
    assert set(expected) <= set(got), f"no longer expanded: {sorted(set(expected) - set(got))}"
