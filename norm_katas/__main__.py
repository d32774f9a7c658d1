"""The one command line, `python -m norm_katas` (and `norm-katas` once installed with pip):
the learner's commands (norm_katas.doors.cli) and the authors' (norm_katas.authoring.cli)."""

from __future__ import annotations

import sys

from norm_katas.authoring import cli as authors
from norm_katas.doors import cli
from norm_katas.engine import runner

COMMANDS = {**cli.COMMANDS, **authors.COMMANDS}


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, COMMANDS, usage=f"{cli.USAGE}\n{authors.USAGE}")


def run() -> None:
    """The `norm-katas` command that pip installs."""
    cli.installed_as("norm-katas")
    authors.USAGE = authors.USAGE.replace("python -m norm_katas", "norm-katas")
    runner.exit_process(main(sys.argv[1:]))


if __name__ == "__main__":
    runner.exit_process(main(sys.argv[1:]))
