"""Devices as CPU-only PyTorch code expects them: ``device("cuda")`` can be named (as in PyTorch
built without CUDA), but putting data there is PyTorch's "Torch not compiled with CUDA enabled"."""
from __future__ import annotations

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """A device name: ``device("cpu")``, ``device("cuda:0")``, ``device("cuda", 0)``. Only the CPU holds data."""

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if isinstance(type, int) and not isinstance(type, bool):  # device(0): PyTorch reads an ordinal as CUDA's
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({_tn(type)}), but "
                            "expected one of: (torch.device device), (str type, int index = -1)")
        name, _, ordinal = type.partition(":")
        if name not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type}")
        if ordinal:
            if index is not None or not ordinal.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(ordinal)
        self.type = name
        self.index = index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, device) and other.type == self.type and other.index == self.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


def _tn(x) -> str:
    return type(x).__name__


def not_compiled_with_cuda() -> AssertionError:
    return AssertionError("Torch not compiled with CUDA enabled\nminigrad runs on the CPU only: use device='cpu' "
                          "(e.g. device = 'cuda' if torch.cuda.is_available() else 'cpu').")


def check_device(dev) -> None:
    """Accept None and the CPU; anything else is PyTorch's error for a machine without that device."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cpu":
        return
    if d.type == "cuda":
        raise not_compiled_with_cuda()
    raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices\nminigrad runs on the CPU only: "
                       "use device='cpu'.")


CPU = device("cpu")
_default = [CPU]


def set_default_device(dev) -> None:
    """Only the CPU is available; ``set_default_device("cpu")`` (or None) is accepted."""
    check_device(dev)
    _default[0] = CPU


def get_default_device() -> device:
    return _default[0]
