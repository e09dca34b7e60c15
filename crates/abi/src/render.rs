//! `docs/abi.md` and `include/strata.h`, rendered from the op table, the
//! personality and the structures (no_std, no allocation).
//!
//! Rust cannot list a structure's fields, so the C declaration and the
//! meaning of every field are written here by hand, next to the field's
//! offset taken from the Rust layout (`offset_of!`). The header asserts the
//! Rust sizes, and a test compiles it against every field's offset, size and
//! type (crates/abi/tests/header.rs), so the two cannot drift apart.

use core::fmt::{self, Write};
use core::mem::{align_of, offset_of, size_of};

use crate::{
    call_flags, class, decode, modelled, Below, Call, ExtDesc, Group, Host, Interest, Op, OpInfo, PathSlot, MAX_NR,
    MAX_PATHS, NO_ARG, OPS, VERSION, VERSION_MAJOR, VERSION_MINOR,
};

/// The undefined symbols an extension object may have: strata resolves them
/// to its own implementations (compilers emit calls to them even in
/// freestanding code). Anything else is refused at load.
use crate::HOST_SYMBOLS;

/// Width C comments are wrapped to.
const WIDTH: usize = 79;

struct Field {
    /// The C declaration, without the `;` (or with it, then a comment).
    decl: &'static str,
    offset: usize,
    doc: &'static str,
}

struct Struct {
    /// The C typedef (also the struct tag).
    c: &'static str,
    rust: &'static str,
    size: usize,
    align: usize,
    doc: &'static str,
    fields: &'static [Field],
}

macro_rules! field {
    ($t:ty, $f:ident, $decl:literal, $doc:literal) => {
        Field {
            decl: $decl,
            offset: offset_of!($t, $f),
            doc: $doc,
        }
    };
}

macro_rules! structure {
    ($t:ident, $c:literal, $doc:literal, [$($f:ident: $decl:literal, $fdoc:literal;)*]) => {
        Struct {
            c: $c,
            rust: stringify!($t),
            size: size_of::<$t>(),
            align: align_of::<$t>(),
            doc: $doc,
            fields: &[$(field!($t, $f, $decl, $fdoc),)*],
        }
    };
}

