"""Mistake: returns only the survivors, x[mask] / (1 - p): a 1-D tensor, not x's shape."""

import torch

from solutions.dropout import Dropout as Reference

EXPECT = "test_output_like_input"
ALSO = (
    "test_p_one_gives_zeros, "
    "test_kept_values_scaled, "
    "test_elements_dropped_independently, "
    "test_keep_fraction, "
    "test_fresh_mask_each_call, "
    "test_to_dtype, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)


class Dropout(Reference):
    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        keep = torch.rand_like(x) >= self.p
        return x[keep] / (1 - self.p) if self.p < 1 else x[keep]
