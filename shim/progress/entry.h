/* entry.h - the shared prologue of window entry points, written once.
 *
 * FR_WIN_ENTRY(win, passthrough) returns `passthrough` (the PMPI call) when flexrma is not in
 * charge or `win` is a native window, otherwise takes the engine lock, binds `w`, and every
 * FR_ENTRY_POLL_EVERY calls runs a progress pass if none ran for twice as many calls
 * (fr_entry_poll; FR_WIN_ENTRY_QUIET: never): a process that only ever calls flexrma functions
 * that need not wait (a lock on itself, say) must still serve the requests of others, but a pass
 * on every call would double the cost of a short epoch. Waits poll on every turn.
 * FR_WIN_EXIT(name, rc) releases the lock and raises rc once through the window's handler. */
#ifndef FR_ENTRY_H
#define FR_ENTRY_H

#include "progress.h"
#include "win/win.h"

#define FR_ENTRY_POLL_EVERY 4
extern unsigned fr_entry_calls;

#define FR_WIN_ENTRY(win, passthrough)                                                            \
    FR_WIN_ENTRY_QUIET(win, passthrough);                                                         \
    if (++fr_entry_calls % FR_ENTRY_POLL_EVERY == 0)                                              \
        fr_entry_poll();

/* Without the progress pass: for MPI_Put, MPI_Get and MPI_Accumulate, which a correct program
 * always follows with a synchronization call (that call serves others), and whose pass would
 * be a good part of a short epoch's cost. */
#define FR_WIN_ENTRY_QUIET(win, passthrough)                                                      \
    fr_win *w;                                                                                    \
    if (!fr_active)                                                                               \
        return passthrough;                                                                       \
    FR_ENTER();                                                                                   \
    w = fr_win_lookup(win);                                                                       \
    if (!w) {                                                                                     \
        FR_LEAVE();                                                                               \
        return passthrough;                                                                       \
    }

#define FR_WIN_EXIT(name, rc)                                                                     \
    do {                                                                                          \
        int fr_exit_rc_ = (rc);                                                                   \
        FR_LEAVE();                                                                               \
        return fr_exit_rc_ == MPI_SUCCESS ? MPI_SUCCESS : fr_win_raise(w, name, fr_exit_rc_);    \
    } while (0)

#endif
