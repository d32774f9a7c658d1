"""Correct, written as PyTorch writes it: torch._refs.native_layer_norm for forward and
torch._decomp's native_layer_norm_backward for backward, adapted to the Function. Both build
their dimension lists with a Python loop over x's dims (legitimate: it runs once per dim, not
once per row), and both compute half inputs in float32 (get_computation_dtype)."""

import math

import torch

EXPECT = "pass"


def computation_dtype(dtype):
    """torch._prims_common.get_computation_dtype: float32 for half dtypes."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, eps):
        normalized_shape = weight.shape
        axis = input.ndim - len(normalized_shape)
        reduction_dims = list(range(axis, input.ndim))
        a_acc = input.to(computation_dtype(input.dtype))
        biased_var, mean = torch.var_mean(a_acc, dim=reduction_dims, unbiased=False, keepdim=True)
        rstd = torch.rsqrt(biased_var + eps)
        out = (a_acc - mean) * rstd * weight + bias
        # torch's CPU kernel also rounds mean and rstd to the input's dtype; its CUDA kernel and
        # this Function keep them in the computation dtype.
        ctx.save_for_backward(input, mean, rstd, weight)
        ctx.normalized_shape = list(normalized_shape)
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        input, mean, rstd, weight = ctx.saved_tensors
        normalized_shape = ctx.normalized_shape
        input_shape = input.shape
        input_ndim = input.dim()
        dtype = computation_dtype(input.dtype)
        grad_out_cast, input_cast, weight_cast = (
            x.to(dtype, memory_format=torch.contiguous_format) if x is not None else x
            for x in (grad_out, input, weight)
        )
        axis = input_ndim - len(normalized_shape)
        inner_dims = input_shape[axis:]
        outer_dims = input_shape[:axis]
        inner_dim_indices = []
        outer_dim_indices = []
        for i in range(input_ndim):
            if i >= axis:
                inner_dim_indices.append(i)
            else:
                outer_dim_indices.append(i)

        N = math.prod(inner_dims)
        M = math.prod(outer_dims)
        if M == 0 or N == 0:
            return (
                input.new_zeros(input_shape),
                input.new_zeros(input_shape[axis:]),
                input.new_zeros(input_shape[axis:]),
                None,
            )
        x_hat = (input_cast - mean) * rstd
        grad_x_hat = grad_out_cast * weight_cast if weight_cast is not None else grad_out_cast
        a = grad_x_hat * N
        b = torch.sum(grad_x_hat, inner_dim_indices, True)
        c1 = torch.mul(grad_x_hat, x_hat)
        c2 = torch.sum(c1, inner_dim_indices, True)
        c3 = torch.mul(x_hat, c2)
        inner = a - b - c3
        d_input = (rstd / N) * inner
        if len(outer_dim_indices) > 0:
            d_weight = torch.sum(grad_out_cast * x_hat, outer_dim_indices, False)
            d_bias = torch.sum(grad_out_cast, outer_dim_indices, False)
        else:
            d_weight = grad_out_cast * x_hat
            d_bias = grad_out_cast.clone()
        return d_input.to(input.dtype), d_weight.to(weight.dtype), d_bias.to(weight.dtype), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
