# examples/: programs a developer copies (Documentation/libnpu.md, "Using
# libnpu").  check-examples builds the C one as an application outside
# this tree would, from the public headers and npu.pc alone (pkg-config,
# with npu.pc's includedir and libdir pointed at this tree): once against
# libnpu.so and once statically against libnpu.a with npu.pc's
# Libs.private, then checks that both print npu-run --top-k's classes
# (tests/examples/classify.sh).

EXAMPLES_BUILD   := $(BUILD)/examples
EXAMPLE_CLASSIFY := $(EXAMPLES_BUILD)/classify
EXAMPLE_CLASSIFY_STATIC := $(EXAMPLES_BUILD)/classify-static
# Only libnpu.a in it, so that -lnpu there is the static library.
EXAMPLES_STATIC_LIB := $(EXAMPLES_BUILD)/static-lib

# pkg-config on the uninstalled npu.pc; $(1): the libdir to give it.
npu_pkg_config = PKG_CONFIG_PATH=$(CURDIR)/$(BUILD)/lib/pkgconfig pkg-config \
	--define-variable=includedir=$(CURDIR)/libnpu/include --define-variable=libdir=$(1)

# Plain C11 without _GNU_SOURCE: the public headers must not need more.
EXAMPLE_CFLAGS := -std=c11 $(WARN) -O2 -g

$(EXAMPLE_CLASSIFY): examples/c/classify.c $(LIBNPU_SO) $(NPU_PC)
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_CFLAGS) $< \
	  $$($(call npu_pkg_config,$(CURDIR)/$(BUILD)/lib) --cflags --libs npu) -o $@

$(EXAMPLE_CLASSIFY_STATIC): examples/c/classify.c $(LIBNPU_A) $(NPU_PC)
	@mkdir -p $(@D) $(EXAMPLES_STATIC_LIB)
	ln -sf $(CURDIR)/$(LIBNPU_A) $(EXAMPLES_STATIC_LIB)/libnpu.a
	$(CC) $(EXAMPLE_CFLAGS) $< \
	  $$($(call npu_pkg_config,$(CURDIR)/$(EXAMPLES_STATIC_LIB)) --static --cflags --libs npu) -o $@

.PHONY: examples check-examples
examples: $(EXAMPLE_CLASSIFY) $(EXAMPLE_CLASSIFY_STATIC)

check-examples: $(EXAMPLE_CLASSIFY) $(EXAMPLE_CLASSIFY_STATIC) $(NPU_RUN_BIN)
	@tests/examples/classify.sh $(EXAMPLE_CLASSIFY) $(EXAMPLE_CLASSIFY_STATIC) $(NPU_RUN_BIN) \
	  $(BUILD)/lib
