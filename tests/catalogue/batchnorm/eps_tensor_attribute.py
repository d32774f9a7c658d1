"""Mistake: caches eps as a float32 tensor in a plain attribute, which .to() does not move.

Its values pass (a 0-dim tensor takes the other operand's dtype), but after .to(float64) or
.to("cuda") the module still holds a float32 tensor on the CPU that is not part of its state.
"""

import torch

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_to_dtype"


class EpsTensor:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.eps_tensor = torch.tensor(eps)

    def forward(self, x):
        self._check_input_dim(x)
        dims = [0, *range(2, x.dim())]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training or self.running_mean is None:
            n = x.numel() // x.size(1)
            if n == 1:
                raise ValueError(
                    "Expected more than 1 value per channel when training, "
                    f"got input size {list(x.shape)}"
                )
            mean = x.mean(dims)
            var = (x - mean.view(shape)).square().mean(dims)
            if self.training and self.track_running_stats:
                self._update_running_stats(mean, var, n)
        else:
            mean, var = self.running_mean, self.running_var
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps_tensor)
        if self.affine:
            y = y * self.weight.view(shape) + self.bias.view(shape)
        return y.to(x.dtype)


class BatchNorm1d(EpsTensor, Reference1d):
    pass


class BatchNorm2d(EpsTensor, Reference2d):
    pass
