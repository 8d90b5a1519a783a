# pptrace — build, test, demo, bench, install.
#
#   make                 build every command into $(O)/bin (default O=build)
#   make check           every test (unit + end to end) under ASan+UBSan,
#                        warnings as errors (DEVELOPER=1)
#   make soak            the fault tests (t08xx) repeated 50 times
#   make fuzz            every libFuzzer target for FUZZ_SECONDS (default 300)
#   make demo            generate a sample cluster and run the pipeline on it
#   make report-picture  docs/report.png, the README's picture of the demo's report
#   make bench           benchmarks; results in bench/results.txt
#   make install         PREFIX=/usr/local, honours DESTDIR
#   make format          clang-format every C file (t0004 checks them)
#   make clean           remove every build folder
#
# Sources are discovered: every cmd/<name>.c is a command; pipeline/util/
# forms libpputil.a, pipeline/gen/ libppgen.a, the other pipeline/<layer>/
# folders and storage/ libpp.a (docs/architecture.md); every
# tests/unit/<layer>/test_<m>.c is a cmocka binary (linked with the other
# tests/unit/<layer>/*.c and tests/unit/unit.c, helpers). ppgen links only
# libppgen.a and libpputil.a, so the generator cannot use the analysis it
# checks.

O        ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
SANITIZE ?=
# Warnings are errors only for us (make check, CI, DEVELOPER=1): a newer
# compiler's new warning must not break a user's build.
DEVELOPER ?= 0
CC       ?= gcc

PKGS     := sqlite3 libuv zlib inih

# gzip input: ISA-L's inflate when libisal is installed, else zlib's.
# ISAL=0 builds without it (make check builds the reader's tests so too).
ISAL ?= $(shell pkg-config --exists libisal 2>/dev/null && echo 1 || echo 0)
ifeq ($(ISAL),1)
PKGS     += libisal
CFLAGS_ISAL := -DPP_HAVE_ISAL
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lsqlite3 -luv -lz -linih)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
ifeq ($(DEVELOPER),1)
WARN += -Werror
endif

OPT ?= -O2 -g
ifneq ($(SANITIZE),)
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
LDSAN := -fsanitize=$(SANITIZE)
endif

ALL_CFLAGS  = -std=c11 -D_GNU_SOURCE -I. -Ipipeline $(PKG_CFLAGS) $(CFLAGS_ISAL) \
              $(WARN) $(OPT) $(CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDSAN) $(LDFLAGS)
LIBS        = $(PKG_LIBS) -lm $(LDLIBS)

