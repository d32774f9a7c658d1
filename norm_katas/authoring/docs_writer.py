"""The documentation's generated parts (`python -m norm_katas docs [--write]`): README.md and
docs/*.md are prose around blocks that the tool writes, so that no example goes stale.

- `<!-- example: NAME -->` ... `<!-- /example -->`: a command and its output, produced by
  grading a real file (a catalogue file, a solution, a stub) through the real grader, or by
  running the command itself (on a history seeded for it, on a fixed day, where the command
  reads the history); volatile parts (this clone's folder, temp folders) normalised.
- `<!-- generated: NAME -->` ... `<!-- /generated -->`: text made from the registry or the
  settings: the katas' page, the clone and pip lines (from [tool.norm-katas] repository: a
  placeholder that is obviously one until the address is set, never a guessed address).
- the README's kata table, between its own markers (the same text new-kata writes).

Without --write the command checks them: each stale block is named, exit 1. A self-test
(tests/selftest/test_docs.py) runs the same check through the self-tests' warm grader.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from norm_katas.content import registry

# Block markers: the opening comment may say more after the name; the closing one is fixed.
BLOCK = re.compile(
    r"(?P<open><!-- (?P<kind>example|generated): (?P<name>[\w-]+)[^\n]*-->\n)"
    r"(?P<body>.*?)(?P<close><!-- /(?P=kind) -->)",
    re.DOTALL,
)
COMMAND = "python -m norm_katas docs --write"
# The README's kata table, between its markers (new-kata writes it too).
TABLE = re.compile(r"(<!-- kata-table:[^\n]*-->\n).*?(\n<!-- /kata-table -->)", re.DOTALL)
PLACEHOLDER = "<the repository URL>"

# (kata, arguments) -> (what the grading printed, its exit status)
Grader = Callable[[str, list[str]], tuple[str, int]]


@dataclass(frozen=True)
class Example:
    """`python -m norm_katas <args>`, shown with its output and exit status."""

    args: tuple[str, ...]
    grades: bool = True  # a grading (through the warm grader); else run in-process, no torch
    # Run on a throwaway history that this seeds, on DEMO_DAY (the practice commands' examples)
    history: Callable[[], None] | None = None

    @property
    def command(self) -> str:
        return "python -m norm_katas " + " ".join(self.args)


# The day the practice examples are run on, and the history they read: three weeks of a
# learner's practice before it, as history.record writes it.
DEMO_DAY = datetime(2026, 3, 10, 9, 0, tzinfo=timezone.utc)


def demo_history() -> None:
    """A learner's three weeks: what docs/practice.md's `today` example reads."""
    from norm_katas.practice import history

    def at(days: float, minutes: float = 0) -> datetime:
        return DEMO_DAY - timedelta(days=days) + timedelta(minutes=minutes)

    def mocked(kata: str, days: float, minutes: float, budget: int, solved: bool = True) -> None:
        history.record(kata, "mock", 20 if solved else 12, 20, [], seconds=minutes * 60,
                       budget=budget * 60, mock_id=f"{kata}-{days}", at=at(days))  # fmt: skip

    # LayerNorm: solved in practice three weeks ago, then two mocks in time.
    history.record("layernorm", "practice", 17, 17, [], at=at(21))
    mocked("layernorm", 19, 12, 15)
    mocked("layernorm", 9, 14, 15)
    # Dropout: failed twice yesterday, on the scale of the values it keeps.
    for minutes in (0, 6):
        history.record("dropout", "practice", 15, 18, ["test_kept_values_scaled"],
                       headline="test_kept_values_scaled", at=at(1, minutes))  # fmt: skip
    # BatchNorm: solved four days ago after asking for a hint on the running variance.
    history.record("batchnorm", "practice", 20, 25, ["test_running_var_unbiased"],
                   headline="test_running_var_unbiased", hints=1, at=at(4))  # fmt: skip
    history.record("batchnorm", "practice", 25, 25, [], hints=1, at=at(4, 25))
    # GroupNorm: the solution read two days ago, before trying it.
    history.record("groupnorm", "peek", at=at(2))
    # RMSNorm: three mocks, each in under half the suggested ten minutes.
    for days in (20, 12, 3):
        mocked("rmsnorm", days, 4, 10)


LAYERNORM_WRONG = "tests/catalogue/layernorm/unbiased_variance.py"
EXAMPLES = {
    # README and grading.md: a LayerNorm that divides by N - 1.
    "report": Example(("grade", "layernorm", "--impl", LAYERNORM_WRONG)),
    "hints": Example(("grade", "layernorm", "--impl", LAYERNORM_WRONG, "--hints", "2", "-x")),
    "stub": Example(("grade", "rmsnorm", "--impl", "stubs/rmsnorm.py")),
    "solved": Example(("grade", "rmsnorm", "--impl", "solutions/rmsnorm.py")),
    "broken": Example(("grade", "layernorm", "--impl", "tests/catalogue/broken/syntax_error.py")),
    "endless": Example(
        (
            "grade",
            "layernorm",
            "--impl",
            "tests/catalogue/broken/infinite_loop.py",
            "-x",
            "--timeout",
            "1",
        )
    ),
    "tests-report": Example(
        (
            "grade",
            "layernorm",
            "--tests",
            "--impl",
            "tests/catalogue/layernorm/tests/one_allclose.py",
        )
    ),
    "tests-stub": Example(
        ("grade", "layernorm", "--tests", "--impl", "stubs/tests/test_layernorm.py")
    ),
    "usage": Example(("grade", "layernorm", "--timeout", "abc"), grades=False),
    "help": Example(("grade", "layernorm", "--help"), grades=False),
    # practice.md: what to practise today, on DEMO_DAY, from demo_history.
    "today": Example(("today",), grades=False, history=demo_history),
    "today-minutes": Example(("today", "--minutes", "45"), grades=False, history=demo_history),
}


def _normalise(text: str, scratch: list[str]) -> str:
    """What changes from run to run or clone to clone: this clone's folder, temp folders."""
    for folder in scratch:
        text = text.replace(folder, "/tmp/...")
    text = text.replace(f"{registry.ROOT}/", "")
    text = re.sub(r"/tmp/[\w.-]+(/[\w.-]+)*", "/tmp/...", text)
    return "\n".join(line.rstrip() for line in text.splitlines())


