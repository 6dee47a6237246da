#!/usr/bin/env python3
"""report.py - turn the rows of bench/run's program runs into bench/results/.

Reads every RUNS/*.csv (rows printed by the benchmark programs, one file per run) and writes, per
program, OUT/NAME.csv (one row per measurement: the median over the runs of the per-run medians
and ratios), OUT/NAME.md (tables laid out like the seed papers') and OUT/NAME.png (plots, when
matplotlib is there), then OUT/summary.md with the targets, which it also prints. Runs over
MPICH (named so by bench/run) give OUT/NAME.mpich.csv, .md and .png, and columns of their own
in the summary, judged on their own.

Only the standard library is needed, except for the plots (python3-matplotlib)."""

import argparse
import csv
import datetime
import glob
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

FIELDS = ["program", "variant", "implementation", "transport", "ranks", "bytes", "median_us",
          "ratio_to_pt2pt"]
PROGRAMS = ["ghost", "syncov", "exchange", "bandwidth", "notify", "mpi3", "hooks", "gakernel",
            "osu", "halosync"]
# The three ways each program runs, in table order: (implementation, transport) -> label.
IMPLS = [("native", "-"), ("flexrma", "default"), ("flexrma", "am")]
LABEL = {("native", "-"): "native", ("flexrma", "default"): "flexrma",
         ("flexrma", "am"): "flexrma am"}
STYLE = {("native", "-"): "-", ("flexrma", "default"): "--", ("flexrma", "am"): ":"}
# The MPIs bench/run runs over, in column order: a run's file name says which (NAME.npN.MPI.);
# MPICH's result files carry a suffix, Open MPI's keep the names they always had.
MPIS = ["openmpi", "mpich"]
MPI_NAME = {"openmpi": "Open MPI", "mpich": "MPICH"}
MPI_SUFFIX = {"openmpi": "", "mpich": ".mpich"}


def run_mpi(path):
    """The MPI of one run's file, from bench/run's name; Open MPI for names without one."""
    m = re.search(r"\.np\d+\.(" + "|".join(MPIS) + r")\.", os.path.basename(path))
    return m.group(1) if m else "openmpi"


def size_text(n):
    """8 -> '8', 1024 -> '1K', 1048576 -> '1M' (the seeds' notation)."""
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def bytes_text(n):
    """8 -> '8 B', 1024 -> '1 KiB', 1048576 -> '1 MiB' (the summary's notation)."""
    text = size_text(n)
    return text[:-1] + " " + text[-1] + "iB" if text[-1] in "KM" else text + " B"


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
    """Medians over the runs over one MPI, looked up by (program, variant, impl, transport,
    ranks, bytes)."""

    def __init__(self, runs_dir, mpi="openmpi"):
        times, ratios = defaultdict(list), defaultdict(list)
        self.run_ratio = defaultdict(dict)  # key -> {run file: that run's ratio}
        self.run_time = defaultdict(dict)  # key -> {round: that round's time}
        paths = [p for p in sorted(glob.glob(os.path.join(runs_dir, "*.csv"))) if run_mpi(p) == mpi]
        for path in paths:
            m = re.search(r"\.r(\d+)\.csv$", path)  # bench/run's NAME.rROUND.csv
            rnd = int(m.group(1)) if m else path
            with open(path, newline="") as f:
                for row in csv.reader(f):
                    if len(row) != len(FIELDS):
                        continue  # not a result row (a stray message on stdout)
                    r = dict(zip(FIELDS, row))
                    try:
                        key = (r["program"], r["variant"], r["implementation"], r["transport"],
                               int(r["ranks"]), int(r["bytes"]))
                        times[key].append(float(r["median_us"]))
                        self.run_time[key][rnd] = times[key][-1]
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
           "(MPIX_Put_signal to each neighbour, a sync-object request waiting for the bumps). "
           "Windows made by MPI_Win_create over MPI_Alloc_mem memory, and in the tables marked "
           "so by MPI_Win_allocate (ghost --flavor allocate; its Isend/Irecv reference moves "
           "the same bytes into the allocated memory). " + runs_note + "\n"]
    impls = present_impls(res, p)
    variants = ["fence", "pscw", "lock", "lock_notify"] + GHOST_EXTENSIONS
    for topo in ("ring", "grid", "ring/allocate", "grid/allocate"):
        title = topo.replace("/allocate", " (MPI_Win_allocate windows)")
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
            out.append(f"\n## {title}, {ranks} ranks: ratio one-sided / Isend-Irecv\n\n")
            out.append(table(head, rows))
            cols = columns(["isend"] + variants)
            head = ["Size (bytes)"] + [f"{LABEL[i]} {v}" for i, v in cols]
            rows = [[size_text(s)] + [num(res.t(p, f"{v}/{topo}", i, ranks, s))
                                      for i, v in cols] for s in sizes]
            out.append(f"\n## {title}, {ranks} ranks: time per exchange (µs)\n\n")
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
           "The window is rank 1's MPI_Alloc_mem memory under MPI_Win_create, or "
           "MPI_Win_allocate's where marked (bandwidth --flavor allocate). "
           "MB/s = 10^6 bytes per second. " + runs_note + "\n"]
    variants = ["memcpy", "send", "put-lock", "put-fence"]
    for suffix, title in (("", ""), ("/allocate", ", MPI_Win_allocate window")):
        for impl in present_impls(res, p):
            for ranks in res.values(p, 4):
                sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and k[2:4] == impl
                                and k[1] == "memcpy" + suffix})
                if not sizes:
                    continue
                rows = []
                for s in sizes:
                    bw = {v: mbs(res, p, v + suffix, impl, ranks, s) for v in variants}
                    pct = [None if bw[v] is None or not bw["memcpy"]
                           else 100 * bw[v] / bw["memcpy"] for v in ("put-lock", "put-fence")]
                    rows.append([size_text(s)] + [num(bw[v], 0) for v in variants] +
                                [f"{x:.0f}%" if x is not None else "–" for x in pct])
                out.append(f"\n## {LABEL[impl]}, {ranks} ranks{title} (MB/s)\n\n")
                out.append(table(["Size (bytes)"] + variants +
                                 ["put-lock/memcpy", "put-fence/memcpy"], rows))
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
           "after MPI_Win_sync). "
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


MPI3_FLAVORS = ["create", "malloc", "allocate", "dynamic", "shared"]
MPI3_LATENCY = ["put-lockall", "get-lockall", "put-lock", "get-lock"]
MPI3_ACTIVE = ["put-fence", "get-fence", "put-pscw", "get-pscw"]
MPI3_ATOMICS = ["fop", "cas", "gacc"]


def versus(res, p, v, impl, ranks, size, ref_impl=IMPLS[0]):
    """This implementation's time / the reference implementation's (native), medians."""
    t, ref = res.t(p, v, impl, ranks, size), res.t(p, v, ref_impl, ranks, size)
    return None if t is None or not ref else t / ref


