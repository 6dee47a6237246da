/* page_hold.c - holding stores to pages while they move (see page_hold.h).
 *
 * One userfaultfd per process, made at the first hold and kept until MPI_Finalize. A hold
 * registers the range for missing-page and write-protect faults and protects it
 * (UFFDIO_WRITEPROTECT): the kernel changes the page table entries and flushes every CPU's TLB
 * before the ioctl returns, so no store can complete there afterwards. A page that was never
 * touched has no entry to protect; a store to it faults as missing instead, which the same
 * registration catches (for shared memory the kernel also leaves markers in empty entries).
 * A store that faults waits in the kernel, on the userfaultfd, with the mm's lock released, so
 * the mover can replace the mapping meanwhile. Nobody ever reads a fault message: UFFDIO_WAKE
 * wakes the waiters of the range, and each retries its access from the start, now on the new
 * mapping, which is not registered. System calls that write into the range wait the same way,
 * since the descriptor is made without UFFD_USER_MODE_ONLY.
 *
 * Missing-page faults make reads of untouched pages wait too, the holder's own included: it
 * must read the held range only where pages exist, and in a way that fails rather than waits
 * should one vanish meanwhile (shm_seg.c reads through /proc/self/mem).
 *
 * ThreadSanitizer cannot see that ordering: it would take the mover's copy and the mmap that
 * replaces the pages for accesses racing with the waiting stores. In a TSan build the holding
 * thread's own accesses are ignored for the hold, which is exactly what the hold orders. */
#define _GNU_SOURCE
#include "page_hold.h"

#include "core/fr.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Older kernel headers lack the device and UFFDIO_MOVE (Linux 6.8); the running kernel
 * decides. */
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE (1 << 16)
#define _UFFDIO_MOVE 0x05
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((uint64_t)1 << 1)
struct uffdio_move {
    uint64_t dst, src, len, mode;
    int64_t move;
};
#define UFFDIO_MOVE _IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

#if defined(__SANITIZE_THREAD__)
#define FR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FR_TSAN 1
#endif
#endif
#ifdef FR_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
static void tsan_ignore(int on)
{
    if (on) {
        AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
        AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    } else {
        AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
        AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    }
}
#else
static void tsan_ignore(int on) { (void)on; }
#endif

/* Write protection of anonymous memory (Linux 5.7) and of shared memory (5.19), missing pages
 * of shared memory (4.11). */
#define NEEDED                                                                                    \
    ((uint64_t)(UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_WP_HUGETLBFS_SHMEM |                \
                UFFD_FEATURE_MISSING_SHMEM))

static int uffd = -1;
static int can_take; /* UFFDIO_MOVE: pages can be taken out of a held range (fr_hold_take) */
static int decided; /* 0: not yet; 1: uffd usable; -1: not available (why_not) */
static const char *why_not = "";

/* A userfaultfd that also takes the kernel's own faults: the system call, else the device
 * (Linux 6.1+), whose permissions an administrator may open without the sysctl. */
static int uffd_open(void)
{
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 || (errno != EPERM && errno != EACCES))
        return fd;
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev < 0) {
        errno = EPERM;
        return -1;
    }
    fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
    close(dev);
    return fd;
}

static int decide(void)
{
    /* The API handshake takes the features once per descriptor; a first one asks which the
     * kernel has (features 0 returns them all). */
    int probe = uffd_open();
    if (probe < 0) {
        why_not = errno == EPERM ? "userfaultfd needs root, vm.unprivileged_userfaultfd=1 or "
                                   "access to /dev/userfaultfd"
                                 : "no userfaultfd in this kernel";
        return -1;
    }
    struct uffdio_api api = {.api = UFFD_API};
    int ok = ioctl(probe, UFFDIO_API, &api) == 0 && (api.features & NEEDED) == NEEDED;
    close(probe);
    if (!ok) {
        why_not = "userfaultfd lacks write protection of shared memory (Linux 5.19)";
        return -1;
    }
    uint64_t move = api.features & (uint64_t)UFFD_FEATURE_MOVE;
    uffd = uffd_open();
    api = (struct uffdio_api){.api = UFFD_API, .features = NEEDED | move};
    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) != 0) {
        if (uffd >= 0)
            close(uffd);
        uffd = -1;
        why_not = "userfaultfd could not be set up";
        return -1;
    }
    can_take = move != 0 && !fr_opt.test_no_move;
    return 1;
}

int fr_hold_available(const char **why)
{
    if (!decided)
        decided = decide();
    if (why)
        *why = decided > 0 ? "" : why_not;
    return decided > 0;
}

int fr_hold_can_take(void) { return fr_hold_available(NULL) && can_take; }

static struct uffdio_range range_of(const fr_hold *h)
{
    return (struct uffdio_range){(uint64_t)(uintptr_t)h->at, h->bytes};
}

