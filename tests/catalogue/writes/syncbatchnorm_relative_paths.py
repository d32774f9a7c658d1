"""Correct, but writes by relative paths at import and in forward, as careless code does: notes,
a checkpoint, and files named like the repository's own (test_isolation grades it from a copy
of the repository, which must not change: the grader runs it in a scratch folder)."""

import os
from pathlib import Path

import torch

from solutions.syncbatchnorm import SyncBatchNorm as Reference

EXPECT = "pass"

Path("notes.txt").write_text("notes beside my script\n")
Path("README.md").write_text("overwritten by the learner's file\n")
os.makedirs("katas", exist_ok=True)
Path("katas", "layernorm.py").write_text("# overwritten by the learner's file\n")
if os.path.exists("noxfile.py"):
    os.remove("noxfile.py")

_saved = False


class SyncBatchNorm(Reference):
    def forward(self, x):
        global _saved
        if not _saved:  # once per process: each rank, and the grading's own
            torch.save(self.state_dict(), "model.pt")
            _saved = True
        return super().forward(x)
