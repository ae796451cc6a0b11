/* The npu-m100 trace events (trace-events, group hw/misc/npu). */
#include "trace/trace-hw_misc_npu.h"
