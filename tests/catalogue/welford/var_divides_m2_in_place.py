"""Mistake: var() divides the stored M2 in place (m2.div_) and returns it. The first read is
right; each later read divides again, and updates build on the shrunken M2."""

from solutions.welford import Welford as Reference

EXPECT = "test_reading_changes_nothing"
ALSO = "test_statistics_follow_every_step, test_matches_var_mean"


class Welford(Reference):
    def var(self, correction=1):
        return self.m2.div_(max(0, self.count - correction))
