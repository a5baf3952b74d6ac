"""docs/STUDIES.md's second example — a study file with a job of its own (`register_job`) giving each
seed its control at initialisation — copied out of the page and run at its tiny scale."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "STUDIES.md"


def job_example() -> tuple[str, str]:
    """(file name, code) of the block after the `<!-- example-job: ... -->` marker."""
    found = re.search(r"<!-- example-job: (\S+) -->\n```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert found, "docs/STUDIES.md has no marked job example"
    return found.group(1), found.group(2)


def test_the_job_example_registers_its_job_and_judges_against_the_model_at_init(tmp_path) -> None:
    name, code = job_example()
    assert '@register_job("init_control.at_init"' in code and "seeded_model(" in code
    study = tmp_path / name
    study.write_text(code)
    results = tmp_path / "results"
    cmd = [sys.executable, "-c", "from learnability.cli import main; main()", "study", "run",
           str(study), "--scale", "tiny", "--workers", "0", "--results", str(results)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (claim,) = json.loads((results / "report" / "claims.json").read_text())
    assert (
        claim["id"] == "init_control/training-adds-sensitivity" and claim["verdict"] == "reproduced"
    )
    rule = claim["details"]["rule"]
    # paired by seed: each trained model against the very weights it started from
    assert rule["paired"] is True and claim["units"]["count"] == 4
    # MAJORITY at n = 7 has average sensitivity 7·C(6,3)/2^6 = 2.1875; every trained model computes it
    assert rule["focus"]["value"] == 2.1875
    assert rule["difference"]["lo"] > 0.5
    assert claim["control"]["name"].startswith("each seed's own model at initialisation")
    # the page prints what the run gives
    assert claim["measured"].split(". ")[0] in " ".join(GUIDE.read_text().split())
