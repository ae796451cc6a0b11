# SPDX-License-Identifier: MIT
"""npu.Error and npu.Status: libnpu's status codes as Python sees them."""
import enum

from . import _npu

#: libnpu's npu_status codes, by the name after NPU_ERR_ (OK, INVALID_ARG, ...).
#: Built from the extension's table, itself built from npu.h's enum.
Status = enum.IntEnum("Status", _npu.STATUS, module=__name__)


class Error(Exception):
    """A libnpu call failed.

    ``status`` is an :class:`npu.Status` (``status.name`` such as
    ``"SHAPE"``, ``int(status)`` libnpu's code) and ``message`` libnpu's
    sentence saying what was wrong and what to do (``npu_last_error()``),
    or the module's own in the same style for what it checks before
    calling libnpu (a numpy array's dtype or shape).
    """

    def __init__(self, status, message):
        super().__init__(int(status), message)
        self.status = Status(status)
        self.message = message

    def __str__(self):
        return f"{self.message} [{self.status.name}: {_npu.status_str(self.status)}]"


Error.__module__ = Status.__module__ = "npu"
_npu._set_error_class(Error)