/// The structures, in the order the header defines them.
#[rustfmt::skip]
const STRUCTS: &[Struct] = &[
    structure!(PathSlot, "strata_path_slot",
        "Where one path operand of a call is.",
        [
            arg: "uint8_t arg",
                "Index of the argument register holding the pointer to the NUL-terminated path.";
            dirfd_arg: "uint8_t dirfd_arg",
                "Index of the argument holding the directory handle a relative path starts from, or `STRATA_NO_ARG` (the current directory).";
            follow: "uint8_t follow",
                "1 when the kernel follows a symbolic link in the last component.";
            create: "uint8_t create",
                "1 when the call may create the last component (or its link).";
        ]),
    structure!(Call, "strata_call",
        "One call on the way down the stack. `nr` and `args` are the Linux call (the personality's origin); `op`, `class` and `paths` are the ABI view of it. Layers may change `args`; the bottom layer issues `nr` with `args`.",
        [
            abi_version: "uint32_t abi_version",
                "`STRATA_ABI_VERSION` of the strata that made this call.";
            size: "uint32_t size",
                "`sizeof(strata_call)` in the strata that made it.";
            op: "uint16_t op",
                "The op (`enum strata_op`).";
            class: "uint16_t class",
                "`STRATA_CLASS_*` bits.";
            nr: "uint32_t nr",
                "The Linux call number.";
            args: "uint64_t args[6]",
                "The six argument registers (rdi, rsi, rdx, r10, r8, r9).";
            pid: "uint32_t pid",
                "Process id of the caller (as the program sees it).";
            tid: "uint32_t tid",
                "Thread id of the caller (as the program sees it).";
            flags: "uint32_t flags",
                "`STRATA_CALL_*` bits.";
            npaths: "uint32_t npaths",
                "How many of `paths` are used.";
            paths: "strata_path_slot paths[STRATA_MAX_PATHS]",
                "Where the path operands are.";
        ]),
    structure!(Interest, "strata_interest",
        "A set of Linux call numbers below `STRATA_MAX_NR`: the calls a layer interposes on.",
        [
            bits: "uint64_t bits[STRATA_MAX_NR / 64]",
                "Bit `nr % 64` of word `nr / 64` is set for call number `nr` (`strata_interest_add`).";
        ]),
    structure!(Below, "strata_below",
        "The layer below, as an extension sees it: one function that carries a call further down (to the next interested layer, or to the kernel).",
        [
            call: "int64_t (*call)(const strata_below *below, strata_call *call)",
                "Passes `call` down; returns the result (a value, or `-errno`).";
            ctx: "const void *ctx",
                "Opaque to extensions.";
            layer: "uint32_t layer",
                "Index of the layer this `strata_below` belongs to (0 = top).";
            _reserved: "uint32_t _reserved",
                "Reserved.";
        ]),
    structure!(Host, "strata_host",
        "What strata offers every extension, whatever its position in the stack.",
        [
            abi_version: "uint32_t abi_version",
                "`STRATA_ABI_VERSION` of the running strata.";
            size: "uint32_t size",
                "`sizeof(strata_host)` in the running strata.";
            read_mem: "int64_t (*read_mem)(uint64_t addr, uint8_t *buf, size_t len)",
                "Reads program memory at `addr`: bytes read, or `-EFAULT`.";
            write_mem: "int64_t (*write_mem)(uint64_t addr, const uint8_t *buf, size_t len)",
                "Writes program memory at `addr`: bytes written, or `-EFAULT`.";
            emit: "void (*emit)(uint32_t channel, const uint8_t *buf, size_t len)",
                "Appends one record (a whole line) to the session's output channel (`channel` 0: the trace channel, drained by the launcher to its destination), or writes it to strata's standard error (`channel` 1).";
            raw_syscall: "int64_t (*raw_syscall)(uint64_t nr, const uint64_t *args)",
                "Issues a Linux call (six arguments at `args`) directly to the kernel from strata's text, bypassing every layer: for an extension's private needs, e.g. reading its own configuration files. Calls on the program's behalf go to `strata_below` instead.";
            multi_task: "uint32_t (*multi_task)(void)",
                "Nonzero once the session has had more than one thread or process.";
            fail: "void (*fail)(const uint8_t *msg, size_t len); /* does not return */",
                "The extension cannot go on (a panic, a broken invariant): strata prints `msg` with the extension's name and the call it was handling, and stops the program (fail closed). Does not return.";
        ]),
    structure!(ExtDesc, "strata_ext_desc",
        "What an extension provides for the layer above, filled by its `strata_ext_init`.",
        [
            abi_version: "uint32_t abi_version",
                "`STRATA_ABI_VERSION` the extension was built for.";
            size: "uint32_t size",
                "`sizeof(strata_ext_desc)` in the extension.";
            name: "const uint8_t *name",
                "NUL-terminated name, for messages.";
            state: "void *state",
                "Passed back to every function below.";
            interest: "strata_interest interest",
                "The calls this layer wants to see; all others skip it.";
            call: "int64_t (*call)(void *state, strata_call *call, const strata_below *below)",
                "Handles one call: pass it on with `below->call(below, call)`, change it, serve it or fail it. Returns the result for the layer above.";
            exec_commit: "void (*exec_commit)(void *state, const strata_call *call)",
                "Optional (may be NULL). The calling process is about to replace its image (execve or execveat passed every check and will not return); `call` is that call.";
            task_start: "void (*task_start)(void *state, uint32_t tid, uint32_t thread)",
                "Optional. A new process (`thread` = 0) or thread (`thread` = 1) `tid` exists; called in the child as it starts.";
            exit: "void (*exit)(void *state, int32_t status)",
                "Optional. The calling process is exiting with a wait status (exit_group, or the last thread's exit).";
            signal: "int32_t (*signal)(void *state, int32_t sig, const uint8_t *info)",
                "Optional. Signal upcall: strata is about to deliver signal `sig` to a program handler (currently: the signals strata itself delivers, e.g. a virtual SIGSYS). Return 0 to deliver, 1 to suppress it.";
            before: "int64_t (*before)(void *state, const strata_call *call, uint64_t *cookie)",
                "(1.1) The hook form of a layer, used when `call` is NULL: sees the call on its way down; returns `STRATA_CONTINUE` to pass it on unchanged, or a result to serve or fail it (the layers below and the kernel then never see it). It may leave a word in `*cookie` (zero at first) for its `after`. For layers that do not change a call's arguments: strata runs hook layers in a loop around the call instead of nesting them, which costs less where every return after a system call mispredicts. Optional.";
            after: "int64_t (*after)(void *state, const strata_call *call, int64_t ret, uint64_t cookie)",
                "(1.1) Sees the result `ret` of a call this layer's `before` passed on (or of every call, without `before`), on its way up, with the cookie `before` left; returns the result for the layer above. Optional.";
        ]),
];

