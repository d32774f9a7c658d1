"""merge updates self.count to n before the δ² · n_a · n_b / n term reads n_a."""

import torch

EXPECT = "test_merge_spread_of_means"
ALSO = "test_merge_with_empty, test_matches_var_mean"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        x = x.to(self.mean.dtype)
        for row in x:
            self.count += 1
            delta = row - self.mean
            self.mean = self.mean + delta / self.count
            self.m2 = self.m2 + delta * (row - self.mean)

    def merge(self, other):
        if other.count == 0:
            return
        self.count += other.count
        delta = other.mean - self.mean
        self.mean = self.mean + delta * (other.count / self.count)
        self.m2 = self.m2 + other.m2 + delta.square() * (self.count * other.count / self.count)

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
