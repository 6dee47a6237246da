/* next.c - see next.h. */
#define _GNU_SOURCE
#include "next.h"

#include <dlfcn.h>

void *fr_next_symbol(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn)
        fr_fatal("the MPI library does not define %s", name);
    return fn;
}
