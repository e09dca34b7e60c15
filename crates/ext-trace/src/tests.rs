//! Option parsing, filter selection, and the lines themselves (built by the
//! pure functions of [`crate::line`] over a fake memory).

use std::string::{String, ToString};
use std::vec::Vec;

use strata_decode::{EntryState, Memory};
use strata_ext::{Extension, Interest};

use crate::{
    format_entry_half, format_exit, format_line, format_resumed_line, nr, Config, Format, Line, Record, Task, Trace,
    LINE_CAP,
};

// ---- a fake memory --------------------------------------------------------

/// Regions of bytes at addresses; reads stop at a region's end and fail
/// outside every region.
#[derive(Default)]
struct Mem {
    regions: Vec<(u64, Vec<u8>)>,
}

impl Mem {
    fn new() -> Mem {
        Mem::default()
    }

    fn put(mut self, addr: u64, bytes: &[u8]) -> Mem {
        self.regions.push((addr, bytes.to_vec()));
        self
    }

    fn str(self, addr: u64, s: &str) -> Mem {
        let mut v = s.as_bytes().to_vec();
        v.push(0);
        self.put(addr, &v)
    }
}

impl Memory for Mem {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<usize, ()> {
        for (base, bytes) in &self.regions {
            if addr >= *base && addr < base + bytes.len() as u64 {
                let off = (addr - base) as usize;
                let n = buf.len().min(bytes.len() - off);
                buf[..n].copy_from_slice(&bytes[off..off + n]);
                return Ok(n);
            }
        }
        Err(())
    }
}

const NOMEM: &Mem = &Mem { regions: Vec::new() };

const READ: u32 = 0;
const WRITE: u32 = 1;
const CLOSE: u32 = 3;
const SOCKET: u32 = 41;
const CONNECT: u32 = 42;
const OPENAT: u32 = 257;
const AT_FDCWD: u64 = -100i64 as u64;
const ENOENT: i64 = 2;
const BUF: u64 = 0x10000;

const ONE: Task = Task {
    pid: 100,
    tid: 100,
    multi: false,
};

fn cfg(args: &str) -> Config {
    match Config::parse(args) {
        Ok(c) => c,
        Err(e) => panic!("{args:?}: {}", String::from_utf8_lossy(e.message())),
    }
}

fn err(args: &str) -> String {
    match Config::parse(args) {
        Ok(_) => panic!("{args:?} was accepted"),
        Err(e) => String::from_utf8_lossy(e.message()).into_owned(),
    }
}

fn rec(task: Task, nr: u32, args: [u64; 6], ret: i64) -> Record {
    Record {
        task,
        nr,
        args,
        ret,
        entry: EntryState::NONE,
    }
}

fn line_of(cfg: &Config, r: &Record, mem: &Mem) -> String {
    let mut l = Line::new();
    format_line(&mut l, cfg, r, mem);
    l.as_str().to_string()
}

fn text(r: &Record, mem: &Mem) -> String {
    line_of(&Config::DEFAULT, r, mem)
}

fn selected(c: &Config) -> Vec<u32> {
    (0..512).filter(|&n| c.selects(n)).collect()
}

// ---- options --------------------------------------------------------------

#[test]
fn defaults() {
    let c = cfg("");
    assert_eq!(c, Config::DEFAULT);
    assert_eq!(c.filter, Interest::ALL);
    assert!(!c.failed_only && !c.ext_calls && !c.decode.raw);
    assert_eq!(c.format, Format::Text);
    assert_eq!(c.decode.string_limit, 32);
    assert!(c.decode.out_args);
    // Spaces and empty options are ignored.
    assert_eq!(cfg(" , ,"), Config::DEFAULT);
}

#[test]
fn options() {
    let c = cfg("failed,format=json,s=100,raw,ext-calls");
    assert!(c.failed_only && c.ext_calls && c.decode.raw);
    assert_eq!(c.format, Format::Json);
    assert_eq!(c.decode.string_limit, 100);
    assert_eq!(cfg("format=text").format, Format::Text);
    assert!(cfg("raw=all").decode.raw);
    assert_eq!(cfg("s=0").decode.string_limit, 0);
    assert_eq!(cfg(" s = 7 , failed ").decode.string_limit, 7);
}