def _run_in_process(args: tuple[str, ...]) -> tuple[str, int]:
    """A command that needs no torch (a usage error, --help), run as `main` runs it."""
    from norm_katas.doors import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(list(args))
    return out.getvalue(), code


@contextlib.contextmanager
def _seeded(seed: Callable[[], None]) -> Iterator[None]:
    """A throwaway history that `seed` fills, read on DEMO_DAY, with the commands suggested as
    typed in a clone (`python -m norm_katas`): never the learner's history, nor this day's."""
    from norm_katas.practice import schedule

    names = ("NORM_KATAS_DATA", "NORM_KATAS_INVOKED_FROM", "NORM_KATAS_WORKSPACE")
    saved = {name: os.environ.get(name) for name in names}
    with tempfile.TemporaryDirectory(prefix="norm-katas-example-") as scratch:
        try:
            for name in names:
                os.environ.pop(name, None)
            os.environ["NORM_KATAS_DATA"] = scratch
            seed()
            with schedule.frozen(DEMO_DAY):
                yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def example(name: str, grade: Grader) -> str:
    """The block's text: the command, its output and its exit status, as a console shows them."""
    spec = EXAMPLES[name]
    if spec.grades:
        output, code = grade(spec.args[1], list(spec.args[2:]))
    elif spec.history is not None:
        with _seeded(spec.history):
            output, code = _run_in_process(spec.args)
    else:
        output, code = _run_in_process(spec.args)
    body = _normalise(output, [tempfile.gettempdir()]).strip("\n")
    return f"```console\n$ {spec.command}\n{body}\n$ echo $?\n{code}\n```\n"


def client_grader(client: object, scratch: Path) -> Grader:
    """Grade through a warm grading server (engine.server.Client), as the self-tests do."""
    from norm_katas.engine.request import Request

    count = iter(range(10_000))

    def grade(kata: str, args: list[str]) -> tuple[str, int]:
        out = scratch / f"out{next(count)}.txt"
        code = client.grade(Request.parse(registry.get(kata), args), out)  # type: ignore[attr-defined]
        return (out.read_text(encoding="utf-8") if out.exists() else ""), code

    return grade


# --- generated from the registry and the settings ---------------------------------------


def clone_lines() -> str:
    """The quick start's first lines: clone, then into the folder."""
    address = registry.repository()
    if address is None:
        return (
            f"```console\ngit clone {PLACEHOLDER} norm-katas\ncd norm-katas\n```\n\n"
            f"`{PLACEHOLDER}` is a placeholder: norm-katas is not published yet, so use the "
            "address you were given.\n"
        )
    name = address.rsplit("/", 1)[1]
    return f"```console\ngit clone {address}.git\ncd {name}\n```\n"


def pip_line() -> str:
    """pip's line for the door without a clone."""
    address = registry.repository()
    source = f"git+{address}" if address else f"git+{PLACEHOLDER}"
    return (
        "```console\n"
        f"pip install {source}   # or, in a clone: pip install .\n"
        "norm-katas init                # the stubs to edit, in ./norm-katas (or: init DIR)\n"
        "cd norm-katas\n"
        "norm-katas grade layernorm     # as nox -s kata-layernorm; the same options\n"
        "norm-katas watch layernorm     # as nox -s kata-layernorm -- --watch\n"
        "```\n"
    )


