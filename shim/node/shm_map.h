/* shm_map.h - reaching a node peer's memory: mapping its segments (shm_seg.h), and cross-memory
 * attach (process_vm_readv/writev) for memory that is in no segment.
 *
 * A peer's segment is mapped once per (peer process, segment) however many windows use it. When
 * the last user releases it, a small one stays mapped, idle, for the owner's next window, which
 * often gets the same segment back (shm_seg.h: spares); a bounded number do (shm_map.c). Peer processes are identified by their pid; a pidfd
 * (pidfd_open) is opened for each mapping and closed with it, never kept: a descriptor per peer
 * would make a process's descriptors grow with its node peers (issue 21). A reused pid cannot
 * map the wrong file (inode check, below), only fail.
 * The pid must be valid in this process's pid namespace: the transport first checks a peer with
 * fr_cma_usable(), which reads a token the peer published and so also catches a pid of another
 * namespace; every mapped segment is checked against the inode its owner published.
 *
 * Callers hold the engine lock (FR_ENTER); nothing here locks. */
#ifndef FR_SHM_MAP_H
#define FR_SHM_MAP_H

#include "core/fr.h"
#include "shm_seg.h"
#include "core/u64map.h"

#include <sys/types.h>
#include <sys/uio.h>

typedef struct fr_peer_proc {
    pid_t pid;
    int pidfd_works; /* 0 where pidfd_open is unavailable (the /proc/<pid>/fd path is used) */
    int refs;        /* fr_peer_proc_open() calls not yet released */
    int idle;        /* its mappings no window uses, kept for reuse (shm_map.c) */
    fr_u64map maps;  /* segment serial -> mapping (shm_map.c) */
} fr_peer_proc;

/* The record of process pid, opened on first use and shared by later calls (counted). Errors:
 * FR_ERR_SHM (the process does not exist or cannot be opened). */
int fr_peer_proc_open(pid_t pid, fr_peer_proc **pp);
/* Drop one reference; the last one unmaps whatever is still mapped, unless idle mappings keep
 * the record (then the last of those to go does). */
void fr_peer_proc_release(fr_peer_proc *pp);

/* Map the whole segment `ref` of process pp (ref->size bytes, read-write, shared); *base is its
 * start here (the address the peer looked up is *base + ref->offset). Mapped once per segment:
 * later calls count a reference and return the same address. The descriptor is taken with
 * pidfd_getfd, else opened through /proc/<pid>/fd, else (named backend) by ref->name; it is
 * closed once mapped. Errors: FR_ERR_SHM with the reason. */
int fr_seg_map_remote(fr_peer_proc *pp, const fr_seg_ref *ref, void **base);
/* Release one reference on pp's segment `serial`; after the last one it is unmapped, or, if
 * small, kept idle for a later fr_seg_map_remote of the same segment. */
void fr_seg_unmap_remote(fr_peer_proc *pp, uint64_t serial);
/* Mapped segments of pp (tests). */
size_t fr_seg_remote_count(const fr_peer_proc *pp);

/* ---- cross-memory attach ---- */

/* What a process publishes so that peers can test cross-memory attach to it: the address of a
 * word in its memory and the random value the word holds. */
typedef struct fr_cma_probe {
    uint64_t addr;
    uint64_t token;
} fr_cma_probe;

void fr_cma_probe_self(fr_cma_probe *out);
/* 1 if process_vm_readv of pid's probe word works and reads the token (so pid is the process
 * that published it), 0 otherwise, with the reason recorded (fr_error_detail). */
int fr_cma_usable(pid_t pid, const fr_cma_probe *peer);
/* Copy between local and remote iovec lists of equal total length: one system call when the
 * kernel moves everything at once, more when it stops short or a list is longer than IOV_MAX.
 * Errors: FR_ERR_SHM with the reason; FR_ERR_ARG when the totals differ. */
int fr_cma_read(pid_t pid, const struct iovec *local, size_t nlocal,
                const struct iovec *remote, size_t nremote);
int fr_cma_write(pid_t pid, const struct iovec *local, size_t nlocal,
                 const struct iovec *remote, size_t nremote);

/* At MPI_Init: let sibling processes of the same user attach to this one (Yama). */
void fr_peer_access_allow(void);
/* At MPI_Finalize: unmap every peer segment. */
void fr_shm_map_finalize(void);

#endif
