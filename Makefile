# Thin habits over CMake. `make test` and `make demo` are the README's two
# commands: each installs what is missing, builds, then runs.
BUILD ?= build
# The build shows its progress lines and errors, not a "gmake[N]: Entering
# directory" pair for every directory CMake's makefiles recurse into.
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo asan fuzz format format-check bench clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	./$(BUILD)/flexq demo

asan: deps
	cmake -S . -B build-asan -DFLEXQ_SANITIZE=ON -DFLEXQ_WERROR=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# Builds only the libFuzzer targets (the core, instrumented) and runs each
# for a bounded time (FLEXQ_FUZZ_SECONDS, default 20) on its seed corpus.
fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DFLEXQ_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-fuzz -j $(JOBS) --target fuzz_all
	cd build-fuzz && ctest -L fuzz --output-on-failure

bench: build
	@for b in $(BUILD)/bench/*; do echo "== $$b"; $$b; done

format:
	git ls-files '*.c' '*.h' | xargs clang-format -i

format-check:
	git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD) build-asan build-fuzz
