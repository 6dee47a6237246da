#!/usr/bin/env python3
"""report.py - turn the rows of bench/run's program runs into bench/results/.

Reads every RUNS/*.csv (rows printed by the benchmark programs, one file per run) and writes, per
program, OUT/NAME.csv (one row per measurement: the median over the runs of the per-run medians
and ratios), OUT/NAME.md (tables laid out like the seed papers') and OUT/NAME.png (plots, when
matplotlib is there), then OUT/summary.md with the targets, which it also prints.

Only the standard library is needed, except for the plots (python3-matplotlib)."""

import argparse
import csv
import datetime
import glob
import os
import statistics
import subprocess
import sys
from collections import defaultdict

FIELDS = ["program", "variant", "implementation", "transport", "ranks", "bytes", "median_us",
          "ratio_to_pt2pt"]
PROGRAMS = ["ghost", "syncov", "exchange", "bandwidth", "notify"]
# The three ways each program runs, in table order: (implementation, transport) -> label.
IMPLS = [("native", "-"), ("flexrma", "default"), ("flexrma", "am")]
LABEL = {("native", "-"): "native", ("flexrma", "default"): "flexrma",
         ("flexrma", "am"): "flexrma am"}
STYLE = {("native", "-"): "-", ("flexrma", "default"): "--", ("flexrma", "am"): ":"}


def size_text(n):
    """8 -> '8', 1024 -> '1K', 1048576 -> '1M' (the seeds' notation)."""
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def num(x, digits=2):
    if x is None:
        return "–"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------- data

class Results:
    """Medians over runs, looked up by (program, variant, impl, transport, ranks, bytes)."""

    def __init__(self, runs_dir):
        times, ratios = defaultdict(list), defaultdict(list)
        self.run_ratio = defaultdict(dict)  # key -> {run file: that run's ratio}
        for path in sorted(glob.glob(os.path.join(runs_dir, "*.csv"))):
            with open(path, newline="") as f:
                for row in csv.reader(f):
                    if len(row) != len(FIELDS):
                        continue  # not a result row (a stray message on stdout)
                    r = dict(zip(FIELDS, row))
                    try:
                        key = (r["program"], r["variant"], r["implementation"], r["transport"],
                               int(r["ranks"]), int(r["bytes"]))
                        times[key].append(float(r["median_us"]))
                        if r["ratio_to_pt2pt"]:
                            ratios[key].append(float(r["ratio_to_pt2pt"]))
                            self.run_ratio[key][path] = ratios[key][-1]
                    except ValueError:
                        continue
        self.order = {}  # (program, variant name before any '/') -> first appearance
        for k in times:
            self.order.setdefault((k[0], k[1].split("/")[0]), len(self.order))
        self.time = {k: statistics.median(v) for k, v in times.items()}
        self.ratio = {k: statistics.median(v) for k, v in ratios.items()}

    def variant_order(self, program, names):
        """names (variant names before any '/') in the order the program prints them."""
        return sorted(names, key=lambda n: self.order.get((program, n), 1 << 30))

    def keys(self, program):
        return sorted(k for k in self.time if k[0] == program)

    def t(self, program, variant, impl, ranks, size):
        return self.time.get((program, variant) + impl + (ranks, size))

    def r(self, program, variant, impl, ranks, size):
        return self.ratio.get((program, variant) + impl + (ranks, size))

    def values(self, program, i):
        """The distinct values of key field i for a program, sorted."""
        return sorted({k[i] for k in self.keys(program)})

    def write_csv(self, program, path):
        order = {v: n for n, v in enumerate(IMPLS)}
        keys = sorted(self.keys(program), key=lambda k: (k[4], k[1].split("/")[1:], k[5],
                                                       order.get(k[2:4], 9),
                                                       self.order[(k[0], k[1].split("/")[0])]))
        with open(path, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(FIELDS)
            for k in keys:
                ratio = self.ratio.get(k)
                w.writerow(list(k) + [f"{self.time[k]:.3f}",
                                      "" if ratio is None else f"{ratio:.4f}"])


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|:---|" + "|".join("---:" for _ in header[1:]) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def present_impls(res, program):
    found = {k[2:4] for k in res.keys(program)}
    return [i for i in IMPLS if i in found]


# ---------------------------------------------------------------- per program

# ghost's variants that use flexrma's extensions (flexrma.h): no native rows.
GHOST_EXTENSIONS = ["counter", "iput", "put_signal"]


def md_ghost(res, runs_note):
    p = "ghost"
    out = ["# Ghost-area exchange (seed 001, figure 1, tables 1 and 2)\n\n",
           "Each process puts one block into the ghost area of each neighbour: a ring "
           "(2 neighbours; with 2 ranks both are the same process) and a 2-D periodic grid "
           "(4 neighbours, where the rank count allows). Ratio = time with one-sided "
           "communication / time with Isend/Irecv, measured in the same run, under the same "
           "library (the smaller, the better; flexrma's Isend/Irecv passes through its "
           "progress hooks). lock is seed 001's passive-target version: lock, put, unlock for "
           "each neighbour, nothing else (the target is not told when its ghosts are "
           "complete); lock_notify adds what a program that reads its ghosts every step needs: "
           "a zero-byte message each way with every neighbour and a lock/unlock of the own "
           "window. flexrma only "
           "(its extensions, flexrma.h): counter (a sync-ops request per neighbour around the "
           "puts, a sync-object request waiting for every neighbour's bump), iput (pscw with "
           "MPI_Iput, the requests waited for before MPI_Win_complete), put_signal "
           "(MPIX_Put_signal to each neighbour, a sync-object request waiting for the bumps). " +
           runs_note + "\n"]
    impls = present_impls(res, p)
    variants = ["fence", "pscw", "lock", "lock_notify"] + GHOST_EXTENSIONS
    for topo in ("ring", "grid"):
        for ranks in res.values(p, 4):
            sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and
                            k[1].endswith("/" + topo)})
            if not sizes:
                continue

            def columns(names):
                """(impl, variant) pairs with data: the extensions exist under flexrma only."""
                return [(i, v) for i in impls for v in names
                        if any(res.t(p, f"{v}/{topo}", i, ranks, s) is not None for s in sizes)]
            cols = columns(variants)
            head = ["Size (bytes)"] + [f"{LABEL[i]} {v}" for i, v in cols]
            rows = [[size_text(s)] + [num(res.r(p, f"{v}/{topo}", i, ranks, s))
                                      for i, v in cols] for s in sizes]
            out.append(f"\n## {topo}, {ranks} ranks: ratio one-sided / Isend-Irecv\n\n")
            out.append(table(head, rows))
            cols = columns(["isend"] + variants)
            head = ["Size (bytes)"] + [f"{LABEL[i]} {v}" for i, v in cols]
            rows = [[size_text(s)] + [num(res.t(p, f"{v}/{topo}", i, ranks, s))
                                      for i, v in cols] for s in sizes]
            out.append(f"\n## {topo}, {ranks} ranks: time per exchange (µs)\n\n")
            out.append(table(head, rows))
    return "".join(out)


