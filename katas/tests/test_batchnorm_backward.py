"""Your tests of BatchNorm's hand-written backward: pass every correct one, fail every wrong one.

"How would you verify that your backward is correct?" is the interviewer's next question. Here
you answer it in code. The grader runs this file against many BatchNormFunctions: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
one; each wrong one must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.BatchNormFunction` is the
torch.autograd.Function, with static methods forward(ctx, x, weight, bias, eps), which
normalizes with the batch statistics, and backward(ctx, grad_out) returning (grad_x,
grad_weight, grad_bias, None), and `kata.batch_norm_train(x, weight, bias, eps=1e-5)` the
wrapper that calls its apply (katas/batchnorm_backward.py states the contract). x is (N, C) or
(N, C, H, W), weight and bias (C,). The grader calls each test once for each layer. Use torch
and pytest: torch.testing.assert_close, torch.autograd.gradcheck, and autograd through torch's
own F.batch_norm(x, None, None, weight, bias, training=True) as a reference where it helps.

Test behaviour: values, gradients, their shapes and dtypes, what the inputs look like after
forward and backward, what backward returns when you call it yourself (with y.grad_fn as its
ctx). How the layer is written (no built-in batch norm, no Python loop) is the grader's to
watch, not your tests'.

Where to look
-------------
- the formula: per channel, over every dim but 1, the batch mean and the biased variance, eps
  inside the root; the wrapper's own default eps, and an eps it is given;
- each gradient on its own: the bias's and the weight's summed over N, H and W, and grad_x
  through the weight, through the batch mean and through the batch variance: a gradient of x̂
  that is constant over a channel, or proportional to x̂, must give (almost) nothing back;
- inputs that show a mistake: 4-D inputs, where "over dim 0" and "over N, H and W" differ, a
  variance near eps in backward too, a weight with elements at 0, float64 to float64's
  precision, a permuted x or grad_out, half precision far from zero, the inputs and grad_out
  left as they were, backward with no autograd inside it.

Grade yourself with::

    nox -s kata-batchnorm-backward -- --tests
"""

import torch


def test_grad_bias_sums_grad_out_over_n_h_w(kata):
    """The bias is added to every value of its channel, so its gradient is grad_out summed over
    every dim but the channels: N, H and W."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 2, 5, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(3, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(3, dtype=torch.float64, requires_grad=True)
    grad_out = torch.randn(4, 3, 2, 5, dtype=torch.float64)
    kata.batch_norm_train(x, weight, bias).backward(grad_out)
    torch.testing.assert_close(bias.grad, grad_out.sum((0, 2, 3)), rtol=1e-5, atol=1e-5)
