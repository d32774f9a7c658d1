"""A slow suite's checks shared between the grading's process and one forked worker.

Triton's interpreter runs a kernel one program at a time, in Python: triton-layernorm's checks
take a second of CPU time, where watch mode means to answer within half of one. A suite that
declares `Suite(shards=2)` has its checks run by two processes at once, wherever that is safe; every
other grading, and this one wherever it is not, runs its checks one after another as before.

The jobs, one module each, as pytest-xdist splits its own: scheduling (whether to share, and
which check runs where), worker (the forked process: runs its checks, sends each back), and
controller (this process: runs its own, prints the checklist in order, and ends the grading
as one process would have).
"""

from norm_katas.engine.shards.controller import run
from norm_katas.engine.shards.scheduling import asked

__all__ = ["asked", "run"]
