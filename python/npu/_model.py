# SPDX-License-Identifier: MIT
"""Models: npu.Model (compile, run, submit), its tensors' info and run stats."""
import dataclasses
import enum
import math
import os

import numpy as np

from . import _npu, _dtypes
from ._device import Device
from ._errors import Error, Status

#: Compile precisions (npu_precision): DEFAULT, BF16, INT8, W8, BF16X3.
Precision = enum.IntEnum("Precision", _npu.PRECISION, module="npu")


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """A model input or output (npu_tensor_info)."""
    name: str
    dtype: np.dtype         # the numpy dtype of its arrays (bfloat16: uint16 bits)
    npu_dtype: str          # libnpu's name: "float32", "bfloat16", ...
    shape: tuple            # -1 for a dim a run decides (outputs of run-time size)
    nbytes: int             # the size, or for a run-time size the most a run produces
    scale: float            # quantized: real = scale * (q - zero_point); else 0
    zero_point: int

    @classmethod
    def _from_tuple(cls, t):
        name, code, dims, nbytes, scale, zp = t
        return cls(name, _dtypes.NUMPY[code], _dtypes.NAME[code], tuple(dims), nbytes, scale, zp)

    @property
    def _code(self):
        return next(c for c, n in _dtypes.NAME.items() if n == self.npu_dtype)


@dataclasses.dataclass(frozen=True)
class Step:
    """One step (program, or host step) of a run (npu_step_info)."""
    label: str              # what it runs, "Conv conv1"
    device_cycles: int      # simulated cycles; 0 for a host step
    on_host: bool
    op: str                 # a host step's ONNX operator, else ""
    host_us: float


@dataclasses.dataclass(frozen=True)
class RunStats:
    """Timing of a run (npu_run_stats) and its steps."""
    device_cycles: int      # simulated cycles, all steps
    device_us: float        # the same at the device clock
    wall_us: float          # submit to completion, host time
    steps: tuple


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """What a compiled model is (npu_model_info)."""
    batch: int
    clusters: int
    steps: int
    const_bytes: int
    program_bytes: int
    scratch_bytes: int
    io_bytes: int
    state_bytes: int
    host_steps: int
    host_nodes: str
    notes: str


def _is_buffer(x):
    return isinstance(x, (bytes, bytearray, memoryview))


