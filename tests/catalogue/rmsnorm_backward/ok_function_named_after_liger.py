"""Correct: Liger-Kernel names its Function LigerRMSNormFunction, and RMSNormFunction is only
another name for it, so the autograd node is LigerRMSNormFunctionBackward. Rows flattened to
2-D, rstd saved in float32, as Liger does. The module check must look at the node's class,
not its name."""

import torch
from torch import nn

EXPECT = "pass"


def rms_norm_forward(X, W, eps):
    shape = X.shape
    dim = shape[-1]
    X2 = X.reshape(-1, dim)
    Xf = X2.to(torch.float32) if X2.dtype in (torch.float16, torch.bfloat16) else X2
    RSTD = 1.0 / torch.sqrt(torch.sum(Xf * Xf, dim=1) / dim + eps)
    Yf = Xf * RSTD[:, None]
    if W is not None:
        Yf = Yf * W.to(Yf.dtype)
    Y = Yf.to(X.dtype)
    return Y.reshape(shape), X2, RSTD


def rms_norm_backward(dY, X2, W, RSTD):
    shape = dY.shape
    dim = shape[-1]
    dY2 = dY.reshape(-1, dim)
    comp = RSTD.dtype
    dYf = dY2.to(comp)
    Xf = X2.to(comp)
    m = dYf * W.to(comp) if W is not None else dYf
    rstd = RSTD[:, None]
    dX = rstd * m - (1.0 / dim) * rstd * rstd * rstd * torch.sum(m * Xf, dim=1, keepdim=True) * Xf
    dW = None
    if W is not None:
        dW = torch.sum(dYf * (Xf * rstd), dim=0).to(W.dtype)
    return dX.to(X2.dtype).reshape(shape), dW


class LigerRMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, W, eps):
        comp = torch.float32 if X.dtype in (torch.float16, torch.bfloat16) else X.dtype
        if eps is None:
            eps = torch.finfo(comp).eps
        Y, X2, RSTD = rms_norm_forward(X, W, eps)
        ctx.save_for_backward(X2, W, RSTD)
        return Y

    @staticmethod
    def backward(ctx, dY):
        X2, W, RSTD = ctx.saved_tensors
        dX, dW = rms_norm_backward(dY, X2, W, RSTD)
        return dX, dW, None


RMSNormFunction = LigerRMSNormFunction


def rms_norm(x, weight=None, eps=None):
    return RMSNormFunction.apply(x, weight, eps)


class RMSNorm(nn.Module):
    def __init__(
        self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None
    ):
        super().__init__()
        self.normalized_shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = nn.Parameter(
                torch.ones(self.normalized_shape, device=device, dtype=dtype)
            )
        else:
            self.register_parameter("weight", None)

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)
