"""Chan's merge written as count-weighted sums of the means, with each batch's M2 from its own
two-pass deviations, and update expressed as a merge of a one-batch accumulator.
"""

import torch

EXPECT = "pass"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros_like(self.mean)

    def update(self, x):
        batch = Welford(x.shape[1], device=self.mean.device, dtype=self.mean.dtype)
        if x.shape[0] > 0:
            x = x.to(self.mean.dtype)
            batch.count = x.shape[0]
            batch.mean = x.mean(0)
            batch.m2 = ((x - batch.mean) ** 2).sum(0)
        self.merge(batch)

    def merge(self, other):
        n = self.count + other.count
        if n == 0:
            return
        delta = other.mean - self.mean
        m2 = self.m2 + other.m2 + delta**2 * (self.count * other.count / n)
        self.mean = (self.mean * self.count + other.mean * other.count) / n
        self.m2 = m2
        self.count = n

    def var(self, correction=1):
        return torch.div(self.m2, max(self.count - correction, 0))