/// `InitFn` in C.
const INIT_FN: &str = "\
typedef int32_t (*strata_ext_init_fn)(const strata_host *host,
                                      const uint8_t *args, size_t args_len,
                                      strata_ext_desc *out,
                                      uint8_t *err, size_t err_len);";

const INIT_DOC: &str = "Signature of an extension object's `strata_ext_init`: fill `out` from `args` (the text after \
                        `NAME:` on the command line, or the manifest's parameters as `key=value` text; not \
                        NUL-terminated) and return 0, or write a NUL-terminated message of at most `err_len` bytes \
                        into `err` and return nonzero.";

/// [`call_flags`] bits: C suffix, value, meaning.
const CALL_FLAGS: [(&str, u32, &str); 2] = [
    (
        "FROM_EXTENSION",
        call_flags::FROM_EXTENSION,
        "The call was issued by an extension (downwards), not by the program.",
    ),
    (
        "CHANGED",
        call_flags::CHANGED,
        "An extension above changed the arguments on the way down.",
    ),
];

const INTRO: &str = "\
# The strata ABI

<!-- Generated from crates/abi (lib.rs, ops.rs, personality.rs, render.rs); do not edit by hand.
     Regenerate with:
       cargo run -q -p strata-abi --bin gen-abi -- markdown > docs/abi.md
       cargo run -q -p strata-abi --bin gen-abi -- header > include/strata.h
     (tests in strata-abi fail when these files and the crate differ). -->

strata catches every system call a program makes and passes it through a
stack of *extensions* (ARCHITECTURE.md). Extensions do not see raw Linux
calls: before they see one, strata's *personality* turns it into a call on
this ABI, an *op* on one of a few primitive abstractions (streams named by
path, virtual memory, threads and processes, waiting and synchronisation,
time, random bits, signals), with its path operands located and its class
known. In the spirit of Bascule's ABI and Gramine's PAL the op set is small;
everything it does not model is `STRATA_OP_PASSTHROUGH`, which still carries
the whole call.

The ABI is plain C: the structures below are the same in Rust
(`crates/abi`, `#[repr(C)]`) and in C (`include/strata.h`). Extensions
written in Rust use the SDK in `crates/ext`; extensions written in C include
`include/strata.h` and nothing else (`examples/c-ext/hide.c`).

## Lossless by construction

