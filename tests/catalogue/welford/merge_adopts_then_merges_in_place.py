"""merge into an empty accumulator takes other's tensors as its own; later merges add in place.

An update between the two merges would hide it (update makes new tensors here); a second merge
straight after the first writes into the other accumulator's mean and M2.
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
        n = x.shape[0]
        if n == 0:
            return
        x = x.to(self.mean.dtype)
        mean = x.sum(0) / n
        self._combine(n, mean, (x - mean).square().sum(0))

    def merge(self, other):
        if other.count == 0:
            return
        if self.count == 0:  # nothing to combine: take the other's state
            self.count, self.mean, self.m2 = other.count, other.mean, other.m2
            return
        n = self.count + other.count
        delta = other.mean - self.mean
        self.m2 += other.m2 + delta.square() * (self.count * other.count / n)
        self.mean += delta * (other.count / n)
        self.count = n

    def _combine(self, n_b, mean_b, m2_b):
        n_a, n = self.count, self.count + n_b
        delta = mean_b - self.mean
        self.mean = self.mean + delta * (n_b / n)
        self.m2 = self.m2 + m2_b + delta.square() * (n_a * n_b / n)
        self.count = n

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
