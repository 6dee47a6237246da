/* shm_map.c - mapping node peers' segments, and cross-memory attach (see shm_map.h).
 *
 * Permissions: pidfd_getfd, opening /proc/<pid>/fd/N and process_vm_readv/writev all need ptrace
 * access to the peer: same user and, under Yama ptrace_scope 1, a peer that allowed us
 * (fr_peer_access_allow). glibc 2.36 has no pidfd wrappers: raw system calls. */
#define _GNU_SOURCE /* process_vm_readv/writev */
#include "shm_map.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

typedef struct remote_map {
    void *base;
    size_t size;
    uint64_t ino, owner; /* of the segment, as its owner described it */
    int refs;            /* 0: idle, kept for the owner's reuse of the segment (below) */
} remote_map;

static fr_u64map procs; /* pid -> fr_peer_proc */

/* Idle mappings: a peer's segment that no window uses any more stays mapped, if small, because
 * its owner keeps it as a spare and hands the same segment (same serial) to its next window of
 * that size (shm_seg.c says why that pays). At most FR_MAP_IDLE of them, FR_SEG_SPARE_BYTES
 * together, oldest first. An idle mapping keeps its file, so up to that much memory of segments
 * their owners freed stays in use until the mapping is pushed out, or until MPI_Finalize. A
 * peer's record lives while a window uses it or it has idle mappings. */
#define FR_MAP_IDLE 64
static struct idle_map {
    fr_peer_proc *pp;
    uint64_t serial;
} idle[FR_MAP_IDLE];
static size_t nidle, idle_bytes;

static void proc_close(fr_peer_proc *p);

static void map_drop(fr_peer_proc *pp, uint64_t serial, remote_map *m)
{
    fr_u64map_del(&pp->maps, serial);
    munmap(m->base, m->size);
    free(m);
}

/* Take entry i out of the idle list (its mapping is in use again, or goes). */
static void idle_remove(size_t i)
{
    remote_map *m = fr_u64map_get(&idle[i].pp->maps, idle[i].serial);
    idle_bytes -= m->size;
    idle[i].pp->idle--;
    memmove(&idle[i], &idle[i + 1], (--nidle - i) * sizeof *idle);
}

static size_t idle_find(const fr_peer_proc *pp, uint64_t serial)
{
    size_t i = 0;
    while (i < nidle && (idle[i].pp != pp || idle[i].serial != serial))
        i++;
    return i;
}

/* The oldest idle mapping goes, and its peer's record with it when nothing else holds that. */
static void idle_evict(void)
{
    fr_peer_proc *pp = idle[0].pp;
    uint64_t serial = idle[0].serial;
    idle_remove(0);
    map_drop(pp, serial, fr_u64map_get(&pp->maps, serial));
    if (pp->refs == 0 && pp->idle == 0) {
        fr_u64map_del(&procs, (uint64_t)pp->pid);
        proc_close(pp);
    }
}

/* m, no longer used by any window: kept idle if small, else unmapped. */
static void idle_keep(fr_peer_proc *pp, uint64_t serial, remote_map *m)
{
    if (m->size > FR_SEG_SPARE_MAX) {
        map_drop(pp, serial, m);
        return;
    }
    while (nidle > 0 && (nidle == FR_MAP_IDLE || idle_bytes + m->size > FR_SEG_SPARE_BYTES))
        idle_evict();
    idle[nidle].pp = pp;
    idle[nidle].serial = serial;
    nidle++;
    idle_bytes += m->size;
    pp->idle++;
}

static int sys_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

