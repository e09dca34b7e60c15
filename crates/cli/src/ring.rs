//! Draining the session's trace ring while the program runs.
//!
//! Layers in every process of the traced tree append records (whole trace
//! lines) to the ring in the shared session file; a thread of the launcher
//! copies them out, in order, to the trace destination: a file, standard
//! error, or (`--trace-ring`) an in-memory ring of the newest lines that is
//! written out when the program ends, however it ends. The protocol is in
//! `strata_proto::counts` (RECORD_*); writers wait when the ring is full,
//! and the launcher wakes them through the tail word.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use strata_proto::counts;

/// Where drained lines go.
pub enum Sink {
    /// Written as they come.
    Stream(Box<dyn Write + Send>),
    /// The newest `keep` bytes of lines are kept, written at the end.
    Newest { keep: usize, to: Box<dyn Write + Send> },
}

/// A running drain.
pub struct Drain {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<Box<dyn Write + Send>>>>,
}

struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is shared memory accessed only through atomics and
// byte copies of regions the protocol hands to the reader.
unsafe impl Send for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

impl Mapping {
    fn word(&self, w: usize) -> &AtomicU64 {
        // SAFETY: header words lie inside the mapping, 8-byte aligned.
        unsafe { &*(self.base.add(w * 8) as *const AtomicU64) }
    }
}

impl Drain {
    /// Maps the session file at `path` and starts draining into `sink`.
    pub fn start(path: &Path, sink: Sink) -> io::Result<Drain> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        let len = f.metadata()?.len() as usize;
        if len < counts::FILE_SIZE {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "session file too short"));
        }
        // SAFETY: a shared read-write mapping of the whole session file.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let m = Mapping {
            base: base as *mut u8,
            len,
        };
        let size = m.word(counts::RING_SIZE_WORD).load(Ordering::Relaxed) as usize;
        if size == 0 || !size.is_power_of_two() || counts::RING_OFFSET + size > len {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "session file has no ring"));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("strata-drain".into())
            .spawn(move || run(m, size, sink, &s2))?;
        Ok(Drain {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops after a last pass, appends `extra`, and flushes everything.
    pub fn finish(mut self, extra: &[u8]) -> io::Result<()> {
        self.stop.store(true, Ordering::Release);
        let t = self.thread.take();
        let mut w = match t.map(|t| t.join()) {
            Some(Ok(r)) => r?,
            _ => return Err(io::Error::other("the drain thread failed")),
        };
        w.write_all(extra)?;
        w.flush()
    }
}

fn run(m: Mapping, size: usize, sink: Sink, stop: &AtomicBool) -> io::Result<Box<dyn Write + Send>> {
    let (mut out, mut newest, keep) = match sink {
        Sink::Stream(w) => (io::BufWriter::with_capacity(64 * 1024, w), None, 0),
        Sink::Newest { keep, to } => (io::BufWriter::new(to), Some(VecDeque::new()), keep),
    };
    let mut rec = Vec::with_capacity(counts::RECORD_MAX);
    // Idle polls back off from 1 ms to 16 ms (a quiet program costs the
    // launcher almost nothing; a busy one is drained every millisecond).
    let mut idle = Duration::from_millis(1);
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let mut got = 0;
        while take(&m, size, &mut rec) {
            got += 1;
            match newest.as_mut() {
                None => out.write_all(&rec)?,
                Some(q) => {
                    q.extend(rec.iter().copied());
                    // Drop whole lines from the front.
                    while q.len() > keep {
                        match q.iter().position(|&b| b == b'\n') {
                            Some(i) => drop(q.drain(..=i)),
                            None => q.clear(),
                        }
                    }
                }
            }
        }
        if got == 0 {
            if stopping {
                break;
            }
            out.flush()?;
            std::thread::sleep(idle);
            idle = (idle * 2).min(Duration::from_millis(16));
        } else {
            idle = Duration::from_millis(1);
        }
    }
    if let Some(q) = newest {
        let (a, b) = q.as_slices();
        out.write_all(a)?;
        out.write_all(b)?;
    }
    out.flush()?;
    out.into_inner().map_err(|e| e.into_error())
}

/// Takes the record at the tail into `rec`; false when none is committed.
fn take(m: &Mapping, size: usize, rec: &mut Vec<u8>) -> bool {
    let tail_w = m.word(counts::RING_TAIL_WORD);
    let tail = tail_w.load(Ordering::Acquire);
    let ring = m.base.wrapping_add(counts::RING_OFFSET);
    let at = tail as usize & (size - 1);
    // SAFETY: `at` is 8-aligned and < size: a header word inside the ring.
    let hdr = unsafe { &*(ring.add(at) as *const AtomicU64) };
    let h = hdr.load(Ordering::Acquire);
    if h & counts::RECORD_COMMITTED == 0 {
        return false;
    }
    let len = ((h >> 8) as usize).min(counts::RECORD_MAX);
    let total = counts::record_size(len);
    rec.clear();
    let mut off = (at + 8) & (size - 1);
    for _ in 0..len {
        // SAFETY: off < size, inside the ring.
        rec.push(unsafe { *ring.add(off) });
        off = (off + 1) & (size - 1);
    }
    // Zero what was consumed so stale bytes never look like a header.
    let mut z = at;
    for _ in 0..total / 8 {
        // SAFETY: z is 8-aligned and < size.
        unsafe { (*(ring.add(z) as *const AtomicU64)).store(0, Ordering::Relaxed) };
        z = (z + 8) & (size - 1);
    }
    tail_w.store(tail + total as u64, Ordering::Release);
    // SAFETY: FUTEX_WAKE (shared) on the tail word: writers waiting for room.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            tail_w as *const AtomicU64,
            libc::FUTEX_WAKE,
            i32::MAX,
            0usize,
            0usize,
            0usize,
        )
    };
    true
}
