"""Adam (Kingma & Ba) with PyTorch's bias correction, L2 weight decay and AMSGrad option."""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer


class Adam(Optimizer):
    """For each parameter p with gradient g, at step t (PyTorch's update):

        g = g + weight_decay * p                                    (if weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                                       (amsgrad: use v_max below)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        if isinstance(lr, Tensor):
            lr = lr.item()
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place."""
        loss = self._closure(closure)
        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            amsgrad = group["amsgrad"]
            for p, d, g in self._gradients(group):
                s = self.state[p]
                if not s:
                    s["step"] = Tensor._wrap(np.array(0.0, dtype=np.float32))
                    s["exp_avg"] = Tensor._wrap(np.zeros_like(d))
                    s["exp_avg_sq"] = Tensor._wrap(np.zeros_like(d))
                    if amsgrad:
                        s["max_exp_avg_sq"] = Tensor._wrap(np.zeros_like(d))
                s["step"]._data += 1
                t = float(s["step"]._data)
                m = s["exp_avg"]._data
                v = s["exp_avg_sq"]._data
                m *= beta1
                m += (1 - beta1) * g
                v *= beta2
                tmp = g * g
                tmp *= 1 - beta2
                v += tmp
                if amsgrad:
                    vmax = s["max_exp_avg_sq"]._data
                    np.maximum(vmax, v, out=vmax)
                    v = vmax
                step_size = lr / (1 - beta1 ** t)
                bc2_sqrt = math.sqrt(1 - beta2 ** t)
                denom = np.sqrt(v, out=tmp)
                denom /= bc2_sqrt
                denom += eps
                np.divide(m, denom, out=denom)
                denom *= step_size
                d -= denom
                p._bump_version()
        return loss
