# The two commands a new user runs (README):
#   make run   - install what is missing, build, run `gpufleet simulate` on the bundled trace
#   make test  - install what is missing, build, run the whole test suite
#                (normal and AddressSanitizer+UBSan builds, their two test suites side by
#                side, then short fuzz runs, then Release builds with gcc and clang,
#                warnings as errors, unit tests)
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
GCC_RELEASE_BUILD   ?= build-release-gcc
CLANG_RELEASE_BUILD ?= build-release-clang
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# Control planes (real etcd + kube-apiserver + controllers + kwok, about 1 GiB
# each) the normal build's tests run at once, and the sanitizer pass's beside
# them (scripts/ctest-slots; tests/k8s/CMakeLists.txt).  They mostly wait on
# controllers, so more run at once than there are cores.
K8S_SLOTS      ?= 3
ASAN_K8S_SLOTS ?= 1

.PHONY: all deps deps-test build run demo check test build-asan test-asan test-fuzz test-release bench bench-bound image clean

all: build

deps:
	./scripts/bootstrap build

deps-test:
	./scripts/bootstrap test

# TESTS=OFF builds only the binary (what `make run` needs: no test libraries).
TESTS ?= ON
# WERROR=ON makes warnings errors (GF_WERROR).  The test targets (the project's
# own dev and CI builds) set it; `make run` and a plain `cmake` build do not, so
# a user's different compiler warning about something new does not stop them.
# Unset, the build directory keeps what it was configured with.
WERROR ?=

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGF_TESTS=$(TESTS) \
		$(if $(WERROR),-DGF_WERROR=$(WERROR))
	cmake --build $(BUILD) -j $(JOBS)

run: deps
	$(MAKE) build TESTS=OFF
	./$(BUILD)/gpufleet simulate

# The scheduler on a laptop (scripts/demo, docs/demo.md): a test control plane
# with fake GPU nodes, `gpufleet schedule`, a weekly burst with gangs, `gpufleet
# queue`, then everything torn down.  DEMO_KEEP=1 leaves it running.  Builds
# the binary only, in the build directory as it is configured; the Kubernetes
# components are built once per machine (tests/k8s/build-components, Go).
demo: deps-test
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD) -j $(JOBS) --target gpufleet
	./scripts/demo ./$(BUILD)/gpufleet

# The fast tier a developer runs on every change (ctest label `check`: unit,
# golden, CLI, fuzz-corpus replays and every other test that needs no
# control plane, image, kubelet or GPU; tests/tiers.cmake derives it).  The
# whole suite is `make test`, which CI runs.
check: deps-test
	$(MAKE) build TESTS=ON WERROR=ON
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L check

# The normal build's suite runs with K8S_SLOTS control planes at a time and,
# beside it, the sanitizer pass's control-plane tests (label control-plane)
# with ASAN_K8S_SLOTS more (other slot ids, so other ports); the sanitizer
# pass's other tests, CPU-bound, run once the normal suite is done.  The first
# prints as it goes, the sanitizer pass to $(ASAN_BUILD)/ctest-*.log, printed
# at the end; any of them failing fails the target.
test: deps-test
	$(MAKE) build TESTS=ON WERROR=ON
	$(MAKE) build-asan
	@echo "ctest: the sanitizer pass's control-plane tests run meanwhile: $(ASAN_BUILD)/ctest-control-plane.log (printed at the end)"
	@JOBS=0 ./scripts/ctest-slots $(ASAN_BUILD) $(K8S_SLOTS) $(ASAN_K8S_SLOTS) \
		-L control-plane -LE nosan >$(ASAN_BUILD)/ctest-control-plane.log 2>&1 & cp=$$!; \
	JOBS=$(JOBS) ./scripts/ctest-slots $(BUILD) 0 $(K8S_SLOTS); rc=$$?; \
	echo "ctest: the sanitizer pass's other tests ($(ASAN_BUILD)/ctest-other.log)"; \
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE 'nosan|control-plane' \
		>$(ASAN_BUILD)/ctest-other.log 2>&1; orc=$$?; \
	echo "ctest: waiting for the sanitizer pass's control-plane tests"; \
	wait $$cp; cprc=$$?; \
	echo "===== ASan+UBSan ($(ASAN_BUILD)), control-plane tests ====="; cat $(ASAN_BUILD)/ctest-control-plane.log; \
	echo "===== ASan+UBSan ($(ASAN_BUILD)), the other tests ====="; cat $(ASAN_BUILD)/ctest-other.log; \
	echo "ctest: normal build rc=$$rc; ASan+UBSan control-plane rc=$$cprc, other rc=$$orc"; \
	[ $$rc = 0 ] && [ $$cprc = 0 ] && [ $$orc = 0 ]
	$(MAKE) test-fuzz
	$(MAKE) test-release

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.  Tests
# labelled `nosan` are not run twice: they exercise no gpufleet C code (the
# bare control-plane smoke test, the source lint) or are too slow under the
# sanitizers (the full reproduction of the paper, 360 runs, which the normal
# build runs; the same engine code runs under the sanitizers in test_sim and
# the golden case).
build-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGF_SANITIZE=ON -DGF_WERROR=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)

