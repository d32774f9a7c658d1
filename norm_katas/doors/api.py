"""norm_katas.check(kata, code, *options): grade code from plain Python, in a notebook or a
script, as a %%kata cell is graded: written to a file (the history's notebook/<kata>/), graded
in a child process by the same suites, recorded as mode "notebook".

What is graded, by `code`:
- a class or function, or a list of them, defined in a module that is a file: that file;
- one defined in __main__ (a notebook's cells, or the script being run): its source, with the
  source of every class and function of __main__ it uses, the imports of the modules and names
  it uses, and the simple constants (numbers, strings) it reads. The kata's other names found
  there go too (a kata of two classes needs both). The rest of the notebook or script does not
  run in the grading: no training loop, and no check() calling itself;
- a module: its file; a path (pathlib.Path): that file; a str: that source;
- nothing: the names the kata's stub defines, taken from where check() was called.

It returns a Verdict, which a notebook shows as the %%kata verdict (HTML) and a console as the
terminal's report (text); outside IPython the report is printed as well.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import html
import inspect
import linecache
import os
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from norm_katas.content import pristine, registry
from norm_katas.doors import cells, render
from norm_katas.engine import suggest
from norm_katas.engine.request import GRADER_FAILED, USAGE, Request, UsageError

INTERRUPTED = 130  # as the command line's Ctrl-C


class SourceError(Exception):
    """The code to grade could not be found; str() says what to pass instead."""


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One grading by norm_katas.check: `code` is the grade command's exit status (0 solved,
    1 not solved, 2 usage, 3 grader failed), `report` the checks (None when nothing ran)."""

    kata: str
    code: int
    text: str  # the terminal's report, or the message
    html: str
    report: Any = None
    file: Path | None = None  # the file graded

    @property
    def solved(self) -> bool:
        """The interview core passes (with --strict: torch parity too)."""
        return self.code == 0

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        said = {0: "solved", 1: "not solved", USAGE: "not graded (usage)"}
        return f"<norm-katas verdict on {self.kata}: {said.get(self.code, 'not graded')}>"

    def _repr_html_(self) -> str:
        return self.html

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text.rstrip("\n"))


def check(kata: str, code: object, options: tuple[str, ...], caller: dict[str, Any]) -> Verdict:
    """norm_katas.check: `caller` is the namespace it was called from."""
    verdict = _check(kata, code, options, caller)
    if not _in_ipython():  # a script or a plain REPL: nothing displays a returned object
        print(verdict.text.rstrip("\n"), file=sys.stdout if verdict.code < USAGE else sys.stderr)
    return verdict


def _check(name: str, code: object, options: tuple[str, ...], caller: dict[str, Any]) -> Verdict:
    def refused(message: str, status: int = USAGE) -> Verdict:
        markup = f'<pre class="nk-bad" style="color:#cf222e">{html.escape(message)}</pre>'
        return Verdict(str(name), status, message, markup)

    try:
        kata = registry.get(str(name))
    except KeyError as e:
        return refused(str(e.args[0]))
    prog = f"norm_katas.check({kata.name!r})"
    if bad := [o for o in options if not isinstance(o, str)]:
        return refused(
            f"{prog}: options are strings, as the grade command takes them "
            f"(norm_katas.check({kata.name!r}, LayerNorm, '--hints')), not {bad[0]!r}."
        )
    for option in options:
        if (flag := option.split("=")[0]) in cells.NOT_HERE or flag == "--watch":
            return refused(f"{prog}: {flag} does not apply here: the code passed is graded.")
    from norm_katas.engine import options as grading_options

    if grading_options.wants_help(list(options)):
        return refused(grading_options.help_text(prog), 0)
    try:
        source = source_of(kata, code, caller)
    except SourceError as e:
        return refused(str(e))
    where = cells.folder(kata)
    where.mkdir(parents=True, exist_ok=True)
    path = where / kata.file
    path.write_text(source if source.endswith("\n") else source + "\n", encoding="utf-8")
    try:
        request = Request.parse(kata, [*options, "--impl", str(path)], prog=prog, base=where)
    except UsageError as e:
        return refused(str(e))
    request = dataclasses.replace(request, door=suggest.NOTEBOOK)
    try:
        outcome, said = cells.grade_logged(request, cells.MODE)
    except KeyboardInterrupt:
        return refused("Grading interrupted: nothing was recorded.", INTERRUPTED)
    markup = render.verdict(request, outcome.code, outcome.report, said, cell=False)
    text = said if said.strip() or outcome.code != GRADER_FAILED else "The grader failed."
    return Verdict(kata.name, outcome.code, text, markup, outcome.report, path)


def _in_ipython() -> bool:
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return get_ipython() is not None


# -- the source to grade --------------------------------------------------------------------


