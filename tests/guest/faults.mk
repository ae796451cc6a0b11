# npu-guest-faults: the fault-injection sweep of the npu driver
# (tests/guest/faults/faults.c), a static binary like npu-guest-test, built
# from the suite's helpers (npu_gt.c).  The guest's /init runs it like every
# /bin/npu-*; on a kernel without fail-nth it prints a skip line.
#
# Included by the top Makefile after tests/guest/suite.mk (its GUEST_* flags).

GUEST_FAULTS_BIN  := $(GUEST_BUILD)/guest/bin/npu-guest-faults
GUEST_FAULTS_SRCS := tests/guest/faults/faults.c $(GUEST_SUITE)/npu_gt.c
GUEST_FAULTS_DEPS := $(GUEST_FAULTS_SRCS) $(GUEST_SUITE)/npu_gt.h \
	uapi/drm/npu_accel.h $(wildcard uapi/npu/*.h) tests/guest/faults.mk

guest-bins: $(GUEST_FAULTS_BIN)

$(GUEST_FAULTS_BIN): $(GUEST_FAULTS_DEPS)
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) $(GUEST_FAULTS_SRCS) $(GUEST_LDLIBS) -o $@
