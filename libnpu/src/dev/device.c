// SPDX-License-Identifier: MIT
/*
 * Device enumeration and opening: kernel devices first, the emulator as
 * the fallback, $NPU_DEVICE to choose.
 */
#include <stdlib.h>
#include <string.h>

#include "dev/npu_dev.h"

npu_status npu_device_list(npu_device_info *infos, size_t cap, size_t *count)
{
	size_t n;

	if (!count || (cap && !infos))
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_device_list: NULL argument");
	n = npu_kernel_list(infos, cap);
	if (n < cap) {
		memset(&infos[n], 0, sizeof(infos[n]));
		infos[n].backend = NPU_BACKEND_EMU;
		strcpy(infos[n].path, "emu");
		strcpy(infos[n].driver, "emu");
	}
	*count = n + 1;
	return NPU_OK;
}

npu_status npu_device_open(const char *spec, npu_device **out)
{
	npu_device_info first;

	if (!out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_device_open: NULL output");
	*out = NULL;
	if (!spec || !*spec)
		spec = getenv("NPU_DEVICE");
	if (spec && *spec) {
		if (!strcmp(spec, "emu") || !strncmp(spec, "emu:", 4))
			return npu_emu_open(spec, out);
		return npu_kernel_open(spec, out);
	}
	if (npu_kernel_list(&first, 1))
		return npu_kernel_open(first.path, out);
	return npu_emu_open("emu", out);
}

void npu_device_close(npu_device *dev)
{
	if (dev)
		dev->ops->close(dev);
}

npu_status npu_device_read_counters(npu_device *dev, npu_device_counters *out)
{
	if (!dev || !out)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_device_read_counters: NULL argument");
	memset(out, 0, sizeof(*out));
	if (!dev->ops->counters)
		return NPU_OK;
	return dev->ops->counters(dev, out);
}

uint64_t npu_dev_dma_bytes(struct npu_device *dev)
{
	npu_device_counters c;

	if (dev->ops->dma_bytes)
		return dev->ops->dma_bytes(dev);
	if (npu_device_read_counters(dev, &c) || !(c.have & NPU_HAVE_TRAFFIC))
		return 0;
	return c.dma_bytes[0] + c.dma_bytes[1];
}

npu_status npu_device_get_info(const npu_device *dev, npu_device_info *info)
{
	if (!dev || !info)
		return npu_fail(NPU_ERR_INVALID_ARG, "npu_device_get_info: NULL argument");
	*info = dev->info;
	return NPU_OK;
}