def source_of(kata: registry.Kata, code: object, caller: dict[str, Any]) -> str:
    """The file to grade for `code` (see the module's docstring)."""
    if isinstance(code, str):
        return code
    if isinstance(code, os.PathLike):
        try:
            return Path(code).read_text(encoding="utf-8")
        except OSError as e:
            raise SourceError(f"Could not read {code}: {e.strerror or e}.") from None
    if isinstance(code, ModuleType):
        return _module_file(code)
    names = _stub_names(kata)
    if code is None:
        objects = [caller[n] for n in names if _defined(caller.get(n))]
        if not objects:
            raise SourceError(
                f"No {' or '.join(names)} here to grade: define it, then pass it, as in "
                f"norm_katas.check({kata.name!r}, {names[0] if names else 'YourClass'})."
            )
    else:
        objects = list(code) if isinstance(code, list | tuple) else [code]
    for obj in objects:
        if not _defined(obj):
            raise SourceError(
                f"norm_katas.check({kata.name!r}, ...) grades a class or function, a module, a "
                f"path (pathlib.Path) or source code (a str); not {type(obj).__name__} {obj!r}."
            )
    module = sys.modules.get(objects[0].__module__)
    if module is not None and module.__name__ != "__main__" and getattr(module, "__file__", None):
        return _module_file(module)  # a module of the learner's: its whole file
    namespace = vars(module) if module is not None else caller
    roots = {obj.__name__: obj for obj in objects}
    for name in names:  # the kata's other names defined beside it
        if name not in roots and _defined(found := namespace.get(name)) and _main(found):
            roots[name] = found
    return _assemble(roots, namespace)


def _defined(obj: object) -> bool:
    return inspect.isclass(obj) or inspect.isfunction(obj)


def _main(obj: object) -> bool:
    return getattr(obj, "__module__", None) == "__main__"


def _stub_names(kata: registry.Kata) -> list[str]:
    """The classes and functions the kata's stub defines: what its suite imports."""
    try:
        tree = ast.parse(pristine.text(kata))
    except (pristine.StubError, SyntaxError):
        return []
    kinds = (ast.ClassDef, ast.FunctionDef)
    return [n.name for n in tree.body if isinstance(n, kinds) and not n.name.startswith("_")]


def _module_file(module: ModuleType) -> str:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):
        raise SourceError(
            f"The module {module.__name__} has no source file to grade: pass its classes, or "
            "its source as a str."
        ) from None


def _source(obj: Any) -> str:
    """inspect.getsource, and where it fails (a class defined in a notebook's cell: __main__
    has no file there), the class found in its methods' cell, which IPython keeps in
    linecache."""
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        pass
    for member in vars(obj).values() if inspect.isclass(obj) else ():
        function = getattr(member, "__func__", member)  # classmethod, staticmethod
        function = getattr(function, "fget", function)  # property
        if (code := getattr(function, "__code__", None)) is None:
            continue
        lines = linecache.getlines(code.co_filename)
        try:
            tree = ast.parse("".join(lines))
        except SyntaxError:  # a cell with magics in it: IPython transformed what it ran
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ClassDef)
                and node.name == obj.__name__
                and node.lineno <= code.co_firstlineno <= (node.end_lineno or 0)
            ):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                return textwrap.dedent("".join(lines[start - 1 : node.end_lineno]))
    raise SourceError(
        f"The source of {obj.__name__} cannot be found (a class with no method, or code "
        "made by exec): pass its source as a str, or a file as a pathlib.Path."
    )


def _free_names(source: str) -> list[str]:
    """The names a definition reads that it does not bind itself, in order of first use."""
    tree = ast.parse(source)
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    top = tree.body[0] if tree.body else None
    own = {top.name} if isinstance(top, ast.ClassDef | ast.FunctionDef) else set()
    used = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return [n for n in dict.fromkeys(used) if n not in bound | own and not hasattr(builtins, n)]


def _assemble(roots: dict[str, Any], namespace: dict[str, Any]) -> str:
    """The roots' sources, after what they use: imports, constants, other definitions."""
    imports: list[str] = []
    constants: list[str] = []
    blocks: dict[str, str] = {}
    visiting: set[str] = set()

    def add(name: str, obj: Any) -> None:
        if name in blocks or name in visiting:
            return
        visiting.add(name)
        source = _source(obj)
        for used in _free_names(source):
            if used not in namespace or used in blocks:
                continue
            value = namespace[used]
            if isinstance(value, ModuleType):
                line = f"import {value.__name__}" + (
                    f" as {used}" if value.__name__ != used else ""
                )
                imports.append(line)
            elif _defined(value) and _main(value):
                add(used, value)
            elif (home := getattr(value, "__module__", None)) and getattr(
                sys.modules.get(home), getattr(value, "__name__", ""), None
            ) is value:
                alias = f" as {used}" if value.__name__ != used else ""
                imports.append(f"from {home} import {value.__name__}{alias}")
            elif isinstance(value, bool | int | float | str | bytes | type(None)):
                constants.append(f"{used} = {value!r}")
            # Anything else (a tensor, an instance) stays behind: if the code needs it, loading
            # the file fails with a NameError that names it.
        visiting.discard(name)
        blocks[name] = source.rstrip("\n")

    for name, obj in roots.items():
        add(name, obj)
    head = (
        '"""Graded by norm_katas.check: ' + ", ".join(roots) + ", with what "
        f"{'they use' if len(roots) > 1 else 'it uses'}, from where they were defined." + '"""'
    )
    # Annotations are not evaluated: a name only an annotation reads need not be carried.
    head += "\n\nfrom __future__ import annotations"
    parts = [head, "\n".join(dict.fromkeys(imports)), "\n".join(dict.fromkeys(constants))]
    return "\n\n".join(p for p in [*parts, *blocks.values()] if p) + "\n"
