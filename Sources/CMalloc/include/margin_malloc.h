#ifndef MARGIN_MALLOC_H
#define MARGIN_MALLOC_H

/// Has every thread allocate from glibc's main heap (`mallopt(M_ARENA_MAX, 1)`). Call before
/// other threads start. Returns 1 when glibc took it.
int margin_malloc_one_arena(void);

#endif