def md_mpi3(res, runs_note):
    p = "mpi3"
    out = ["# MPI-3 one-sided latency and bandwidth\n\n",
           "Rank 0 the origin, rank 1 the target. put-/get-lockall: inside MPI_Win_lock_all, "
           "one MPI_Put or MPI_Get and MPI_Win_flush per step; put-/get-lock: the same inside "
           "MPI_Win_lock(MPI_LOCK_SHARED) held over the loop (osu_put_latency -s flush); "
           "put-/get-fence: one operation and MPI_Win_fence per step, every rank fencing; "
           "put-/get-pscw: rank 0 start, operation, complete, rank 1 post, wait per step; fop "
           "(MPI_Fetch_and_op, MPI_SUM), cas (MPI_Compare_and_swap), gacc "
           "(MPI_Get_accumulate, MPI_SUM): one 8-byte integer and a flush, inside lock_all. "
           "c2c: two processes ping-ponging a cache line in plain shared memory, one round "
           "trip (no MPI, so the same in every run: the machine's core-to-core round trip, "
           "measured interleaved with the others). put-flush: K puts of a block and one "
           "flush, against K memcpy calls of the same blocks in rank 0. Windows: create "
           "(MPI_Win_create over MPI_Alloc_mem memory), malloc (MPI_Win_create over "
           "posix_memalign'ed pages, as osu_put_latency -w create), allocate (MPI_Win_allocate), dynamic "
           "(MPI_Win_create_dynamic, MPI_Alloc_mem memory attached), shared "
           "(MPI_Win_allocate_shared). A cell – has no row: natively, cas on allocate windows "
           "is skipped (Open MPI 4.1's osc rdma kills the target on MPI_Compare_and_swap "
           "there). " + runs_note + "\n"]
    impls = present_impls(res, p)
    for flavor in MPI3_FLAVORS:
        for ranks in res.values(p, 4):
            sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and
                            k[1] == "c2c/" + flavor})
            if not sizes:
                continue
            names = ["c2c"] + MPI3_LATENCY + MPI3_ACTIVE
            head = ["Size (bytes)"] + [f"{LABEL[i]} {v}" for i in impls for v in names]
            rows = [[size_text(s)] + [num(res.t(p, f"{v}/{flavor}", i, ranks, s), 3)
                                      for i in impls for v in names] for s in sizes]
            out.append(f"\n## {flavor} windows, {ranks} ranks: latency per operation (µs)\n\n")
            out.append(table(head, rows))
            names = ["c2c"] + MPI3_LATENCY + MPI3_ACTIVE + MPI3_ATOMICS
            head = (["8 B"] + [f"{LABEL[i]} µs" for i in impls] +
                    [f"{LABEL[i]} round trips" for i in impls] +
                    [f"{LABEL[i]} / native" for i in impls[1:]])
            rows = [[v] + [num(res.t(p, f"{v}/{flavor}", i, ranks, 8), 3) for i in impls] +
                    [num(res.r(p, f"{v}/{flavor}", i, ranks, 8)) for i in impls] +
                    [num(versus(res, p, f"{v}/{flavor}", i, ranks, 8)) for i in impls[1:]]
                    for v in names]
            out.append(f"\n## {flavor} windows, {ranks} ranks: 8 B, in core-to-core round "
                       "trips (c2c) and against native\n\n")
            out.append(table(head, rows))
            bw_sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and
                               k[1] == "memcpy/" + flavor})
            if bw_sizes:
                head = ["Size (bytes)"] + [f"{LABEL[i]} {c}" for i in impls
                                           for c in ("memcpy", "put-flush", "put-flush/memcpy")]
                rows = []
                for sz in bw_sizes:
                    row = [size_text(sz)]
                    for i in impls:
                        m = mbs(res, p, "memcpy/" + flavor, i, ranks, sz)
                        f = mbs(res, p, "put-flush/" + flavor, i, ranks, sz)
                        row += [num(m, 0), num(f, 0),
                                "–" if m is None or f is None else f"{100 * f / m:.0f}%"]
                    rows.append(row)
                out.append(f"\n## {flavor} windows, {ranks} ranks: put bandwidth with flush "
                           "(MB/s)\n\n")
                out.append(table(head, rows))
    return "".join(out)


def md_hooks(res, runs_note):
    p = "hooks"
    out = ["# What flexrma costs a program's other MPI calls (issue 21, item 4)\n\n",
           "An application's own messages between 2 ranks, 8 bytes: exchange (MPI_Irecv, "
           "MPI_Isend, MPI_Waitall of both, on both ranks) and pingpong (MPI_Send, MPI_Recv; a "
           "step is a round trip), with no window (nowin) and with a window alive on which no "
           "RMA is in flight (win; win/allocate: an MPI_Win_allocate window). Each runs twice, "
           "interleaved repetition by repetition in the same process: through the program's "
           "MPI_Waitall/MPI_Recv (flexrma's hooks when flexrma is preloaded) and through the "
           "MPI library's own PMPI_Waitall/PMPI_Recv (the -lib variants, found past any "
           "interposer). Ratio = hooked time / the library's own time, same process, same run "
           "(natively both are the library's: about 1); flexrma / native = flexrma's hooked "
           "time / the native run's time of the same row, runs made one right after the "
           "other. " + runs_note + "\n"]
    impls = present_impls(res, p)
    for ranks in res.values(p, 4):
        for size in sorted({k[5] for k in res.keys(p) if k[4] == ranks}):
            names = sorted({k[1] for k in res.keys(p) if k[4] == ranks and k[5] == size},
                           key=lambda v: (v.split("/")[1:],
                                          res.order.get((p, v.split("/")[0]), 0)))
            head = (["Variant"] + [f"{LABEL[i]} µs" for i in impls] +
                    [f"{LABEL[i]} ratio" for i in impls] +
                    [f"{LABEL[i]} / native" for i in impls if i != IMPLS[0]])
            rows = []
            for v in names:
                nat = res.t(p, v, IMPLS[0], ranks, size)
                rows.append([v] + [num(res.t(p, v, i, ranks, size), 3) for i in impls] +
                            [num(res.r(p, v, i, ranks, size), 3) for i in impls] +
                            [num(None if not nat or res.t(p, v, i, ranks, size) is None
                                 else res.t(p, v, i, ranks, size) / nat, 3)
                             for i in impls if i != IMPLS[0]])
            out.append(f"\n## {ranks} ranks, {bytes_text(size)}\n\n")
            out.append(table(head, rows))
    return "".join(out)


