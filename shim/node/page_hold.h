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

/* End the hold and let the waiting stores go on. `replaced`: another mapping took the range's
 * place meanwhile (the protection went with the old one); otherwise the protection is lifted
 * here. */
void fr_hold_end(fr_hold *h, int replaced);

/* After fork, in the child; and at MPI_Finalize. */
void fr_hold_finalize(void);

#endif
