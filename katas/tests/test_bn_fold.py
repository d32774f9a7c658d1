"""Your tests of the BatchNorm fold: pass every correct fold, fail every wrong one.

"How would you verify that your fold is correct?" is the interviewer's next question. Here you
answer it in code. The grader runs this file against many folds: the reference, correct ones
written in other ways, and the mistakes candidates make in interviews (with small changes to
the reference as the stretch). Every test must pass on every correct fold; each wrong fold
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.fuse_conv_bn_eval(conv, bn)`
returns a new nn.Conv2d and `kata.fuse_linear_bn_eval(linear, bn)` a new nn.Linear, named and
called as torch.nn.utils.fusion's, for modules in eval mode (katas/bn_fold.py states the
contract). The grader calls each test once for each fold. Use torch and pytest:
torch.testing.assert_close, pytest.raises, and the conv followed by the BatchNorm in eval mode
as the reference for what the fused layer must compute.

Test behaviour: values, the fused weight and bias, the originals, dtypes, train and eval,
errors. How the fold is written (not torch's own fusion, new tensors on the modules' device) is
the grader's to watch, not your tests'.

Where to look
-------------
- the formula: s = γ / √(σ² + ε) scales each output channel's filter, b′ = (b − μ) · s + β,
  with the running statistics, not the batch's;
- the result: a new module of the original's class, with its stride, padding, dilation and
  groups, that runs alone (its own weight and bias, nothing after it);
- the cases: grouped and depthwise convs, a Linear whose in_features differ from its
  out_features, a layer without a bias, a BatchNorm2d with affine=False, a large eps;
- the originals: left as they were, sharing no memory with the result; and torch's manners:
  training mode raises, requires_grad as the original's, eval mode, float64 kept.

Grade yourself with::

    nox -s kata-bn-fold -- --tests
"""

import copy

import torch
from torch import nn


def test_fused_conv_gives_bn_of_conv(kata):
    """In eval mode, the fused conv's output is the BatchNorm's output on the conv's output,
    with running statistics, weight and bias far from their first values."""
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1).double().eval()
    bn = nn.BatchNorm2d(4).double().eval()
    with torch.no_grad():
        bn.running_mean.normal_()
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_()
    x = torch.randn(2, 3, 6, 6, dtype=torch.float64)
    with torch.no_grad():
        want = copy.deepcopy(bn)(copy.deepcopy(conv)(x))
        got = kata.fuse_conv_bn_eval(conv, bn)(x)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-9)
