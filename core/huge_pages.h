// Transparent huge pages for the heap (issue 23 item 3). A million-GPU month holds 1.4 GiB: with 4 KiB
// pages that is 500,000 page faults (about a sixth of its CPU time went to the kernel) and a TLB miss on
// many of its pointer chases. glibc (2.35 on) backs malloc's memory with huge pages when the tunable
// glibc.malloc.hugetlb=1 says so, and it reads tunables only at startup: so the program executes itself
// once more with it set, before it does anything else.
//
// What it buys depends on the machine. On this project's build machines (Firecracker VMs whose kernel
// hands free memory back to the host, page_reporting_order=11) a fresh huge page is often one the host
// took back, and zeroing it costs: a cold 1,778-rack run spent 0.06-1.01 s in the kernel with huge pages
// against 0.19-0.33 s without. Once the heap is warm they win: a sweep's later seeds took a median 0.43 s
// with them against 0.50 s without (bench/README.md, "Huge pages, measured again"). So they stay on.
#pragma once

namespace rackchaos {

// Call first thing in main(). Executes the program again (same pid, arguments, file descriptors and
// environment) with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES. RACKCHAOS_HUGE_PAGES unset or 1: on;
// 0: off; anything else is said on stderr to be ignored (on). Does nothing when that cannot help or
// would get in the way: RACKCHAOS_HUGE_PAGES=0 in the environment, GLIBC_TUNABLES already naming
// glibc.malloc.hugetlb, a glibc older than 2.35, the kernel's transparent huge pages "never" (or absent),
// a sanitizer's allocator, or valgrind (its tool would lose the program at the exec). If the exec fails
// the program goes on as it is. The executed program puts GLIBC_TUNABLES back as it was given, so the
// programs it starts (ssh, hooks) see the environment the user gave it.
void UseHugePagesForHeap(char** argv);

// True in the program UseHugePagesForHeap executed: its heap is on huge pages (as far as the kernel grants
// them). For the log (`run -v`), so a user can see whether it took.
bool HeapOnHugePages();

}  // namespace rackchaos
