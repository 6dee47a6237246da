/* t_win_info.c - window hints and the memory model: MPI_Win_get_info reports every key MPI-3.1
 * defines for windows with the value in use (the defaults, the creation info's, MPI_Win_set_info's,
 * undefined values ignored); MPI_WIN_MODEL is MPI_WIN_UNIFIED, and a process polling its own
 * window with loads and MPI_Win_sync, holding no lock, sees a neighbour's flushed puts;
 * accumulate_ordering=none keeps accumulates atomic while small ones may overtake large ones. */
#include "errors_common.h"

#define N 8
#define BIG (1 << 14) /* ints of a large accumulate: 64 KiB, beyond FLEXRMA_EAGER_MAX */
#define ROUNDS 50

/* The value of key in the window's info, "" when absent. */
static const char *hint(MPI_Win win, const char *key)
{
    static char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    int flag = 0;
    MPI_Win_get_info(win, &info);
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? value : "";
}

static void is_hint(MPI_Win win, const char *key, const char *want, const char *when)
{
    const char *got = hint(win, key);
    if (!ok(strcmp(got, want) == 0, "%s: %s is %s", when, key, want))
        diag("got \"%s\"", got);
}

/* Part 1 (11 tests): defaults, creation info, MPI_Win_set_info, values MPI does not define. */
static void hints(void)
{
    iwin w;
    iwin_create(&w, N);
    is_hint(w.win, "no_locks", "false", "default");
    is_hint(w.win, "accumulate_ordering", "rar,raw,war,waw", "default");
    is_hint(w.win, "accumulate_ops", "same_op_no_op", "default");
    is_hint(w.win, "same_size", "false", "default");
    is_hint(w.win, "same_disp_unit", "false", "default");
    iwin_free(&w);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "accumulate_ordering", "waw,rar");
    MPI_Info_set(info, "accumulate_ops", "same_op");
    int mem[N];
    MPI_Win win;
    MPI_Win_create(mem, sizeof mem, sizeof(int), info, MPI_COMM_WORLD, &win);
    is_hint(win, "no_locks", "true", "creation info");
    is_hint(win, "accumulate_ordering", "rar,waw", "creation info");
    is_hint(win, "accumulate_ops", "same_op", "creation info");

    MPI_Info_free(&info);
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "same_size", "maybe"); /* not a value MPI defines: ignored */
    MPI_Win_set_info(win, info);
    is_hint(win, "accumulate_ordering", "none", "after MPI_Win_set_info");
    is_hint(win, "no_locks", "true", "after MPI_Win_set_info without it");
    is_hint(win, "same_size", "false", "after MPI_Win_set_info with an undefined value");
    MPI_Info_free(&info);
    MPI_Win_free(&win);
}

/* Part 2 (2 tests): the unified model. Each rank puts N ints into its right neighbour's window
 * and then a flag, each followed by MPI_Win_flush, inside MPI_Win_lock_all; the neighbour,
 * holding no lock, polls the flag with loads and MPI_Win_sync and then reads the data. */
static void unified(void)
{
    iwin w;
    iwin_create(&w, N + 1);
    int *model, flag = 0;
    MPI_Win_get_attr(w.win, MPI_WIN_MODEL, &model, &flag);
    ok(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL is MPI_WIN_UNIFIED");

    int data[N], bad = 0;
    MPI_Win_lock_all(0, w.win);
    for (int round = 1; round <= ROUNDS; round++) {
        fill_pat(data, N, rank, round);
        MPI_Put(data, N, MPI_INT, right(), 0, N, MPI_INT, w.win);
        MPI_Win_flush(right(), w.win);
        MPI_Put(&round, 1, MPI_INT, right(), N, 1, MPI_INT, w.win);
        MPI_Win_flush(right(), w.win);
        volatile int *mine = w.buf;
        while (mine[N] != round)
            MPI_Win_sync(w.win);
        MPI_Win_sync(w.win);
        bad += !is_pat(w.buf, N, left(), round);
        /* The neighbour writes the next round only after I said I have read this one. */
        MPI_Sendrecv(NULL, 0, MPI_INT, left(), 0, NULL, 0, MPI_INT, right(), 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    MPI_Win_unlock_all(w.win);
    is_int(bad, 0, "rounds whose data was not in the window when the flag was");
    iwin_free(&w);
}

/* Part 3 (1 test): accumulate_ordering=none. Every rank adds 1 to its right neighbour's
 * elements with large accumulates of the whole window and small ones of the first 4 elements,
 * interleaved; each element must end with exactly the number of additions. */
static void unordered_accumulates(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    int *mem, *ones = xmalloc(BIG * sizeof(int));
    MPI_Alloc_mem(BIG * sizeof(int), MPI_INFO_NULL, &mem);
    memset(mem, 0, BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        ones[i] = 1;
    MPI_Win win;
    MPI_Win_create(mem, BIG * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &win);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    for (int round = 0; round < ROUNDS / 5; round++) {
        MPI_Accumulate(ones, BIG, MPI_INT, right(), 0, BIG, MPI_INT, MPI_SUM, win);
        for (int k = 0; k < 4; k++)
            MPI_Accumulate(ones, 4, MPI_INT, right(), 0, 4, MPI_INT, MPI_SUM, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    int bad = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < BIG; i++)
        bad += mem[i] != (ROUNDS / 5) * (i < 4 ? 5 : 1);
    MPI_Win_unlock(rank, win);
    is_int(bad, 0, "elements with a wrong sum under accumulate_ordering=none");
    MPI_Win_free(&win);
    MPI_Free_mem(mem);
    free(ones);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    tap_plan(11 + 2 + 1);
    hints();
    unified();
    unordered_accumulates();
    return test_done();
}