static int sys_pidfd_getfd(int pidfd, int fd)
{
#ifdef SYS_pidfd_getfd
    return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int fr_peer_proc_open(pid_t pid, fr_peer_proc **pp)
{
    if (pid <= 0)
        return fr_errorf(FR_ERR_SHM, "peer process id %ld is not valid", (long)pid);
    fr_peer_proc *p = fr_u64map_get(&procs, (uint64_t)pid);
    if (p) {
        p->refs++;
        *pp = p;
        return MPI_SUCCESS;
    }
    /* Checks that the process exists, and whether pidfds work here; the pidfd is not kept
     * (take_fd opens one for each mapping): one per peer would make a process's descriptors
     * grow with its node peers. */
    int pidfd = sys_pidfd_open(pid);
    if (pidfd < 0 && errno != ENOSYS && errno != EPERM) /* those two: use /proc instead */
        return fr_errorf(FR_ERR_SHM, "pidfd_open of process %ld: %s", (long)pid, strerror(errno));
    if (pidfd >= 0)
        close(pidfd);
    p = fr_xcalloc(1, sizeof *p);
    p->pid = pid;
    p->pidfd_works = pidfd >= 0;
    p->refs = 1;
    fr_u64map_init(&p->maps);
    fr_u64map_put(&procs, (uint64_t)pid, p);
    *pp = p;
    return MPI_SUCCESS;
}

static void unmap_one(uint64_t serial, void *val, void *arg)
{
    remote_map *m = val;
    munmap(m->base, m->size);
    free(m);
}

/* Unmap everything of p, idle mappings included, and free its record (already out of procs). */
static void proc_close(fr_peer_proc *p)
{
    for (size_t i = nidle; i-- > 0;)
        if (idle[i].pp == p)
            idle_remove(i);
    fr_u64map_each(&p->maps, unmap_one, NULL);
    fr_u64map_destroy(&p->maps);
    free(p);
}

void fr_peer_proc_release(fr_peer_proc *pp)
{
    if (!pp || --pp->refs > 0 || pp->idle > 0)
        return;
    fr_u64map_del(&procs, (uint64_t)pp->pid);
    proc_close(pp);
}

/* A descriptor of pp's segment here, by the first way that works; -1 with the reasons in why. */
static int take_fd(fr_peer_proc *pp, const fr_seg_ref *ref, char *why, size_t n)
{
    int fd = -1;
    size_t used = 0;
    if (pp->pidfd_works) {
        /* A pidfd of the moment, closed at once: the peer is a member of the window being
         * set up, so alive, and the inode check of the caller catches any other file. */
        int pidfd = sys_pidfd_open(pp->pid), err = errno;
        if (pidfd >= 0) {
            fd = sys_pidfd_getfd(pidfd, ref->fd);
            err = errno;
            close(pidfd);
            if (fd >= 0)
                return fd;
        }
        used += (size_t)snprintf(why + used, n - used, "%s: %s",
                                 pidfd >= 0 ? "pidfd_getfd" : "pidfd_open", strerror(err));
    }
    /* Reopening the peer's descriptor through /proc works without pidfd_getfd (kernels before
     * 5.6), under the same ptrace rules. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)pp->pid, (int)ref->fd);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    if (used < n)
        used += (size_t)snprintf(why + used, n - used, "%sopen %s: %s", used ? "; " : "", path,
                                 strerror(errno));
    if (ref->named && ref->name[0]) {
        char name[FR_SEG_NAME_MAX];
        memcpy(name, ref->name, sizeof name);
        name[sizeof name - 1] = '\0';
        fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
        if (fd >= 0)
            return fd;
        if (used < n)
            snprintf(why + used, n - used, "; shm_open %s: %s", name, strerror(errno));
    }
    return -1;
}

int fr_seg_map_remote(fr_peer_proc *pp, const fr_seg_ref *ref, void **base)
{
    remote_map *m = fr_u64map_get(&pp->maps, ref->serial);
    if (m && m->refs == 0 && (m->ino != ref->ino || m->owner != ref->owner || m->size != ref->size)) {
        /* idle, of a process that had this pid before: not this segment */
        idle_remove(idle_find(pp, ref->serial));
        map_drop(pp, ref->serial, m);
        m = NULL;
    }
    if (m) {
        if (m->refs++ == 0)
            idle_remove(idle_find(pp, ref->serial));
        *base = m->base;
        return MPI_SUCCESS;
    }
    if (ref->serial == 0 || ref->serial == FR_U64MAP_TOMB || ref->size == 0 ||
        ref->size > (uint64_t)SIZE_MAX)
        return fr_errorf(FR_ERR_SHM, "malformed segment reference from process %ld",
                         (long)pp->pid);
    char why[384] = "";
    int fd = take_fd(pp, ref, why, sizeof why);
    if (fd < 0)
        return fr_errorf(FR_ERR_SHM, "cannot reach segment %d of process %ld: %s", (int)ref->fd,
                         (long)pp->pid, why);
    /* The descriptor number may have been reused (freed segment, or a pid from another
     * namespace): make sure this is the file the owner described before trusting its size. */
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != ref->ino || st.st_size < 0 ||
        (uint64_t)st.st_size < ref->size) {
        close(fd);
        return fr_errorf(FR_ERR_SHM, "descriptor %d of process %ld is not the segment it "
                                     "published (inode or size differ)", (int)ref->fd,
                         (long)pp->pid);
    }
    void *p = mmap(NULL, (size_t)ref->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    close(fd); /* the mapping keeps the segment alive */
    if (p == MAP_FAILED)
        return fr_errorf(err == ENOMEM ? FR_ERR_NO_MEM : FR_ERR_SHM,
                         "mmap of %llu bytes of process %ld's segment: %s",
                         (unsigned long long)ref->size, (long)pp->pid, strerror(err));
    m = fr_xmalloc(sizeof *m);
    m->base = p;
    m->size = (size_t)ref->size;
    m->ino = ref->ino;
    m->owner = ref->owner;
    m->refs = 1;
    fr_u64map_put(&pp->maps, ref->serial, m);
    *base = p;
    return MPI_SUCCESS;
}