A `strata_call` keeps the Linux call it came from: the number and the six
argument registers. An op is a *view* of that call, never a replacement, so
a call that no extension changed reaches the kernel exactly as the program
made it (same number, same flags, same pointers). An extension that changes
a call changes its arguments (typically a path operand, which then points
into the extension's memory until the call returns from below) or serves it
and returns a result of its own. A layer that changes arguments passes a
changed copy of the `strata_call` down and leaves the one it was given as
the layer above passed it (this is what the Rust SDK's `Below` does).
";

/// Writes `docs/abi.md`.
pub fn render_markdown(out: &mut dyn Write) -> fmt::Result {
    out.write_str(INTRO)?;
    versions_md(out)?;
    layers_md(out)?;
    structs_md(out)?;
    constants_md(out)?;
    ops_md(out)?;
    personality_md(out)?;
    objects_md(out)
}

fn versions_md(out: &mut dyn Write) -> fmt::Result {
    writeln!(out, "\n## Versions\n")?;
    writeln!(
        out,
        "This is version **{VERSION_MAJOR}.{VERSION_MINOR}** of the ABI: `STRATA_ABI_VERSION` = `{VERSION:#010x}`,
that is `major << 16 | minor`. The structures strata passes carry the
version they were made for, and every extension object exports the version
it was built for (`strata_ext_abi_version`)."
    )?;
    out.write_str(
        "
- The **major** version changes when a structure or an op changes meaning.
  An extension built for another major version is refused at launch.
- The **minor** version changes when ops or trailing fields are added. An
  extension built for an older minor of the same major is accepted: minor
  versions only append ops, and fields at the end of structures, and the
  structures that can grow carry their size (`size`), so each side reads
  only the fields the other one knows.
",
    )
}

fn layers_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "
## Layers

Each extension is a layer. A call travels down the stack from the top layer
to the kernel; a layer sees it only when the Linux call number is in the
layer's interest set (`strata_interest`), and otherwise the call goes
straight past. A layer that sees a call gets the `strata_call` and a
`strata_below`, and returns the call's result (a value, or `-errno`) to the
layer above. It may:

- pass the call on unchanged: `return below->call(below, call);`
- pass on a copy with changed arguments (pointers into the layer's own
  memory stay valid until `below->call` returns);
- serve it itself and return a result, without going further down;
- fail it, returning `-errno`;
- issue calls of its own downwards (with `STRATA_CALL_FROM_EXTENSION` set).

Extensions run inside the traced program, in strata's signal handler, on
strata's stack (256 KiB), in whichever thread made the call and concurrently
with other threads. So they must not allocate, block on locks, or use libc;
state is built in `strata_ext_init` and then only read (or changed through
atomics); stack frames should stay within a few tens of KiB. Program memory
is read and written through `strata_host` (`read_mem`, `write_mem`), which
fail with `-EFAULT` like the kernel would.
",
    )
}

fn structs_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "\n## Structures\n\nAll structures are `#[repr(C)]` for x86-64 Linux (LP64); offsets and sizes are\n\
         in bytes.\n",
    )?;
    for s in STRUCTS {
        writeln!(out, "\n### `{}` (Rust `{}`)\n", s.c, s.rust)?;
        writeln!(out, "{}\n", s.doc)?;
        writeln!(out, "Size {}, alignment {}.\n", s.size, s.align)?;
        out.write_str("| offset | C declaration | meaning |\n|---:|---|---|\n")?;
        for f in s.fields {
            // The declaration without a trailing comment.
            let decl = f.decl.split(';').next().unwrap_or(f.decl);
            writeln!(out, "| {} | `{decl}` | {} |", f.offset, f.doc)?;
        }
    }
    writeln!(out, "\n### `strata_ext_init_fn` (Rust `InitFn`)\n")?;
    writeln!(out, "{INIT_DOC}\n")?;
    writeln!(out, "```c\n{INIT_FN}\n```")
}

fn constants_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str("\n## Constants\n\n")?;
    out.write_str(
        "Class bits (`strata_call.class`; the strace trace classes, as in docs/syscalls.md):\n\n\
         | C name | value |\n|---|---:|\n",
    )?;
    for c in strata_syscall_table::Class::ALL {
        out.write_str("| `STRATA_CLASS_")?;
        upper(out, c.as_str())?;
        writeln!(out, "` | `{:#06x}` |", class::of(c))?;
    }
    out.write_str("\nCall flags (`strata_call.flags`):\n\n| C name | value | meaning |\n|---|---:|---|\n")?;
    for (name, v, doc) in CALL_FLAGS {
        writeln!(out, "| `STRATA_CALL_{name}` | `{v:#x}` | {doc} |")?;
    }
    writeln!(out, "\nLimits:\n\n| C name | value | meaning |\n|---|---:|---|")?;
    writeln!(
        out,
        "| `STRATA_NO_ARG` | `{NO_ARG:#x}` | \"No such argument\" in a `strata_path_slot`. |"
    )?;
    writeln!(
        out,
        "| `STRATA_MAX_PATHS` | {MAX_PATHS} | Path operands a call can have. |"
    )?;
    writeln!(
        out,
        "| `STRATA_MAX_NR` | {MAX_NR} | The largest Linux call number an interest set can name (exclusive). |"
    )?;
    writeln!(
        out,
        "| `STRATA_CONTINUE` | `INT64_MIN` | What a `before` hook returns to pass the call on. |"
    )
}

