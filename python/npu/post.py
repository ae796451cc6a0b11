# SPDX-License-Identifier: MIT
"""Post-processing (npu_post.h): softmax, top-k with labels, (de)quantization,
SSD anchors, detection decoding, non-maximum suppression and BlazeFace.

Everything runs in libnpu's C code on the host: the results are the C
API's, bit for bit.
"""
import dataclasses
import os

import numpy as np

from . import _npu
from ._errors import Error, Status

#: Class labels from a text file, one per line (npu_labels_load): len(),
#: labels[i], iteration.
Labels = _npu.Labels


def softmax(x):
    """Softmax over the last axis (npu_softmax), as a new float32 array."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty_like(x)
    cols = x.shape[-1] if x.ndim else 1
    _npu.softmax(x, out, x.size // cols if cols else 0, cols)
    return out


@dataclasses.dataclass(frozen=True)
class TopK:
    """One entry of top_k(): the position in the scores, its score, its label or None."""
    index: int
    score: float
    label: str


def top_k(scores, k=5, labels=None):
    """The k best of ``scores`` (flattened, as float32), best first (npu_top_k).

    Equal scores rank by lower index, NaN last.  ``labels``: an npu.Labels,
    a label file's path, a list of strings, or None.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float32).reshape(-1)
    names = None
    if isinstance(labels, (str, os.PathLike)):
        labels = Labels(labels)
    elif labels is not None and not isinstance(labels, Labels):
        names, labels = list(labels), None
    if k < 0:
        raise Error(Status.INVALID_ARG, f"top_k: k is {k}; it must be 0 or more")
    entries = _npu.top_k(scores, scores.size, k, labels)
    if names is not None:
        entries = [(i, s, names[i] if i < len(names) else None) for i, s, _ in entries]
    return [TopK(*e) for e in entries]


def dequantize(q, scale, zero_point):
    """scale * (q - zero_point) for a uint8 or int8 array, as float32 (npu_dequantize)."""
    q = np.ascontiguousarray(q)
    code = {np.dtype(np.uint8): _npu.DTYPE["UINT8"], np.dtype(np.int8): _npu.DTYPE["INT8"]}
    if q.dtype not in code:
        raise Error(Status.INVALID_ARG, f"dequantize: a uint8 or int8 array is needed, got "
                    f"{q.dtype.name}")
    out = np.empty(q.shape, np.float32)
    _npu.dequantize(code[q.dtype], q, out, q.size, scale, zero_point)
    return out