class Model:
    """A model compiled for a device, ready to run.

    ``source``: an ONNX or compiled .npum file (a path), an http(s):// or
    file:// URL (fetched through libnpu's model cache), or the file's bytes.
    ``shapes``: {input name: dims} for inputs with symbolic or unknown dims.
    ``precision``: None (bf16 for float models), "bf16", "int8" (needs
    ``calibration_dir``), "w8", "bf16x3", or an npu.Precision.
    ``device``: an npu.Device, a device spec string, or None for libnpu's
    default; a device the model opens itself is closed with it.
    ``sha256`` (64 hex digits) and ``offline`` (cache only) apply to a URL
    (npu_fetch_options): a download that does not match is CHECKSUM.

    Compiling and running release the GIL.  One run at a time per model
    (runs from several threads take turns); use one Model per thread for
    parallel runs.  Arrays returned own their memory and outlive the model.
    """

    def __init__(self, source, shapes=None, precision=None, device=None, *, clusters=0,
                 batch=0, allow_cpu_fallback=False, calibration_dir=None,
                 max_loop_iterations=0, sha256=None, offline=False):
        if not _is_buffer(source):
            source = os.fspath(source)
            if isinstance(source, bytes):
                source = os.fsdecode(source)
        self._own_device = not isinstance(device, Device)
        self.device = Device(device) if self._own_device else device
        try:
            self._m = _npu.Model(source, self.device._d, _precision(precision),
                                 _shapes(shapes), clusters, batch, bool(allow_cpu_fallback),
                                 None if calibration_dir is None else os.fspath(calibration_dir),
                                 max_loop_iterations, sha256, bool(offline))
        except BaseException:
            if self._own_device:
                self.device.close()
            raise
        n_in, n_out = self._m.counts()
        self.inputs = tuple(TensorInfo._from_tuple(self._m.input_info(i)) for i in range(n_in))
        self.outputs = tuple(TensorInfo._from_tuple(self._m.output_info(i)) for i in range(n_out))
        self.info = ModelInfo(**self._m.info())
        self.batch = self.info.batch
        self.last_run = None    # RunStats of the last completed run

    # ---- Running ----

    def run(self, inputs):
        """Run once on ``inputs`` and return {output name: array}.

        ``inputs``: {name: array}, a list in input order, or one array for
        a one-input model.  Each array must have the input's numpy dtype
        and shape (with a batch B: shape (B, *shape)); nothing is converted
        silently.  Errors raise npu.Error.
        """
        ins = self._inputs(inputs)
        outs, finish = self._outputs()
        return finish(self._m.run(ins, outs))

    def submit(self, inputs):
        """Start a run and return an npu.Job at once; job.wait() gives run()'s result.

        The inputs are copied before submit() returns.  One job at a time
        per model: run() or submit() before the job is waited for raise
        npu.Error (INVALID_ARG).
        """
        ins = self._inputs(inputs)
        outs, finish = self._outputs()
        return Job(self._m.submit(ins, outs), finish)

    def _inputs(self, inputs):
        infos = self.inputs
        if isinstance(inputs, dict):
            names = {i.name for i in infos}
            for k in inputs:
                if k not in names:
                    raise Error(Status.NOT_FOUND, f"the model has no input named '{k}'; its "
                                f"inputs: {', '.join(i.name for i in infos)}")
            missing = [i.name for i in infos if i.name not in inputs]
            if missing:
                raise Error(Status.INVALID_ARG, f"input '{missing[0]}' is not given; the "
                            f"model's inputs: {', '.join(i.name for i in infos)}")
            arrays = [inputs[i.name] for i in infos]
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(infos):
                raise Error(Status.INVALID_ARG, f"{len(inputs)} inputs given, the model has "
                            f"{len(infos)}: {', '.join(i.name for i in infos)}")
            arrays = list(inputs)
        elif len(infos) == 1:
            arrays = [inputs]
        else:
            raise Error(Status.INVALID_ARG, f"the model has {len(infos)} inputs: pass a dict "
                        "{name: array} or a list in input order")
        arrays = [self._check_input(info, a) for info, a in zip(infos, arrays)]
        # The C API's order: batch-major, input i of element b at b * n + i.
        if self.batch > 1:
            return [(info._code, a[b]) for b in range(self.batch)
                    for info, a in zip(infos, arrays)]
        return [(info._code, a) for info, a in zip(infos, arrays)]

    def _check_input(self, info, a):
        a = np.asarray(a)
        if a.dtype != info.dtype and a.dtype.name == info.dtype.name:
            a = a.astype(info.dtype)    # big endian: the same values, libnpu's byte order
        want = info.shape if self.batch <= 1 else (self.batch,) + info.shape
        if a.dtype != info.dtype or a.shape != want:
            hint = ""
            if a.dtype != info.dtype:
                hint = f" (.astype(numpy.{info.dtype.name}) converts)"
            elif a.size == math.prod(want):
                hint = f" (.reshape({want}) if the data is in that order)"
            raise Error(Status.SHAPE, f"input '{info.name}': got {a.dtype.name} "
                        f"{list(a.shape)}; the model wants {info.npu_dtype} {list(want)}{hint}")
        return np.ascontiguousarray(a)

    def _outputs(self):
        """Fresh output arrays, and the function that shapes them after the run."""
        arrays, views = [], []
        for info in self.outputs:
            if any(d < 0 for d in info.shape):      # run-time size: the bound, flat
                a = np.empty(info.nbytes // info.dtype.itemsize, info.dtype)
            elif self.batch > 1:
                a = np.empty((self.batch,) + info.shape, info.dtype)
            else:
                a = np.empty(info.shape, info.dtype)
            arrays.append(a)
        if self.batch > 1:
            views = [(info._code, a[b]) for b in range(self.batch)
                     for info, a in zip(self.outputs, arrays)]
        else:
            views = [(info._code, a) for info, a in zip(self.outputs, arrays)]

        def finish(result):
            self.last_run = RunStats(result["device_cycles"], result["device_us"],
                                     result["wall_us"],
                                     tuple(Step(l, c, bool(h), op, us)
                                           for l, c, h, op, us in result["steps"]))
            out = {}
            for info, a, actual in zip(self.outputs, arrays, result["outputs"]):
                if any(d < 0 for d in info.shape):
                    dims = tuple(actual[2])
                    a = a[:math.prod(dims)].reshape(dims)
                out[info.name] = a
            return out
        return views, finish

    # ---- The rest ----

    def save(self, path):
        """Write the compiled model in libnpu's native format (.npum)."""
        self._m.save(os.fspath(path))

    def trace(self, max_events=4 << 20):
        """Record the simulated timeline of the runs from now on (the
        emulator only: npu.Error UNSUPPORTED on a kernel device); a run of
        more than max_events spans and link transfers cannot be written.
        0 stops recording."""
        self._m.trace(max_events)

    def write_trace(self, path):
        """Write the last run's timeline as Chrome trace-event JSON, for
        https://ui.perfetto.dev or chrome://tracing (npu-run(1), TRACE)."""
        self._m.write_trace(os.fspath(path))

    def close(self):
        """Free the model and its device memory (and the device, if it opened it)."""
        self._m.close()
        if self._own_device:
            self.device.close()

    @property
    def is_open(self):
        return self._m.is_open

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        ins = ", ".join(f"{i.name}: {i.npu_dtype}{list(i.shape)}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.npu_dtype}{list(o.shape)}" for o in self.outputs)
        return f"<npu.Model ({ins}) -> ({outs}) on {self.device.info.path}>"


class Job:
    """A run started by Model.submit()."""

    def __init__(self, job, finish):
        self._job = job
        self._finish = finish
        self._result = None

    def wait(self, timeout=None):
        """Wait (without the GIL) and return {output name: array}, as Model.run().

        ``timeout`` in seconds, None for ever: npu.Error TIMEOUT if the
        run is still going then (wait again later).  A job dropped
        unwaited is waited for when it is freed.
        """
        if self._result is None:
            ns = -1 if timeout is None else max(0, int(timeout * 1e9))
            self._result = self._finish(self._job.wait(ns))
        return self._result

    @property
    def done(self):
        """True once the run has finished, well or not (waits for none; wait()
        then returns its outputs or raises its error)."""
        if self._job.finished:
            return True
        try:
            self.wait(0)
        except Error as e:
            return e.status != Status.TIMEOUT
        return True


def _precision(p):
    if p is None:
        return 0
    if isinstance(p, str):
        try:
            return Precision[p.upper()]
        except KeyError:
            raise Error(Status.INVALID_ARG, f"precision '{p}': one of "
                        f"{', '.join(n.lower() for n in Precision.__members__)}") from None
    return int(Precision(p))


def _shapes(shapes):
    if shapes is None:
        return None
    if not isinstance(shapes, dict):
        raise Error(Status.INVALID_ARG, "shapes: a dict {input name: dims} is needed")
    return [(str(k), tuple(int(d) for d in v)) for k, v in shapes.items()]
