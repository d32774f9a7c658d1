"""merge into an empty accumulator takes other's tensors as its own; update then adds in place.

self.mean is other.mean: the += that follows writes into the other accumulator's mean.
"""

import torch

EXPECT = "test_merge_leaves_other_unmodified"
ALSO = "test_merge_takes_a_snapshot"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        n_b = x.shape[0]
        if n_b == 0:
            return
        x = x.to(self.mean.dtype)
        mean_b = x.sum(0) / n_b
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean += delta * (n_b / n)
        self.m2 += (x - mean_b).square().sum(0) + delta.square() * (n_a * n_b / n)
        self.count = n

    def merge(self, other):
        if other.count == 0:
            return
        if self.count == 0:
            self.count, self.mean, self.m2 = other.count, other.mean, other.m2
            return
        self._combine(other.count, other.mean, other.m2)

    def _combine(self, n_b, mean_b, m2_b):
        if n_b == 0:
            return
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta.square() * (n_a * n_b / n)
        self.count = n

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
