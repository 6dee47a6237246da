#!/usr/bin/env python3
"""hosts_report.py - bench/hosts' tables: hosts.csv and hosts.md from the runs in hosts.tmp/.

A run's file is PROGRAM.MPI.IMPL.rROUND.csv (rows program,variant,implementation,transport,
ranks,bytes,median_us,ratio_to_pt2pt), or .failed with its .err beside. Each row's ratio is
taken within its own run, against that run's reference at the same size: ghost's isend (the
program's own ratio column: the median of the per-repetition ratios), mpi3's pingpong (the
two medians' quotient). The tables give the median over the rounds of both."""
import argparse
import csv
import glob
import os
import statistics

REF = {"ghost": "isend/ring", "mpi3": "pingpong/create"}
GHOST = ["isend", "fence", "pscw", "lock", "lock_notify", "counter", "iput", "put_signal"]
MPI3 = ["pingpong", "put-lockall", "get-lockall", "put-lock", "get-lock", "put-fence",
        "get-fence", "put-pscw", "get-pscw", "fop", "gacc", "cas"]
# The targets: (program, variant, size or None for 1 MiB rows, bound, what)
TARGETS = [
    ("ghost", "fence", 8, 1.0, "fence exchange / Isend-Irecv exchange, 8 B"),
    ("ghost", "pscw", 8, 1.0, "PSCW exchange / Isend-Irecv exchange, 8 B"),
    ("ghost", "counter", 8, 1.0, "counter exchange / Isend-Irecv exchange, 8 B"),
    ("ghost", "lock", 8, 1.1, "lock, put, unlock per neighbour (seed 001, no barrier), 8 B"),
    ("ghost", "lock_notify", 8, 2.0,
     "the same with the notifications a reader needs (zero-byte messages), 8 B"),
    ("mpi3", "fop", 8, 1.1, "MPI_Fetch_and_op + flush / ping-pong, 8 B"),
]
MIB = 1 << 20
# A run's rows (bench/common.c, bench_row), without a header
FIELDS = ["program", "variant", "implementation", "transport", "ranks", "bytes", "median_us",
          "ratio_to_pt2pt"]


