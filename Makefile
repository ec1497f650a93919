# The two commands of the README are `make demo` and `make test`; everything they need is installed by
# scripts/bootstrap (Debian packages) and scripts/fetch-kernel (the bench's kernel, cached in vm-cache/).
# How the bench works and where the time goes: docs/bench.md.

SHELL := /bin/bash
SWIFT ?= swift
# Every release build: the static Swift runtime, the prepared start paths laid on one page of code, and a check
# that they are (scripts/release-build).
RELEASE_BUILD := env SWIFT='$(SWIFT)' scripts/release-build
BIN := .build/release
# `make test` ends with a table of where its time went: scripts/timed appends one line per phase to
# TIMINGS_FILE, set for `make test` only (other targets just run their commands).
TIMED := scripts/timed
# The unit tests' debug build is the package's test product with what it depends on, then the CLI its tests run
# (beside them in .build/debug). Not `swift build --build-tests`, which also builds in debug the executables that
# only the kernel tests and the benches run, in release (haptics-kernel-tests, haptics-bench): a fifth of its time.
UNIT_TESTS_PRODUCT := LinuxHapticsPackageTests
# "yes" when kernel tests can run on this host itself (/dev/uinput and root): then no VM is booted.
DIRECT_KERNEL := $(shell [ -e /dev/uinput ] && [ "$$(id -u)" = 0 ] && echo yes)
test: export TIMINGS_FILE := $(CURDIR)/.build/test-timings

.PHONY: help all build release capi install-inputs-built-unless-sudo capi-example demo demo-vm test test-unit test-sanitize test-kernel test-kernel-trixie test-long test-vm test-install \
	fuzz fuzz-smoke soak bench bench-hd bench-peers bench-latency peers bootstrap bootstrap-bench kernel lint install install-copying install-library uninstall man completions \
	install-udev docs docs-check clean clean-timings

# The man pages and completions are generated from the release binary into STAGE, which install copies, with the
# binary stripped as the C library is (docs/install.md).
STAGE := .build/install-stage
MAN_STAMP := $(STAGE)/man/.generated
CAPI_MAN := $(STAGE)/man/linuxhaptics.3
COMPLETION_STAMP := $(STAGE)/completions/.generated

# `make` builds, as yourself, what `sudo make install` copies (the rule `all`, below the variables it names).
.DEFAULT_GOAL := all

# What each everyday target does (README.md and docs/ have the rest).
help:
	@printf '%s\n' \
	  'make demo            install what is missing, build, play on the first gamepad (or the virtual output)' \
	  'make test            every test: unit tests, then kernel tests against a real kernel (qemu when needed)' \
	  'make test-unit       the unit tests alone (no kernel, no VM)' \
	  'make                 as yourself: what `sudo make install` copies (CLI, C library, man pages, completions)' \
	  'sudo make install    copy into /usr/local (PREFIX=, DESTDIR=, UDEVRULESDIR=: docs/install.md)' \
	  'sudo make uninstall  remove what the install put there' \
	  'sudo make install-udev  the udev rule that lets the logged-in user drive gamepads (docs/device-access.md)' \
	  'make demo-vm         the demo on an emulated DualSense bound by the kernel driver' \
	  'make lint            swift-format and shellcheck' \
	  'make test-sanitize   the unit tests under AddressSanitizer and ThreadSanitizer' \
	  'make test-long       the kernel tests with the long unplug-replug repetitions' \
	  'make fuzz            coverage-guided fuzzing (FUZZ_SECONDS=N)' \
	  'make soak            8 virtual pads unplugged and replugged at random (SOAK_SECONDS=N)' \
	  'make bench           benchmarks, as ratios to a same-run baseline (docs/bench.md)' \
	  'make bench-peers     our engine side by side with SDL2 (docs/bench.md)' \
	  'make docs            DocC for the Swift libraries (docs-check: fails on a warning)' \
	  'make clean           remove the build folders'

bootstrap:
	@$(TIMED) apt-packages scripts/bootstrap

bootstrap-bench:
	@$(TIMED) apt-packages scripts/bootstrap --bench

