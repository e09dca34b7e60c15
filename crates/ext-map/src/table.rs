//! The mapping table: parsing `PROGRAM_PATH=HOST_PATH[:ro|:discard];...`,
//! and longest-prefix translation in both directions. Pure: fixed arrays,
//! no system calls, no allocation.

use crate::path::{self, Buf, NormError, PathOut};
use core::fmt::Write;
use strata_ext::InitError;

/// The most mappings one layer holds.
pub const MAX_MAPPINGS: usize = 32;
/// Room for the text of every mapping (both sides, normalised).
pub const POOL_SIZE: usize = 8192;

/// What a mapping lets the program do to the host files below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Reads and writes reach the host.
    #[default]
    ReadWrite,
    /// Calls that would modify fail with `EROFS` (`:ro`).
    ReadOnly,
    /// Calls that would modify succeed without changing the host; writes go
    /// to `/dev/null` (`:discard`).
    Discard,
}

/// One mapping, as seen through [`Table::get`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping<'a> {
    /// The path the program uses (normalised, absolute).
    pub program: &'a [u8],
    /// The path on the host (normalised, absolute).
    pub host: &'a [u8],
    pub mode: Mode,
}

#[derive(Clone, Copy, Default)]
struct Entry {
    prog_at: usize,
    prog_len: usize,
    host_at: usize,
    host_len: usize,
    mode: Mode,
}

/// Up to [`MAX_MAPPINGS`] mappings, their text in one fixed pool.
pub struct Table {
    pool: [u8; POOL_SIZE],
    used: usize,
    entries: [Entry; MAX_MAPPINGS],
    n: usize,
}

impl core::fmt::Debug for Table {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut l = f.debug_list();
        for m in self.iter() {
            l.entry(&(
                core::str::from_utf8(m.program).unwrap_or("?"),
                core::str::from_utf8(m.host).unwrap_or("?"),
                m.mode,
            ));
        }
        l.finish()
    }
}

fn bad(what: core::fmt::Arguments<'_>) -> InitError {
    let mut e = InitError::new("map: ");
    let _ = e.write_fmt(what);
    e
}

impl Table {
    /// A table with no mappings: resolution then canonicalises paths in the
    /// host's own view (what `policy` uses to name the file a call means).
    pub const fn empty() -> Table {
        Table {
            pool: [0; POOL_SIZE],
            used: 0,
            entries: [Entry {
                prog_at: 0,
                prog_len: 0,
                host_at: 0,
                host_len: 0,
                mode: Mode::ReadWrite,
            }; MAX_MAPPINGS],
            n: 0,
        }
    }

