# unblock — the two commands of the quick start, and the usual ones.
#   make          install what is missing (scripts/bootstrap), build into build/
#   make check    the same, then every test (ctest)
#   make demo     the same, then the demonstration (scripts/demo)
#   make bench    all the benchmarks (bench/README.md); make bench-quick: a subset, < 5 min
#   make install PREFIX=/opt/unblock [DESTDIR=/staging]   (docs/install.md)
#   make package  the Debian package, build/unblock_VERSION-1_ARCH.deb
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all bootstrap build check demo bench bench-quick install package clean

all: build

bootstrap:
	@scripts/bootstrap

$(BUILD)/CMakeCache.txt: | bootstrap
	cmake -S . -B $(BUILD) $$(command -v ninja >/dev/null && echo -G Ninja) \
	    -DCMAKE_INSTALL_PREFIX=$(or $(PREFIX),/usr/local)

build: bootstrap $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

demo: build
	scripts/demo $(BUILD)

bench: build
	bench/run full $(BUILD)

bench-quick: build
	bench/run quick $(BUILD)

# Into PREFIX if given, else the prefix the build was configured with (by
# default /usr/local).  The tree finds its parts from where it is, so PREFIX may
# differ from the configured one, and the tree may be moved later.
install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) $(if $(PREFIX),--prefix "$(PREFIX)")

package: build
	cmake --build $(BUILD) --target package

clean:
	rm -rf $(BUILD)
