// Transparent huge pages for the heap (issue 23 item 3). A million-GPU month holds 1.4 GiB: with 4 KiB
// pages that is 500,000 page faults (about a sixth of its CPU time went to the kernel) and a TLB miss on
// many of its pointer chases. glibc (2.35 on) backs malloc's memory with huge pages when the tunable
// glibc.malloc.hugetlb=1 says so, and it reads tunables only at startup: so the program executes itself
// once more with it set, before it does anything else.
#pragma once

namespace rackchaos {

// Call first thing in main(). Executes the program again (same pid, arguments, file descriptors and
// environment) with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES. Does nothing when that cannot help or
// would get in the way: RACKCHAOS_HUGE_PAGES=0 in the environment, GLIBC_TUNABLES already naming
// glibc.malloc.hugetlb, a glibc older than 2.35, the kernel's transparent huge pages "never" (or absent),
// a sanitizer's allocator, or valgrind (its tool would lose the program at the exec). If the exec fails
// the program goes on as it is. The executed program puts GLIBC_TUNABLES back as it was given, so the
// programs it starts (ssh, hooks) see the environment the user gave it.
void UseHugePagesForHeap(char** argv);

}  // namespace rackchaos
