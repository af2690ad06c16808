"""Stochastic gradient descent with PyTorch's momentum, dampening, Nesterov and weight-decay rule."""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer


class SGD(Optimizer):
    """For each parameter p with gradient g (PyTorch's update, step by step):

        g = g + weight_decay * p                      (if weight_decay)
        buf = g  (first step)  |  buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov)  |  g = buf (if momentum)
        p = p - lr * g
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        if isinstance(lr, Tensor):
            lr = lr.item()
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def step(self, closure=None):
        """Update every parameter that has a gradient, in place."""
        loss = self._closure(closure)
        state = self.state
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            for p, d, g in self._gradients(group):
                if momentum != 0:
                    s = state[p]
                    buf = s.get("momentum_buffer")
                    if buf is None:
                        buf = s["momentum_buffer"] = Tensor._wrap(np.array(g, dtype=d.dtype))
                    else:
                        b = buf._data
                        b *= momentum
                        if dampening == 0:
                            b += g
                        else:
                            b += (1 - dampening) * g
                    g = g + momentum * buf._data if nesterov else buf._data
                d -= lr * g
                p._bump_version()
        return loss
