/* shm_seg.c - memory segments this process can share (see shm_seg.h).
 *
 * The live segments are kept in an array sorted by address, so fr_seg_lookup() is a binary
 * search; allocations are few and long-lived next to the RMA operations that look them up. */
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#include "shm_seg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seg {
    char *base;
    size_t size;
    int fd;
    int named; /* name still linked */
    uint64_t serial;
    uint64_t ino;
    char name[FR_SEG_NAME_MAX];
} seg;

static seg *segs; /* sorted by base */
static size_t nsegs, cap_segs;
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

/* A fresh name for a POSIX shared memory object: "/flexrma.<pid>.<64 random bits>". */
static void random_name(char *out, size_t n)
{
    static uint64_t counter;
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r ^
            ++counter * 0x9E3779B97F4A7C15ull;
    snprintf(out, n, "/flexrma.%ld.%016llx", (long)getpid(), (unsigned long long)r);
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

int fr_seg_backend_force(fr_seg_backend b)
{
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

/* Every segment holds a descriptor: leave three quarters of the limit to the program (and the
 * MPI library), so many MPI_Alloc_mem blocks can never make the program's own open() fail. */
static size_t fd_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 4096;
    return (size_t)(rl.rlim_cur / 4);
}

int fr_seg_alloc(size_t size, void **addr)
{
    fr_seg_backend b = fr_seg_backend_get();
    if (b == FR_SEG_NONE)
        return fr_errorf(FR_ERR_SHM, "no shared memory here: memfd_create and shm_open both fail");
    if (nsegs >= fd_budget())
        return fr_errorf(FR_ERR_NO_MEM, "%zu shared segments hold a quarter of the descriptor "
                                        "limit (RLIMIT_NOFILE); no more", nsegs);
    size_t pg = page_size();
    if (size > SIZE_MAX - pg || size > (size_t)INT64_MAX - pg)
        return fr_errorf(FR_ERR_NO_MEM, "shared segment of %zu bytes is too large", size);
    size_t bytes = size ? (size + pg - 1) & ~(pg - 1) : pg;

    seg s = {.named = 0};
    s.fd = b == FR_SEG_MEMFD ? memfd_open() : named_open(s.name, sizeof s.name);
    if (s.fd < 0) {
        if (b == FR_SEG_MEMFD && memfd_missing(errno))
            backend = FR_SEG_UNDECIDED; /* forbidden since the probe: probe again next time */
        return sys_error(b == FR_SEG_MEMFD ? "memfd_create" : "shm_open", size);
    }
    s.named = b == FR_SEG_NAMED;
    int rc = MPI_SUCCESS;
    struct stat st;
    if (ftruncate(s.fd, (off_t)bytes) != 0)
        rc = sys_error("ftruncate", size);
    else if (fstat(s.fd, &st) != 0)
        rc = sys_error("fstat", size);
    if (rc == MPI_SUCCESS) {
        /* Peers map all of it: it must never shrink under them (SIGBUS) nor grow. memfd only;
         * a file made without MFD_ALLOW_SEALING refuses, which is harmless. */
        if (b == FR_SEG_MEMFD)
            (void)fcntl(s.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
        /* memfd starts at 0777; nothing reaches it by name, but keep it owner-only anyway. */
        (void)fchmod(s.fd, 0600);
        s.base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
        if (s.base == MAP_FAILED)
            rc = sys_error("mmap", size);
    }
    if (rc != MPI_SUCCESS) {
        if (s.named)
            shm_unlink(s.name);
        close(s.fd);
        return rc;
    }
    s.size = bytes;
    s.ino = (uint64_t)st.st_ino;
    s.serial = next_serial++;

    fr_grow(&segs, &cap_segs, nsegs + 1, sizeof *segs);
    size_t i = upper_bound(s.base);
    memmove(&segs[i + 1], &segs[i], (nsegs - i) * sizeof *segs);
    segs[i] = s;
    nsegs++;
    *addr = s.base;
    return MPI_SUCCESS;
}

int fr_seg_free(void *addr)
{
    seg *s = find(addr);
    if (!s || s->base != addr)
        return fr_errorf(FR_ERR_BASE, "no shared segment starts at %p", addr);
    munmap(s->base, s->size);
    if (s->named)
        shm_unlink(s->name);
    close(s->fd);
    size_t i = (size_t)(s - segs);
    memmove(&segs[i], &segs[i + 1], (nsegs - i - 1) * sizeof *segs);
    nsegs--;
    return MPI_SUCCESS;
}

int fr_seg_lookup(const void *addr, size_t len, fr_seg_ref *ref)
{
    const seg *s = find(addr);
    if (!s)
        return 0;
    size_t off = (size_t)((const char *)addr - s->base);
    if (len > s->size - off)
        return 0;
    memset(ref, 0, sizeof *ref);
    ref->fd = s->fd;
    ref->named = (uint32_t)s->named;
    ref->serial = s->serial;
    ref->ino = s->ino;
    ref->size = s->size;
    ref->offset = off;
    if (s->named)
        memcpy(ref->name, s->name, sizeof ref->name);
    return 1;
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
