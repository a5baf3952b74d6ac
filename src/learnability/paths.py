"""Output paths: checked before any work starts, written atomically, never over a stranger's file.

A command that computes for minutes and then cannot write its result wastes the minutes and may leave
half its output behind. `check_writable_dir` / `check_writable_file` are called before the work, on
the paths the user gave, and raise a one-line `UserError` naming the path and what is wrong with it.
Nothing is created: the nearest existing folder is probed with an anonymous temporary file (which
never appears in the folder), because permission bits alone do not tell whether a write will succeed
(root ignores them; /proc and read-only mounts refuse everyone).

Writing: `atomic_write_text` / `atomic_write_bytes` / `atomic_path` write every output to a temporary
file beside it and rename it into place, so a kill or a full disk never leaves a truncated file.
`check_output_dir` / `claim_output_dir` keep a folder's manifest of the files learnability wrote there,
so a command never writes over a file of the user's (`train --out ''` in a home folder).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from learnability.errors import UserError

__all__ = [
    "MANIFEST",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_output_dir",
    "check_writable_dir",
    "check_writable_file",
    "claim_output_dir",
    "path_option",
]

_NAME_MAX = 255  # bytes per path component on every common file system


def _fail(what: str, path: Path, reason: str) -> UserError:
    return UserError(f"{what} {str(path)!r} cannot be written: {reason}")


def _probe(folder: Path, what: str, path: Path) -> None:
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            reason = f"folder {str(folder)!r} is not writable ({reason})"
        raise _fail(what, path, f"{reason}; give a folder you may write") from None


def check_writable_dir(path: str | Path, what: str = "folder") -> Path:
    """`path` as a Path if it is, or could be created as, a folder this process may write into."""
    path = _refuse_empty(path, what)
    try:
        for part in path.parts:
            if len(os.fsencode(part)) > _NAME_MAX:
                raise _fail(
                    what, path, f"a name is longer than {_NAME_MAX} bytes; use a shorter one"
                )
        existing = path
        while not existing.exists():
            parent = existing.parent
            if parent == existing:
                break
            existing = parent
        if not existing.is_dir():
            if existing == path:
                raise _fail(what, path, "it is a file, not a folder")
            raise _fail(what, path, f"{str(existing)!r} is a file, not a folder")
        _probe(existing, what, path)
    except UserError:
        raise
    except (OSError, ValueError) as exc:  # e.g. a NUL byte, a loop of symlinks
        raise _fail(what, path, str(getattr(exc, "strerror", None) or exc)) from None
    return path


def check_writable_file(path: str | Path, what: str = "file") -> Path:
    """`path` as a Path if a file can be written there (its folder may still have to be created)."""
    path = _refuse_empty(path, what)
    try:
        if path.is_dir():
            raise _fail(what, path, "it is a folder; give a file name")
        if len(os.fsencode(path.name)) > _NAME_MAX:
            raise _fail(what, path, f"the name is longer than {_NAME_MAX} bytes; use a shorter one")
        check_writable_dir(path.parent if str(path.parent) else Path("."), what)
        if path.exists() and not os.access(path, os.W_OK):
            raise _fail(what, path, "the file exists and is read-only")
    except UserError as exc:
        message = str(exc)
        if not message.startswith(f"{what} {str(path)!r}"):  # name the file, not only its folder
            message = f"{what} {str(path)!r} cannot be written: " + message.split(": ", 1)[-1]
        raise UserError(message) from None
    except (OSError, ValueError) as exc:
        raise _fail(what, path, str(getattr(exc, "strerror", None) or exc)) from None
    return path


# -- empty paths -------------------------------------------------------------------------------------
def path_option(text: str) -> Path:
    """A typer `parser` for path options and arguments: `--out ''` (an unset shell variable) would be
    the current folder, where the command would write over whatever is there; refuse it instead."""
    import typer  # the CLI's own dependency; paths itself stays importable without it

    if isinstance(text, Path):
        return text
    if not str(text).strip():
        raise typer.BadParameter(
            f"{text!r} is an empty path (an unset shell variable?); give a file or folder name"
        )
    return Path(text)


def _refuse_empty(path: str | Path, what: str) -> Path:
    if isinstance(path, str) and not path.strip():
        raise UserError(f"{what} {path!r} is an empty path; give a file or folder name")
    return Path(path)


# -- atomic writes -----------------------------------------------------------------------------------
# Every output is written to a temporary file beside its target and renamed over it (os.replace is
# atomic on POSIX and Windows): a process killed mid-write, or a disk that fills up, leaves the old
# file whole (or no file), never a truncated one. The temporary file's name starts with a dot and
# holds the pid, so a crash leaves at most one such file per writer, recognisable as ours.
_CHUNK = 1 << 20


def _temp_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` to write to (with any writer: torch.save, savefig, pyarrow);
    on success it replaces `path` at once, on any error it is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as exc:
        if exc.filename in (None, str(tmp)):  # name the file the user knows, not the temporary one
            exc.filename = str(path)
        raise
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:_CHUNK])
        view = view[written:]


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` atomically (see `atomic_path`); returns `path`."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    return path


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` atomically (see `atomic_path`); returns `path`."""
    return atomic_write_bytes(path, text.encode(encoding))


# -- output folders: never write over a file learnability did not write ------------------------------
# A command that writes fixed names into a folder (`train --out DIR`: config.yaml, result.json, ...;
# `report --out DIR`: report.html, ...) refuses a folder where one of those names exists and was not
# written by learnability. What learnability wrote is listed in the folder's manifest, written before
# the files themselves, so a folder learnability wrote (even one whose writer was killed) stays
# writable by learnability.
MANIFEST = ".learnability.json"


def _manifest(folder: Path) -> set[str]:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    files = data.get("written") if isinstance(data, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def check_output_dir(path: str | Path, names: Iterable[str], what: str = "folder") -> Path:
    """`check_writable_dir`, and refuse a folder holding one of `names` (the files, or sub-folders,
    the command writes there) that learnability did not write. Writes nothing."""
    path = check_writable_dir(path, what)
    try:
        if not path.is_dir():
            return path
        ours = _manifest(path)
        foreign = [n for n in names if n not in ours and os.path.lexists(path / n)]
    except OSError:
        return path  # check_writable_dir found it usable; a read problem shows when it is written
    if foreign:
        raise UserError(
            f"{what} {str(path)!r} already holds {foreign[0]!r}, which learnability did not write; "
            "learnability never writes over files it did not write: give a new or empty folder"
        )
    return path


def claim_output_dir(path: str | Path, names: Iterable[str]) -> Path:
    """Create `path` and note `names` in its manifest as learnability's, before writing them."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    ours = _manifest(path)
    wanted = ours | set(names)
    if wanted != ours or not (path / MANIFEST).exists():
        payload = {"written_by": "learnability", "written": sorted(wanted)}
        atomic_write_text(path / MANIFEST, json.dumps(payload, indent=1) + "\n")
    return path
