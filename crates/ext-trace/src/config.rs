//! The extension's arguments: which calls to show and how.
//!
//! Options are separated by commas (the text after `trace:` on the command
//! line, or the manifest's `key=value` parameters):
//!
//! | option | meaning |
//! |---|---|
//! | `trace=SET`, `filter=SET` | the calls to show, strace's `-e trace=SET` (below) |
//! | `failed` | only calls that returned an error (strace `-Z`) |
//! | `format=text` / `format=json` | strace lines (default), or one JSON object per line |
//! | `s=N` | print at most N bytes of strings and buffers (strace `-s`, default 32) |
//! | `raw`, `raw=all` | no decoding: arguments and results in hex (strace `-e raw=all`) |
//! | `ext-calls` | also show the calls extensions above this layer issue |
//!
//! A SET is a list of words separated by `|`: a call name (`openat`), a
//! call number (`257`), a class (`%file`, `%desc`, `%network`, `%process`,
//! `%memory`, `%signal`, `%ipc`, `%time`, and strata's `%other`), `all` or
//! `none`. As in strace, a leading `!` inverts the set (`trace=!read|write`:
//! everything but read and write), a word starting with `?` is ignored when
//! it names nothing, the class names `file`, `desc`, `network`, `process`,
//! `memory`, `signal` and `ipc` are accepted without the `%`, and a later
//! `trace=` replaces an earlier one. strace separates the words with commas;
//! so that `trace=openat,close` works too, a bare word that is no option,
//! right after a `trace=` (or after such a word), continues its list. An
//! empty SET (`trace=`) shows no call. Without `trace=`, every call is shown.
//!
//! Classes are strata's: each call has one class in the syscall table
//! (`strata_syscall_table::Class`), where strace lets a call be in several
//! (strace's `openat` is both `%file` and `%desc`; strata's is `%file`).

use core::fmt::Write as _;

use strata_abi::{class, Interest, MAX_NR};
use strata_decode::Options;
use strata_ext::InitError;

/// How lines are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// strace's lines: `openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3`.
    Text,
    /// One JSON object per line:
    /// `{"pid":1,"tid":1,"syscall":"close","args":"3","ret":0}`.
    Json,
}

/// What the extension was asked to do (parsed from its arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The calls shown (the layer's interest).
    pub filter: Interest,
    /// Only calls that returned an error (`failed`).
    pub failed_only: bool,
    /// Text or JSON (`format=`).
    pub format: Format,
    /// The formatter's options: `s=` and `raw` (`out_args` is true; the
    /// layer sets it per call).
    pub decode: Options,
    /// Also show calls issued by extensions above (`ext-calls`).
    pub ext_calls: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

/// The options [`Config::parse`] knows, for error messages.
const OPTIONS: &str = "trace=SET, filter=SET, failed, format=text|json, s=N, raw, ext-calls";

/// The class names strace accepts without `%` (deprecated there, but
/// common in scripts). `time` is not one of them: it is a call's name.
const BARE_CLASSES: [&str; 7] = ["desc", "file", "memory", "process", "signal", "ipc", "network"];

impl Config {
    /// No arguments: every call, strace's defaults, text.
    pub const DEFAULT: Config = Config {
        filter: Interest::ALL,
        failed_only: false,
        format: Format::Text,
        decode: Options::DEFAULT,
        ext_calls: false,
    };

