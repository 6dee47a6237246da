/* next.h - reaching the MPI library's own implementation of a function flexrma also defines.
 *
 * flexrma defines both MPI_X and PMPI_X for every function it takes over (FR_PMPI): the
 * one-sided chapter, MPI_Init/Finalize, MPI_Type_free, and the blocking calls it drives progress
 * in (pt2pt_hooks.c). The MPI library's Fortran bindings and profiling tools call PMPI_X, and
 * must reach flexrma too. So flexrma cannot name PMPI_X itself when it means the library's
 * implementation (passing a call through, freeing its carrier window, testing its own requests):
 * FR_NEXT(X) is the next definition after libflexrma in the symbol search order (dlsym
 * RTLD_NEXT), looked up once per call site. Functions flexrma does not define (PMPI_Isend,
 * PMPI_Improbe, ...) are called by their PMPI_ name. */
#ifndef FR_NEXT_H
#define FR_NEXT_H

#include "fr.h"

void *fr_next_symbol(const char *name); /* aborts the job if the library has no such symbol */

/* Threads may look a call site up at once: the pointer is read and written atomically (relaxed:
 * it points to code the library loaded before, nothing else rides on it). */
#define FR_NEXT(name)                                                                             \
    (__extension__({                                                                              \
        static __typeof__(&PMPI_##name) fr_next_fn_;                                              \
        __typeof__(&PMPI_##name) fr_next_f_ = __atomic_load_n(&fr_next_fn_, __ATOMIC_RELAXED);    \
        if (FR_UNLIKELY(!fr_next_f_)) {                                                           \
            fr_next_f_ = (__typeof__(&PMPI_##name))fr_next_symbol("PMPI_" #name);                 \
            __atomic_store_n(&fr_next_fn_, fr_next_f_, __ATOMIC_RELAXED);                         \
        }                                                                                         \
        fr_next_f_;                                                                               \
    }))

/* Also export flexrma's MPI_X as PMPI_X. Place after the definition of MPI_X. */
#define FR_PMPI(name)                                                                             \
    __typeof__(MPI_##name) PMPI_##name __attribute__((alias("MPI_" #name), visibility("default")))

/* The same for flexrma's MPIX_ extensions. */
#define FR_PMPIX(name)                                                                            \
    __typeof__(MPIX_##name) PMPIX_##name __attribute__((alias("MPIX_" #name), visibility("default")))

#endif
