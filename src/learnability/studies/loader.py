"""A study from a researcher's own file: `load_study_file("question.py")` imports the file (or a folder
holding `__init__.py`, laid out like the built-in studies) and returns the `Study` it defines as
`STUDY`. Anything wrong with the file is bad input: one `UserError` line naming the file and what is
wrong (no file, a syntax error, an exception while importing it, no `STUDY`, a `STUDY` that is not a
`Study`, sweeps not named after the study, code that calls `sys.exit`). Nothing inside the package is
edited; the one thing registered is the finder below.

A study file may register its own job (`register_job`). Worker processes (the local pool, Ray) know a
job only by the name of the module registering it, and import that module before the lookup; so a
study file is imported under a name that says where the file is: `learnability.studies.loader.study_
<stem>_<f|p><hex of the file's absolute path>` (f: a file, p: a folder's `__init__.py`). Importing such
a name in any process on this machine (this module is made a package for that, with a finder for those
names alone) runs the study file there, and with it the file's `register_job`."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from learnability.errors import UserError
from learnability.paths import check_file_name
from learnability.studies.base import Plan, Study

# a module with __path__ is a package to the import system: study files become its submodules
__path__: list[str] = []


def _module_name(init: Path, package: bool) -> str:
    """The import name of a study file: readable (its stem) and decodable (its absolute path)."""
    stem = init.parent.name if package else init.stem
    stem = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in stem)
    encoded = os.fsencode(str(init.resolve())).hex()
    return f"{__name__}.study_{stem}_{'p' if package else 'f'}{encoded}"


def _file_of(name: str) -> tuple[Path, bool] | None:
    """The study file (and whether it is a folder's `__init__.py`) a `_module_name` names, or None."""
    short = name[len(__name__) + 1 :] if name.startswith(__name__ + ".") else ""
    if not short.startswith("study_") or "." in short:
        return None
    kind_and_hex = short.rsplit("_", 1)[-1]
    try:
        path = Path(os.fsdecode(bytes.fromhex(kind_and_hex[1:])))
    except ValueError:
        return None
    return (path, kind_and_hex[:1] == "p") if kind_and_hex[:1] in ("f", "p") else None


class _StudyFileFinder(importlib.abc.MetaPathFinder):
    """Finds `learnability.studies.loader.study_*` modules: the study file their name encodes."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        found = _file_of(fullname)
        if found is None or not found[0].is_file():
            return None
        init, package = found
        locations = [str(init.parent)] if package else None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=locations
        )


if not any(isinstance(f, _StudyFileFinder) for f in sys.meta_path):
    sys.meta_path.append(_StudyFileFinder())


def load_study_file(path: str | Path) -> Study[Any]:
    """Import a study file (or study folder) and return its checked `STUDY`."""
    path = Path(path)
    init = path / "__init__.py" if path.is_dir() else path
    if not path.exists():
        raise UserError(
            f"study file {str(path)!r} does not exist; give a .py file that defines STUDY"
        )
    if path.is_dir() and not os.path.lexists(init):
        raise UserError(
            f"study folder {str(path)!r} has no __init__.py; give a .py file, or a folder whose "
            "__init__.py defines STUDY"
        )
    if not init.is_file():  # a FIFO, a device: reading it could wait forever
        raise UserError(
            f"study file {str(init)!r} is not a regular file; give a .py file that defines STUDY"
        )
    if init.suffix != ".py":
        raise UserError(
            f"study file {str(path)!r} is not a .py file; give a Python file defining STUDY"
        )
    module = _import(init, package=path.is_dir())
    study = getattr(module, "STUDY", None)
    if study is None:
        raise UserError(
            f"{str(path)!r} defines no STUDY; end the file with `STUDY = Study(...)` "
            "(see docs/STUDIES.md)"
        )
    if not isinstance(study, Study):
        raise UserError(
            f"{str(path)!r}: STUDY is of type {type(study).__name__!r}, not a learnability.studies.Study"
        )
    check_study(study, str(path))
    return study


def _import(init: Path, package: bool) -> Any:
    # a name of its own per file (two study files may share a stem), registered before it runs:
    # dataclasses and relative imports of a study folder look their module up in sys.modules. The
    # file is executed afresh each time (an edited file is read again), under the name a worker
    # process imports to run the file's own jobs (see the module docstring).
    name = _module_name(init, package)
    locations = [str(init.parent)] if package else None
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise UserError(f"cannot import {str(init)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        where = f"{exc.filename or init}, line {exc.lineno}"
        raise UserError(f"syntax error in study file ({where}): {exc.msg}") from None
    except UserError:
        sys.modules.pop(name, None)
        raise
    except SystemExit as exc:  # the file ends the program: refused, not a silent exit 0
        sys.modules.pop(name, None)
        raise UserError(
            f"study file {str(init)!r} called sys.exit({exc.code!r}) while importing "
            f"({_where(exc, init.parent.resolve())}); a study file defines STUDY and must not "
            "end the program"
        ) from None
    except Exception as exc:
        sys.modules.pop(name, None)
        raise UserError(
            f"study file {str(init)!r} failed while importing ({_where(exc, init.parent.resolve())}): "
            f"{type(exc).__name__}: {exc}"
        ) from None
    return module


def _where(exc: BaseException, init: Path) -> str:
    """The last line of the user's own files in the traceback (not the library's)."""
    folder = init.parent.resolve()
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if Path(f.filename).resolve().is_relative_to(folder)
    ]
    return (
        f"{Path(frames[-1].filename).name}, line {frames[-1].lineno}" if frames else str(init.name)
    )


def check_study(study: Study[Any], source: str) -> None:
    """What a study must satisfy before it runs: a name usable as a sweep prefix that is not a
    built-in study's, at least one plan, and sweeps named `<study>/<short>`."""
    from learnability.studies import builtin_studies

    if not study.name or not all(c.isalnum() or c in "_-" for c in study.name):
        raise UserError(
            f"{source}: study name {study.name!r} must be letters, digits, '_' or '-' "
            "(it prefixes every sweep name)"
        )
    if study.name in builtin_studies():
        raise UserError(
            f"{source}: study name {study.name!r} is a built-in study's; choose another name "
            "so the two studies' runs stay apart in the store"
        )
    for field_name in ("title", "paper", "protocol_note"):
        value = getattr(study, field_name, "")
        if not isinstance(value, str):
            raise UserError(
                f"{source}: the study's {field_name} is {type(value).__name__} {value!r}; give a text"
            )
    if not isinstance(study.plans, dict) or not study.plans:
        raise UserError(
            f"{source}: the study's plans are {study.plans!r}; give a mapping of scale names to "
            "plans, e.g. plans={'quick': Plan('quick', params)}"
        )
    for scale, plan in study.plans.items():
        if not isinstance(scale, str) or not scale.strip():
            raise UserError(f"{source}: plan scale {scale!r} is not allowed; name it with a text")
        if not isinstance(plan, Plan):
            raise UserError(
                f"{source}: plans[{scale!r}] is a {type(plan).__name__}, not a Plan(scale, params)"
            )
        if plan.scale != scale:
            raise UserError(f"{source}: plans[{scale!r}] is a Plan of scale {plan.scale!r}")


