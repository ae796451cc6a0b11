// SPDX-License-Identifier: MIT
/*
 * The library's own version, compiled in from npu.h's NPU_LIB_VERSION_*
 * when libnpu itself is built: a program that calls npu_version() gets the
 * version of the code it is running, whatever header it was built with.
 */
#include "npu.h"

#define STR(x) #x
#define VERSION_STR(a, b, c) STR(a) "." STR(b) "." STR(c)

const char *npu_version(void)
{
	return VERSION_STR(NPU_LIB_VERSION_MAJOR, NPU_LIB_VERSION_MINOR, NPU_LIB_VERSION_PATCH);
}

uint32_t npu_version_number(void)
{
	return NPU_LIB_VERSION;
}
