//! The process's allocator: jemalloc, tuned to hand freed memory back within a fifth of a
//! second, from a background thread.
//!
//! Why not the system's (glibc) allocator: a request's memory is allocated on one thread and
//! freed on another (a tokio worker parses a body, the writer thread drops the command; a
//! task moves between workers). glibc takes the owning arena's lock for such frees beyond
//! its small per-thread cache, and under load those locks were contended: about half of the
//! server threads' futex calls were `free` waiting for an arena (strace). jemalloc's
//! per-thread caches take foreign frees without a lock. Measured on the load bench's 64
//! connections (interleaved runs, same build otherwise): CPU per PATCH 58-69 us against
//! 76-100 us, per create 70-87 us against 88-112 us.
//!
//! Why these options: with jemalloc's defaults freed pages stay resident for ten seconds,
//! and the memory check's peak with the largest account went from 98 MiB to 158 MiB, over
//! its 109 MiB ceiling. Purging at once on every free brings it back (94 MiB) but costs the
//! request path a system call per freed run of pages (CPU per PATCH +20%). So:
//! - blocks from 128 KiB up (project fragments, whole-account replies, the store's import
//!   buffers) come from jemalloc's arena for oversize blocks, which gives pages back as soon
//!   as they are freed, as glibc does for its mmap'd blocks; without it the peak after
//!   re-rendering a written account's fragments reached 108-115 MiB;
//! - the small blocks of the request path are purged by a background thread once unused for
//!   200 ms.
//!
//! Measured: peak 96-97 MiB (base 26-27 MiB), and CPU per request as with the defaults.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// A pointer to a C string, as jemalloc reads its options.
#[repr(transparent)]
struct CStrPointer(*const std::ffi::c_char);

// SAFETY: it points to a string literal, which never changes and lives as long as the process.
unsafe impl Sync for CStrPointer {}

/// jemalloc reads its options from this symbol when it starts (before `main`);
/// `_RJEM_MALLOC_CONF` in the environment still overrides them.
// SAFETY: jemalloc declares `malloc_conf` weak so that a program may define it; this is its
// only definition, a pointer to a NUL-terminated string.
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: CStrPointer = CStrPointer(
    c"background_thread:true,dirty_decay_ms:200,muzzy_decay_ms:0,oversize_threshold:131072"
        .as_ptr(),
);
