"""Mistake: the original stochastic depth's test time. With scale_by_keep=False the branch is
scaled by the keep probability in eval (x · (1 - p)), where timm's DropPath is the identity."""

import torch

import solutions.droppath as reference

EXPECT = "test_eval_is_identity"


def drop_path(
    x: torch.Tensor, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True
) -> torch.Tensor:
    if not training and not scale_by_keep:
        return x * (1.0 - drop_prob)
    return reference.drop_path(x, drop_prob, training, scale_by_keep)


class DropPath(reference.DropPath):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)
