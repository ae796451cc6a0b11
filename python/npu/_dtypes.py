# SPDX-License-Identifier: MIT
"""libnpu's tensor types (npu_dtype) and the numpy dtypes that hold them."""
import numpy as np

from . import _npu

# npu_dtype_str() name -> numpy type.  numpy has no bfloat16: such a
# tensor is its raw bits, uint16, as libnpu stores it.
_NUMPY = {
    "float32": np.float32, "float16": np.float16, "float64": np.float64,
    "bfloat16": np.uint16, "bool": np.bool_,
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
}

#: npu_dtype code -> libnpu's name for it ("float32", "bfloat16", ...)
NAME = {code: name for code, (name, _size) in _npu.DTYPE_INFO.items()}
#: npu_dtype code -> the numpy dtype of arrays holding it (little endian)
NUMPY = {code: np.dtype(_NUMPY[name]).newbyteorder("<") for code, name in NAME.items()}

for _code, (_name, _size) in _npu.DTYPE_INFO.items():
    # libnpu's sizes and numpy's agree, or tensors would be cut short.
    assert NUMPY[_code].itemsize == _size, (_name, _size)
