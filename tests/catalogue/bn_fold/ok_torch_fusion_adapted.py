"""Correct: torch's own fold, as torch/nn/utils/fusion.py does it (fuse_conv_bn_eval and
fuse_linear_bn_eval, with their _weights helpers), rewritten here without the transposed conv's
branch: the eval-mode guard as an AssertionError, a deep copy, rsqrt of the variance plus eps,
the scale reshaped by a shape list with -1 at dim 0, the results cast back to the layer's
dtypes, zeros_like(running_mean) for a missing bias (so the fused bias of a layer without one
does not require grad), and Parameters that take the original's requires_grad. torch's Linear
fold takes bn.weight as it is, as here: it raises on a BatchNorm1d without affine, which the
kata does not ask."""

import copy

import torch

EXPECT = "pass"


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _parameters(weight, bias, fused_w, fused_b):
    w_dtype = weight.dtype
    b_dtype = w_dtype if bias is None else bias.dtype
    b_grad = False if bias is None else bias.requires_grad
    return (
        torch.nn.Parameter(fused_w.to(dtype=w_dtype), weight.requires_grad),
        torch.nn.Parameter(fused_b.to(dtype=b_dtype), b_grad),
    )


def fuse_conv_bn_eval(conv, bn):
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    mean, var = bn.running_mean, bn.running_var
    gamma = torch.ones_like(mean) if bn.weight is None else bn.weight
    beta = torch.zeros_like(mean) if bn.bias is None else bn.bias
    b = torch.zeros_like(mean) if fused.bias is None else fused.bias
    var_rsqrt = torch.rsqrt(var + bn.eps)
    shape = [-1, 1] + [1] * (fused.weight.dim() - 2)
    fused_w = fused.weight * (gamma * var_rsqrt).reshape(shape)
    fused_b = (b - mean) * var_rsqrt * gamma + beta
    fused.weight, fused.bias = _parameters(fused.weight, fused.bias, fused_w, fused_b)
    return fused


def fuse_linear_bn_eval(linear, bn):
    _check_eval(linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("linear.out_features must be bn.num_features, or bn 1 feature")
    fused = copy.deepcopy(linear)
    mean = bn.running_mean
    b = torch.zeros_like(mean) if fused.bias is None else fused.bias
    scale = bn.weight * torch.rsqrt(bn.running_var + bn.eps)
    fused_w = fused.weight * scale.unsqueeze(-1)
    fused_b = (b - mean) * scale + bn.bias
    fused.weight, fused.bias = _parameters(fused.weight, fused.bias, fused_w, fused_b)
    return fused