def md_gakernel(res, runs_note):
    p = "gakernel"
    out = ["# Application kernel with Global Arrays' access pattern\n\n",
           "NWChem's SCF over GA/ARMCI-MPI, in plain MPI: each rank owns an N x N block of two "
           "2-D arrays of doubles (D, read; F, accumulated into) in windows opened with "
           "MPI_Win_lock_all once; tasks come from a counter on rank 0 (MPI_Fetch_and_op and "
           "a flush, as NXTVAL); a task gets three patches of D (8x8 to 64x64 doubles, "
           "through a vector datatype or row by row) from random owners, flushes, multiplies "
           "them (a small dgemm: the compute row is this product alone, per task), and "
           "accumulates the result into F at a random owner (MPI_SUM), flushes. After every "
           "phase of K tasks, temporary MPI_Win_allocate windows (1 KiB-1 MiB, lock_all, one "
           "put or accumulate, unlock_all, free) and a barrier, then a 40 MiB MPI_Alloc_mem "
           "block with 92 pages written and freed (ARMCI-MPI's local scratch, as NWChem's "
           "SCF takes it); /nowinchurn: the barrier alone, so the difference is their cost. "
           "allocate: the arrays in "
           "MPI_Win_allocate windows; create: MPI_Win_create over MPI_Alloc_mem memory. "
           "Every run checks F element by element, its total, the counters and the "
           "temporary windows' data. flexrma / native: flexrma's time over the native run's, "
           "runs made one right after the other. " + runs_note + "\n"]
    impls = present_impls(res, p)
    others = [i for i in impls if i != IMPLS[0]]
    for ranks in res.values(p, 4):
        for size in sorted({k[5] for k in res.keys(p) if k[4] == ranks}):
            names = sorted({k[1] for k in res.keys(p) if k[4] == ranks and k[5] == size},
                           key=lambda v: (res.order.get((p, v.split("/")[0]), 0),
                                          v.split("/")[1:]))
            for kind, title, scale in (
                    ("ga", "time per task of one rank (µs)", 1),
                    ("ga-run", "whole run (ms): the arrays' windows made, the tasks, the "
                     "windows freed", 1e-3),
                    ("compute", "the local product alone, per task (µs)", 1)):
                rows = []
                for v in names:
                    if v.split("/")[0] != kind:
                        continue
                    t = {i: res.t(p, v, i, ranks, size) for i in impls}
                    rows.append([v] + [num(None if t[i] is None else t[i] * scale)
                                       for i in impls] +
                                [num(versus(res, p, v, i, ranks, size)) for i in others])
                if rows:
                    out.append(f"\n## {ranks} ranks, {bytes_text(size)} blocks: {title}\n\n")
                    out.append(table(["Variant"] + [LABEL[i] for i in impls] +
                                     [f"{LABEL[i]} / native" for i in others], rows))
            # The temporary windows' cost: the task time with them minus without.
            rows = []
            for v in names:
                parts = v.split("/")
                if parts[0] != "ga" or parts[-1] == "nowinchurn":
                    continue
                cost = {}
                for i in impls:
                    a, b = res.t(p, v, i, ranks, size), res.t(p, v + "/nowinchurn", i, ranks,
                                                               size)
                    cost[i] = None if a is None or b is None else a - b
                rows.append([v] + [num(cost[i]) for i in impls] +
                            [num(None if cost[i] is None or not cost[IMPLS[0]]
                                 else cost[i] / cost[IMPLS[0]]) for i in others])
            if rows:
                out.append(f"\n## {ranks} ranks: the temporary windows' and scratch's share of a task (µs): "
                           "with them minus /nowinchurn\n\n")
                out.append(table(["Variant"] + [LABEL[i] for i in impls] +
                                 [f"{LABEL[i]} / native" for i in others], rows))
    return "".join(out)


# osu's cases: (test, its sync modes or IMB modes), in the program's order.
OSU_SYNCS = ["lock", "flush", "flush_local", "lock_all", "pscw", "fence"]
OSU_TESTS = [("osu_put_latency", OSU_SYNCS), ("osu_get_latency", OSU_SYNCS),
             ("osu_acc_latency", OSU_SYNCS), ("osu_get_acc_latency", OSU_SYNCS),
             ("osu_fop_latency", OSU_SYNCS), ("osu_cas_latency", OSU_SYNCS),
             ("osu_put_bw", OSU_SYNCS), ("osu_get_bw", OSU_SYNCS),
             ("osu_put_bibw", ["pscw", "fence"])]
OSU_BW_TESTS = ["osu_put_bw", "osu_get_bw", "osu_put_bibw"]
BOTH_MODES = ["non_aggregate", "aggregate"]
IMB_TESTS = [("Unidir_put", BOTH_MODES), ("Unidir_get", BOTH_MODES), ("Bidir_put", BOTH_MODES),
             ("Bidir_get", BOTH_MODES), ("Put_local", BOTH_MODES), ("Get_local", BOTH_MODES),
             ("One_put_all", ["aggregate"]), ("One_get_all", ["aggregate"]),
             ("All_put_all", ["aggregate"]), ("All_get_all", ["aggregate"]),
             ("Put_all_local", ["aggregate"]), ("Get_all_local", ["aggregate"]),
             ("Exchange_put", ["non_aggregate"]), ("Exchange_get", ["non_aggregate"]),
             ("Accumulate", BOTH_MODES), ("Get_accumulate", BOTH_MODES),
             ("Fetch_and_op", BOTH_MODES), ("Compare_and_swap", BOTH_MODES),
             ("Truly_passive_put", ["t_pure", "t_ovrl"])]
OSU_FLAVORS = [("malloc", "MPI_Win_create over posix_memalign'ed memory, OSU's -w create"),
               ("allocate", "MPI_Win_allocate, OSU's -w allocate"),
               ("create", "MPI_Win_create over MPI_Alloc_mem memory")]
# The reference of each table: the core-to-core round trip and one memcpy beside the latency
# tables, memcpy of the same 64 blocks beside the bandwidth tables, of the same M copies beside
# the aggregate ones.
OSU_REFS = {"bw": "memcpy-window", "aggregate": "memcpy-aggregate"}


def osu_cases():
    """(case name, test, mode) of every osu case, OSU's then IMB's."""
    return [(f"{t}/{m}", t, m) for tests in (OSU_TESTS, IMB_TESTS) for t, modes in tests
            for m in modes]


def osu_memcpy(test, mode):
    """The memcpy row of the same access pattern as a case."""
    if test in OSU_BW_TESTS:
        return OSU_REFS["bw"]
    return OSU_REFS["aggregate"] if mode == "aggregate" else "memcpy"


def osu_slower(res, impl, limit=1.0):
    """(case, flavor, size, flexrma / native) wherever impl's median is slower than native's."""
    out = []
    for case, _, _ in osu_cases():
        for flavor, _ in OSU_FLAVORS:
            v = f"{case}/{flavor}"
            for size in sorted({k[5] for k in res.keys("osu") if k[1] == v}):
                x = versus(res, "osu", v, impl, 2, size)
                if x is not None and x > limit:
                    out.append((case, flavor, size, x))
    return out


def osu_cells(res):
    """The (case, flavor, size) cells with a native time."""
    names = {f"{case}/{f}" for case, _, _ in osu_cases() for f, _ in OSU_FLAVORS}
    return len({k[1:2] + k[5:] for k in res.keys("osu") if k[1] in names and
                k[2:4] == IMPLS[0]})


