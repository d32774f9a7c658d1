"""Mistake: the affine parameters are called gamma and beta, not weight and bias like torch's."""

import torch
from torch import nn

from solutions.instancenorm import InstanceNorm1d as Reference1d
from solutions.instancenorm import InstanceNorm2d as Reference2d

EXPECT = "test_parameters"
ALSO = (
    "test_state_dict_round_trip, "
    "test_affine_per_channel, "
    "test_eval_without_running_stats, "
    "test_eval_uses_running_stats, "
    "test_eval_leaves_running_stats_unchanged, "
    "test_unbatched_input, "
    "test_input_unmodified, "
    "test_running_stats_no_autograd_history, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_to_dtype, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match, "
    "test_several_steps_then_eval"
)


class Mistake:
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__(num_features, eps, momentum, False, track_running_stats)
        self.affine = affine
        if affine:
            self.gamma = nn.Parameter(torch.ones(num_features))
            self.beta = nn.Parameter(torch.zeros(num_features))

    def _normalize(self, x):
        y = super()._normalize(x)
        if self.affine:
            shape = (1, -1) + (1,) * (x.dim() - 2)
            y = y * self.gamma.view(shape) + self.beta.view(shape)
        return y


class InstanceNorm1d(Mistake, Reference1d):
    pass


class InstanceNorm2d(Mistake, Reference2d):
    pass
