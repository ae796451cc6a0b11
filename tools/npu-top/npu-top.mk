# npu-top: live monitor of kernel NPU devices and libnpu emulators.
# Included by the top Makefile.  It reads sysfs, fdinfo and the emulator
# stat files only, so it deliberately does not link libnpu.

NPU_TOP_BIN  := $(BUILD)/bin/npu-top
NPU_TOP_SRCS := $(sort $(wildcard tools/npu-top/*.c))
NPU_TOP_HDRS := $(wildcard tools/npu-top/*.h) uapi/npu/npu_emu_stats.h uapi/npu/npu_hw_geom.h \
                uapi/npu/npu_hw_common.h
NPU_TOP_CURSES_CFLAGS := $(shell pkg-config --cflags ncursesw 2>/dev/null)
NPU_TOP_CURSES_LIBS   := $(or $(shell pkg-config --libs ncursesw 2>/dev/null),-lncursesw)

all: $(NPU_TOP_BIN)
check-tools: $(NPU_TOP_BIN)

$(NPU_TOP_BIN): $(NPU_TOP_SRCS) $(NPU_TOP_HDRS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(OPTFLAGS) -Iuapi $(TOOLS_COMMON_CFLAGS) $(NPU_TOP_CURSES_CFLAGS) \
	  $(NPU_TOP_SRCS) $(TOOLS_COMMON_SRCS) \
	  $(NPU_TOP_CURSES_LIBS) -lm -o $@
