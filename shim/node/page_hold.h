/* page_hold.h - holding every store to a range of pages while the pages move.
 *
 * Moving a program's pages (shm_seg.c: into a shared segment at MPI_Win_create, back to private
 * memory at MPI_Win_free) copies them and then maps the copy in their place. A store another
 * thread makes between the copy and the switch would land in the old pages and be lost, and so
 * would a write the kernel makes there for a system call (read(2) into the buffer). A hold
 * closes that gap: from fr_hold_begin to fr_hold_end every such store waits, in the kernel,
 * and is retried once the hold ends, on whatever is mapped then.
 *
 * The mechanism is userfaultfd's write protection (Linux 5.19 and later, for anonymous and
 * shared memory), which needs the capability to handle kernel faults: root (CAP_SYS_PTRACE), vm.unprivileged_userfaultfd=1, or access to
 * /dev/userfaultfd. Where it is missing, nothing can be held, and memory that would have to be
 * held must not move (docs/architecture.md, "Adopting ordinary memory").
 *
 * Callers hold the engine lock. */
#ifndef FR_PAGE_HOLD_H
#define FR_PAGE_HOLD_H

#include <signal.h>
#include <stddef.h>

typedef struct fr_hold {
    char *at;
    size_t bytes;
    char *taken;    /* fr_hold_take: where the pages are now; NULL: still at `at` */
    sigset_t saved; /* this thread's signal mask before the hold */
} fr_hold;

/* Can pages be held in this process? Decided once. When not, *why (if given) says why. */
int fr_hold_available(const char **why);

/* Hold [at, at + bytes): whole pages, private anonymous or shared memory. From the return until
 * fr_hold_end, a store into the range by any thread, or by the kernel for a system call, waits;
 * so does a read of a page never touched. The caller must not store into the range, may read
 * it only where pages exist and by a path that fails instead of waiting (/proc/self/mem), and
 * its own signals stay blocked meanwhile (a handler touching the range would wait for this
 * very thread). Returns MPI_SUCCESS, or an error with nothing held. */
int fr_hold_begin(void *at, size_t bytes, fr_hold *h);

/* Take the held range's pages (private anonymous memory) out of the program's reach, into a
 * mapping of their own, without copying them: afterwards every access to the range waits, and
 * no page that moved is pinned. A pinned page (get_user_pages with FOLL_PIN: a device's DMA,
 * O_DIRECT or io_uring I/O, another process's process_vm_writev in flight) could still be
 * written through the pin after a copy was taken of it, and that write would be lost; the
 * kernel refuses to move such a page (UFFDIO_MOVE, Linux 6.8; nor one shared with a forked
 * child), and then nothing moves and FR_ERR_SHM says so. Without UFFDIO_MOVE the pages stay
 * where they are and MPI_SUCCESS is returned: the caller copies them in place, as before
 * Linux 6.8 (docs/architecture.md says what that leaves open). */
int fr_hold_take(fr_hold *h);
/* Can fr_hold_take take pages here (holds possible, and UFFDIO_MOVE)? */
int fr_hold_can_take(void);
/* Where the held pages can be read now (their own mapping after fr_hold_take, else the range
 * itself), by the rules of fr_hold_begin. */
static inline char *fr_hold_pages(const fr_hold *h) { return h->taken ? h->taken : h->at; }

/* End the hold and let the waiting stores go on. `replaced`: another mapping took the range's
 * place meanwhile (the protection went with the old one, and pages taken are dropped);
 * otherwise the protection is lifted here and pages taken go back where they were. */
void fr_hold_end(fr_hold *h, int replaced);

/* After fork, in the child; and at MPI_Finalize. */
void fr_hold_finalize(void);

#endif
