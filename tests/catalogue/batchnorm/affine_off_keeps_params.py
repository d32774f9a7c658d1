"""Mistake: affine=False still creates weight and bias (frozen at ones and zeros)."""

import torch
from torch import nn

from solutions.batchnorm import BatchNorm1d as Reference1d
from solutions.batchnorm import BatchNorm2d as Reference2d

EXPECT = "test_affine_false"


class KeepsParams:
    def __init__(self, num_features, *args, **kwargs):
        super().__init__(num_features, *args, **kwargs)
        if not self.affine:
            self.weight = nn.Parameter(torch.ones(num_features), requires_grad=False)
            self.bias = nn.Parameter(torch.zeros(num_features), requires_grad=False)


class BatchNorm1d(KeepsParams, Reference1d):
    pass


class BatchNorm2d(KeepsParams, Reference2d):
    pass
