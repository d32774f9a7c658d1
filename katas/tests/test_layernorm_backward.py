"""Your tests of LayerNorm's hand-written backward: pass every correct one, fail every wrong one.

"How would you verify that your backward is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many LayerNormFunctions: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
one; each wrong one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.LayerNormFunction` is the
torch.autograd.Function, with static methods forward(ctx, x, weight, bias, eps) and
backward(ctx, grad_out) returning (grad_x, grad_weight, grad_bias, None), and
`kata.layer_norm(x, weight, bias, eps=1e-5)` the wrapper that calls its apply
(katas/layernorm_backward.py states the contract). The grader calls each test once for each
layer. Use torch and pytest: torch.testing.assert_close, torch.autograd.gradcheck, and autograd
through torch's own F.layer_norm as a reference where it helps.

Test behaviour: values, gradients, their shapes and dtypes, what the inputs look like after
forward and backward, what backward returns when you call it yourself (with y.grad_fn as its
ctx). How the layer is written (no built-in layer norm, no Python loop) is the grader's to
watch, not your tests'.

Where to look
-------------
- the formula: over the last dim, the mean and the biased variance, eps inside the root; the
  wrapper's own default eps;
- each gradient on its own: the bias's and the weight's summed over every row of a 3-D x, and
  grad_x through the weight, through the mean and through the variance: a gradient of x̂ that
  is constant along a row, or proportional to x̂, must give (almost) nothing back;
- inputs that show a mistake: a variance near eps in backward too, a weight with elements at 0,
  float64 to float64's precision, a transposed x or grad_out, an x of shape (D,), half
  precision far from zero, the inputs and grad_out left as they were, backward with no autograd
  inside it.

Grade yourself with::

    nox -s kata-layernorm-backward -- --tests
"""

import torch


def test_grad_bias_sums_grad_out_over_every_row(kata):
    """The bias is added at every position of every sample, so its gradient is grad_out summed
    over every dim but the last: the batch and the sequence dims."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, 8, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(8, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(8, dtype=torch.float64, requires_grad=True)
    grad_out = torch.randn(3, 4, 8, dtype=torch.float64)
    kata.layer_norm(x, weight, bias).backward(grad_out)
    torch.testing.assert_close(bias.grad, grad_out.sum((0, 1)), rtol=1e-5, atol=1e-5)