def md_syncov(res, runs_note):
    p = "syncov"
    out = ["# Synchronization overhead (seed 000, table 1)\n\n",
           "Time (µs) to open and close one empty epoch: fence (MPI_MODE_NOPRECEDE, then "
           "MPI_MODE_NOSUCCEED), dedicated (post/start/complete/wait) and lock (each target "
           "locked and unlocked exclusively, one after the other), with 1 and p neighbours. "
           "sendrecv0 is the point-to-point equivalent (a zero-byte MPI_Sendrecv with each "
           "neighbour), the reference of the ratio column in syncov.csv. Windows in "
           "MPI_Alloc_mem memory (the seed's \"global\") and malloc memory (\"local\"). " +
           runs_note + "\n"]
    cols = [("fence", "Fence"), ("ded", "Ded"), ("lock", "Lock"), ("sendrecv0", "Sendrecv0")]
    for impl in present_impls(res, p):
        head = ["Window", "p"] + [f"{c}-{n}" for _, c in cols for n in ("1", "p")]
        rows = []
        for mem in ("alloc_mem", "malloc"):
            for ranks in res.values(p, 4):
                cells = [num(res.t(p, f"{v}/n={n}/{mem}", impl, ranks, 0))
                         for v, _ in cols for n in ("1", "p")]
                if any(c != "–" for c in cells):
                    rows.append([mem, str(ranks)] + cells)
        out.append(f"\n## {LABEL[impl]}\n\n")
        out.append(table(head, rows))
    return "".join(out)


