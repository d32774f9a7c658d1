"""Import a learner's file by path, turning every way it can fail into a clear message."""

from __future__ import annotations

import ast
import contextlib
import difflib
import functools
import importlib.util
import linecache
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType, TracebackType

import pytest

from norm_katas.runtime.outcomes import raised_by_code


class LoadError(Exception):
    """The learner's file could not be imported; str() is the learner-facing message."""


class NotThisCheck(pytest.fail.Exception):
    """A failure that is no check's own mistake, so that no check's hints apply to it."""


class MissingName(NotThisCheck):
    """The learner's file lacks a name the kata needs: the check's own hints do not apply."""


def learner_frame(
    tb: TracebackType | None, learner: Path, *, elsewhere: bool = False
) -> traceback.FrameSummary | None:
    """The learner's line in a traceback: its innermost frame in the file `learner`. With
    elsewhere, failing that, the innermost frame of any code of the learner's (a module the
    file imports, code it exec'd), as a rank reports an error that never passed through it.

    Only the frame found is summarised, with its source line: a failed check's traceback runs
    through some thirty frames of pytest's, and reading each one's line, and resolving each
    file's path anew, was most of the time a stub's grading took."""
    frames = list(traceback.walk_tb(tb))
    target = _resolved(str(learner))
    own = [(f, n) for f, n in frames if _resolved(f.f_code.co_filename) == target]
    if not own and elsewhere:
        from norm_katas.runtime.tracing import is_learner_code  # imports torch: only when asked

        own = [(f, n) for f, n in frames if is_learner_code(f.f_code.co_filename)]
    if not own:
        return None
    frame, lineno = own[-1]
    filename = frame.f_code.co_filename
    # As traceback.extract_tb reads a line: the file may have changed since it was read.
    linecache.lazycache(filename, frame.f_globals)
    linecache.checkcache(filename)
    return traceback.FrameSummary(filename, lineno, frame.f_code.co_name)


def raised_in(tb: TracebackType | None, learner: Path) -> bool:
    """Whether the innermost frame of a traceback is in the file `learner`: a statement of that
    file raised the exception (the learner's own `assert`, say), not a function it called."""
    innermost = None
    for frame, _ in traceback.walk_tb(tb):
        innermost = frame
    return innermost is not None and _resolved(innermost.f_code.co_filename) == _resolved(
        str(learner)
    )


@functools.lru_cache(maxsize=4096)
def _resolved(filename: str) -> Path:
    """A code object's file name as an absolute path, symbolic links followed. Cached: the same
    few dozen files appear in every traceback of a grading."""
    return Path(filename).resolve()


def load_file(path: Path, module_name: str) -> ModuleType:
    """Execute the learner's file as a fresh module, or raise LoadError explaining why not."""
    shown = display_path(path)
    if not path.is_file():
        raise LoadError(f"{shown} does not exist. Check the path given to --impl.")
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{shown} is not a Python file that can be imported.")
    _no_reference_imports(path)
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
        raise  # the time limit ran out while importing (runtime.limits): the caller says so
    except BaseException as e:
        sys.modules.pop(module_name, None)
        if isinstance(e, KeyboardInterrupt) and not raised_by_code(e):
            raise  # a signal: the grading stops
        frame = learner_frame(e.__traceback__, path)
        at = f" (line {frame.lineno}: {frame.line})" if frame else ""
        said = f": {e}" if str(e) else ""
        raise LoadError(
            f"importing {shown} raised {type(e).__name__}{said}{at}. "
            "Top-level code in your file must run without errors."
        ) from None
    _expect_own_code(module, path)
    _guard_the_reference(path)
    return module


def _builds_on_the_reference(path: Path) -> bool:
    """Whether this file may use solutions/: the reference itself, and the self-tests' wrong
    and broken files, which subclass it to make one mistake each (tests/catalogue/, but for
    uses_reference/ there: the files that prove this rule)."""
    from norm_katas.content.registry import ROOT

    path, catalogue = path.resolve(), ROOT / "tests" / "catalogue"
    if path.is_relative_to(ROOT / "solutions"):
        return True
    return path.is_relative_to(catalogue) and not path.is_relative_to(catalogue / "uses_reference")


