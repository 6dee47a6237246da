/* t_adopt.c - MPI_Win_create windows in ordinary memory, shared with node peers in place
 * (node/shm_adopt.h, transport/direct.c).
 *
 * For each kind of memory a program puts windows in, the window's whole pages are adopted
 * exactly when they are ordinary memory (malloc'd, posix_memalign'ed, anonymous mmap, .bss;
 * not the main stack, not MPI_Alloc_mem memory, not a shared mapping) and a node peer reaches
 * this process through the rings. Then:
 *  - the memory keeps its contents when it moves, and peers' puts and gets at both ends and in
 *    the middle land where they should;
 *  - an 8-byte put and get into the adopted pages are copied by the origin (fr_win.st.direct),
 *    a get outside them at any size too (cross-memory attach), where the peer allows it;
 *  - MPI_Win_free gives the pages back: private memory again, contents kept, so free(),
 *    munmap() and a new malloc() work as usual;
 *  - windows over the same pages share one adoption; one that overlaps it in part is not
 *    adopted and still works;
 *  - fork() gives the child a private copy: its stores never reach the parent's window;
 *  - pages never touched are not copied (resident memory grows by far less than the window);
 *  - a block that held a window grows by realloc() afterwards with its contents;
 *  - FLEXRMA_ADOPT off (fr_opt.adopt = 0) adopts nothing.
 * Under FLEXRMA_TRANSPORT=am nothing is adopted and the data must still be right.
 * Linked with the internal library: it reads fr_win and sets fr_opt. */
#include "direct_common.h"
#include "maps_common.h"
#include "node/shm_adopt.h"
#include "win/win.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define WIN_BYTES (64 * 1024)

static size_t pg;
static int adopting; /* node peers reach me through rings, and adoption is on */

static char bss_window[WIN_BYTES] __attribute__((aligned(4096)));

static uint64_t direct_ops(MPI_Win win) { return fr_win_lookup(win)->st.direct; }

static unsigned char byte_of(int r, size_t i) { return (unsigned char)pat(r, (int)i, 0); }

static void fill(unsigned char *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m[i] = byte_of(rank, i);
}

/* Where peers put and get: the first and last 8 bytes (part pages unless page aligned) and 8 in
 * the middle, which lie in a whole page of any window of WIN_BYTES. */
static const size_t spots[3] = {0, WIN_BYTES / 2, WIN_BYTES - 8};

/* Fence epochs on a window of n bytes at m: contents kept; my right neighbour's middle put
 * lands in my window (copied by it when adopted); my get of my left neighbour's middle bytes
 * reads its pattern (copied by me when it is adopted); puts and gets at every spot. */
