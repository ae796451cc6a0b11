# make bench's guest (tests/bench/bench_guest.sh): the kernel-CI guest
# (Debian's stock 6.12 kernel, npu.ko, our QEMU) with an initramfs of its
# own, build/guest-bench/, holding only what the bench runs: the guest
# script npu-guest-bench (/bin: the only program /init runs), and in /usr
# the static npu-run, npu-submit-latency, BlazeFace with its photo and the
# host emulator's outputs for it (tests/guest/tools.mk makes those).
# Included by the top Makefile after suite.mk and tools.mk.

GUEST_BENCH         := $(BUILD)/guest-bench
GUEST_BENCH_SCRIPT  := $(GUEST_BENCH)/bin/npu-guest-bench
GUEST_BENCH_USR     := $(GUEST_BENCH)/usr
GUEST_BENCH_LATENCY := $(GUEST_BENCH_USR)/bin/npu-submit-latency
GUEST_BENCH_NPU_RUN := $(GUEST_BENCH_USR)/bin/npu-run
GUEST_BENCH_BF      := $(GUEST_BENCH_USR)/share/npu/blazeface/stamp

$(GUEST_BENCH_LATENCY): tests/guest/bench/npu_submit_latency.c uapi/drm/npu_accel.h \
		$(wildcard uapi/npu/*.h)
	@mkdir -p $(@D)
	$(GUEST_CC) $(GUEST_CFLAGS) $(GUEST_LDFLAGS) $< -o $@

$(GUEST_BENCH_SCRIPT): tests/guest/bench/npu-guest-bench.sh
	@mkdir -p $(@D)
	cp $< $@
	chmod +x $@

$(GUEST_BENCH_NPU_RUN): $(GUEST_NPU_RUN)
	@mkdir -p $(@D)
	cp $< $@

$(GUEST_BENCH_BF): $(GUEST_BF) $(GUEST_BF_EXPECT)
	@rm -rf $(@D) && mkdir -p $(@D)
	cp -R $(GUEST_BF_DIR)/. $(@D)/
	touch $@

# Phony: mkinitramfs.sh takes a few seconds and knows the kernel to use.
.PHONY: guest-bench
guest-bench: qemu module $(GUEST_BENCH_SCRIPT) $(GUEST_BENCH_LATENCY) $(GUEST_BENCH_NPU_RUN) \
		$(GUEST_BENCH_BF)
	@NPU_GUEST_OUT=$(GUEST_BENCH) NPU_GUEST_BIN=$(GUEST_BENCH)/bin NPU_GUEST_USR=$(GUEST_BENCH_USR) \
	  tests/guest/mkinitramfs.sh .
