"""Ranks joined by torch.distributed, for the checks of a distributed layer (SyncBatchNorm).

As pytest-xdist splits its worker, its controller and its scheduling, each side here lives in
a module of its own:

- rank: what runs on each rank (a process joined to the others by gloo, or nccl): it loads the
  learner's file, runs what the grading process sends, and makes every collective of the
  learner's wait until all the ranks of its group agree on it, so that a collective one rank
  skips is reported as the deadlock it would be, never hangs.
- world: the World that starts the ranks from the grading process, runs a function on all of
  them and brings back a RankReport per rank, and stops them (a stuck one by its pid).
- verdict: what the reports mean for the learner: expect_ranks_ok fails with the first problem
  of any rank (an exception at the learner's line, a deadlock, a rank stuck for good).
- scenario: what a suite declares (WorldSpec: how many ranks, the process groups, the class the
  ranks build, the forbidden built-ins) and the scenarios its checks run on them, against
  torch's BatchNorm on the global batch.

A suite imports what it needs from here, never from the modules.
"""

from norm_katas.checks.distributed.rank import Mistake, RankContext
from norm_katas.checks.distributed.scenario import GlobalBatchNorm, Scenario, WorldSpec
from norm_katas.checks.distributed.verdict import divergence, expect_ranks_ok, raised
from norm_katas.checks.distributed.world import RankReport, World, WorldError

__all__ = [
    "GlobalBatchNorm",
    "Mistake",
    "RankContext",
    "RankReport",
    "Scenario",
    "World",
    "WorldError",
    "WorldSpec",
    "divergence",
    "expect_ranks_ok",
    "raised",
]