def check_declaration(study: Study[Any], plan: Any, source: str) -> None:
    """The study's sweeps and claims for `plan` can be built: sweeps named `<study>/<short>`, claims
    that are `Claim`s with distinct slugs. An exception in the researcher's own code is bad input too:
    one line naming the file and line."""
    from learnability.claims import Claim
    from learnability.sweep.spec import Sweep

    folder = Path(source).resolve()
    folder = folder if folder.is_dir() else folder.parent
    for part in ("sweeps", "claims"):
        try:
            built = getattr(study, part)(plan)
        except UserError:
            raise
        except SystemExit as exc:  # the study's code ends the program: refused, not a silent exit 0
            raise UserError(
                f"{source}: {part}(plan) called sys.exit({exc.code!r}) at scale {plan.scale!r} "
                f"({_where(exc, folder)}); a study's functions must return, not end the program"
            ) from None
        except Exception as exc:
            raise UserError(
                f"{source}: {part}(plan) failed at scale {plan.scale!r} ({_where(exc, folder)}): "
                f"{type(exc).__name__}: {exc}"
            ) from None
        kind = Sweep if part == "sweeps" else Claim
        wrong = (
            [type(x).__name__ for x in built if not isinstance(x, kind)]
            if isinstance(built, list)
            else []
        )
        if not isinstance(built, list) or wrong:
            raise UserError(
                f"{source}: {part}(plan) must return a list of {kind.__name__}, got {wrong or type(built).__name__}"
            )
        if part == "sweeps":
            for sweep in built:
                name = sweep.name
                if (
                    not isinstance(name, str)
                    or not name.startswith(f"{study.name}/")
                    or name == f"{study.name}/"
                ):
                    raise UserError(
                        f"{source}: sweep {sweep.name!r} must be named '{study.name}/<short name>' "
                        "(the study's name, a slash, the sweep's own name)"
                    )
        else:
            for c in built:  # a slug names the claim's figure file: nothing that leaves figures/
                check_file_name(f"{source}: claim slug", c.slug)
            slugs = [c.slug for c in built]
            twice = sorted({x for x in slugs if slugs.count(x) > 1})
            if twice:
                raise UserError(
                    f"{source}: claim slugs must be distinct; {twice} appear more than once"
                )
            for c in built:
                unknown = [x for x in c.restates if x not in slugs]
                if unknown:
                    raise UserError(
                        f"{source}: claim {c.slug!r} restates {unknown}, which are not claims of "
                        f"this study; allowed: {sorted(set(slugs) - {c.slug})}"
                    )


__all__ = ["check_declaration", "check_study", "load_study_file"]
