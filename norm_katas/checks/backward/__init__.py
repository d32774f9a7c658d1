"""The backward katas' checks, one template: a custom torch.autograd.Function (forward and a
backward derived by hand) compared with autograd through torch's built-in.

LayerNorm-backward and BatchNorm-backward differ only in which dims the statistics run over and
which the weight runs along, RMSNorm-backward also in having no bias; a suite declares that
once, as a FunctionKata, and each of its check functions (name, docstring and marks stay in the
suite: they are what the learner reads) calls the method of the same name with the shapes it
checks on.

FunctionKata is built in layers, each a module of its own:

- description: what the suite declares (names, the built-in, the dims), and how messages name
  the kata's tensors;
- harness: the inputs, the learner's forward and backward called directly with a recording
  ctx, autograd through the built-in, and the comparisons of the two;
- the checks, by theme, each a class on the harness: contract (the Function's code as code:
  apply, eps, inputs left alone, no built-in, no loop, no autograd, what ctx saves, device,
  and what --perf times), values (forward and the gradients against autograd, gradcheck),
  terms (grad_x's paths through the weight, the mean and the variance) and parity (float64,
  half precision, layouts).

A suite imports FunctionKata from norm_katas.checks, never from the modules.
"""

from __future__ import annotations

from norm_katas.checks.backward.contract import ContractChecks
from norm_katas.checks.backward.parity import ParityChecks
from norm_katas.checks.backward.terms import TermChecks
from norm_katas.checks.backward.values import ValueChecks


class FunctionKata(ContractChecks, ValueChecks, TermChecks, ParityChecks):
    """What one backward kata is (its Description's fields, given by keyword) and every check
    of the template, one method each."""


__all__ = ["FunctionKata"]