# The Debian kernel (with udev and the PulseAudio daemon) the qemu bench boots: downloaded once, then reused from
# vm-cache/.
kernel: bootstrap-bench
	@$(TIMED) kernel-download scripts/fetch-kernel --udev --pulseaudio >/dev/null

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(TIMED) release-build $(RELEASE_BUILD)

# The C library (docs/c-api.md): liblinuxhaptics.so, the Swift runtime linked in, checked against its header and
# copied stripped to $(CAPI_LIBRARY). An install takes that file (with the links liblinuxhaptics.so.$(CAPI_MAJOR)
# and liblinuxhaptics.so beside it), $(CAPI_HEADER), and linuxhaptics.pc made from $(CAPI_PC_TEMPLATE) with its
# @PREFIX@, @LIBDIR@, @INCLUDEDIR@ and @VERSION@ (= $(CAPI_VERSION)) filled in.
CAPI_HEADER := include/linuxhaptics.h
CAPI_VERSION := $(shell sed -n 's/^\#define LH_VERSION_STRING "\(.*\)"$$/\1/p' $(CAPI_HEADER))
CAPI_MAJOR := $(firstword $(subst ., ,$(CAPI_VERSION)))
CAPI_LIBRARY := $(BIN)/liblinuxhaptics.so.$(CAPI_VERSION)
CAPI_PC_TEMPLATE := Sources/LinuxHapticsC/linuxhaptics.pc.in
capi: bootstrap
	$(RELEASE_BUILD) --product linuxhaptics
	@scripts/capi-library

# docs/examples/play.c compiled through pkg-config against a staged install of the C library, for the kernel
# tests (scripts/capi-example).
capi-example: capi
	@$(TIMED) capi-example scripts/capi-example

# The main job: play a pattern and the chapter haptics on the first gamepad, or on the built-in virtual output
# when there is none (`make demo-vm` shows the same on an emulated DualSense that hid-playstation binds, under a real
# kernel).
demo: bootstrap
	$(RELEASE_BUILD) --product haptics
	@scripts/demo

# The same demo on an emulated DualSense that the kernel's hid-playstation binds: on this host with /dev/uhid and
# root, otherwise in the qemu bench.
demo-vm: bootstrap-bench
	$(RELEASE_BUILD) --product haptics
	@scripts/demo-vm

# All tests: unit tests on the host, then kernel tests against a real kernel (directly when this machine has
# /dev/uinput and root, otherwise in the qemu bench, which is tested first). Ends with the time each phase
# took, then the kernel tests' total line.
test: clean-timings bootstrap-bench $(if $(DIRECT_KERNEL),,kernel)
	$(TIMED) unit-tests-build $(SWIFT) build --product $(UNIT_TESTS_PRODUCT)
	$(TIMED) unit-tests-build $(SWIFT) build --product haptics
	$(TIMED) unit-tests-run $(SWIFT) test --skip-build
	@$(MAKE) --no-print-directory test-install
	@$(MAKE) --no-print-directory test-kernel

