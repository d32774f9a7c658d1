"""Your tests of DyT: pass every correct layer, fail every wrong one.

"How would you verify that your DyT is correct?" is the interviewer's next question. Here you
answer it in code. The grader runs this file against many DyTs: the reference, correct ones
written in other ways, and the mistakes candidates make in interviews (with small changes to
the reference as the stretch). Every test must pass on every correct layer; each wrong layer
must fail at least one test. The report names the mistakes your tests miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.DyT` is the class,
DyT(num_features, alpha_init_value=0.5, channels_last=True), with the parameters alpha, weight
and bias (katas/dyt.py states the contract). The grader calls each test once for each layer.
Use torch and pytest: torch.testing.assert_close, torch.no_grad, and the formula
weight · tanh(α · x) + bias written out with torch.tanh as a reference (torch has no DyT).

Test behaviour: values, gradients, the parameters and the state_dict, dtypes. How the layer is
written is the grader's to watch, not your tests'.

Where to look
-------------
- the formula: α inside the tanh, weight and bias after it, one per channel;
- the parameters: α one learnable scalar (not one per channel), weight and bias of shape
  (num_features,), and their first values, alpha_init_value included;
- the options: alpha_init_value, channels_last=False with the channels on dim 1 of
  (N, C, H, W), where H differs from C;
- inputs that show a mistake: α, weight and bias set to values other than their first ones
  (with torch.no_grad(), write into the parameters), float64 and half precision inputs, the
  gradient that reaches α.

Grade yourself with::

    nox -s kata-dyt -- --tests
"""

import torch


def test_untrained_layer_is_tanh_of_half_x(kata):
    """As built (α = 0.5, weight ones, bias zeros), DyT(8) maps x to tanh(x / 2)."""
    torch.manual_seed(0)
    x = torch.randn(4, 8) * 3
    torch.testing.assert_close(kata.DyT(8)(x), torch.tanh(0.5 * x), rtol=1e-5, atol=1e-6)
