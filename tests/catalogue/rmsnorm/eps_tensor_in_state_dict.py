"""Mistake: keeps eps in a buffer, so its state_dict has a key nn.RMSNorm's does not have."""

import torch

from solutions.rmsnorm import RMSNorm as Reference

EXPECT = "test_state_dict_round_trip"
ALSO = (
    "test_output_like_input, "
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_zero_input, "
    "test_weight_scales_each_element, "
    "test_multidim_normalized_shape, "
    "test_no_elementwise_affine, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class RMSNorm(Reference):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__(normalized_shape, eps, elementwise_affine)
        self.register_buffer("eps_tensor", torch.tensor(1e-6 if eps is None else eps))
