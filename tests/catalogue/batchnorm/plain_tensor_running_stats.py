"""Mistake: running statistics kept as plain tensor attributes, so .to() skips them."""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_buffers"
ALSO = (
    "test_state_dict_round_trip, "
    "test_output_like_input, "
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_to_dtype, "
    "test_batchnorm1d_reduces_over_n_l, "
    "test_batchnorm2d_reduces_over_n_h_w, "
    "test_momentum_direction, "
    "test_first_step_from_initial_stats, "
    "test_running_var_unbiased, "
    "test_eval_leaves_running_stats_unchanged, "
    "test_num_batches_tracked, "
    "test_running_stats_no_autograd_history, "
    "test_eval_uses_running_stats, "
    "test_affine_false, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match, "
    "test_several_steps_then_eval"
)


class PlainStats:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if self.track_running_stats:
            del self.running_mean, self.running_var
            self.running_mean = torch.zeros(num_features)
            self.running_var = torch.ones(num_features)


class BatchNorm1d(PlainStats, Reference1d):
    pass


class BatchNorm2d(PlainStats, Reference2d):
    pass
