/* test_shm_seg.c - the segment allocator (shm_seg.c) and MPI_Alloc_mem's use of it. One process;
 * run with mpirun -np 1.
 *
 * For sizes 0, 1, 4096, 1 MiB and 100 MiB: allocation, page rounding, what lookup says about the
 * first, an interior and the last byte, ranges that cross the end, and that a 100 MiB segment
 * costs only the pages touched. Then freeing (also of interior and foreign addresses), the
 * spares (reuse by size, zero-filled, at most FR_SEG_SPARES, bounded by the memory they hold
 * and not their size, dropped on demand), the
 * named fallback (its name exists with mode 0600 until unlinked, and is gone after free or
 * unlink-all), the descriptor budget (a quarter of RLIMIT_NOFILE), and MPI_Alloc_mem/MPI_Free_mem
 * in the three FLEXRMA_TRANSPORT modes. */
#define _GNU_SOURCE /* F_GET_SEALS */
#include "node/shm_seg.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t pg;
static fr_seg_backend native; /* the backend this machine offers */

static int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Pages of [p, p+len) in memory. */
static size_t resident_pages(void *p, size_t len)
{
    size_t n = (len + pg - 1) / pg, count = 0;
    unsigned char *vec = malloc(n);
    if (!vec || mincore(p, len, vec) != 0) {
        free(vec);
        return (size_t)-1;
    }
    for (size_t i = 0; i < n; i++)
        count += vec[i] & 1;
    free(vec);
    return count;
}

#define SIZE_CHECKS 10
static void test_size(size_t size)
{
    size_t rounded = size ? (size + pg - 1) / pg * pg : pg;
    char *p = NULL;
    int rc = fr_seg_alloc(size, (void **)&p);
    if (!ok(rc == MPI_SUCCESS && p, "%zu bytes: allocated", size)) {
        skip(SIZE_CHECKS - 1, "no segment");
        return;
    }
    ok(((uintptr_t)p & (pg - 1)) == 0, "%zu bytes: page aligned", size);

    fr_seg_ref ref;
    int found = fr_seg_lookup(p, size, &ref);
    ok(found && ref.offset == 0 && ref.size == rounded && ref.fd >= 0 && ref.ino != 0 &&
           ref.serial != 0,
       "%zu bytes: lookup of the whole block: offset 0, size %zu, fd and inode", size, rounded);
    struct stat st;
    ok(fstat(ref.fd, &st) == 0 && (st.st_mode & 0777) == 0600 &&
           (uint64_t)st.st_ino == ref.ino && (size_t)st.st_size == rounded,
       "%zu bytes: the descriptor is the segment, mode 0600", size);
    if (fr_seg_backend_get() == FR_SEG_MEMFD) {
        int seals = fcntl(ref.fd, F_GET_SEALS);
        ok(seals >= 0 && (seals & F_SEAL_SHRINK) && (seals & F_SEAL_GROW),
           "%zu bytes: sealed against shrinking and growing", size);
    } else {
        skip(1, "seals: memfd only");
    }

    /* zero-filled at both ends, and writable there */
    ok(p[0] == 0 && p[rounded - 1] == 0, "%zu bytes: zero-filled", size);
    p[0] = 1;
    p[rounded - 1] = 2;

    size_t mid = rounded / 2;
    ok(fr_seg_lookup(p + mid, 1, &ref) && ref.offset == mid &&
           fr_seg_lookup(p + rounded - 1, 1, &ref) && ref.offset == rounded - 1 &&
           fr_seg_lookup(p + rounded - 1, 0, &ref),
       "%zu bytes: interior and last byte found at their offsets", size);
    uint64_t serial = ref.serial;
    /* The next page may start another segment, never this one. */
    ok(!fr_seg_lookup(p + rounded - 1, 2, &ref) && !fr_seg_lookup(p + mid, rounded, &ref) &&
           (!fr_seg_lookup(p + rounded, 1, &ref) || ref.serial != serial) &&
           !fr_seg_lookup(p - 1, 2, &ref),
       "%zu bytes: ranges crossing either end are in no one segment", size);

    if (size >= 100u << 20) {
        size_t res = resident_pages(p, rounded);
        ok(res != (size_t)-1 && res <= 8, "%zu bytes: %zu pages resident after touching two",
           size, res);
    } else {
        skip(1, "residency: only measured for the large block");
    }
    ok(fr_seg_free(p) == MPI_SUCCESS && !fr_seg_lookup(p, 1, &ref), "%zu bytes: freed", size);
}

