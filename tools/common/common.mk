# tools/common: code the tools share, the JSON writer (json.h) and the
# option tables on getopt_long (opts.h).  Included by the top Makefile
# before the tools' own .mk files (tools/*/*.mk sorts "common" first), so
# they can list these in their sources.  Compiled into each tool; nothing
# here links libnpu.

TOOLS_COMMON_SRCS   := tools/common/json.c tools/common/opts.c tools/common/utf8.c
TOOLS_COMMON_HDRS   := tools/common/json.h tools/common/opts.h tools/common/utf8.h
TOOLS_COMMON_CFLAGS := -Itools/common

# Unit tests of the writer and the option tables (Check, ASan/UBSan), run
# by tests/tools/json.sh.
TOOLS_JSON_TEST := $(BUILD)/tests/tools-json
TOOLS_JSON_TEST_SRCS := tests/tools/test_json.c tests/tools/test_opts.c

$(TOOLS_JSON_TEST): $(TOOLS_JSON_TEST_SRCS) $(TOOLS_COMMON_SRCS) $(TOOLS_COMMON_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -O1 $(SANFLAGS) $(CHECK_CFLAGS) $(TOOLS_COMMON_CFLAGS) \
	  $(TOOLS_JSON_TEST_SRCS) $(TOOLS_COMMON_SRCS) $(CHECK_LIBS) -lm -o $@

check-tools: $(TOOLS_JSON_TEST)