#[test]
fn option_errors_name_the_option() {
    assert!(err("bogus").contains("unknown option 'bogus'"));
    assert!(err("failed=1").contains("'failed=1'"));
    assert!(err("colour=red").contains("'colour=red'"));
    assert!(err("format=xml").contains("'xml'"));
    assert!(err("s=abc").contains("'abc'"));
    assert!(err("s=").contains("s="));
    assert!(err("s=-1").contains("'-1'"));
    assert!(err("raw=some").contains("'raw=some'"));
    // Options that take no value and values for options without one.
    assert!(err("trace").contains("'trace'"));
    assert!(err("ext-calls=yes").contains("'ext-calls=yes'"));
}

// ---- filters --------------------------------------------------------------

#[test]
fn filter_by_name_and_class() {
    let c = cfg("trace=openat|%network");
    assert!(c.selects(OPENAT) && c.selects(SOCKET) && c.selects(CONNECT));
    assert!(!c.selects(READ) && !c.selects(CLOSE));
    // Exactly openat and the table's network class.
    let mut want: Vec<u32> = strata_syscall_table::entries()
        .iter()
        .filter(|e| e.class == strata_syscall_table::Class::Network)
        .map(|e| e.nr)
        .collect();
    want.push(OPENAT);
    want.sort();
    assert_eq!(selected(&c), want);
    // The interest is the filter.
    assert_eq!(Trace::with_config(c).interest(), c.filter);
}

#[test]
fn every_class() {
    for (name, class) in [
        ("file", strata_syscall_table::Class::File),
        ("desc", strata_syscall_table::Class::Desc),
        ("network", strata_syscall_table::Class::Network),
        ("process", strata_syscall_table::Class::Process),
        ("memory", strata_syscall_table::Class::Memory),
        ("signal", strata_syscall_table::Class::Signal),
        ("ipc", strata_syscall_table::Class::Ipc),
        ("time", strata_syscall_table::Class::Time),
        ("other", strata_syscall_table::Class::Other),
    ] {
        let c = cfg(&format!("trace=%{name}"));
        let want: Vec<u32> = strata_syscall_table::entries()
            .iter()
            .filter(|e| e.class == class)
            .map(|e| e.nr)
            .collect();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(selected(&c), want, "%{name}");
    }
    // strace's deprecated bare class names; `time` stays the call.
    assert_eq!(cfg("trace=file").filter, cfg("trace=%file").filter);
    assert_eq!(cfg("trace=network").filter, cfg("trace=%network").filter);
    assert_eq!(selected(&cfg("trace=time")), vec![201]);
}

#[test]
fn negation() {
    let c = cfg("trace=!read|write");
    assert!(!c.selects(READ) && !c.selects(WRITE));
    assert!(c.selects(OPENAT) && c.selects(CLOSE));
    assert_eq!(selected(&c).len(), 510);
    assert_eq!(cfg("trace=!%network").filter, {
        let mut i = cfg("trace=%network").filter;
        i.bits.iter_mut().for_each(|w| *w = !*w);
        i
    });
    // `!!` inverts twice; `!` alone is everything.
    assert_eq!(cfg("trace=!!read").filter, cfg("trace=read").filter);
    assert_eq!(cfg("trace=!").filter, Interest::ALL);
    // strace's comma form: `!` covers the whole list.
    assert_eq!(cfg("trace=!read,write").filter, c.filter);
}

#[test]
fn filter_forms() {
    // filter= is trace=.
    assert_eq!(cfg("filter=openat").filter, cfg("trace=openat").filter);
    assert_eq!(selected(&cfg("filter=openat")), vec![OPENAT]);
    // strace's commas: bare words after trace= continue it.
    assert_eq!(selected(&cfg("trace=openat,close,read")), vec![READ, CLOSE, OPENAT]);
    assert_eq!(selected(&cfg("trace=openat,close,failed")), vec![CLOSE, OPENAT]);
    assert!(cfg("trace=openat,close,failed").failed_only);
    // ... but not after another option.
    assert!(err("trace=openat,failed,close").contains("'close'"));
    // Numbers, all, none, empty.
    assert_eq!(selected(&cfg("trace=3|257")), vec![CLOSE, OPENAT]);
    assert_eq!(cfg("trace=all").filter, Interest::ALL);
    assert!(cfg("trace=none").filter.is_empty());
    assert!(cfg("trace=").filter.is_empty());
    assert_eq!(selected(&cfg("trace=read||write")), vec![READ, WRITE]);
    // `?` ignores words that name nothing.
    assert_eq!(selected(&cfg("trace=?nosuchcall|read|?%nosuchclass")), vec![READ]);
    // The last trace= wins, as in strace.
    assert_eq!(selected(&cfg("trace=read,filter=write")), vec![WRITE]);
}

