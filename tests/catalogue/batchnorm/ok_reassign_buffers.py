"""Correct, written differently: keepdim statistics, buffers reassigned from detached values."""

import torch
from torch import nn

EXPECT = "pass"


class BatchNorm2d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def _check_input_dim(self, x):
        if x.dim() != 4:
            raise ValueError(f"expected 4D input (got {x.dim()}D input)")

    def forward(self, x):
        self._check_input_dim(x)
        dims = tuple(d for d in range(x.dim()) if d != 1)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        use_batch = self.training or self.running_mean is None
        if use_batch:
            count = 1
            for d in dims:
                count *= x.shape[d]
            if count == 1:
                raise ValueError(
                    "Expected more than 1 value per channel when training, "
                    f"got input size {x.size()}"
                )
            mean = x.mean(dim=dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
            if self.training and self.track_running_stats:
                self.num_batches_tracked += 1
                if count > 0:
                    m = self.momentum
                    if m is None:
                        m = 1.0 / self.num_batches_tracked
                    new_mean = mean.detach().reshape(-1)
                    new_var = var.detach().reshape(-1) * count / (count - 1)
                    self.running_mean = ((1 - m) * self.running_mean + m * new_mean).to(
                        self.running_mean.dtype
                    )
                    self.running_var = ((1 - m) * self.running_var + m * new_var).to(
                        self.running_var.dtype
                    )
        else:
            mean = self.running_mean.reshape(shape)
            var = self.running_var.reshape(shape)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.affine:
            y = self.weight.reshape(shape) * y + self.bias.reshape(shape)
        return y.type_as(x)


class BatchNorm1d(BatchNorm2d):
    def _check_input_dim(self, x):
        if x.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")