    /// Parses the extension's arguments (see the module documentation).
    /// Errors name the option or word that is wrong.
    // InitError is the SDK's fixed-size (no allocation) message.
    #[allow(clippy::result_large_err)]
    pub fn parse(args: &str) -> Result<Config, InitError> {
        let mut cfg = Config::DEFAULT;
        // The trace= list being read: its words (before inversion) and
        // whether it is inverted. `None` until a trace= option.
        let mut set: Option<(Interest, bool)> = None;
        // The previous option was trace= (or a word continuing it).
        let mut in_set = false;
        for opt in args.split(',').map(str::trim) {
            if opt.is_empty() {
                continue;
            }
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (opt, None),
            };
            let was_in_set = in_set;
            in_set = false;
            match (key, value) {
                ("trace" | "filter", Some(v)) => {
                    let mut words = v;
                    let mut inverted = false;
                    while let Some(rest) = words.strip_prefix('!') {
                        inverted = !inverted;
                        words = rest.trim_start();
                    }
                    let mut s = Interest::NONE;
                    for w in words.split('|').map(str::trim) {
                        add_word(&mut s, w).map_err(|e| e.error(w))?;
                    }
                    set = Some((s, inverted));
                    in_set = true;
                }
                ("failed", None) => cfg.failed_only = true,
                ("format", Some("text")) => cfg.format = Format::Text,
                ("format", Some("json")) => cfg.format = Format::Json,
                ("format", Some(v)) => return Err(err2("unknown format '", v, "' (expected text or json)")),
                ("s", Some(v)) => match v.parse::<usize>() {
                    Ok(n) => cfg.decode.string_limit = n,
                    Err(_) => return Err(err2("s= wants a number of bytes, not '", v, "'")),
                },
                ("raw", None | Some("all")) => cfg.decode.raw = true,
                ("ext-calls", None) => cfg.ext_calls = true,
                (_, None) if was_in_set => match set.as_mut() {
                    Some((s, _)) => {
                        add_word(s, opt).map_err(|e| match e {
                            BadWord::Call => unknown(opt, "unknown option or system call '"),
                            e => e.error(opt),
                        })?;
                        in_set = true;
                    }
                    None => return Err(unknown(opt, "unknown option '")),
                },
                _ => return Err(unknown(opt, "unknown option '")),
            }
        }
        if let Some((s, inverted)) = set {
            cfg.filter = if inverted { complement(s) } else { s };
        }
        Ok(cfg)
    }

    /// Whether call `nr` is selected by the filter.
    pub fn selects(&self, nr: u32) -> bool {
        self.filter.contains(nr)
    }

    /// Whether a call that returned `ret` is shown (`failed` keeps errors
    /// only).
    pub fn shows_result(&self, ret: i64) -> bool {
        !self.failed_only || crate::line::is_err(ret)
    }
}

/// Why a word of a SET names nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BadWord {
    Call,
    Class,
    Regex,
}

impl BadWord {
    /// The message for word `w`.
    fn error(self, w: &str) -> InitError {
        match self {
            BadWord::Call => unknown(w, "unknown system call '"),
            BadWord::Class => unknown(w, "unknown system call class '"),
            BadWord::Regex => err2("regular expressions are not supported in trace=: '", w, "'"),
        }
    }
}

/// Adds what `word` names to `set`.
fn add_word(set: &mut Interest, word: &str) -> Result<(), BadWord> {
    let mut w = word;
    let mut optional = false;
    while let Some(rest) = w.strip_prefix('?') {
        optional = true;
        w = rest;
    }
    if w.is_empty() {
        // `trace=` or `trace=a||b`: nothing to add (strace skips empty words).
        return Ok(());
    }
    let found = match w {
        "all" => {
            *set = Interest::ALL;
            true
        }
        "none" => true,
        _ if w.starts_with('/') => return Err(BadWord::Regex),
        _ => {
            if let Some(name) = w.strip_prefix('%') {
                add_class(set, name)
            } else if w.bytes().all(|b| b.is_ascii_digit()) {
                match w.parse::<u32>() {
                    Ok(nr) if (nr as usize) < MAX_NR => {
                        set.insert(nr);
                        true
                    }
                    _ => false,
                }
            } else if BARE_CLASSES.contains(&w) {
                add_class(set, w)
            } else if let Some(nr) = strata_syscall_table::nr_by_name(w) {
                set.insert(nr);
                true
            } else {
                false
            }
        }
    };
    match (found, optional) {
        (true, _) | (false, true) => Ok(()),
        (false, false) if w.starts_with('%') => Err(BadWord::Class),
        (false, false) => Err(BadWord::Call),
    }
}

/// Adds class `name` (without the `%`); false if there is no such class.
fn add_class(set: &mut Interest, name: &str) -> bool {
    match class::by_name(name) {
        Some(bits) => {
            *set = set.union(Interest::NONE.with_class(bits));
            true
        }
        None => false,
    }
}

/// Every number `s` does not hold (below [`MAX_NR`]).
fn complement(s: Interest) -> Interest {
    let mut c = s;
    for w in c.bits.iter_mut() {
        *w = !*w;
    }
    c
}

fn unknown(word: &str, what: &str) -> InitError {
    let mut e = err2(what, word, "'");
    if what.contains("option") {
        let _ = write!(e, " (options: {OPTIONS})");
    }
    e
}

fn err2(a: &str, b: &str, c: &str) -> InitError {
    let mut e = InitError::new(a);
    e.push(b).push(c);
    e
}
