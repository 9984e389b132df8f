#!/usr/bin/env bash
# Runs thunder-compile under valgrind's memcheck on each input, through the whole compiler
# (import, graph, fusion, plan, source). Fails when memcheck reports an invalid read or
# write, an uninitialized value or a bad free in any of them; the compiler's own verdict on
# an input does not matter (a refused op is an answer, a read of freed memory is not).
#
#   run.sh <thunder-compile> <workdir> <input>...
#
# Such reads need not crash: tools/dev.sh test's pytest segfaulted in the fusion passes
# only when an erased op's memory happened to be reused, while every other run passed.
set -uo pipefail
compile="$1" work="$2"
shift 2
rm -rf "$work" && mkdir -p "$work"
failed=()
for input in "$@"; do
  name="$(basename "${input%.*}")"
  valgrind --quiet --error-exitcode=99 --track-origins=no \
    --log-file="$work/$name.memcheck" \
    "$compile" "$input" --compile-to=source -o "$work/$name" >"$work/$name.out" 2>&1
  status=$?
  if [[ $status -eq 99 ]]; then
    failed+=("$name")
    echo "memcheck: $input: errors (log: $work/$name.memcheck)"
    head -40 "$work/$name.memcheck"
  else
    echo "memcheck: $input: clean (thunder-compile exit $status)"
  fi
done
if ((${#failed[@]})); then
  echo "memcheck: ${#failed[@]} of $# inputs have memory errors: ${failed[*]}"
  exit 1
fi