def size_text(n):
    for unit, div in (("MiB", MIB), ("KiB", 1024)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def load(runs):
    """{(prog, mpi, impl): {round: {(variant, bytes): (us, ratio)}}}, failures {(prog, mpi, impl): text}"""
    data, failed = {}, {}
    for path in sorted(glob.glob(os.path.join(runs, "*.csv")) + glob.glob(os.path.join(runs, "*.failed"))):
        prog, mpi, impl, rnd = os.path.basename(path).rsplit(".", 1)[0].split(".")
        if path.endswith(".failed"):
            err = open(path[:-len(".failed")] + ".err", errors="replace").read()
            lines = [l.strip() for l in err.splitlines()
                     if "MPI_ERR" in l or l.startswith("bench/hosts:")]
            why = lines[0] if lines else "failed (see hosts.tmp)"
            failed.setdefault((prog, mpi, impl), {}).setdefault(why, []).append(rnd)
            continue
        rows = {}
        with open(path) as f:
            for r in csv.DictReader(f, fieldnames=FIELDS):
                rows[(r["variant"], int(r["bytes"]))] = (float(r["median_us"]), float(r["ratio_to_pt2pt"]))
        ref = REF[prog]
        out = {}
        for (v, n), (us, ratio) in rows.items():
            if prog == "mpi3":
                if (ref, n) not in rows or v.startswith("c2c") or v.startswith("memcpy") or v.startswith("put-flush"):
                    continue
                ratio = us / rows[(ref, n)][0]
            out[(v.split("/")[0], n)] = (us, ratio)
        data.setdefault((prog, mpi, impl), {})[rnd] = out
    return data, failed


def medians(rounds, key):
    vals = [r[key] for r in rounds.values() if key in r]
    if not vals:
        return None
    return (statistics.median(v[0] for v in vals), statistics.median(v[1] for v in vals),
            min(v[1] for v in vals), max(v[1] for v in vals), len(vals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--load", default="?")
    ap.add_argument("--cores", default="?")
    a = ap.parse_args()
    data, failed = load(a.runs)
    sizes = sorted({n for rounds in data.values() for r in rounds.values() for (_, n) in r})
    mpis = sorted({m for (_, m, _) in list(data) + list(failed)})

    with open(os.path.join(a.out, "hosts.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "variant", "mpi", "implementation", "bytes", "median_us",
                    "ratio", "ratio_min", "ratio_max", "runs"])
        for (prog, mpi, impl), rounds in sorted(data.items()):
            for v in (GHOST if prog == "ghost" else MPI3):
                for n in sizes:
                    m = medians(rounds, (v, n))
                    if m:
                        w.writerow([prog, v, mpi, impl, n, f"{m[0]:.3f}", f"{m[1]:.4f}",
                                    f"{m[2]:.4f}", f"{m[3]:.4f}", m[4]])

    md = ["# Across two hosts over TCP (bench/hosts)", "",
          "One rank on each of two hosts made by scripts/hosts (network namespaces on one bridge, "
          "veth links: every message crosses the kernel's TCP stack), Open MPI's btl tcp between "
          "them. Each cell: the median over the rounds of the time per step in µs, and in brackets "
          "the median over the rounds of the ratio to the reference measured in the same run "
          "(ghost: that MPI's Isend/Irecv exchange; mpi3: an MPI_Send of n bytes and an empty "
          "answer, the ping-pong).", "",
          f"{a.rounds} rounds; {a.cores} cores shared with other jobs, load average "
          f"at the end {a.load} (timings are noisy: compare within a column).", ""]
    for mpi in mpis:
        for prog, names in (("ghost", GHOST), ("mpi3", MPI3)):
            md.append(f"## {prog} ({mpi})")
            md.append("")
            for (p, m, impl), whys in sorted(failed.items()):
                if p == prog and m == mpi:
                    for why, rnds in whys.items():
                        md.append(f"* {impl}: **failed** in {len(rnds)} run(s) "
                                  f"({', '.join(sorted(rnds))}), left out: `{why}`")
            md.append("")
            cols = [(impl, s) for impl in ("native", "flexrma") for s in sizes
                    if (prog, mpi, impl) in data]
            if not cols:
                continue
            md.append("| variant | " + " | ".join(f"{impl} {size_text(s)}" for impl, s in cols) + " |")
            md.append("|---|" + "---|" * len(cols))
            for v in names:
                cells = []
                for impl, s in cols:
                    m = medians(data[(prog, mpi, impl)], (v, s))
                    cells.append("-" if m is None else f"{m[0]:.1f} ({m[1]:.2f})")
                if any(c != "-" for c in cells):
                    md.append(f"| {v} | " + " | ".join(cells) + " |")
            md.append("")
        md.append(f"## The issue's targets ({mpi}, flexrma, same-run ratios)")
        md.append("")
        md.append("| target | bound | 8 B: median (range over rounds) | met | 1 MiB (bound 1.1) | met |")
        md.append("|---|---|---|---|---|---|")
        for prog, v, n, bound, what in TARGETS:
            rounds = data.get((prog, mpi, "flexrma"), {})
            m, big = medians(rounds, (v, n)), medians(rounds, (v, MIB))
            cell = "-" if m is None else f"{m[1]:.2f} ({m[2]:.2f}-{m[3]:.2f})"
            met = "-" if m is None else ("yes" if m[1] <= bound else "**no**")
            bcell = "-" if big is None else f"{big[1]:.2f} ({big[2]:.2f}-{big[3]:.2f})"
            bmet = "-" if big is None else ("yes" if big[1] <= 1.1 else "**no**")
            md.append(f"| {what} | {bound} | {cell} | {met} | {bcell} | {bmet} |")
        md.append("")
    md += ["## Why the missed targets are missed", "",
           "* **lock, 8 B**: on the 2-rank ring both directions lead to the same neighbour, so a "
           "step is two lock epochs in a row, and `MPI_Win_unlock` may return only once the put "
           "is complete at the target: a round trip each, 4 crossings against the Isend/Irecv "
           "exchange's 1 (both directions side by side). Each epoch already costs the design "
           "minimum, one message each way (docs/architecture.md, \"Network crossings per "
           "epoch\"; tests/mpi/t_crossings.c), so the floor of this ratio is about 4, not 1.1; "
           "`lock_notify` adds the zero-byte messages. Natively (osc pt2pt) the same step costs "
           "several times flexrma's.",
           "* **MPI_Fetch_and_op + flush, 8 B**: 2 crossings, like the ping-pong, but 3 messages: "
           "the operation with the flush's acknowledgement request, then the old value (a message "
           "of its own, received into the origin's buffer) beside the acknowledgement; and the "
           "target serves it from inside its MPI_Barrier (flexrma's hooked wait: a pass every few "
           "turns of the library's test), where the ping-pong's target is in MPI_Recv. Folding "
           "the value into the acknowledgement is what is left.",
           "* **1 MiB**: `lock` is within the spread of the rounds on this machine (the range "
           "column): every variant moves each block in one message of its own, as the Isend/Irecv "
           "exchange. `lock_notify` was above 1.0 in every round of the run recorded here, which "
           "the zero-byte messages it adds do not explain; not examined further.",
           ""]
    with open(os.path.join(a.out, "hosts.md"), "w") as f:
        f.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