# The unit tests under AddressSanitizer (LeakSanitizer included), then ThreadSanitizer, stress test included, each
# in a build folder of its own (on 2 shared cores: 2-3 minutes to build each, then about 1 minute to run under
# ASan and 1 to 1.7 under TSan). Not part of `make test`. TSan sees what every lock orders because the package's
# one lock, LinuxSystem's `Lock`, is a pthread mutex, which it intercepts (docs/reliability.md, "Sanitizers").
test-sanitize: bootstrap
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
		$(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan

test-unit: bootstrap
	$(SWIFT) build --product $(UNIT_TESTS_PRODUCT)
	$(SWIFT) build --product haptics
	$(SWIFT) test --skip-build

test-kernel: release capi-example peers
	$(if $(DIRECT_KERNEL),,@$(TIMED) vm-selftest scripts/vm-selftest)
	@scripts/kernel-tests

# The kernel tests with the unplug-replug cycles repeated the full number of times: 20 on each emulated
# controller and the PID joystick, 100 on the virtual pad, where `make test` makes 4 and 25. Not part of `make test`.
test-long: bootstrap-bench $(if $(DIRECT_KERNEL),,kernel) release capi-example peers
	@scripts/kernel-tests --long

# The tests of the driver whose behaviour the engine models per kernel (hid-nintendo's frames: docs/rendering.md)
# on Debian 13's kernel, 6.12 (HAPTICS_KERNEL_SUITE, docs/bench.md): about 90 s, and a 108 MB download the first
# time. Not part of `make test`, which boots Debian 12's 6.1 only.
TRIXIE_SUITE := trixie
test-kernel-trixie: bootstrap-bench release capi-example
	@HAPTICS_KERNEL_SUITE=$(TRIXIE_SUITE) scripts/kernel-tests hd/switch-pro emulation/switch-pro

# Coverage-guided fuzzing of every input format we read (libFuzzer + AddressSanitizer, docs/reliability.md):
# builds the fuzz targets into .build-fuzz and runs each for FUZZ_SECONDS seconds; one line per target.
FUZZ_SECONDS ?= 30
fuzz: bootstrap
	@scripts/fuzz --seconds $(FUZZ_SECONDS)

# The short run CI does after `make test` (.ci/run; not part of `make test`, to keep it within its 12 minutes on
# 2 cores): every target, FUZZ_SMOKE_SECONDS of fuzzing in all from the seeds, unoptimised
# (its build takes half the release build's time, which would otherwise be most of the smoke's cost).
FUZZ_SMOKE_SECONDS := 24
fuzz-smoke: bootstrap
	@$(TIMED) fuzz-build scripts/fuzz --debug --build-only
	@$(TIMED) fuzz-smoke scripts/fuzz --debug --no-build --total-seconds $(FUZZ_SMOKE_SECONDS)

# The load soak (docs/reliability.md, "Load"): 8 virtual pads with an engine and 4 players each for SOAK_SECONDS,
# pads unplugged and plugged back in at random; descriptors, effect slots and resident memory must stay flat. In the
# qemu bench, or directly with /dev/uinput and root. Not part of `make test`, which runs a 12 s smoke of it.
SOAK_SECONDS ?= 300
soak: bootstrap-bench $(if $(DIRECT_KERNEL),,kernel) release
	@scripts/soak --seconds $(SOAK_SECONDS)

# The voice coils' stream looped for ten minutes (HD_SOAK_SECONDS) on the emulated DualSense beside two busy
# processes, counting underruns (docs/hd-haptics.md). Not part of `make bench`.
bench-hd: bootstrap-bench $(if $(DIRECT_KERNEL),,kernel) release
	@VM_TIMEOUT=$${VM_TIMEOUT:-1500} scripts/bench --kernel-only "HD underrun soak"

# The SDL harness of the side-by-side bench (peers/sdl-peer.c), built against Debian's SDL 2.
peers: bootstrap-bench
	@scripts/peers >/dev/null

# Our engine side by side with SDL2 on the virtual pad and the emulated DualSense and Xbox pads, in the qemu bench
# with udevd (docs/bench.md, "Side by side with SDL"): a table per device, the closing `peers:` line, the SVG
# overlays in .build/bench-peers/. Three guests, two at a time at first; about 12 to 13 minutes. Not part of
# `make test`, which runs a smoke of it.
bench-peers: bootstrap-bench kernel release capi-example peers
	@scripts/bench-peers

# The virtual pad's trigger latency alone, against SDL's, in the 1600 rounds the whole bench-peers gives it (400 in
# a one-guest run such as `--latency-only`): enough that three runs agree on each p99 ratio within a few
# hundredths under emulation (docs/bench.md, "How many rounds hold a p99 still"). About 8 minutes.
bench-latency: bootstrap-bench kernel release capi-example peers
	@scripts/bench-peers --latency-only --device virtual-pad --rounds 1600

# The VM bench on its own: boots a plain guest and one with udevd and checks what the kernel tests rely on.
test-vm: bootstrap-bench
	@scripts/vm-selftest

# Formatting (swift-format, configured in .swift-format, the toolchain's own) and shell scripts (shellcheck).
# `swift format -i -r Sources Tests Fuzz Tools Package.swift` applies the formatting. The shell scripts are the files of
# scripts/ and scripts/guest/ (the qemu guest's, run by busybox sh) whose `#!` line ends in sh, and scripts/lib/*.sh.
SHELL_SCRIPTS = $(shell grep -l '^\#!.*sh$$' scripts/* scripts/guest/* 2>/dev/null) scripts/lib/*.sh
lint:
	@scripts/bootstrap --lint
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Tools Package.swift
	shellcheck --external-sources --source-path=SCRIPTDIR $(SHELL_SCRIPTS)

bench: bootstrap-bench release
	@scripts/bench

# DocC (swift-docc-plugin): the seven libraries' symbol docs in one archive, with LinuxHaptics' articles "Getting
# started" and "Coming from Core Haptics" (Sources/LinuxHaptics/LinuxHaptics.docc). Open it with
# `python3 -m http.server -d $(DOCS_ARCHIVE)` and http://localhost:8000/documentation/linuxhaptics. `make docs-check`
# builds the LinuxHaptics and AppHaptics catalogs, each alone, with every warning an error, so that a symbol the
# articles name and the code no longer has fails it (about 20 s on 2 cores after a debug build, 7 s once the
# plugin's tool is built).
DOCS_ARCHIVE := .build/docs/LinuxHaptics.doccarchive
DOCC_PLUGIN = $(SWIFT) package --allow-writing-to-directory .build/docs generate-documentation
docs: bootstrap
	@mkdir -p .build/docs
	$(DOCC_PLUGIN) --enable-experimental-combined-documentation --output-path $(DOCS_ARCHIVE) \
		--target AHAP --target AHAPFiles --target HapticRendering --target LinuxInput --target LinuxHaptics \
		--target AppHaptics --target LinuxHapticsTesting
	@echo "documentation: $(DOCS_ARCHIVE) (python3 -m http.server -d $(DOCS_ARCHIVE))"

docs-check: bootstrap
	@mkdir -p .build/docs
	$(DOCC_PLUGIN) --target LinuxHaptics --output-path .build/docs/check.doccarchive --warnings-as-errors
	$(DOCC_PLUGIN) --target AppHaptics --output-path .build/docs/check-app.doccarchive --warnings-as-errors

install-udev:
	@UDEVRULESDIR='$(UDEVRULESDIR)' scripts/install-udev

# `make` builds, as yourself, what `sudo make install` copies: the CLI's release build, the C library, the man pages
# and the shell completions (`make build` is the debug build).
all: $(STAGE)/bin/haptics $(CAPI_LIBRARY) man completions

# Installing (docs/install.md): `make install [PREFIX=/usr/local] [DESTDIR=]` puts the `haptics` CLI, the
# Haptics/ assets (PREFIX/share/haptics/Haptics, where the installed CLI looks beside its own bin/), a man page
# per subcommand, bash/zsh/fish completions, the udev rule and, once built, the C library; `make uninstall`
# removes what the install's manifest lists. The folders are overridable like PREFIX; UDEVRULESDIR= (empty)
# leaves the rule out. Install builds what it copies when it is missing or older than the sources: run
# `make man completions` as yourself first, and `sudo make install` only copies.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
DATADIR = $(PREFIX)/share
MANDIR = $(DATADIR)/man
LIBDIR = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
UDEVRULESDIR = /etc/udev/rules.d

# The C library's part of an install: $(CAPI_LIBRARY) with its soname and development links into LIBDIR, $(CAPI_HEADER)
# into INCLUDEDIR, linuxhaptics.pc from $(CAPI_PC_TEMPLATE) into LIBDIR/pkgconfig (see `capi` above).
INSTALL_ENV = PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' DATADIR='$(DATADIR)' MANDIR='$(MANDIR)' \
	LIBDIR='$(LIBDIR)' INCLUDEDIR='$(INCLUDEDIR)' UDEVRULESDIR='$(UDEVRULESDIR)' HAPTICS_BIN='$(STAGE)/bin/haptics' \
	MAN_STAGE='$(STAGE)/man' COMPLETION_STAGE='$(STAGE)/completions' CAPI_LIB='$(CAPI_LIBRARY)' \
	CAPI_HEADER='$(CAPI_HEADER)' CAPI_PC_IN='$(CAPI_PC_TEMPLATE)' CAPI_VERSION='$(CAPI_VERSION)'

INSTALL_INPUTS = $(STAGE)/bin/haptics $(CAPI_LIBRARY) $(MAN_STAMP) $(CAPI_MAN) $(COMPLETION_STAMP)
# The check first, then the inputs: as prerequisites side by side, `make -j` built them (as root, under sudo)
# while the check was still looking.
install: install-inputs-built-unless-sudo
	@$(MAKE) --no-print-directory install-copying

install-copying: $(INSTALL_INPUTS)
	@$(INSTALL_ENV) scripts/install

install-inputs-built-unless-sudo:
	@user=$${SUDO_USER-$${DOAS_USER-}}; \
	if [ -n "$$user" ] && [ "$$(id -u)" = 0 ] && ! $(MAKE) --no-print-directory -q $(INSTALL_INPUTS) 2>/dev/null; then \
		missing=; for input in $(INSTALL_INPUTS); do \
			$(MAKE) --no-print-directory -q "$$input" 2>/dev/null || missing="$$missing $$input"; \
		done; \
		echo "make install: not built yet, or older than the sources:$$missing" >&2; \
		echo "run 'make' as $$user first, then 'sudo make install'" >&2; \
		exit 1; \
	fi

# The C library's part alone (what a C program builds against), for the example the kernel tests run.
install-library: $(CAPI_LIBRARY) $(CAPI_MAN)
	@$(INSTALL_ENV) scripts/install --library

uninstall:
	@$(INSTALL_ENV) scripts/install --uninstall

# The CLI's release build, when a source is newer; touched after, since a change that does not reach the CLI
# leaves the binary as it was, and install would otherwise build again every time.
$(BIN)/haptics: Package.swift $(shell find Sources -type f)
	@scripts/bootstrap
	$(RELEASE_BUILD) --product haptics
	@touch $@

$(STAGE)/bin/haptics: $(BIN)/haptics
	@mkdir -p $(@D)
	@scripts/check-no-icu $<
	strip --strip-unneeded -o $@.tmp $< && mv $@.tmp $@

# The C library's release build, when a source is newer (as for the CLI above).
$(CAPI_LIBRARY): Package.swift $(CAPI_HEADER) $(shell find Sources -type f)
	@$(MAKE) --no-print-directory capi

# A page per subcommand, from swift-argument-parser's generate-manual (scripts/generate-man says how and why so),
# and the C library's linuxhaptics(3), from its header's comments.
man: $(MAN_STAMP) $(CAPI_MAN)
$(MAN_STAMP): $(BIN)/haptics scripts/generate-man
	scripts/generate-man $(BIN)/haptics $(STAGE)/man
	@touch $@

$(CAPI_MAN): $(CAPI_HEADER) scripts/generate-capi-man
	scripts/generate-capi-man $(CAPI_HEADER) $@

completions: $(COMPLETION_STAMP)
$(COMPLETION_STAMP): $(BIN)/haptics
	@mkdir -p $(STAGE)/completions
	$(BIN)/haptics --generate-completion-script bash >$(STAGE)/completions/haptics.bash
	$(BIN)/haptics --generate-completion-script zsh >$(STAGE)/completions/_haptics
	$(BIN)/haptics --generate-completion-script fish >$(STAGE)/completions/haptics.fish
	@touch $@

# `make install` into a temporary DESTDIR leaves exactly docs/install.md's list, the installed CLI finds its
# assets, and `make uninstall` leaves nothing (part of `make test`, on the release build it already has).
test-install: release capi
	@$(TIMED) install-check scripts/check-install

clean-timings:
	@mkdir -p .build && rm -f "$$TIMINGS_FILE"

clean:
	rm -rf .build .build-fuzz
