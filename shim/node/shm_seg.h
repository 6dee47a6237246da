/* shm_seg.h - memory segments this process can share with its node peers.
 *
 * Each segment is one shared-memory file, mapped MAP_SHARED here, whose descriptor this process
 * keeps open so that a peer can take a duplicate of it (pidfd_getfd, shm_map.h) and map the same
 * pages. One segment per allocation, sized to whole pages: large allocations waste nothing (the
 * pages exist only once touched). The price is one descriptor and one mapping per allocation,
 * and a page for even a one-byte allocation. Freed segments stay mapped as spares (at most
 * FR_SEG_SPARES of them, holding FR_SEG_SPARE_BYTES of memory together; one that holds more
 * returns all its memory at once), and an allocation of the same size takes one back, its touched
 * pages zeroed: mapping, faulting and unmapping cost far more than that (shm_seg.c).
 * Segments use at most a quarter of the descriptor limit (RLIMIT_NOFILE), so they never starve
 * the program; past that, MPI_Alloc_mem gives ordinary memory (alloc_mem.c), which the
 * cross-memory-attach path still reaches.
 *
 * Backends, chosen once at the first allocation:
 *  - memfd: memfd_create(MFD_CLOEXEC), never has a name, so nothing can be left behind, even when
 *    the process is killed with SIGKILL. Sealed against resizing, so a peer's mapping can never
 *    fault past the end.
 *  - named: when memfd_create is missing (ENOSYS) or forbidden (EPERM, seccomp). A POSIX shared
 *    memory object "/flexrma.<pid>.<random>" (O_EXCL, mode 0600). Peers that cannot take the
 *    descriptor open it by name, so the name stays until fr_seg_unlink_name() says every peer has
 *    attached (or the segment is freed, or MPI_Finalize). A process killed before that leaves
 *    the name behind: the reason memfd is preferred.
 *
 * Callers hold the engine lock (FR_ENTER); nothing here locks. */
#ifndef FR_SHM_SEG_H
#define FR_SHM_SEG_H

#include "core/fr.h"

#include <stddef.h>
#include <stdint.h>

#define FR_SEG_NAME_MAX 48
/* Freed segments kept for reuse: how many, and the memory they hold together. Peers keep
 * their mappings of freed segments up to FR_SEG_SPARE_MAX bytes (shm_map.c). */
#define FR_SEG_SPARES 64
#define FR_SEG_SPARE_BYTES ((size_t)16 << 20)
#define FR_SEG_SPARE_MAX ((size_t)4 << 20)

/* What a peer needs to map a segment, and where an address lies in it. Plain data: it may be
 * sent to a peer as bytes (every field has a fixed size). */
typedef struct fr_seg_ref {
    int32_t fd;        /* the owner's descriptor of the segment */
    uint32_t named;    /* 1: `name` is set and still linked (named backend) */
    uint64_t serial;   /* unique per owner process for its lifetime: the key peers cache by */
    uint64_t ino;      /* inode of the file: a mapper checks it got this very segment */
    uint64_t owner;    /* random, fixed for the owner process's life: a mapping a peer kept is
                          never taken for a segment of another process that got the same pid */
    uint64_t size;     /* bytes of the segment (a page multiple): a mapper maps all of them */
    uint64_t offset;   /* of the looked-up address from the start of the segment */
    char name[FR_SEG_NAME_MAX]; /* the shm_open name while linked, "" otherwise */
} fr_seg_ref;

typedef enum fr_seg_backend {
    FR_SEG_UNDECIDED, /* before the first allocation */
    FR_SEG_MEMFD,
    FR_SEG_NAMED,
    FR_SEG_NONE /* neither works: fr_seg_alloc fails, MPI_Alloc_mem uses ordinary memory */
} fr_seg_backend;

/* A new segment of at least `size` bytes (one page for 0), zero-filled, page aligned. Returns
 * MPI_SUCCESS, or an error code (FR_ERR_SHM: no backend or the system refused; FR_ERR_NO_MEM:
 * out of memory, or of the descriptor budget) with nothing allocated. */
int fr_seg_alloc(size_t size, void **addr);
/* Fault in the pages of [addr, addr + len) of a shared mapping now, writable, without changing
 * their contents (MADV_POPULATE_WRITE; nothing where the kernel lacks it). For memory that is
 * used right away and all of it, such as packet rings: a first touch inside a timed exchange
 * costs a page fault on each side, a few microseconds each in a virtual machine. */
void fr_mem_prefault(void *addr, size_t len);
/* Free the segment starting at addr: unmapped and closed, or kept as a spare (above); either way
 * no longer a segment here. FR_ERR_BASE if no segment starts there. */
int fr_seg_free(void *addr);
/* Unmap and close every spare (MPI_Finalize). */
void fr_seg_spares_drop(void);
/* The segment holding addr is never kept as a spare: peers may go on using it after this
 * process frees it (a shared window's memory, which the other members keep when its first
 * member leaves), so it must not come back as another allocation. */
void fr_seg_no_spare(void *addr);
/* If [addr, addr+len) lies inside one segment (len 0: addr inside it), describe it in *ref and
 * return 1; otherwise return 0. */
int fr_seg_lookup(const void *addr, size_t len, fr_seg_ref *ref);
/* The same for borrowed segments (fr_seg_borrow), which fr_seg_lookup never finds: their pages
 * are the program's and go back to it, so nothing but the window that borrowed them may hand
 * them to peers (a dynamic window's attach of the same memory keeps the message path). */
int fr_seg_lookup_borrowed(const void *addr, size_t len, fr_seg_ref *ref);

/* Borrowing: make the program's own memory [at, at + bytes) (whole pages, private anonymous
 * memory: the caller checks, node/shm_adopt.h) a segment in place: same addresses, contents
 * kept, mapped MAP_SHARED from a new file, so peers can map the same pages. Only the pages
 * holding data are copied. Other threads may store into the range meanwhile: each chunk is held
 * while it moves (page_hold.h), and without a way to hold pages this fails (FR_ERR_SHM). *ref
 * describes it. Errors: as fr_seg_alloc; nothing changed then. */
int fr_seg_borrow(void *at, size_t bytes, fr_seg_ref *ref);
/* End a borrow: with `restore`, the pages become private anonymous memory again with the same
 * contents (one copy; stores of other threads meanwhile wait, as for the borrow), so that
 * free(), munmap() and fork() find ordinary memory; without, the
 * range is left alone (the program unmapped it meanwhile, and it may hold something else now).
 * FR_ERR_BASE if no borrowed segment starts at `at`. */
int fr_seg_give_back(void *at, int restore);

/* fork(): every segment of this process, borrowed or not, reaches a forked child as a private
 * copy, as any other memory does (pthread_atfork handlers, installed with the first segment). */

/* Named backend: every peer that needed the name has opened the segment; unlink the name.
 * A no-op for memfd segments. FR_ERR_BASE if addr is in no segment. */
int fr_seg_unlink_name(const void *addr);
/* Unlink every name still linked (MPI_Finalize, fatal errors); keeps the segments mapped. */
void fr_seg_unlink_all(void);

/* The backend in use, probing it on the first call. */
fr_seg_backend fr_seg_backend_get(void);
/* Tests: use this backend from now on (only before the first allocation, or when no segment is
 * live). Returns MPI_SUCCESS or FR_ERR_ARG. */
int fr_seg_backend_force(fr_seg_backend b);
/* Live segments (tests, statistics). */
size_t fr_seg_count(void);

#endif
