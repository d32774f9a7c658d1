"""Import a learner's file by path, turning every way it can fail into a clear message."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

import pytest


class LoadError(Exception):
    """The learner's file could not be imported; str() is the learner-facing message."""


def _learner_frame(tb: traceback.StackSummary, path: Path) -> traceback.FrameSummary | None:
    frames = [f for f in tb if Path(f.filename).resolve() == path.resolve()]
    return frames[-1] if frames else None


def load_file(path: Path, module_name: str) -> ModuleType:
    """Execute the learner's file as a fresh module, or raise LoadError explaining why not."""
    shown = display_path(path)
    if not path.is_file():
        raise LoadError(f"{shown} does not exist. Check the path given to --impl.")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{shown} is not a Python file that can be imported.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:  # IndentationError too
        sys.modules.pop(module_name, None)
        code = f"\n    {e.text.rstrip()}" if e.text else ""
        raise LoadError(f"{shown} line {e.lineno}: {type(e).__name__}: {e.msg}{code}") from None
    except SystemExit as e:
        sys.modules.pop(module_name, None)
        raise LoadError(
            f"{shown} called sys.exit({e.code!r}) while being imported. "
            "Remove top-level code that exits; the grader imports your file."
        ) from None
    except pytest.fail.Exception:
        raise  # a pytest-timeout while importing: let pytest report it
    except BaseException as e:
        sys.modules.pop(module_name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        frame = _learner_frame(traceback.extract_tb(e.__traceback__), path)
        at = f" (line {frame.lineno}: {frame.line})" if frame else ""
        raise LoadError(
            f"importing {shown} raised {type(e).__name__}: {e}{at}. "
            "Top-level code in your file must run without errors."
        ) from None
    _expect_own_code(module, path)
    return module


def _expect_own_code(module: ModuleType, path: Path) -> None:
    """A name the file exports must not be the reference solution's own object, re-exported.

    `from solutions.layernorm import LayerNorm` would pass every check without a line of the
    learner's code. Subclassing the reference under another name is how the catalogue builds
    its mutants, so only re-exports under the reference's own name count.
    """
    from grader.registry import ROOT

    solutions = ROOT / "solutions"
    if path.resolve().is_relative_to(solutions):
        return  # grading the reference itself
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__name__", None) != name:
            continue
        source = _defined_in(value)
        if source is not None and source.is_relative_to(solutions):
            sys.modules.pop(module.__name__, None)
            raise LoadError(
                f"{display_path(path)} does not define {name}: it imports it from "
                f"{display_path(source)}, the reference solution. Write your own {name}; "
                "the grader checks your code, not the reference."
            )


def _defined_in(value: object) -> Path | None:
    """The file a class or function was defined in, if it has one."""
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    if file is None or not (isinstance(value, type) or callable(value)):
        return None
    return Path(file).resolve()


def display_path(path: Path) -> str:
    """Show paths inside the repo relative to it, as a learner would type them."""
    from grader.registry import ROOT

    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


class LearnerModule:
    """The learner's module as the checks see it: a missing class fails the check clearly."""

    def __init__(self, module: ModuleType, path: Path) -> None:
        self._module = module
        self.path = path

    def __getattr__(self, name: str) -> object:
        try:
            return getattr(self._module, name)
        except AttributeError:
            pytest.fail(
                f"{display_path(self.path)} defines no `{name}`. "
                f"The kata expects {name} by that name; check its spelling.",
                pytrace=False,
            )
