# M100 NPU stack: top-level build.  `make help` lists the targets.
#
# Userspace is C11 with -Wall -Wextra -Werror.  The device core is built
# twice: optimised (tools, benchmarks) and with ASan/UBSan (unit tests).

CC       ?= gcc
BUILD    := build
OPTFLAGS ?= -O3
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
INCS     := -Iuapi -Iqemu-device/core
CFLAGS_COMMON := $(CSTD) $(WARN) $(INCS) -g -pthread -fPIC
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDLIBS_CORE := -lm -pthread

CORE_SRCS := $(sort $(wildcard qemu-device/core/*.c))
CORE_HDRS := $(wildcard qemu-device/core/*.h) $(wildcard uapi/npu/*.h)
CORE_OBJS_OPT := $(patsubst qemu-device/core/%.c,$(BUILD)/obj/core/%.o,$(CORE_SRCS))
CORE_OBJS_SAN := $(patsubst qemu-device/core/%.c,$(BUILD)/obj/core-san/%.o,$(CORE_SRCS))
LIBCORE     := $(BUILD)/lib/libnpucore.a
LIBCORE_SAN := $(BUILD)/lib/libnpucore-san.a

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c)) tests/common/npu_tdev.c
UNIT_BIN  := $(BUILD)/tests/unit-core
BENCH_BIN := $(BUILD)/bin/npu-bench-core
DEMO_BIN  := $(BUILD)/bin/npu-core-demo

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

# QEMU is built from Debian's source package (qemu-device/build-qemu.sh);
# these are its build dependencies for an x86_64-softmmu-only build, plus
# the firmware it boots with.
QEMU_PACKAGES := dpkg-dev ninja-build meson python3 libglib2.0-dev \
                 libpixman-1-dev libfdt-dev flex bison qemu-system-data \
                 seabios
# check-guest: static busybox for the guest, and the tools that unpack
# Debian's kernel package (dpkg-deb), list its module dependencies (kmod's
# depmod, modinfo) and pack the initramfs.
GUEST_PACKAGES := busybox-static cpio xz-utils kmod binutils
# libnpu: ONNX parsing (onnx.proto + protobuf-c), the kernel backend
# (libdrm), model downloads (libcurl), the fuzz target (clang's libFuzzer),
# the ONNX conformance data and npu-top's terminal UI (ncurses).
LIBNPU_PACKAGES := libonnx-dev protobuf-c-compiler libprotobuf-c-dev \
                   libcurl4-openssl-dev libdrm-dev clang libonnx-testdata libncurses-dev \
                   libssl-dev # libcrypto: OpenSSL's SHA-256 (EVP) for downloads and the cache
# make bench's LLM figures generate their 7B-dimension model with onnx and
# numpy (tests/bench/gen_llama_slice.py) and read models' graphs with onnx.
BENCH_PACKAGES := python3-onnx python3-numpy
# check-guest's debug kernel (tests/guest/debug-kernel/): Debian's kernel
# source and what building it needs (flex and bison are QEMU's too).
DEBUG_KERNEL_PACKAGES := linux-source-6.12 bc libelf-dev libssl-dev
# The Python module npu (python/): a C extension built against Python's
# headers, and numpy, which it hands tensors to applications as.
PYTHON_PACKAGES := python3-dev python3-numpy
# npu-run's picture inputs and --draw (libpng, libjpeg); cjpeg for its tests.
IMAGE_PACKAGES := libpng-dev libjpeg62-turbo-dev libjpeg-turbo-progs
DEB_PACKAGES := gcc make pkg-config check libsubunit-dev libdnnl-dev $(LIBNPU_PACKAGES) $(IMAGE_PACKAGES) \
                $(QEMU_PACKAGES) $(GUEST_PACKAGES) $(DEBUG_KERNEL_PACKAGES) $(BENCH_PACKAGES) \
                $(PYTHON_PACKAGES)
DEB_SRC_LIST := /etc/apt/sources.list.d/npu-deb-src.sources
# Debian's libonnx-testdata (make deps): check-unit, check-onnx and
# check-fuzz's seeds read it, so each requires it (the rule below says what
# to do when it is missing; make cannot fetch it).
ONNX_TESTDATA := /usr/share/libonnx-testdata/data/node

# The kernel module, built against Debian's 6.12 headers (make deps installs
# them) in a copy of the sources under build/, so the tree stays clean.
KVER ?= $(shell ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -1)
KDIR ?= /usr/src/linux-headers-$(KVER)
KMOD := $(BUILD)/kernel/npu.ko
KMOD_SRCS := Kbuild $(wildcard kernel/*.c kernel/*.h kernel/*/*.c kernel/*/*.h) \
	     $(wildcard uapi/npu/*.h uapi/drm/*.h)
# The same module built against the debug guest kernel (check-guest).
KMOD_DEBUG := $(BUILD)/kernel-debug/npu.ko

PREFIX ?= /usr/local

.PHONY: all deps run check check-unit check-tools check-style check-qemu qemu module bench clean help
all: $(LIBCORE) $(DEMO_BIN) libnpu qemu module

include libnpu/libnpu.mk
include tests/fuzz/fuzz.mk
include tests/models/models.mk
include tests/onnx/onnx.mk
include python/python.mk
# Each tool under tools/<name>/ may bring its own rules (tools/<name>/<name>.mk).
-include $(wildcard tools/*/*.mk)
# After the tools: check-examples compares with npu-run ($(NPU_RUN_BIN)).
include examples/examples.mk

$(ONNX_TESTDATA):
	@echo "$@ is missing: install Debian's libonnx-testdata ('make deps', as root)" >&2; exit 1

help:
	@echo "make deps        install the Debian packages the project needs (root)"
	@echo "make             build everything"
	@echo "make run         npu-run: BlazeFace on a photo, faces drawn to build/run/faces.png"
	@echo "make check       build and run every test"
	@echo "make check-unit  device-core and libnpu unit tests (Check, ASan/UBSan)"
	@echo "make check-tools command-line tests of npu-run, npu-top, npu-plan"
	@echo "make check-examples  build examples/ against npu.pc and check what they print"
	@echo "make python      the Python module npu in build/python (PYTHONPATH=build/python)"
	@echo "make check-python the Python module against the C API, a staged install, the examples"
	@echo "make install     libnpu, headers, npu.pc, tools, man pages, Python module (PREFIX, DESTDIR)"
	@echo "make qemu        build qemu-system-x86_64 with the NPU (cached in ~/.cache/npu)"
	@echo "make check-qemu  qtests of the NPU PCI device"
	@echo "make module      the kernel driver, build/kernel/npu.ko"
	@echo "make check-style checkpatch --strict on the driver and its uAPI"
	@echo "make check-guest kernel CI: boot Linux 6.12 with the NPU under QEMU, run the guest suite"
	@echo "                 on Debian's kernel (5 device configurations) and on a debug kernel"
	@echo "                 (KASAN, lockdep, kmemleak, fault injection, KUnit; built once, cached)"
	@echo "make check-guest-stock / check-guest-debug   one of the two"
	@echo "make bench       benchmarks, as ratios against references"
	@echo "make transformer-models  regenerate tests/models/transformers (installs python3-torch)"

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	need_update=""; \
	if [ ! -f $(DEB_SRC_LIST) ]; then \
	  echo "adding the deb-src entry for Debian's QEMU source: $(DEB_SRC_LIST)"; \
	  printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' \
	    'Suites: bookworm bookworm-updates' 'Components: main' \
	    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
	    'Types: deb-src' 'URIs: http://deb.debian.org/debian-security' \
	    'Suites: bookworm-security' 'Components: main' \
	    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' > $(DEB_SRC_LIST); \
	  need_update=1; \
	fi; \
	if [ -n "$$missing" ] || [ -n "$$need_update" ]; then apt-get update -qq; fi; \
	hdr=$$(ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | head -1); \
	if [ -z "$$hdr" ]; then \
	  [ -n "$$missing" ] || apt-get update -qq; \
	  pkg=$$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9.]*\+deb12-amd64$$' | awk '{print $$1}' | sort -V | tail -1); \
	  [ -n "$$pkg" ] || { echo "no linux-headers-6.12.*+deb12-amd64 package in apt's sources"; exit 1; }; \
	  missing="$$missing $$pkg"; \
	fi; \
	command -v node >/dev/null && command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all packages present"; fi

