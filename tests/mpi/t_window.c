/* t_window.c - creating, inquiring and freeing windows: MPI_Win_create over malloc'ed and
 * MPI_Alloc_mem'ed memory, zero-size members, per-rank displacement units 1/4/8, the
 * MPI_WIN_BASE/SIZE/DISP_UNIT attributes, MPI_Win_get_group, the window name, windows on a split
 * sub-communicator (whose ranks are not the world's), several windows alive at once,
 * MPI_Win_free and MPI_Free_mem. */
#include "common.h"

/* The three predefined attributes read back as given to MPI_Win_create (3 tests). */
static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int unit, const char *what)
{
    void *got_base = NULL;
    MPI_Aint *got_size = NULL;
    int *got_unit = NULL, flag = 0;

    MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag);
    ok(flag && got_base == base, "%s: MPI_WIN_BASE is the base given (%p)", what, base);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag);
    ok(flag && got_size && *got_size == size, "%s: MPI_WIN_SIZE is %ld", what, (long)size);
    if (flag && got_size && *got_size != size)
        diag("MPI_WIN_SIZE: got %ld", (long)*got_size);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_unit, &flag);
    ok(flag && got_unit && *got_unit == unit, "%s: MPI_WIN_DISP_UNIT is %d", what, unit);
}

#define SENTINEL 0xA5

/* Every rank puts one int into every member of comm at byte offset 8*(1 + its comm rank),
 * expressed in that member's own displacement unit; each member whose window is big enough then
 * checks all of its memory: the ints at their offsets, every other byte untouched (1 test on
 * those members, none on the others). Wrong rank translation or displacement scaling shows. */
static void exercise(MPI_Win win, MPI_Comm comm, unsigned char *mem, MPI_Aint size, int unit,
                     const char *what)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Aint *sizes = xmalloc((size_t)n * sizeof *sizes);
    int *units = xmalloc((size_t)n * sizeof *units), *vals = xmalloc((size_t)n * sizeof *vals);
    MPI_Allgather(&size, 1, MPI_AINT, sizes, 1, MPI_AINT, comm);
    MPI_Allgather(&unit, 1, MPI_INT, units, 1, MPI_INT, comm);
    const MPI_Aint need = 8 * (n + 1) + 4;

    if (size > 0)
        memset(mem, SENTINEL, (size_t)size);
    MPI_Win_fence(0, win);
    for (int t = 0; t < n; t++) {
        vals[t] = pat(me, t, 0);
        if (sizes[t] >= need)
            MPI_Put(&vals[t], 1, MPI_INT, t, 8 * (1 + me) / units[t], 1, MPI_INT, win);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    if (size >= need) {
        unsigned char *exp = xmalloc((size_t)size);
        memset(exp, SENTINEL, (size_t)size);
        for (int o = 0; o < n; o++) {
            int v = pat(o, me, 0);
            memcpy(exp + 8 * (1 + o), &v, sizeof v);
        }
        ok(same_bytes(mem, exp, (size_t)size), "%s: puts from all %d ranks landed at their offsets",
           what, n);
        free(exp);
    }
    free(sizes);
    free(units);
    free(vals);
}

static int units[3] = {1, 4, 8};

/* Epochs of different kinds open on two windows at once: a lock epoch on A inside a fence epoch
 * on B. Each rank puts one int at byte 48 of its right neighbour in both (2 tests). */
