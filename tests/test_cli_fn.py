"""`learnability fn`: JSON output, the rich table, plots, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import math

import pytest

from learnability.cli import main


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_profile_json(capsys):
    code, out, _ = _run(capsys, "fn", "profile", "majority", "-n", "9", "--json")
    assert code == 0
    data = json.loads(out)
    c = math.comb(9, 4)
    assert data["counts"][0] == 2**9 - 2 * c and data["counts"][5] == 2 * c
    assert data["exact"] is True and data["degree"] == 9 and data["max_sensitivity"] == 5
    assert abs(sum(data["fourier_weights"]) - 1) < 1e-9


def test_profile_table_and_plot(capsys, tmp_path):
    target = tmp_path / "hist.png"
    code, out, _ = _run(
        capsys, "fn", "profile", "x0 ^ x3 | maj(x1,x2,x4)", "-n", "5", "--plot", str(target)
    )
    assert code == 0
    assert "average sensitivity" in out and "Fourier degree" in out and "K_0" in out
    assert target.exists() and target.stat().st_size > 1000


def test_sampled_profile_says_k0_is_a_bound(capsys):
    code, out, _ = _run(capsys, "fn", "profile", "parity", "-n", "40", "--samples", "300", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["exact"] is False and data["average_sensitivity"] == 40
    assert data["zero_count"] is None and data["zero_fraction_upper"] > 0
    assert any("cannot be estimated by sampling" in note for note in data["notes"])


def test_list(capsys):
    code, out, _ = _run(capsys, "fn", "list")
    assert code == 0 and "sparse_parity" in out and "majority" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["parit", "-n", "5"], "did you mean 'parity'"),
        (["x0 ^^ x1", "-n", "5"], "column 5"),
        (["x0 ^ x9", "-n", "5"], "outside x0..x4"),
        (["parity", "-n", "0"], "n=0"),
        (["parity", "-n", "40"], "--samples"),
        (["mean", "-n", "4"], "real-valued"),
        (["parity", "-n", "4", "--samples", "0"], "--samples 0"),
        (["parity", "-n", "4", "--plot", "out.txt"], ".png"),
        (["missing_dir/table.npy"], "does not exist"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, args, needle):
    code, _out, err = _run(capsys, "fn", "profile", *args)
    assert code == 2
    text = " ".join(err.split())
    assert needle in text and "Traceback" not in err
    assert text.startswith("error:")


def test_a_table_file_named_with_brackets_and_dollars_is_shown_and_drawn_as_typed(
    tmp_path, capsys, monkeypatch
):
    from cli_run import run_cli

    monkeypatch.chdir(tmp_path)
    for name in ("z[bold]y.txt", "x$\\bad{$.txt"):
        (tmp_path / name).write_text("0110")
        code, out, err = run_cli(["fn", "profile", name, "--plot", f"{len(name)}.png"], capsys)
        assert code == 0 and name in out and "Traceback" not in err, out + err
