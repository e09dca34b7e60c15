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
    map: Arc<Mapping>,
    thread: Option<JoinHandle<io::Result<Box<dyn Write + Send>>>>,
}

struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is shared memory accessed only through atomics and
// byte copies of regions the protocol hands to the reader.
unsafe impl Send for Mapping {}
// SAFETY: as above: the launcher's other thread only touches the waiting
// word, atomically (`Drain::finish`).
unsafe impl Sync for Mapping {}

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
        Self::start_waiting(path, sink, WAIT_MAX)
    }

    /// [`Drain::start`], with the longest wait for a record on an empty ring
    /// (the tests make it long, so that only a wake-up ends it).
    fn start_waiting(path: &Path, sink: Sink, wait_max: Duration) -> io::Result<Drain> {
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
        let m = Arc::new(Mapping {
            base: base as *mut u8,
            len,
        });
        let size = m.word(counts::RING_SIZE_WORD).load(Ordering::Relaxed) as usize;
        if size == 0 || !size.is_power_of_two() || counts::RING_OFFSET + size > len {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "session file has no ring"));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let m2 = m.clone();
        let thread = std::thread::Builder::new()
            .name("strata-drain".into())
            .spawn(move || run(&m2, size, sink, &s2, wait_max))?;
        Ok(Drain {
            stop,
            map: m,
            thread: Some(thread),
        })
    }

    /// Stops after a last pass, appends `extra`, and flushes everything.
    pub fn finish(mut self, extra: &[u8]) -> io::Result<()> {
        // SeqCst, as the reader's look before it waits: either it sees
        // `stop`, or its waiting word is set before `wake_reader` clears it.
        self.stop.store(true, Ordering::SeqCst);
        let t = self.thread.take();
        if let Some(t) = &t {
            // It may be sleeping between polls, or until a record comes:
            // the last pass starts now.
            t.thread().unpark();
            wake_reader(&self.map);
        }
        let mut w = match t.map(|t| t.join()) {
            Some(Ok(r)) => r?,
            _ => return Err(io::Error::other("the drain thread failed")),
        };
        w.write_all(extra)?;
        w.flush()
    }
}

