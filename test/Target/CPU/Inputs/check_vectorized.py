"""Checks that every loop of the CPU backend's pointwise kernels vectorized.

Usage: check_vectorized.py SOURCE OPT_INFO MIN_BYTES

SOURCE is generated kernel code (a unit of kernels/, or several in one file), OPT_INFO what the C++ compiler printed
with -fopt-info-vec-optimized for it. Each kernel loop over elements
(`for (int64_t flat_i` / `for (int64_t pcol`) must be reported as vectorized
with vectors of at least MIN_BYTES bytes, and no kernel may call scalar libm
math (std::exp, std::erf, ...), which would keep it from vectorizing.
"""
import re
import sys


def main() -> int:
    source, info, min_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    lines = open(source).read().splitlines()
    loops = [i + 1 for i, line in enumerate(lines)
             if re.search(r"for \(int64_t (flat_i|pcol) = ", line)]
    if not loops:
        print("no kernel loop in", source)
        return 1
    widths = {}
    name = re.escape(source.rsplit("/", 1)[-1])
    for m in re.finditer(name + r":(\d+):\d+: optimized: loop vectorized using (\d+) byte vectors",
                         open(info).read()):
        widths[int(m.group(1))] = max(widths.get(int(m.group(1)), 0), int(m.group(2)))
    bad = 0
    for line in loops:
        # GCC reports a loop at its `for` or at the first statement of its body.
        width = max(widths.get(line, 0), widths.get(line + 1, 0))
        status = "ok" if width >= min_bytes else "NOT VECTORIZED"
        print(f"model.cpp:{line}: {lines[line - 1].strip()} -> {width} byte vectors: {status}")
        bad += width < min_bytes
    for i, line in enumerate(lines):
        if re.search(r"std::(exp|log|erf|tanh|sin|cos|pow)\(", line) and " = " in line:
            print(f"model.cpp:{i + 1}: scalar libm call: {line.strip()}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
