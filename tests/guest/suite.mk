# Guest test suite of the npu DRM-accel driver: build/guest/bin/npu-guest-test,
# a static Check binary that the guest's /init runs (every /bin/npu-*).
#
# Included by the top Makefile (paths are relative to the repository root),
# or on its own:   make -f tests/guest/suite.mk guest-bins
#
# Needs check and libsubunit-dev (static libcheck.a, libsubunit.a) and the
# DRM uAPI header drm.h: /usr/include/drm (linux-libc-dev on distributions
# that ship it), /usr/include/libdrm (libdrm-dev, headers only), or the
# uapi/drm directory of the Linux 6.12 headers the driver is built against.
# Override with GUEST_DRM_INC=DIR.  libdrm itself is not linked.

GUEST_SAVED_GOAL := $(.DEFAULT_GOAL)

GUEST_BUILD   ?= $(or $(BUILD),build)
GUEST_CC      ?= $(or $(CC),cc)
GUEST_SUITE   := tests/guest/suite
GUEST_TEST_BIN := $(GUEST_BUILD)/guest/bin/npu-guest-test

GUEST_DRM_INC ?= $(patsubst %/drm.h,%,$(firstword $(wildcard \
	/usr/include/drm/drm.h \
	/usr/include/libdrm/drm.h \
	/usr/src/linux-headers-6.12*-common/include/uapi/drm/drm.h \
	/usr/src/linux-headers-*/include/uapi/drm/drm.h)))

# -D__user=: the kernel's own uapi/drm/drm.h is not run through
# headers_install, so it still carries the __user annotation.
GUEST_CFLAGS  ?= -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 \
	-D__user= -Iuapi/drm -I$(GUEST_DRM_INC) -Iuapi -I$(GUEST_SUITE) -pthread
GUEST_LDFLAGS ?= -static
GUEST_LDLIBS  ?= -lcheck -lsubunit -lm -lrt -pthread

GUEST_SUITE_SRCS := $(sort $(wildcard $(GUEST_SUITE)/*.c))
GUEST_SUITE_DEPS := $(GUEST_SUITE_SRCS) $(wildcard $(GUEST_SUITE)/*.h) \
	uapi/drm/npu_accel.h $(wildcard uapi/npu/*.h) tests/guest/suite.mk

.PHONY: guest-bins
guest-bins: $(GUEST_TEST_BIN)

$(GUEST_TEST_BIN): $(GUEST_SUITE_DEPS)
	@test -n "$(GUEST_DRM_INC)" || { echo "suite.mk: no drm.h found: install" \
	  "linux-libc-dev with DRM headers, libdrm-dev or linux-headers-6.12, or set" \
	  "GUEST_DRM_INC" >&2; exit 1; }
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) $(GUEST_SUITE_SRCS) $(GUEST_LDLIBS) -o $@

# Do not become the default goal of a Makefile that includes this one.
ifneq ($(GUEST_SAVED_GOAL),)
.DEFAULT_GOAL := $(GUEST_SAVED_GOAL)
else ifneq ($(words $(MAKEFILE_LIST)),1)
.DEFAULT_GOAL :=
endif
