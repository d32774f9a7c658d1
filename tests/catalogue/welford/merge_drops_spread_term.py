"""merge adds M2_a + M2_b and forgets δ² · n_a · n_b / n, the spread between the means."""

import torch

EXPECT = "test_merge_spread_of_means"
ALSO = "test_matches_var_mean"


class Welford:
    def __init__(self, num_features, *, device=None, dtype=None):
        self.count = 0
        self.mean = torch.zeros(num_features, device=device, dtype=dtype)
        self.m2 = torch.zeros(num_features, device=device, dtype=dtype)

    def update(self, x):
        x = x.to(self.mean.dtype)
        for row in x:  # Welford, row by row: right
            self.count += 1
            delta = row - self.mean
            self.mean = self.mean + delta / self.count
            self.m2 = self.m2 + delta * (row - self.mean)

    def merge(self, other):
        n = self.count + other.count
        if other.count == 0:
            return
        delta = other.mean - self.mean
        self.mean = self.mean + delta * (other.count / n)
        self.m2 = self.m2 + other.m2
        self.count = n

    def var(self, correction=1):
        return self.m2 / max(0, self.count - correction)