#define EPOCH_CHECKS 5
static void epochs(const char *kind, unsigned char *m, MPI_Win win, int mapped)
{
    int ok_kept = 1;
    for (size_t i = 0; i < WIN_BYTES; i++)
        ok_kept &= m[i] == byte_of(rank, i);
    ok(ok_kept, "%s: the window's memory kept its contents", kind);

    uint64_t peers_mapped, mine = (uint64_t)mapped;
    MPI_Allreduce(&mine, &peers_mapped, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    unsigned char put[8], got[3][8];
    memset(put, 0xa5 ^ rank, sizeof put);
    MPI_Win_fence(0, win);
    uint64_t before = direct_ops(win);
    MPI_Put(put, 8, MPI_BYTE, right(), (MPI_Aint)spots[1], 8, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    uint64_t put_direct = direct_ops(win) - before;
    before = direct_gets_read(win);
    MPI_Get(got[1], 8, MPI_BYTE, left(), (MPI_Aint)spots[0], 8, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    uint64_t get_direct = direct_gets_read(win) - before;
    if (peers_mapped) {
        is_int((long long)put_direct, 1, "%s: an 8-byte put into mapped pages is a copy", kind);
        is_int((long long)get_direct, 1, "%s: an 8-byte get at a window's end is a copy, or "
                                         "asked", kind);
    } else {
        ok(!adopting || put_direct == 0, "%s: not mapped: an 8-byte put travels", kind);
        ok(1, "%s: not mapped (a get may still be copied by cross-memory attach)", kind);
    }
    int from = left();
    int landed = 1;
    for (size_t i = 0; i < 8; i++)
        landed &= m[spots[1] + i] == (unsigned char)(0xa5 ^ from) && got[1][i] == byte_of(from, i);
    ok(landed, "%s: the middle put landed, the get read the left neighbour's first bytes", kind);

    /* every spot, both ways, at once: each get 8 bytes beside the spot the put of the left
     * neighbour's own left neighbour writes (conflicting accesses are erroneous) */
    size_t beside[3] = {spots[0] + 8, spots[1] + 8, spots[2] - 8};
    for (int s = 0; s < 3; s++) {
        MPI_Put(put, 8, MPI_BYTE, right(), (MPI_Aint)spots[s], 8, MPI_BYTE, win);
        MPI_Get(got[s], 8, MPI_BYTE, left(), (MPI_Aint)beside[s], 8, MPI_BYTE, win);
    }
    MPI_Win_fence(0, win);
    int good = 1;
    for (int s = 0; s < 3; s++)
        for (size_t i = 0; i < 8; i++) {
            good &= m[spots[s] + i] == (unsigned char)(0xa5 ^ from);
            good &= got[s][i] == byte_of(from, beside[s] + i);
        }
    ok(good, "%s: puts and gets at both ends and the middle", kind);
    MPI_Win_fence(0, win);
}

/* Lock epochs at the ends of the part of my right neighbour's window mapped here (p->mapped_lo,
 * mapped_hi: all of it, or an adopted window's whole pages): 8 bytes inside it are copied at
 * once (the short path of MPI_Put, api/rma_ops.h), and 16 bytes across each end land whole,
 * the part outside taking the slower path. Then the window's pattern is put back. */
#define LOCK_CHECKS 3
static void lock_ends(const char *kind, unsigned char *m, MPI_Win win)
{
    const fr_peer *p = &fr_win_lookup(win)->peers[right()];
    MPI_Aint lo = p->mapped ? p->mapped_lo : WIN_BYTES / 4,
             hi = p->mapped ? p->mapped_hi : 3 * WIN_BYTES / 4;
    /* across each end, or beside it where the end is the window's own */
    MPI_Aint at[2] = {lo >= 8 ? lo - 8 : lo + 16, hi <= WIN_BYTES - 8 ? hi - 8 : hi - 32};
    MPI_Aint mine[2]; /* where my left neighbour puts into my window */
    MPI_Sendrecv(at, 2, MPI_AINT, right(), 0, mine, 2, MPI_AINT, left(), 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Aint in = lo + 64; /* 8 bytes inside the mapped pages, clear of the spots and ends */
    unsigned char put[16], back[2][16], back_in[8];
    memset(put, 0x5a ^ rank, sizeof put);
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 16; i++)
            back[e][i] = byte_of(right(), (size_t)at[e] + (size_t)i);
    for (int i = 0; i < 8; i++)
        back_in[i] = byte_of(right(), (size_t)in + (size_t)i);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, win);
    MPI_Put(put, 8, MPI_BYTE, right(), in, 8, MPI_BYTE, win);
    MPI_Win_flush(right(), win); /* the lock is taken by now */
    uint64_t before = direct_ops(win);
    MPI_Put(back_in, 8, MPI_BYTE, right(), in, 8, MPI_BYTE, win);
    uint64_t copied = direct_ops(win) - before;
    for (int e = 0; e < 2; e++)
        MPI_Put(put, 16, MPI_BYTE, right(), at[e], 16, MPI_BYTE, win);
    MPI_Win_unlock(right(), win);
    ok(!p->mapped || copied == 1, "%s: an 8-byte put in a lock epoch into the pages mapped here "
                                  "is copied at once", kind);
    /* Their unlocks have returned; a lock of my own window makes the puts visible to my loads
     * (they may have been applied by my progress agent, .async). */
    MPI_Barrier(MPI_COMM_WORLD);
    int landed = 1;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 16; i++)
            landed &= m[mine[e] + i] == (unsigned char)(0x5a ^ left());
    MPI_Win_unlock(rank, win);
    ok(landed, "%s: 16-byte puts across the ends of the mapped pages land whole", kind);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, win);
    for (int e = 0; e < 2; e++)
        MPI_Put(back[e], 16, MPI_BYTE, right(), at[e], 16, MPI_BYTE, win);
    MPI_Win_unlock(right(), win);
    MPI_Barrier(MPI_COMM_WORLD);
    int restored = 1;
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (size_t i = 0; i < WIN_BYTES; i++)
        restored &= (i >= spots[1] && i < spots[1] + 8) || i < 8 || i >= WIN_BYTES - 8 ||
                    m[i] == byte_of(rank, i);
    MPI_Win_unlock(rank, win);
    ok(restored, "%s: the window's pattern is back", kind);
}

