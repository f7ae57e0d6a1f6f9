#!/usr/bin/env bash
# Mutation testing of the lines a change touches, in the packages that hold
# the rules: the root package and the stores. For each of them that the
# change touches, gremlins mutates the changed lines one at a time (a
# condition negated, a boundary moved, an operator swapped, ...) and runs
# the package's own tests against each mutant. A mutant the tests do not
# notice (LIVED) is a change to a rule that no test would catch; one on a
# line no test runs is NOT COVERED. Both are printed.
#
# Usage: scripts/mutation.sh [BASE [PACKAGE...]]
#
#   BASE      what the change is compared with: the lines changed since
#             the merge base of BASE and the working tree (uncommitted
#             changes included). Default: origin/main if it exists, else
#             main; on main itself that is the uncommitted changes.
#   PACKAGE   directories to look at. Default: . store store/boltstore
#             store/memstore store/pgstore
#
# Environment: GREMLINS_FLAGS adds flags to gremlins unleash (for example
# "--workers 1 --timeout-coefficient 20" on a busy machine). Set
# IDENTITY_TEST_POSTGRES (see CONTRIBUTING.md) for store/pgstore: without
# it, its tests start a throwaway server on each run if PostgreSQL is
# installed, a second or two more per mutant, and skip if it is not: its
# mutants would all be NOT COVERED.
#
# Exit status: 0 when no mutant lived, 1 when some did, 2 on an error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

readonly version=v0.6.0
export PATH="$PATH:$(go env GOPATH)/bin"
if ! command -v gremlins >/dev/null 2>&1; then
  echo "== installing gremlins $version"
  go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version" || exit 2
fi

base=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$base" ]; then
  if git rev-parse --verify -q origin/main >/dev/null; then
    base=origin/main
  elif git rev-parse --verify -q main >/dev/null; then
    base=main
  else
    echo "mutation.sh: no origin/main or main to compare with; name a BASE" >&2
    exit 2
  fi
fi
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "mutation.sh: $base is not a commit" >&2
  exit 2
fi
packages=("$@")
[ ${#packages[@]} -eq 0 ] && packages=(. store store/boltstore store/memstore store/pgstore)

lived=0
for pkg in "${packages[@]}"; do
  pkg=${pkg#./}
  pkg=${pkg%/}
  [ -z "$pkg" ] && pkg=.
  # The package's own Go files (not its tests, not its subdirectories)
  # that the change touches. gremlins reads an empty diff as "everything
  # changed", so a package without changed lines is not run at all.
  changed=$(git diff --merge-base "$base" --diff-filter=d --name-only -- "$pkg" |
    awk -v dir="$pkg" '{
      d = $0; sub(/\/[^\/]*$/, "", d); if (d == $0) d = "."
      if (d == dir && $0 ~ /\.go$/ && $0 !~ /_test\.go$/) print
    }')
  if [ -z "$changed" ]; then
    echo "== $pkg: no changed Go code"
    continue
  fi
  echo "== $pkg: $(echo "$changed" | tr '\n' ' ')"
  out=$(mktemp)
  # gremlins names a package's files relative to the package, and the
  # files of its --diff as git diff prints them: run it in the package's
  # directory, with diff.relative set, so that both agree. -E /: files of
  # subdirectories are other packages. -S lc: print the LIVED and NOT
  # COVERED mutants only.
  # shellcheck disable=SC2086
  # GOFLAGS=-count=1: gremlins times the coverage run to bound each
  # mutant's run, so it must not come from the test cache.
  if ! (cd "$pkg" && GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1" GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
    gremlins unleash --diff "$base" -E / -S lc ${GREMLINS_FLAGS:-} "$root/$pkg") 2>&1 | tee "$out"; then
    echo "mutation.sh: gremlins failed on $pkg" >&2
    rm -f "$out"
    exit 2
  fi
  if grep -q 'LIVED' "$out"; then
    lived=1
  fi
  rm -f "$out"
done

if [ "$lived" -ne 0 ]; then
  echo "== mutants LIVED: each is a change to the code that no test notices; add a test that kills it (or say why it is equivalent)"
  exit 1
fi
echo "== no mutant lived"
