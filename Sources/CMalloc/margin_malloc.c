#include "margin_malloc.h"

#include <stdlib.h>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int margin_malloc_one_arena(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
    return mallopt(M_ARENA_MAX, 1);
#else
    return 0;
#endif
}
