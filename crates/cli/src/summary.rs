//! The `count` extension's summary: reads the shared counter file and renders
//! it the way `strace -c` does.

use strata_proto::counts::{self, FILE_SIZE, MAGIC, SLOTS, TRAPPED_WORD};

/// Why a counter file's contents cannot be summarised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    #[error("counter file has {0} bytes, expected at least {FILE_SIZE}")]
    BadSize(usize),
    #[error("counter file does not start with the strata counter magic")]
    BadMagic,
}

/// The counts of one syscall slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub nr: usize,
    pub calls: u64,
    pub errors: u64,
    pub nanos: u64,
}

/// Everything read from a counter file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    /// Slots with at least one call, in syscall-number order.
    pub rows: Vec<Row>,
    /// Calls that reached strata through the trap path.
    pub trapped: u64,
}

fn word(buf: &[u8], index: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(b) = buf.get(index * 8..index * 8 + 8) {
        w.copy_from_slice(b);
    }
    u64::from_le_bytes(w)
}

impl Counts {
    /// Decodes the contents of a counter file.
    pub fn parse(buf: &[u8]) -> Result<Counts, SummaryError> {
        if buf.len() < FILE_SIZE {
            return Err(SummaryError::BadSize(buf.len()));
        }
        if buf[..8] != MAGIC {
            return Err(SummaryError::BadMagic);
        }
        let rows = (0..SLOTS)
            .map(|nr| Row {
                nr,
                calls: word(buf, counts::word(nr, 0)),
                errors: word(buf, counts::word(nr, 1)),
                nanos: word(buf, counts::word(nr, 2)),
            })
            .filter(|r| r.calls != 0)
            .collect();
        Ok(Counts {
            rows,
            trapped: word(buf, TRAPPED_WORD),
        })
    }
}

/// The name printed for syscall `nr`.
pub fn syscall_name(nr: usize) -> String {
    match strata_syscall_table::name(nr) {
        Some(n) => n.to_string(),
        None => format!("syscall_{nr}"),
    }
}

fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// `strace`'s `%*.0lu`: zero prints as blanks.
fn blank_zero(v: u64, width: usize) -> String {
    if v == 0 {
        " ".repeat(width)
    } else {
        format!("{v:>width$}")
    }
}