int fr_hold_begin(void *at, size_t bytes, fr_hold *h)
{
    const char *why;
    if (!fr_hold_available(&why))
        return fr_errorf(FR_ERR_SHM, "holding stores to [%p, +%zu): %s", at, bytes, why);
    *h = (fr_hold){.at = at, .bytes = bytes};
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &h->saved);
    struct uffdio_register reg = {.range = range_of(h), .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP};
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
        int err = errno;
        pthread_sigmask(SIG_SETMASK, &h->saved, NULL);
        return fr_errorf(FR_ERR_SHM, "holding stores to [%p, +%zu): UFFDIO_REGISTER: %s", at,
                         bytes, strerror(err));
    }
    struct uffdio_writeprotect wp = {.range = range_of(h), .mode = UFFDIO_WRITEPROTECT_MODE_WP};
    if (!(reg.ioctls & ((uint64_t)1 << _UFFDIO_WRITEPROTECT)) ||
        ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0) {
        int err = errno;
        struct uffdio_range r = range_of(h);
        (void)ioctl(uffd, UFFDIO_UNREGISTER, &r);
        pthread_sigmask(SIG_SETMASK, &h->saved, NULL);
        return fr_errorf(FR_ERR_SHM, "holding stores to [%p, +%zu): UFFDIO_WRITEPROTECT: %s", at,
                         bytes, strerror(err));
    }
    tsan_ignore(1);
    return MPI_SUCCESS;
}

/* Move [src, src + len) to dst, where the kernel allows: returns the bytes moved before a
 * refusal (len: all), with errno set when short. One UFFDIO_MOVE takes a range within one
 * mapping (EINVAL otherwise): a range over several (a window over memory that an earlier
 * window gave back, part of a heap) moves in halves until each lies in one. */
static size_t move_pages(char *dst, char *src, size_t len)
{
    size_t done = 0, pg = (size_t)sysconf(_SC_PAGESIZE);
    while (done < len) {
        struct uffdio_move mv = {.dst = (uint64_t)(uintptr_t)(dst + done),
                                 .src = (uint64_t)(uintptr_t)(src + done),
                                 .len = len - done,
                                 .mode = UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES};
        int rc = ioctl(uffd, UFFDIO_MOVE, &mv);
        int err = errno;
        if (mv.move > 0)
            done += (size_t)mv.move;
        if (rc == 0)
            break;
        if (err == EAGAIN) /* a page was busy for a moment; go on from there */
            continue;
        size_t rest = len - done;
        if (err == EINVAL && mv.move <= 0 && rest > pg) {
            size_t half = rest / pg / 2 * pg;
            size_t first = move_pages(dst + done, src + done, half);
            if (first < half)
                return done + first;
            return done + half + move_pages(dst + done + half, src + done + half, rest - half);
        }
        errno = err;
        return done;
    }
    return len;
}

int fr_hold_take(fr_hold *h)
{
    if (!can_take)
        return MPI_SUCCESS;
    /* The destination must be registered with this descriptor and look like the source to
     * the kernel (same access and page protection): a private anonymous mapping registered the
     * same way. Reading it where nothing moved waits like the range itself. */
    char *to = mmap(NULL, h->bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (to == MAP_FAILED)
        return fr_errorf(FR_ERR_SHM, "taking the pages of [%p, +%zu): mmap: %s", (void *)h->at,
                         h->bytes, strerror(errno));
    struct uffdio_register reg = {.range = {(uint64_t)(uintptr_t)to, h->bytes},
                                  .mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP};
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) {
        int err = errno;
        munmap(to, h->bytes);
        return fr_errorf(FR_ERR_SHM, "taking the pages of [%p, +%zu): UFFDIO_REGISTER: %s",
                         (void *)h->at, h->bytes, strerror(err));
    }
    size_t moved = move_pages(to, h->at, h->bytes);
    if (moved == h->bytes) {
        h->taken = to;
        return MPI_SUCCESS;
    }
    int err = errno;
    if (move_pages(h->at, to, moved) != moved) /* never refused: the pages just left there */
        fr_fatal("could not put back the pages taken from [%p, +%zu): %s", (void *)h->at,
                 moved, strerror(errno));
    munmap(to, h->bytes);
    return fr_errorf(FR_ERR_SHM,
                     "the pages of [%p, +%zu) cannot move: %s (a page is pinned for I/O or "
                     "shared with a forked process)",
                     (void *)h->at, h->bytes, strerror(err));
}

void fr_hold_end(fr_hold *h, int replaced)
{
    struct uffdio_range r = range_of(h);
    tsan_ignore(0);
    if (h->taken && !replaced && move_pages(h->at, h->taken, h->bytes) != h->bytes)
        fr_fatal("could not put back the pages taken from [%p, +%zu): %s", (void *)h->at,
                 h->bytes, strerror(errno));
    if (!replaced) {
        /* Lifting the protection wakes the waiters too; unregistering merges the mapping back. */
        struct uffdio_writeprotect wp = {.range = r, .mode = 0};
        if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0 || ioctl(uffd, UFFDIO_UNREGISTER, &r) != 0)
            fr_fatal("could not lift the write protection of [%p, +%zu): %s", (void *)h->at,
                     h->bytes, strerror(errno));
    }
    if (ioctl(uffd, UFFDIO_WAKE, &r) != 0)
        fr_fatal("could not wake the stores held at [%p, +%zu): %s", (void *)h->at, h->bytes,
                 strerror(errno));
    if (h->taken)
        munmap(h->taken, h->bytes);
    h->taken = NULL;
    pthread_sigmask(SIG_SETMASK, &h->saved, NULL);
}

void fr_hold_finalize(void)
{
    if (uffd >= 0)
        close(uffd);
    uffd = -1;
    decided = 0;
}
