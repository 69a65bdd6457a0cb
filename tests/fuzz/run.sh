#!/bin/sh
# Builds the libFuzzer harnesses of tests/fuzz/ with clang (AddressSanitizer,
# coverage on the whole library) into a separate build directory and runs
# each for SECONDS seconds (default 20), growing tests/fuzz/corpus/<target>/.
#
#   tests/fuzz/run.sh [SECONDS [TARGET...]]
#
# A crash leaves its input as _fuzz/crash-* (named in the output): fix the
# code, then copy the input to tests/fuzz/regressions/<target>/ so the
# 'fuzz-regressions' test suite replays it on every run.
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD_DIR:-$src/_fuzz}
seconds=${1:-20}
[ $# -gt 0 ] && shift
targets=${*:-direct-step json-schema robots test-file mcp model-response}

if [ ! -d "$build" ]; then
  CC=clang meson setup "$build" "$src" -Dfuzzing=true -Dbench=false \
    -Db_sanitize=address -Db_lundef=false -Dbuildtype=debugoptimized \
    -Dc_args=-fsanitize=fuzzer-no-link
fi
for t in $targets; do
  meson compile -C "$build" "tests/fuzz/fuzz-$t"
done

status=0
for t in $targets; do
  corpus=$src/tests/fuzz/corpus/$t
  mkdir -p "$corpus" "$build/artifacts/$t"
  echo "== fuzz-$t for ${seconds}s"
  # -close_fd_mask=3: quiet the GLib warnings of rejected inputs.
  "$build/tests/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -close_fd_mask=3 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t/" \
    "$corpus" "$src/tests/fuzz/regressions/$t" 2>&1 | tail -n 12 || status=1
done
exit $status
