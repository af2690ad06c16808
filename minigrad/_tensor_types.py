"""PyTorch's legacy tensor type strings ('torch.FloatTensor'...), for ``Tensor.type()``."""
from __future__ import annotations

from . import _dtype

# dtype name -> the type name PyTorch gives a CPU tensor of that dtype
TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
              "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
              "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}
_BY_TYPE = {v: k for k, v in TYPE_NAMES.items()}


def type_string(dtype) -> str:
    """'torch.FloatTensor' for float32, and so on."""
    return "torch." + TYPE_NAMES.get(dtype.name, f"{dtype.name}Tensor")


def dtype_of(type_string_: str):
    """The dtype a type string names ('torch.DoubleTensor' -> float64); PyTorch's errors otherwise."""
    name = type_string_[len("torch."):] if type_string_.startswith("torch.") else None
    if name is not None and name.startswith("cuda.") and name[len("cuda."):] in _BY_TYPE:
        from ._device import not_compiled_with_cuda

        raise not_compiled_with_cuda()
    if name not in _BY_TYPE or not hasattr(_dtype, _BY_TYPE[name]):
        raise ValueError(f"invalid type: '{type_string_}'")
    return getattr(_dtype, _BY_TYPE[name])
