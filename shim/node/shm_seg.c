/* shm_seg.c - memory segments this process can share (see shm_seg.h).
 *
 * The live segments are kept in an array sorted by address, so fr_seg_lookup() is a binary
 * search; allocations are few and long-lived next to the RMA operations that look them up.
 * Freed small segments wait as spares for an allocation of the same size (shm_seg.h says why). */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS, mremap, SEEK_DATA */
#include "shm_seg.h"

#include "page_hold.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct seg {
    char *base;
    size_t size;
    int fd;
    int named; /* name still linked */
    int borrowed; /* the program's own pages, moved here in place (fr_seg_borrow) */
    int no_spare; /* peers may use it after it is freed here (fr_seg_no_spare) */
    size_t held; /* a spare's bytes of memory (spare_keep) */
    uint64_t serial;
    uint64_t ino;
    char name[FR_SEG_NAME_MAX];
} seg;

static seg *segs; /* sorted by base */
static size_t nsegs, cap_segs;
/* Freed segments kept mapped for reuse, oldest first (fr_seg_free, fr_seg_alloc). */
static seg spares[FR_SEG_SPARES];
static size_t nspares, spare_bytes;
static uint64_t next_serial = 1;
static fr_seg_backend backend = FR_SEG_UNDECIDED;

static size_t page_size(void)
{
    static size_t pg;
    if (!pg) {
        long v = sysconf(_SC_PAGESIZE);
        pg = v > 0 ? (size_t)v : 4096;
    }
    return pg;
}