def quantize(x, scale, zero_point, dtype=np.uint8):
    """saturate(round(x / scale) + zero_point) into uint8 or int8 (npu_quantize)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    dtype = np.dtype(dtype)
    code = {np.dtype(np.uint8): _npu.DTYPE["UINT8"], np.dtype(np.int8): _npu.DTYPE["INT8"]}
    if dtype not in code:
        raise Error(Status.INVALID_ARG, f"quantize: dtype uint8 or int8, not {dtype.name}")
    out = np.empty(x.shape, dtype)
    _npu.quantize(code[dtype], x, out, x.size, scale, zero_point)
    return out


# ---- Detectors ----

def anchor_options(preset="blazeface_front", **options):
    """The npu_anchor_options a preset (or None: MediaPipe's defaults) and ``options`` give."""
    return _npu.options("anchor", preset, options)


def decode_options(preset="blazeface_front", **options):
    """The npu_decode_options a preset (or None: neutral defaults) and ``options`` give."""
    return _npu.options("decode", preset, options)


def nms_options(**options):
    """The npu_nms_options ``options`` give over the defaults (BlazeFace's)."""
    return _npu.options("nms", None, _nms_overrides(options))


def anchors(preset="blazeface_front", **options):
    """SSD anchors (npu_anchors_generate) as float32 [N, 4]: x_center, y_center, w, h.

    ``preset``: "blazeface_front" (896 anchors) or None; ``options`` set
    npu_anchor_options fields by name (strides=[8, 16], min_scale=0.1,
    ...; a list sets its count field too, strides sets num_layers).
    """
    return np.frombuffer(_npu.anchors(preset, options), np.float32).reshape(-1, 4)


@dataclasses.dataclass(frozen=True)
class Detection:
    """A detected object (npu_detection), normalised to the model input (0..1)."""
    xmin: float
    ymin: float
    xmax: float
    ymax: float
    score: float
    class_id: int
    keypoints: tuple        # ((x, y), ...); BlazeFace: eyes, nose, mouth, ears

    def pixels(self, width, height):
        """The box in pixels of an image of that size: (x0, y0, x1, y1)."""
        return (self.xmin * width, self.ymin * height, self.xmax * width, self.ymax * height)

    def _tuple(self):
        return (self.xmin, self.ymin, self.xmax, self.ymax, self.score, self.class_id,
                self.keypoints)


def decode_detections(raw_boxes, raw_scores, anchors, preset="blazeface_front", **options):
    """Decode a detector's raw outputs (npu_detections_decode), in anchor order.

    ``raw_boxes`` [N, num_coords] and ``raw_scores`` [N, num_classes]
    float32, one row per anchor of ``anchors`` (from npu.anchors()).
    ``options`` set npu_decode_options fields (min_score_thresh=0.5, ...).
    """
    anchors = np.ascontiguousarray(anchors, dtype=np.float32)
    boxes = np.ascontiguousarray(raw_boxes, dtype=np.float32)
    scores = np.ascontiguousarray(raw_scores, dtype=np.float32)
    n = anchors.size // 4
    return [Detection(*d) for d in _npu.decode(preset, options, boxes, scores, anchors, n)]


def nms(detections, **options):
    """Non-maximum suppression (npu_nms), best first.

    ``options``: algorithm ("weighted", MediaPipe's, the default; or
    "hard"), iou_threshold (0.3), min_score_thresh, max_detections.
    """
    dets = [d._tuple() if isinstance(d, Detection) else tuple(d) for d in detections]
    return [Detection(*d) for d in _npu.nms(_nms_overrides(options), dets)]


def _nms_overrides(options):
    alg = options.get("algorithm")
    if isinstance(alg, str):
        try:
            options = dict(options, algorithm=_npu.NMS_ALGORITHM[alg.upper()])
        except KeyError:
            raise Error(Status.INVALID_ARG, f"nms algorithm '{alg}': weighted or "
                        "hard") from None
    return options


_BLAZEFACE_ANCHORS = 896
_BLAZEFACE_COORDS = 16


def detect_blazeface(outputs, threshold=0.5):
    """Faces from the outputs of MediaPipe's BlazeFace front model, best first.

    ``outputs``: Model.run()'s dict (or a list of arrays in output order).
    Score outputs end in 1, box outputs in 16 (in any split, taken in
    output order), as npu-run --detect blazeface reads them: anchors, box
    and keypoint decoding, sigmoid scores of at least ``threshold``, then
    weighted NMS.
    """
    arrays = list(outputs.values()) if isinstance(outputs, dict) else list(outputs)
    scores, boxes = [], []
    for a in arrays:
        a = np.asarray(a)
        last = a.shape[-1] if a.ndim else 1
        if last == 1:
            scores.append(a.reshape(-1))
        elif last == _BLAZEFACE_COORDS:
            boxes.append(a.reshape(-1))
    scores = np.concatenate(scores) if scores else np.empty(0, np.float32)
    boxes = np.concatenate(boxes) if boxes else np.empty(0, np.float32)
    if scores.size != _BLAZEFACE_ANCHORS or boxes.size != _BLAZEFACE_ANCHORS * _BLAZEFACE_COORDS:
        raise Error(Status.SHAPE, f"detect_blazeface: the outputs hold {scores.size} scores "
                    f"and {boxes.size // _BLAZEFACE_COORDS} boxes; MediaPipe's BlazeFace "
                    f"front model has {_BLAZEFACE_ANCHORS} of each")
    if scores.dtype != np.float32 or boxes.dtype != np.float32:
        raise Error(Status.SHAPE, "detect_blazeface: a detector's outputs are float32")
    raw = decode_detections(boxes, scores, anchors("blazeface_front"), "blazeface_front",
                            min_score_thresh=threshold)
    return nms(raw)