EXCHANGE_COLS = [("put-fence", "Put-Fence"), ("get-fence", "Get-Fence"), ("put-ded", "Put-Ded"),
                 ("get-ded", "Get-Ded"), ("put-lock", "Put-Lock"), ("get-lock", "Get-Lock"),
                 ("sendrecv", "Sendrecv")]


def md_exchange(res, runs_note):
    p = "exchange"
    out = ["# Exchange test (seed 000, tables 2 and 3)\n\n",
           "Wall-clock time (µs) of one exchange: with n neighbours, process i supplies a "
           "block to (i + j) mod p and requests one from (i - j) mod p, j = 1..n. Windows in "
           "MPI_Alloc_mem memory (upper half, the seed's \"global\") and in malloc memory "
           "(lower half, \"local\"). Put-Lock, as in the seed, times the origin only. " +
           runs_note + "\n"]
    for ranks in res.values(p, 4):
        for n in ("1", "p"):
            for impl in present_impls(res, p):
                rows = []
                for mem in ("alloc_mem", "malloc"):
                    sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and
                                    k[1].endswith(f"/n={n}/{mem}")})
                    for s in sizes:
                        rows.append([mem, size_text(s)] +
                                    [num(res.t(p, f"{v}/n={n}/{mem}", impl, ranks, s))
                                     for v, _ in EXCHANGE_COLS])
                if rows:
                    nbrs = "one neighbour" if n == "1" else f"{ranks} neighbours"
                    out.append(f"\n## {ranks} processes, {nbrs} each: {LABEL[impl]}\n\n")
                    out.append(table(["Window", "Blocksize"] + [c for _, c in EXCHANGE_COLS],
                                     rows))
    return "".join(out)


def mbs(res, p, v, impl, ranks, s):
    t = res.t(p, v, impl, ranks, s)
    return None if t is None or t <= 0 else s / t  # bytes per µs = MB/s


def md_bandwidth(res, runs_note):
    p = "bandwidth"
    out = ["# Put bandwidth against memcpy\n\n",
           "Rank 0 moves K blocks per step to rank 1: K puts in one exclusive lock epoch "
           "(put-lock) or one fence epoch (put-fence), K messages (send), or K memcpy calls "
           "inside rank 0 (memcpy, what a put through shared memory can at best approach). "
           "MB/s = 10^6 bytes per second. " + runs_note + "\n"]
    variants = ["memcpy", "send", "put-lock", "put-fence"]
    for impl in present_impls(res, p):
        for ranks in res.values(p, 4):
            sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks})
            rows = []
            for s in sizes:
                bw = {v: mbs(res, p, v, impl, ranks, s) for v in variants}
                pct = [None if bw[v] is None or not bw["memcpy"] else 100 * bw[v] / bw["memcpy"]
                       for v in ("put-lock", "put-fence")]
                rows.append([size_text(s)] + [num(bw[v], 0) for v in variants] +
                            [f"{x:.0f}%" if x is not None else "–" for x in pct])
            out.append(f"\n## {LABEL[impl]}, {ranks} ranks (MB/s)\n\n")
            out.append(table(["Size (bytes)"] + variants + ["put-lock/memcpy", "put-fence/memcpy"],
                             rows))
    return "".join(out)


NOTIFY_VARIANTS = ["pingpong", "lock-flag", "flush-get", "flush-sync"]


def md_notify(res, runs_note):
    p = "notify"
    out = ["# Notification latency\n\n",
           "Half a round trip (µs) of a ping-pong in which each side puts 8 bytes into the "
           "other's window and then notifies it. pingpong: MPI_Send/MPI_Recv (the reference); "
           "lock-flag: lock, put, unlock, then lock, put a flag, unlock, the peer polling under "
           "a lock of its own window; flush-get and flush-sync: the MPI-3 pattern (put, "
           "MPI_Win_flush, put a flag, MPI_Win_flush; the peer polls with MPI_Get or a load "
           "after MPI_Win_sync), native only, since flexrma's windows reject MPI-3 calls (–). "
           "The counter ping-pong comes with the sync counters. " + runs_note + "\n"]
    impls = present_impls(res, p)
    for ranks in res.values(p, 4):
        head = ["Variant"] + [f"{LABEL[i]} µs" for i in impls] + [f"{LABEL[i]} ratio"
                                                                   for i in impls]
        rows = [[v] + [num(res.t(p, v, i, ranks, 8)) for i in impls] +
                [num(res.r(p, v, i, ranks, 8)) for i in impls] for v in NOTIFY_VARIANTS]
        out.append(f"\n## {ranks} ranks\n\n")
        out.append(table(head, rows))
    return "".join(out)


