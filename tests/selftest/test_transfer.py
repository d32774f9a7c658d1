"""Self-tests: what a grading sends its ranks and gets back is the value it sent."""

from __future__ import annotations

import pickle

import pytest
import torch
from torch import nn

from norm_katas.runtime import transfer

TENSORS = {
    "float64": torch.randn(3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)),
    "bfloat16": torch.arange(6, dtype=torch.bfloat16).reshape(2, 3) / 7,
    "int64 scalar": torch.tensor(5),
    "bool": torch.tensor([True, False, True]),
    "complex, conjugated": torch.tensor([1 + 2j, 3 - 1j]).conj(),
    "negative bit": torch.tensor([1 + 2j, 3 - 1j]).conj().imag,
    "empty": torch.empty(0, 3),
    "transposed": torch.arange(12.0).reshape(3, 4).t(),
    "expanded": torch.arange(3.0).expand(4, 3),
}


@pytest.mark.parametrize("name", TENSORS)
def test_a_tensor_comes_back_equal(name: str) -> None:
    sent = TENSORS[name]
    back = transfer.loads(transfer.dumps({"value": [sent, (sent,)]}))["value"]
    for tensor in (back[0], back[1][0]):
        assert type(tensor) is torch.Tensor and tensor.dtype == sent.dtype
        assert tensor.shape == sent.shape and not tensor.requires_grad
        assert torch.equal(tensor, sent.resolve_conj().resolve_neg())


def test_requires_grad_is_kept_and_the_graph_is_not() -> None:
    leaf = torch.ones(3, requires_grad=True)
    for sent in (leaf, leaf * 2):
        back = transfer.loads(transfer.dumps(sent))
        assert back.requires_grad and back.is_leaf and torch.equal(back, sent.detach())


def test_what_is_not_a_plain_tensor_is_pickled_by_torch() -> None:
    # A Parameter, and a tensor carrying attributes, come back as torch's pickle brings them.
    parameter = nn.Parameter(torch.ones(2))
    tagged = torch.zeros(2)
    tagged.note = "kept"
    back = transfer.loads(transfer.dumps([parameter, tagged]))
    assert type(back[0]) is nn.Parameter and torch.equal(back[0], parameter)
    assert back[1].note == "kept"
    assert transfer.loads(pickle.dumps("torch's own bytes")) == "torch's own bytes"
