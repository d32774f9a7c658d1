"""The commands we suggest, as this learner types them: nox's sessions in a clone (the
repository's main door), `python -m norm_katas` in a clone when that is what was typed, the
`norm-katas` console script in a copy installed with pip, and the %kata magics in a notebook
(a request's `door` says which door it came through)."""

from __future__ import annotations

import os

from norm_katas.content import registry

TERMINAL, NOTEBOOK = "terminal", "notebook"  # a Request's door
SESSIONS = {
    "progress": "progress", "today": "today", "mock": "mock", "reset": "reset",
    "solution": "solution",
}  # fmt: skip


# In a notebook: the magics that do what the command does (%kata NAME starts a cell that
# grades itself). reset and solution have none: they are typed in a terminal.
MAGICS = {
    "grade": "%kata", "progress": "%kata_progress", "today": "%kata_today", "mock": "%kata_mock",
}  # fmt: skip


def via_nox() -> bool:
    """Whether a nox session started this command (noxfile.run_practice says where from)."""
    return "NORM_KATAS_INVOKED_FROM" in os.environ


def command(name: str, *args: str, where: str = TERMINAL) -> str:
    """The command line for `name` (grade, progress, today, mock, reset, solution) with its
    arguments: command("grade", "layernorm", "--hints") is `nox -s kata-layernorm -- --hints`
    in a clone and `norm-katas grade layernorm --hints` installed; in a notebook, progress is
    `%kata_progress`."""
    if where == NOTEBOOK and name in MAGICS:
        return " ".join((MAGICS[name], *args))
    if registry.INSTALLED:
        return " ".join(("norm-katas", name, *args))
    if not via_nox():  # a clone, the command typed as `python -m norm_katas ...`
        return " ".join(("python -m norm_katas", name, *args))
    if name == "grade":
        session, rest = f"kata-{args[0]}", args[1:]
    else:
        session, rest = SESSIONS[name], args
    return " ".join((f"nox -s {session}", *(("--", *rest) if rest else ())))


def option(flags: str, where: str = TERMINAL) -> str:
    """Grading options to add to the command just run: `-- --all` after nox, `--all` installed,
    after `python -m norm_katas grade` and after a cell's `%%kata NAME`."""
    return f"-- {flags}" if where == TERMINAL and via_nox() and not registry.INSTALLED else flags


def default_impl() -> str:
    """What --impl grades when it is not given, as --help says it: the file in katas/ in a
    clone, the workspace's file (`norm-katas init`) installed."""
    if registry.INSTALLED:
        return "your workspace's <kata>.py (default)"
    return "katas/<kata>.py (default)"


def install(package: str, kata: str, executable: str, where: str = TERMINAL) -> str:
    """How to install a package a grading needs: nox installs it in a clone; installed, pip
    into the Python that grades; in a notebook, %pip into its kernel."""
    if where == NOTEBOOK:
        return f"To install it, run `%pip install '{package}'` in a cell, then grade again."
    pip = f"run `{executable} -m pip install '{package}'`"
    if registry.INSTALLED:
        return f"To install it, {pip}."
    return (
        f"`nox -s kata-{kata}` installs it into the grading environment; with "
        f"NORM_KATAS_TORCH=system, or grading with your own Python, {pip}."
    )


def prog(name: str) -> str:
    """What a command's own options follow, for its usage line: `nox -s mock --` in a clone,
    `norm-katas mock` installed or `python -m norm_katas mock` typed so."""
    return f"{command(name)} --" if via_nox() and not registry.INSTALLED else command(name)