test-asan: build-asan
	JOBS=$(JOBS) ./scripts/ctest-slots $(ASAN_BUILD) 0 $(K8S_SLOTS) -LE nosan

# Build the libFuzzer harnesses with clang and run each one briefly on its seed corpus.
test-fuzz:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGF_FUZZ=ON -DGF_TESTS=OFF -DGF_WERROR=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	./scripts/run-fuzzers $(FUZZ_BUILD)

# What users build: `cmake -DCMAKE_BUILD_TYPE=Release` (-O3 -DNDEBUG), with gcc
# and with clang.  The optimizer finds warnings the dev build (-O2) and the
# sanitizer and fuzz builds (-O0) do not (gcc's maybe-uninitialized above all),
# so CI compiles everything, tests and benchmarks included, both ways with
# warnings as errors, and runs the unit tests of each (a few seconds).
test-release:
	CC=gcc cmake -S . -B $(GCC_RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DGF_WERROR=ON
	cmake --build $(GCC_RELEASE_BUILD) -j $(JOBS)
	ctest --test-dir $(GCC_RELEASE_BUILD) --output-on-failure -j $(JOBS) -L unit
	CC=clang cmake -S . -B $(CLANG_RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DGF_WERROR=ON
	cmake --build $(CLANG_RELEASE_BUILD) -j $(JOBS)
	ctest --test-dir $(CLANG_RELEASE_BUILD) --output-on-failure -j $(JOBS) -L unit

bench:
	$(MAKE) build TESTS=OFF
	./$(BUILD)/bench/bench_simulate
	./$(BUILD)/bench/bench_scale 1 2 4 8 16

# The OCI image (scripts/build-image: buildah, from scratch, nothing pulled):
# a Release build of the binary alone (warning-free with gcc and clang:
# make test-release; stripped in the image), tagged $(IMAGE).  Needs buildah
# (scripts/bootstrap test installs it).  IMAGE_ARCHIVE=FILE also writes an
# OCI archive.
IMAGE_BUILD   ?= build-image
IMAGE         ?= ghcr.io/gpufleet/gpufleet:0.1.0
IMAGE_ARCHIVE ?=

image:
	cmake -S . -B $(IMAGE_BUILD) -DCMAKE_BUILD_TYPE=Release -DGF_TESTS=OFF
	cmake --build $(IMAGE_BUILD) -j $(JOBS) --target gpufleet
	./scripts/build-image --binary $(IMAGE_BUILD)/gpufleet --tag $(IMAGE) $(if $(IMAGE_ARCHIVE),--oci-archive $(IMAGE_ARCHIVE))

# FGD and FGD-Fill beside an LP upper bound, every bundled workload (a few minutes; GLPK).
bench-bound:
	./scripts/bootstrap bench
	$(MAKE) build TESTS=OFF
	./$(BUILD)/bench/bench_bound

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(GCC_RELEASE_BUILD) $(CLANG_RELEASE_BUILD) $(IMAGE_BUILD)