MARKDOWN = {"ghost": md_ghost, "syncov": md_syncov, "exchange": md_exchange,
            "bandwidth": md_bandwidth, "notify": md_notify}


# ---------------------------------------------------------------- plots

def plot(res, program, path):
    """Log-log, one colour per variant, one line style per implementation (one panel per rank
    count and configuration); bars on a log axis for the programs without a size axis."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.ticker import FuncFormatter
    except ImportError:
        return False
    keys = res.keys(program)
    impls = present_impls(res, program)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    bars = program in ("syncov", "notify")
    if bars:  # one panel per rank count
        panels = sorted({(k[4], "") for k in keys})
    else:  # one per rank count and configuration (the variant's part after its first '/')
        panels = sorted({(k[4], "/".join(k[1].split("/")[1:])) for k in keys})
    names = res.variant_order(program, {k[1].split("/")[0] for k in keys})
    ncol = min(2, len(panels))
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7 * ncol, 4.2 * nrow + 0.8), squeeze=False)
    for ax, (ranks, conf) in zip(axes.flat, panels):
        if bars:
            cats = sorted({k[1] for k in keys if k[4] == ranks},
                          key=lambda v: (v.split("/")[1:], names.index(v.split("/")[0])))
            width = 0.8 / len(impls)
            for j, impl in enumerate(impls):
                ys = [res.t(program, c, impl, ranks, keys[0][5]) or 0 for c in cats]
                ax.bar([x + j * width for x in range(len(cats))], ys, width,
                       color=colors[j % len(colors)])
            ax.set_xticks([x + width * (len(impls) - 1) / 2 for x in range(len(cats))])
            ax.set_xticklabels(cats, rotation=60, ha="right", fontsize=7)
            ax.set_ylabel("µs" if program == "syncov" else "µs (half round trip)")
        else:
            for j, name in enumerate(names):
                v = name + ("/" + conf if conf else "")
                for impl in impls:
                    pts = sorted((k[5], res.time[k]) for k in keys
                                 if k[1] == v and k[4] == ranks and k[2:4] == impl)
                    if pts:
                        ax.plot([x for x, _ in pts],
                                [x / t if program == "bandwidth" else t for x, t in pts],
                                STYLE[impl], marker="o", ms=3, color=colors[j % len(colors)])
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_text(int(x))))
            ax.set_xlabel("bytes")
            ax.set_ylabel("MB/s" if program == "bandwidth" else "µs")
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(f"{program}, {ranks} ranks" + (f", {conf}" if conf else ""), fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if bars:
        handles = [plt.Rectangle((0, 0), 1, 1, color=colors[j % len(colors)])
                   for j in range(len(impls))]
        labels = [LABEL[i] for i in impls]
    else:
        handles = [Line2D([], [], color=colors[j % len(colors)], marker="o", ms=3)
                   for j in range(len(names))]
        handles += [Line2D([], [], color="gray", linestyle=STYLE[i]) for i in impls]
        labels = names + [LABEL[i] for i in impls]
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.06 if nrow == 1 else 0.04, 1, 1))
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- targets

def ghost_keys(res, variant, impl, lo, hi):
    """The ghost ring rows at 2 ranks of a variant and implementation, sizes in [lo, hi]."""
    return [k for k in res.time if k[0] == "ghost" and k[1] == variant + "/ring" and
            k[2:4] == impl and k[4] == 2 and lo <= k[5] <= hi]


def worst_ratio(res, variant, impl, lo, hi):
    """The largest (worst) ratio over the sizes in [lo, hi]: the judged value."""
    vals = [res.ratio[k] for k in ghost_keys(res, variant, impl, lo, hi) if k in res.ratio]
    return max(vals) if vals else None


def worst_ratio_spread(res, variant, impl, lo, hi):
    """The same, run by run: (lowest, highest) over the runs, to show the noise."""
    per_run = defaultdict(list)
    for k in ghost_keys(res, variant, impl, lo, hi):
        for run, x in res.run_ratio.get(k, {}).items():
            per_run[run].append(x)
    worst = [max(v) for v in per_run.values()]
    return (min(worst), max(worst)) if worst else None


def versus_native(res, variant, impl, lo, hi):
    """Worst over the sizes of: this one-sided time / the native Isend-Irecv time (medians of
    the runs made one after the other): flexrma against the point-to-point a user has."""
    vals = []
    for k in ghost_keys(res, variant, impl, lo, hi):
        ref = res.t("ghost", "isend/ring", IMPLS[0], 2, k[5])
        if ref:
            vals.append(res.time[k] / ref)
    return max(vals) if vals else None


def put_share(res, variant, impl, size):
    """Put bandwidth at size as a fraction of memcpy's in the same runs (2 ranks)."""
    put = res.t("bandwidth", variant, impl, 2, size)
    mem = res.t("bandwidth", "memcpy", impl, 2, size)
    return None if put is None or mem is None or put <= 0 else mem / put


