"""The error for a PyTorch name minigrad does not have: ``AttributeError: minigrad does not implement
torch.X (PyTorch API)``, with a second line naming a substitute where there is one.

A name PyTorch does not have either (a typo) gets Python's usual message, with minigrad's closest
names as suggestions. Used by the module-level ``__getattr__`` of minigrad, minigrad.nn,
minigrad.nn.functional, minigrad.linalg, minigrad.cuda, minigrad.autograd, and for Tensor by one
class-level stub per missing PyTorch method (a ``Tensor.__getattr__`` would slow every attribute
read of every tensor: CPython stops specialising attribute access on such a class).
"""
from __future__ import annotations

import difflib

_NO_GPU = "minigrad runs on the CPU only; drop the call (CPU tensors need nothing of the kind)."
_NO_COMPLEX = "minigrad has no complex dtype: keep the real and imaginary parts in two real tensors."
_CONV = ("minigrad has 1-d and 2-d convolutions only (nn.Conv1d, nn.Conv2d, nn.functional.conv1d / conv2d); "
         "write others as a custom autograd.Function (forward with NumPy, backward returning the gradients).")
_RNN = "minigrad has no recurrent layers: write one step with nn.Linear and tanh, and loop over the time steps."
_POOL = ("minigrad has 2-d pooling in nn and nn.functional (max_pool2d, avg_pool2d, adaptive_avg_pool2d); for others, "
         "reshape so that each window is a dimension, then take amax or mean over it.")
_ATTN = "minigrad has no attention layers: write scaled dot-product attention with matmul, softmax and a mask."
_NUMPY_LINALG = ("minigrad.linalg has inv, det, solve, norm and cross; for decompositions use numpy.linalg on "
                 "t.detach().numpy() (not differentiable).")
_LR = ("minigrad.optim has no learning-rate schedulers: set it yourself between epochs, "
       "e.g. for g in optimizer.param_groups: g['lr'] *= 0.1.")
_OPTIM = "minigrad.optim has SGD and Adam."
_ADAMW = ("minigrad.optim has SGD and Adam; AdamW is Adam with decoupled weight decay: use Adam(weight_decay=0) and "
          "multiply the weights by (1 - lr * wd) under no_grad before each step.")

SUBSTITUTES = {
    "autocast": "minigrad computes in the tensors' own dtype (no mixed precision): drop the autocast block.",
    "bfloat16": "minigrad has no bfloat16: use minigrad.float32 (or float16).",
    "complex64": _NO_COMPLEX, "complex128": _NO_COMPLEX, "cfloat": _NO_COMPLEX, "cdouble": _NO_COMPLEX,
    "complex": _NO_COMPLEX, "view_as_real": _NO_COMPLEX, "view_as_complex": _NO_COMPLEX,
    "conv1d": _CONV, "conv2d": _CONV, "conv3d": _CONV, "conv_transpose2d": _CONV,
    "max_pool1d": _POOL, "max_pool2d": _POOL, "avg_pool2d": _POOL,
    "fft": "minigrad has no FFTs: use numpy.fft on t.detach().numpy() (not differentiable).",
    "distributions": ("minigrad has no probability distributions: sample with randn / rand / multinomial and write "
                      "log-probabilities with minigrad operations."),
    "sparse": "minigrad has dense tensors only.",
    "quantization": "minigrad has no quantization.",
    "from_dlpack": "minigrad tensors are NumPy arrays: use minigrad.from_numpy(array).",
    "use_deterministic_algorithms": "minigrad is deterministic already (seed it with minigrad.manual_seed).",
    "set_num_threads": "minigrad runs on NumPy: set OMP_NUM_THREADS / OPENBLAS_NUM_THREADS before starting Python.",
    "get_num_threads": "minigrad runs on NumPy: its BLAS threads are set by OMP_NUM_THREADS / OPENBLAS_NUM_THREADS.",
    "svd": _NUMPY_LINALG, "qr": _NUMPY_LINALG, "cholesky": _NUMPY_LINALG, "eig": _NUMPY_LINALG,
    "linalg.svd": _NUMPY_LINALG, "linalg.qr": _NUMPY_LINALG, "linalg.cholesky": _NUMPY_LINALG,
    "linalg.eig": _NUMPY_LINALG, "linalg.eigh": _NUMPY_LINALG, "linalg.pinv": _NUMPY_LINALG,
    "linalg.matrix_rank": _NUMPY_LINALG, "linalg.lstsq": _NUMPY_LINALG,
    "pinverse": _NUMPY_LINALG,
    "cdist": "write it with broadcasting: ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1).sqrt().",
    "cumulative_trapezoid": "write it with cumsum: ((y[1:] + y[:-1]) / 2 * dx).cumsum(0).",
    "nn.Conv3d": _CONV, "nn.ConvTranspose2d": _CONV,
    "nn.functional.conv_transpose2d": _CONV,
    "nn.MaxPool1d": _POOL,
    "nn.RNN": _RNN, "nn.LSTM": _RNN, "nn.GRU": _RNN, "nn.RNNCell": _RNN, "nn.LSTMCell": _RNN, "nn.GRUCell": _RNN,
    "nn.MultiheadAttention": _ATTN, "nn.Transformer": _ATTN, "nn.TransformerEncoder": _ATTN,
    "nn.TransformerEncoderLayer": _ATTN, "nn.functional.scaled_dot_product_attention": _ATTN,
    "nn.BatchNorm2d": "minigrad has BatchNorm1d: move the channels last and flatten the other dims into the batch.",
    "nn.Dropout2d": "minigrad has nn.Dropout (elementwise).",
    "nn.DataParallel": "minigrad runs in one CPU process.", "nn.parallel": "minigrad runs in one CPU process.",
    "nn.functional.interpolate": "minigrad has no resampling: use repeat_interleave for nearest-neighbour upsampling.",
    "nn.KLDivLoss": "write it with minigrad ops: (target * (target.log() - input)).sum() / batch_size.",
    "optim.lr_scheduler": _LR, "optim.AdamW": _ADAMW, "optim.RMSprop": _OPTIM, "optim.Adagrad": _OPTIM,
    "optim.LBFGS": _OPTIM, "optim.Adadelta": _OPTIM,
    "Tensor.pin_memory": _NO_GPU, "Tensor.share_memory_": "minigrad runs in one process: drop the call.",
    "Tensor.storage": "minigrad tensors are NumPy arrays: use t.numpy().",
    "Tensor.untyped_storage": "minigrad tensors are NumPy arrays: use t.numpy().",
    "Tensor.to_sparse": "minigrad has dense tensors only.",
    "Tensor.apply_": "write the function with vectorized minigrad (or NumPy) operations instead of per element.",
    "Tensor.map_": "write the function with vectorized minigrad (or NumPy) operations instead of per element.",
    "Tensor.cfloat": _NO_COMPLEX, "Tensor.real": _NO_COMPLEX, "Tensor.imag": _NO_COMPLEX,
    "Tensor.bfloat16": "minigrad has no bfloat16: use .float() (or .half()).",
}

