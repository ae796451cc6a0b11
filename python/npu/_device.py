# SPDX-License-Identifier: MIT
"""Devices: npu.devices(), npu.Device."""
import dataclasses

from . import _npu

_BACKEND_NAME = {code: name.lower() for name, code in _npu.BACKEND.items()}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What npu_device_info says about a device."""
    backend: str            # "emu" (in-process device core) or "kernel" (/dev/accel)
    path: str               # "emu" or "/dev/accel/accel0"
    driver: str
    hw_version: tuple       # (major, minor)
    clusters: int
    tpbs_per_cluster: int
    mesh_x: int
    mesh_y: int
    defect_mask: int
    healthy_mask: int
    healthy_clusters: int
    hbsm_size: int
    sram_size: int
    clock_mhz: int

    @classmethod
    def _from_dict(cls, d):
        d = dict(d)
        d["backend"] = _BACKEND_NAME.get(d["backend"], str(d["backend"]))
        d["hw_version"] = (d["hw_version"] >> 16, d["hw_version"] & 0xFFFF)
        return cls(**d)


def devices():
    """Every device libnpu can open: kernel devices first, then the emulator."""
    return [DeviceInfo._from_dict(d) for d in _npu.devices()]


class Device:
    """An open device (npu_device_open).

    ``spec``: "emu", "emu:clusters=4,...", a device node such as
    "/dev/accel/accel0", or None for libnpu's default ($NPU_DEVICE, else
    the first kernel device, else the emulator).  Close it with close() or
    a ``with`` block, after the models on it.
    """

    def __init__(self, spec=None):
        self._d = _npu.Device(spec)
        self.info = DeviceInfo._from_dict(self._d.info())

    def counters(self):
        """The device's cumulative performance counters (npu_device_counters) as a dict."""
        return self._d.counters()

    def close(self):
        self._d.close()

    @property
    def is_open(self):
        return self._d.is_open

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        i = self.info
        return (f"<npu.Device {i.path} ({i.driver}): {i.healthy_clusters} of {i.clusters} "
                f"clusters, {i.clock_mhz} MHz>")
