"""Names bound now and imported when first used, so the command line starts quickly.

`learnability --help` and a usage error must not pay for torch, scipy, matplotlib and pandas (about
5 CPU-seconds together on a 2-core EPYC). The command modules bind their heavy imports with `lazy`:

    if TYPE_CHECKING:
        from learnability.report.html import build_report
    else:
        build_report = lazy("learnability.report.html", "build_report")

The stand-in imports its module on the first call, attribute, iteration, membership or isinstance
test and forwards it to the real object. A command never meets one: `resolve_before_commands(app)`
makes every command first put the real objects in place of all stand-ins (`resolve_all`), so a body
that passes a class on as a value (`from_dict(TrainJobConfig, data)`) passes the class itself. Typer
never sees a stand-in either: command signatures use only the light option types of
`learnability.cli.options`.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from typing import Any


class Lazy:
    """`module.attribute` (or the module itself when `attribute` is None), imported on first use."""

    __slots__ = ("_attribute", "_module", "_target")

    def __init__(self, module: str, attribute: str | None = None) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_attribute", attribute)
        object.__setattr__(self, "_target", _UNSET)

    def _load(self) -> Any:
        target = object.__getattribute__(self, "_target")
        if target is _UNSET:
            module = importlib.import_module(object.__getattribute__(self, "_module"))
            attribute = object.__getattribute__(self, "_attribute")
            target = module if attribute is None else getattr(module, attribute)
            object.__setattr__(self, "_target", target)
        return target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._load(), name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._load())

    def __contains__(self, item: object) -> bool:
        return item in self._load()

    def __len__(self) -> int:
        return len(self._load())

    def __getitem__(self, key: Any) -> Any:
        return self._load()[key]

    def __bool__(self) -> bool:
        return bool(self._load())

    def __eq__(self, other: object) -> bool:
        return bool(self._load() == other)

    def __hash__(self) -> int:
        return hash(self._load())

    def __instancecheck__(self, instance: object) -> bool:
        return isinstance(instance, self._load())

    def __subclasscheck__(self, subclass: type) -> bool:
        return issubclass(subclass, self._load())

    def __str__(self) -> str:
        return str(self._load())

    def __format__(self, spec: str) -> str:
        return format(self._load(), spec)

    def __repr__(self) -> str:
        target = object.__getattribute__(self, "_target")
        if target is not _UNSET:
            return repr(target)
        module = object.__getattribute__(self, "_module")
        attribute = object.__getattribute__(self, "_attribute")
        return f"<lazy {module}{'' if attribute is None else '.' + attribute}>"


_UNSET = object()


_NAMESPACES: list[dict[str, Any]] = []  # the module globals that hold stand-ins


def _register(depth: int) -> None:
    namespace = sys._getframe(depth + 1).f_globals
    if not any(namespace is known for known in _NAMESPACES):
        _NAMESPACES.append(namespace)


def lazy(module: str, attribute: str | None = None) -> Any:
    """A stand-in for `module.attribute` (the module when `attribute` is None), imported on first use."""
    _register(1)
    return Lazy(module, attribute)


def lazy_names(module: str, *attributes: str) -> tuple[Any, ...]:
    """One stand-in per attribute of `module`, for `a, b = lazy_names("m", "a", "b")`."""
    _register(1)
    return tuple(Lazy(module, attribute) for attribute in attributes)


def resolve_all() -> None:
    """Put the real object in place of every stand-in bound so far (importing their modules)."""
    for namespace in _NAMESPACES:
        for name, value in list(namespace.items()):
            if type(value) is Lazy:
                namespace[name] = value._load()


def resolve_before_commands(app: Any) -> None:
    """Make every command of the typer `app` (and of its groups) call `resolve_all` first: parsing,
    `--help` and usage errors stay free of the heavy imports, a command body sees real objects."""
    for info in app.registered_commands:
        if info.callback is not None and not hasattr(info.callback, "__lazy_resolving__"):
            info.callback = _resolving(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            resolve_before_commands(group.typer_instance)


def _resolving(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def command(*args: Any, **kwargs: Any) -> Any:
        resolve_all()
        return callback(*args, **kwargs)

    command.__lazy_resolving__ = True  # type: ignore[attr-defined]
    return command
