/* node_comm.h - which processes are this process's node peers: the one rule every part of flexrma
 * that shares memory with other processes follows (the packet channel, single-copy access, the
 * shared state block, MPI_Win_allocate_shared).
 *
 * Node peers are the processes of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). The test switch
 * FLEXRMA_TEST_NODES=K (fr_opt.test_nodes) splits them further into simulated nodes, so that
 * one machine can test windows that mix node peers and processes of other nodes: world rank r
 * is on simulated node r * K / world size, and processes on different simulated nodes are, to
 * flexrma, on different nodes. A spawned process counts by its own MPI_COMM_WORLD. */
#ifndef FR_NODE_COMM_H
#define FR_NODE_COMM_H

#include "core/fr.h"

/* The processes of comm that are node peers of this one (this one included), as a new
 * communicator in comm's order, which the caller frees. Collective over comm. */
void fr_node_comm(MPI_Comm comm, MPI_Comm *node);
/* At MPI_Init (collective over MPI_COMM_WORLD): learn this process's node peers in
 * MPI_COMM_WORLD once; at MPI_Finalize, forget them. */
void fr_node_init(void);
void fr_node_finalize(void);
/* The same processes as fr_node_comm, as a group in comm's order, which the caller frees. Where
 * every process of comm is in MPI_COMM_WORLD, it is the intersection with the node peers
 * fr_node_init found, with no communication: being node peers is a property of two processes,
 * whatever the communicator (MPICH's MPI_Comm_split_type with 4 ranks on 2 cores took 45 ms of
 * each window creation). Otherwise (spawned or connected processes) it is fr_node_comm's
 * collective split; every member then sees a process outside its own world and splits too. */
void fr_node_group(MPI_Comm comm, MPI_Group *node);
/* Are all of comm's processes node peers of this one? Answered without communication, from what
 * fr_node_init found: 0 also where comm holds a process outside MPI_COMM_WORLD (spawned or
 * connected), which only a collective split could place. Every process of comm gets the same
 * answer: being node peers is symmetric, and where one process of comm sees a process outside
 * its own MPI_COMM_WORLD, every other one does too. */
int fr_node_all_peers(MPI_Comm comm);

#endif