def md_osu(res, runs_note):
    p = "osu"
    impls = present_impls(res, p)
    others = [i for i in impls if i != IMPLS[0]]
    flavors = [(f, text) for f, text in OSU_FLAVORS
               if any(k[1].endswith("/" + f) for k in res.keys(p))]
    out = ["# What users measure: the one-sided cases of the OSU micro-benchmarks and IMB-RMA\n\n",
           "Every one-sided case of OSU 7.x (osu_put_latency, osu_get_latency, osu_acc_latency, "
           "osu_get_acc_latency, osu_fop_latency, osu_cas_latency, osu_put_bw, osu_get_bw, "
           "osu_put_bibw, each in the sync modes OSU offers for it) and of IMB-RMA (its 2-rank "
           "cases, in its aggregate and non-aggregate modes), as the suites define them, "
           "written anew in bench/osu.c (its header says what each case does). 2 ranks; time "
           "per operation in µs as the suites count it (OSU's pscw and fence latencies: half a "
           "ping-pong step; bandwidth: per put of the window of 64, MB/s = bytes / that time; "
           "put_bibw: per put of both directions; IMB's aggregate: per operation of a batch "
           "closed by one flush). flexrma / native: flexrma's median time over the native "
           "MPI's from runs made one right after the other (below 1, flexrma is faster). c2c: "
           "the core-to-core round trip (two processes ping-ponging a cache line in plain "
           "shared memory); memcpy: the same access pattern as copies inside rank 0. "
           "Windows, sized as the suites size them (n bytes for OSU's latency tests, 64 n for "
           "its bandwidth tests, 4 MiB for IMB's cases; bench/README.md): " +
           "; ".join(f"{f}: {text}" for f, text in flavors) + ". A cell – has "
           "no row: natively on MPI_Win_allocate windows under Open MPI 4 the compare-and-"
           "swaps are skipped (its osc rdma kills the target). " + runs_note + "\n"]

    # Overview: every case at the smallest, a middle and the largest size.
    sizes_all = sorted({k[5] for k in res.keys(p) if k[5] >= 8})
    pick = sorted({s for s in (8, 1 << 16, 1 << 20) if s in sizes_all}) or sizes_all[:3]
    for flavor, text in flavors:
        head = ["Case"]
        for s in pick:
            head += [f"{bytes_text(s)} native", f"{bytes_text(s)} flexrma",
                     f"{bytes_text(s)} flexrma/native"]
        rows = []
        for case, test, mode in osu_cases():
            v = f"{case}/{flavor}"
            row = [case]
            for s in pick:
                size = 4 if test in ("Fetch_and_op", "Compare_and_swap") and s == 8 else s
                row += [num(res.t(p, v, IMPLS[0], 2, size), 3),
                        num(res.t(p, v, IMPLS[1], 2, size), 3),
                        num(versus(res, p, v, IMPLS[1], 2, size))]
            if any(c != "–" for c in row[1:]):
                rows.append(row)
        for ref in ("c2c", "memcpy"):
            rows.append([ref] + [c for s in pick for c in
                                 (num(res.t(p, f"{ref}/{flavor}", IMPLS[0], 2, s), 3),
                                  num(res.t(p, f"{ref}/{flavor}", IMPLS[1], 2, s), 3), "")])
        out.append(f"\n## Overview, {flavor} windows ({text}): µs per operation\n\n")
        out.append(table(head, rows))

    for impl in others:
        slow = osu_slower(res, impl)
        per_case = defaultdict(list)
        for case, flavor, size, x in slow:
            per_case[case].append(f"{flavor} {bytes_text(size)} {num(x)}")
        out.append(f"\n## Where {LABEL[impl]} is slower than native: {len(slow)} of "
                   f"{osu_cells(res)} cells (time {LABEL[impl]} / native)\n\n")
        out.append("".join(f"* {case}: {', '.join(cells)}\n" for case, cells in
                           per_case.items()) or "none\n")

    # One table per case: rows the window flavors and sizes.
    for case, test, mode in osu_cases():
        bw = test in OSU_BW_TESTS
        ref = osu_memcpy(test, mode)
        rows = []
        for flavor, _ in flavors:
            v = f"{case}/{flavor}"
            for size in sorted({k[5] for k in res.keys(p) if k[1] == v}):
                if bw:
                    cells = [num(mbs(res, p, v, i, 2, size)) for i in impls]
                else:
                    cells = [num(res.t(p, v, i, 2, size), 3) for i in impls]
                cells += [num(versus(res, p, v, i, 2, size)) for i in others]
                refsize = 8 if size == 4 else size  # the 4-byte atomics run beside 8 B
                if bw:
                    cells.append(num(mbs(res, p, f"{ref}/{flavor}", IMPLS[0], 2, refsize), 0))
                else:
                    cells += [num(res.t(p, f"c2c/{flavor}", IMPLS[0], 2, refsize), 3),
                              num(res.t(p, f"{ref}/{flavor}", IMPLS[0], 2, refsize), 3)]
                rows.append([flavor, size_text(size)] + cells)
        if not rows:
            continue
        unit = "MB/s" if bw else "µs"
        head = (["Window", "Size (bytes)"] + [f"{LABEL[i]} {unit}" for i in impls] +
                [f"{LABEL[i]} / native (time)" for i in others] +
                ([f"{ref} MB/s (native run)"] if bw else
                 ["c2c µs (native run)", f"{ref} µs (native run)"]))
        out.append(f"\n## {test}, {mode}\n\n")
        out.append(table(head, rows))
    return "".join(out)


HALOSYNC_VARIANTS = ["fence", "pscw", "lockall", "counter", "notify", "mpix"]
# Issue 34's bound on notify/halo at 8 B against Isend/Irecv: 1.0 on a node, 1.1 across hosts
# (bench/hosts-run passes --notify-bound 1.1).
HALOSYNC_NOTIFY_BOUND = [1.0]


def halosync_targets(res, p="halosync"):
    """Issue 34's targets on halosync's rows, judged on flexrma's default transport (the am
    rows beside): the Forum's notified exchange at 8 B against Isend/Irecv (ratio, same run),
    the counters against the Forum's notify (time over time, every size: the worst), and the
    Jacobi with the Forum's notify against fence (the same, per rank count). Time over time is
    taken within each run, both variants being rows of one run, and the median over the runs:
    this machine's speed changes from one run to the next (the core-to-core round trip 0.1 or
    0.4 us), and a ratio of the medians pitted one run's notify against another's counters
    (0.82 where the runs said 0.95-1.22)."""
    rows = []
    impls = [i for i in IMPLS[1:] if i in present_impls(res, p)]

    def over(a, b, ranks, kernel, impl):
        sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and k[1] == f"{a}/{kernel}"})
        vals = []
        for s in sizes:
            ta = res.run_time.get((p, f"{a}/{kernel}") + impl + (ranks, s), {})
            tb = res.run_time.get((p, f"{b}/{kernel}") + impl + (ranks, s), {})
            per_run = [ta[r] / tb[r] for r in ta if r in tb and tb[r] > 0]
            if per_run:
                vals.append((statistics.median(per_run), s))
        return vals

    for ranks in res.values(p, 4):
        for impl in impls:
            label = f"{ranks} ranks, {LABEL[impl]}"
            r, bound = res.r(p, "notify/halo", impl, ranks, 8), HALOSYNC_NOTIFY_BOUND[0]
            if r is not None:
                rows.append([f"notify/halo at 8 B / Isend-Irecv, {label}", f"≤ {bound}", num(r),
                             "met" if r <= bound else "NOT met"])
            v = over("notify", "counter", ranks, "halo", impl)
            if v:
                worst = max(v, key=lambda x: abs(x[0] - 1))
                rows.append([f"notify/halo / counter/halo, worst size ({size_text(worst[1])}), "
                             f"{label}", "0.9–1.1", num(worst[0]),
                             "met" if abs(worst[0] - 1) <= 0.1 else "NOT met"])
            v = over("notify", "fence", ranks, "jacobi", impl)
            if v:
                worst = max(v)
                rows.append([f"notify/jacobi / fence/jacobi, worst size ({size_text(worst[1])}), "
                             f"{label}", "≤ 1.0", num(worst[0]),
                             "met" if worst[0] <= 1.0 else "NOT met"])
    return rows


def md_halosync(res, runs_note):
    p = "halosync"
    out = ["# One code, every synchronization: halo exchange and Jacobi (issue 34)\n\n",
           "The same producer-consumer halo exchange (halo: each rank sends one block to each "
           "neighbour on a periodic chain) and the same 2-D Jacobi iteration (jacobi: 16 rows "
           "a rank, a row as wide as the halo, the 5-point stencil after each exchange of edge "
           "rows; its grid checksum is checked against Isend/Irecv's after every timed loop) "
           "under each synchronization: isend (Isend/Irecv, the ratios' reference), fence (one "
           "per step), pscw, lockall (MPI-3: put, flush, a zero-byte message, MPI_Win_sync), "
           "and flexrma only: counter (NEC's MPI_Sync counters), notify (the MPI Forum draft's "
           "MPI_Put_notify, polled with MPI_Win_notify_get_value), mpix (Open MPI's "
           "MPIX_Put_notify and MPIX_Win_wait_notify on an MPIX_Win_create_notify window). "
           "Ratio = time / Isend-Irecv time of the same run and library. Time per step (µs), "
           "the Jacobi's including its sweep. " + runs_note + "\n"]
    impls = present_impls(res, p)
    for kernel in ("halo", "jacobi"):
        for ranks in res.values(p, 4):
            sizes = sorted({k[5] for k in res.keys(p) if k[4] == ranks and
                            k[1].endswith("/" + kernel)})
            if not sizes:
                continue
            cols = [(i, v) for i in impls for v in ["isend"] + HALOSYNC_VARIANTS
                    if any(res.t(p, f"{v}/{kernel}", i, ranks, s) is not None for s in sizes)]
            for what, get in (("ratio to Isend-Irecv", res.r), ("time per step (µs)", res.t)):
                shown = [(i, v) for i, v in cols if what.startswith("time") or v != "isend"]
                head = ["Size (bytes)"] + [f"{LABEL[i]} {v}" for i, v in shown]
                rows = [[size_text(s)] + [num(get(p, f"{v}/{kernel}", i, ranks, s))
                                          for i, v in shown] for s in sizes]
                out.append(f"\n## {kernel}, {ranks} ranks: {what}\n\n")
                out.append(table(head, rows))
    rows = halosync_targets(res, p)
    if rows:
        out.append("\n## Issue 34's targets\n\n")
        out.append(table(["Target", "bound", "value", "verdict"], rows))
    return "".join(out)


