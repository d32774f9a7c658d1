"""The kata notebooks: one Jupyter notebook per kata, generated from the registry and the stubs.

Two copies of each, as for the stubs:
- stubs/notebooks/<stem>.ipynb is the tool's pristine copy (shipped with the stubs), written by
  `python -m norm_katas notebooks --write`; a self-test fails when one is out of date;
- notebooks/<stem>.ipynb, in a clone, is the learner's working copy, as katas/ holds their kata
  files: a fresh clone (and Colab's link) opens the pristine copy committed there. No repository
  check reads the learner's copy to judge it, and `--write` replaces it only where it is
  missing or still the pristine copy it replaces; `reset NAME --notebook` restores it, backing
  it up first.

Each notebook opens as is in JupyterLab, VS Code or Colab (its badge): a first cell that loads
the %kata magics (a clone's own copy, or norm-katas installed with pip where the kernel has
none), the kata's teaching text as Markdown, and its stub in a `%%kata` cell, which grades
itself when run. The notebooks are written as nbformat writes them, without needing it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from norm_katas.authoring import record
from norm_katas.content import pristine, registry
from norm_katas.doors import magics

WRITE_COMMAND = "python -m norm_katas notebooks --write"
# pip installs norm-katas from the published repository, and the Colab badges open it there:
# registry.SETTING, empty until it is set deliberately; then run WRITE_COMMAND again.
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
FOLDER, PRISTINE = pristine.NOTEBOOKS, pristine.PRISTINE_NOTEBOOKS  # as the messages name them


def setup_cell(kata: registry.Kata) -> str:
    """The first cell: the magics loaded, norm-katas (and the kata's extras) installed first
    where this kernel lacks them: from the published repository once its address is set;
    until then the cell says how to install it from a clone or a wheel, and stops."""
    address = registry.repository()
    lines = [
        "# Run this first: it loads norm-katas' %kata magics. Opened in a clone, it uses the",
        "# clone's copy; elsewhere (Colab, say) it installs norm-katas with pip if it is missing."
        if address
        else "# clone's copy; elsewhere norm-katas must be installed in this kernel first.",
        "import importlib.util",
        "import pathlib",
        "import sys",
        "",
        'clone = pathlib.Path.cwd().parent  # when this is a clone\'s "notebooks" folder',
        'if (clone / "norm_katas" / "__init__.py").is_file() and str(clone) not in sys.path:',
        "    sys.path.insert(0, str(clone))",
        'if importlib.util.find_spec("norm_katas") is None:',
    ]
    if address:
        lines.append(f'    %pip install --quiet "norm-katas @ git+{address}"')
    else:
        version = registry.read_toml(registry.ROOT / "pyproject.toml")["project"]["version"]
        wheel = f"norm_katas-{version}-py3-none-any.whl"  # the name `pip wheel` gives it
        lines += [f"    {line}" for line in MISSING.replace("WHEEL", wheel).splitlines()]
    for requirement in kata.requires:  # a kata's own extras, e.g. Triton
        module = re.match(r"[A-Za-z0-9_.-]+", requirement)[0].replace("-", "_")  # type: ignore[index]
        lines += [
            f'if importlib.util.find_spec("{module}") is None:',
            f'    %pip install --quiet "{requirement}"',
        ]
    lines += ["importlib.invalidate_caches()", "%load_ext norm_katas"]
    return "\n".join(lines)


# Where norm-katas is missing and no published repository is set: how to install it, said by
# an exception that stops the cell (and Run All) before %load_ext fails less clearly.
MISSING = """raise ModuleNotFoundError(
    "norm-katas is not installed in this kernel. Install it, then run this cell again:\\n"
    "- from a clone of norm-katas: %pip install /path/to/the/clone\\n"
    "- or from a wheel, built in a clone with `python -m pip wheel --no-deps . -w dist`:\\n"
    "  %pip install /path/to/WHEEL (in Colab, upload the wheel\\n"
    "  first: Files pane, Upload; it lands in /content/)\\n"
    "Or open this notebook from its clone's notebooks/ folder."
)"""


def introduction(kata: registry.Kata) -> str:
    badge = (
        f"[![Open In Colab]({BADGE})]({address})\n\n" if (address := registry.colab(kata)) else ""
    )
    return (
        f"# {kata.title}\n\n{badge}"
        f"A norm-katas kata ({kata.difficulty}, about {kata.minutes} minutes). Run the first "
        f"cell, read the task, write your code in the `%%kata {kata.name}` cell and run it: the "
        f"same hidden suite as `nox -s kata-{kata.name}` grades it, in a process of its own, "
        "and the verdict appears under the cell. Run it as often as you like; every grading "
        "is recorded."
    )


def device_note(kata: registry.Kata) -> str:
    note = (
        "## Your solution\n\n"
        "Write your code in the cell below, under its first line, and run it (Shift+Enter) to "
        f"grade it. Options go after the kata's name: `%%kata {kata.name} --hints` for a hint "
        "(`--hints 2` adds the formula), `--all` for every failure, `--strict` to require "
        "torch parity too.\n\n"
        "**On a GPU.** In Colab, choose *Runtime → Change runtime type → T4 GPU* (any GPU), "
        "run the first cell again, then grade on it with "
        f"`%%kata {kata.name} --device cuda`. Locally, that takes a CUDA build of torch. "
    )
    if kata.requires:  # a kernel kata: the GPU is what it is about
        note += (
            "Without a GPU the kernel runs in Triton's interpreter: the same checks, slower, "
            "and no bandwidth figure; `--perf` on a GPU measures it."
        )
    else:
        note += (
            "Without one, every check still runs, and the device check runs your module on "
            "simulated CUDA."
        )
    return note


def closing(kata: registry.Kata) -> str:
    return (
        "## Next\n\n"
        "`%kata_progress` shows your progress: attempts, solve times against the suggested "
        f"minutes, your most frequent mistakes. `%kata {kata.name}` starts a fresh cell from "
        f"the stub. `%kata_mock --kata {kata.name}` is a timed mock interview on it: "
        f"{kata.minutes} minutes, no hints, then the follow-up questions an interviewer asks."
    )


def cells(kata: registry.Kata) -> list[tuple[str, str, str]]:
    """(id, cell type, source) of each cell, in order."""
    return [
        ("introduction", "markdown", introduction(kata)),
        ("setup", "code", setup_cell(kata)),
        ("task", "markdown", magics.teaching(kata, standalone=False)),
        ("how-to-grade", "markdown", device_note(kata)),
        ("kata", "code", magics.cell_text(kata).rstrip("\n")),
        ("next", "markdown", closing(kata)),
        ("progress", "code", "%kata_progress"),
    ]


def build(kata: registry.Kata) -> dict[str, Any]:
    """The notebook, as nbformat 4.5 holds it."""
    made = []
    for cell_id, kind, source in cells(kata):
        cell: dict[str, Any] = {
            "cell_type": kind,
            "id": cell_id,
            "metadata": {},
            "source": source.splitlines(keepends=True),
        }
        if kind == "code":
            cell |= {"execution_count": None, "outputs": []}
        made.append(cell)
    metadata: dict[str, Any] = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    if kata.requires:  # Colab opens a kernel kata on a GPU runtime (its free one: a T4)
        metadata |= {"accelerator": "GPU", "colab": {"gpuType": "T4"}}
    return {"cells": made, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def text(kata: registry.Kata) -> str:
    """The notebook's file, as nbformat writes it (so that saving it in Jupyter changes little)."""
    return json.dumps(build(kata), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def problems() -> list[str]:
    """Each pristine notebook that is missing, out of date or of no kata, with what to do; and,
    in a clone, each learner's notebook that a fresh clone would not open as the pristine copy.
    A learner's notebook is never judged by what they wrote in it (see record.held)."""
    found = []
    expected = {kata.pristine_notebook: kata for kata in registry.load()}
    for file, kata in expected.items():
        current = _read(file)
        if current is None:
            found.append(f"{PRISTINE}/{file.name} is missing: run `{WRITE_COMMAND}`.")
        elif current != text(kata):
            found.append(
                f"{PRISTINE}/{file.name} differs from what its stub and katas.toml make: run "
                f"`{WRITE_COMMAND}` (a notebook there is generated; edit the stub instead)."
            )
        elif (
            not registry.INSTALLED
            and record.held(kata.notebook, pristine.blob_id(current)) is False
        ):
            found.append(
                f"{FOLDER}/{file.name} has never held {PRISTINE}/{file.name}, not now and not in "
                "any commit, so a fresh clone (and its Colab link) would open another notebook. "
                f"Run `nox -s reset -- {kata.name} --notebook` (your notebook is backed up "
                f"first), then commit {FOLDER}/{file.name}."
            )
    if pristine.notebook_folder().is_dir():
        for file in sorted(pristine.notebook_folder().glob("*.ipynb")):
            if file not in expected:
                found.append(f"{PRISTINE}/{file.name} is no kata's notebook: remove it.")
    return found


def write() -> list[str]:
    """Write every kata's pristine notebook, and in a clone the learner's copy where it is
    missing or still the pristine copy being replaced (untouched); a learner's notebook holding
    anything else is left as it is, and said so. Returns what was done, one line each."""
    pristine.notebook_folder().mkdir(parents=True, exist_ok=True)
    done = []
    for kata in registry.load():
        tool, wanted = kata.pristine_notebook, text(kata)
        before = _read(tool)
        if before != wanted:
            _write(tool, wanted)
            done.append(f"wrote {PRISTINE}/{tool.name}")
        if registry.INSTALLED:
            continue
        mine = kata.notebook
        current = _read(mine)
        if current == wanted:
            continue
        if current is None or current == before:
            _write(mine, wanted)
            was = "missing" if current is None else "untouched"
            done.append(f"wrote {FOLDER}/{mine.name} (it was {was})")
        else:
            done.append(
                f"left {FOLDER}/{mine.name} as it is: it holds your work. `nox -s reset -- "
                f"{kata.name} --notebook` makes it the new notebook, backing yours up first."
            )
    return done


def _read(file: Path) -> str | None:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write(file: Path, content: str) -> None:
    """Atomically: a notebook open in Jupyter never sees a half-written file."""
    file.parent.mkdir(parents=True, exist_ok=True)
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    tmp.write_text(content, encoding="utf-8", newline="\n")
    os.replace(tmp, file)