fn run(
    m: &Mapping,
    size: usize,
    sink: Sink,
    stop: &AtomicBool,
    wait_max: Duration,
) -> io::Result<Box<dyn Write + Send>> {
    let (mut out, mut newest, keep) = match sink {
        Sink::Stream(w) => (io::BufWriter::with_capacity(64 * 1024, w), None, 0),
        Sink::Newest { keep, to } => (io::BufWriter::new(to), Some(VecDeque::new()), keep),
    };
    let mut rec = Vec::with_capacity(counts::RECORD_MAX);
    // Idle polls back off from 1 ms to 16 ms (a busy ring is drained every
    // millisecond, without its writers doing anything); a ring that stays
    // empty through the whole back-off is waited on instead, until a
    // writer's record wakes the reader (`counts::RING_WAITING_WORD`): a quiet
    // program, a sandboxed build that logs nothing, makes the launcher
    // wake up about once a second, not 60 times (each wake-up takes CPU
    // from the program, on the same CPU when it is pinned).
    let mut idle = Duration::from_millis(1);
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let mut got = 0;
        while take(m, size, &mut rec) {
            got += 1;
            if got % 256 == 0 {
                wake_writers(m);
            }
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
        if got != 0 {
            wake_writers(m);
        }
        if got == 0 {
            if stopping {
                break;
            }
            out.flush()?;
            // (After a wait, records reset the back-off; none, and the
            // reader waits again at once.)
            if idle < IDLE_MAX || !sleep_until_record(m, stop, wait_max) {
                std::thread::park_timeout(idle);
                idle = (idle * 2).min(IDLE_MAX);
            }
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

/// Whether thread `tid` no longer runs (gone, or a zombie: killed, not yet
/// reaped).
fn writer_gone(tid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{tid}/stat")) {
        // The state follows the last ')' (the command name may hold any byte).
        Ok(st) => st
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Takes the record at the tail into `rec` (empty for a record whose writer
/// died before finishing it); false when none is ready.
fn take(m: &Mapping, size: usize, rec: &mut Vec<u8>) -> bool {
    let tail_w = m.word(counts::RING_TAIL_WORD);
    let tail = tail_w.load(Ordering::Acquire);
    if m.word(counts::RING_HEAD_WORD).load(Ordering::Acquire) == tail {
        return false; // nothing reserved (a reservation at the head is not yet a record)
    }
    let ring = m.base.wrapping_add(counts::RING_OFFSET);
    let at = tail as usize & (size - 1);
    // SAFETY: `at` is 8-aligned and < size: a header word inside the ring.
    let hdr = unsafe { &*(ring.add(at) as *const AtomicU64) };
    let h = hdr.load(Ordering::Acquire);
    let (len, tid, committed, lap) = counts::record_parts(h);
    if h == 0 || lap != counts::ring_lap(tail, size) {
        return false; // (writers put a header there before the head passes it)
    }
    let len = len.min(counts::RECORD_MAX);
    rec.clear();
    if !committed {
        // Reserved but not written yet. If its writer is gone (killed in
        // the middle), skip the record, or the trace would stop here for good.
        if !writer_gone(tid) || hdr.load(Ordering::Acquire) != h {
            return false;
        }
    } else {
        // The bytes follow the header, wrapping at the ring's end: at most
        // two runs.
        let off = (at + 8) & (size - 1);
        let first = len.min(size - off);
        // SAFETY: [off, off + first) and [0, len - first) lie inside the
        // ring (len <= RECORD_MAX < size), and the committed record is not
        // written again until the tail passes it.
        let (a, b) = unsafe {
            (
                std::slice::from_raw_parts(ring.add(off), first),
                std::slice::from_raw_parts(ring, len - first),
            )
        };
        rec.extend_from_slice(a);
        rec.extend_from_slice(b);
    }
    let total = counts::record_size(len);
    // Zero what was consumed so stale bytes never look like a header.
    let mut z = at;
    for _ in 0..total / 8 {
        // SAFETY: z is 8-aligned and < size.
        unsafe { (*(ring.add(z) as *const AtomicU64)).store(0, Ordering::Relaxed) };
        z = (z + 8) & (size - 1);
    }
    tail_w.store(tail + total as u64, Ordering::Release);
    true
}

/// The longest idle poll.
const IDLE_MAX: Duration = Duration::from_millis(16);
/// The longest wait for a record on an empty ring: a writer killed between
/// its commit and its wake-up delays lines by at most this, never loses them.
const WAIT_MAX: Duration = Duration::from_secs(1);

/// Waits until a writer commits a record (at most `wait_max`), if the ring
/// is still empty once the waiting word is set (false: it is not, nothing
/// was waited for).
fn sleep_until_record(m: &Mapping, stop: &AtomicBool, wait_max: Duration) -> bool {
    let w = m.word(counts::RING_WAITING_WORD);
    // Set before the look at the head (both SeqCst): a writer moves the
    // head (SeqCst) before it looks at the word (runtime stack.rs
    // `wake_reader`), so either the head has moved here or that writer
    // sees the word set.
    w.store(1, Ordering::SeqCst);
    let empty =
        m.word(counts::RING_HEAD_WORD).load(Ordering::SeqCst) == m.word(counts::RING_TAIL_WORD).load(Ordering::Acquire);
    if !empty || stop.load(Ordering::SeqCst) {
        w.store(0, Ordering::Relaxed);
        return false;
    }
    let ts = libc::timespec {
        tv_sec: wait_max.as_secs() as libc::time_t,
        tv_nsec: wait_max.subsec_nanos() as libc::c_long,
    };
    // While it is 1; a writer or `Drain::finish` clears it and wakes us.
    futex(w, libc::FUTEX_WAIT, 1, Some(&ts));
    w.store(0, Ordering::Relaxed);
    true
}

/// Wakes the reader if it waits for a record (`Drain::finish`: it is time
/// for the last pass).
fn wake_reader(m: &Mapping) {
    let w = m.word(counts::RING_WAITING_WORD);
    w.store(0, Ordering::SeqCst);
    futex(w, libc::FUTEX_WAKE, 1, None);
}

/// Wakes writers waiting for room (once per batch of records taken).
fn wake_writers(m: &Mapping) {
    futex(m.word(counts::RING_TAIL_WORD), libc::FUTEX_WAKE, i32::MAX as u32, None);
}

/// futex(2) `op` (shared: the words are in a file mapping every process of
/// the tree shares) on the low half of header word `w`.
fn futex(w: &AtomicU64, op: libc::c_int, val: u32, timeout: Option<&libc::timespec>) {
    let ts = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word is a live, aligned u64 of the mapping (its low half
    // on this little-endian machine); `ts` is null or a live timespec.
    unsafe { libc::syscall(libc::SYS_futex, w as *const AtomicU64, op, val, ts, 0usize, 0usize) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::CounterFile;
    use crate::testutil::TempDir;
    use std::os::unix::fs::FileExt;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Writes records straight into a session file, as writers would.
    fn put_records(path: &Path, records: &[(&[u8], u32, bool)]) {
        let f = OpenOptions::new().read(true).write(true).open(path).unwrap();
        let mut at = 0usize;
        for (payload, tid, committed) in records {
            let base = (counts::RING_OFFSET + at) as u64;
            f.write_all_at(payload, base + 8).unwrap();
            f.write_all_at(
                &counts::record_header(payload.len(), *tid, *committed, 0).to_le_bytes(),
                base,
            )
            .unwrap();
            at += counts::record_size(payload.len());
        }
        f.write_all_at(&(at as u64).to_le_bytes(), (counts::RING_HEAD_WORD * 8) as u64)
            .unwrap();
    }

    fn drain(path: &Path) -> Vec<u8> {
        let out = Shared::default();
        let d = Drain::start(path, Sink::Stream(Box::new(out.clone()))).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        d.finish(b"end\n").unwrap();
        let v = out.0.lock().unwrap().clone();
        v
    }

    #[test]
    fn records_come_out_in_order() {
        let dir = TempDir::new("ring1");
        let s = CounterFile::create_session(dir.path(), 1 << 16, 0, None).unwrap();
        let me = std::process::id();
        put_records(s.path(), &[(b"one\n", me, true), (b"two\n", me, true)]);
        assert_eq!(drain(s.path()), b"one\ntwo\nend\n");
    }

    #[test]
    fn a_record_whose_writer_died_is_skipped() {
        let dir = TempDir::new("ring2");
        let s = CounterFile::create_session(dir.path(), 1 << 16, 0, None).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        put_records(s.path(), &[(b"lost", dead, false), (b"after\n", me, true)]);
        assert_eq!(drain(s.path()), b"after\nend\n");
    }

    #[test]
    fn a_reservation_the_head_has_not_passed_is_not_a_record() {
        // A writer killed between reserving the slot at the head and moving
        // the head: its header is there, the head is not past it.
        let dir = TempDir::new("ring4");
        let s = CounterFile::create_session(dir.path(), 1 << 16, 0, None).unwrap();
        let me = std::process::id();
        put_records(s.path(), &[(b"one\n", me, true)]);
        let f = OpenOptions::new().write(true).open(s.path()).unwrap();
        let next = (counts::RING_OFFSET + counts::record_size(4)) as u64;
        f.write_all_at(&counts::record_header(8, me, false, 0).to_le_bytes(), next)
            .unwrap();
        assert_eq!(drain(s.path()), b"one\nend\n");
    }

    #[test]
    fn an_empty_ring_is_waited_on_until_a_record_wakes_the_reader() {
        let dir = TempDir::new("ring5");
        let s = CounterFile::create_session(dir.path(), 1 << 16, 0, None).unwrap();
        let out = Shared::default();
        // Waits that only a wake-up ends (within this test's time): a record
        // that comes out, or a finish that returns, was woken for.
        let forever = Duration::from_secs(600);
        let d = Drain::start_waiting(s.path(), Sink::Stream(Box::new(out.clone())), forever).unwrap();
        let map = d.map.clone();
        let word = map.word(counts::RING_WAITING_WORD);
        let wait_until = |ok: &dyn Fn() -> bool, what: &str| {
            for _ in 0..1000 {
                if ok() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            panic!("{what}");
        };
        // Nothing comes: after its back-off the reader waits on the word.
        wait_until(
            &|| word.load(Ordering::SeqCst) == 1,
            "the reader never waited on the empty ring",
        );
        // A writer commits a record, then clears the word and wakes the
        // reader, as the runtime does (stack.rs `wake_reader`).
        put_records(s.path(), &[(b"one\n", std::process::id(), true)]);
        assert_eq!(word.swap(0, Ordering::SeqCst), 1);
        futex(word, libc::FUTEX_WAKE, 1, None);
        wait_until(
            &|| out.0.lock().unwrap().as_slice() == b"one\n",
            "the record never came out: the wake-up was lost",
        );
        // Asleep again, until `finish` wakes it for the last pass.
        wait_until(&|| word.load(Ordering::SeqCst) == 1, "the reader did not wait again");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(d.finish(b"end\n").is_ok()));
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(30)),
            Ok(true),
            "finish did not wake the waiting reader"
        );
        assert_eq!(out.0.lock().unwrap().as_slice(), b"one\nend\n");
    }

    #[test]
    fn a_record_still_being_written_is_waited_for() {
        let dir = TempDir::new("ring3");
        let s = CounterFile::create_session(dir.path(), 1 << 16, 0, None).unwrap();
        let me = std::process::id();
        // This thread is alive: the reader must not skip its record.
        put_records(s.path(), &[(b"busy", me, false), (b"after\n", me, true)]);
        assert_eq!(drain(s.path()), b"end\n");
    }
}