#define FREE_CHECKS 6
static void test_free_and_foreign(void)
{
    static int in_data;
    int on_stack;
    char *heap = malloc(64);
    fr_seg_ref ref;
    ok(!fr_seg_lookup(&in_data, 1, &ref) && !fr_seg_lookup(&on_stack, 1, &ref) &&
           !fr_seg_lookup(heap, 1, &ref) && !fr_seg_lookup(NULL, 0, &ref),
       "static, stack, heap and NULL addresses are in no segment");

    char *a = NULL, *b = NULL;
    fr_seg_alloc(0, (void **)&a);
    fr_seg_alloc(0, (void **)&b);
    ok(a && b && a != b && fr_seg_count() == 2, "two zero-byte segments are distinct");
    int fd = fr_seg_lookup(a, 0, &ref) ? ref.fd : -1;
    is_int(err_class(fr_seg_free(a + 1)), MPI_ERR_BASE, "free of an interior address: ERR_BASE");
    is_int(err_class(fr_seg_free(heap)), MPI_ERR_BASE, "free of a foreign address: ERR_BASE");
    int kept = fr_seg_free(a) == MPI_SUCCESS && fd >= 0 && fcntl(fd, F_GETFD) >= 0;
    fr_seg_spares_drop();
    ok(kept && fcntl(fd, F_GETFD) < 0,
       "free keeps a small segment as a spare, open; dropping the spares closes it");
    ok(fr_seg_free(b) == MPI_SUCCESS && fr_seg_count() == 0, "all segments freed");
    free(heap);
}

/* The spares: reuse by size, zero-filled, bounded. */
#define SPARE_CHECKS 6
static void test_spares(void)
{
    if (fr_seg_backend_get() != FR_SEG_MEMFD) {
        skip(SPARE_CHECKS, "spares need the memfd backend");
        return;
    }
    fr_seg_spares_drop();
    char *a = NULL, *b = NULL, *c = NULL;
    fr_seg_ref ra, rb;
    fr_seg_alloc(3 * pg, (void **)&a);
    memset(a, 0x5a, 3 * pg);
    fr_seg_lookup(a, 0, &ra);
    fr_seg_free(a);
    fr_seg_alloc(pg, (void **)&c); /* another size: not the spare */
    fr_seg_alloc(3 * pg - 7, (void **)&b);
    fr_seg_lookup(b, 0, &rb);
    size_t nonzero = 0;
    for (size_t i = 0; i < 3 * pg; i++)
        nonzero += b[i] != 0;
    ok(b == a && c != a && rb.serial == ra.serial && fr_seg_count() == 2,
       "an allocation of a spare's size gets it back, with its serial; another size does not");
    ok(nonzero == 0, "the spare comes back zero-filled (%zu bytes were not)", nonzero);
    fr_seg_free(b);
    fr_seg_free(c);

    /* A large segment with a few pages touched holds little: it is kept (NWChem's 40 MiB
     * MPI_Alloc_mem block, taken and freed 200 times a run), and only its data is zeroed. */
    const size_t big_size = 2 * FR_SEG_SPARE_BYTES + 3 * pg;
    char *big = NULL, *again = NULL;
    fr_seg_alloc(big_size, (void **)&big);
    const size_t touched[] = {0, 1, 4097, big_size / 2 + 5, big_size - 1};
    for (size_t i = 0; i < sizeof touched / sizeof *touched; i++)
        big[touched[i]] = (char)(0x40 + i);
    fr_seg_ref rbig, ragain;
    fr_seg_lookup(big, 0, &rbig);
    fr_seg_free(big);
    fr_seg_alloc(big_size, (void **)&again);
    fr_seg_lookup(again, 0, &ragain);
    size_t stale = 0;
    for (size_t i = 0; i < big_size; i += 64) /* a word per cache line: a stale page shows */
        stale += again[i] != 0;
    for (size_t i = 0; i < sizeof touched / sizeof *touched; i++)
        stale += again[touched[i]] != 0;
    ok(again == big && ragain.serial == rbig.serial && stale == 0,
       "a large spare holding a few pages comes back, its touched pages zeroed (%zu stale)",
       stale);
    /* One holding more than all spares may is closed at once. */
    memset(again, 1, FR_SEG_SPARE_BYTES + pg);
    fr_seg_free(again);
    ok(fcntl(ragain.fd, F_GETFD) < 0, "a segment holding over FR_SEG_SPARE_BYTES is closed at once");

    int fds[FR_SEG_SPARES + 1];
    char *p[FR_SEG_SPARES + 1];
    for (int i = 0; i <= FR_SEG_SPARES; i++) { /* distinct sizes: none takes another's spare */
        fr_seg_alloc((size_t)(i + 5) * pg, (void **)&p[i]);
        fr_seg_ref r;
        fds[i] = fr_seg_lookup(p[i], 0, &r) ? r.fd : -1;
    }
    for (int i = 0; i <= FR_SEG_SPARES; i++)
        fr_seg_free(p[i]);
    int open_now = 0;
    for (int i = 0; i <= FR_SEG_SPARES; i++)
        open_now += fds[i] >= 0 && fcntl(fds[i], F_GETFD) >= 0;
    /* the two small ones from above were spares too: the oldest go first */
    ok(open_now == FR_SEG_SPARES && fcntl(fds[0], F_GETFD) < 0 &&
           fcntl(fds[FR_SEG_SPARES], F_GETFD) >= 0,
       "at most FR_SEG_SPARES spares, the oldest pushed out (%d open)", open_now);
    fr_seg_spares_drop();
    open_now = 0;
    for (int i = 0; i <= FR_SEG_SPARES; i++)
        open_now += fcntl(fds[i], F_GETFD) >= 0;
    ok(open_now == 0 && fr_seg_count() == 0, "dropping the spares closes them all");
}

