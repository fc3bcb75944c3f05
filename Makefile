# The two commands a new user runs (README):
#   make run   - install what is missing, build, run `gpufleet simulate` on the bundled trace
#   make test  - install what is missing, build, run the whole test suite
#                (normal build, then AddressSanitizer+UBSan build, then short fuzz runs)
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-test build run test test-asan test-fuzz bench bench-bound clean

all: build

deps:
	./scripts/bootstrap build

deps-test:
	./scripts/bootstrap test

# TESTS=OFF builds only the binary (what `make run` needs: no test libraries).
TESTS ?= ON

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGF_TESTS=$(TESTS)
	cmake --build $(BUILD) -j $(JOBS)

run: deps
	$(MAKE) build TESTS=OFF
	./$(BUILD)/gpufleet simulate

test: deps-test
	$(MAKE) build TESTS=ON
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	$(MAKE) test-asan
	$(MAKE) test-fuzz

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.  Tests
# labelled `nosan` are not run twice: they exercise no gpufleet C code (the
# bare control-plane smoke test, the source lint) or are too slow under the
# sanitizers (the full reproduction of the paper, 360 runs, which the normal
# build runs; the same engine code runs under the sanitizers in test_sim and
# the golden case).
test-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGF_SANITIZE=ON
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -LE nosan

# Build the libFuzzer harnesses with clang and run each one briefly on its seed corpus.
test-fuzz:
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGF_FUZZ=ON -DGF_TESTS=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	./scripts/run-fuzzers $(FUZZ_BUILD)

bench:
	$(MAKE) build TESTS=OFF
	./$(BUILD)/bench/bench_simulate

# FGD and FGD-Fill beside an LP upper bound, every bundled workload (a few minutes; GLPK).
bench-bound:
	./scripts/bootstrap bench
	$(MAKE) build TESTS=OFF
	./$(BUILD)/bench/bench_bound

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
