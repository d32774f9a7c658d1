"""Mistake: x.mean(dims) without keepdim=True: a mean of shape (N,) does not broadcast against
x of shape (N, D). Simulated CUDA cannot run it either, and the device check says that it is
the learner's error, as the CPU raises it, not a limit of the simulation."""

from solutions.layernorm import LayerNorm as Reference

EXPECT = "test_output_like_input"
ALSO = (
    "test_input_unmodified, "
    "test_from_scratch, "
    "test_vectorized, "
    "test_statistics_per_sample, "
    "test_same_in_eval_mode, "
    "test_constant_input, "
    "test_eps_inside_sqrt, "
    "test_multidim_normalized_shape, "
    "test_no_elementwise_affine, "
    "test_numerically_stable, "
    "test_follows_device, "
    "test_forward_matches_torch, "
    "test_gradients_match"
)
SAYS = "for the same reason: the same RuntimeError at"


class LayerNorm(Reference):
    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        xc = x - x.mean(dims)
        y = xc * (xc.square().mean(dims, keepdim=True) + self.eps).rsqrt()
        if self.weight is not None:
            y = y * self.weight
        return y if self.bias is None else y + self.bias
