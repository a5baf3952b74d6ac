"""Checks that an output path can be written, made before any work starts.

A command that computes for minutes and then cannot write its result wastes the minutes and may leave
half its output behind. `check_writable_dir` / `check_writable_file` are called before the work, on
the paths the user gave, and raise a one-line `UserError` naming the path and what is wrong with it.
Nothing is created: the nearest existing folder is probed with an anonymous temporary file (which
never appears in the folder), because permission bits alone do not tell whether a write will succeed
(root ignores them; /proc and read-only mounts refuse everyone).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from learnability.errors import UserError

__all__ = ["check_writable_dir", "check_writable_file"]

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
    path = Path(path)
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
    path = Path(path)
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