def targets(res):
    """Rows: (what, bound, {impl: value}, judged impl, test, format, ghost spec or None). The
    verdict is on flexrma's default transport, except for the rows about FLEXRMA_TRANSPORT=am."""
    rows = []
    ranges = [("8 B–1 KiB", 8, 1024, 1.0), ("16 KiB–256 KiB", 16384, 262144, 0.8),
              ("1 MiB", 1 << 20, 1 << 20, 0.6)]
    for text, lo, hi, bound in ranges:
        for v in ("fence", "pscw", "lock"):
            rows.append((f"ghost {v} / Isend-Irecv, {text}", f"≤ {bound}",
                         {i: worst_ratio(res, v, i, lo, hi) for i in IMPLS},
                         IMPLS[1], lambda x, b=bound: x <= b, num, (v, lo, hi)))
    rows.append(("ghost counter / Isend-Irecv, 8 B (counter-synchronized exchange)", "≤ 0.6",
                 {i: worst_ratio(res, "counter", i, 8, 8) for i in IMPLS}, IMPLS[1],
                 lambda x: x <= 0.6, num, ("counter", 8, 8)))
    rows.append(("ghost counter / Isend-Irecv, 8 B, FLEXRMA_TRANSPORT=am", "≤ 1.2",
                 {i: worst_ratio(res, "counter", i, 8, 8) for i in IMPLS}, IMPLS[2],
                 lambda x: x <= 1.2, num, ("counter", 8, 8)))
    for v in ("fence", "pscw"):
        rows.append((f"ghost {v} / Isend-Irecv, 8 B, FLEXRMA_TRANSPORT=am", "≤ 2.0",
                     {i: worst_ratio(res, v, i, 8, 8) for i in IMPLS}, IMPLS[2],
                     lambda x: x <= 2.0, num, (v, 8, 8)))
    pct = lambda x: "–" if x is None else f"{100 * x:.0f}%"
    for v in ("put-lock", "put-fence"):
        rows.append((f"{v} bandwidth / memcpy bandwidth, 1 MiB", "≥ 85%",
                     {i: put_share(res, v, i, 1 << 20) for i in IMPLS}, IMPLS[1],
                     lambda x: x >= 0.85, pct, None))
    return rows


def summary(res):
    head = ["Target (2 ranks, one node, same run)", "bound", "native", "flexrma", "flexrma am",
            "met?", "judged: runs' range", "judged / native Isend-Irecv"]
    rows = []
    met = judged = 0
    for what, bound, vals, judge, test, fmt, ghost in targets(res):
        if vals is None:
            rows.append([what, bound, "n/a", "n/a", "n/a", "n/a (later issue)", "", ""])
            continue
        cells = [fmt(vals[i]) for i in IMPLS]
        x = vals[judge]
        if x is None:
            verdict = "no data"
        else:
            judged += 1
            ok = test(x)
            met += ok
            verdict = ("met" if ok else "NOT met") + f" ({LABEL[judge]})"
        spread = cross = ""
        if ghost:
            r = worst_ratio_spread(res, ghost[0], judge, ghost[1], ghost[2])
            spread = f"{num(r[0])}–{num(r[1])}" if r else ""
            cross = num(versus_native(res, ghost[0], judge, ghost[1], ghost[2]))
        rows.append([what, bound] + cells + [verdict, spread, cross])
    return table(head, rows), met, judged


