/* t_adopt_pinned.c - a page pinned for I/O is never moved by MPI_Win_create (page_hold.h,
 * fr_hold_take).
 *
 * Adopting a window moves its pages into a shared segment. A write the kernel makes through a
 * pin (a device's DMA, O_DIRECT, io_uring's registered buffers, another process's
 * process_vm_writev) goes to the physical page it pinned, not through the page tables: had the
 * page moved, that write would land in the old page and the program would never see it. Each
 * rank registers pages of its buffer with io_uring (a long-term pin, as an RDMA registration
 * makes), creates a window over the buffer, and then has io_uring read a pipe into the pinned
 * pages:
 *  - with every page pinned, and with only the third of four pinned, the window is not adopted
 *    (the memory stays private), every byte the program wrote before is still there (pages
 *    taken before the refusal went back), and the read through the pin is seen by the program;
 *  - node peers' puts and gets into such a window still land (by the paths for unmapped memory);
 *  - once the pin is gone, a window over the same pages is adopted (where adoption happens at
 *    all: node peers through rings, userfaultfd with UFFDIO_MOVE);
 *  - a window over memory of several mappings (pages an earlier window gave back, and their
 *    neighbours) is adopted too, its bytes kept: UFFDIO_MOVE takes one mapping at a time.
 * On a kernel without UFFDIO_MOVE (before Linux 6.8; FLEXRMA_TEST_NO_MOVE=1 pretends so, the
 * .nomove variant) nothing is adopted, so the pinned parts pass the same way; they are skipped,
 * saying so, where io_uring is unavailable (kernel.io_uring_disabled, seccomp) or where
 * FLEXRMA_ADOPT=2 adopts without UFFDIO_MOVE (pins are then lost: the user accepted that).
 * Linked with the internal library: it reads fr_opt, fr_adopt_count and page_hold.h. */
#define _GNU_SOURCE
#include "common.h"
#include "maps_common.h"
#include "core/fr.h"
#include "node/page_hold.h"
#include "node/shm_adopt.h"

#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGES 4

static size_t pg;

/* ---- just enough io_uring: one ring, one registered buffer, READ_FIXED ---- */

typedef struct ring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
} ring;

static int ring_open(ring *r)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
    if (r->fd < 0)
        return 0;
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (cq_len > sq_len)
        sq_len = cq_len; /* one mapping for both (IORING_FEAT_SINGLE_MMAP, Linux 5.4) */
    char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                    IORING_OFF_SQ_RING);
    r->sqes = mmap(NULL, p.sq_entries * sizeof *r->sqes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || r->sqes == MAP_FAILED || !(p.features & IORING_FEAT_SINGLE_MMAP))
        return 0;
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(sq + p.cq_off.head);
    r->cq_tail = (unsigned *)(sq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(sq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(sq + p.cq_off.cqes);
    return 1;
}

/* Pin [at, at + n) as the ring's buffer 0 (get_user_pages with FOLL_PIN | FOLL_LONGTERM). */
static int ring_pin(ring *r, void *at, size_t n)
{
    struct iovec v = {at, n};
    return syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_BUFFERS, &v, 1) == 0;
}

static int ring_unpin(ring *r)
{
    return syscall(__NR_io_uring_register, r->fd, IORING_UNREGISTER_BUFFERS, NULL, 0) == 0;
}

/* Read n bytes of fd into `at` (within buffer 0) through the pin; the bytes read, or -errno. */
static int ring_read_fixed(ring *r, int fd, void *at, unsigned n)
{
    unsigned tail = *r->sq_tail, i = tail & *r->sq_mask;
    struct io_uring_sqe *e = &r->sqes[i];
    memset(e, 0, sizeof *e);
    e->opcode = IORING_OP_READ_FIXED;
    e->fd = fd;
    e->addr = (uint64_t)(uintptr_t)at;
    e->len = n;
    e->off = (uint64_t)-1; /* a pipe: its current position */
    e->buf_index = 0;
    r->sq_array[i] = i;
    __atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -1;
    unsigned head = *r->cq_head;
    if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
        return -1;
    int res = r->cqes[head & *r->cq_mask].res;
    __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
}

/* ---- the test ---- */

static unsigned char byte_of(int r, size_t i) { return (unsigned char)(r * 37 + i * 11 + 1); }

/* [from, to) of m holds my stamp, byte_of(rank, offset) */
static void stamp(unsigned char *m, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        m[i] = byte_of(rank, i);
}

static int stamped(const unsigned char *m, size_t n)
{
    int all = 1;
    for (size_t i = 0; i < n; i++)
        all &= m[i] == byte_of(rank, i);
    return all;
}

/* PAGES page-aligned pages from posix_memalign, stamped */
static unsigned char *stamped_pages(void)
{
    unsigned char *m;
    if (posix_memalign((void **)&m, pg, PAGES * pg) != 0)
        abort();
    stamp(m, 0, PAGES * pg);
    return m;
}

