# rdmakit — build, test, demo, benchmark, install.
#   make            build ./rdmakit
#   make demo       install what is missing, build, run the main job
#   make check      install what is missing, build, run every test suite
#   make install    PREFIX=/usr/local DESTDIR= (binary, man pages, completions)
#   SANITIZE=1      build with -fsanitize=address,undefined

VERSION := 0.2.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPDIR ?= $(PREFIX)/share/zsh/site-functions

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS := libibverbs librdmacm libpcap ncursesw jansson libsodium libmicrohttpd libmnl cairo fontconfig libisal

BUILD := build
ifeq ($(SANITIZE),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

INCLUDES := -Icmd -Ilib/transport -Ilib/transport/soft -Ilib/stats -Ilib/capture -Ilib/perf -Ilib/plot -Ilib/probe
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP \
	-DRDMAKIT_VERSION='"$(VERSION)"' $(INCLUDES) $(PKG_CFLAGS) $(SANFLAGS)
override LDFLAGS += $(SANFLAGS)
LDLIBS = $(PKG_LIBS) -lm -lpthread

LIB_SRCS := $(sort $(wildcard lib/transport/*.c lib/transport/soft/*.c lib/stats/*.c lib/capture/*.c lib/perf/*.c lib/plot/*.c lib/probe/*.c))
CMD_SRCS := $(sort $(wildcard cmd/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
LIBRDMAKIT := $(BUILD)/librdmakit.a

ifeq ($(SANITIZE),1)
BIN := $(BUILD)/rdmakit
else
BIN := rdmakit
endif

.PHONY: all deps check check-vm unit-bins demo fabric-demo bench install uninstall clean fuzz soak

all: $(BIN)

# V=1 shows the full command lines.
Q := $(if $(V),,@)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(LIBRDMAKIT): $(LIB_OBJS)
	@rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BIN): $(CMD_OBJS) $(LIBRDMAKIT)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(LIBRDMAKIT) $(LDLIBS)

# Unit tests may use zlib as an outside reference for CRC-32 (the binary
# has one CRC-32 of its own, lib/transport/crc32.c).
$(BUILD)/tests/%: tests/unit/%.c $(LIBRDMAKIT)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIBRDMAKIT) $(LDLIBS) -lz

# The seqlock of the shared-memory counters under ThreadSanitizer (which
# cannot share a build with ASan): its own binary from the two sources.
TSAN_BIN := $(if $(filter 1,$(SANITIZE)),,$(BUILD)/tests/test_shm_tsan)
$(BUILD)/tests/test_shm_tsan: tests/unit/tsan_shm.c lib/transport/shm_counters.c lib/transport/shm_counters.h
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $< (tsan)")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fsanitize=thread -Itests/unit -o $@ \
		tests/unit/tsan_shm.c lib/transport/shm_counters.c -lpthread

unit-bins: $(UNIT_BINS) $(TSAN_BIN)

# Installs the Debian packages the build, tests and benchmarks need.
deps:
	@tests/install-deps

# Every suite, summed into one closing line "N passed, N failed, N skipped".
check: deps
	$(MAKE) all unit-bins
	$(MAKE) SANITIZE=1 all unit-bins
	@tests/run-suites $(BUILD)

# The Soft-RoCE lab alone: rdmakit against Linux rxe in qemu guests.
check-vm: deps
	$(MAKE) all
	bats --tap tests/vm/vm.bats

# The chaos soak alone, long: bw and lat verified under changing impairments
# and link flaps (needs root, ip, nft).  SOAK_SECONDS=600 unless given.
soak: all
	SOAK_SECONDS=$(or $(SOAK_SECONDS),600) bats --tap tests/soak.bats

demo: deps
	$(MAKE) all
	@tests/demo

# A 7:1 incast across a spine-leaf fabric of network namespaces (root).
fabric-demo: deps
	$(MAKE) all
	@tests/fabric/demo.sh

bench: deps all $(BUILD)/bench/udp_ceiling
	@bench/run

# The kernel's UDP ceiling that bench/perf.sh holds the soft engine against.
$(BUILD)/bench/udp_ceiling: bench/udp_ceiling.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

install: all
	install -m 0755 -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(ZSH_COMPDIR)
	install -m 0755 rdmakit $(DESTDIR)$(BINDIR)/rdmakit
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 completions/rdmakit.bash $(DESTDIR)$(BASH_COMPDIR)/rdmakit
	install -m 0644 completions/_rdmakit $(DESTDIR)$(ZSH_COMPDIR)/_rdmakit

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rdmakit $(DESTDIR)$(BASH_COMPDIR)/rdmakit \
		$(DESTDIR)$(ZSH_COMPDIR)/_rdmakit
	rm -f $(patsubst man/%,$(DESTDIR)$(MANDIR)/man1/%,$(wildcard man/*.1))

clean:
	rm -rf build build-san rdmakit

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d)

# --- capture test fixtures (tests/tools/pcapgen.c) -------------------------
# build/tests/tools/pcapgen OUTDIR writes the capture fixtures that
# the tests/capture*.bats suites and tests/netns.bats read.
$(BUILD)/tests/tools/pcapgen: tests/tools/pcapgen.c tests/tools/pcapgen_frames.c tests/tools/pcapgen.h $(LIBRDMAKIT)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) -o $@ tests/tools/pcapgen.c \
		tests/tools/pcapgen_frames.c $(LIBRDMAKIT) $(LDLIBS)

unit-bins: $(BUILD)/tests/tools/pcapgen

# build/tests/tools/inject: the off-path attacker of tests/offpath_netns.bats.
$(BUILD)/tests/tools/inject: tests/tools/inject.c $(LIBRDMAKIT)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBRDMAKIT) $(LDLIBS)

unit-bins: $(BUILD)/tests/tools/inject
-include $(BUILD)/tests/tools/inject.d
# --- end capture test fixtures ---------------------------------------------

# --- fuzzing (fuzz/fuzz.mk): make fuzz [FUZZ_SECONDS=60] --------------------
-include fuzz/fuzz.mk