static void interleaved(MPI_Win a, unsigned char *mem_a, MPI_Win b, unsigned char *mem_b)
{
    const int off = 48, va = pat(rank, 1, 1), vb = pat(rank, 2, 2);
    int got;
    MPI_Win_fence(0, b);
    MPI_Win_lock(MPI_LOCK_SHARED, right(), 0, a);
    MPI_Put(&va, 1, MPI_INT, right(), off / units[right() % 3], 1, MPI_INT, a);
    MPI_Put(&vb, 1, MPI_INT, right(), off / 8, 1, MPI_INT, b);
    MPI_Win_unlock(right(), a);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, b);
    memcpy(&got, mem_b + off, sizeof got);
    is_int(got, pat(left(), 2, 2), "fence epoch on one window around a lock epoch on another");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, a);
    memcpy(&got, mem_a + off, sizeof got);
    MPI_Win_unlock(rank, a);
    is_int(got, pat(left(), 1, 1), "lock epoch on one window inside a fence epoch on another");
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    const int zero_here = rank % 2;  /* window C: odd ranks contribute no memory */
    tap_plan(4 + 6 + (zero_here ? 3 : 4) + 2 + 1 + 2 + 6 + 5);

    /* A: malloc'ed memory, a different size and displacement unit on each rank. */
    MPI_Aint size_a = 64 + 8 * rank;
    int unit_a = units[rank % 3];
    unsigned char *mem_a = xmalloc((size_t)size_a);
    MPI_Win win_a;
    MPI_Win_create(mem_a, size_a, unit_a, MPI_INFO_NULL, MPI_COMM_WORLD, &win_a);

    /* B: MPI_Alloc_mem'ed memory, disp_unit 8. */
    MPI_Aint size_b = 64 + 8 * rank;
    unsigned char *mem_b;
    MPI_Alloc_mem(size_b, MPI_INFO_NULL, &mem_b);
    /* flexrma promises 64-byte alignment (docs/specification.md, section 3) */
    is_int((long long)((uintptr_t)mem_b % 64), 0, "MPI_Alloc_mem memory is 64-byte aligned");
    MPI_Win win_b;
    MPI_Win_create(mem_b, size_b, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win_b);

    /* C: size 0 (and a NULL base) on odd ranks, disp_unit 4. */
    MPI_Aint size_c = zero_here ? 0 : 96;
    unsigned char *mem_c = NULL;
    if (!zero_here)
        MPI_Alloc_mem(size_c, MPI_INFO_NULL, &mem_c);
    MPI_Win win_c;
    MPI_Win_create(mem_c, size_c, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win_c);

    /* All three are alive at once; use them in turn. */
    check_attrs(win_a, mem_a, size_a, unit_a, "malloc window");
    exercise(win_a, MPI_COMM_WORLD, mem_a, size_a, unit_a, "malloc window");
    check_attrs(win_b, mem_b, size_b, 8, "Alloc_mem window");
    exercise(win_b, MPI_COMM_WORLD, mem_b, size_b, 8, "Alloc_mem window");
    exercise(win_a, MPI_COMM_WORLD, mem_a, size_a, unit_a, "malloc window, again after another");
    check_attrs(win_c, mem_c, size_c, 4, zero_here ? "size-0 member" : "window with size-0 members");
    exercise(win_c, MPI_COMM_WORLD, mem_c, size_c, 4, "window with size-0 members");
    interleaved(win_a, mem_a, win_b, mem_b);

    /* The window's group is the communicator's. */
    MPI_Group wg, cg;
    int cmp = -1;
    MPI_Win_get_group(win_b, &wg);
    MPI_Comm_group(MPI_COMM_WORLD, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    is_int(cmp, MPI_IDENT, "MPI_Win_get_group is MPI_IDENT to the communicator's group");
    MPI_Group_free(&wg);

    /* Names are per window. (The default name is left alone: MPI says empty, Open MPI names
     * its windows, and flexrma's handle is an Open MPI window.) */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Win_set_name(win_a, "flexrma test window");
    MPI_Win_set_name(win_b, "second");
    MPI_Win_get_name(win_a, name, &len);
    ok(len == (int)strlen("flexrma test window") && !strcmp(name, "flexrma test window"),
       "MPI_Win_get_name returns the name set (got \"%s\", len %d)", name, len);
    MPI_Win_get_name(win_b, name, &len);
    ok(len == 6 && !strcmp(name, "second"), "another window keeps its own name (got \"%s\")", name);

    /* A window on a sub-communicator ordered backwards, so its ranks differ from the world's. */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &sub);
    MPI_Aint size_s = 80;
    unsigned char *mem_s;
    MPI_Alloc_mem(size_s, MPI_INFO_NULL, &mem_s);
    MPI_Win win_s;
    MPI_Win_create(mem_s, size_s, 4, MPI_INFO_NULL, sub, &win_s);
    check_attrs(win_s, mem_s, size_s, 4, "sub-communicator window");
    MPI_Group sg;
    MPI_Comm_group(sub, &sg);
    MPI_Win_get_group(win_s, &wg);
    MPI_Group_compare(wg, sg, &cmp);
    is_int(cmp, MPI_IDENT, "sub-communicator window: group is the sub-communicator's");
    MPI_Group_compare(wg, cg, &cmp);
    is_int(cmp, MPI_UNEQUAL, "sub-communicator window: group differs from the world's");
    MPI_Group_free(&wg);
    MPI_Group_free(&sg);
    MPI_Group_free(&cg);
    exercise(win_s, sub, mem_s, size_s, 4, "sub-communicator window");

    /* Free in another order than created; the handle becomes MPI_WIN_NULL. */
    MPI_Win_free(&win_c);
    ok(win_c == MPI_WIN_NULL, "MPI_Win_free set the window with size-0 members to MPI_WIN_NULL");
    MPI_Win_free(&win_s);
    ok(win_s == MPI_WIN_NULL, "MPI_Win_free set the sub-communicator window to MPI_WIN_NULL");
    MPI_Win_free(&win_a);
    ok(win_a == MPI_WIN_NULL, "MPI_Win_free set the malloc window to MPI_WIN_NULL");
    MPI_Win_free(&win_b);
    int rc = MPI_Free_mem(mem_b);
    if (rc == MPI_SUCCESS && mem_c)
        rc = MPI_Free_mem(mem_c);
    if (rc == MPI_SUCCESS)
        rc = MPI_Free_mem(mem_s);
    ok(win_b == MPI_WIN_NULL && rc == MPI_SUCCESS,
       "last window freed; MPI_Free_mem of the MPI_Alloc_mem memory succeeds (rc %d)", rc);
    is_int(MPI_Free_mem(NULL), MPI_SUCCESS, "MPI_Free_mem(NULL) does nothing, like free(NULL)");
    free(mem_a);
    MPI_Comm_free(&sub);
    return test_done();
}
