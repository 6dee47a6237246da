/* shm_adopt.c - a window's ordinary memory, shared in place (see shm_adopt.h).
 *
 * What the memory is comes from /proc/self/smaps: one entry per mapping (its range,
 * permissions, inode, path) followed by its VmFlags, the kernel's own list of what is special
 * about it, read up to the window's range; what MPI_Win_free asks (are the pages still ours?)
 * /proc/self/maps answers. */
#include "shm_adopt.h"

#include "page_hold.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One adopted range, shared by the windows over it. */
typedef struct adoption {
    char *at;
    size_t bytes;
    int refs;
} adoption;

static adoption *adoptions;
static size_t nadoptions, cap_adoptions;

static const char *refused_because; /* why pages could not move, once it mattered */

size_t fr_adopt_count(void) { return nadoptions; }

const char *fr_adopt_unavailable(void) { return refused_because; }

/* VmFlags that rule a mapping out: locked (lo), hugetlbfs (ht), the program's don't-fork (dc) or
 * wipe-on-fork (wf), userfaultfd (um, uw), device memory (io, pf), grows down (gd: the main
 * stack), shared (sh), synchronous page faults (sf), shadow stack (ss). */
static int special(const char *vmflags)
{
    static const char *const no[] = {"lo", "ht", "dc", "wf", "um", "uw", "io",
                                     "pf", "gd", "sh", "sf", "ss"};
    for (const char *f = vmflags; *f;) {
        while (*f == ' ' || *f == '\n')
            f++;
        for (size_t i = 0; i < sizeof no / sizeof *no; i++)
            if (f[0] == no[i][0] && f[1] == no[i][1] && (f[2] == ' ' || f[2] == '\n' || !f[2]))
                return 1;
        while (*f && *f != ' ' && *f != '\n')
            f++;
    }
    return 0;
}

/* A mapping as smaps shows it. */
typedef struct vma {
    uintptr_t lo, hi;
    char perms[5];
    uint64_t ino;
    char path[64];
} vma;

static int parse_header(const char *line, vma *v)
{
    unsigned long lo, hi;
    unsigned long long off, ino;
    unsigned dmaj, dmin;
    int n = 0;
    if (sscanf(line, "%lx-%lx %4s %llx %x:%x %llu %n", &lo, &hi, v->perms, &off, &dmaj, &dmin,
               &ino, &n) < 7)
        return 0;
    v->lo = lo;
    v->hi = hi;
    v->ino = ino;
    snprintf(v->path, sizeof v->path, "%s", line + n);
    v->path[strcspn(v->path, "\n")] = '\0';
    return 1;
}

/* The question asked of the mappings over [lo, hi). */
typedef enum question {
    ORDINARY, /* private anonymous memory, nothing special: may be adopted */
    STILL_OURS /* still the borrowed segment of inode `ino`, shared: may be given back */
} question;

static int answers(question q, const vma *v, uint64_t ino)
{
    if (q == STILL_OURS)
        return strcmp(v->perms, "rw-s") == 0 && v->ino == ino;
    return strcmp(v->perms, "rw-p") == 0 && v->ino == 0 &&
           (v->path[0] == '\0' || strcmp(v->path, "[heap]") == 0 ||
            strncmp(v->path, "[anon:", 6) == 0);
}

/* The process's mappings: the lines of /proc/self/maps, counted without parsing them. */
static long mapping_count(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192];
    long lines = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))) != NULL; p++)
            lines++;
    close(fd);
    return n < 0 ? -1 : lines;
}

/* Does the process have room for the mappings a move adds (the range's mapping split in
 * three, and the segment's mapping for the copy)? */
static int room_for_mappings(void)
{
    FILE *m = fopen("/proc/sys/vm/max_map_count", "re");
    long max = 65530;
    if (m) {
        if (fscanf(m, "%ld", &max) != 1)
            max = 65530;
        fclose(m);
    }
    long count = mapping_count();
    return count >= 0 && count + 8 < max;
}

/* Do the mappings cover [lo, hi) without a gap, each answering q? ORDINARY also asks that
 * the process has room for the mappings a move adds. */