def reference_note(res):
    """The Isend-Irecv reference itself, at 8 B: flexrma's passes through its progress hooks,
    and when it is slow, the ratios above flatter flexrma."""
    cells = [f"{LABEL[i]} {num(res.t('ghost', 'isend/ring', i, 2, 8))} µs" for i in IMPLS]
    return ("The ratios' reference, ghost Isend/Irecv at 8 B, 2 ranks: " + ", ".join(cells) +
            ". Each ratio divides by the reference of its own run; a slow reference (flexrma "
            "waits with sched_yield and, on a loaded machine, its two ranks may end up sharing "
            "a core) makes a ratio look better than it is: the last column divides by the "
            "native reference instead.\n")


def machine():
    def run(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
    lscpu = {}
    for line in run(["lscpu"]).splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            lscpu[k.strip()] = v.strip()
    cpu = lscpu.get("Model name", "?")
    cores = lscpu.get("CPU(s)", "?")
    extra = ", ".join(f"{k} {lscpu[k]}" for k in ("L2 cache", "L3 cache", "Hypervisor vendor")
                      if k in lscpu)
    mpi = (run(["mpirun", "--version"]).splitlines() or ["?"])[0]
    load = ""
    try:
        load = open("/proc/loadavg").read().split()[0]
    except OSError:
        pass
    return [f"CPU: {cpu}, {cores} CPUs" + (f", {extra}" if extra else ""),
            f"System: {run(['uname', '-srm']).strip()}",
            f"MPI: {mpi}",
            f"Load average (1 min) at the end: {load}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="directory of per-run CSV files")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--mode", default="full")
    ap.add_argument("--rounds", default="?")
    ap.add_argument("--failed", default="0")
    ap.add_argument("--build-type", default="?")
    ap.add_argument("--env", default="none")
    ap.add_argument("--timing", default="")
    args = ap.parse_args()

    res = Results(args.runs)
    os.makedirs(args.out, exist_ok=True)
    runs_note = (f"Medians over {args.rounds} runs of each ({args.mode} run); each run's value "
                 "is the median over its repetitions of the slowest rank's time.")
    written, plots = [], 0
    for p in PROGRAMS:
        stale = [os.path.join(args.out, p + ext) for ext in (".csv", ".md", ".png")]
        if not res.keys(p):
            for f in stale:  # no fresh data: leave no result of an older run behind
                if os.path.exists(f):
                    os.remove(f)
            continue
        res.write_csv(p, stale[0])
        with open(stale[1], "w") as f:
            f.write(MARKDOWN[p](res, runs_note))
        if plot(res, p, stale[2]):
            plots += 1
        elif os.path.exists(stale[2]):
            os.remove(stale[2])
        written.append(p)

    tab, met, judged = summary(res)
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    files = "".join(f"* {p}.csv, {p}.md" + (f", {p}.png" if os.path.exists(
        os.path.join(args.out, p + ".png")) else "") + "\n" for p in written)
    parts = ["# flexrma benchmark summary",
             f"{args.mode} run of bench/run on {date}: {args.rounds} rounds (native, flexrma, "
             f"flexrma with FLEXRMA_TRANSPORT=am, one after the other), {args.failed} failed "
             f"runs. flexrma build: {args.build_type}; FLEXRMA_* settings: {args.env.strip()}. "
             f"Time: {args.timing}.",
             "Ratios are one-sided time / point-to-point time within the same run (the CSV's "
             "ratio_to_pt2pt), medians over the runs; a size range shows its worst size. "
             "flexrma's default transport carries synchronization through shared-memory packet "
             "rings between node peers and copies puts, gets and accumulates straight into or "
             "out of their windows (FLEXRMA_TRANSPORT=am: everything as messages, as between "
             "nodes). The lock rows time seed 001's passive-target ghost exchange (lock, put, unlock "
             "per neighbour); ghost's lock_notify variant, which adds a zero-byte message with "
             "each neighbour so that the target knows its ghosts are complete, is in ghost.md.",
             tab.rstrip(),
             f"{met} of {judged} judged targets met.",
             reference_note(res).rstrip(),
             "## Machine",
             "".join(f"* {m}\n" for m in machine()).rstrip(),
             "Shared and noisy: other jobs run on the same 2 cores, so single numbers move "
             "between runs; compare ratios from the same run.",
             "## Files",
             files.rstrip()]
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(tab + f"\n{met} of {judged} judged targets met "
          f"(results in {args.out}: {len(written)} programs, {plots} plots).\n\n" +
          reference_note(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
