//! Byte-string paths: a fixed buffer, lexical normalisation and
//! component-wise prefix tests. Pure: no system calls, no allocation.

use strata_ext::{PathBuf, ENAMETOOLONG};

/// The longest path text (PATH_MAX without its NUL), as [`PathBuf::CAP`].
pub const PATH_CAP: usize = PathBuf::CAP;

/// A path-sized byte buffer (4 KiB, meant for the stack). It keeps no NUL:
/// it is never handed to the kernel as a path (a [`PathBuf`] is).
pub struct Buf {
    buf: [u8; PATH_CAP + 1],
    len: usize,
}

impl Default for Buf {
    fn default() -> Self {
        Buf::new()
    }
}

impl Buf {
    pub const fn new() -> Buf {
        Buf {
            buf: [0; PATH_CAP + 1],
            len: 0,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends `s`; `Err(-ENAMETOOLONG)` (contents unchanged) when the
    /// result would be longer than [`PATH_CAP`].
    pub fn push(&mut self, s: &[u8]) -> Result<(), i64> {
        let end = self.len.checked_add(s.len()).filter(|&e| e <= PATH_CAP);
        let dst = end.and_then(|e| self.buf.get_mut(self.len..e));
        match (end, dst) {
            (Some(e), Some(d)) => {
                d.copy_from_slice(s);
                self.len = e;
                Ok(())
            }
            _ => Err(-ENAMETOOLONG),
        }
    }

    /// Replaces the contents with `s`.
    pub fn set(&mut self, s: &[u8]) -> Result<(), i64> {
        self.clear();
        self.push(s)
    }

    /// Shortens to `n` bytes (no effect if already shorter).
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n);
    }

    /// All the storage (`PATH_CAP + 1` bytes), for a call that fills it;
    /// then [`Buf::set_len`] says how much is used.
    pub fn storage(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Declares the first `n` bytes of the storage used; `Err(-ENAMETOOLONG)`
    /// when `n` exceeds [`PATH_CAP`] (a result that filled the storage may
    /// have been cut).
    pub fn set_len(&mut self, n: usize) -> Result<(), i64> {
        if n > PATH_CAP {
            return Err(-ENAMETOOLONG);
        }
        self.len = n;
        Ok(())
    }

    /// Makes the contents `front` followed by what was at `at..`.
    pub fn replace_front(&mut self, at: usize, front: &[u8]) -> Result<(), i64> {
        let at = at.min(self.len);
        let tail = self.len - at;
        let new_len = front.len().checked_add(tail).filter(|&n| n <= PATH_CAP);
        let Some(new_len) = new_len else {
            return Err(-ENAMETOOLONG);
        };
        self.buf.copy_within(at..self.len, front.len());
        if let Some(d) = self.buf.get_mut(..front.len()) {
            d.copy_from_slice(front);
        }
        self.len = new_len;
        Ok(())
    }

    /// Appends component `c` to an absolute path (`/` between them unless
    /// the path is `/` or empty).
    pub fn push_component(&mut self, c: &[u8]) -> Result<(), i64> {
        let saved = self.len;
        let r = if self.as_bytes().last() == Some(&b'/') {
            self.push(c)
        } else {
            self.push(b"/").and_then(|()| self.push(c))
        };
        if r.is_err() {
            self.len = saved;
        }
        r
    }

    /// Removes the last component of an absolute canonical path; `/` stays
    /// `/` (`..` never climbs above the root).
    pub fn pop_component(&mut self) {
        let cut = parent_len(self.as_bytes());
        self.truncate(cut);
    }
}

/// Length of the parent of canonical absolute path `p` (`/` for a path with
/// one component, and for `/` itself).
fn parent_len(p: &[u8]) -> usize {
    match p.iter().rposition(|&b| b == b'/') {
        Some(0) | None => 1,
        Some(i) => i,
    }
}

/// Where a path is written: a [`Buf`], or a [`PathBuf`] to hand to a call.
pub trait PathOut {
    fn clear(&mut self);
    fn push(&mut self, s: &[u8]) -> Result<(), i64>;
    fn bytes(&self) -> &[u8];
}

impl PathOut for Buf {
    fn clear(&mut self) {
        Buf::clear(self)
    }
    fn push(&mut self, s: &[u8]) -> Result<(), i64> {
        Buf::push(self, s)
    }
    fn bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PathOut for PathBuf {
    fn clear(&mut self) {
        PathBuf::clear(self)
    }
    fn push(&mut self, s: &[u8]) -> Result<(), i64> {
        PathBuf::push(self, s)
    }
    fn bytes(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Writes `base` followed by `rest` (empty, or starting with `/`) into
/// `out`, without doubling the slash when `base` is `/`.
pub fn join<O: PathOut + ?Sized>(out: &mut O, base: &[u8], rest: &[u8]) -> Result<(), i64> {
    out.clear();
    if rest.is_empty() {
        out.push(base)
    } else if base == b"/" {
        out.push(rest)
    } else {
        out.push(base)?;
        out.push(rest)
    }
}

/// The part of canonical absolute `path` below canonical absolute `prefix`
/// (empty, or starting with `/`), compared component by component: `/data`
/// is under `/data` and `/`, not under `/dat`; `/database` is not under
/// `/data`.
pub fn strip_prefix<'a>(path: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if path.first() != Some(&b'/') {
        return None;
    }
    if prefix == b"/" {
        return Some(if path == b"/" { &[] } else { path });
    }
    let rest = path.strip_prefix(prefix)?;
    match rest.first() {
        None | Some(b'/') => Some(rest),
        Some(_) => None,
    }
}

/// Whether `path` is `prefix` or lies below it (see [`strip_prefix`]).
pub fn is_under(path: &[u8], prefix: &[u8]) -> bool {
    strip_prefix(path, prefix).is_some()
}

/// The components of `p`, without empty ones (`a//b/` gives `a`, `b`).
pub fn components(p: &[u8]) -> impl Iterator<Item = &[u8]> {
    p.split(|&b| b == b'/').filter(|c| !c.is_empty())
}

/// Whether `p` names a directory by its form: it ends with `/`, or its last
/// component is `.` or `..`. The kernel then requires a directory (and
/// follows a symbolic link in the last component).
pub fn names_dir(p: &[u8]) -> bool {
    p.last() == Some(&b'/') || matches!(components(p).last(), Some(b".") | Some(b".."))
}

/// Why a mapping path is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NormError {
    Empty,
    Relative,
    Nul,
    DotDot,
    TooLong,
}

impl NormError {
    pub fn as_str(self) -> &'static str {
        match self {
            NormError::Empty => "is empty",
            NormError::Relative => "is not absolute",
            NormError::Nul => "contains a NUL byte",
            NormError::DotDot => "contains '..'",
            NormError::TooLong => "is too long",
        }
    }
}