fn ops_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "
## Ops

`strata_call.op` is one of these numbers (`enum strata_op` in C, `Op` in
Rust). Numbers are stable within a major version. The Linux calls are the
ones the personality decodes into the op; a `*` marks calls decoded into it
only for some arguments (see the personality below). An op number this
strata does not know is treated as `STRATA_OP_PASSTHROUGH`.
",
    )?;
    for g in Group::ALL {
        writeln!(out, "\n### {}\n", g.title())?;
        out.write_str("| nr | C name | Linux calls | meaning |\n|---:|---|---|---|\n")?;
        for o in OPS.iter().filter(|o| o.group == g) {
            write!(out, "| {} | `STRATA_OP_{}` | ", o.op as u16, o.name)?;
            linux_calls(out, o.linux)?;
            out.write_str(" | ")?;
            escaped(out, o.doc)?;
            out.write_str(" |\n")?;
        }
    }
    Ok(())
}

fn linux_calls(out: &mut dyn Write, list: &str) -> fmt::Result {
    if list.starts_with('(') {
        return escaped(out, list);
    }
    for (i, w) in list.split_whitespace().enumerate() {
        if i > 0 {
            out.write_char(' ')?;
        }
        match w.strip_suffix('*') {
            Some(name) => write!(out, "`{name}`\\*")?,
            None => write!(out, "`{w}`")?,
        }
    }
    Ok(())
}

fn personality_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "
## The Linux personality

The personality decodes a Linux call into its op from the call number and
the argument registers alone (it never reads program memory). These are the
calls it models; every other call number is `PASSTHROUGH` with no path
operands. Ops are named without their `STRATA_OP_` prefix. A call listed
with two ops is decoded into the second for some arguments (`mmap` of a file
descriptor is `STREAM_MAP`, `clone` with `CLONE_THREAD` is `THREAD_CREATE`,
`newfstatat` and `statx` with `AT_EMPTY_PATH` are `STREAM_ATTR_BY_HANDLE`,
the wake operations of `futex` are `SYNC_WAKE`).

A path operand is the argument holding the path pointer, the argument
holding the directory handle a relative path starts from (none: the current
directory), whether the kernel follows a symbolic link in the last
component, and whether the call may create the last component; the last two
can depend on flags in another argument.

| nr | call | op | path operands |
|---:|---|---|---|
",
    )?;
    for (nr, name, op) in modelled() {
        write!(out, "| {nr} | `{name}` | `{}`", op_name(op))?;
        for o in OPS.iter().filter(|o| o.op != op && decodes_sometimes(o, name)) {
            write!(out, " or `{}`", o.name)?;
        }
        out.write_str(" | ")?;
        path_operands(out, nr)?;
        out.write_str(" |\n")?;
    }
    Ok(())
}

fn op_name(op: Op) -> &'static str {
    OPS.iter().find(|o| o.op == op).map_or("PASSTHROUGH", |o| o.name)
}

/// Whether `o`'s Linux list has `name*`.
fn decodes_sometimes(o: &OpInfo, name: &str) -> bool {
    o.linux.split_whitespace().any(|w| w.strip_suffix('*') == Some(name))
}

/// Flags that change whether the last component's link is followed.
const FOLLOW_PROBES: [(u64, &str); 4] = [
    (0x100, "`AT_SYMLINK_NOFOLLOW`"),
    (0x400, "`AT_SYMLINK_FOLLOW`"),
    (0o400000, "`O_NOFOLLOW`"),
    (0o300, "`O_CREAT` with `O_EXCL`"),
];
/// Flags that change whether the call may create the last component.
const CREATE_PROBES: [(u64, &str); 1] = [(0o100, "`O_CREAT`")];