void fr_seg_unmap_remote(fr_peer_proc *pp, uint64_t serial)
{
    remote_map *m = fr_u64map_get(&pp->maps, serial);
    if (!m || m->refs == 0 || --m->refs > 0)
        return;
    idle_keep(pp, serial, m);
}

size_t fr_seg_remote_count(const fr_peer_proc *pp) { return pp->maps.used; }

/* ---- cross-memory attach ---- */

static volatile uint64_t probe_word; /* random, non-zero, set on first use */

void fr_cma_probe_self(fr_cma_probe *out)
{
    while (probe_word == 0) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r ^ 0x9E3779B97F4A7C15ull;
        probe_word = r;
    }
    out->addr = (uint64_t)(uintptr_t)&probe_word;
    out->token = probe_word;
}

static int cma_error(const char *what, pid_t pid)
{
    int err = errno;
    const char *hint = err == EPERM ? " (ptrace restrictions: Yama ptrace_scope, seccomp, or "
                                      "another user)"
                       : err == ESRCH ? " (the process is gone)"
                       : err == ENOSYS ? " (kernel without cross-memory attach)"
                                       : "";
    return fr_errorf(FR_ERR_SHM, "%s with process %ld: %s%s", what, (long)pid, strerror(err),
                     hint);
}

int fr_cma_usable(pid_t pid, const fr_cma_probe *peer)
{
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got};
    struct iovec r = {(void *)(uintptr_t)peer->addr, sizeof got};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n != (ssize_t)sizeof got) {
        if (n >= 0)
            errno = EFAULT;
        cma_error("process_vm_readv probe", pid);
        return 0;
    }
    if (got != peer->token) {
        fr_errorf(FR_ERR_SHM, "process %ld is not the one that published the probe (another "
                              "pid namespace?)", (long)pid);
        return 0;
    }
    return 1;
}

typedef ssize_t (*cma_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                          unsigned long, unsigned long);

static size_t iov_total(const struct iovec *v, size_t n)
{
    size_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += v[i].iov_len;
    return t;
}

/* Position in an iovec list. */
typedef struct cursor {
    const struct iovec *v;
    size_t n, i, off;
} cursor;

