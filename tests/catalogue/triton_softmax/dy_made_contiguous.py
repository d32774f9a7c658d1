"""Mistake: backward copies dy with .contiguous() to avoid handling its strides: one more read
and write of every element of dy, which autograd hands transposed or expanded."""

from solutions.triton_softmax import SoftmaxFunction as Reference

EXPECT = "test_kernels_do_the_work"
ALSO = "test_strided_rows"


class SoftmaxFunction(Reference):
    @staticmethod
    def backward(ctx, dy):
        return Reference.backward(ctx, dy.contiguous())


def softmax(x):
    return SoftmaxFunction.apply(x)
