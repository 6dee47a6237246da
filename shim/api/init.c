/* init.c - start and end of flexrma's life in a process: MPI_Init and MPI_Finalize.
 *
 * MPI_Init also wires the layers together: a lower layer reaches a higher one only through
 * what is bound here (wire_layers), never by name.
 *
 * flexrma does nothing at load time: a process that inherits LD_PRELOAD without calling MPI_Init
 * (mpirun itself) is unaffected. */
#include "core/fr.h"
#include "core/idle.h"
#include "core/next.h"
#include "dtype/dtype.h"
#include "node/node_comm.h"
#include "node/page_hold.h"
#include "node/shm_map.h"
#include "node/shm_seg.h"
#include "progress/coll_shm.h"
#include "progress/isend.h"
#include "progress/progress.h"
#include "progress/request.h"
#include "sync/counters.h"
#include "sync/sync.h"
#include "transport/transport.h"
#include "stats.h"

#include <stdio.h>

/* The upward paths of the engine, in one place (docs/architecture.md, "Layers"). */
static void wire_layers(void)
{
    fr_on_fatal(fr_seg_unlink_all);       /* core -> node: no shared-memory name outlives a crash */
    fr_proto = fr_sync_protocol;          /* transport -> sync: what arrives is handed up */
    /* progress -> transport, sync: what each pass looks at in every window, in this order */
    fr_progress_add_poller(fr_chan_poll);     /* batches in my incoming rings (node peers) */
    fr_progress_add_poller(fr_am_poll);       /* batches sent to me as messages */
    fr_progress_add_poller(fr_lock_poll);     /* lock requests queued in my shared lock word */
    fr_progress_add_poller(fr_counters_poll); /* bumps node peers made in my counter words */
    fr_progress_set_rings(fr_chan_poll);      /* ... and the rings alone between passes */
}

/* Everything that needs MPI to be initialized. */
static int start_engine(void)
{
    if (fr_opt.disabled)
        return MPI_SUCCESS;
    int level;
    FR_CHECK_MPI(PMPI_Query_thread(&level));
    fr_engine_locking = fr_opt.async_progress || level == MPI_THREAD_MULTIPLE;
    FR_CHECK_MPI(PMPI_Comm_dup(MPI_COMM_SELF, &fr_comm_self));
    FR_CHECK_MPI(PMPI_Comm_set_errhandler(fr_comm_self, MPI_ERRORS_RETURN));
    fr_errors_register();
    fr_idle_setup();
    fr_node_init();
    wire_layers();
    fr_counters_init();
    if (fr_opt.transport != FR_TRANSPORT_AM)
        fr_peer_access_allow();
    fr_active = 1;
    if (fr_opt.async_progress)
        return fr_agent_start();
    return MPI_SUCCESS;
}

FR_API int MPI_Init(int *argc, char ***argv)
{
    fr_options_read();
    if (fr_opt.async_progress && !fr_opt.disabled) {
        int provided;
        int rc = FR_NEXT(Init_thread)(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            return rc;
        if (provided < MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "flexrma: FLEXRMA_ASYNC_PROGRESS=1 needs MPI_THREAD_MULTIPLE, which "
                            "this MPI does not provide; continuing without the progress agent\n");
            fr_opt.async_progress = 0;
        }
        return start_engine();
    }
    int rc = FR_NEXT(Init)(argc, argv);
    return rc == MPI_SUCCESS ? start_engine() : rc;
}
FR_PMPI(Init);

FR_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    fr_options_read();
    int ask = required;
    if (fr_opt.async_progress && !fr_opt.disabled)
        ask = MPI_THREAD_MULTIPLE; /* the agent thread calls MPI concurrently with the program */
    int rc = FR_NEXT(Init_thread)(argc, argv, ask, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ask == MPI_THREAD_MULTIPLE && *provided < MPI_THREAD_MULTIPLE && fr_opt.async_progress) {
        fprintf(stderr, "flexrma: FLEXRMA_ASYNC_PROGRESS=1 needs MPI_THREAD_MULTIPLE, which this "
                        "MPI does not provide; continuing without the progress agent\n");
        fr_opt.async_progress = 0;
    }
    return start_engine();
}
FR_PMPI(Init_thread);

FR_API int MPI_Finalize(void)
{
    if (fr_active) {
        fr_agent_stop();
        fr_coll_finalize(); /* its attributes' deletion takes the engine lock */
        FR_ENTER();
        /* Drain what is still in flight (sends whose completion nobody waited for, and those
         * FLEXRMA_TEST_JITTER still holds back). */
        fr_idle idle = {0};
        while (fr_pending_count() > 0 || fr_isend_held() > 0) {
            if (fr_progress() == 0)
                fr_backoff(&idle);
        }
        if (fr_opt.stats)
            fr_stats_print();
        fr_dtype_finalize();
        fr_counters_finalize();
        fr_req_finalize();
        fr_shm_map_finalize();
        fr_seg_spares_drop();
        fr_node_finalize();
        fr_hold_finalize();
        fr_seg_unlink_all(); /* segments stay mapped: the program may still use its memory */
        fr_active = 0;
        FR_LEAVE();
        PMPI_Comm_free(&fr_comm_self);
    }
    return FR_NEXT(Finalize)();
}
FR_PMPI(Finalize);
