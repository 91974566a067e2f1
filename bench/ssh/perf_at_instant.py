#!/usr/bin/env python3
"""CPU used around each armed instant, by process name, from a system-wide perf profile.

    PRINT_INSTANTS=1 perf record -a -g -F 1999 -k CLOCK_MONOTONIC -o at.data -- \\
        ./build/bench/ssh/ssh_fanout_bench 256 1 --armed-only > at.out
    bench/ssh/perf_at_instant.py at.data at.out [window_ms=100] [rounds=4]

Takes the first `rounds` instants the bench printed (the builtin-apply rounds) and counts the samples
from 2 ms before each instant to `window_ms` after it, per command name (comm). One sample is
1/1999 s of one CPU; the last column divides that CPU by the number of wakes (rounds x hosts).
"""
import collections
import re
import subprocess
import sys


def main():
    data, out = sys.argv[1], sys.argv[2]
    window = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.1
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    text = open(out).read()
    instants = [float(t) for t in re.findall(r"^instant ([\d.]+) s", text, re.M)][:rounds]
    hosts = int(re.search(r"^(\d+) endpoints", text, re.M).group(1))
    windows = [(t - 0.002, t + window) for t in instants]
    perf = subprocess.run(["perf", "script", "-i", data, "-F", "comm,time"], capture_output=True, text=True)
    by_comm = collections.Counter()
    for line in perf.stdout.splitlines():
        m = re.match(r"\s*(.+?)\s+([\d.]+):\s*$", line)
        if m and any(a <= float(m.group(2)) <= b for a, b in windows):
            by_comm[m.group(1)] += 1
    total = sum(by_comm.values())
    print(f"{len(windows)} windows of {window * 1000:.0f} ms, {hosts} hosts, {total} samples")
    for comm, n in by_comm.most_common(10):
        per_wake_ms = n / 1999 * 1000 / (len(windows) * hosts)
        print(f"  {comm:18s} {n:6d} {100 * n / max(total, 1):5.1f}%  {per_wake_ms:.3f} ms CPU per host")


if __name__ == "__main__":
    main()