fn path_operands(out: &mut dyn Write, nr: u32) -> fmt::Result {
    let d = decode(nr, &[0; 6]);
    if d.npaths == 0 {
        return out.write_str("none");
    }
    for (k, s) in d.paths.iter().enumerate().take(d.npaths) {
        if k > 0 {
            out.write_str("; ")?;
        }
        write!(out, "{k}: path `args[{}]`", s.arg)?;
        if s.dirfd_arg != NO_ARG {
            write!(out, " from directory `args[{}]`", s.dirfd_arg)?;
        }
        out.write_str(", follow ")?;
        condition(out, nr, k, |p| p.follow, &FOLLOW_PROBES)?;
        out.write_str(", create ")?;
        condition(out, nr, k, |p| p.create, &CREATE_PROBES)?;
    }
    Ok(())
}

/// Writes the value of a path slot field of call `nr`, operand `k`, with
/// all zero arguments, then which flags in which argument flip it (found by
/// decoding the call with each flag in each argument).
fn condition(out: &mut dyn Write, nr: u32, k: usize, get: fn(&PathSlot) -> u8, probes: &[(u64, &str)]) -> fmt::Result {
    let value = |args: &[u64; 6]| decode(nr, args).paths.get(k).map_or(0, get);
    let base = value(&[0; 6]);
    out.write_str(if base != 0 { "yes" } else { "no" })?;
    let mut first = true;
    for i in 0..6 {
        let with = |bits: u64| {
            let mut a = [0; 6];
            a[i] = bits;
            value(&a) != base
        };
        let mut hits = 0;
        for &(_, name) in probes.iter().filter(|(bits, _)| with(*bits)) {
            if hits == 0 {
                let lead = if first { " unless" } else { ", or" };
                write!(out, "{lead} `args[{i}]` has ")?;
            } else {
                out.write_str(" or ")?;
            }
            out.write_str(name)?;
            hits += 1;
            first = false;
        }
        if hits == 0 && with(!0) {
            let lead = if first { " unless" } else { ", or" };
            write!(out, "{lead} `args[{i}]` has certain flags")?;
            first = false;
        }
    }
    Ok(())
}

fn objects_md(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "
## Extension objects

An extension built outside strata is an ELF shared object for x86-64 Linux,
loaded with `--ext ./libNAME.so` (arguments as for built-in extensions,
`--ext ./libNAME.so:ARGS`). strata loads it itself, into the traced
program, before the program starts; the program's dynamic linker and libc
play no part. The object:

- exports, with default visibility, the function `strata_ext_init` (of
  type `strata_ext_init_fn`) and the word `uint32_t strata_ext_abi_version`
  (`STRATA_ABI_VERSION` as the object was built). Everything else should be
  hidden (`-fvisibility=hidden`);
- is built without libc and without start files (`-nostdlib`; in C also
  `-ffreestanding -fno-stack-protector`) and needs no shared library
  (no `DT_NEEDED`);
- may leave undefined only these symbols, which strata provides:
 ",
    )?;
    for s in HOST_SYMBOLS {
        write!(out, " `{s}`")?;
    }
    out.write_str(
        ".
  An object with any other undefined symbol is refused.

Loading goes like this:

1. strata reads `strata_ext_abi_version` and refuses the object unless the
   version is compatible (same major, minor not above strata's).
2. It calls `strata_ext_init(host, args, args_len, &desc, err, err_len)`
   once per process start, before the program runs. `host` stays valid for the life of the
   process. On success the function has filled every field of `desc`
   (`abi_version` and `size` included) and returns 0; otherwise it has
   written a NUL-terminated message into `err` and returns nonzero, and
   strata prints the message and exits with status 2.
3. From then on, every call whose Linux number is in `desc.interest` reaches
   `desc.call(desc.state, call, below)`.

Examples: `examples/c-ext/hide.c` (C, built with `cc -O2 -fPIC -shared
-nostdlib -ffreestanding -fno-stack-protector -fvisibility=hidden -I include
-o libhide.so examples/c-ext/hide.c`) and `examples/rust-ext` (Rust, on the
`strata-ext` SDK: `cargo build --release --manifest-path
examples/rust-ext/Cargo.toml`).
",
    )
}

