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
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from learnability.errors import UserError

__all__ = [
    "MANIFEST",
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_file_name",
    "check_output_dir",
    "check_output_file",
    "check_regular_file",
    "check_writable_dir",
    "check_writable_file",
    "claim_output_dir",
    "claim_output_file",
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
            kind = "a file" if existing.is_file() else "a FIFO or a device"
            if existing == path:
                raise _fail(what, path, f"it is {kind}, not a folder")
            raise _fail(what, path, f"{str(existing)!r} is {kind}, not a folder")
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


# -- files to read ----------------------------------------------------------------------------------
def check_regular_file(path: str | Path, what: str = "file", allowed: str = "a file") -> Path:
    """`path` if it is a regular file (or a link to one), checked without opening it: a FIFO (a named
    pipe) or a device there is "not a regular file" (opening a FIFO to read waits for a writer that
    may never come), a missing one "does not exist". `allowed` says what to give instead."""
    path = _refuse_empty(path, what)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UserError(f"{what} {str(path)!r} does not exist; give {allowed}") from None
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long, a loop of symlinks
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserError(f"{what} {str(path)!r} cannot be read: {reason}; give {allowed}") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{what} {str(path)!r} is a folder, not a file; give {allowed}")
    if not stat.S_ISREG(mode):
        raise UserError(
            f"{what} {str(path)!r} is not a regular file (a FIFO or a device); give {allowed}"
        )
    return path


# -- names that become file names ----------------------------------------------------------------------
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
MAX_NAME = 100


def check_file_name(what: str, name: object) -> str:
    """`name` if it can be one component of a file name as it is: ASCII letters, digits, '_', '-'
    and '.', not starting with '.', at most `MAX_NAME` characters. A name from a study file (a
    figure's, a claim's slug) becomes part of a path: a '/' or '..' in it would write elsewhere."""
    ok = (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME
        and not name.startswith(".")
        and set(name) <= _NAME_CHARS
    )
    if not ok:
        raise UserError(
            f"{what} {name!r} is not allowed; it names a file: use at most {MAX_NAME} letters, "
            "digits, '_', '-' or '.' (not first)"
        )
    return name  # type: ignore[return-value]


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


def check_output_file(path: str | Path, what: str = "file") -> Path:
    """`check_writable_file`, and refuse a file (or a FIFO, a link, anything) already at `path`
    that learnability did not write: only a file its folder's manifest lists may be replaced.
    Writes nothing; `claim_output_file` notes the file before it is written."""
    path = check_writable_file(path, what)
    try:
        present = os.path.lexists(path)
    except (OSError, ValueError):
        present = False
    if present and path.name not in _manifest(path.parent):
        raise UserError(
            f"{what} {str(path)!r} already exists and learnability did not write it; learnability "
            "never writes over files it did not write: give a new file name (or remove that file)"
        )
    return path


def claim_output_file(path: str | Path) -> Path:
    """Note `path` in its folder's manifest as learnability's, before writing it."""
    path = Path(path)
    claim_output_dir(path.parent, [path.name])
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


# -- a set of files switched in at once ---------------------------------------------------------------
# Files that must agree with each other (report.html, claims.json, claims.md) cannot be replaced one
# rename at a time: a kill between two renames leaves a mixed set. So each of their names in the
# folder is a symbolic link through one pointer, `.learnability-LABEL/current`, into a generation
# folder holding the whole set. A new set is written (and synced) into a new generation folder and
# switched in by replacing the pointer, a single rename: whenever the process is killed, every name
# shows the old set or every name the new one. The first time, files an older version wrote there as
# plain files are copied into a generation first, so the move to links changes no content either.
# Where symbolic links cannot be made (Windows without the privilege), each file is written atomically
# on its own, as before.
def write_file_set(folder: str | Path, files: dict[str, bytes], label: str = "set") -> Path:
    """Write `files` (name -> bytes) into `folder` as one set (see above); returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    home = folder / f".learnability-{label}"
    home.mkdir(exist_ok=True)
    pointer = home / "current"
    gen = _generation(home, files)
    try:
        if gen is None:  # no symbolic links here: one file at a time
            for name, data in files.items():
                atomic_write_bytes(folder / name, data)
            return folder
        if not pointer.is_symlink():  # the first set in this layout
            old = {n: (folder / n).read_bytes() for n in files if _plain_file(folder / n)}
            first = _generation(home, old) if old else gen
            _point(pointer, (first or gen).name)
        for name in files:
            target = os.path.join(home.name, "current", name)
            here = folder / name
            if not (here.is_symlink() and os.readlink(here) == target):
                _replace_with_link(here, target)
        _point(pointer, gen.name)
        _fsync_dir(home)
        _fsync_dir(folder)
    except BaseException:
        if gen is not None and not (pointer.is_symlink() and os.readlink(pointer) == gen.name):
            _remove_tree(gen)
        raise
    _prune(home)
    return folder


def _prune(home: Path) -> None:
    """Remove earlier generations and what killed writers left, never the current set nor what
    another live writer (a second command writing the same folder now) is still writing."""
    with contextlib.suppress(OSError):
        current = os.readlink(home / "current")
        for entry in home.iterdir():
            if entry.name in ("current", current):
                continue
            # g-PID-RANDOM (a generation) or .current.PID.RANDOM.tmp (a link being made)
            parts = entry.name.split("-") if entry.name.startswith("g-") else entry.name.split(".")
            pid = parts[1] if entry.name.startswith("g-") else (parts[2:3] or [""])[0]
            if not pid.isdigit() or int(pid) == os.getpid() or not _pid_alive(int(pid)):
                _remove_tree(entry)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _generation(home: Path, files: dict[str, bytes]) -> Path | None:
    """A new generation folder in `home` holding `files`, synced; None where links cannot be made."""
    gen = home / f"g-{os.getpid()}-{secrets.token_hex(6)}"
    gen.mkdir()
    try:
        try:
            # a page opened at its real path (a browser given the link's target) finds its figures
            os.symlink(os.path.join("..", "..", "figures"), gen / "figures")
        except (OSError, NotImplementedError):  # no symbolic links on this file system / OS
            gen.rmdir()
            return None
        for name, data in files.items():
            fd = os.open(gen / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                exc.filename = str(home.parent / name)  # the name the user knows
                raise
            finally:
                os.close(fd)
        _fsync_dir(gen)
    except BaseException:
        _remove_tree(gen)
        raise
    return gen


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _point(link: Path, target: str) -> None:
    """Make `link` a symbolic link to `target` in one rename (a temporary link replaces it)."""
    _replace_with_link(link, target)


def _replace_with_link(path: Path, target: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    os.symlink(target, tmp)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _fsync_dir(folder: Path) -> None:
    # the renames reach the disk too (a power cut after the command ends keeps the new set)
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_tree(path: Path) -> None:
    """Remove a generation (or a temporary link) of ours; links inside are removed, not followed."""
    with contextlib.suppress(OSError):
        if path.is_symlink() or path.is_file():
            path.unlink()
            return
        for entry in path.iterdir():
            _remove_tree(entry)
        path.rmdir()
