# The two commands of the README are `make demo` and `make test`; everything they need is installed by
# scripts/bootstrap (Debian packages) and scripts/fetch-kernel (the bench's kernel, cached in vm-cache/).

SWIFT ?= swift
RELEASE_FLAGS := -c release --static-swift-stdlib
BIN := .build/release

.PHONY: all build release demo test test-unit test-kernel bench bootstrap bootstrap-bench install-udev clean

all: build

bootstrap:
	@scripts/bootstrap

bootstrap-bench:
	@scripts/bootstrap --bench

build: bootstrap
	$(SWIFT) build

release: bootstrap
	$(SWIFT) build $(RELEASE_FLAGS)

# The main job: play a pattern on the first gamepad, or on the built-in virtual pad when there is none.
demo: release
	@scripts/demo

# All tests: unit tests on the host, then kernel tests against a real kernel (directly when this machine has
# /dev/uinput and root, otherwise in the qemu bench).
test: bootstrap-bench
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory test-kernel

test-unit: bootstrap
	$(SWIFT) test

test-kernel: bootstrap-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	@scripts/kernel-tests

bench: bootstrap-bench
	$(SWIFT) build $(RELEASE_FLAGS)
	@scripts/bench

install-udev:
	@scripts/install-udev

clean:
	rm -rf .build