$(BUILD)/obj/core/%.o: qemu-device/core/%.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -fvisibility=hidden $(OPTFLAGS) -c $< -o $@

$(BUILD)/obj/core-san/%.o: qemu-device/core/%.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -O1 $(SANFLAGS) -c $< -o $@

$(LIBCORE): $(CORE_OBJS_OPT)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBCORE_SAN): $(CORE_OBJS_SAN)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(UNIT_BIN): $(UNIT_SRCS) $(wildcard tests/unit/*.h tests/common/*.h) $(LIBCORE_SAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -O1 $(SANFLAGS) $(CHECK_CFLAGS) -Itests/unit -Itests/common $(UNIT_SRCS) \
	  $(LIBCORE_SAN) $(CHECK_LIBS) $(LDLIBS_CORE) -o $@

$(BENCH_BIN): $(wildcard tests/bench/*.c) $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(OPTFLAGS) $(wildcard tests/bench/*.c) $(LIBCORE) -ldnnl $(LDLIBS_CORE) -o $@

$(DEMO_BIN): tools/npu-core-demo/*.c tests/common/npu_tdev.c tests/common/npu_tdev.h $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(OPTFLAGS) -Itests/common tools/npu-core-demo/*.c tests/common/npu_tdev.c $(LIBCORE) $(LDLIBS_CORE) -o $@

# The main job: npu-run with BlazeFace on a photo (the emulator unless a
# kernel device exists), the faces drawn into build/run/faces.png; the
# bundled sample model when they cannot be fetched (tools/npu-run/make-run.sh).
run: $(BUILD)/bin/npu-run
	@tools/npu-run/make-run.sh $(BUILD)/bin/npu-run $(BUILD)/run

check: check-unit check-fuzz check-tools check-examples check-onnx check-models check-python check-style \
	check-qemu check-guest

# Command-line tests of the tools (each script prints "N passed, N failed").
check-tools: $(BUILD)/bin/npu-plan
	@for t in tests/tools/*.sh; do $$t || exit 1; done

check-style:
	@tests/style/checkpatch.sh

# Phony: the script decides what to rebuild (cache keyed by QEMU version
# and device sources) and returns in about a second when nothing changed.
qemu:
	@qemu-device/build-qemu.sh . $(BUILD)/bin

check-qemu: qemu
	@tests/qemu/run.sh $(BUILD)/bin

module: $(KMOD)

$(KMOD): $(KMOD_SRCS)
	@test -d "$(KDIR)" || { echo "kernel headers for 6.12 not found ($(KDIR)): run 'make deps'"; exit 1; }
	@mkdir -p $(BUILD)/kmod $(@D)
	cp -u --parents $(KMOD_SRCS) $(BUILD)/kmod/
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$(BUILD)/kmod modules
	cp $(BUILD)/kmod/npu.ko $@

# Phony: build.sh returns at once when the cached kernel matches its key.
# The module is then rebuilt by kbuild itself (it knows what changed).
module-debug:
	@kb=$$(tests/guest/debug-kernel/build.sh .) && \
	mkdir -p $(BUILD)/kmod-debug $(dir $(KMOD_DEBUG)) && \
	cp -u --parents $(KMOD_SRCS) $(BUILD)/kmod-debug/ && \
	$(MAKE) -s -C "$$kb" M=$(CURDIR)/$(BUILD)/kmod-debug modules && \
	cp $(BUILD)/kmod-debug/npu.ko $(KMOD_DEBUG) && \
	echo "$$kb" >$(BUILD)/kernel-debug/build-dir

# What the libnpu suite reads besides the tree: BlazeFace (fetched here
# first, on a cold cache too) and Debian's ONNX conformance data.  Missing
# either is a failure in the suite, never a skip.
check-unit: $(UNIT_BIN) $(LIBNPU_TEST_BIN) $(BLAZEFACE) $(ONNX_TESTDATA)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_BIN)
	NPU_CACHE=$(NPU_CACHE_DIR) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 $(LIBNPU_TEST_BIN)

# Device-core kernels against oneDNN, then BlazeFace and the transformer
# test models against onnxruntime and seed 002's bound, then LLM decode
# against the DDR bound and onnxruntime, then BlazeFace and an empty job
# through npu.ko in the kernel-CI guest (bench_guest.sh builds and boots
# it: tests/guest/bench.mk) (tests/bench/bench_*.sh).  Every part runs; a
# figure not measured fails the target at the end.  The kernels' run also
# measures the host rates of every model's floor (NPU_BENCH_RATES,
# tests/bench/figures.py floor).
bench: $(BENCH_BIN) $(BUILD)/bin/npu-run $(BLAZEFACE) $(FACE_PHOTO) models
	@status=0; mkdir -p $(BUILD)/bench; rm -f $(BUILD)/bench/rates.json; \
	export NPU_BENCH_RATES=$(BUILD)/bench/rates.json; \
	$(BENCH_BIN) --json $(BUILD)/bench/rates.json || status=1; \
	tests/bench/bench_blazeface.sh $(BLAZEFACE) $(FACE_PHOTO) $(BUILD)/bin/npu-run || status=1; \
	tests/bench/bench_transformers.sh $(TF_DIR) $(BUILD)/bin/npu-run || status=1; \
	tests/bench/bench_llm.sh $(TF_DIR) $(BUILD)/bin/npu-run || status=1; \
	tests/bench/bench_guest.sh $(BLAZEFACE) $(FACE_PHOTO) $(BUILD)/bin/npu-run || status=1; \
	exit $$status

clean:
	rm -rf $(BUILD)

# make install [PREFIX=/usr/local] [DESTDIR=]: libnpu (static and shared,
# headers, the build's npu.pc with this PREFIX), the tools, their man pages and the
# Python module (PYTHON_SITEDIR, python/python.mk).  ldconfig runs when
# installing into the live system, so the loader finds libnpu.so.0.
INSTALL_TOOLS := $(NPU_RUN_BIN) $(NPU_TOP_BIN) $(NPU_PLAN_BIN)
.PHONY: install uninstall
install: libnpu python $(INSTALL_TOOLS)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PYTHON_SITEDIR)/npu
	install -m 644 $(LIBNPU_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBNPU_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libnpu.so.$(NPU_SOVERSION) $(DESTDIR)$(PREFIX)/lib/libnpu.so
	install -m 644 libnpu/include/npu.h libnpu/include/npu_post.h libnpu/include/npu_fetch.h \
	  $(DESTDIR)$(PREFIX)/include/
	sed -e 's|^prefix=.*|prefix=$(PREFIX)|' $(NPU_PC) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/npu.pc
	install -m 755 $(INSTALL_TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 Documentation/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(PY_FILES) $(DESTDIR)$(PYTHON_SITEDIR)/npu/
	install -m 644 $(PY_EXT_INSTALL) $(DESTDIR)$(PYTHON_SITEDIR)/npu/
	@if [ -z "$(DESTDIR)" ] && [ -w /etc/ld.so.cache ]; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libnpu.a $(DESTDIR)$(PREFIX)/lib/libnpu.so \
	  $(DESTDIR)$(PREFIX)/lib/libnpu.so.$(NPU_SOVERSION) $(DESTDIR)$(PREFIX)/lib/pkgconfig/npu.pc \
	  $(addprefix $(DESTDIR)$(PREFIX)/include/,npu.h npu_post.h npu_fetch.h) \
	  $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(notdir $(INSTALL_TOOLS))) \
	  $(addprefix $(DESTDIR)$(PREFIX)/share/man/man1/,$(notdir $(wildcard Documentation/man/*.1)))
	rm -rf $(DESTDIR)$(PYTHON_SITEDIR)/npu

# Kernel CI (tests/guest/): boot Debian's Linux 6.12 under our QEMU, load
# npu.ko (build/kernel/, when built) and run the static programs in
# build/guest/bin/, once per device configuration.  GUEST_DEPS: what must
# be built first.
include tests/guest/suite.mk
include tests/guest/faults.mk
include tests/guest/libnpu.mk
include tests/guest/tools.mk
include tests/guest/bench.mk
GUEST_DEPS := qemu module guest-bins guest-libnpu guest-tools
# The suite's ten forced hangs alone take ~20 s under TCG.
GUEST_APPEND ?= npu.test_timeout=300

# Both kernels: Debian's stock one (what users run) in every device
# configuration, then the debug kernel in DEBUG_GUEST_CONFIGS with KUnit
# required and kmemleak scans (tests/guest/init.sh).  Both always run.
comma := ,
empty :=
space := $(empty) $(empty)
DEBUG_GUEST_CONFIGS ?= default
# What runs on the debug kernel: the driver's own tests (the Check suite,
# the fault sweep npu-guest-faults, KUnit).  libnpu's end-to-end programs
# stay on the stock kernel: under TCG, KASAN, lockdep and kmemleak make every page
# fault and syscall slow, and GPT-2 generation alone took 157 s there.
DEBUG_GUEST_TESTS ?= npu-guest-test npu-guest-faults
# KUnit must run (npu.ko carries its suites there); three insmod/rmmod
# rounds instead of ten, as each insmod runs the suites again.
DEBUG_GUEST_APPEND ?= npu.test_timeout=900 npu.timeout_multiplier=4 npu.kunit=required \
	npu.modloop=3 npu.tests=$(subst $(space),$(comma),$(strip $(DEBUG_GUEST_TESTS)))
.PHONY: check-guest check-guest-stock check-guest-debug module-debug
check-guest:
	@status=0; \
	$(MAKE) --no-print-directory check-guest-stock || status=1; \
	$(MAKE) --no-print-directory check-guest-debug || status=1; \
	exit $$status

check-guest-stock: $(GUEST_DEPS)
	@tests/guest/mkinitramfs.sh .
	@NPU_GUEST_APPEND="$(GUEST_APPEND) $(NPU_GUEST_APPEND)" tests/guest/run.sh

check-guest-debug: $(filter-out module,$(GUEST_DEPS)) module-debug
	@NPU_KO=$(KMOD_DEBUG) NPU_GUEST_OUT=$(BUILD)/guest-debug \
	  NPU_GUEST_KERNEL_BUILD=$$(cat $(BUILD)/kernel-debug/build-dir) tests/guest/mkinitramfs.sh .
	@NPU_GUEST_APPEND="$(GUEST_APPEND) $(DEBUG_GUEST_APPEND) $(NPU_GUEST_APPEND)" \
	  tests/guest/run.sh --kernel debug $(DEBUG_GUEST_CONFIGS)
