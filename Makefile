# The two commands of the README are `make demo` and `make test`; everything they need is installed by
# scripts/bootstrap (Debian packages) and scripts/fetch-kernel (the bench's kernel, cached in vm-cache/).
# How the bench works and where the time goes: docs/bench.md.

SHELL := /bin/bash
SWIFT ?= swift
RELEASE_FLAGS := -c release --static-swift-stdlib
BIN := .build/release
# `make test` ends with a table of where its time went: scripts/timed appends one line per phase to
# TIMINGS_FILE, set for `make test` only (other targets just run their commands).
TIMED := scripts/timed
# "yes" when kernel tests can run on this host itself (/dev/uinput and root): then no VM is booted.
DIRECT_KERNEL := $(shell [ -e /dev/uinput ] && [ "$$(id -u)" = 0 ] && echo yes)
test: export TIMINGS_FILE := $(CURDIR)/.build/test-timings

.PHONY: all build release demo demo-vm test test-unit test-sanitize test-kernel test-vm fuzz fuzz-smoke soak bench bootstrap \
	bootstrap-bench kernel lint install-udev clean clean-timings

all: build

bootstrap:
	@$(TIMED) apt-packages scripts/bootstrap

bootstrap-bench:
	@$(TIMED) apt-packages scripts/bootstrap --bench

# The Debian kernel (and udev) the qemu bench boots: downloaded once, then reused from vm-cache/.
kernel: bootstrap-bench
	@$(TIMED) kernel-download scripts/fetch-kernel --udev >/dev/null

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(TIMED) release-build $(SWIFT) build $(RELEASE_FLAGS)

# The main job: play a pattern and the chapter haptics on the first gamepad, or on the built-in virtual output
# when there is none (`make demo-vm` shows the same on a uinput virtual pad under a real kernel).
demo: bootstrap
	$(SWIFT) build $(RELEASE_FLAGS) --product haptics
	@scripts/demo

# The same demo on an emulated DualSense that the kernel's hid-playstation binds: on this host with /dev/uhid and
# root, otherwise in the qemu bench.
demo-vm: bootstrap-bench
	$(SWIFT) build $(RELEASE_FLAGS) --product haptics
	@scripts/demo-vm

# All tests: unit tests on the host, then kernel tests against a real kernel (directly when this machine has
# /dev/uinput and root, otherwise in the qemu bench, which is tested first). Ends with the time each phase
# took, then the kernel tests' total line.
test: clean-timings bootstrap-bench $(if $(DIRECT_KERNEL),,kernel)
	$(TIMED) unit-tests-build $(SWIFT) build --build-tests
	$(TIMED) unit-tests-run $(SWIFT) test --skip-build
	@$(MAKE) --no-print-directory fuzz-smoke
	@$(MAKE) --no-print-directory test-kernel

# The unit tests under AddressSanitizer (LeakSanitizer included), then ThreadSanitizer, each in a build folder of
# its own (about 4 minutes to build and 1.5 to run, each, on 2 cores). Not part of `make test`. ThreadSanitizer
# skips the stress test: under contention it reports races on state that Synchronization.Mutex guards, because
# the lock's contended path runs in the uninstrumented runtime (docs/reliability.md has the reproducer).
test-sanitize: bootstrap
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
		$(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --skip StressTests

test-unit: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

test-kernel: release
	$(if $(DIRECT_KERNEL),,@$(TIMED) vm-selftest scripts/vm-selftest)
	@scripts/kernel-tests

# Coverage-guided fuzzing of every input format we read (libFuzzer + AddressSanitizer, docs/reliability.md):
# builds the fuzz targets into .build-fuzz and runs each for FUZZ_SECONDS seconds; one line per target.
FUZZ_SECONDS ?= 30
fuzz: bootstrap
	@scripts/fuzz --seconds $(FUZZ_SECONDS)

# The short run `make test` does: every target, FUZZ_SMOKE_SECONDS of fuzzing in all from the seeds, unoptimised
# (its build takes half the release build's time, which would otherwise be most of the smoke's cost).
FUZZ_SMOKE_SECONDS := 42
fuzz-smoke: bootstrap
	@$(TIMED) fuzz-build scripts/fuzz --debug --build-only
	@$(TIMED) fuzz-smoke scripts/fuzz --debug --no-build --total-seconds $(FUZZ_SMOKE_SECONDS)

# The load soak (docs/reliability.md, "Load"): 8 virtual pads with an engine and 4 players each for SOAK_SECONDS,
# pads unplugged and plugged back in at random; descriptors, effect slots and resident memory must stay flat. In the
# qemu bench, or directly with /dev/uinput and root. Not part of `make test`, which runs a 12 s smoke of it.
SOAK_SECONDS ?= 300
soak: bootstrap-bench $(if $(DIRECT_KERNEL),,kernel) release
	@scripts/soak --seconds $(SOAK_SECONDS)

# The VM bench on its own: boots a plain guest and one with udevd and checks what the kernel tests rely on.
test-vm: bootstrap-bench
	@scripts/vm-selftest

# Formatting (swift-format, configured in .swift-format, the toolchain's own) and shell scripts (shellcheck).
# `swift format -i -r Sources Tests Fuzz Package.swift` applies the formatting. The shell scripts are the files of
# scripts/ and scripts/guest/ (the qemu guest's, run by busybox sh) whose `#!` line ends in sh, and scripts/lib/*.sh.
SHELL_SCRIPTS = $(shell grep -l '^\#!.*sh$$' scripts/* scripts/guest/* 2>/dev/null) scripts/lib/*.sh
lint:
	@scripts/bootstrap --lint
	$(SWIFT) format lint --strict --recursive Sources Tests Fuzz Package.swift
	shellcheck --external-sources --source-path=SCRIPTDIR $(SHELL_SCRIPTS)

bench: bootstrap-bench release
	@scripts/bench

install-udev:
	@scripts/install-udev

clean-timings:
	@mkdir -p .build && rm -f "$$TIMINGS_FILE"

clean:
	rm -rf .build .build-fuzz
