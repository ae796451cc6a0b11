// SPDX-License-Identifier: MIT
/*
 * npu-run --trace FILE.  libnpu records and writes the trace
 * (npu_context_trace, npu_context_write_trace); this file only checks
 * early what would otherwise fail after a long compile, and words the
 * errors for the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"
#include "util.h"

/*
 * Events (spans and link transfers) one run may record, at 64 bytes each:
 * BlazeFace records 4.6 k, so this leaves room for models a thousand
 * times its size while bounding the recording to 256 MiB; a bigger run
 * fails to write, with a message naming the bound.
 */
#define NR_TRACE_MAX_EVENTS (4u << 20)

int nr_trace_check(const char *path, npu_device *dev)
{
	npu_device_info info;
	FILE *f;

	if (npu_device_get_info(dev, &info) == NPU_OK && info.backend != NPU_BACKEND_EMU)
		return nr_fail(NR_EXIT_USAGE, "--trace needs the emulator: %s (%s) does not show "
			       "the device's timeline to the host; add --device emu", info.path,
			       info.driver);
	/* Created now (and written after the run): a bad path costs no compile. */
	f = fopen(path, "w");
	if (!f)
		return nr_fail(NR_EXIT_USAGE, "--trace %s: cannot write it (%s); give a path in a "
			       "writable directory", path, strerror(errno));
	fclose(f);
	return 0;
}

int nr_trace_start(npu_context *ctx)
{
	if (npu_context_trace(ctx, NR_TRACE_MAX_EVENTS) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "--trace: %s", npu_last_error());
	return 0;
}

int nr_trace_write(npu_context *ctx, const char *path)
{
	if (npu_context_write_trace(ctx, path) != NPU_OK)
		return nr_fail(NR_EXIT_RUNTIME, "--trace %s: %s", path, npu_last_error());
	return 0;
}