static int name_exists(const char *name)
{
    char path[128];
    struct stat st;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : 0;
}

#define NAMED_CHECKS 6
static void test_named(void)
{
    if (fr_seg_backend_force(FR_SEG_NAMED) != MPI_SUCCESS) {
        ok(0, "named backend forced");
        skip(NAMED_CHECKS - 1, "could not force the named backend");
        return;
    }
    ok(1, "named backend forced");
    char *a = NULL, *b = NULL, *c = NULL;
    fr_seg_ref ra, rb, rc;
    int good = fr_seg_alloc(1 << 20, (void **)&a) == MPI_SUCCESS && fr_seg_lookup(a, 1, &ra);
    ok(good && ra.named && strncmp(ra.name, "/flexrma.", 9) == 0 && name_exists(ra.name) == 0600,
       "named segment %s exists in /dev/shm with mode 0600", good ? ra.name : "?");
    if (!good) {
        skip(NAMED_CHECKS - 2, "no named segment");
        return;
    }
    a[5] = 7;
    fr_seg_unlink_name(a + 100);
    ok(!name_exists(ra.name) && fr_seg_lookup(a, 1, &ra) && !ra.named && !ra.name[0] && a[5] == 7,
       "unlink_name removes the name, the segment stays");
    fr_seg_alloc(10, (void **)&b);
    fr_seg_lookup(b, 1, &rb);
    fr_seg_free(b);
    ok(rb.named && !name_exists(rb.name), "free removes a name still linked");
    fr_seg_alloc(10, (void **)&c);
    fr_seg_lookup(c, 1, &rc);
    fr_seg_unlink_all();
    ok(rc.named && !name_exists(rc.name) && fr_seg_lookup(c, 1, &rc) && !rc.named,
       "unlink_all removes every name");
    fr_seg_free(a);
    fr_seg_free(c);
    ok(fr_seg_count() == 0 && fr_seg_backend_force(native) == MPI_SUCCESS,
       "back to the native backend");
}

