"""Your tests of the Pre-Norm and Post-Norm blocks: pass every correct layer, fail every wrong one.

"How would you verify that your encoder block is correct?" is the interviewer's next question.
Here you answer it in code. The grader runs this file against many implementations: the
reference, correct ones written in other ways, and the mistakes candidates make in interviews
(with small changes to the reference as the stretch). Every test must pass on every correct
layer; each wrong layer must fail at least one test. The report names the mistakes your tests
miss.

How a test gets the layer
-------------------------
A test takes the module under test as its argument `kata`: `kata.PreNormResidual(d_model,
sublayer)` and `kata.PostNormResidual(d_model, sublayer)` are the residual wrappers, with
attributes `norm` and `sublayer`; `kata.TransformerEncoderBlock(d_model, nhead,
dim_feedforward=2048, dropout=0.1, norm_first=False)` is the block, with
nn.TransformerEncoderLayer's submodule names, called as block(x, src_mask=None,
src_key_padding_mask=None, is_causal=False) on x of shape (batch, seq, d_model)
(katas/prepost_norm.py states the contract). The grader calls each test once for each layer.
Use torch and pytest: torch.testing.assert_close, pytest.raises, and torch's own
nn.TransformerEncoderLayer(..., batch_first=True) as a reference where it helps.

Test behaviour: values, gradients, the state_dict, dtypes, train and eval, masks. How the
layer is written (no nn.TransformerEncoderLayer inside, no Python loop) is the grader's to
watch, not your tests'.

Where to look
-------------
- the wrappers' formulas: x + sublayer(norm(x)) and norm(x + sublayer(x)), what the sublayer
  is handed, how often it is called, and the attributes the contract names;
- the block against torch's layer holding the same parameters, in both wirings, in eval mode
  and in training with dropout 0, outputs and gradients; parameters moved off their first
  values, so that a LayerNorm's weight of ones hides nothing;
- the state_dict keys, the arguments and defaults each submodule gets, two separate norms;
- dropout: off in eval, on in training, and where each of the three sits; the masks;
- inputs that show a mistake: a batch and a sequence of different lengths, float64, the input
  left as it was, .to(torch.float64).

Grade yourself with::

    nox -s kata-prepost-norm -- --tests
"""

import torch
import torch.nn.functional as F
from torch import nn


def test_prenorm_residual_formula(kata):
    """PreNormResidual returns x + sublayer(norm(x)): the residual is x itself, and only the
    sublayer's input is normalized."""
    torch.manual_seed(0)
    sublayer = nn.Linear(8, 8).double()
    unit = kata.PreNormResidual(8, sublayer).double()
    with torch.no_grad():
        unit.norm.weight.uniform_(0.5, 1.5)
        unit.norm.bias.normal_()
    x = torch.randn(4, 8, dtype=torch.float64) * 3 + 1
    normed = F.layer_norm(x, (8,), unit.norm.weight, unit.norm.bias, unit.norm.eps)
    torch.testing.assert_close(unit(x), x + sublayer(normed), rtol=1e-9, atol=1e-10)