#[test]
fn filter_errors_name_the_word() {
    assert!(err("trace=openat|bogus").contains("unknown system call 'bogus'"));
    assert!(err("trace=%bogus").contains("unknown system call class '%bogus'"));
    assert!(err("trace=!read|%files").contains("'%files'"));
    assert!(err("filter=nope").contains("'nope'"));
    assert!(err("trace=512").contains("'512'"));
    assert!(err("trace=99999999999").contains("'99999999999'"));
    assert!(err("trace=/open.*").contains("'/open.*'"));
    assert!(err("trace=read,nosuch").contains("'nosuch'"));
    // Names are exact, as the kernel spells them.
    assert!(err("trace=OPENAT").contains("'OPENAT'"));
    assert!(err("trace=%FILE").contains("'%FILE'"));
    // The extension's constructor reports the same.
    match Trace::new("trace=bogus") {
        Ok(_) => panic!("accepted"),
        Err(e) => assert!(String::from_utf8_lossy(e.message()).contains("bogus")),
    }
    assert!(Trace::new("trace=openat").is_ok());
}

#[test]
fn failed_only() {
    let c = cfg("failed");
    assert!(c.shows_result(-ENOENT) && c.shows_result(-4095) && c.shows_result(-512));
    assert!(!c.shows_result(0) && !c.shows_result(3) && !c.shows_result(-4096));
    assert!(Config::DEFAULT.shows_result(0) && Config::DEFAULT.shows_result(-1));
}

#[test]
fn special_numbers_match_the_table() {
    for (n, name) in [
        (nr::SELECT, "select"),
        (nr::EXECVE, "execve"),
        (nr::EXIT, "exit"),
        (nr::EXIT_GROUP, "exit_group"),
        (nr::PSELECT6, "pselect6"),
        (nr::PPOLL, "ppoll"),
        (nr::EXECVEAT, "execveat"),
        (nr::GETPID, "getpid"),
        (nr::GETTID, "gettid"),
        (READ, "read"),
        (WRITE, "write"),
        (CLOSE, "close"),
        (SOCKET, "socket"),
        (CONNECT, "connect"),
        (OPENAT, "openat"),
    ] {
        assert_eq!(strata_syscall_table::name(n as usize), Some(name));
    }
}

// ---- text lines -------------------------------------------------------------

/// `name(args)`, spaces up to 39 columns, ` = result`: the `=` is at
/// column 40 (index 40 counting from 0), as in strace's output.
#[test]
fn column_40() {
    let l = text(&rec(ONE, CLOSE, [3, 0, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(l, "close(3)                                = 0\n");
    assert_eq!(l.find('='), Some(40));
    // A call longer than the column: one space.
    let mem = Mem::new().str(BUF, "/a/rather/long/path/name/for/a/test");
    let l = text(&rec(ONE, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], 3), &mem);
    assert_eq!(
        l,
        "openat(AT_FDCWD, \"/a/rather/long/path/name/for/a/test\", O_RDONLY) = 3\n"
    );
    // Exactly 39 characters: no padding needed; 40: the `=` moves right.
    let mem = Mem::new().str(BUF, "/abcdefghi");
    let l = text(&rec(ONE, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], 3), &mem);
    assert_eq!(l, "openat(AT_FDCWD, \"/abcdefghi\", O_RDONLY) = 3\n");
    assert_eq!(l.find('='), Some(41));
    let mem = Mem::new().str(BUF, "/abcdefgh");
    let l = text(&rec(ONE, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], 3), &mem);
    assert_eq!(l, "openat(AT_FDCWD, \"/abcdefgh\", O_RDONLY) = 3\n");
    assert_eq!(l.find('='), Some(40));
}