def _summary(kata: registry.Kata) -> str:
    """The stub's "What it is" paragraph: what the kata asks, in the kata's own words."""
    text = kata.pristine.read_text(encoding="utf-8")
    found = re.search(r"What it is\n-+\n(.*?)(?:\n\s*\n|\"\"\")", text, re.DOTALL)
    return " ".join(found[1].split()) if found else ""


def katas_page() -> str:
    """docs/katas.md's list: one section per kata of the registry."""
    parts = []
    for k in registry.load():
        colab = registry.colab(k)
        notebook = f"`{registry.notebook(k)}`" + (f" ([Colab]({colab}))" if colab else "")
        parts.append(
            f"## {k.title}\n\n"
            f"{_summary(k)}\n\n"
            f"- **{k.difficulty}**, about {k.minutes} minutes\n"
            f"- grade it: `nox -s kata-{k.name}` (or `norm-katas grade {k.name}`); "
            f"edit `katas/{k.file}`\n"
            f"- notebook: {notebook} (or `%kata {k.name}` in any notebook)\n"
            + (f"- needs: {', '.join(f'`{r}`' for r in k.requires)}\n" if k.requires else "")
        )
    return "\n".join(parts)


def generated(name: str) -> str:
    makers: dict[str, Callable[[], str]] = {
        "clone": clone_lines,
        "pip": pip_line,
        "katas": katas_page,
    }
    if name not in makers:
        raise KeyError(f"no generated block named {name!r}; the names: {', '.join(makers)}")
    return makers[name]()


# --- the files ---------------------------------------------------------------------------


def files() -> list[Path]:
    return [registry.ROOT / "README.md", *sorted((registry.ROOT / "docs").glob("*.md"))]


def _fill(text: str, grade: Grader, cache: dict[str, str]) -> str:
    def block(m: re.Match[str]) -> str:
        key = f"{m['kind']}:{m['name']}"
        if key not in cache:
            if m["kind"] == "example":
                if m["name"] not in EXAMPLES:
                    raise KeyError(f"no example named {m['name']!r}; the names: {list(EXAMPLES)}")
                cache[key] = example(m["name"], grade)
            else:
                cache[key] = generated(m["name"])
        return m["open"] + cache[key] + m["close"]

    text = BLOCK.sub(block, text)
    return TABLE.sub(lambda m: m[1] + registry.kata_table() + m[2], text)


def write_generated() -> list[str]:
    """Rewrite only the blocks made from the registry and settings (no grading): what
    new-kata calls after adding a kata's entry. Returns what it wrote, for the author."""
    done = []
    for path in files():
        text = path.read_text(encoding="utf-8")
        fresh = BLOCK.sub(
            lambda m: (
                m[0] if m["kind"] == "example" else m["open"] + generated(m["name"]) + m["close"]
            ),
            text,
        )
        if fresh != text:
            path.write_text(fresh, encoding="utf-8", newline="\n")
            done.append(f"updated the generated text in {path.relative_to(registry.ROOT)}")
    return done


def stale(grade: Grader) -> dict[Path, str]:
    """Each file whose generated blocks differ from what they would be now, with that text."""
    cache: dict[str, str] = {}
    found = {}
    for path in files():
        text = path.read_text(encoding="utf-8")
        fresh = _fill(text, grade, cache)
        if fresh != text:
            found[path] = fresh
    return found


def names_used() -> set[str]:
    """Every example named in README.md and docs/*.md."""
    return {
        m["name"]
        for path in files()
        for m in BLOCK.finditer(path.read_text(encoding="utf-8"))
        if m["kind"] == "example"
    }


def grader_env(scratch: str) -> dict[str, str]:
    """The examples' gradings: recorded in a throwaway history, never the learner's, and
    graded as `python -m norm_katas` typed in a clone (not through nox, which offers options
    after `--`), so that each output is what its command prints."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "NORM_KATAS_INVOKED_FROM"}
    return {**env, "NORM_KATAS_DATA": scratch, "NORM_KATAS_PERF_BUDGET_S": "0"}


def run(write: bool) -> int:
    """The command: check (exit 1 when stale) or write the generated blocks."""
    from norm_katas.engine import server

    with tempfile.TemporaryDirectory(prefix="norm-katas-docs-") as scratch:
        client = server.Client(env=grader_env(scratch))
        if client.error:
            print(f"the grading server could not start:\n{client.error}")
            return 3
        try:
            found = stale(client_grader(client, Path(scratch)))
        finally:
            client.close()
    shown = [str(path.relative_to(registry.ROOT)) for path in found]
    if write:
        for path, text in found.items():
            path.write_text(text, encoding="utf-8", newline="\n")
        print("\n".join(f"wrote {name}" for name in shown) or "every example is current")
        return 0
    if found:
        print(f"stale examples or generated text in {', '.join(shown)}: run `{COMMAND}`")
        return 1
    print("every example and generated block is current")
    return 0
