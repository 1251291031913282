#!/usr/bin/env bash
# expect_failure.sh WORKDIR REGEX -- COMMAND...
# Runs COMMAND in a fresh WORKDIR and passes when it exits non-zero, its stderr matches REGEX
# (extended regular expression) and it left no run directory behind (no partial output).
set -u
work=$1 regex=$2
shift 3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
"$@" >stdout.txt 2>stderr.txt
rc=$?
if [ "$rc" -eq 0 ]; then echo "FAIL: exit code 0, expected an error"; cat stdout.txt; exit 1; fi
if ! grep -Eq -- "$regex" stderr.txt; then
  echo "FAIL: the error message does not match: $regex"; cat stderr.txt; exit 1
fi
if [ -d runs ] && [ -n "$(ls -A runs)" ]; then echo "FAIL: partial output left in runs/"; ls -R runs; exit 1; fi
echo "ok (exit $rc): $(head -c 300 stderr.txt)"