#[test]
fn pid_prefix() {
    let multi = Task {
        pid: 100,
        tid: 1234,
        multi: true,
    };
    // strace -f on stderr: `[pid %5u] `, and the prefix counts for the column.
    let l = text(&rec(multi, CLOSE, [3, 0, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(l, "[pid  1234] close(3)                    = 0\n");
    assert_eq!(l.find('='), Some(40));
    let big = Task {
        pid: 1,
        tid: 4_000_000,
        multi: true,
    };
    let l = text(&rec(big, CLOSE, [3, 0, 0, 0, 0, 0], 0), NOMEM);
    assert!(l.starts_with("[pid 4000000] close(3) "), "{l}");
    // Single task: no prefix, whatever the ids.
    assert!(text(&rec(ONE, CLOSE, [3, 0, 0, 0, 0, 0], 0), NOMEM).starts_with("close(3)"));
}

#[test]
fn errors() {
    let mem = Mem::new().str(BUF, "/nonexistent");
    let l = text(&rec(ONE, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], -ENOENT), &mem);
    assert_eq!(
        l,
        "openat(AT_FDCWD, \"/nonexistent\", O_RDONLY) = -1 ENOENT (No such file or directory)\n"
    );
    let l = text(&rec(ONE, CLOSE, [99, 0, 0, 0, 0, 0], -9), NOMEM);
    assert_eq!(
        l,
        "close(99)                               = -1 EBADF (Bad file descriptor)\n"
    );
    // Restarted calls print as strace prints them.
    let l = text(&rec(ONE, READ, [0, BUF, 10, 0, 0, 0], -512), NOMEM);
    assert_eq!(
        l,
        "read(0, 0x10000, 10)                    = ? ERESTARTSYS (To be restarted if SA_RESTART is set)\n"
    );
}

#[test]
fn results_with_extras() {
    // mmap's result is hex, umask's octal: the decoder's result is used.
    let l = text(&rec(ONE, 95, [0o22, 0, 0, 0, 0, 0], 0o77), NOMEM);
    assert_eq!(l, "umask(022)                              = 077\n");
}

#[test]
fn exit_group_prints_question_mark() {
    let l = text(&rec(ONE, nr::EXIT_GROUP, [0, 0, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(l, "exit_group(0)                           = ?\n");
    let l = text(&rec(ONE, nr::EXIT, [3, 0, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(l, "exit(3)                                 = ?\n");
}

#[test]
fn string_limit_and_raw() {
    let mem = Mem::new().put(BUF, b"hello, world\n");
    let r = rec(ONE, WRITE, [1, BUF, 13, 0, 0, 0], 13);
    assert_eq!(text(&r, &mem), "write(1, \"hello, world\\n\", 13)          = 13\n");
    assert_eq!(
        line_of(&cfg("s=5"), &r, &mem),
        "write(1, \"hello\"..., 13)                = 13\n"
    );
    assert_eq!(
        line_of(&cfg("raw"), &r, &mem),
        "write(0x1, 0x10000, 0xd)                = 0xd\n"
    );
}

#[test]
fn long_lines_are_cut() {
    const N: usize = 100_000;
    let mem = Mem::new().put(BUF, &[b'a'; N]);
    let r = rec(ONE, WRITE, [1, BUF, N as u64, 0, 0, 0], N as i64);
    let mut l = Line::new();
    format_line(&mut l, &cfg("s=1000000"), &r, &mem);
    let s = l.as_str();
    assert!(l.truncated());
    assert!(s.len() <= LINE_CAP);
    assert!(s.starts_with("write(1, \"aaaa"));
    assert!(s.ends_with("aaa... = 100000\n"), "{}", &s[s.len() - 40..]);
    // With escapes (`\200`): the cut may fall inside one (the decoder
    // writes them in pieces), the line still ends with the result.
    let mem = Mem::new().put(BUF, &[0x80; N]);
    format_line(&mut l, &cfg("s=1000000"), &r, &mem);
    let s = l.as_str();
    assert!(s.starts_with("write(1, \"\\200\\200"), "{}", &s[..40]);
    assert!(s.ends_with("... = 100000\n"), "{}", &s[s.len() - 40..]);
    // The same buffer is reused: a short line after a long one.
    format_line(&mut l, &Config::DEFAULT, &rec(ONE, CLOSE, [3, 0, 0, 0, 0, 0], 0), NOMEM);
    assert!(!l.truncated());
    assert_eq!(l.as_str(), "close(3)                                = 0\n");
}

#[test]
fn entry_state_is_used() {
    // accept(3, addr, [128 => 16]): the length before the call comes from
    // the saved entry state.
    const ADDR: u64 = BUF;
    const LEN: u64 = BUF + 0x100;
    let after = Mem::new()
        .put(ADDR, &[1, 0, b'/', b's', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        .put(LEN, &5u32.to_le_bytes());
    let before = Mem::new().put(LEN, &110u32.to_le_bytes());
    let args = [3, ADDR, LEN, 0, 0, 0];
    let mut r = rec(ONE, 43, args, 4);
    r.entry = strata_decode::entry_state(43, &args, &before);
    assert_ne!(r.entry, EntryState::NONE);
    let l = text(&r, &after);
    assert!(l.contains("[110 => 5]"), "{l}");
}

/// select-like calls: the entry half before the call, the rest after;
/// the line is the whole call.
#[test]
fn two_halves() {
    const TSP: u64 = BUF + 0x100;
    let args = [4, BUF, 0, 0, TSP, 0];
    let before = Mem::new().put(BUF, &[0b1001, 0, 0, 0, 0, 0, 0, 0]).put(TSP, &[0; 16]);
    let after = Mem::new().put(BUF, &[0b1000, 0, 0, 0, 0, 0, 0, 0]).put(TSP, &[0; 16]);
    let mut head = Line::new();
    format_entry_half(&mut head, &Config::DEFAULT, nr::PSELECT6, &args, &before);
    assert_eq!(
        head.as_str(),
        "pselect6(4, [0 3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL"
    );
    let r = rec(ONE, nr::PSELECT6, args, 1);
    let mut l = Line::new();
    format_resumed_line(&mut l, &Config::DEFAULT, &r, &head, &after);
    assert_eq!(
        l.as_str(),
        "pselect6(4, [0 3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL) = 1 (in [3], left {tv_sec=0, tv_nsec=0})\n"
    );
    // JSON: the two halves make one args string.
    let json = cfg("format=json");
    format_resumed_line(&mut l, &json, &r, &head, &after);
    assert_eq!(
        l.as_str(),
        "{\"pid\":100,\"tid\":100,\"syscall\":\"pselect6\",\"args\":\"4, [0 3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL\",\"ret\":1}\n"
    );
    // Multi-task prefix and padding apply to the whole line.
    let multi = Task {
        pid: 7,
        tid: 8,
        multi: true,
    };
    let args = [0, 0, 0, 0, 0, 0];
    format_entry_half(&mut head, &Config::DEFAULT, nr::SELECT, &args, NOMEM);
    format_resumed_line(&mut l, &Config::DEFAULT, &rec(multi, nr::SELECT, args, 0), &head, NOMEM);
    assert_eq!(
        l.as_str(),
        "[pid     8] select(0, NULL, NULL, NULL, NULL) = 0 (Timeout)\n"
    );
}

#[test]
fn two_halves_cut() {
    // A huge entry half is cut; the line still ends with the result.
    const N: usize = 100_000;
    let mem = Mem::new().put(BUF, &[0xff; N / 8 + 8]);
    let args = [N as u64, BUF, 0, 0, 0, 0];
    let mut head = Line::new();
    format_entry_half(&mut head, &Config::DEFAULT, nr::SELECT, &args, &mem);
    assert!(head.truncated());
    let mut l = Line::new();
    format_resumed_line(&mut l, &Config::DEFAULT, &rec(ONE, nr::SELECT, args, -9), &head, &mem);
    let s = l.as_str();
    assert!(s.len() <= LINE_CAP && l.truncated());
    assert!(s.starts_with("select(100000, [0 1 2 3"));
    assert!(
        s.ends_with("... = -1 EBADF (Bad file descriptor)\n"),
        "{}",
        &s[s.len() - 60..]
    );
}

// ---- JSON -------------------------------------------------------------------

/// The strings of a one-line JSON object, decoded (enough of a parser to
/// check the escaping: string values and plain numbers).
fn json_fields(line: &str) -> Vec<(String, String)> {
    let s = line.strip_suffix('\n').expect("newline");
    let s = s.strip_prefix('{').and_then(|s| s.strip_suffix('}')).expect("object");
    let mut out = Vec::new();
    let mut it = s.chars().peekable();
    let string = |it: &mut std::iter::Peekable<std::str::Chars>| {
        assert_eq!(it.next(), Some('"'));
        let mut v = String::new();
        loop {
            match it.next().expect("unterminated string") {
                '"' => return v,
                '\\' => match it.next().expect("escape") {
                    'n' => v.push('\n'),
                    't' => v.push('\t'),
                    'r' => v.push('\r'),
                    'b' => v.push('\u{8}'),
                    'f' => v.push('\u{c}'),
                    'u' => {
                        let h: String = (0..4).map(|_| it.next().expect("hex")).collect();
                        v.push(char::from_u32(u32::from_str_radix(&h, 16).expect("hex")).expect("char"));
                    }
                    c @ ('"' | '\\' | '/') => v.push(c),
                    c => panic!("bad escape \\{c}"),
                },
                c if (c as u32) < 0x20 => panic!("raw control character in a string"),
                c => v.push(c),
            }
        }
    };
    loop {
        let k = string(&mut it);
        assert_eq!(it.next(), Some(':'));
        let v = if it.peek() == Some(&'"') {
            string(&mut it)
        } else {
            let mut v = String::new();
            while let Some(&c) = it.peek() {
                if c == ',' {
                    break;
                }
                v.push(c);
                it.next();
            }
            v
        };
        out.push((k, v));
        match it.next() {
            None => return out,
            Some(',') => {}
            Some(c) => panic!("unexpected {c}"),
        }
    }
}

fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn json_fields_and_errors() {
    let json = cfg("format=json");
    let task = Task {
        pid: 10,
        tid: 11,
        multi: true,
    };
    let mem = Mem::new().str(BUF, "/etc/passwd");
    let l = line_of(&json, &rec(task, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], 3), &mem);
    assert_eq!(
        l,
        "{\"pid\":10,\"tid\":11,\"syscall\":\"openat\",\"args\":\"AT_FDCWD, \\\"/etc/passwd\\\", O_RDONLY\",\"ret\":3}\n"
    );
    assert_eq!(
        json_fields(&l),
        fields(&[
            ("pid", "10"),
            ("tid", "11"),
            ("syscall", "openat"),
            ("args", "AT_FDCWD, \"/etc/passwd\", O_RDONLY"),
            ("ret", "3"),
        ])
    );
    let l = line_of(&json, &rec(task, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], -ENOENT), &mem);
    assert_eq!(
        json_fields(&l),
        fields(&[
            ("pid", "10"),
            ("tid", "11"),
            ("syscall", "openat"),
            ("args", "AT_FDCWD, \"/etc/passwd\", O_RDONLY"),
            ("ret", "-1"),
            ("error", "ENOENT"),
        ])
    );
    // exit_group has no result; unknown errnos and unknown calls.
    let l = line_of(&json, &rec(task, nr::EXIT_GROUP, [1, 0, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(
        l,
        "{\"pid\":10,\"tid\":11,\"syscall\":\"exit_group\",\"args\":\"1\",\"ret\":null}\n"
    );
    let l = line_of(&json, &rec(task, CLOSE, [3, 0, 0, 0, 0, 0], -300), NOMEM);
    assert!(l.ends_with("\"ret\":-1,\"error\":\"errno 300\"}\n"), "{l}");
    let l = line_of(&json, &rec(task, 0x1f0, [1, 2, 0, 0, 0, 0], 0), NOMEM);
    assert_eq!(json_fields(&l)[2], ("syscall".to_string(), "syscall_0x1f0".to_string()));
    // No arguments: an empty string.
    let l = line_of(&json, &rec(task, 39, [0; 6], 10), NOMEM);
    assert_eq!(
        l,
        "{\"pid\":10,\"tid\":11,\"syscall\":\"getpid\",\"args\":\"\",\"ret\":10}\n"
    );
}

#[test]
fn json_escaping() {
    let json = cfg("format=json");
    // A path with a quote, a backslash and a newline: strace escapes them
    // in the text (`\"`, `\\`, `\n`), and JSON escapes that text.
    let mem = Mem::new().str(BUF, "a\"b\\c\nd\te");
    let r = rec(ONE, OPENAT, [AT_FDCWD, BUF, 0, 0, 0, 0], 3);
    let l = line_of(&json, &r, &mem);
    assert_eq!(
        l,
        "{\"pid\":100,\"tid\":100,\"syscall\":\"openat\",\"args\":\"AT_FDCWD, \\\"a\\\\\\\"b\\\\\\\\c\\\\nd\\\\te\\\", O_RDONLY\",\"ret\":3}\n"
    );
    // Decoded, the args are the text line's arguments.
    let t = text(&r, &mem);
    let args = &json_fields(&l)[3].1;
    assert!(t.starts_with(&format!("openat({args}) ")), "{t} / {args}");
    // Everything the decoder may write, escaped: control characters too.
    let mut l2 = Line::new();
    {
        use core::fmt::Write;
        let mut s = l2.sink(true);
        s.write_str("q\"b\\n\nr\rt\tb\u{8}f\u{c}x\u{1}\u{1f}é€").unwrap();
    }
    assert_eq!(l2.as_str(), "q\\\"b\\\\n\\nr\\rt\\tb\\bf\\fx\\u0001\\u001fé€");
}

#[test]
fn json_long_lines_are_cut_and_stay_json() {
    const N: usize = 100_000;
    let mem = Mem::new().put(BUF, &[b'"'; N]);
    let r = rec(ONE, WRITE, [1, BUF, N as u64, 0, 0, 0], N as i64);
    let mut l = Line::new();
    format_line(&mut l, &cfg("format=json,s=1000000"), &r, &mem);
    assert!(l.truncated() && l.len() <= LINE_CAP);
    let f = json_fields(l.as_str());
    assert_eq!(f[4], ("ret".to_string(), "100000".to_string()));
    assert!(
        f[3].1.starts_with("1, \"\\\"\\\"") && f[3].1.ends_with("\\\"..."),
        "{}",
        f[3].1
    );
}

// ---- exit lines -------------------------------------------------------------

fn exit_line(cfg: &Config, task: &Task, status: i32) -> String {
    let mut l = Line::new();
    format_exit(&mut l, cfg, task, status);
    l.as_str().to_string()
}

#[test]
fn exits() {
    let d = Config::DEFAULT;
    assert_eq!(exit_line(&d, &ONE, 0), "+++ exited with 0 +++\n");
    assert_eq!(exit_line(&d, &ONE, 3 << 8), "+++ exited with 3 +++\n");
    assert_eq!(exit_line(&d, &ONE, 255 << 8), "+++ exited with 255 +++\n");
    assert_eq!(exit_line(&d, &ONE, 9), "+++ killed by SIGKILL +++\n");
    assert_eq!(
        exit_line(&d, &ONE, 11 | 0x80),
        "+++ killed by SIGSEGV (core dumped) +++\n"
    );
    assert_eq!(
        exit_line(&d, &ONE, 6 | 0x80),
        "+++ killed by SIGABRT (core dumped) +++\n"
    );
    assert_eq!(exit_line(&d, &ONE, 34), "+++ killed by SIGRT_2 +++\n");
    assert_eq!(exit_line(&d, &ONE, 100), "+++ killed by 100 +++\n");
    let multi = Task {
        pid: 42,
        tid: 43,
        multi: true,
    };
    assert_eq!(exit_line(&d, &multi, 1 << 8), "[pid    43] +++ exited with 1 +++\n");
    let json = cfg("format=json");
    assert_eq!(
        exit_line(&json, &multi, 1 << 8),
        "{\"pid\":42,\"tid\":43,\"exited\":1}\n"
    );
    assert_eq!(
        exit_line(&json, &ONE, 11 | 0x80),
        "{\"pid\":100,\"tid\":100,\"killed\":\"SIGSEGV\",\"core_dumped\":true}\n"
    );
    assert_eq!(
        exit_line(&json, &ONE, 15),
        "{\"pid\":100,\"tid\":100,\"killed\":\"SIGTERM\",\"core_dumped\":false}\n"
    );
}

// ---- robustness -------------------------------------------------------------

/// Every call number, hostile arguments, both formats: no panic, one line
/// ending in a newline, within the buffer.
#[test]
fn sweep() {
    let mem = Mem::new().put(BUF, &[0xffu8; 4096]);
    let configs = [Config::DEFAULT, cfg("format=json"), cfg("raw,s=0"), cfg("s=4096")];
    let mut l = Line::new();
    let mut head = Line::new();
    for nr in 0..520u32 {
        for args in [[0u64; 6], [u64::MAX; 6], [BUF; 6], [3, BUF, 4096, BUF, 4096, BUF]] {
            for ret in [0i64, 1, -1, -4095, -4096, i64::MIN, i64::MAX, BUF as i64] {
                for c in &configs {
                    format_line(&mut l, c, &rec(ONE, nr, args, ret), &mem);
                    let s = l.as_str();
                    assert!(s.ends_with('\n') && s.len() <= LINE_CAP, "{nr} {s}");
                    assert_eq!(s.matches('\n').count(), 1, "{nr} {s}");
                    if c.format == Format::Json {
                        let f = json_fields(s);
                        let no_return = nr == nr::EXIT || nr == nr::EXIT_GROUP;
                        assert_eq!(f.len(), if crate::is_err(ret) && !no_return { 6 } else { 5 }, "{s}");
                    }
                    format_entry_half(&mut head, c, nr, &args, &mem);
                    format_resumed_line(&mut l, c, &rec(ONE, nr, args, ret), &head, &mem);
                    assert!(l.as_str().ends_with('\n'), "{nr}");
                }
            }
        }
    }
}

// ---- the shortcut for read and write lines ----------------------------------

/// Lines that `strata_decode::quick_call` takes come out as the general
/// path prints them: with and without the `[pid N] ` prefix (tids of every
/// width), at every -s, short and long, padded or past the column.
#[test]
fn shortcut_lines_match_the_general_path() {
    let data: Vec<u8> = (0..=255u8).cycle().skip(40).take(300).collect();
    let mem = Mem::new().put(BUF, &data);
    let mut taken = 0;
    for multi in [false, true] {
        for tid in [7u32, 4242, 123_456, u32::MAX] {
            for s in ["", "s=0", "s=5", "s=64", "s=100"] {
                let c = cfg(s);
                for (nr, args, ret) in [
                    (READ, [0, BUF, 1, 0, 0, 0], 1),
                    (WRITE, [1, BUF, 1, 0, 0, 0], 1),
                    (READ, [3, BUF, 4096, 0, 0, 0], 200),
                    (WRITE, [1, BUF, 80, 0, 0, 0], 80),
                    (17, [3, BUF, 832, 64, 0, 0], 0),
                    (18, [3, BUF, 9, u64::MAX, 0, 0], 9),
                    (READ, [0, BUF, 1, 0, 0, 0], -11),
                ] {
                    let r = rec(Task { pid: 1, tid, multi }, nr, args, ret);
                    let mut quick = Line::new();
                    format_line(&mut quick, &c, &r, &mem);
                    let mut general = Line::new();
                    crate::line::format_line_general(&mut general, &c, &r, &mem);
                    assert_eq!(quick.as_str(), general.as_str(), "{s:?} {r:?}");
                    let mut probe = [0u8; 512];
                    let opts = strata_decode::Options {
                        out_args: true,
                        ..c.decode
                    };
                    if strata_decode::quick_call(&mut probe, nr as usize, &args, ret, &mem, &opts).is_some() {
                        taken += 1;
                    }
                }
            }
        }
    }
    // The shortcut did take most of them (all but the failed read and -s 100).
    assert!(taken >= 2 * 4 * 4 * 6, "taken {taken}");
}