    /// Parses the layer's arguments: mappings separated by `;`, each
    /// `PROGRAM_PATH=HOST_PATH`, optionally followed by `:ro` or `:discard`.
    /// Blank entries (and white space around an entry) are ignored. Both
    /// paths must be absolute, without NUL or `..`; they are normalised
    /// lexically. A program path may be mapped only once.
    // InitError is the SDK's fixed-size message (248 bytes), by design.
    #[allow(clippy::result_large_err)]
    pub fn parse(args: &str) -> Result<Table, InitError> {
        let mut t = Table {
            pool: [0; POOL_SIZE],
            used: 0,
            entries: [Entry::default(); MAX_MAPPINGS],
            n: 0,
        };
        let mut norm = Buf::new();
        for raw in args.split(';') {
            let ent = raw.trim_matches(|c: char| c.is_ascii_whitespace());
            if ent.is_empty() {
                continue;
            }
            let (body, mode) = if let Some(b) = ent.strip_suffix(":ro") {
                (b, Mode::ReadOnly)
            } else if let Some(b) = ent.strip_suffix(":discard") {
                (b, Mode::Discard)
            } else {
                (ent, Mode::ReadWrite)
            };
            let Some((prog, host)) = body.split_once('=') else {
                return Err(bad(format_args!("'{ent}' is not PROGRAM_PATH=HOST_PATH[:ro|:discard]")));
            };
            if t.n >= MAX_MAPPINGS {
                return Err(bad(format_args!("too many mappings (at most {MAX_MAPPINGS})")));
            }
            let mut e = Entry {
                mode,
                ..Entry::default()
            };
            for (side, text) in [("program", prog), ("host", host)] {
                if let Err(why) = path::normalize(text.as_bytes(), &mut norm) {
                    return Err(match why {
                        NormError::Empty => bad(format_args!("empty {side} path in '{ent}'")),
                        why => bad(format_args!("{side} path '{text}' {}", why.as_str())),
                    });
                }
                let at = t.used;
                let end = at.checked_add(norm.len()).filter(|&e| e <= POOL_SIZE);
                let dst = end.and_then(|end| t.pool.get_mut(at..end));
                let (Some(end), Some(dst)) = (end, dst) else {
                    return Err(bad(format_args!(
                        "mappings too long (at most {POOL_SIZE} bytes of paths in all)"
                    )));
                };
                dst.copy_from_slice(norm.as_bytes());
                t.used = end;
                if side == "program" {
                    (e.prog_at, e.prog_len) = (at, norm.len());
                } else {
                    (e.host_at, e.host_len) = (at, norm.len());
                }
            }
            let new_prog = t.pool.get(e.prog_at..e.prog_at.saturating_add(e.prog_len));
            let dup = t.iter().any(|m| Some(m.program) == new_prog);
            if dup {
                return Err(bad(format_args!("program path '{prog}' is mapped twice")));
            }
            if let Some(slot) = t.entries.get_mut(t.n) {
                *slot = e;
                t.n += 1;
            }
        }
        if t.n == 0 {
            return Err(InitError::new(
                "map: no mappings given (expected PROGRAM_PATH=HOST_PATH[:ro|:discard];...)",
            ));
        }
        Ok(t)
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Mapping `i`, in the order given.
    pub fn get(&self, i: usize) -> Option<Mapping<'_>> {
        if i >= self.n {
            return None;
        }
        let e = self.entries.get(i)?;
        Some(Mapping {
            program: self.pool.get(e.prog_at..e.prog_at.checked_add(e.prog_len)?)?,
            host: self.pool.get(e.host_at..e.host_at.checked_add(e.host_len)?)?,
            mode: e.mode,
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = Mapping<'_>> {
        (0..self.n).filter_map(move |i| self.get(i))
    }

    /// The mapping whose program side is the longest prefix of canonical
    /// program path `prog`, and the part of `prog` below it.
    pub fn find_program<'p>(&self, prog: &'p [u8]) -> Option<(Mapping<'_>, &'p [u8])> {
        self.longest(prog, false)
    }

    /// The mapping whose host side is the longest prefix of host path
    /// `host` (the first given, among equals), and the part below it.
    pub fn find_host<'p>(&self, host: &'p [u8]) -> Option<(Mapping<'_>, &'p [u8])> {
        self.longest(host, true)
    }