MARKDOWN = {"ghost": md_ghost, "syncov": md_syncov, "exchange": md_exchange,
            "bandwidth": md_bandwidth, "notify": md_notify, "mpi3": md_mpi3, "hooks": md_hooks,
            "gakernel": md_gakernel, "osu": md_osu, "halosync": md_halosync}


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
    if program == "osu":
        return plot_osu(res, path, plt, Line2D, FuncFormatter)
    keys = res.keys(program)
    impls = present_impls(res, program)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    bars = program in ("syncov", "notify", "hooks", "gakernel")
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
            ax.set_ylabel("µs" if program in ("syncov", "gakernel") else "µs (half round trip)")
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


def plot_osu(res, path, plt, Line2D, FuncFormatter):
    """osu's OSU tests over the sizes: a panel per test and window flavor, a colour per sync
    mode, a line style per implementation; µs per operation, MB/s for the bandwidth tests."""
    p = "osu"
    impls = present_impls(res, p)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    panels = [(t, modes, f) for t, modes in OSU_TESTS for f, _ in OSU_FLAVORS
              if len({k[5] for k in res.keys(p) if k[1].startswith(t + "/") and
                      k[1].endswith("/" + f)}) > 1]
    if not panels:
        return False
    ncol = 2
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7 * ncol, 3.6 * nrow + 0.8), squeeze=False)
    for ax, (test, modes, flavor) in zip(axes.flat, panels):
        bw = test in OSU_BW_TESTS
        for j, mode in enumerate(modes):
            v = f"{test}/{mode}/{flavor}"
            for impl in impls:
                pts = sorted((k[5], res.time[k]) for k in res.keys(p)
                             if k[1] == v and k[2:4] == impl)
                if pts:
                    ax.plot([x for x, _ in pts], [x / t if bw else t for x, t in pts],
                            STYLE[impl], marker="o", ms=3, color=colors[OSU_SYNCS.index(mode)])
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_text(int(x))))
        ax.set_yscale("log")
        ax.set_xlabel("bytes")
        ax.set_ylabel("MB/s" if bw else "µs per operation")
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(f"{test}, {flavor} windows", fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    handles = [Line2D([], [], color=colors[j], marker="o", ms=3) for j in range(len(OSU_SYNCS))]
    handles += [Line2D([], [], color="gray", linestyle=STYLE[i]) for i in impls]
    labels = OSU_SYNCS + [LABEL[i] for i in impls]
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- targets

def ghost_keys(res, variant, impl, lo, hi, conf="ring"):
    """The ghost rows at 2 ranks of a variant, implementation and configuration ("ring", or
    "ring/allocate" on MPI_Win_allocate windows), sizes in [lo, hi]."""
    return [k for k in res.time if k[0] == "ghost" and k[1] == variant + "/" + conf and
            k[2:4] == impl and k[4] == 2 and lo <= k[5] <= hi]


def worst_ratio(res, variant, impl, lo, hi, conf="ring"):
    """The largest (worst) ratio over the sizes in [lo, hi]: the judged value."""
    vals = [res.ratio[k] for k in ghost_keys(res, variant, impl, lo, hi, conf) if k in res.ratio]
    return max(vals) if vals else None


def worst_ratio_spread(res, variant, impl, lo, hi, conf="ring"):
    """The same, run by run: (lowest, highest) over the runs, to show the noise."""
    per_run = defaultdict(list)
    for k in ghost_keys(res, variant, impl, lo, hi, conf):
        for run, x in res.run_ratio.get(k, {}).items():
            per_run[run].append(x)
    worst = [max(v) for v in per_run.values()]
    return (min(worst), max(worst)) if worst else None


def versus_native(res, variant, impl, lo, hi, conf="ring"):
    """Worst over the sizes of: this one-sided time / the native Isend-Irecv time (medians of
    the runs made one after the other): flexrma against the point-to-point a user has."""
    vals = []
    for k in ghost_keys(res, variant, impl, lo, hi, conf):
        ref = res.t("ghost", "isend/" + conf, IMPLS[0], 2, k[5])
        if ref:
            vals.append(res.time[k] / ref)
    return max(vals) if vals else None


def put_share(res, variant, impl, size, program="bandwidth", memcpy="memcpy"):
    """Put bandwidth at size as a fraction of memcpy's in the same runs (2 ranks)."""
    put = res.t(program, variant, impl, 2, size)
    mem = res.t(program, memcpy, impl, 2, size)
    return None if put is None or mem is None or put <= 0 else mem / put


def round_spread(res, program, variant, impl, size, ref_impl=IMPLS[0]):
    """Round by round, this implementation's time / the reference implementation's (the runs
    of one round are made one right after the other): (lowest, highest)."""
    mine = res.run_time.get((program, variant) + impl + (2, size), {})
    ref = res.run_time.get((program, variant) + ref_impl + (2, size), {})
    vals = [mine[r] / ref[r] for r in mine if r in ref and ref[r] > 0]
    return (min(vals), max(vals)) if vals else None


def per_run_over(res, variant, impl, ref):
    """mpi3's 8 B time of each run / ref: (lowest, highest)."""
    vals = [t / ref for t in res.run_time.get(("mpi3", variant) + impl + (2, 8), {}).values()]
    return (min(vals), max(vals)) if vals and ref else None


def pooled_c2c(res, flavor):
    """The core-to-core round trip at 8 B: the median over every run of the rounds, native and
    flexrma alike (c2c uses no MPI: the same program in every run). Pooled because a run whose
    two ranks end up sharing a core (a loaded machine) inflates its own c2c tenfold while
    flexrma's fetch-and-op, which needs no step of the target, stays fast: the ratio within
    that one run would flatter flexrma."""
    vals = [t for i in IMPLS
            for t in res.run_time.get(("mpi3", "c2c/" + flavor) + i + (2, 8), {}).values()]
    return statistics.median(vals) if vals else None


def range_text(r):
    return f"{num(r[0])}–{num(r[1])}" if r else ""


def target(what, bound, vals, judge, test, fmt=num, spread=None, cross=None, absent=None,
           anchor=None):
    """One row of the summary: vals maps each implementation to its value (None: no data),
    judged on judge's by test; spread (the judged value's range over runs) and cross (against
    the native point-to-point) are optional texts; absent says why there is no value. anchor
    (program, variant, lo, hi) names the operation whose time the judged implementation and the
    native one are compared on directly (versus_native_mpi)."""
    return {"what": what, "bound": bound, "vals": vals, "judge": judge, "test": test,
            "fmt": fmt, "spread": spread or "", "cross": cross or "", "absent": absent,
            "anchor": anchor}


def versus_native_mpi(res, anchor, impl):
    """impl's time / the native MPI's time of the same operation at 2 ranks, worst size in
    [lo, hi] (None where either has no row): below 1, flexrma is faster than the MPI's own
    one-sided implementation."""
    program, variant, lo, hi = anchor
    vals = [res.time[k] / res.time[n] for k in res.keys(program)
            if k[1] == variant and k[2:4] == impl and k[4] == 2 and lo <= k[5] <= hi
            for n in [(program, variant) + IMPLS[0] + (2, k[5])] if res.time.get(n)]
    return max(vals) if vals else None


def ghost_targets(res, conf, label):
    """The ghost targets on one configuration: "ring" (MPI_Win_create windows) or
    "ring/allocate"."""
    rows = []

    def ghost_row(what, bound, v, lo, hi, judge):
        return target(f"ghost {v} / Isend-Irecv, {what}{label}", f"≤ {bound}",
                      {i: worst_ratio(res, v, i, lo, hi, conf) for i in IMPLS}, judge,
                      lambda x, b=bound: x <= b,
                      spread=range_text(worst_ratio_spread(res, v, judge, lo, hi, conf)),
                      cross=num(versus_native(res, v, judge, lo, hi, conf)),
                      anchor=("ghost", f"{v}/{conf}", lo, hi))
    ranges = [("8 B–1 KiB", 8, 1024, 1.0), ("16 KiB–256 KiB", 16384, 262144, 0.8),
              ("1 MiB", 1 << 20, 1 << 20, 0.6)]
    for text, lo, hi, bound in ranges:
        for v in ("fence", "pscw", "lock"):
            rows.append(ghost_row(text, bound, v, lo, hi, IMPLS[1]))
    rows.append(ghost_row("8 B (counter-synchronized exchange)", 0.6, "counter", 8, 8, IMPLS[1]))
    rows.append(ghost_row("8 B, FLEXRMA_TRANSPORT=am", 1.2, "counter", 8, 8, IMPLS[2]))
    for v in ("fence", "pscw"):
        rows.append(ghost_row("8 B, FLEXRMA_TRANSPORT=am", 2.0, v, 8, 8, IMPLS[2]))
    return rows


def pct(x):
    return "–" if x is None else f"{100 * x:.0f}%"


def bandwidth_targets(res, suffix, label):
    return [target(f"{v} bandwidth / memcpy bandwidth, 1 MiB{label}", "≥ 85%",
                   {i: put_share(res, v + suffix, i, 1 << 20, memcpy="memcpy" + suffix)
                    for i in IMPLS}, IMPLS[1], lambda x: x >= 0.85, pct,
                   anchor=("bandwidth", v + suffix, 1 << 20, 1 << 20))
            for v in ("put-lock", "put-fence")]


# Why a native row may be missing (mpi3.c skips it rather than crash).
MPI3_NO_NATIVE = {"cas/allocate": "no native row: Open MPI 4.1's osc rdma kills the target on "
                                  "MPI_Compare_and_swap into MPI_Win_allocate memory"}


def mpi3_versus_native(res, v, flavor):
    """flexrma's 8 B time at most native Open MPI's (medians over the rounds; the range is
    round by round)."""
    name = f"{v}/{flavor}"
    vals = {i: versus(res, "mpi3", name, i, 2, 8) for i in IMPLS}
    absent = None
    if res.t("mpi3", name, IMPLS[0], 2, 8) is None and res.t("mpi3", name, IMPLS[1], 2, 8):
        absent = MPI3_NO_NATIVE.get(name, "no native row")
    cells = {i: (f"{num(vals[i])} ({num(res.t('mpi3', name, i, 2, 8), 3)} µs)"
                 if res.t("mpi3", name, i, 2, 8) is not None else "–") for i in IMPLS}
    row = target(f"mpi3 {v} 8 B, {flavor} windows: time / native time", "≤ 1.0", vals, IMPLS[1],
                 lambda x: x <= 1.0, spread=range_text(round_spread(res, "mpi3", name, IMPLS[1], 8)),
                 absent=absent, anchor=("mpi3", name, 8, 8))
    row["cells"] = cells
    return row


def mpi3_targets(res):
    rows = [mpi3_versus_native(res, v, "create") for v in MPI3_LATENCY + MPI3_ATOMICS]
    rows.append(target("mpi3 put-flush bandwidth / memcpy bandwidth, 1 MiB, create windows",
                       "≥ 85%", {i: put_share(res, "put-flush/create", i, 1 << 20, "mpi3",
                                              "memcpy/create") for i in IMPLS},
                       IMPLS[1], lambda x: x >= 0.85, pct,
                       anchor=("mpi3", "put-flush/create", 1 << 20, 1 << 20)))
    c2c = pooled_c2c(res, "create")
    rows.append(target("mpi3 fop 8 B / core-to-core round trip (c2c, median of every run's), "
                       "create windows", "≤ 3",
                       {i: None if c2c is None or res.t("mpi3", "fop/create", i, 2, 8) is None
                        else res.t("mpi3", "fop/create", i, 2, 8) / c2c for i in IMPLS},
                       IMPLS[1], lambda x: x <= 3,
                       spread=range_text(per_run_over(res, "fop/create", IMPLS[1], c2c))))
    rows += [mpi3_versus_native(res, v, "allocate")
             for v in ("put-lockall", "get-lockall", "fop", "cas")]
    return rows


def malloc_targets(res):
    """Issue 21: windows in ordinary memory (posix_memalign'ed pages under MPI_Win_create) as
    fast as any: 8 B in at most 0.3 µs and 1/5 of native's time, 1 MiB in at most 60% of it,
    put bandwidth at 1 MiB at least 85% of memcpy's."""
    rows = []
    for v in ("put-fence", "get-fence", "put-pscw", "get-pscw", "put-lock", "get-lock"):
        name = f"{v}/malloc"
        t = {i: res.t("mpi3", name, i, 2, 8) for i in IMPLS}
        row = target(f"mpi3 {v} 8 B, malloc windows: time / native time (and ≤ 0.3 µs)",
                     "≤ 0.2", {i: versus(res, "mpi3", name, i, 2, 8) for i in IMPLS}, IMPLS[1],
                     lambda x, tt=t[IMPLS[1]]: x <= 0.2 and tt is not None and tt <= 0.3,
                     spread=range_text(round_spread(res, "mpi3", name, IMPLS[1], 8)),
                     anchor=("mpi3", name, 8, 8))
        row["cells"] = {i: (f"{num(row['vals'][i])} ({num(t[i], 3)} µs)"
                            if t[i] is not None else "–") for i in IMPLS}
        rows.append(row)
    for v in ("put-lock", "get-lock"):
        name = f"{v}/malloc"
        rows.append(target(f"mpi3 {v} 1 MiB, malloc windows: time / native time", "≤ 0.6",
                           {i: versus(res, "mpi3", name, i, 2, 1 << 20) for i in IMPLS},
                           IMPLS[1], lambda x: x <= 0.6,
                           spread=range_text(round_spread(res, "mpi3", name, IMPLS[1], 1 << 20)),
                           anchor=("mpi3", name, 1 << 20, 1 << 20)))
    rows.append(target("mpi3 put-flush bandwidth / memcpy bandwidth, 1 MiB, malloc windows",
                       "≥ 85%", {i: put_share(res, "put-flush/malloc", i, 1 << 20, "mpi3",
                                              "memcpy/malloc") for i in IMPLS},
                       IMPLS[1], lambda x: x >= 0.85, pct,
                       anchor=("mpi3", "put-flush/malloc", 1 << 20, 1 << 20)))
    return rows


def hooks_targets(res):
    """An application's 8 B Isend/Irecv exchange with a window alive, and its 8 B MPI_Allreduce
    and MPI_Barrier over MPI_COMM_WORLD: through flexrma's hooks / through the library's own
    call, in the same process (bench/hooks); its range over the runs, and flexrma's time / the
    native run's."""
    rows = []
    for v, what, bound, ok in (
            ("exchange/win", "8 B Isend/Irecv exchange, window alive, no RMA in flight: time "
             "through the hooks / the library's own MPI_Waitall", "≤ 1.03", lambda x: x <= 1.03),
            ("allreduce/win", "8 B MPI_Allreduce, window alive: time through flexrma / the "
             "library's own MPI_Allreduce", "≤ 1.0", lambda x: x <= 1.0),
            ("barrier/win", "MPI_Barrier, window alive: time through flexrma / the library's "
             "own MPI_Barrier", "≤ 1.0", lambda x: x <= 1.0)):
        spread = list(res.run_ratio.get(("hooks", v) + IMPLS[1] + (2, 8), {}).values())
        nat = res.t("hooks", v, IMPLS[0], 2, 8)
        mine = res.t("hooks", v, IMPLS[1], 2, 8)
        rows.append(target("hooks: " + what, bound,
                           {i: res.r("hooks", v, i, 2, 8) for i in IMPLS}, IMPLS[1], ok,
                           lambda x: num(x, 3),
                           spread=range_text((min(spread), max(spread)) if spread else None),
                           cross=num(None if not nat or mine is None else mine / nat, 3)))
    return rows


def targets(res):
    """The summary's rows (see target()). The verdict is on flexrma's default transport, except
    for the rows about FLEXRMA_TRANSPORT=am."""
    return (ghost_targets(res, "ring", "") + bandwidth_targets(res, "", "") +
            mpi3_targets(res) + malloc_targets(res) + hooks_targets(res) +
            ghost_targets(res, "ring/allocate", ", MPI_Win_allocate windows") +
            bandwidth_targets(res, "/allocate", ", MPI_Win_allocate window"))


def summary(results):
    """The targets table over the MPIs of results ([(mpi, Results)], in column order): for
    each MPI its implementations' values, the verdict, the judged value's range and its value
    against that MPI's native Isend-Irecv, each judged on that MPI's own runs. Open MPI alone
    keeps the unprefixed headers it always had. Returns the table and {mpi: (met, judged)}."""
    prefix = {m: "" if [r[0] for r in results] == ["openmpi"] else MPI_NAME[m] + " "
              for m, _ in results}
    head = ["Target (2 ranks, one node, same run)", "bound"]
    for m, _ in results:
        head += [prefix[m] + c for c in [LABEL[i] for i in IMPLS] +
                 ["met?", "judged: runs' range", "judged / native Isend-Irecv"]]
    per_mpi = [(m, targets(res)) for m, res in results]
    counts = {m: [0, 0] for m, _ in results}
    rows = []
    for n, first in enumerate(per_mpi[0][1]):
        row = [first["what"], first["bound"]]
        for m, ts in per_mpi:
            t = ts[n]
            cells = t.get("cells") or {i: t["fmt"](t["vals"][i]) for i in IMPLS}
            x = t["vals"][t["judge"]]
            if x is None:
                verdict = t["absent"] or "no data"
            else:
                counts[m][1] += 1
                ok = t["test"](x)
                counts[m][0] += ok
                verdict = ("met" if ok else "NOT met") + f" ({LABEL[t['judge']]})"
            row += [cells[i] for i in IMPLS] + [verdict, t["spread"], t["cross"]]
        rows.append(row)
    return table(head, rows), {m: tuple(c) for m, c in counts.items()}


def met_text(counts):
    """'M of J judged targets met' (one MPI) or the same for each MPI."""
    if len(counts) == 1:
        met, judged = next(iter(counts.values()))
        return f"{met} of {judged} judged targets met"
    return "; ".join(f"{MPI_NAME[m]}: {met} of {judged} judged targets met"
                     for m, (met, judged) in counts.items())


def versus_native_table(results):
    """flexrma's time against its MPI's own one-sided implementation on every judged operation
    that has a native row (worst size of the target's range), one column per MPI, and the
    operations where flexrma is faster and where not."""
    per_mpi = [(m, res, targets(res)) for m, res in results]
    head = ["Operation (2 ranks), as judged"] + [f"flexrma / native {MPI_NAME[m]}"
                                                 for m, _, _ in per_mpi]
    rows, seen = [], set()
    faster = {m: [] for m, _, _ in per_mpi}
    slower = {m: [] for m, _, _ in per_mpi}
    for n, t in enumerate(per_mpi[0][2]):
        if t["anchor"] is None or (t["anchor"], t["judge"]) in seen:
            continue
        seen.add((t["anchor"], t["judge"]))
        program, variant, lo, hi = t["anchor"]
        sizes = bytes_text(lo) + ("" if lo == hi else f"–{bytes_text(hi)}")
        what = f"{program} {variant}, {sizes}" + (
            "" if t["judge"] == IMPLS[1] else f" ({LABEL[t['judge']]})")
        cells = []
        for m, res, ts in per_mpi:
            x = versus_native_mpi(res, t["anchor"], ts[n]["judge"])
            cells.append(num(x))
            if x is not None:
                (faster if x < 1 else slower)[m].append(what)
        if any(c != "–" for c in cells):
            rows.append([what] + cells)
    lines = []
    for m, _, _ in per_mpi:
        lines.append(f"* over {MPI_NAME[m]}, flexrma is faster than the native one-sided "
                     f"implementation on {len(faster[m])} of {len(faster[m]) + len(slower[m])} "
                     "operations" + (f"; not on: {'; '.join(slower[m])}" if slower[m] else ""))
    return table(head, rows), "\n".join(lines) + "\n"


def reference_note(results):
    """The Isend-Irecv reference itself, at 8 B: flexrma's passes through its progress hooks,
    and when it is slow, the ratios above flatter flexrma."""
    def cells(res):
        return ", ".join(f"{LABEL[i]} {num(res.t('ghost', 'isend/ring', i, 2, 8))} µs"
                         for i in IMPLS)
    if [m for m, _ in results] == ["openmpi"]:
        values = cells(results[0][1])
    else:
        values = "; ".join(f"{MPI_NAME[m]}: {cells(res)}" for m, res in results)
    return ("The ratios' reference, ghost Isend/Irecv at 8 B, 2 ranks: " + values +
            ". Each ratio divides by the reference of its own run; a slow reference (on a "
            "loaded machine the two ranks may end up sharing a core, and flexrma's waits then "
            "give it away) makes a ratio look better than it is: the last column divides by "
            "the native reference instead.\n")


def machine(mpis):
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
    versions = []
    if "openmpi" in mpis:
        versions.append((run(["mpirun", "--version"]).splitlines() or ["?"])[0])
    if "mpich" in mpis:  # "MPICH Version: 4.0.2", "MPICH Device: ch4:ucx"
        info = dict(line.split(":", 1) for line in run(["mpichversion"]).splitlines()
                    if ":" in line)
        versions.append(f"MPICH {info.get('MPICH Version', '?').strip()} "
                        f"({info.get('MPICH Device', '?').strip()})")
    mpi = "; ".join(versions)
    load = ""
    try:
        load = open("/proc/loadavg").read().split()[0]
    except OSError:
        pass
    return [f"CPU: {cpu}, {cores} CPUs" + (f", {extra}" if extra else ""),
            f"System: {run(['uname', '-srm']).strip()}",
            f"MPI: {mpi}",
            f"Load average (1 min) at the end: {load}"]


def mpi_note(mpi):
    """The line under the title of an MPI's per-program results other than Open MPI's."""
    return (f"Over {MPI_NAME[mpi]}: native is {MPI_NAME[mpi]}'s own one-sided implementation, "
            f"flexrma the libflexrma built against {MPI_NAME[mpi]} and preloaded; the programs "
            f"compiled with its mpicc.\n\n")


def write_program(res, mpi, program, out, runs_note):
    """OUT/NAME(.mpich).csv, .md and .png of one program over one MPI; True if there was data
    (a result left by an older run is removed otherwise). Returns (written, plotted)."""
    files = [os.path.join(out, program + MPI_SUFFIX[mpi] + ext) for ext in (".csv", ".md", ".png")]
    if not res.keys(program):
        for f in files:  # no fresh data: leave no result of an older run behind
            if os.path.exists(f):
                os.remove(f)
        return False, False
    res.write_csv(program, files[0])
    text = MARKDOWN[program](res, runs_note)
    if mpi != "openmpi":
        title, rest = text.split("\n\n", 1)
        text = title + "\n\n" + mpi_note(mpi) + rest
    with open(files[1], "w") as f:
        f.write(text)
    plotted = plot(res, program, files[2])
    if not plotted and os.path.exists(files[2]):
        os.remove(files[2])
    return True, plotted


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="directory of per-run CSV files")
    ap.add_argument("--out", required=True, help="results directory")
    ap.add_argument("--mpi", default="openmpi", help="the MPIs run over, comma-separated, "
                    "in column order: openmpi, mpich")
    ap.add_argument("--mode", default="full")
    ap.add_argument("--rounds", default="?")
    ap.add_argument("--failed", default="0")
    ap.add_argument("--build-type", default="?")
    ap.add_argument("--env", default="none")
    ap.add_argument("--timing", default="")
    ap.add_argument("--load", type=int, default=0, help="busy loops run beside every run")
    ap.add_argument("--notify-bound", type=float, default=1.0,
                    help="halosync's bound on notify/halo at 8 B over Isend/Irecv (1.1 across hosts)")
    args = ap.parse_args()
    HALOSYNC_NOTIFY_BOUND[0] = args.notify_bound
    mpis = args.mpi.split(",")
    if not mpis or any(m not in MPIS for m in mpis):
        ap.error(f"--mpi: a comma-separated list of {', '.join(MPIS)}")

    results = [(m, Results(args.runs, m)) for m in mpis]
    os.makedirs(args.out, exist_ok=True)
    runs_note = (f"Medians over {args.rounds} runs of each ({args.mode} run); each run's value "
                 "is the median over its repetitions of the slowest rank's time.")
    if args.load:
        runs_note += (f" Loaded machine: {args.load} busy loops (sh -c 'while :; do :; done') "
                      "ran beside every run.")
    written, plots = [], 0
    for m in MPIS:  # an MPI not run this time leaves no files behind either
        res = dict(results).get(m) or Results(os.devnull, m)
        for p in PROGRAMS:
            done, plotted = write_program(res, m, p, args.out, runs_note)
            if done:
                written.append(p + MPI_SUFFIX[m])
            plots += plotted

    tab, counts = summary(results)
    only_openmpi = mpis == ["openmpi"]
    date = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    files = "".join(f"* {p}.csv, {p}.md" + (f", {p}.png" if os.path.exists(
        os.path.join(args.out, p + ".png")) else "") + "\n" for p in written)
    over = "" if only_openmpi else " over " + " and over ".join(MPI_NAME[m] for m in mpis)
    native = "native Open MPI's" if "openmpi" in mpis else "native MPICH's"
    parts = ["# flexrma benchmark summary",
             f"{args.mode} run of bench/run on {date}: {args.rounds} rounds (native, flexrma, "
             f"flexrma with FLEXRMA_TRANSPORT=am, one after the other{over}), {args.failed} "
             f"failed runs. flexrma build: {args.build_type}; FLEXRMA_* settings: "
             f"{args.env.strip()}. Added load: " +
             (f"{args.load} busy loops (sh -c 'while :; do :; done') beside every run "
              "(bench/run --load)" if args.load else "none (quiet)") +
             f". Time: {args.timing}.",
             "Ratios are one-sided time / point-to-point time within the same run (the CSV's "
             "ratio_to_pt2pt), medians over the runs; a size range shows its worst size. "
             "flexrma's default transport carries synchronization through shared-memory packet "
             "rings between node peers and copies puts, gets and accumulates straight into or "
             "out of their windows (FLEXRMA_TRANSPORT=am: everything as messages, as between "
             "nodes). The lock rows time seed 001's passive-target ghost exchange (lock, put, unlock "
             "per neighbour); ghost's lock_notify variant, which adds a zero-byte message with "
             "each neighbour so that the target knows its ghosts are complete, is in ghost.md. "
             "The mpi3 rows (MPI-3 passive target, one operation and a flush per step, rank 0 "
             f"to rank 1, mpi3.md) compare flexrma's time with {native} from the runs "
             "of the same rounds: value = flexrma / native (the cells give µs too), its range "
             "round by round; fop is also counted in core-to-core round trips (c2c, two "
             "processes ping-ponging a cache line in plain shared memory, measured "
             "interleaved in the same run). Windows are MPI_Win_create's over MPI_Alloc_mem "
             "memory unless the row names MPI_Win_allocate."]
    if not only_openmpi:
        parts.append("Each MPI's columns come from its own runs and are judged on their own: "
                     "native is that MPI's own one-sided implementation, flexrma the libflexrma "
                     "built against that MPI and preloaded, the ratios are against that MPI's "
                     "Isend/Irecv and the mpi3 rows against that MPI's native time. "
                     "Per-program results: " + ", ".join(
                         f"NAME{MPI_SUFFIX[m]}.csv, .md, .png over {MPI_NAME[m]}" for m in mpis) +
                     ".")
    parts += [tab.rstrip(), met_text(counts) + "."]
    anchor = ""
    if "mpich" in mpis:
        anchor_tab, anchor_lines = versus_native_table(results)
        anchor = ("## flexrma against the native one-sided implementation\n\n"
                  "flexrma's time / the native MPI's time of the same operation in the same "
                  "rounds (worst size of the target's range; below 1, flexrma is faster). " +
                  ("MPICH's own implementation is a second anchor beside Open MPI's."
                   if "openmpi" in mpis else "MPICH's own implementation is the anchor.") +
                  "\n\n" +
                  anchor_tab + "\n" + anchor_lines)
        parts.append(anchor.rstrip())
    parts += [reference_note(results).rstrip(),
              "## Machine",
              "".join(f"* {m}\n" for m in machine(mpis)).rstrip(),
              "Shared and noisy: other jobs run on the same 2 cores, so single numbers move "
              "between runs; compare ratios from the same run.",
              "## Files",
              files.rstrip()]
    text = "\n\n".join(parts) + "\n"
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    programs = (f"{len(written)} programs" if len(mpis) == 1 else
                f"{len(written)} program results")
    print(tab + f"\n{met_text(counts)} "
          f"(results in {args.out}: {programs}, {plots} plots; added load: "
          f"{f'{args.load} busy loops' if args.load else 'none'}).\n\n" +
          (anchor + "\n" if anchor else "") + reference_note(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
