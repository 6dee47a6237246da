/* t_shm_residue.c - the job that tests/mpi/t_shm_residue.sh kills.
 *
 *   t_shm_residue [named | named-keep]
 *
 * Every rank allocates segments with MPI_Alloc_mem (1 MiB, one page, zero bytes; with "named*",
 * through the named fallback), publishes them, maps every other rank's segments and checks a
 * byte of each, and prints "t_shm_residue: rank R mapped K segments". With "named" it then
 * unlinks its names, as the transport will once its peers have attached; "named-keep" does not,
 * and so leaves names behind: the script's proof that it would see residue. After a barrier the
 * last rank kills itself with SIGKILL and the others wait in a barrier that never completes,
 * until mpirun ends the job. Nothing of this may remain on the filesystem afterwards.
 * Linked with the internal library: it calls fr_* directly. */
#include "common.h"
#include "node/shm_map.h"

#include <signal.h>
#include <unistd.h>

#define NSEG 3

typedef struct info {
    int64_t pid;
    fr_seg_ref seg[NSEG];
} info;

int main(int argc, char **argv)
{
    static const MPI_Aint sizes[NSEG] = {1 << 20, 4096, 0};
    int named = argc > 1 && strncmp(argv[1], "named", 5) == 0;
    int keep = named && strcmp(argv[1], "named-keep") == 0;
    test_init(&argc, &argv);
    if (named && fr_seg_backend_force(FR_SEG_NAMED) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 3);

    info mine = {.pid = getpid()};
    char *mem[NSEG];
    for (int s = 0; s < NSEG; s++) {
        if (MPI_Alloc_mem(sizes[s], MPI_INFO_NULL, &mem[s]) != MPI_SUCCESS ||
            !fr_seg_lookup(mem[s], 0, &mine.seg[s])) {
            fprintf(stderr, "t_shm_residue: rank %d: block %d is not a segment\n", rank, s);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        mem[s][0] = (char)(rank + 1);
    }
    info *all = xmalloc(nprocs * sizeof *all);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);

    int mapped = 0;
    for (int r = 0; r < nprocs; r++) {
        fr_peer_proc *pp;
        if (r == rank || fr_peer_proc_open((pid_t)all[r].pid, &pp) != MPI_SUCCESS)
            continue;
        for (int s = 0; s < NSEG; s++) {
            char *base;
            if (fr_seg_map_remote(pp, &all[r].seg[s], (void **)&base) == MPI_SUCCESS &&
                base[all[r].seg[s].offset] == (char)(r + 1))
                mapped++;
            else
                fprintf(stderr, "t_shm_residue: rank %d: segment %d of rank %d: %s\n", rank, s,
                        r, fr_error_detail());
        }
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every peer has attached: the names may go */
    if (named && !keep)
        for (int s = 0; s < NSEG; s++)
            fr_seg_unlink_name(mem[s]);
    printf("t_shm_residue: rank %d mapped %d segments\n", rank, mapped);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == nprocs - 1)
        raise(SIGKILL);
    MPI_Barrier(MPI_COMM_WORLD); /* never completes: mpirun ends the job */
    printf("t_shm_residue: rank %d survived\n", rank);
    MPI_Finalize();
    return 0;
}
