# SPDX-License-Identifier: MIT
"""npu: the M100 NPU from Python, over libnpu (Documentation/python.md).

    import numpy as np, npu
    model = npu.Model("face_detection_front_128x128_barracuda.onnx")
    outputs = model.run({model.inputs[0].name: image})   # numpy in, numpy out
    faces = npu.detect_blazeface(outputs)
    print(model.last_run.device_us, "us on the NPU")

Devices: devices(), Device.  Models: Model (inputs, outputs, run, submit,
last_run, info, save), Job, TensorInfo, RunStats, Step.  Errors: Error
(status, message), Status.  Post-processing: softmax, top_k, Labels,
quantize, dequantize, anchors, decode_detections, nms, detect_blazeface,
Detection.
"""
from . import _npu
from ._errors import Error, Status
from ._device import Device, DeviceInfo, devices
from ._model import Job, Model, ModelInfo, Precision, RunStats, Step, TensorInfo
from .post import (Detection, Labels, TopK, anchor_options, anchors, decode_detections,
                   decode_options, dequantize, detect_blazeface, nms, nms_options, quantize,
                   softmax, top_k)

#: libnpu's version this module was built against (npu.h's NPU_LIB_VERSION_*).
__version__ = "%d.%d.%d" % _npu.HEADER_VERSION

__all__ = [
    "Error", "Status", "Device", "DeviceInfo", "devices", "Job", "Model", "ModelInfo",
    "Precision", "RunStats", "Step", "TensorInfo", "Detection", "Labels", "TopK",
    "anchor_options", "anchors", "decode_detections", "decode_options", "dequantize",
    "detect_blazeface", "nms", "nms_options", "quantize", "softmax", "top_k",
]
