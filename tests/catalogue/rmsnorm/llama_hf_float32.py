"""Hugging Face's LlamaRMSNorm (transformers, modeling_llama.py), adapted to the kata's
constructor: the interview answer, with its dtype policy.

It computes in ``hidden_states.to(torch.float32)`` whatever the input dtype and multiplies the
weight after casting back to the input dtype: a float64 input is rounded to float32 on the way,
where torch computes in float64. Which dtype a layer computes in is torch parity, so the
interview core passes.
"""

import torch
from torch import nn

EXPECT = "test_computes_in_float64"


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps  # Hugging Face calls it variance_epsilon
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.register_parameter("weight", None)

    def forward(self, hidden_states):
        n = len(self.normalized_shape)
        if tuple(hidden_states.shape[hidden_states.dim() - n :]) != self.normalized_shape:
            raise RuntimeError(
                f"expected trailing shape {self.normalized_shape}, got {hidden_states.shape}"
            )
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(tuple(range(-n, 0)), keepdim=True)
        eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps
        hidden_states = hidden_states * torch.rsqrt(variance + eps)
        if self.weight is None:
            return hidden_states.to(input_dtype)
        return self.weight * hidden_states.to(input_dtype)