static size_t open_fds(void)
{
    size_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 64;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

#define BUDGET_CHECKS 3
static void test_fd_budget(void)
{
    struct rlimit saved, rl;
    getrlimit(RLIMIT_NOFILE, &saved);
    size_t budget = open_fds() + 8; /* enough free descriptors for all of it */
    rl = saved;
    rl.rlim_cur = (rlim_t)(4 * budget);
    if (rl.rlim_cur > saved.rlim_max || setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        skip(BUDGET_CHECKS, "cannot lower RLIMIT_NOFILE");
        return;
    }
    void **p = calloc(budget + 1, sizeof *p);
    size_t n = 0;
    int rc = MPI_SUCCESS;
    while (n <= budget && (rc = fr_seg_alloc(1, &p[n])) == MPI_SUCCESS)
        n++;
    is_int((long long)n, (long long)budget, "segments stop at a quarter of RLIMIT_NOFILE (%zu)",
           budget);
    is_int(err_class(rc), MPI_ERR_NO_MEM, "the next one: ERR_NO_MEM");
    char *heap = NULL;
    fr_seg_ref ref;
    fr_transport_mode saved_mode = fr_opt.transport;
    fr_opt.transport = FR_TRANSPORT_AUTO;
    MPI_Alloc_mem(100, MPI_INFO_NULL, &heap);
    ok(heap && !fr_seg_lookup(heap, 1, &ref) && MPI_Free_mem(heap) == MPI_SUCCESS,
       "auto: MPI_Alloc_mem then gives ordinary memory");
    fr_opt.transport = saved_mode;
    for (size_t i = 0; i < n; i++)
        fr_seg_free(p[i]);
    free(p);
    setrlimit(RLIMIT_NOFILE, &saved);
}

#define ALLOC_CHECKS 7
static void test_alloc_mem(void)
{
    char *p = NULL, *z1 = NULL, *z2 = NULL;
    fr_seg_ref ref;
    fr_transport_mode saved = fr_opt.transport;

    fr_opt.transport = FR_TRANSPORT_AUTO;
    MPI_Alloc_mem(1000, MPI_INFO_NULL, &p);
    ok(p && ((uintptr_t)p & 63) == 0 && fr_seg_lookup(p, 1000, &ref) && ref.offset == 0,
       "auto: MPI_Alloc_mem memory is a segment");
    MPI_Alloc_mem(0, MPI_INFO_NULL, &z1);
    MPI_Alloc_mem(0, MPI_INFO_NULL, &z2);
    ok(z1 && z2 && z1 != z2, "zero-byte blocks are distinct");
    is_int(err_class(MPI_Free_mem(p + 64)), MPI_ERR_BASE, "MPI_Free_mem of an interior address");
    ok(MPI_Free_mem(p) == MPI_SUCCESS && MPI_Free_mem(z1) == MPI_SUCCESS &&
           MPI_Free_mem(z2) == MPI_SUCCESS && MPI_Free_mem(NULL) == MPI_SUCCESS &&
           fr_seg_count() == 0,
       "MPI_Free_mem frees the segments; MPI_Free_mem(NULL) is fine");

    fr_opt.transport = FR_TRANSPORT_AM;
    p = NULL;
    MPI_Alloc_mem(1000, MPI_INFO_NULL, &p);
    ok(p && ((uintptr_t)p & 63) == 0 && !fr_seg_lookup(p, 1, &ref) && fr_seg_count() == 0,
       "am: MPI_Alloc_mem memory is ordinary, 64-byte aligned");
    ok(MPI_Free_mem(p) == MPI_SUCCESS, "am: freed");

    /* shm: when no segment can be had, MPI_Alloc_mem says so instead of falling back */
    fr_opt.transport = FR_TRANSPORT_SHM;
    fr_seg_backend_force(FR_SEG_NONE);
    p = NULL;
    int rc = MPI_Alloc_mem(64, MPI_INFO_NULL, &p);
    fr_seg_backend_force(native);
    is_int(err_class(rc), MPI_ERR_OTHER, "shm without segments: MPI_Alloc_mem fails (ERR_OTHER)");
    fr_opt.transport = saved;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 4096, 1 << 20, 100u << 20};
    const int nsizes = (int)(sizeof sizes / sizeof *sizes);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pg = (size_t)sysconf(_SC_PAGESIZE);
    tap_plan(1 + nsizes * SIZE_CHECKS + FREE_CHECKS + SPARE_CHECKS + NAMED_CHECKS +
             BUDGET_CHECKS + ALLOC_CHECKS);
    native = fr_seg_backend_get();
    ok(native == FR_SEG_MEMFD || native == FR_SEG_NAMED, "a segment backend works here (%s)",
       native == FR_SEG_MEMFD ? "memfd" : native == FR_SEG_NAMED ? "named" : "none");
    for (int i = 0; i < nsizes; i++)
        test_size(sizes[i]);
    test_free_and_foreign();
    test_spares();
    test_named();
    test_fd_budget();
    test_alloc_mem();
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
