"""Mistake: rejects indivisible channels with a ValueError of its own wording, not torch's."""

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_indivisible_channels_message"


class GroupNorm(Reference):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        if num_channels % num_groups:
            raise ValueError(f"cannot split {num_channels} channels into {num_groups} groups")
        super().__init__(num_groups, num_channels, eps, affine)