/* A message into the pinned pages through the pin, after the window exists: seen? */
static int read_through_pin(ring *r, unsigned char *at)
{
    static const char msg[] = "written through the pin";
    int p[2];
    if (pipe(p) != 0 || write(p[1], msg, sizeof msg) != (ssize_t)sizeof msg)
        return 0;
    int n = ring_read_fixed(r, p[0], at, sizeof msg);
    close(p[0]);
    close(p[1]);
    return n == (int)sizeof msg && memcmp(at, msg, sizeof msg) == 0;
}

/* Peers' puts at both ends of my window and a get of each one's own bytes, in a fence epoch. */
static int peers_reach(unsigned char *m, MPI_Win win)
{
    size_t bytes = PAGES * pg;
    unsigned char got[8] = {0};
    int t = right(), from = left();
    unsigned char mine[8];
    for (int i = 0; i < 8; i++)
        mine[i] = byte_of(rank, 1000 + (size_t)i);
    MPI_Win_fence(0, win);
    MPI_Put(mine, 8, MPI_BYTE, t, (MPI_Aint)(bytes - 8), 8, MPI_BYTE, win);
    MPI_Get(got, 8, MPI_BYTE, t, 2 * (MPI_Aint)pg, 8, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    int right_data = 1;
    for (int i = 0; i < 8; i++)
        right_data &= m[bytes - 8 + (size_t)i] == byte_of(from, 1000 + (size_t)i) &&
                      got[i] == byte_of(t, 2 * pg + (size_t)i);
    int all;
    MPI_Allreduce(&right_data, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

#define PINNED_CHECKS 5
/* pin_first..pin_first+pin_pages of the PAGES pages pinned */
static void test_pinned(ring *r, const char *what, size_t pin_first, size_t pin_pages)
{
    size_t bytes = PAGES * pg;
    unsigned char *m = stamped_pages();
    int pinned = ring_pin(r, m + pin_first * pg, pin_pages * pg);
    size_t before = fr_adopt_count();
    MPI_Win win;
    MPI_Win_create(m, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    ok(pinned && private_memory(m) && private_memory(m + bytes - 1) &&
           fr_adopt_count() == before,
       "%s pinned: the window is not adopted", what);
    ok(stamped(m, bytes), "%s pinned: every byte is where the program wrote it", what);
    ok(read_through_pin(r, m + pin_first * pg + 100),
       "%s pinned: io_uring's read through the pin is seen by the program", what);
    /* restore the bytes the read replaced: peers check them */
    stamp(m, pin_first * pg + 100, pin_first * pg + 100 + 64);
    ok(peers_reach(m, win), "%s pinned: node peers' puts and gets land", what);
    MPI_Win_free(&win);
    ok(ring_unpin(r) && private_memory(m), "%s pinned: the pin is released after MPI_Win_free",
       what);
    free(m);
}

#define UNPINNED_CHECKS 4
static void test_unpinned(int adopting)
{
    unsigned char *m = stamped_pages();
    MPI_Win win;
    MPI_Win_create(m, (MPI_Aint)(PAGES * pg), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (adopting)
        ok(!private_memory(m), "unpinned: the same kind of window is adopted");
    else
        skip(1, "nothing is adopted in this run (message transport, no userfaultfd, no UFFDIO_MOVE)");
    ok(peers_reach(m, win), "unpinned: node peers' puts and gets land");
    MPI_Win_free(&win);
    free(m);

    /* Pages an earlier window gave back are a mapping of their own: a window over them and
     * their neighbours spans several mappings, and is adopted all the same (the pages move in
     * pieces that each lie in one mapping). */
    size_t big = 4 * PAGES * pg;
    unsigned char *r = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    stamp(r, 0, big);
    MPI_Win_create(r + PAGES * pg, (MPI_Aint)(PAGES * pg), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
    int pieces = mappings_over(r, r + big);
    MPI_Win_create(r, (MPI_Aint)big, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (adopting)
        ok(pieces > 1 && !private_memory(r) && !private_memory(r + big - 1),
           "several mappings (%d): the window over them is adopted", pieces);
    else
        skip(1, "nothing is adopted in this run (message transport, no userfaultfd, no UFFDIO_MOVE)");
    ok(stamped(r, big), "several mappings: every byte is where the program wrote it");
    MPI_Win_free(&win);
    munmap(r, big);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    pg = (size_t)sysconf(_SC_PAGESIZE);
    tap_plan(2 * PINNED_CHECKS + UNPINNED_CHECKS);
    /* Adoption happens where node peers meet through rings and adoption is on; pages are
     * then taken only where they can be held and UFFDIO_MOVE exists (Linux 6.8). */
    int adopting = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct &&
                   fr_adopt_enabled(NULL);
    ring r;
    int have = ring_open(&r), all;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        skip(2 * PINNED_CHECKS, "io_uring is not available here (kernel.io_uring_disabled, "
                                "seccomp): nothing to pin with");
    } else if (fr_opt.adopt == 2 && !fr_hold_can_take()) { /* the user's choice, not ours */
        skip(2 * PINNED_CHECKS, "FLEXRMA_ADOPT=2 on a kernel without UFFDIO_MOVE (Linux 6.8): "
                                "adoption cannot see pins and moves pinned pages too");
    } else {
        test_pinned(&r, "all pages", 0, PAGES);
        test_pinned(&r, "the third page", 2, 1);
    }
    test_unpinned(adopting);
    return test_done();
}
