#!/usr/bin/env bash
# tests/run_all.sh: the whole test suite, from a fresh Debian 12 machine.
# Installs dependencies, then builds the tree twice out of a pristine copy
# (_build/debug with strict warnings, _build/asan with ASan+UBSan) and runs
# `make check` in each. Exit status is non-zero if anything failed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash deploy/deps.sh test
# deps.sh installed PostgreSQL: the suites on it (issue 22) run rather than skip
export AQ_PG=${AQ_PG:-1}
jobs=$(nproc)
out="$top/_build"
rm -rf "$out/src"
mkdir -p "$out/src"
# A pristine copy of the sources (tracked and new files), so in-tree builds
# and stale generated files never leak into the test builds.
git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} cp --parents -- {} "$out/src/" 2>/dev/null || true
(cd "$out/src" && autoreconf -fi >/dev/null 2>&1)
status=0
for flavour in ${AQ_FLAVOURS:-debug asan}; do
  b="$out/$flavour"
  rm -rf "$b"; mkdir -p "$b"
  echo "== $flavour build =="
  flags="--enable-debug"; [ "$flavour" = asan ] && flags="--enable-debug --enable-asan"
  (cd "$b" && "$out/src/configure" -q $flags && make -s -j"$jobs" >/dev/null) || { echo "$flavour: build failed"; status=1; continue; }
  echo "== $flavour: make check =="
  # The kernel-client VM suite (tests/vm, including its image build when the
  # cache has none) runs in the debug build only: it tests the protocol, not
  # the memory safety ASan adds, and under TCG it is the longest suite.
  vm=${AQ_VM:-1}; [ "$flavour" = asan ] && vm=0
  if ! (cd "$b" && AQ_VM=$vm ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 make -s -j"$jobs" check); then
    status=1
    for f in $(find "$b" -name '*.log' -newer "$b/config.status"); do
      grep -q '^FAIL\|^ERROR' "${f%.log}.trs" 2>/dev/null && { echo "---- $f"; tail -n 60 "$f"; }
    done
  fi
done
# The libFuzzer harnesses over every network parser, for a bounded time.
echo "== fuzz: ${AQ_FUZZ_SECONDS:-20} s per harness =="
frc=0
FUZZ_OUT="$out/fuzz" sh "$out/src/fuzz/run.sh" "${AQ_FUZZ_SECONDS:-20}" >"$out/fuzz.log" 2>&1 || frc=$?
tail -n 5 "$out/fuzz.log"
case $frc in
0) ;;
77) echo "fuzz: skipped (no clang)";;
*) echo "fuzz: FAILED (see $out/fuzz.log)"; status=1;;
esac

# One closing line for CI: the sum over every suite of both builds.
pass=0; fail=0
for t in $(find "$out" -name '*.trs' 2>/dev/null); do
  r=$(sed -n 's/^:test-result: //p' "$t" | head -n1)
  case "$r" in PASS|XFAIL|SKIP) pass=$((pass+1));; *) fail=$((fail+1));; esac
done
[ $status -ne 0 ] && [ $fail -eq 0 ] && fail=1
# The failed checks themselves, last, where a CI page that keeps only the head
# and the tail of this output still shows them: suite, then its FAIL lines
# (tests/e2e/lib.sh and Check both start them with FAIL or a file:line).
for t in $(find "$out" -name '*.trs' 2>/dev/null); do
  grep -q '^:test-result: \(FAIL\|ERROR\)' "$t" || continue
  echo "failed: ${t#$out/} (${t%.trs}.log)"
  grep -m 8 -E '^(FAIL|not ok|[^ ]+:[0-9]+:[EF]:)' "${t%.trs}.log" 2>/dev/null | cut -c1-200 | sed 's/^/  /'
done
echo "$pass passed, $fail failed"
exit $status
