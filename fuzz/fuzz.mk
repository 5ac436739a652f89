# fuzz/fuzz.mk: libFuzzer targets, included by the top-level Makefile.
#   make fuzz                 build the targets and seeds, run each FUZZ_SECONDS (60)
#   make fuzz-build           only build them (build-fuzz/fuzz_*)
#   make fuzz-run-TARGET      run one target (make -j2 fuzz runs two at a time)
#   make fuzz-clean           remove build-fuzz/ (corpora included)
#   FUZZ_CC=clang             a clang with libFuzzer (-fsanitize=fuzzer)
# Objects are built with FUZZ_CC into build-fuzz/, apart from build/ and
# build-san/.  Corpora grow in build-fuzz/corpus/TARGET (seeds stay in
# build-fuzz/seeds/TARGET); a crashing input lands in build-fuzz/crashes/TARGET/.
# docs/hardening.md says what each target covers.

FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD := build-fuzz
FUZZ_TARGETS := decode pcap soft oob opts
FUZZ_SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_CFLAGS = -std=c11 -g -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP \
	-DRDMAKIT_VERSION='"$(VERSION)"' $(INCLUDES) -Ifuzz -Itests/unit $(PKG_CFLAGS) \
	$(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link -Wno-gnu-variable-sized-type-not-at-end

FUZZ_LIB := $(FUZZ_BUILD)/librdmakit.a
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_CMD_OBJS := $(addprefix $(FUZZ_BUILD)/cmd/,opts.o perf_cli.o perftest_refused.o stop.o top_view.o top_tui.o \
	top_export.o)
FUZZ_PARSE_OBJS := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(wildcard fuzz/opts/parse_*.c))
FUZZ_CAPTURES := $(wildcard $(addprefix ../shared/captures/,*.pcap *.pcapng rxe/*.pcap rxe/*.pcapng))

.PHONY: fuzz-build fuzz-seeds fuzz-clean $(FUZZ_TARGETS:%=fuzz-run-%)

fuzz-build: $(FUZZ_BINS) $(FUZZ_BUILD)/seeds.stamp $(FUZZ_BUILD)/opts.dict \
	$(FUZZ_BUILD)/soft-replay

# -k: every target runs even after one crashed; make fails at the end.
fuzz: fuzz-build
	@$(MAKE) --no-print-directory -k $(FUZZ_TARGETS:%=fuzz-run-%)

$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%: fuzz-build
	@fuzz/run-target $* $(FUZZ_SECONDS)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o)
	@rm -f $@
	$(Q)$(AR) rcs $@ $^

# Links $^ (objects and the library) with libFuzzer's main.
FUZZ_LINK = $(FUZZ_CC) $(FUZZ_SANFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS) -lz

$(FUZZ_BUILD)/fuzz_decode: $(FUZZ_BUILD)/fuzz/fuzz_decode.o $(FUZZ_BUILD)/fuzz/pipeline.o $(FUZZ_LIB)
	$(Q)$(FUZZ_LINK)
$(FUZZ_BUILD)/fuzz_pcap: $(FUZZ_BUILD)/fuzz/fuzz_pcap.o $(FUZZ_BUILD)/fuzz/pipeline.o $(FUZZ_LIB)
	$(Q)$(FUZZ_LINK)
$(FUZZ_BUILD)/fuzz_soft: $(FUZZ_BUILD)/fuzz/fuzz_soft.o $(FUZZ_BUILD)/fuzz/soft_fixture.o $(FUZZ_LIB)
	$(Q)$(FUZZ_LINK)
$(FUZZ_BUILD)/fuzz_oob: $(FUZZ_BUILD)/fuzz/fuzz_oob.o $(FUZZ_BUILD)/fuzz/oob_params.o $(FUZZ_LIB)
	$(Q)$(FUZZ_LINK)
$(FUZZ_BUILD)/fuzz_opts: $(FUZZ_BUILD)/fuzz/fuzz_opts.o $(FUZZ_PARSE_OBJS) $(FUZZ_CMD_OBJS) $(FUZZ_LIB)
	$(Q)$(FUZZ_LINK)

# The seed builder and the capture fixtures: plain programs, same objects.
$(FUZZ_BUILD)/mkseeds: $(FUZZ_BUILD)/fuzz/seeds.o $(FUZZ_BUILD)/fuzz/soft_fixture.o $(FUZZ_LIB)
	$(Q)$(FUZZ_CC) $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link -o $@ $^ $(LDLIBS) -lz
$(FUZZ_BUILD)/soft-replay: $(FUZZ_BUILD)/fuzz/soft_replay.o $(FUZZ_BUILD)/fuzz/soft_fixture.o $(FUZZ_LIB)
	$(Q)$(FUZZ_CC) $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link -o $@ $^ $(LDLIBS) -lz
$(FUZZ_BUILD)/pcapgen: $(FUZZ_BUILD)/tests/tools/pcapgen.o $(FUZZ_BUILD)/tests/tools/pcapgen_frames.o \
		$(FUZZ_LIB)
	$(Q)$(FUZZ_CC) $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link -o $@ $^ $(LDLIBS)

# Seeds: the public captures, pcapgen's fixtures, and built frames/messages.
$(FUZZ_BUILD)/seeds.stamp: $(FUZZ_BUILD)/mkseeds $(FUZZ_BUILD)/pcapgen $(FUZZ_CAPTURES)
	@rm -rf $(FUZZ_BUILD)/seeds $(FUZZ_BUILD)/fixtures
	@mkdir -p $(FUZZ_BUILD)/fixtures
	$(Q)$(FUZZ_BUILD)/pcapgen $(FUZZ_BUILD)/fixtures >/dev/null
	$(Q)$(FUZZ_BUILD)/mkseeds $(FUZZ_BUILD)/seeds $(FUZZ_BUILD)/fixtures/*.pcap $(FUZZ_CAPTURES)
	@touch $@
fuzz-seeds: $(FUZZ_BUILD)/seeds.stamp

fuzz-clean:
	rm -rf $(FUZZ_BUILD)

# A libFuzzer dictionary of every long option of every command.
$(FUZZ_BUILD)/opts.dict: $(CMD_SRCS) cmd/perf_cli.h cmd/cmd.h
	@mkdir -p $(dir $@)
	$(Q)sed -n 's/^[[:space:]]*{ "\([a-z0-9_-]*\)", .*/"--\1"/p' $^ | sort -u >$@

-include $(wildcard $(FUZZ_BUILD)/*/*.d $(FUZZ_BUILD)/*/*/*.d $(FUZZ_BUILD)/*/*/*/*.d)
