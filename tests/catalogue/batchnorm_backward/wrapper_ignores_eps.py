"""Mistake: batch_norm_train passes 1e-5 to the Function whatever eps it is given."""

from solutions.batchnorm_backward import BatchNormFunction

EXPECT = "test_wrapper_passes_eps"


def batch_norm_train(x, weight, bias, eps=1e-5):
    return BatchNormFunction.apply(x, weight, bias, 1e-5)
