"""Values sent between a grading and its ranks, pickled with plain CPU tensors as raw bytes.

torch pickles a tensor through its storage (a persistent id, a legacy storage record, a
rebuild through torch.serialization): about 0.15 ms a tensor each way, and a SyncBatchNorm
grading sends and receives nearly a thousand small ones, a fifth of its time. A plain, strided
CPU tensor goes here as its bytes, dtype, shape and requires_grad, and comes back as an equal,
contiguous tensor of its own; anything else (a Parameter or other subclass, a tensor with
attributes, sparse, quantized) is pickled by torch, as before. Two views of one storage come
back as two tensors: no value sent here is written through another.
"""

from __future__ import annotations

import io
import pickle
import sys
from typing import Any


def dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def loads(data: bytes) -> Any:
    return pickle.loads(data)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        torch = sys.modules.get("torch")
        if torch is None or type(obj) is not torch.Tensor:
            return NotImplemented
        if obj.layout != torch.strided or obj.device.type != "cpu" or obj.is_quantized:
            return NotImplemented
        if obj.__dict__:  # attributes set on it: torch's pickling keeps them
            return NotImplemented
        flat = obj.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        return _tensor, (data, obj.dtype, tuple(obj.shape), obj.requires_grad)


def _tensor(data: bytes, dtype: Any, shape: tuple[int, ...], requires_grad: bool) -> Any:
    import torch

    if not data:
        tensor = torch.empty(shape, dtype=dtype)
    else:  # a bytearray: torch.frombuffer warns of (and would share) a read-only buffer
        tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype).reshape(shape)
    return tensor.requires_grad_() if requires_grad else tensor