def _no_reference_imports(path: Path) -> None:
    """The learner's file must not import the reference solution, anywhere in it.

    `from solutions.layernorm import LayerNorm`, a subclass of it, or a forward that calls it
    would pass every check without a line of the learner's own code.
    """
    if _builds_on_the_reference(path):
        return
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return  # importing the file reports it, with the line
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            modules = [node.module or ""]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for name in modules:
            if name == "solutions" or name.startswith("solutions."):
                raise LoadError(
                    f"{display_path(path)} line {node.lineno} imports the reference solution "
                    f"({ast.unparse(node)}). Write your own; the grader checks your code, "
                    "not the reference."
                )


def _expect_own_code(module: ModuleType, path: Path) -> None:
    """Nothing the file holds may come from the reference solution: the import check above
    misses a module imported by a computed name (importlib)."""
    from norm_katas.content.registry import ROOT

    if _builds_on_the_reference(path):
        return
    for name, value in vars(module).items():
        if name.startswith("__"):
            continue
        try:
            parts = value.__mro__ if isinstance(value, type) else (value,)
            sources = [_defined_in(part) for part in parts]
        except Exception:  # an object of the learner's that resists inspection: not ours
            continue
        for source in sources:
            if source is not None and source.is_relative_to(ROOT / "solutions"):
                sys.modules.pop(module.__name__, None)
                raise LoadError(
                    f"{display_path(path)} uses the reference solution: its {name} comes from "
                    f"{display_path(source)}. Write your own; the grader checks your code, "
                    "not the reference."
                )


class UsesReference(NotThisCheck):
    """The learner's code reached the reference solution while the checks ran. A pytest
    outcome (a BaseException): their `except Exception` cannot swallow it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)


_guarded: Path | None = None  # the learner's file whose checks may not reach solutions/


def _guard_the_reference(path: Path) -> None:
    """From now on, until this process ends (a grading's child, a rank), nothing may read the
    reference solution: the checks above judge what the file holds once imported, this judges
    what runs. Any way of reaching it reads its file or runs its code (an import by a computed
    name in __init__, runpy, exec of its source, `self.__class__ = ...` of a class so found),
    which Python's audit events show: an `open` of a file in solutions/, an `exec` of code
    compiled from one."""
    global _guarded
    if _builds_on_the_reference(path):
        return
    if _guarded is None:
        sys.addaudithook(_audit)  # for the process's life: an audit hook cannot be removed
    _guarded = path


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _guarded is None or event not in ("open", "exec"):
        return
    if event == "open":
        target = args[0]
        if not isinstance(target, (str, bytes, os.PathLike)):
            return  # a file descriptor
        name = os.fsdecode(target)
    else:
        name = getattr(args[0], "co_filename", "")
        if name.startswith("<"):
            return
    if _in_solutions(os.path.abspath(name)):
        with contextlib.suppress(ValueError):  # its compiled copy: the source is what is meant
            name = importlib.util.source_from_cache(name)
        raise UsesReference(
            f"your code reached the reference solution while the checks ran "
            f"({display_path(Path(name))}). Write your own; the grader checks your code, not "
            "the reference."
        )


@functools.cache
def _solutions() -> tuple[str, ...]:
    """solutions/ as a prefix, as written and with symbolic links followed."""
    from norm_katas.content.registry import ROOT

    folder = ROOT / "solutions"
    return tuple(
        {os.path.join(os.path.abspath(folder), ""), os.path.join(os.path.realpath(folder), "")}
    )


def _in_solutions(name: str) -> bool:
    return name.startswith(_solutions())


def _defined_in(value: object) -> Path | None:
    """The file a module, class or function was defined in, if it has one."""
    if isinstance(value, ModuleType):
        file = getattr(value, "__file__", None)
    elif isinstance(value, type) or callable(value):
        module = sys.modules.get(getattr(value, "__module__", None) or "")
        file = getattr(module, "__file__", None)
    else:
        return None
    return Path(file).resolve() if file else None


def display_path(path: Path) -> str:
    """Show paths inside the repo relative to it, as a learner would type them."""
    from norm_katas.content.registry import ROOT

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
            shown = display_path(self.path)
            defined = [n for n in vars(self._module) if not n.startswith("_")]
            close = difflib.get_close_matches(name, defined, n=1, cutoff=0.6)
            close += [n for n in defined if n.lower() == name.lower()][:1]  # LAYERNORM
            if close:
                says = f"{shown} defines no `{name}`, but it defines `{close[0]}`: rename it "
                says += f"{name}, the name the kata expects."
            else:
                says = f"{shown} defines no `{name}`. The kata expects {name} by that name; "
                says += "check its spelling."
            raise MissingName(says, pytrace=False) from None
