"""--report-json: the verdict's file, written as the grading goes."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO

from norm_katas.engine.report import Report, unstarted_json
from norm_katas.runtime import limits


class JsonReport:
    """--report-json: the verdict as JSON, written again as the grading goes; the runner reads
    it (and its modification time, as a sign of progress)."""

    def __init__(self, path: Path | None, hints: int) -> None:
        self.path = path
        self.hints = hints
        self.writes = True  # False in a worker sharing the checks: it only touches the file
        self._dump: IO[str] | None = None
        if path is not None:
            # The runner asks for this process's stack when a grading stops making progress.
            self._dump = limits.register_dump(path.with_suffix(".stack"))

    def write(self, report: Report | None, grader_errors: list[str]) -> None:
        if self.path is None or not self.writes:
            return
        if report is not None:
            data = report.to_json(hints=self.hints)
        else:  # nothing to grade with: only the grader's own errors, if any
            data = unstarted_json(grader_errors)
        self.path.write_text(json.dumps(data, indent=2))

    def touch(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.utime(self.path)
