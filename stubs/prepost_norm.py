"""Kata: Pre-Norm vs Post-Norm residual blocks, and a Transformer encoder block.

What it is
----------
Where the normalization sits relative to the residual connection is a classic interview
question. Two wirings of a sublayer F (attention or the MLP) with a LayerNorm:

    Post-Norm (Post-LN):  x_{t+1} = Norm(x_t + F(x_t))
        The original Transformer ("Attention Is All You Need", 2017), BERT. Each block
        renormalizes the sum, so the identity path is rescaled at every layer. Deep Post-LN
        stacks usually need learning-rate warm-up to train stably; some argue that, tuned
        well, they reach better final quality than Pre-LN.

    Pre-Norm (Pre-LN):    x_{t+1} = x_t + F(Norm(x_t))
        GPT-2/3, LLaMA, ViT, DiT. The identity path is never normalized, so gradients reach
        the early layers directly: stable training, often without warm-up (Xiong et al.,
        2020, "On Layer Normalization in the Transformer Architecture"). The residual stream
        is not normalized at the output, so a Pre-LN stack needs one final Norm after the last
        block. A known criticism: deep Pre-LN stacks behave more like wider, shallower nets,
        because x_t dominates x_{t+1} and neighbouring layers see almost the same input.

A Transformer encoder block is two such residual units, self-attention then the feed-forward
network (Linear → ReLU → Dropout → Linear), with dropout on each residual branch:

    norm_first=False (Post-LN):               norm_first=True (Pre-LN):
        x = norm1(x + SA(x))                      x = x + SA(norm1(x))
        x = norm2(x + FF(x))                      x = x + FF(norm2(x))

    SA(h) = dropout1(self_attn(h, h, h))        (the attention output only, no weights)
    FF(h) = dropout2(linear2(dropout(relu(linear1(h)))))

Shapes
------
    x: (batch, seq, d_model) (batch_first), output: same shape.
    src_mask: (seq, seq) or (batch·nhead, seq, seq); src_key_padding_mask: (batch, seq);
    boolean masks use True for "not allowed to attend", as in nn.MultiheadAttention.

The contract (interview core)
-----------------------------
* ``PreNormResidual(d_model, sublayer)`` and ``PostNormResidual(d_model, sublayer)``: attributes
  ``norm`` (an ``nn.LayerNorm(d_model)``) and ``sublayer`` (the module given); ``forward(x)``
  returns ``x + sublayer(norm(x))`` and ``norm(x + sublayer(x))`` respectively.
* ``TransformerEncoderBlock(d_model, nhead, dim_feedforward=2048, dropout=0.1,
  norm_first=False)`` with the submodule names of ``nn.TransformerEncoderLayer``: ``self_attn``
  (``nn.MultiheadAttention(d_model, nhead, dropout=dropout)``), ``linear1`` (d_model →
  dim_feedforward), ``dropout``, ``linear2`` (back to d_model), ``norm1``, ``norm2``
  (``nn.LayerNorm(d_model)``, with torch's eps of 1e-5), ``dropout1``, ``dropout2``, and the
  attribute ``norm_first``.
* ``forward(x)`` on (batch, seq, d_model): after ``load_state_dict`` from an
  ``nn.TransformerEncoderLayer(..., batch_first=True, norm_first=...)`` it matches that layer
  for both wirings; dropout is active in training and off in eval.

Torch parity (stretch)
----------------------
* A float64 block and float64 wrappers compute in float64: no ``x.float()`` and no norm that
  computes in float32 inside.
* The three dropouts sit where torch's are: after attention (``dropout1``), after the ReLU
  (``dropout``) and after ``linear2`` (``dropout2``), each called as the module
  (``self.dropout1(h)``), not as ``F.dropout``: a module is what ``model.eval()``, hooks and a
  swapped-in layer act on.
* ``forward(x, src_mask=None, src_key_padding_mask=None, is_causal=False)`` passes the masks
  to the attention, as torch does.

Pitfalls interviewers probe
---------------------------
* Which tensor goes into the sublayer and which one is added back: in Pre-LN the *un-normalized*
  x is the residual; in Post-LN the norm is applied to the sum.
* ``nn.MultiheadAttention`` returns a tuple (output, weights): take the output, and pass
  ``need_weights=False`` (cheaper, and lets torch use fused attention kernels).
* Three dropouts: after attention (dropout1), inside the MLP after the activation (dropout),
  after the MLP (dropout2). They hold no parameters, so neither the state_dict nor an eval-mode
  comparison will catch a missing one; training behaviour will.
* ``batch_first=True``: without it MultiheadAttention expects (seq, batch, d_model), so either
  set it or transpose around the attention.
* Masks are passed through to the attention module, not applied by hand.

"From scratch" rules
--------------------
Here the wiring is the exercise: ``nn.LayerNorm``, ``nn.MultiheadAttention``, ``nn.Linear``,
``nn.Dropout`` and ``F.relu`` are allowed. ``nn.TransformerEncoderLayer``,
``nn.TransformerEncoder`` and ``nn.Transformer`` are not (nor the fused
``torch._transformer_encoder_layer_fwd``); the grader detects such calls at run time.

Grade yourself with::

    nox -s kata-prepost-norm
"""

from __future__ import annotations

import torch
from torch import nn


class PreNormResidual(nn.Module):
    r"""Pre-LN residual unit: :math:`x + \text{sublayer}(\text{LayerNorm}(x))`.

    Args:
        d_model: the feature size (last dim of the input), for the ``nn.LayerNorm``.
        sublayer: the module to wrap (maps ``(*, d_model)`` to ``(*, d_model)``).

    Shape:
        - Input: :math:`(*, d_{model})`
        - Output: same shape as the input
    """

    def __init__(self, d_model: int, sublayer: nn.Module) -> None:
        super().__init__()
        raise NotImplementedError("TODO: create self.norm and store self.sublayer")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")


class PostNormResidual(nn.Module):
    r"""Post-LN residual unit: :math:`\text{LayerNorm}(x + \text{sublayer}(x))`.

    Args:
        d_model: the feature size (last dim of the input), for the ``nn.LayerNorm``.
        sublayer: the module to wrap (maps ``(*, d_model)`` to ``(*, d_model)``).

    Shape:
        - Input: :math:`(*, d_{model})`
        - Output: same shape as the input
    """

    def __init__(self, d_model: int, sublayer: nn.Module) -> None:
        super().__init__()
        raise NotImplementedError("TODO: create self.norm and store self.sublayer")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")


class TransformerEncoderBlock(nn.Module):
    r"""A Transformer encoder layer, state_dict-compatible with ``nn.TransformerEncoderLayer``.

    Args:
        d_model: the number of expected features in the input.
        nhead: the number of attention heads (must divide ``d_model``).
        dim_feedforward: the hidden size of the feed-forward network. Default: 2048
        dropout: the dropout probability (attention, feed-forward, residual branches).
            Default: 0.1
        norm_first: if ``True``, Pre-LN wiring; otherwise Post-LN. Default: ``False``

    Shape:
        - Input: :math:`(N, S, d_{model})`
        - Output: :math:`(N, S, d_{model})`
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        raise NotImplementedError(
            "TODO: create self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, "
            "dropout2 and store norm_first"
        )

    def forward(
        self,
        x: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        src_key_padding_mask: torch.Tensor | None = None,
        is_causal: bool = False,
    ) -> torch.Tensor:
        raise NotImplementedError("TODO: implement forward")
