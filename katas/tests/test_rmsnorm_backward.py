"""Your tests of RMSNorm's hand-written backward: pass every correct one, fail every wrong one.

"How would you verify that your backward is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many RMSNormFunctions: the reference,
correct ones written in other ways, and the mistakes candidates make in interviews (with small
changes to the reference as the stretch). Every test must pass on every correct one; each wrong
one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.RMSNormFunction` is the
torch.autograd.Function, with static methods forward(ctx, x, weight, eps) and
backward(ctx, grad_out) returning (grad_x, grad_weight, None); `kata.rms_norm(x, weight=None,
eps=None)` the wrapper that calls its apply; and `kata.RMSNorm(normalized_shape, eps=None,
elementwise_affine=True)` torch.nn.RMSNorm's drop-in, whose forward goes through rms_norm
(katas/rmsnorm_backward.py states the contract). weight may be None. The grader calls each test
once for each layer. Use torch and pytest: torch.testing.assert_close, torch.autograd.gradcheck,
and autograd through torch's own F.rms_norm and nn.RMSNorm as a reference where it helps.

Test behaviour: values, gradients, their shapes and dtypes, what the inputs look like after
forward and backward, what backward returns when you call it yourself (with y.grad_fn as its
ctx), the module's attributes and where its gradients come from. How the layer is written (no
built-in RMSNorm, no Python loop) is the grader's to watch, not your tests'.

Where to look
-------------
- the formula: over the last dim, the mean of the squares, eps inside the root; the eps the
  wrapper is given, and eps=None, torch's default;
- each gradient on its own: the weight's summed over every row of a 3-D and a 4-D x (grad_out
  times x̂, not times the output), and grad_x through the weight and through the rms: a
  gradient of x̂ proportional to x̂ must give (almost) nothing back;
- no weight at all: y is x̂, and the weight's gradient is None;
- the module: nn.RMSNorm's attributes and first weight, and gradients that come from your
  backward;
- inputs that show a mistake: a mean square near eps in backward too, a weight with elements at
  0, float64 to float64's precision, a transposed x or grad_out, an x of shape (D,), half
  precision far from zero, x and grad_out left as they were in every dtype, with and without a
  weight, backward run twice on one graph, backward with no autograd inside it.

Grade yourself with::

    nox -s kata-rmsnorm-backward -- --tests
"""

import torch


def test_grad_weight_sums_over_every_row(kata):
    """Each weight element scales x̂ at every position of every sample, so its gradient is
    grad_out · x̂ summed over every dim but the last (the batch and the sequence dims), of
    shape (D,)."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, 8, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(8, dtype=torch.float64, requires_grad=True)
    grad_out = torch.randn(3, 4, 8, dtype=torch.float64)
    y = kata.RMSNormFunction.apply(x, weight, 1e-5)
    # backward called yourself, with the node autograd recorded as its ctx: through
    # y.backward(grad_out), autograd would quietly sum a (4, 8) gradient down to (8,).
    _, grad_weight, _ = kata.RMSNormFunction.backward(y.grad_fn, grad_out)
    x_hat = x.detach() * torch.rsqrt(x.detach().square().mean(-1, keepdim=True) + 1e-5)
    torch.testing.assert_close(grad_weight, (grad_out * x_hat).sum((0, 1)), rtol=1e-5, atol=1e-5)