/// Renders the table as `strace -c` prints it: rows sorted by time spent
/// (descending), then calls (descending), then syscall number; columns at
/// least as wide as strace's and widened to fit; a `total` line. A line
/// about the trap path follows when any call came through it.
pub fn render(c: &Counts) -> String {
    let mut rows = c.rows.clone();
    rows.sort_by(|a, b| b.nanos.cmp(&a.nanos).then(b.calls.cmp(&a.calls)).then(a.nr.cmp(&b.nr)));
    let names: Vec<String> = rows.iter().map(|r| syscall_name(r.nr)).collect();

    let total_ns: u64 = rows.iter().fold(0u64, |s, r| s.saturating_add(r.nanos));
    let total_calls: u64 = rows.iter().fold(0u64, |s, r| s.saturating_add(r.calls));
    let total_errors: u64 = rows.iter().fold(0u64, |s, r| s.saturating_add(r.errors));
    let usecs = |nanos: u64, calls: u64| nanos.checked_div(calls).map_or(0, |v| v / 1000);
    let max_avg = rows.iter().map(|r| usecs(r.nanos, r.calls)).max().unwrap_or(0);

    let w_secs = format!("{:.6}", seconds(total_ns)).len().max(11);
    let w_avg = max_avg.to_string().len().max(11);
    let w_calls = total_calls.to_string().len().max(9);
    let w_errors = total_errors.to_string().len().max(9);
    let w_name = names.iter().map(|n| n.len() + 1).max().unwrap_or(0).max(16);

    let mut out = String::new();
    out.push_str(&format!(
        "{:>6} {:>w_secs$} {:>w_avg$} {:>w_calls$} {:>w_errors$} {}\n",
        "% time", "seconds", "usecs/call", "calls", "errors", "syscall"
    ));
    let dashes = [6, w_secs, w_avg, w_calls, w_errors, w_name]
        .map(|w| "-".repeat(w))
        .join(" ")
        + "\n";
    out.push_str(&dashes);
    for (r, name) in rows.iter().zip(&names) {
        let percent = if r.nanos == 0 {
            0.0
        } else {
            100.0 * r.nanos as f64 / total_ns as f64
        };
        out.push_str(&format!(
            "{:>6.2} {:>w_secs$.6} {:>w_avg$} {:>w_calls$} {} {}\n",
            percent,
            seconds(r.nanos),
            usecs(r.nanos, r.calls),
            r.calls,
            blank_zero(r.errors, w_errors),
            name
        ));
    }
    out.push_str(&dashes);
    out.push_str(&format!(
        "{:>6.2} {:>w_secs$.6} {:>w_avg$} {:>w_calls$} {} {}\n",
        100.0,
        seconds(total_ns),
        usecs(total_ns, total_calls),
        total_calls,
        blank_zero(total_errors, w_errors),
        "total"
    ));
    if c.trapped != 0 {
        out.push_str(&format!(
            "strata: {} of these calls came through the trap path\n",
            c.trapped
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(buf: &mut [u8], index: usize, v: u64) {
        buf[index * 8..index * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn synthetic(rows: &[(usize, u64, u64, u64)], trapped: u64) -> Vec<u8> {
        let mut buf = vec![0u8; FILE_SIZE];
        buf[..8].copy_from_slice(&MAGIC);
        for &(nr, calls, errors, nanos) in rows {
            put(&mut buf, counts::word(nr, 0), calls);
            put(&mut buf, counts::word(nr, 1), errors);
            put(&mut buf, counts::word(nr, 2), nanos);
        }
        put(&mut buf, TRAPPED_WORD, trapped);
        buf
    }

    #[test]
    fn renders_like_strace() {
        // read 7 calls 67us; openat 39 calls (19 failed) 362us; close 22
        // calls 194us; brk 3 calls 0us; mmap 30 calls 510us; 335: no name.
        let buf = synthetic(
            &[
                (0, 7, 0, 67_000),
                (257, 39, 19, 362_000),
                (3, 22, 0, 194_000),
                (12, 3, 0, 0),
                (9, 30, 0, 510_000),
                (335, 1, 1, 0),
            ],
            0,
        );
        let c = Counts::parse(&buf).unwrap();
        assert_eq!(c.rows.len(), 6);
        let want = "\
% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 45.01    0.000510          17        30           mmap
 31.95    0.000362           9        39        19 openat
 17.12    0.000194           8        22           close
  5.91    0.000067           9         7           read
  0.00    0.000000           0         3           brk
  0.00    0.000000           0         1         1 syscall_335
------ ----------- ----------- --------- --------- ----------------
100.00    0.001133          11       102        20 total
";
        assert_eq!(render(&c), want);
    }

    #[test]
    fn ties_sort_by_calls_then_number_and_zero_total() {
        let buf = synthetic(&[(1, 1, 0, 0), (0, 1, 0, 0), (60, 5, 0, 0)], 3);
        let out = render(&Counts::parse(&buf).unwrap());
        let names: Vec<&str> = out
            .lines()
            .skip(2)
            .take(3)
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(names, ["exit", "read", "write"]);
        assert!(
            out.contains("100.00    0.000000           0         7           total\n"),
            "{out}"
        );
        assert!(out.ends_with("strata: 3 of these calls came through the trap path\n"));
    }

    #[test]
    fn columns_widen_for_big_numbers_and_long_names() {
        // 12 s in one slot, 10^10 calls, a long name.
        let buf = synthetic(&[(1, 10_000_000_000, 0, 12_000_000_000), (334, 1, 1, 5_000)], 0);
        let out = render(&Counts::parse(&buf).unwrap());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "% time     seconds  usecs/call       calls    errors syscall");
        assert_eq!(
            lines[1],
            "------ ----------- ----------- ----------- --------- ----------------"
        );
        assert_eq!(lines[2], "100.00   12.000000           0 10000000000           write");
        assert_eq!(lines[3], "  0.00    0.000005           5           1         1 rseq");
        let empty = render(&Counts::parse(&synthetic(&[], 0)).unwrap());
        assert_eq!(empty.lines().count(), 4);
        let long = synthetic(&[(511, 2, 0, 4_000)], 0);
        let out = render(&Counts::parse(&long).unwrap());
        assert!(out.contains("  2           syscall_511\n"), "{out}");
    }

    #[test]
    fn rejects_foreign_files() {
        assert_eq!(Counts::parse(&[0u8; 10]), Err(SummaryError::BadSize(10)));
        assert_eq!(Counts::parse(&vec![0u8; FILE_SIZE]), Err(SummaryError::BadMagic));
    }
}