/// Writes `include/strata.h`.
pub fn render_header(out: &mut dyn Write) -> fmt::Result {
    out.write_str(
        "\
/* The strata ABI, for extensions written in C.
 *
 * Generated from crates/abi (lib.rs, ops.rs, render.rs); do not edit by hand.
 * Regenerate with:
 *   cargo run -q -p strata-abi --bin gen-abi -- header > include/strata.h
 * docs/abi.md explains every structure, op and rule. An extension object
 * includes this header and nothing from libc, and exports:
 *
 *   uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;
 *   int32_t strata_ext_init(const strata_host *host, const uint8_t *args,
 *                           size_t args_len, strata_ext_desc *out,
 *                           uint8_t *err, size_t err_len);
 */
#ifndef STRATA_H
#define STRATA_H

#include <stddef.h>
#include <stdint.h>

",
    )?;
    writeln!(out, "#define STRATA_ABI_VERSION_MAJOR {VERSION_MAJOR}u")?;
    writeln!(out, "#define STRATA_ABI_VERSION_MINOR {VERSION_MINOR}u")?;
    out.write_str("#define STRATA_ABI_VERSION ((STRATA_ABI_VERSION_MAJOR << 16) | STRATA_ABI_VERSION_MINOR)\n")?;

    out.write_str("\n/* Class bits (strata_call.class). */\n")?;
    for c in strata_syscall_table::Class::ALL {
        out.write_str("#define STRATA_CLASS_")?;
        upper(out, c.as_str())?;
        writeln!(out, " {:#06x}u", class::of(c))?;
    }
    out.write_str("\n/* Call flags (strata_call.flags). */\n")?;
    for (name, v, doc) in CALL_FLAGS {
        comment(out, "", doc)?;
        writeln!(out, "#define STRATA_CALL_{name} {v:#x}u")?;
    }
    out.write_str("\n")?;
    comment(out, "", "\"No such argument\" in a strata_path_slot.")?;
    writeln!(out, "#define STRATA_NO_ARG {NO_ARG:#x}")?;
    comment(out, "", "Path operands a call can have.")?;
    writeln!(out, "#define STRATA_MAX_PATHS {MAX_PATHS}")?;
    comment(
        out,
        "",
        "The largest Linux call number an interest set can name (exclusive).",
    )?;
    writeln!(out, "#define STRATA_MAX_NR {MAX_NR}")?;
    comment(out, "", "What a `before` hook returns to pass the call on.")?;
    writeln!(out, "#define STRATA_CONTINUE INT64_MIN")?;

    out.write_str("\n/* The ops (strata_call.op). Numbers are stable within a major version. */\nenum strata_op {\n")?;
    let mut group = None;
    for o in OPS {
        if group != Some(o.group) {
            if group.is_some() {
                out.write_str("\n")?;
            }
            group = Some(o.group);
            writeln!(out, "    /* {} */", o.group.title())?;
        }
        let mut doc = Wrapped::new(out, "    ");
        write!(doc, "{} ", o.doc)?;
        if o.linux.starts_with('(') {
            write!(doc, "Linux: {}", o.linux)?;
        } else {
            write!(doc, "Linux: {}.", o.linux)?;
        }
        doc.finish()?;
        writeln!(out, "    STRATA_OP_{} = {},", o.name, o.op as u16)?;
    }
    out.write_str("};\n\n")?;

    for s in STRUCTS {
        writeln!(out, "typedef struct {0} {0};", s.c)?;
    }
    for s in STRUCTS {
        out.write_str("\n")?;
        comment(out, "", s.doc)?;
        writeln!(out, "struct {} {{", s.c)?;
        for f in s.fields {
            comment(out, "    ", f.doc)?;
            match f.decl.split_once(';') {
                Some((decl, rest)) => writeln!(out, "    {decl};{rest}")?,
                None => writeln!(out, "    {};", f.decl)?,
            }
        }
        out.write_str("};\n")?;
    }

    out.write_str("\n")?;
    comment(out, "", INIT_DOC)?;
    writeln!(out, "{INIT_FN}")?;

    out.write_str(
        "
/* The layout is x86-64 Linux's (LP64), the one strata is built with. */
",
    )?;
    for s in STRUCTS {
        writeln!(
            out,
            "_Static_assert(sizeof({0}) == {1} && _Alignof({0}) == {2}, \"{0}: not the layout strata uses\");",
            s.c, s.size, s.align
        )?;
    }
    out.write_str(
        "
/* Adds Linux call number nr to an interest set (numbers from STRATA_MAX_NR
 * up are ignored). */
static inline void strata_interest_add(strata_interest *set, uint32_t nr)
{
    if (nr < STRATA_MAX_NR)
        set->bits[nr / 64] |= (uint64_t)1 << (nr % 64);
}

/* Whether Linux call number nr is in an interest set. */
static inline int strata_interest_has(const strata_interest *set, uint32_t nr)
{
    return nr < STRATA_MAX_NR && ((set->bits[nr / 64] >> (nr % 64)) & 1) != 0;
}

#endif /* STRATA_H */
",
    )
}

