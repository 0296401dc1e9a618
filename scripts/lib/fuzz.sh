# Sourced by scripts/fuzz-*: configures build-fuzz/ with clang-14 (libFuzzer + ASan) once and
# builds one target. fuzz_build TARGET; then $build is the build folder.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${KESTREL_FUZZ_BUILD:-$root/build-fuzz}"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/kestrel-ccache}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"  # the builds of CI together: 5G, the default, evicts
fuzz_build() {
  cmake -S "$root" -B "$build" -G Ninja -DKESTREL_FUZZ=ON -DKESTREL_BENCHMARKS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,fuzzer-no-link -fno-omit-frame-pointer" >/dev/null
  cmake --build "$build" -j2 --target "$1"
}
