#ifndef C_HEAP_STATISTICS_H
#define C_HEAP_STATISTICS_H

#include <stddef.h>

/// Bytes the C allocator has handed out and not had back (glibc's `mallinfo2`: in-use chunks
/// of every arena plus mmap'd blocks), or 0 where that is not known. Swift's Glibc module does
/// not export `mallinfo2`, which returns a struct by value.
size_t heap_statistics_bytes_in_use(void);

#endif
