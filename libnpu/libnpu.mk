# libnpu: the runtime library.  Included by the top Makefile; paths are
# relative to the repository root.  Every .c under libnpu/src is part of
# the library, every .c under tests/libnpu part of its unit tests, so new
# files need no edit here.

LIBNPU_SRCS := $(sort $(shell find libnpu/src -name '*.c'))
LIBNPU_HDRS := $(shell find libnpu/include libnpu/src -name '*.h') $(CORE_HDRS) \
               $(wildcard uapi/drm/*.h)
GEN         := $(BUILD)/gen
ONNX_PROTO  := /usr/include/onnx/onnx.proto
ONNX_PB_C   := $(GEN)/onnx/onnx.pb-c.c
ONNX_PB_H   := $(GEN)/onnx/onnx.pb-c.h

# libcrypto: the SHA-256 of downloads and cache keys (OpenSSL's EVP, the
# TLS library Debian's libcurl is built against).
LIBNPU_PKGS   := libdrm libprotobuf-c libcurl libcrypto
LIBNPU_CFLAGS := -fvisibility=hidden -Ilibnpu/include -Ilibnpu/src -I$(GEN) -Iuapi/drm \
                 $(shell pkg-config --cflags $(LIBNPU_PKGS) 2>/dev/null)
LIBNPU_LIBS   := $(shell pkg-config --libs $(LIBNPU_PKGS) 2>/dev/null) -lm -pthread

LIBNPU_OBJS_OPT := $(patsubst libnpu/src/%.c,$(BUILD)/obj/npu/%.o,$(LIBNPU_SRCS)) $(BUILD)/obj/npu/gen/onnx.pb-c.o
LIBNPU_OBJS_SAN := $(patsubst libnpu/src/%.c,$(BUILD)/obj/npu-san/%.o,$(LIBNPU_SRCS)) $(BUILD)/obj/npu-san/gen/onnx.pb-c.o
NPU_SOVERSION := 0
LIBNPU_A     := $(BUILD)/lib/libnpu.a
LIBNPU_SO    := $(BUILD)/lib/libnpu.so.$(NPU_SOVERSION)
LIBNPU_SAN   := $(BUILD)/lib/libnpu-san.a
NPU_PC       := $(BUILD)/lib/pkgconfig/npu.pc
LIBNPU_TEST_BIN := $(BUILD)/tests/unit-npu
LIBNPU_TEST_SRCS := tests/unit/main.c $(sort $(wildcard tests/libnpu/*.c)) tests/onnx/onnx_case.c

$(ONNX_PB_C) $(ONNX_PB_H): $(ONNX_PROTO)
	@mkdir -p $(GEN)
	protoc-c --proto_path=/usr/include --c_out=$(GEN) onnx/onnx.proto

# Generated code: warnings are protoc-c's business, not ours.
$(BUILD)/obj/npu/gen/onnx.pb-c.o: $(ONNX_PB_C)
	@mkdir -p $(@D)
	$(CC) $(CSTD) -I$(GEN) -g -fPIC -fvisibility=hidden $(OPTFLAGS) -c $< -o $@
$(BUILD)/obj/npu-san/gen/onnx.pb-c.o: $(ONNX_PB_C)
	@mkdir -p $(@D)
	$(CC) $(CSTD) -I$(GEN) -g -fPIC -O1 $(SANFLAGS) -c $< -o $@

$(BUILD)/obj/npu/%.o: libnpu/src/%.c $(LIBNPU_HDRS) $(ONNX_PB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(OPTFLAGS) -c $< -o $@

$(BUILD)/obj/npu-san/%.o: libnpu/src/%.c $(LIBNPU_HDRS) $(ONNX_PB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) -O1 $(SANFLAGS) -c $< -o $@

# The static library carries the device core (the emulator backend).
$(LIBNPU_A): $(LIBNPU_OBJS_OPT) $(CORE_OBJS_OPT)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBNPU_SAN): $(LIBNPU_OBJS_SAN) $(CORE_OBJS_SAN)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBNPU_SO): $(LIBNPU_OBJS_OPT) $(CORE_OBJS_OPT)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libnpu.so.$(NPU_SOVERSION) -Wl,--no-undefined \
	  $^ $(LIBNPU_LIBS) -o $@
	ln -sf libnpu.so.$(NPU_SOVERSION) $(BUILD)/lib/libnpu.so

# libnpu.mk too: Libs.private is LIBNPU_LIBS, defined above.
$(NPU_PC): libnpu/npu.pc.in libnpu/libnpu.mk
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' \
	  -e 's|@PRIVATE_LIBS@|$(LIBNPU_LIBS)|' $< > $@

$(LIBNPU_TEST_BIN): $(LIBNPU_TEST_SRCS) $(wildcard tests/libnpu/*.h tests/unit/*.h tests/onnx/*.h) $(LIBNPU_SAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) -O1 $(SANFLAGS) $(CHECK_CFLAGS) -Itests/unit -Itests/libnpu -Itests/onnx \
	  $(LIBNPU_TEST_SRCS) $(LIBNPU_SAN) $(CHECK_LIBS) $(LIBNPU_LIBS) -o $@

.PHONY: libnpu
libnpu: $(LIBNPU_A) $(LIBNPU_SO) $(NPU_PC)
