"""Grade a file in a child process, so that nothing the learner's code does can take the grader
down with it, and so that a long-lived parent grades each save without importing torch again.

The parent imports torch, pytest, the plugin and the kata suites once (`warm_up`); each grading
then runs in a child forked from it. os._exit, a segfault, an endless loop or a huge allocation
in the learner's code cost that child only. The parent never initialises CUDA, so a child may;
where fork is unavailable or unsafe, the child is a fresh interpreter instead.

The jobs, one module each: warm (warm_up and preload: what every grading imports, once),
parent (grade: a child's end made a verdict, a stall told by where it was), launch (the child
forked or spawned, and waited for) and child (what runs in it: pytest set up for grading).
Callers use this package's names: `runner.grade`, `runner.warm_up`, ...; the self-tests patch
them here, where every caller looks them up.
"""

from norm_katas.engine.request import GRADER_FAILED, NOT_SOLVED, SOLVED, USAGE
from norm_katas.engine.runner.child import child_main
from norm_katas.engine.runner.parent import Graded, GraderError, grade, missing_requirements
from norm_katas.engine.runner.warm import preload, warm_up
from norm_katas.runtime.processes import exit_process

__all__ = [
    "GRADER_FAILED",
    "NOT_SOLVED",
    "SOLVED",
    "USAGE",
    "Graded",
    "GraderError",
    "child_main",
    "exit_process",
    "grade",
    "missing_requirements",
    "preload",
    "warm_up",
]
