"""Mistake: adds eps to the standard deviation, outside the square root."""

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_eps_inside_sqrt"
ALSO = "test_forward_matches_torch"


class GroupNorm(Reference):
    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.num_groups, c // self.num_groups, -1)
        mean = g.mean((2, 3), keepdim=True)
        std = g.var((2, 3), keepdim=True, unbiased=False).sqrt()
        y = ((g - mean) / (std + self.eps)).reshape(x.shape)
        if self.affine:
            shape = (1, c) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y
