/* hosts-check.c - the program `scripts/hosts check` runs over the hosts (built there with the
 * MPI's compiler): half round trips of 8 bytes between rank 0 and every other rank, with the
 * hostnames; then rank 0's MPI_COMM_TYPE_SHARED size and how many TCP connections its host has
 * to the other hosts of the subnet argv[1] ("A.B.C": hosts are A.B.C.11 and up, the launcher's
 * side A.B.C.1, whose connections the MPI library's daemons make anyway).
 *
 *   rtt HOST PEER-HOST MICROSECONDS     for each other rank
 *   node SHARED-SIZE tcp CONNECTIONS    once */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

static int tcp_to_other_hosts(const char *net, const char *self_host)
{
    unsigned a, b, c, self = 0;
    if (sscanf(net, "%u.%u.%u", &a, &b, &c) != 3)
        return -1;
    sscanf(self_host, "flexrma-h%u", &self);
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned rem, port, st;
        if (sscanf(line, "%*d: %*x:%*x %x:%x %x", &rem, &port, &st) != 3 || st != 1)
            continue; /* 1: ESTABLISHED */
        /* the address as a little-endian word: A.B.C.D is D << 24 | C << 16 | B << 8 | A */
        unsigned d = rem >> 24;
        if ((rem & 0xffffff) == (c << 16 | b << 8 | a) && d > 10 && d != 10 + self)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n, ns;
    char host[256], peer[256];
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &ns);
    gethostname(host, sizeof host);
    for (int p = 1; p < n; p++) {
        char b[8] = {0};
        const int it = 1000;
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) {
            MPI_Recv(peer, sizeof peer, MPI_CHAR, p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            double t = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Send(b, 8, MPI_BYTE, p, 0, MPI_COMM_WORLD);
                MPI_Recv(b, 8, MPI_BYTE, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            printf("rtt %s %s %.2f\n", host, peer, (MPI_Wtime() - t) / it / 2 * 1e6);
        } else if (r == p) {
            MPI_Send(host, sizeof host, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            for (int i = 0; i < it; i++) {
                MPI_Recv(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
    }
    if (r == 0)
        printf("node %d tcp %d\n", ns, tcp_to_other_hosts(argc > 1 ? argv[1] : "", host));
    MPI_Finalize();
    return 0;
}
