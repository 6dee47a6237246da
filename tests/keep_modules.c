/* keep_modules.c - preloaded into the ranks of the ASan build's tests: dlclose() unloads nothing.
 *
 * Open MPI unloads its MCA components at MPI_Finalize, and keeps memory they allocated. At exit
 * LeakSanitizer walks those allocations' stacks, and for every frame in an unloaded component
 * it reads /proc/self/maps again looking for the module: about 1.3 s of each run's 2.5 s
 * (t_pscw.np2), over a third of the ASan stage. With the components still mapped the frames
 * resolve at once, to modules tests/lsan.supp names. Leaks of flexrma and of the tests are
 * reported as before: their stacks reach no suppressed module.
 *
 * Built without the sanitizer (it is preloaded into mpirun and the shell too), and only for the
 * ASan build (tests/CMakeLists.txt).
 */

/* A handle stays valid; the library stays mapped until the process ends. */
int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