/// Writes `s` in upper case.
fn upper(out: &mut dyn Write, s: &str) -> fmt::Result {
    s.chars().try_for_each(|c| out.write_char(c.to_ascii_uppercase()))
}

/// Writes plain text into a Markdown table cell.
fn escaped(out: &mut dyn Write, s: &str) -> fmt::Result {
    for ch in s.chars() {
        match ch {
            '|' => out.write_str("\\|")?,
            '<' => out.write_str("&lt;")?,
            '>' => out.write_str("&gt;")?,
            '*' => out.write_str("\\*")?,
            _ => out.write_char(ch)?,
        }
    }
    Ok(())
}

/// Writes `text` as a C comment wrapped to [`WIDTH`].
fn comment(out: &mut dyn Write, indent: &str, text: &str) -> fmt::Result {
    let mut w = Wrapped::new(out, indent);
    w.write_str(text)?;
    w.finish()
}

/// A C comment being written word by word, wrapped to [`WIDTH`] columns.
struct Wrapped<'a> {
    out: &'a mut dyn Write,
    indent: &'a str,
    col: usize,
    /// Bytes of the word being collected (words longer than this are cut).
    word: [u8; 64],
    len: usize,
}

impl<'a> Wrapped<'a> {
    fn new(out: &'a mut dyn Write, indent: &'a str) -> Wrapped<'a> {
        Wrapped {
            out,
            indent,
            col: 0,
            word: [0; 64],
            len: 0,
        }
    }

    fn flush_word(&mut self) -> fmt::Result {
        if self.len == 0 {
            return Ok(());
        }
        let word = core::str::from_utf8(&self.word[..self.len]).map_err(|_| fmt::Error)?;
        if self.col == 0 {
            write!(self.out, "{}/* {word}", self.indent)?;
            self.col = self.indent.len() + 3 + word.len();
        } else if self.col + 1 + word.len() + 3 > WIDTH {
            write!(self.out, "\n{} * {word}", self.indent)?;
            self.col = self.indent.len() + 3 + word.len();
        } else {
            write!(self.out, " {word}")?;
            self.col += 1 + word.len();
        }
        self.len = 0;
        Ok(())
    }

    fn finish(mut self) -> fmt::Result {
        self.flush_word()?;
        if self.col == 0 {
            return Ok(());
        }
        self.out.write_str(" */\n")
    }
}

impl Write for Wrapped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for ch in s.chars() {
            if ch.is_whitespace() {
                self.flush_word()?;
                continue;
            }
            let mut b = [0; 4];
            let enc = ch.encode_utf8(&mut b).as_bytes();
            if self.len + enc.len() > self.word.len() {
                return Err(fmt::Error);
            }
            self.word[self.len..self.len + enc.len()].copy_from_slice(enc);
            self.len += enc.len();
        }
        Ok(())
    }
}
