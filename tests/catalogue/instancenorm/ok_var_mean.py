"""Correct, written differently: var_mean over the flattened positions, lerp_ updates, the
unbatched case by recursion, and the two classes written in full without a shared base."""

import warnings

import torch
from torch import nn

EXPECT = "pass"


def _setup(module, num_features, eps, momentum, affine, track_running_stats):
    module.num_features, module.eps, module.momentum = num_features, eps, momentum
    module.affine, module.track_running_stats = affine, track_running_stats
    if affine:
        module.weight = nn.Parameter(torch.ones(num_features))
        module.bias = nn.Parameter(torch.zeros(num_features))
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)
    module.register_buffer(
        "running_mean", torch.zeros(num_features) if track_running_stats else None
    )
    module.register_buffer("running_var", torch.ones(num_features) if track_running_stats else None)
    module.register_buffer(
        "num_batches_tracked", torch.tensor(0, dtype=torch.long) if track_running_stats else None
    )


def _instance_norm(module, x):
    half = x.dtype in (torch.float16, torch.bfloat16)
    flat = (x.float() if half else x).flatten(2)  # (N, C, m)
    if module.training or module.running_mean is None:
        if flat.size(2) <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got {x.size()}")
        var, mean = torch.var_mean(flat, dim=2, keepdim=True, correction=0)
        if module.training and module.running_mean is not None and module.momentum is not None:
            unbiased = torch.var(flat.detach(), dim=2, correction=1)
            rm = module.running_mean
            rm.lerp_(mean.detach().mean(0).squeeze(-1).to(rm.dtype), module.momentum)
            rv = module.running_var
            rv.lerp_(unbiased.mean(0).to(rv.dtype), module.momentum)
    else:
        mean = module.running_mean[None, :, None]
        var = module.running_var[None, :, None]
    out = (flat - mean) / (var + module.eps).sqrt()
    if module.affine:
        out = torch.addcmul(module.bias[:, None], out, module.weight[:, None])
    return out.view(x.shape).to(x.dtype)


def _check_channels(module, x, dim):
    if x.size(dim) == module.num_features:
        return
    if module.affine:
        raise ValueError(f"expected input's size at dim={dim} to match num_features")
    warnings.warn(f"input's size at dim={dim} does not match num_features", stacklevel=3)


class InstanceNorm1d(nn.Module):
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__()
        _setup(self, num_features, eps, momentum, affine, track_running_stats)

    def forward(self, x):
        if x.dim() == 2:
            _check_channels(self, x, 0)
            return _instance_norm(self, x[None])[0]
        if x.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {x.dim()}D input)")
        _check_channels(self, x, 1)
        return _instance_norm(self, x)


class InstanceNorm2d(nn.Module):
    def __init__(
        self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False
    ):
        super().__init__()
        _setup(self, num_features, eps, momentum, affine, track_running_stats)

    def forward(self, x):
        if x.dim() == 3:
            _check_channels(self, x, 0)
            return _instance_norm(self, x[None])[0]
        if x.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {x.dim()}D input)")
        _check_channels(self, x, 1)
        return _instance_norm(self, x)
