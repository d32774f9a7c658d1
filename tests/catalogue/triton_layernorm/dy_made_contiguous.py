"""Mistake: backward copies dy with .contiguous() to avoid handling its strides: one more read
and write of every element of dy, which autograd hands transposed or expanded."""

from solutions.triton_layernorm import LayerNorm as Module
from solutions.triton_layernorm import LayerNormFunction as Reference

EXPECT = "test_kernels_do_the_work"
ALSO = "test_grad_x"


class LayerNormFunction(Reference):
    @staticmethod
    def backward(ctx, dy):
        return Reference.backward(ctx, dy.contiguous())


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)


class LayerNorm(Module):
    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