_GENERAL = ("minigrad covers CPU tensors (float, int, bool), autograd, nn (layers, activations, losses, "
            "normalization), optim (SGD, Adam); PyTorch itself has the rest.")


def _torch_names(namespace: str) -> frozenset:
    from ._torch_api import NAMES

    cache = _torch_names.__dict__.setdefault("cache", {})
    if namespace not in cache:
        cache[namespace] = frozenset(NAMES.get(namespace, "").split())
    return cache[namespace]


def missing(qualname: str, own_names=(), owner: str | None = None) -> AttributeError:
    """The AttributeError for ``torch.<qualname>`` (e.g. "nn.Conv2d", "Tensor.pin_memory", "cumtrapz").

    ``own_names``: minigrad's names in that namespace (for "did you mean"); ``owner``: how Python would
    name the object in its own message ("module 'minigrad.nn'", "'Tensor' object").
    """
    namespace, _, name = qualname.rpartition(".")
    if name in _torch_names(namespace):
        hint = SUBSTITUTES.get(qualname) or SUBSTITUTES.get(name) or _suggest(name, own_names) or _GENERAL
        return AttributeError(f"minigrad does not implement torch.{qualname} (PyTorch API)\n{hint}")
    where = owner or (f"module 'minigrad.{namespace}'" if namespace else "module 'minigrad'")
    close = _suggest(name, own_names)
    return AttributeError(f"{where} has no attribute '{name}'" + (f"\n{close}" if close else ""))


def _suggest(name: str, own_names) -> str:
    close = difflib.get_close_matches(name, [n for n in own_names if not n.startswith("_")], n=3, cutoff=0.75)
    return f"Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""


class _MissingMethod:
    """``Tensor.<name>`` for a PyTorch tensor attribute minigrad lacks: reading it raises ``missing(...)``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __set_name__(self, owner, name) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        own = [n for n in dir(owner) if not isinstance(owner.__dict__.get(n), _MissingMethod)]
        raise missing(f"Tensor.{self.name}", own, owner="'Tensor' object")


def install_tensor_stubs(tensor_cls) -> None:
    """One stub per public PyTorch tensor attribute that ``tensor_cls`` does not define (called once, last)."""
    for name in _torch_names("Tensor"):
        if not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, _MissingMethod(name))
