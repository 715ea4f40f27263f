#!/usr/bin/env bash
# Fails when a tracked C++ file (sources, headers, CUDA; docs/results/ left out: those are kept as
# they ran) is not formatted as .clang-format says, naming the files and the command that fixes
# them. Every such file is checked, not only those the last change touched: on a fresh clone (CI)
# the change is not knowable, and the whole tree takes seconds.
#
# The reference formatter is Debian 12's clang-format 14 (package clang-format, which
# scripts/install-test-deps.sh installs): other versions lay out some code differently, so the
# check runs clang-format-14 by name, never whichever clang-format is first on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter="clang-format-14"
if ! command -v "$formatter" >/dev/null; then
  echo "format-check: $formatter not found (Debian 12's clang-format package; scripts/install-test-deps.sh installs it)" >&2
  exit 1
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format-check: skipped: not a git checkout (the files checked are git's tracked ones)"
  exit 0
fi
mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.cc' '*.cu' '*.cuh' ':!:docs/results/**')
# --dry-run --Werror: one "FILE:LINE:COL: error: code should be clang-formatted" per change it would make.
report=$(printf '%s\0' "${files[@]}" | xargs -0 -n 100 "$formatter" --dry-run --Werror 2>&1) && status=0 || status=$?
if [[ $status -eq 0 ]]; then
  echo "format-check: ${#files[@]} C++ files formatted as .clang-format says ($("$formatter" --version))"
  exit 0
fi
mapfile -t bad < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: error: code should be clang-formatted' <<<"$report" |
  cut -d: -f1 | sort -u)
if [[ ${#bad[@]} -eq 0 ]]; then  # clang-format itself failed: say how
  echo "$report" >&2
  echo "format-check: $formatter failed (exit $status)" >&2
  exit 1
fi
echo "format-check: ${#bad[@]} C++ file(s) not formatted as .clang-format says:" >&2
printf '  %s\n' "${bad[@]}" >&2
echo "format-check: fix them with: $formatter -i ${bad[*]}" >&2
exit 1