UTIL_SRC := $(sort $(wildcard pipeline/util/*.c))
GEN_SRC  := $(sort $(wildcard pipeline/gen/*.c))
LIB_SRC  := $(sort $(filter-out $(UTIL_SRC) $(GEN_SRC),$(wildcard pipeline/*/*.c)) \
              $(wildcard storage/*.c))
ifneq ($(ISAL),1)
LIB_SRC  := $(filter-out pipeline/read/gunzip_isal.c,$(LIB_SRC))
endif
UTIL_OBJ := $(UTIL_SRC:%.c=$(O)/%.o)
GEN_OBJ  := $(GEN_SRC:%.c=$(O)/%.o)
LIB_OBJ  := $(LIB_SRC:%.c=$(O)/%.o)
CMD_SRC  := $(sort $(wildcard cmd/*.c))
CMDS     := $(CMD_SRC:cmd/%.c=$(O)/bin/%)
UNIT_SRC := $(sort $(wildcard tests/unit/*/test_*.c))
UNITS    := $(foreach u,$(UNIT_SRC),$(O)/tests/$(basename $(notdir $(u))))
TESTLIB_SRC := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*/*.c)) tests/unit/unit.c
TESTLIB_OBJ := $(TESTLIB_SRC:%.c=$(O)/%.o)
# The archives each command links (ppgen: the generator and utilities only).
LIBS_ppgen := $(O)/libppgen.a $(O)/libpputil.a
LIBS_DEFAULT := $(O)/libpp.a $(O)/libpputil.a

.PHONY: all check check-valgrind demo report-picture bench fuzz soak install clean deps test-deps units format
all: $(CMDS)

V ?= 0
ifeq ($(V),0)
Q := @
endif

.SECONDARY:

# The reader's event parser is compiled once per SIMD level
# (pipeline/read/trace_events.h, chosen at run time); on x86-64 two levels
# need their instructions (make fuzz hands these flags to tests/fuzz/run.sh).
SIMD_AVX2_CFLAGS := -mavx2 -mbmi -mbmi2 -mpopcnt
SIMD_AVX512_CFLAGS := -mavx512bw -mavx512vl $(SIMD_AVX2_CFLAGS)
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
$(O)/pipeline/read/trace_events_avx2.o: ALL_CFLAGS += $(SIMD_AVX2_CFLAGS)
$(O)/pipeline/read/trace_events_avx512.o: ALL_CFLAGS += $(SIMD_AVX512_CFLAGS)
endif

$(O)/%.o: %.c
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(O)/libpp.a: $(LIB_OBJ)
	@rm -f $@
	$(Q)$(AR) rcs $@ $^

$(O)/libpputil.a: $(UTIL_OBJ)
	@rm -f $@
	$(Q)$(AR) rcs $@ $^

$(O)/libppgen.a: $(GEN_OBJ)
	@rm -f $@
	$(Q)$(AR) rcs $@ $^

.SECONDEXPANSION:
$(O)/bin/%: $(O)/cmd/%.o $$(or $$(LIBS_$$*),$$(LIBS_DEFAULT))
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(or $(LIBS_$*),$(LIBS_DEFAULT)) $(LIBS)

# Unit tests may use every layer.
TEST_LIBS := $(O)/libpp.a $(O)/libppgen.a $(O)/libpputil.a
define unit_rule
$(O)/tests/$(basename $(notdir $(1))): $(O)/$(1:.c=.o) $(TESTLIB_OBJ) $(TEST_LIBS)
	@mkdir -p $$(@D)
	@$$(if $$(Q),echo "  LINK    $$@")
	$$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$< $$(TESTLIB_OBJ) $$(TEST_LIBS) $$(LIBS) -lcmocka
endef
$(foreach u,$(UNIT_SRC),$(eval $(call unit_rule,$(u))))

units: $(UNITS)

# Packages: deps to build and run (make, demo, install); test-deps adds what
# the tests use (cmocka, sqlite3, python3, chromium, clang-format, Slurm).
deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --test

format:
	@scripts/format

# The test suite runs on a sanitizer build in its own folder.
CHECK_O ?= build-san
CHECK_SANITIZE ?= address,undefined
check: test-deps
	@$(MAKE) --no-print-directory O=$(CHECK_O) SANITIZE=$(CHECK_SANITIZE) DEVELOPER=1 all units
	@$(MAKE) --no-print-directory O=build DEVELOPER=1 all
	@$(MAKE) --no-print-directory O=build-zlib ISAL=0 DEVELOPER=1 build-zlib/tests/test_trace_read
	@PP_BIN=$(abspath $(CHECK_O))/bin PP_UNIT=$(abspath $(CHECK_O))/tests \
	  PP_FAST_BIN=$(abspath build)/bin PP_ZLIB_UNIT=$(abspath build-zlib)/tests \
	  tests/run-tests.sh

check-valgrind:
	@PPTRACE_EXTRA_PKGS=valgrind scripts/install-deps --test
	@$(MAKE) --no-print-directory O=build DEVELOPER=1 all units
	@PP_BIN=$(abspath build)/bin PP_UNIT=$(abspath build)/tests PP_VALGRIND=1 \
	  tests/run-tests.sh

# libFuzzer targets tests/fuzz/fuzz_*.c (clang), FUZZ_SECONDS each; totals
# go to build-fuzz/stats.txt (see docs/fuzzing.md).
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?=
fuzz:
	@PPTRACE_EXTRA_PKGS="clang libclang-rt-14-dev" scripts/install-deps --test
	@SIMD_AVX2_CFLAGS='$(SIMD_AVX2_CFLAGS)' SIMD_AVX512_CFLAGS='$(SIMD_AVX512_CFLAGS)' \
	  tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Long fault runs: the reliability tests (t08xx) with 50 kills instead of 6.
soak: test-deps
	@$(MAKE) --no-print-directory O=$(CHECK_O) SANITIZE=$(CHECK_SANITIZE) DEVELOPER=1 all units
	@$(MAKE) --no-print-directory O=build DEVELOPER=1 all
	@PP_BIN=$(abspath $(CHECK_O))/bin PP_UNIT=$(abspath $(CHECK_O))/tests \
	  PP_FAST_BIN=$(abspath build)/bin PP_SOAK=1 PP_ONLY='^t08' tests/run-tests.sh

demo: deps
	@$(MAKE) --no-print-directory O=build all
	@scripts/demo

report-picture: deps
	@$(MAKE) --no-print-directory O=build all
	@scripts/report-picture

bench: test-deps
	@$(MAKE) --no-print-directory O=build all
	@scripts/bench

# Cluster scripts (docs/cluster.md): commands in bin, job scripts in libexec.
SLURM_BIN  := scripts/slurm/pptrace-submit scripts/slurm/pptrace-epilog scripts/cron/pptrace-cron
SLURM_LIBX := scripts/slurm/pptrace-common.sh scripts/slurm/ppbatch-array.sbatch \
              scripts/slurm/pptrace-merge.sbatch

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/pptrace
	install -m 755 $(CMDS) $(SLURM_BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(SLURM_LIBX) $(DESTDIR)$(PREFIX)/libexec/pptrace/

# Every build folder the targets above make (check's build-zlib too); the
# benchmarks' inputs in bench/work stay (they take minutes to write).
clean:
	rm -rf build build-san build-zlib build-fuzz $(CHECK_O) $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