static int mappings_are(uintptr_t lo, uintptr_t hi, question q, uint64_t ino)
{
    /* smaps for the VmFlags, which only it has. The kernel walks each mapping's page tables
     * as it writes its entry: 1.3-1.5 ms for the whole file in an Open MPI process here, 40-60
     * us up to a heap or malloc'd buffer. So both files are read only up to the range (they
     * list mappings by address), and the mappings are counted in /proc/self/maps (0.2 ms). */
    FILE *f = fopen(q == ORDINARY ? "/proc/self/smaps" : "/proc/self/maps", "re");
    if (!f)
        return 0;
    char line[512];
    vma v = {0};
    int in = 0, ok = 1;
    uintptr_t covered = lo;
    while (ok && fgets(line, sizeof line, f)) {
        vma next;
        if (parse_header(line, &next)) {
            v = next;
            if (v.lo >= hi)
                break; /* past the range */
            in = v.hi > lo;
            if (in) {
                ok = v.lo <= covered && answers(q, &v, ino);
                if (v.hi > covered)
                    covered = v.hi;
            }
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            ok = q == STILL_OURS || !special(line + 8);
        }
    }
    fclose(f);
    if (!ok || covered < hi)
        return 0;
    return q == ORDINARY ? room_for_mappings() : 1;
}

int fr_adopt_enabled(const char **why)
{
    const char *no = NULL, *no_hold;
    if (!fr_opt.adopt)
        no = "FLEXRMA_ADOPT=0";
    else if (!fr_hold_available(&no_hold))
        no = no_hold;
    else if (!fr_hold_can_take() && fr_opt.adopt < 2)
        /* Without UFFDIO_MOVE pages are copied in place, pinned or not, and a write through a
         * pin afterwards is lost: only where the user accepts that. */
        no = "this kernel cannot refuse pinned pages (UFFDIO_MOVE, Linux 6.8), so moving them "
             "could lose writes made through a pin; FLEXRMA_ADOPT=2 adopts anyway";
    if (why)
        *why = no ? no : "";
    return no == NULL;
}

static adoption *covering(const char *at, size_t bytes)
{
    for (size_t i = 0; i < nadoptions; i++)
        if (adoptions[i].at <= at && at + bytes <= adoptions[i].at + adoptions[i].bytes)
            return &adoptions[i];
    return NULL;
}

void fr_adopt(void *base, size_t size, fr_adopted *out)
{
    *out = (fr_adopted){0};
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)base + pg - 1) & ~(pg - 1);
    uintptr_t hi = ((uintptr_t)base + size) & ~(pg - 1);
    if (!base || hi <= lo)
        return;
    const char *why;
    if (!fr_adopt_enabled(&why)) {
        if (fr_opt.adopt)
            refused_because = why;
        return;
    }
    char *at = (char *)lo;
    size_t bytes = hi - lo;
    adoption *a = covering(at, bytes);
    if (a) { /* another window's adoption already holds these pages */
        if (fr_seg_lookup_borrowed(at, bytes, &out->ref)) {
            a->refs++;
            out->at = at;
            out->bytes = bytes;
        }
        return;
    }
    /* Pages in a segment already (MPI_Alloc_mem, or adopted in part) are no ordinary memory. */
    if (!mappings_are(lo, hi, ORDINARY, 0) || fr_seg_borrow(at, bytes, &out->ref) != MPI_SUCCESS)
        return;
    fr_grow(&adoptions, &cap_adoptions, nadoptions + 1, sizeof *adoptions);
    adoptions[nadoptions++] = (adoption){at, bytes, 1};
    out->at = at;
    out->bytes = bytes;
}

void fr_adopt_release(fr_adopted *out)
{
    adoption *a = out->at ? covering(out->at, out->bytes) : NULL;
    if (a && --a->refs == 0) {
        fr_seg_ref whole;
        int ours = fr_seg_lookup_borrowed(a->at, a->bytes, &whole) &&
                   mappings_are((uintptr_t)a->at, (uintptr_t)(a->at + a->bytes), STILL_OURS,
                                whole.ino);
        fr_seg_give_back(a->at, ours);
        *a = adoptions[--nadoptions];
    }
    *out = (fr_adopted){0};
}