/* Index of the first segment whose base is above addr. */
static size_t upper_bound(const char *addr)
{
    size_t lo = 0, hi = nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (segs[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The segment containing addr, or NULL. */
static seg *find(const void *addr)
{
    size_t i = upper_bound(addr);
    if (i == 0)
        return NULL;
    seg *s = &segs[i - 1];
    return (const char *)addr < s->base + s->size ? s : NULL;
}

static int memfd_missing(int err) { return err == ENOSYS || err == EPERM || err == EINVAL; }

/* memfd_create with sealing; MFD_ALLOW_SEALING is older than every kernel with pidfd_getfd, but
 * a seccomp filter may object to the flags, so retry without. */
static int memfd_open(void)
{
    int fd = memfd_create("flexrma", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("flexrma", MFD_CLOEXEC);
    return fd;
}

/* 64 random bits: the kernel's, or, where it has none to give at once, the pid, the clock and a
 * counter mixed (different on every call and in every process). */
static uint64_t random_word(void)
{
    static uint64_t counter;
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec * 1000000000u ^
            (uint64_t)ts.tv_nsec ^ ++counter * 0x9E3779B97F4A7C15ull;
    }
    return r;
}

/* A fresh name for a POSIX shared memory object: "/flexrma.<pid>.<64 random bits>". */
static void random_name(char *out, size_t n)
{
    snprintf(out, n, "/flexrma.%ld.%016llx", (long)getpid(), (unsigned long long)random_word());
}

static int named_open(char *name, size_t n)
{
    for (int tries = 0; tries < 16; tries++) {
        random_name(name, n);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

fr_seg_backend fr_seg_backend_get(void)
{
    if (backend != FR_SEG_UNDECIDED)
        return backend;
    int fd = memfd_open();
    if (fd >= 0) {
        close(fd);
        return backend = FR_SEG_MEMFD;
    }
    if (!memfd_missing(errno))
        return FR_SEG_MEMFD; /* works, but this attempt failed (EMFILE...): decide later */
    char name[FR_SEG_NAME_MAX];
    fd = named_open(name, sizeof name);
    if (fd >= 0) {
        shm_unlink(name);
        close(fd);
        return backend = FR_SEG_NAMED;
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
        return FR_SEG_NAMED;
    return backend = FR_SEG_NONE;
}

static void spare_evict(void);

int fr_seg_backend_force(fr_seg_backend b)
{
    fr_seg_spares_drop(); /* they were made by the old backend */
    if (nsegs > 0 || b == FR_SEG_UNDECIDED)
        return fr_errorf(FR_ERR_ARG, "segment backend can only be forced while no segment is live");
    backend = b;
    return MPI_SUCCESS;
}

size_t fr_seg_count(void) { return nsegs; }

static int sys_error(const char *what, size_t size)
{
    int err = errno;
    if (err == ENOMEM || err == EMFILE || err == ENFILE || err == ENOSPC)
        return fr_errorf(FR_ERR_NO_MEM, "shared segment of %zu bytes: %s: %s", size, what,
                         strerror(err));
    return fr_errorf(FR_ERR_SHM, "shared segment of %zu bytes: %s: %s", size, what, strerror(err));
}

/* Close a segment's file (and unlink its name): what is still mapped of it stays. */
static void seg_close(seg *s)
{
    if (s->named)
        shm_unlink(s->name);
    close(s->fd);
}

/* Every segment holds a descriptor: leave three quarters of the limit to the program (and the
 * MPI library), so many MPI_Alloc_mem blocks can never make the program's own open() fail. */
static size_t fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 4096;
    return (size_t)(rl.rlim_cur / 4);
}

static void fork_handlers_once(void);

/* A new segment's file of `bytes` (a page multiple) in *s: descriptor, size, inode, seals. */
static int seg_open(size_t bytes, seg *s)
{
    fr_seg_backend b = fr_seg_backend_get();
    if (b == FR_SEG_NONE)
        return fr_errorf(FR_ERR_SHM, "no shared memory here: memfd_create and shm_open both fail");
    while (nspares > 0 && nsegs + nspares >= fd_budget())
        spare_evict();
    if (nsegs >= fd_budget())
        return fr_errorf(FR_ERR_NO_MEM, "%zu shared segments hold a quarter of the descriptor "
                                        "limit (RLIMIT_NOFILE); no more", nsegs);
    *s = (seg){.named = 0};
    s->fd = b == FR_SEG_MEMFD ? memfd_open() : named_open(s->name, sizeof s->name);
    if (s->fd < 0) {
        if (b == FR_SEG_MEMFD && memfd_missing(errno))
            backend = FR_SEG_UNDECIDED; /* forbidden since the probe: probe again next time */
        return sys_error(b == FR_SEG_MEMFD ? "memfd_create" : "shm_open", bytes);
    }
    s->named = b == FR_SEG_NAMED;
    int rc = MPI_SUCCESS;
    struct stat st;
    if (ftruncate(s->fd, (off_t)bytes) != 0)
        rc = sys_error("ftruncate", bytes);
    else if (fstat(s->fd, &st) != 0)
        rc = sys_error("fstat", bytes);
    if (rc != MPI_SUCCESS) {
        seg_close(s);
        return rc;
    }
    /* Peers map all of it: it must never shrink under them (SIGBUS) nor grow. memfd only; a
     * file made without MFD_ALLOW_SEALING refuses, which is harmless. */
    if (b == FR_SEG_MEMFD)
        (void)fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
    /* memfd starts at 0777; nothing reaches it by name, but keep it owner-only anyway. */
    (void)fchmod(s->fd, 0600);
    s->size = bytes;
    s->ino = (uint64_t)st.st_ino;
    return MPI_SUCCESS;
}

/* Enter s, mapped at s->base, in the table; a new segment (serial 0) gets its serial. */
static void seg_insert(seg *s)
{
    fork_handlers_once();
    if (s->serial == 0)
        s->serial = next_serial++;
    fr_grow(&segs, &cap_segs, nsegs + 1, sizeof *segs);
    size_t i = upper_bound(s->base);
    memmove(&segs[i + 1], &segs[i], (nsegs - i) * sizeof *segs);
    segs[i] = *s;
    nsegs++;
}

static void seg_remove(seg *s)
{
    size_t i = (size_t)(s - segs);
    memmove(&segs[i], &segs[i + 1], (nsegs - i - 1) * sizeof *segs);
    nsegs--;
}

static size_t round_pages(size_t size)
{
    size_t pg = page_size();
    return size ? (size + pg - 1) & ~(pg - 1) : pg;
}

/* The runs of pages that may hold data, each passed to fn(from, n, arg), the first failure
 * returned. Untouched pages read as zeros wherever they live, so they need no copy (a large,
 * mostly untouched window is cheap to move) nor zeroing (a spare is cheap to reuse). Where the
 * kernel says nothing, one run of everything. */
typedef int (*run_fn)(char *from, size_t n, void *arg);

/* The data runs of s's file within [from, to), called with their addresses in s's mapping. */
static int segment_runs(const seg *s, size_t from, size_t to, run_fn fn, void *arg)
{
    off_t end = (off_t)to, at = (off_t)from;
    while (at < end) {
        off_t data = lseek(s->fd, at, SEEK_DATA);
        if (data < 0)
            return errno == ENXIO ? MPI_SUCCESS : fn(s->base + at, (size_t)(end - at), arg);
        if (data >= end)
            return MPI_SUCCESS;
        off_t hole = lseek(s->fd, data, SEEK_HOLE);
        if (hole < 0 || hole > end)
            hole = end;
        int rc = fn(s->base + data, (size_t)(hole - data), arg);
        if (rc != MPI_SUCCESS)
            return rc;
        at = hole;
    }
    return MPI_SUCCESS;
}

/* ---- spares ----
 * A freed segment stays mapped, with its descriptor and its serial, until an allocation of the
 * same size takes it (zero-filled again) or newer spares push it out. Peers keep their mapping of
 * small ones too (shm_map.c), so a window made and freed again and again (Global Arrays'
 * temporary arrays) costs no mmap, munmap or descriptor passing after the first: each munmap of
 * touched pages is a TLB shootdown of every core this process's threads last ran on, 40-90 us in
 * a virtual machine, and a window of 2 ranks made 8 of them (MPI_Win_allocate of 4 KiB and
 * MPI_Win_free: 700 us a window before, 340 us without the unmaps). Large blocks come back the
 * same way: NWChem's SCF takes and frees a 40 MiB MPI_Alloc_mem block 200 times a run and
 * touches 92 of its pages; natively each round is a fresh mapping, its page faults and its unmap,
 * 1.2 ms, the fifth of the run. What bounds the spares is the memory they hold, their files'
 * data (SEEK_DATA), not their size, and only those pages are zeroed when one is taken again.
 * Reuse is safe because nothing writes into a freed segment: MPI_Win_free frees a window's
 * segments after its barrier, once no member has an epoch open or an operation, a packet or an
 * answer in flight to this process, and MPI_Free_mem is given memory no window uses any more. */

/* Below this, a spare is zeroed and counted whole: the walk over its data costs more. */
#define SPARE_WALK_MIN ((size_t)64 << 10)

static void spare_release(seg *s)
{
    munmap(s->base, s->size);
    seg_close(s);
}

void fr_seg_spares_drop(void)
{
    for (size_t i = 0; i < nspares; i++)
        spare_release(&spares[i]);
    nspares = spare_bytes = 0;
}

/* The oldest spare goes. */
static void spare_evict(void)
{
    spare_bytes -= spares[0].held;
    spare_release(&spares[0]);
    memmove(&spares[0], &spares[1], --nspares * sizeof *spares);
}

static int add_run(char *from, size_t n, void *arg)
{
    (void)from;
    *(size_t *)arg += n;
    return MPI_SUCCESS;
}

static int zero_run(char *from, size_t n, void *arg)
{
    (void)arg;
    memset(from, 0, n);
    return MPI_SUCCESS;
}

/* The bytes of memory s holds: its file's data. */
static size_t held_bytes(const seg *s)
{
    size_t held = 0;
    if (s->size < SPARE_WALK_MIN || segment_runs(s, 0, s->size, add_run, &held) != MPI_SUCCESS)
        return s->size;
    return held;
}

/* Keep s as a spare if it is unnamed and holds little enough; 0 if it was not taken. */
static int spare_keep(seg *s)
{
    if (s->named || s->no_spare || backend != FR_SEG_MEMFD)
        return 0;
    s->held = held_bytes(s);
    if (s->held > FR_SEG_SPARE_BYTES)
        return 0;
    while (nspares == FR_SEG_SPARES || spare_bytes + s->held > FR_SEG_SPARE_BYTES)
        spare_evict();
    spares[nspares++] = *s;
    spare_bytes += s->held;
    return 1;
}

/* The newest spare of exactly `bytes`, taken out of the spares into *s, its data zeroed; 0 if
 * none. */
static int spare_take(size_t bytes, seg *s)
{
    for (size_t i = nspares; i-- > 0;)
        if (spares[i].size == bytes) {
            *s = spares[i];
            memmove(&spares[i], &spares[i + 1], (nspares - i - 1) * sizeof *spares);
            nspares--;
            spare_bytes -= s->held;
            /* as a new segment reads; where the walk fails, all of it */
            if (s->size < SPARE_WALK_MIN ||
                segment_runs(s, 0, s->size, zero_run, NULL) != MPI_SUCCESS)
                memset(s->base, 0, bytes);
            return 1;
        }
    return 0;
}

void fr_seg_no_spare(void *addr)
{
    seg *s = find(addr);
    if (s)
        s->no_spare = 1;
}

int fr_seg_alloc(size_t size, void **addr)
{
    size_t pg = page_size();
    if (size > SIZE_MAX - pg || size > (size_t)INT64_MAX - pg)
        return fr_errorf(FR_ERR_NO_MEM, "shared segment of %zu bytes is too large", size);
    seg s;
    if (!spare_take(round_pages(size), &s)) {
        int rc = seg_open(round_pages(size), &s);
        if (rc != MPI_SUCCESS)
            return rc;
        s.base = mmap(NULL, s.size, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
        if (s.base == MAP_FAILED) {
            rc = sys_error("mmap", size);
            seg_close(&s);
            return rc;
        }
    }
    seg_insert(&s);
    *addr = s.base;
    return MPI_SUCCESS;
}

int fr_seg_free(void *addr)
{
    seg *s = find(addr);
    if (!s || s->base != addr || s->borrowed)
        return fr_errorf(FR_ERR_BASE, "no shared segment starts at %p", addr);
    if (!spare_keep(s))
        spare_release(s);
    seg_remove(s);
    return MPI_SUCCESS;
}

/* This process's fr_seg_ref.owner: random, never 0. */
static uint64_t owner_token(void)
{
    static uint64_t token;
    if (token == 0)
        token = random_word() | 1; /* never 0 */
    return token;
}

static int lookup(const void *addr, size_t len, fr_seg_ref *ref, int borrowed)
{
    const seg *s = find(addr);
    if (!s || s->borrowed != borrowed)
        return 0;
    size_t off = (size_t)((const char *)addr - s->base);
    if (len > s->size - off)
        return 0;
    memset(ref, 0, sizeof *ref);
    ref->fd = s->fd;
    ref->named = (uint32_t)s->named;
    ref->serial = s->serial;
    ref->ino = s->ino;
    ref->owner = owner_token();
    ref->size = s->size;
    ref->offset = off;
    if (s->named)
        memcpy(ref->name, s->name, sizeof ref->name);
    return 1;
}

int fr_seg_lookup(const void *addr, size_t len, fr_seg_ref *ref)
{
    return lookup(addr, len, ref, 0);
}

int fr_seg_lookup_borrowed(const void *addr, size_t len, fr_seg_ref *ref)
{
    return lookup(addr, len, ref, 1);
}

int fr_seg_unlink_name(const void *addr)
{
    seg *s = find(addr);
    if (!s)
        return fr_errorf(FR_ERR_BASE, "%p lies in no shared segment", addr);
    if (s->named) {
        shm_unlink(s->name);
        s->named = 0;
        s->name[0] = '\0';
    }
    return MPI_SUCCESS;
}

void fr_seg_unlink_all(void)
{
    for (size_t i = 0; i < nsegs; i++)
        if (segs[i].named) {
            shm_unlink(segs[i].name);
            segs[i].named = 0;
            segs[i].name[0] = '\0';
        }
}

void fr_mem_prefault(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = (uintptr_t)addr & ~(page - 1), to = (uintptr_t)addr + len;
    /* an optimization: failing (an older kernel) is fine */
    (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
    (void)addr;
    (void)len;
#endif
}

/* ---- borrowed segments: the program's own pages, moved in place ---- */

/* Program memory [at, at + bytes): the pages /proc/self/pagemap shows resident or swapped. */
static int private_runs(char *at, size_t bytes, run_fn fn, void *arg)
{
    enum { BATCH = 512 };
    const uint64_t present = 1ull << 63, swapped = 1ull << 62;
    size_t pg = page_size(), pages = bytes / pg;
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fn(at, bytes, arg);
    uint64_t e[BATCH];
    size_t run = 0, nrun = 0; /* the run being gathered: first page, pages */
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < pages && rc == MPI_SUCCESS; i += BATCH) {
        size_t n = pages - i < BATCH ? pages - i : BATCH;
        off_t where = (off_t)(((uintptr_t)at / pg + i) * sizeof *e);
        if (pread(fd, e, n * sizeof *e, where) != (ssize_t)(n * sizeof *e)) {
            close(fd); /* pagemap stopped answering: copy everything from here on */
            if (nrun)
                rc = fn(at + run * pg, nrun * pg, arg);
            return rc == MPI_SUCCESS ? fn(at + i * pg, bytes - i * pg, arg) : rc;
        }
        for (size_t k = 0; k < n && rc == MPI_SUCCESS; k++) {
            if (e[k] & (present | swapped)) {
                if (nrun == 0)
                    run = i + k;
                nrun++;
            } else if (nrun) {
                rc = fn(at + run * pg, nrun * pg, arg);
                nrun = 0;
            }
        }
    }
    close(fd);
    if (rc == MPI_SUCCESS && nrun)
        rc = fn(at + run * pg, nrun * pg, arg);
    return rc;
}

static int prefault_run(char *from, size_t n, void *arg)
{
    (void)arg;
    fr_mem_prefault(from, n);
    return MPI_SUCCESS;
}

/* Is the page at `at` gone (neither in memory nor in swap), as pagemap tells now? */
static int page_gone(const char *at)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    uint64_t e = 0;
    off_t where = (off_t)((uintptr_t)at / page_size() * sizeof e);
    int gone = pread(fd, &e, sizeof e, where) == (ssize_t)sizeof e && !(e & (3ull << 62));
    close(fd);
    return gone;
}

/* Copy runs of the program's held pages into the segment, mapped at `to` for the copy (the
 * chunk that starts at `from`). The pages are read through /proc/self/mem, which answers EIO
 * rather than waiting on the hold when a page vanished since pagemap was read (the program's
 * MADV_DONTNEED, or MADV_FREE'd pages the kernel reclaimed): such a page reads as zeros and
 * needs no copy. Nothing here allocates or reports: the hold may make another thread wait
 * inside malloc. */
typedef struct copy_in {
    int mem;          /* /proc/self/mem */
    const char *from; /* the chunk in the program's memory */
    char *to;         /* the same bytes of the segment */
    int err;          /* errno of a failure */
} copy_in;

static int copy_run_in(char *from, size_t n, void *arg)
{
    copy_in *c = arg;
    char *to = c->to + (from - c->from);
    size_t pg = page_size();
    fr_mem_prefault(to, n);
    for (size_t done = 0; done < n;) {
        ssize_t k = pread(c->mem, to + done, n - done, (off_t)(uintptr_t)(from + done));
        if (k > 0) {
            done += (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else if (k < 0 && errno == EIO && page_gone(from + done)) {
            done = (done / pg + 1) * pg;
        } else {
            c->err = k < 0 ? errno : EIO;
            return FR_ERR_SHM;
        }
    }
    return MPI_SUCCESS;
}

/* Read a run of a segment's file into the same offset of a private copy of the part that
 * starts at offset `off`. The kernel reads the file's pages (no fault on the segment's side)
 * and the copy's pages are faulted in at once: a fault per page, taken one at a time, cost
 * about 10 us each in a virtual machine. */
typedef struct file_read {
    const seg *s;
    size_t off;
    char *to;
} file_read;

static int read_run(char *from, size_t n, void *arg)
{
    const file_read *c = arg;
    size_t off = (size_t)(from - c->s->base);
    char *to = c->to + (off - c->off);
    fr_mem_prefault(to, n);
    for (size_t done = 0; done < n;) {
        ssize_t k = pread(c->s->fd, to + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) /* never through the mapping instead: it may be held (page_hold.h) */
            return FR_ERR_SHM;
        done += (size_t)k;
    }
    return MPI_SUCCESS;
}

/* A private anonymous copy of [off, off + n) of segment s (only the pages holding data are
 * written), or NULL when memory is short or the file cannot be read. */
static char *private_copy(const seg *s, size_t off, size_t n)
{
    char *copy = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
        return NULL;
    file_read c = {s, off, copy};
    if (segment_runs(s, off, off + n, read_run, &c) != MPI_SUCCESS) {
        munmap(copy, n);
        return NULL;
    }
    return copy;
}

/* Put a private copy in place of the pages [at, at + n): the mapping moves, so there is no
 * second copy and no moment without the data. The system call itself, not libc's mremap: UCX's
 * memory hooks (MPICH over UCX) replace mremap by a function without the new address, which
 * moves the copy to wherever its fifth register points. The MPI libraries' hooks (Open MPI's
 * patcher, UCX's) must still forget what they registered of these pages: MADV_DONTNEED tells
 * them, and on a shared mapping it only drops page-table entries (the file keeps the data). */
static int put_back(char *at, size_t n, char *copy)
{
    (void)madvise(at, n, MADV_DONTNEED);
    return (char *)syscall(SYS_mremap, copy, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, at) == at;
}

/* Pages move in chunks, so memory holds at most one chunk twice at any time, and each chunk is
 * held (page_hold.h) from before its copy until the new mapping is in its place: a store by
 * another thread, or by the kernel for a system call, waits and is then made on the new pages,
 * never lost in the old ones. */
#define BORROW_CHUNK ((size_t)64 << 20)

static size_t chunk_at(size_t off, size_t bytes)
{
    return bytes - off < BORROW_CHUNK ? bytes - off : BORROW_CHUNK;
}

/* Give [off, off + n) of borrowed segment s back to private memory, held while it moves. */
static int return_chunk(const seg *s, size_t off, size_t n)
{
    fr_hold h;
    int rc = fr_hold_begin(s->base + off, n, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    char *copy = private_copy(s, off, n);
    int moved = copy && put_back(s->base + off, n, copy);
    int err = errno;
    fr_hold_end(&h, moved);
    if (moved)
        return MPI_SUCCESS;
    if (copy)
        munmap(copy, n);
    errno = err;
    return sys_error("moving a window's pages back to private memory", n);
}

/* Move [off, off + n) of the program's pages into s, held while they move. */
static int borrow_chunk(const seg *s, size_t off, size_t n, int mem)
{
    char *at = s->base + off;
    char *to = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, (off_t)off);
    if (to == MAP_FAILED)
        return sys_error("mapping it for the copy", n);
    fr_hold h;
    int rc = fr_hold_begin(at, n, &h);
    if (rc != MPI_SUCCESS) {
        munmap(to, n);
        return rc;
    }
    rc = fr_hold_take(&h); /* a page pinned for I/O must not move: its writes would be lost */
    if (rc != MPI_SUCCESS) {
        munmap(to, n);
        fr_hold_end(&h, 0);
        return rc;
    }
    char *from = fr_hold_pages(&h);
    copy_in c = {mem, from, to, 0};
    rc = private_runs(from, n, copy_run_in, &c);
    munmap(to, n);
    if (rc != MPI_SUCCESS) {
        fr_hold_end(&h, 0);
        errno = c.err;
        return sys_error("copying the window's pages into it", n);
    }
    /* MAP_FIXED replaces the pages at once; it fails only when the process is out of mappings
     * (the caller checked vm.max_map_count) and then leaves a hole: fatal. */
    if (mmap(at, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->fd, (off_t)off) != at)
        fr_fatal("mapping a segment over a window's memory at %p failed: %s", (void *)at,
                 strerror(errno));
    fr_hold_end(&h, 1);
    /* the program's next touch of each page it had would fault: take those faults now */
    segment_runs(s, off, off + n, prefault_run, NULL);
    return MPI_SUCCESS;
}

int fr_seg_borrow(void *at, size_t bytes, fr_seg_ref *ref)
{
    size_t pg = page_size();
    if (((uintptr_t)at | bytes) & (pg - 1) || bytes == 0)
        return fr_errorf(FR_ERR_ARG, "borrowing [%p, +%zu): not whole pages", at, bytes);
    const char *why;
    if (!fr_hold_available(&why))
        return fr_errorf(FR_ERR_SHM, "borrowing [%p, +%zu): %s", at, bytes, why);
    int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (mem < 0)
        return sys_error("opening /proc/self/mem", bytes);
    seg s;
    int rc = seg_open(bytes, &s);
    if (rc != MPI_SUCCESS) {
        close(mem);
        return rc;
    }
    s.base = at;
    s.borrowed = 1;
    size_t off = 0;
    while (off < bytes && (rc = borrow_chunk(&s, off, chunk_at(off, bytes), mem)) == MPI_SUCCESS)
        off += BORROW_CHUNK;
    close(mem);
    if (rc != MPI_SUCCESS) { /* give back the chunks before `off`; the rest never left */
        for (size_t done = 0; done < off; done += BORROW_CHUNK)
            if (return_chunk(&s, done, BORROW_CHUNK) != MPI_SUCCESS)
                fr_fatal("a window's memory at %p could not be moved back to private pages "
                         "after a failed move into a segment", (void *)(s.base + done));
        seg_close(&s);
        return rc;
    }
    seg_insert(&s);
    lookup(at, bytes, ref, 1);
    return MPI_SUCCESS;
}

int fr_seg_give_back(void *at, int restore)
{
    seg *s = find(at);
    if (!s || s->base != at || !s->borrowed)
        return fr_errorf(FR_ERR_BASE, "no borrowed segment starts at %p", at);
    int rc = MPI_SUCCESS;
    /* Where a chunk cannot move back, it and the rest stay on the shared pages, mapped without
     * the segment: the program keeps its data, and only a forked child would share them. */
    for (size_t off = 0; restore && off < s->size && rc == MPI_SUCCESS; off += BORROW_CHUNK)
        rc = return_chunk(s, off, chunk_at(off, s->size));
    seg_close(s);
    seg_remove(s);
    return rc;
}

/* ---- fork ----
 * A forked child must get a private copy of every segment, as it does of any other memory:
 * otherwise its stores would land in the parent's window (and the parent's in its memory).
 * Before fork each segment's contents are copied to private memory and the segment is kept
 * out of the child (MADV_DONTFORK); the child puts the copy in its place. A program that
 * forks pays one copy of the data its segments hold; one that does not pays nothing.
 * posix_spawn and system() do not run these handlers, and need none: the child execs. */

static char **fork_copies;

static void before_fork(void)
{
    FR_ENTER(); /* the table stays as it is until both sides are done */
    fork_copies = calloc(nsegs ? nsegs : 1, sizeof *fork_copies);
    for (size_t i = 0; fork_copies && i < nsegs; i++) {
        fork_copies[i] = private_copy(&segs[i], 0, segs[i].size);
        if (fork_copies[i] && madvise(segs[i].base, segs[i].size, MADV_DONTFORK) != 0) {
            munmap(fork_copies[i], segs[i].size); /* the child shares it, as before */
            fork_copies[i] = NULL;
        }
    }
}

static void after_fork_parent(void)
{
    for (size_t i = 0; fork_copies && i < nsegs; i++)
        if (fork_copies[i]) {
            munmap(fork_copies[i], segs[i].size);
            (void)madvise(segs[i].base, segs[i].size, MADV_DOFORK);
        }
    free(fork_copies);
    fork_copies = NULL;
    FR_LEAVE();
}

static void after_fork_child(void)
{
    for (size_t i = 0; fork_copies && i < nsegs; i++)
        if (fork_copies[i] && !put_back(segs[i].base, segs[i].size, fork_copies[i]))
            fr_fatal("fork: could not give the child its copy of shared memory at %p",
                     (void *)segs[i].base);
    fr_hold_finalize(); /* the parent's userfaultfd: this process must never register with it */
    free(fork_copies);
    fork_copies = NULL;
    FR_LEAVE();
}

static void fork_handlers_install(void)
{
    (void)pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

static void fork_handlers_once(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fork_handlers_install);
}
