"""Mistake: keeps normalized_shape as the int it was given and initialises weight randomly."""

import torch
from torch import nn

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_parameters"
ALSO = (
    "test_output_like_input, "
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_statistics_per_sample, "
    "test_same_in_eval_mode, "
    "test_zero_input, "
    "test_root_mean_square, "
    "test_no_mean_centring, "
    "test_eps_inside_sqrt, "
    "test_weight_scales_each_element, "
    "test_no_elementwise_affine, "
    "test_follows_device"
)


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)
        if self.weight is not None:
            self.weight = nn.Parameter(torch.randn(self.normalized_shape))
        if isinstance(normalized_shape, int):
            self.normalized_shape = normalized_shape
