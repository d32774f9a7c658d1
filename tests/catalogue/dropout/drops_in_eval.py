"""Mistake: ignores self.training, so eval mode drops elements as well."""

from solutions.dropout import Dropout as Reference

EXPECT = "test_eval_is_identity"
ALSO = "test_forward_matches_torch"


class Dropout(Reference):
    def forward(self, x):
        was_training = self.training
        self.training = True
        try:
            return super().forward(x)
        finally:
            self.training = was_training