    // A strictly longer match replaces the best so far: the first of
    // equals stays.
    fn longest<'p>(&self, p: &'p [u8], host_side: bool) -> Option<(Mapping<'_>, &'p [u8])> {
        let mut best: Option<(Mapping<'_>, &'p [u8])> = None;
        let mut best_len = 0;
        for m in self.iter() {
            let key = if host_side { m.host } else { m.program };
            if let Some(rest) = path::strip_prefix(p, key) {
                if best.is_none() || key.len() > best_len {
                    best = Some((m, rest));
                    best_len = key.len();
                }
            }
        }
        best
    }

    /// Whether program path `prog` lies under (or is) a mapping's program
    /// side.
    pub fn covers(&self, prog: &[u8]) -> bool {
        self.iter().any(|m| path::is_under(prog, m.program))
    }

    /// Whether program path `prog` is a mapping point or one of its
    /// ancestors: a directory in the mapped view, never a symbolic link
    /// (like a mount point and the directories leading to it).
    pub fn leads_to_mapping(&self, prog: &[u8]) -> bool {
        self.iter().any(|m| path::is_under(m.program, prog))
    }

    /// Writes the host path of canonical program path `prog` into `out`
    /// (longest program-side prefix wins; a path under no mapping is its
    /// own host path). Returns the mode of the mapping used, if any.
    pub fn forward<O: PathOut + ?Sized>(&self, prog: &[u8], out: &mut O) -> Result<Option<Mode>, i64> {
        match self.find_program(prog) {
            Some((m, rest)) => path::join(out, m.host, rest).map(|()| Some(m.mode)),
            None => path::join(out, prog, b"").map(|()| None),
        }
    }

    /// Writes the program path of host path `host` into `out` (longest
    /// host-side prefix wins; a path under no host side stays as it is).
    /// Returns whether a mapping was used.
    pub fn reverse<O: PathOut + ?Sized>(&self, host: &[u8], out: &mut O) -> Result<bool, i64> {
        match self.find_host(host) {
            Some((m, rest)) => path::join(out, m.program, rest).map(|()| true),
            None => path::join(out, host, b"").map(|()| false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;

    fn msg(r: Result<Table, InitError>) -> String {
        String::from_utf8(r.unwrap_err().message().to_vec()).unwrap()
    }

    fn fwd(t: &Table, p: &str) -> (String, Option<Mode>) {
        let mut b = Buf::new();
        let m = t.forward(p.as_bytes(), &mut b).unwrap();
        (String::from_utf8(b.as_bytes().to_vec()).unwrap(), m)
    }

    fn rev(t: &Table, p: &str) -> (String, bool) {
        let mut b = Buf::new();
        let m = t.reverse(p.as_bytes(), &mut b).unwrap();
        (String::from_utf8(b.as_bytes().to_vec()).unwrap(), m)
    }

    #[test]
    fn parses_and_normalises() {
        let t = Table::parse("/data/=//tmp/x/.;/etc/x=/tmp/y:ro ; /var/log=/tmp/log:discard;").unwrap();
        assert_eq!(t.len(), 3);
        let m: std::vec::Vec<_> = t.iter().collect();
        assert_eq!(
            (m[0].program, m[0].host, m[0].mode),
            (&b"/data"[..], &b"/tmp/x"[..], Mode::ReadWrite)
        );
        assert_eq!(
            (m[1].program, m[1].host, m[1].mode),
            (&b"/etc/x"[..], &b"/tmp/y"[..], Mode::ReadOnly)
        );
        assert_eq!(
            (m[2].program, m[2].host, m[2].mode),
            (&b"/var/log"[..], &b"/tmp/log"[..], Mode::Discard)
        );
        // Only a final :ro / :discard is an option; other colons are path.
        let t = Table::parse("/a=/b:c").unwrap();
        assert_eq!(t.get(0).unwrap().host, b"/b:c");
        assert_eq!(t.get(0).unwrap().mode, Mode::ReadWrite);
        assert!(t.get(1).is_none());
    }

    #[test]
    fn refuses_bad_mappings() {
        assert_eq!(
            msg(Table::parse("")),
            "map: no mappings given (expected PROGRAM_PATH=HOST_PATH[:ro|:discard];...)"
        );
        assert_eq!(msg(Table::parse(" ; ")), msg(Table::parse("")));
        assert_eq!(
            msg(Table::parse("/data")),
            "map: '/data' is not PROGRAM_PATH=HOST_PATH[:ro|:discard]"
        );
        assert_eq!(
            msg(Table::parse("data=/tmp")),
            "map: program path 'data' is not absolute"
        );
        assert_eq!(msg(Table::parse("/data=tmp")), "map: host path 'tmp' is not absolute");
        assert_eq!(msg(Table::parse("=/tmp")), "map: empty program path in '=/tmp'");
        assert_eq!(msg(Table::parse("/d=:ro")), "map: empty host path in '/d=:ro'");
        assert_eq!(
            msg(Table::parse("/d/../e=/tmp")),
            "map: program path '/d/../e' contains '..'"
        );
        assert_eq!(
            msg(Table::parse("/d=/tmp/..")),
            "map: host path '/tmp/..' contains '..'"
        );
        assert_eq!(
            msg(Table::parse("/d=/t\0x")),
            "map: host path '/t\0x' contains a NUL byte"
        );
        assert_eq!(
            msg(Table::parse("/d=/a;/d/=/b")),
            "map: program path '/d/' is mapped twice"
        );
        let many: std::vec::Vec<String> = (0..33).map(|i| std::format!("/p{i}=/h{i}")).collect();
        assert_eq!(
            msg(Table::parse(&many.join(";"))),
            "map: too many mappings (at most 32)"
        );
        let ok: std::vec::Vec<String> = (0..32).map(|i| std::format!("/p{i}=/h{i}")).collect();
        assert_eq!(Table::parse(&ok.join(";")).unwrap().len(), 32);
        let long = std::format!("/{}", "x".repeat(3000));
        let big = std::format!("/a={long};/b={long};/c={long}");
        assert!(msg(Table::parse(&big)).starts_with("map: mappings too long"));
    }

    #[test]
    fn longest_program_prefix_wins() {
        let t = Table::parse("/data=/tmp/x;/data/sub=/srv/s:ro;/=/root").unwrap();
        assert_eq!(fwd(&t, "/data"), ("/tmp/x".into(), Some(Mode::ReadWrite)));
        assert_eq!(fwd(&t, "/data/a/b"), ("/tmp/x/a/b".into(), Some(Mode::ReadWrite)));
        assert_eq!(fwd(&t, "/data/sub/f"), ("/srv/s/f".into(), Some(Mode::ReadOnly)));
        assert_eq!(fwd(&t, "/data/subway"), ("/tmp/x/subway".into(), Some(Mode::ReadWrite)));
        assert_eq!(fwd(&t, "/database"), ("/root/database".into(), Some(Mode::ReadWrite)));
        assert_eq!(fwd(&t, "/"), ("/root".into(), Some(Mode::ReadWrite)));
        let t = Table::parse("/data=/tmp/x").unwrap();
        assert_eq!(fwd(&t, "/database"), ("/database".into(), None));
        assert_eq!(fwd(&t, "/etc/passwd"), ("/etc/passwd".into(), None));
        let t = Table::parse("/opt=/").unwrap();
        assert_eq!(fwd(&t, "/opt/bin"), ("/bin".into(), Some(Mode::ReadWrite)));
        assert_eq!(fwd(&t, "/opt"), ("/".into(), Some(Mode::ReadWrite)));
    }

    #[test]
    fn longest_host_prefix_wins_in_reverse() {
        let t = Table::parse("/data=/tmp/x;/inner=/tmp/x/in;/other=/tmp/x").unwrap();
        assert_eq!(rev(&t, "/tmp/x"), ("/data".into(), true));
        assert_eq!(rev(&t, "/tmp/x/f"), ("/data/f".into(), true));
        assert_eq!(rev(&t, "/tmp/x/in/f"), ("/inner/f".into(), true));
        assert_eq!(rev(&t, "/tmp/xy"), ("/tmp/xy".into(), false));
        assert_eq!(rev(&t, "/"), ("/".into(), false));
        let t = Table::parse("/=/rootfs").unwrap();
        assert_eq!(rev(&t, "/rootfs/bin/sh"), ("/bin/sh".into(), true));
        assert_eq!(rev(&t, "/rootfs"), ("/".into(), true));
    }

    #[test]
    fn coverage_and_mapping_ancestors() {
        let t = Table::parse("/opt/tool/bin=/tmp/y").unwrap();
        assert!(t.covers(b"/opt/tool/bin"));
        assert!(t.covers(b"/opt/tool/bin/x"));
        assert!(!t.covers(b"/opt/tool"));
        assert!(t.leads_to_mapping(b"/opt"));
        assert!(t.leads_to_mapping(b"/opt/tool"));
        assert!(t.leads_to_mapping(b"/opt/tool/bin"));
        assert!(!t.leads_to_mapping(b"/opt/tool/bin/x"));
        assert!(!t.leads_to_mapping(b"/opt/toolbox"));
    }
}
