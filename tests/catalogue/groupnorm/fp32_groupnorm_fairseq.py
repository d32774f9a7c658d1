"""fairseq's Fp32GroupNorm (wav2vec), written from scratch: the interview answer, with its
dtype policy.

fairseq normalizes ``input.float()`` with ``weight.float()`` and ``bias.float()``, then casts
back with ``.type_as(input)``: right for float16/bfloat16 under mixed precision, but a float64
input is rounded to float32 on the way, where torch computes in float64. Which dtype a layer
computes in is torch parity, so the interview core passes.
"""

import torch

from solutions.groupnorm import GroupNorm as Reference

EXPECT = "test_computes_in_float64"


class GroupNorm(Reference):
    def forward(self, input):
        n, c = input.shape[:2]
        x = input.float().reshape(n, self.num_groups, c // self.num_groups, *input.shape[2:])
        dims = tuple(range(2, x.dim()))
        mean = x.mean(dims, keepdim=True)
        var = x.var(dims, unbiased=False, keepdim=True)
        output = ((x - mean) / torch.sqrt(var + self.eps)).reshape(input.shape)
        if self.affine:
            shape = (1, c) + (1,) * (input.dim() - 2)
            output = output * self.weight.float().view(shape) + self.bias.float().view(shape)
        return output.type_as(input)