/// Lexical normalisation of an absolute path for the mapping table:
/// `//` collapses, `.` components and a trailing `/` go. `..` is refused
/// (its meaning would depend on symbolic links).
pub fn normalize(input: &[u8], out: &mut Buf) -> Result<(), NormError> {
    out.clear();
    if input.is_empty() {
        return Err(NormError::Empty);
    }
    if input.contains(&0) {
        return Err(NormError::Nul);
    }
    if input.first() != Some(&b'/') {
        return Err(NormError::Relative);
    }
    for c in components(input) {
        match c {
            b"." => {}
            b".." => return Err(NormError::DotDot),
            c => out.push_component(c).map_err(|_| NormError::TooLong)?,
        }
    }
    if out.is_empty() {
        out.push(b"/").map_err(|_| NormError::TooLong)?;
    }
    Ok(())
}

/// Whether [`normalize`] would give `p` back unchanged (and accept it):
/// absolute, no NUL, no empty or `.`-led component, no trailing `/`
/// (unless `p` is `/`), at most [`PATH_CAP`] bytes. A caller that only
/// reads the normal form can then skip the copy. False also for some
/// normal paths (a component such as `.cache`): this is a quick test.
pub fn is_normal(p: &[u8]) -> bool {
    if p == b"/" {
        return true;
    }
    p.first() == Some(&b'/')
        && p.last() != Some(&b'/')
        && p.len() <= PATH_CAP
        && !p.contains(&0)
        && !p.windows(2).any(|w| w == b"//" || w == b"/.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_normal_only_where_normalize_changes_nothing() {
        let long = std::format!("/{}", "a".repeat(PATH_CAP));
        let cases = [
            "/",
            "/usr/include/stdio.h",
            "/a",
            "/a/b.c",
            "/a.",
            "/a/b.",
            "//",
            "/./x",
            "/x/.",
            "/x/",
            "/x//y",
            "/x/../y",
            "/x/.cache",
            "x/y",
            "",
            ".",
            "/x\0y",
            &long,
        ];
        let mut normal = 0;
        for c in cases {
            if is_normal(c.as_bytes()) {
                normal += 1;
                assert_eq!(norm(c).as_deref(), Ok(c), "{c:?}");
            }
        }
        assert_eq!(normal, 6);
    }

    fn norm(s: &str) -> Result<std::string::String, NormError> {
        let mut b = Buf::new();
        normalize(s.as_bytes(), &mut b)?;
        Ok(std::string::String::from_utf8(b.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn normalisation() {
        assert_eq!(norm("/").unwrap(), "/");
        assert_eq!(norm("//").unwrap(), "/");
        assert_eq!(norm("/./.").unwrap(), "/");
        assert_eq!(norm("/data/").unwrap(), "/data");
        assert_eq!(norm("//data//x/./y/").unwrap(), "/data/x/y");
        assert_eq!(norm("/a/.b/..c").unwrap(), "/a/.b/..c");
        assert_eq!(norm(""), Err(NormError::Empty));
        assert_eq!(norm("data"), Err(NormError::Relative));
        assert_eq!(norm("./data"), Err(NormError::Relative));
        assert_eq!(norm("/a/../b"), Err(NormError::DotDot));
        assert_eq!(norm("/a/.."), Err(NormError::DotDot));
        assert_eq!(norm("/a\0b"), Err(NormError::Nul));
        let long = std::format!("/{}", "x".repeat(PATH_CAP));
        assert_eq!(norm(&long), Err(NormError::TooLong));
    }

    #[test]
    fn prefixes_are_componentwise() {
        assert_eq!(strip_prefix(b"/data", b"/data"), Some(&b""[..]));
        assert_eq!(strip_prefix(b"/data/x", b"/data"), Some(&b"/x"[..]));
        assert_eq!(strip_prefix(b"/database", b"/data"), None);
        assert_eq!(strip_prefix(b"/dat", b"/data"), None);
        assert_eq!(strip_prefix(b"/x", b"/"), Some(&b"/x"[..]));
        assert_eq!(strip_prefix(b"/", b"/"), Some(&b""[..]));
        assert_eq!(strip_prefix(b"x", b"/"), None);
        assert!(is_under(b"/a/b/c", b"/a/b"));
        assert!(!is_under(b"/a", b"/a/b"));
    }

    #[test]
    fn joining() {
        let mut b = Buf::new();
        join(&mut b, b"/", b"/x").unwrap();
        assert_eq!(b.as_bytes(), b"/x");
        join(&mut b, b"/", b"").unwrap();
        assert_eq!(b.as_bytes(), b"/");
        join(&mut b, b"/tmp/x", b"/y").unwrap();
        assert_eq!(b.as_bytes(), b"/tmp/x/y");
        join(&mut b, b"/tmp/x", b"").unwrap();
        assert_eq!(b.as_bytes(), b"/tmp/x");
    }

    #[test]
    fn buffer_edits() {
        let mut b = Buf::new();
        b.set(b"/").unwrap();
        b.push_component(b"a").unwrap();
        b.push_component(b"b").unwrap();
        assert_eq!(b.as_bytes(), b"/a/b");
        b.pop_component();
        assert_eq!(b.as_bytes(), b"/a");
        b.pop_component();
        assert_eq!(b.as_bytes(), b"/");
        b.pop_component();
        assert_eq!(b.as_bytes(), b"/");

        b.set(b"lnk/rest").unwrap();
        b.replace_front(3, b"../target/dir").unwrap();
        assert_eq!(b.as_bytes(), b"../target/dir/rest");
        b.replace_front(b.len(), b"x").unwrap();
        assert_eq!(b.as_bytes(), b"x");
        b.set(b"abc").unwrap();
        assert_eq!(b.replace_front(0, &[b'y'; PATH_CAP]), Err(-ENAMETOOLONG));
        assert_eq!(b.as_bytes(), b"abc");
        assert_eq!(b.push(&[b'y'; PATH_CAP]), Err(-ENAMETOOLONG));
        assert_eq!(b.as_bytes(), b"abc");
        assert_eq!(b.set_len(PATH_CAP + 1), Err(-ENAMETOOLONG));
    }

    #[test]
    fn directory_forms() {
        assert!(names_dir(b"/a/"));
        assert!(names_dir(b"a/."));
        assert!(names_dir(b".."));
        assert!(names_dir(b"/"));
        assert!(!names_dir(b"/a"));
        assert!(!names_dir(b"a/.b"));
    }
}