typedef enum kind { K_MALLOC, K_MEMALIGN, K_MMAP, K_BSS, K_STACK, K_ALLOC_MEM, K_SHARED } kind;
static const char *const kind_name[] = {"malloc", "posix_memalign", "mmap", "bss", "stack",
                                        "MPI_Alloc_mem", "shared mapping"};

/* A window in memory of kind k: adopted exactly when it should be, right through its epochs,
 * given back at MPI_Win_free, and the memory then freed as usual. */
#define KIND_CHECKS (EPOCH_CHECKS + LOCK_CHECKS + 4)
static void test_kind(kind k)
{
    const char *name = kind_name[k];
    unsigned char stack[WIN_BYTES + 4096];
    unsigned char *m = NULL;
    switch (k) {
    case K_MALLOC: m = xmalloc(WIN_BYTES); break; /* heap: neither end page aligned */
    case K_MEMALIGN: {
        void *p = NULL;
        if (posix_memalign(&p, pg, WIN_BYTES) == 0)
            m = p;
        break;
    }
    case K_MMAP:
        m = mmap(NULL, WIN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        break;
    case K_BSS: m = (unsigned char *)bss_window; break;
    case K_STACK: m = stack + (pg - (uintptr_t)stack % pg) % pg; break;
    case K_ALLOC_MEM: MPI_Alloc_mem(WIN_BYTES, MPI_INFO_NULL, &m); break;
    case K_SHARED:
        m = mmap(NULL, WIN_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        break;
    }
    if (!m || m == MAP_FAILED) {
        fprintf(stderr, "no memory of kind %s\n", name);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fill(m, WIN_BYTES);
    MPI_Win win;
    MPI_Win_create(m, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    const fr_adopted *a = &fr_win_lookup(win)->adopted;
    int ordinary = k != K_STACK && k != K_ALLOC_MEM && k != K_SHARED;
    uintptr_t lo = ((uintptr_t)m + pg - 1) & ~(pg - 1), hi = ((uintptr_t)m + WIN_BYTES) & ~(pg - 1);
    ok(adopting && ordinary ? a->at == (char *)lo && a->bytes == hi - lo : a->at == NULL,
       "%s: %s", name, adopting && ordinary ? "its whole pages are adopted" : "not adopted");
    ok(!a->at || !private_memory(a->at),
       "%s: adopted pages are a shared mapping while the window lives", name);
    epochs(name, m, win, a->at != NULL || (adopting && k == K_ALLOC_MEM));
    lock_ends(name, m, win);
    char *was = a->at;
    MPI_Win_free(&win);
    ok(!was || private_memory(was), "%s: MPI_Win_free gives the pages back as private memory",
       name);
    int kept = 1; /* my pattern, and my right neighbour's puts */
    for (size_t i = 0; i < WIN_BYTES; i++) {
        int put = (i >= spots[1] && i < spots[1] + 8) || i < 8 || i >= WIN_BYTES - 8;
        kept &= m[i] == (put ? (unsigned char)(0xa5 ^ left()) : byte_of(rank, i));
    }
    switch (k) {
    case K_MALLOC:
        free(m);
        m = xmalloc(WIN_BYTES); /* the heap still works over the given-back pages */
        memset(m, 1, WIN_BYTES);
        free(m);
        break;
    case K_MEMALIGN: free(m); break;
    case K_MMAP:
    case K_SHARED: kept &= munmap(m, WIN_BYTES) == 0; break;
    case K_ALLOC_MEM: MPI_Free_mem(m); break;
    default: break;
    }
    ok(kept, "%s: after MPI_Win_free the memory holds what it held, and frees as usual", name);
}

/* Windows over the same pages share one adoption; one over part of them and part of other
 * memory is not adopted. The pages go back when the last window over them goes. */
#define OVERLAP_CHECKS 5
static void test_overlap(void)
{
    unsigned char *m = NULL;
    if (posix_memalign((void **)&m, pg, 8 * pg) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fill(m, 8 * pg);
    MPI_Win whole, inner, across;
    size_t before = fr_adopt_count();
    MPI_Win_create(m, 4 * pg, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &whole);
    MPI_Win_create(m + pg / 2, 2 * pg, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &inner);
    MPI_Win_create(m + 2 * pg, 4 * pg, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &across);
    is_int((long long)(fr_adopt_count() - before), adopting ? 1 : 0,
           "overlap: windows over the same pages share one adoption");
    ok((fr_win_lookup(inner)->adopted.at != NULL) == adopting &&
           fr_win_lookup(across)->adopted.at == NULL,
       "overlap: a window inside adopted pages shares them, one across their end is not adopted");
    MPI_Win_free(&whole);
    /* through the remaining windows: a put into my right neighbour's inner and across windows */
    unsigned char v = (unsigned char)(0x3c ^ rank);
    MPI_Win_fence(0, inner);
    MPI_Put(&v, 1, MPI_BYTE, right(), (MPI_Aint)pg, 1, MPI_BYTE, inner);
    MPI_Win_fence(0, inner);
    MPI_Win_fence(0, across);
    MPI_Put(&v, 1, MPI_BYTE, right(), (MPI_Aint)(2 * pg), 1, MPI_BYTE, across);
    MPI_Win_fence(0, across);
    unsigned char want = (unsigned char)(0x3c ^ left());
    ok(m[pg / 2 + pg] == want && m[4 * pg] == want,
       "overlap: puts land through both windows after the first is freed");
    ok(!adopting || !private_memory(m + pg), "overlap: still shared while a window uses it");
    MPI_Win_free(&inner);
    MPI_Win_free(&across);
    ok(private_memory(m + pg) && fr_adopt_count() == before,
       "overlap: given back with the last window over the pages");
    free(m);
}

/* WIN_BYTES of posix_memalign'ed pages holding my pattern, and a window over them. */
static unsigned char *paged_window(MPI_Win *win)
{
    unsigned char *m = NULL;
    if (posix_memalign((void **)&m, pg, WIN_BYTES) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fill(m, WIN_BYTES);
    MPI_Win_create(m, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win);
    return m;
}

/* fork() while the window lives: the child sees the window as it was and its stores stay its
 * own; the parent's window goes on working. */
#define FORK_CHECKS 3
static void test_fork(void)
{
    MPI_Win win;
    unsigned char *m = paged_window(&win);
    MPI_Win_fence(0, win);
    pid_t child = fork();
    if (child == 0) { /* no MPI here: look, store, leave */
        int same = 1;
        for (size_t i = 0; i < WIN_BYTES; i++)
            same &= m[i] == byte_of(rank, i);
        memset(m, 0xee, WIN_BYTES);
        _exit(same ? 0 : 1);
    }
    int status = -1;
    if (child > 0)
        waitpid(child, &status, 0);
    ok(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "fork: the child sees the window's contents");
    int untouched = 1;
    for (size_t i = 0; i < WIN_BYTES; i++)
        untouched &= m[i] == byte_of(rank, i);
    ok(untouched, "fork: the child's stores did not reach the parent's window");
    MPI_Win_fence(0, win); /* every member has looked before anyone puts */
    unsigned char v[16];
    memset(v, 0x5a ^ rank, sizeof v);
    MPI_Put(v, 16, MPI_BYTE, right(), WIN_BYTES / 2, 16, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    ok(m[WIN_BYTES / 2] == (unsigned char)(0x5a ^ left()) &&
           m[WIN_BYTES / 2 + 15] == (unsigned char)(0x5a ^ left()),
       "fork: puts still land in the parent's window");
    MPI_Win_free(&win);
    free(m);
}

static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* A large window whose pages were never touched moves without being copied or faulted in. */
#define UNTOUCHED_CHECKS 1
static void test_untouched(void)
{
    const size_t big = (size_t)64 << 20;
    unsigned char *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (m == MAP_FAILED)
        MPI_Abort(MPI_COMM_WORLD, 2);
    m[big / 2] = 7; /* one page holds data */
    long before = resident_kib();
    MPI_Win win;
    MPI_Win_create(m, (MPI_Aint)big, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    long grown = resident_kib() - before;
    int kept = m[big / 2] == 7 && m[0] == 0 && m[big - 1] == 0;
    MPI_Win_free(&win);
    kept &= m[big / 2] == 7;
    munmap(m, big);
    ok(kept && grown < 8 * 1024,
       "untouched: a 64 MiB window of one touched page moves with its data, resident memory "
       "grew by %ld KiB", grown);
}

/* A large malloc'd block (glibc maps it on its own) grows by realloc after MPI_Win_free: the
 * given-back pages are a mapping of their own now, so glibc cannot mremap the block whole and
 * copies it instead; either way the contents must survive. */
#define REALLOC_CHECKS 1
static void test_realloc(void)
{
    const size_t n = (size_t)1 << 20;
    unsigned char *m = xmalloc(n);
    fill(m, n);
    MPI_Win win;
    MPI_Win_create(m, (MPI_Aint)n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_free(&win);
    unsigned char *grown = realloc(m, 4 * n);
    int kept = grown != NULL;
    for (size_t i = 0; kept && i < n; i++)
        kept = grown[i] == byte_of(rank, i);
    if (grown)
        memset(grown + n, 0, 3 * n);
    free(grown ? grown : m);
    ok(kept, "realloc: a block that held a window grows with its contents");
}

/* FLEXRMA_ADOPT=0 */
#define OFF_CHECKS 2
static void test_off(void)
{
    int saved = fr_opt.adopt;
    fr_opt.adopt = 0;
    MPI_Win win;
    unsigned char *m = paged_window(&win);
    ok(fr_win_lookup(win)->adopted.at == NULL && private_memory(m + pg),
       "off: FLEXRMA_ADOPT=0 adopts nothing");
    unsigned char v = (unsigned char)(0x77 ^ rank);
    MPI_Win_fence(0, win);
    MPI_Put(&v, 1, MPI_BYTE, right(), 100, 1, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    ok(m[100] == (unsigned char)(0x77 ^ left()), "off: puts land");
    MPI_Win_free(&win);
    free(m);
    fr_opt.adopt = saved;
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    pg = (size_t)sysconf(_SC_PAGESIZE);
    adopting = fr_opt.transport != FR_TRANSPORT_AM && fr_opt.direct && fr_adopt_enabled(NULL);
    tap_plan(7 * KIND_CHECKS + OVERLAP_CHECKS + FORK_CHECKS + UNTOUCHED_CHECKS + REALLOC_CHECKS +
             OFF_CHECKS);
    for (kind k = K_MALLOC; k <= K_SHARED; k++)
        test_kind(k);
    test_overlap();
    test_fork();
    test_untouched();
    test_realloc();
    test_off();
    return test_done();
}
