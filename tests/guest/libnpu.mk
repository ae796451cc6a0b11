# The libnpu end-to-end program for the guest (static, no libcurl: the
# static archive only pulls what the program uses).
GUEST_LIBNPU_BIN := $(BUILD)/guest/bin/npu-guest-libnpu

$(GUEST_LIBNPU_BIN): tests/guest/libnpu/npu_guest_libnpu.c $(LIBNPU_A)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(LIBNPU_CFLAGS) $(OPTFLAGS) -static $< $(LIBNPU_A) \
	  -ldrm -lprotobuf-c -lcrypto -lm -pthread -o $@

.PHONY: guest-libnpu
guest-libnpu: $(GUEST_LIBNPU_BIN)
