"""Correct, written as PyTorch writes it: torch._decomp's native_batch_norm_helper (training)
for forward and native_batch_norm_backward for backward, adapted to the Function. Their
reduction and broadcast shapes come from Python loops over x's dims (legitimate: they run once
per dim, not once per channel or sample), and half inputs compute in float32."""

import math

import torch

EXPECT = "pass"


def computation_dtype(dtype):
    """torch._prims_common.get_computation_dtype: float32 for half dtypes."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _unsqueeze_to_dim(x, dim):
    for _ in range(dim - x.dim()):
        x = x.unsqueeze(-1)
    return x


def _broadcast_batch_norm_backward(x, broadcast_mask):
    for axis, mask in enumerate(broadcast_mask):
        if mask == 1 and not (axis < x.ndim and x.shape[axis] == mask):
            x = x.unsqueeze(axis)
    return x


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, eps):
        reduction_dims = [0] + list(range(2, input.dim()))
        input_acc = input.to(dtype=computation_dtype(input.dtype))
        biased_var, mean = torch.var_mean(input_acc, dim=reduction_dims, correction=0, keepdim=True)
        rstd = torch.rsqrt(biased_var + eps)
        output = (input - mean) * rstd
        save_mean = torch.squeeze(mean, reduction_dims)
        save_rstd = torch.squeeze(rstd, reduction_dims)
        output = output * _unsqueeze_to_dim(weight.flatten(), input.dim() - 1)
        output = output + _unsqueeze_to_dim(bias.flatten(), input.dim() - 1)
        # torch's CPU kernel also rounds save_mean and save_rstd to the input's dtype; its CUDA
        # kernel and this Function keep them in the computation dtype.
        ctx.save_for_backward(input, weight, save_mean, save_rstd)
        return output.to(dtype=input.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        input, weight, save_mean, save_invstd = ctx.saved_tensors
        input_dtype = input.dtype
        weight_dtype = weight.dtype
        dtype = computation_dtype(input.dtype)
        grad_out_cast, input_cast, weight_cast, mean, invstd = (
            x.to(dtype) for x in (grad_out, input, weight, save_mean, save_invstd)
        )
        input_shape = input.shape
        input_rank = input.dim()
        axis = 1
        num_features = math.prod(list(input_shape)) / input_shape[axis]

        broadcast_mask = [1] * input_rank
        broadcast_mask[axis] = input_shape[axis]
        reduction_axes = []
        for i in range(input_rank):
            if i != axis:
                reduction_axes.append(i)

        mean = _broadcast_batch_norm_backward(mean, broadcast_mask)
        norm = 1.0 / num_features
        grad_output_sum = torch.sum(grad_out_cast, reduction_axes)
        dot_p = torch.sum(grad_out_cast * (input_cast - mean), reduction_axes)
        grad_mean = _broadcast_batch_norm_backward(grad_output_sum * norm, broadcast_mask)
        proj_scale = _broadcast_batch_norm_backward(
            torch.mul(dot_p * norm, invstd * invstd), broadcast_mask
        )
        grad_scale = _broadcast_batch_norm_backward(invstd * weight_cast, broadcast_mask)
        proj = (input_cast - mean) * proj_scale
        grad_input = ((grad_out_cast - proj) - grad_mean) * grad_scale
        grad_weight = dot_p * invstd
        grad_bias = grad_output_sum
        return (
            grad_input.to(input_dtype),
            grad_weight.to(weight_dtype),
            grad_bias.to(weight_dtype),
            None,
        )


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, eps)
