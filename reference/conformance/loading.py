"""Loading a function under test by name — ``path/to/file.py:function`` or ``module:function`` — and
describing what it raised, in one line.  Only the standard library: a worker process starts quickly.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from pathlib import Path

__all__ = ["LoadError", "load", "describe", "verb", "parameters", "signature", "missing_module"]


class LoadError(Exception):
    """The function could not be loaded.  ``usage``: the name given is at fault (no such file, module or
    function); otherwise the function's module is (it raised or exited while importing).  ``missing``: the
    top-level module it could not find, where that is why (an environment without torch)."""

    def __init__(self, message: str, *, usage: bool, missing: str | None = None):
        super().__init__(message)
        self.usage, self.missing = usage, missing


def missing_module(exc: BaseException) -> str | None:
    """The top-level name of the module a ModuleNotFoundError could not find; None for any other exception."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return exc.name.split(".")[0]
    return None


# ------------------------------------------------------------------------------------------- describing
def describe(exc: BaseException) -> str:
    """``ValueError: message (file.py:12 in f)``: the exception's type and first line, and the innermost
    frame outside this package — what a user needs to find it, without a traceback."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    if isinstance(exc, KeyboardInterrupt):
        return "raised KeyboardInterrupt"
    text = str(exc).strip().splitlines()
    head = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    here = str(Path(__file__).parent)  # frames of the checker itself are not the function's
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(here)]
    return f"{head} ({Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else head


def _module_from_file(where: str):
    path = Path(where)
    if not path.is_file():
        raise LoadError(f"target file {where!r} does not exist", usage=True)
    spec = importlib.util.spec_from_file_location(f"_conform_target_{abs(hash(str(path.resolve())))}", path)
    if spec is None:
        raise LoadError(f"target file {where!r} is not a Python file", usage=True)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # the file may import its neighbours
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: B036 - sys.exit or Ctrl-C in a module is the module's fault
        raise LoadError(f"importing {where} {verb(exc)}", usage=False, missing=missing_module(exc)) from None
    finally:
        sys.path.remove(folder)
    return module


def verb(exc: BaseException) -> str:
    text = describe(exc)
    return text if text.startswith(("called", "raised")) else f"raised {text}"


def _module_by_name(where: str):
    try:
        found = importlib.util.find_spec(where.split(".")[0])
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise LoadError(f"no module named {where!r} (give path/to/file.py:function for a file)", usage=True)
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        raise LoadError(f"no module named {exc.name!r}", usage=True, missing=missing_module(exc)) from None
    except BaseException as exc:  # noqa: B036
        raise LoadError(f"importing {where} {verb(exc)}", usage=False) from None


def load(text: str):
    """The function named by ``path/to/file.py:function`` or ``module:function``, or :class:`LoadError`."""
    where, sep, name = text.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise LoadError(f"target {text!r} must be path/to/file.py:function or module:function", usage=True)
    is_file = where.endswith(".py") or "/" in where or "\\" in where
    module = _module_from_file(where) if is_file else _module_by_name(where)
    if not hasattr(module, name):
        raise LoadError(f"{where} has no function {name!r}", usage=True)
    function = getattr(module, name)
    if not callable(function):
        raise LoadError(f"{text} is a {type(function).__name__}, not a function", usage=False)
    return function


def parameters(function):
    """The function's parameters as picklable ``(name, kind, has_default)`` triples, or None."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    return [(p.name, int(p.kind), p.default is not p.empty) for p in signature.parameters.values()]


def signature(parameters):
    if parameters is None:
        return None
    return inspect.Signature([inspect.Parameter(name, inspect._ParameterKind(kind),
                                                **({"default": None} if has_default else {}))
                              for name, kind, has_default in parameters])