/* Fill out[] with up to max vectors from c's position on. */
static unsigned long batch(const cursor *c, struct iovec *out, size_t max)
{
    size_t k = 0;
    for (size_t i = c->i, off = c->off; i < c->n && k < max; i++, off = 0) {
        if (c->v[i].iov_len == off)
            continue;
        out[k].iov_base = (char *)c->v[i].iov_base + off;
        out[k].iov_len = c->v[i].iov_len - off;
        k++;
    }
    return k;
}

static void advance(cursor *c, size_t bytes)
{
    while (bytes > 0 && c->i < c->n) {
        size_t left = c->v[c->i].iov_len - c->off;
        if (bytes < left) {
            c->off += bytes;
            return;
        }
        bytes -= left;
        c->i++;
        c->off = 0;
    }
}

static int cma_xfer(cma_fn fn, const char *what, pid_t pid, const struct iovec *local,
                    size_t nlocal, const struct iovec *remote, size_t nremote)
{
    size_t total = iov_total(local, nlocal);
    if (total != iov_total(remote, nremote))
        return fr_errorf(FR_ERR_ARG, "%s: local and remote lists hold %zu and %zu bytes", what,
                         total, iov_total(remote, nremote));
    if (total == 0)
        return MPI_SUCCESS;
    size_t done = 0;
    if (nlocal <= IOV_MAX && nremote <= IOV_MAX) { /* the usual case: one call moves it all */
        ssize_t n = fn(pid, local, nlocal, remote, nremote, 0);
        if (n < 0 && errno != EINTR)
            return cma_error(what, pid);
        if ((size_t)(n > 0 ? n : 0) == total)
            return MPI_SUCCESS;
        done = n > 0 ? (size_t)n : 0;
    }
    /* The kernel stopped short (it does at an iovec element it cannot reach, or signals), or
     * a list is longer than one call takes: go on from where it stopped. */
    cursor lc = {local, nlocal, 0, 0}, rc = {remote, nremote, 0, 0};
    advance(&lc, done);
    advance(&rc, done);
    struct iovec *lv = fr_xmalloc(2 * IOV_MAX * sizeof *lv), *rv = lv + IOV_MAX;
    int result = MPI_SUCCESS;
    while (done < total) {
        unsigned long nl = batch(&lc, lv, IOV_MAX), nr = batch(&rc, rv, IOV_MAX);
        ssize_t n = fn(pid, lv, nl, rv, nr, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EFAULT; /* no progress: an address the kernel cannot reach */
            result = cma_error(what, pid);
            break;
        }
        advance(&lc, (size_t)n);
        advance(&rc, (size_t)n);
        done += (size_t)n;
    }
    free(lv);
    return result;
}

int fr_cma_read(pid_t pid, const struct iovec *local, size_t nlocal,
                const struct iovec *remote, size_t nremote)
{
    return cma_xfer(process_vm_readv, "process_vm_readv", pid, local, nlocal, remote, nremote);
}

int fr_cma_write(pid_t pid, const struct iovec *local, size_t nlocal,
                 const struct iovec *remote, size_t nremote)
{
    return cma_xfer(process_vm_writev, "process_vm_writev", pid, local, nlocal, remote, nremote);
}

/* Under Yama ptrace_scope 1 a process may attach only to its descendants, and MPI ranks are
 * siblings: declare that any process of ours may attach (what scope 0 allows anyway; other
 * users stay excluded by the ordinary ptrace rules). Harmless without Yama (EINVAL, ignored);
 * scopes 2 and 3 cannot be lifted this way, and fr_cma_usable() then says no. */
void fr_peer_access_allow(void)
{
#ifdef PR_SET_PTRACER
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
}

static void collect(uint64_t key, void *val, void *arg)
{
    fr_peer_proc ***out = arg;
    *(*out)++ = val;
}

void fr_shm_map_finalize(void)
{
    if (procs.used == 0) {
        fr_u64map_destroy(&procs);
        return;
    }
    fr_peer_proc **all = fr_xcalloc(procs.used, sizeof *all), **end = all;
    fr_u64map_each(&procs, collect, &end);
    for (fr_peer_proc **p = all; p < end; p++)
        proc_close(*p);
    free(all);
    fr_u64map_destroy(&procs);
}
