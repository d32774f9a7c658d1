"""Mistake: Keras convention: momentum=0.99 by default, meaning the weight of the old value, but
applied through torch's formula, so each batch takes 99% of the running statistics."""

import torch
from torch import nn

EXPECT = "test_parameters"


def _norm(mod, x):
    if x.dim() >= 2 and x.shape[0] == 0:
        if mod.training and mod.track_running_stats:
            mod.num_batches_tracked += 1
        return x.clone()
    red = (0,) + tuple(range(2, x.dim()))
    bshape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
    compute = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    xc = x.to(compute)
    use_batch = mod.training or not mod.track_running_stats
    if use_batch:
        count = x.numel() // x.shape[1]
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {x.size()}"
            )
        var, mean = torch.var_mean(xc, dim=red, correction=0)
        if mod.training and mod.track_running_stats:
            mod.num_batches_tracked += 1
            f = (1.0 / mod.num_batches_tracked.item()) if mod.momentum is None else mod.momentum
            with torch.no_grad():
                mod.running_mean.lerp_(mean.to(mod.running_mean.dtype), f)
                mod.running_var.lerp_((var * (count / (count - 1))).to(mod.running_var.dtype), f)
    else:
        mean, var = mod.running_mean.to(compute), mod.running_var.to(compute)
    out = (xc - mean.reshape(bshape)) * torch.rsqrt(var.reshape(bshape) + mod.eps)
    if mod.affine:
        out = torch.addcmul(
            mod.bias.to(compute).reshape(bshape), out, mod.weight.to(compute).reshape(bshape)
        )
    return out.to(x.dtype)


def _init(mod, num_features, eps, momentum, affine, track_running_stats):
    mod.num_features, mod.eps, mod.momentum = num_features, eps, momentum
    mod.affine, mod.track_running_stats = affine, track_running_stats
    if affine:
        mod.weight = nn.Parameter(torch.empty(num_features))
        mod.bias = nn.Parameter(torch.empty(num_features))
        nn.init.ones_(mod.weight)
        nn.init.zeros_(mod.bias)
    else:
        mod.register_parameter("weight", None)
        mod.register_parameter("bias", None)
    for name, val in (
        ("running_mean", torch.zeros(num_features)),
        ("running_var", torch.ones(num_features)),
        ("num_batches_tracked", torch.zeros((), dtype=torch.long)),
    ):
        mod.register_buffer(name, val if track_running_stats else None)


class _BatchNorm(nn.Module):
    def __init__(
        self, num_features, eps=1e-5, momentum=0.99, affine=True, track_running_stats=True
    ):
        super().__init__()
        _init(self, num_features, eps, momentum, affine, track_running_stats)

    def _check_input_dim(self, x):
        pass

    def forward(self, x):
        self._check_input_dim(x)
        return _norm(self, x)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, x):
        if x.dim() != 2 and x.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, x):
        if x.dim() != 4:
            raise ValueError(f"expected 4D input (got {x.dim()}D input)")
