//! `docs/syscalls.md`, rendered from the table (no_std, no allocation).

use core::fmt::{self, Write};

use crate::{count, count_may_block, Class, Disposition, Entry, COUNT, MAX_NR, TABLE};

const HEADER: &str = "\
# x86-64 system calls under strata

<!-- Generated from crates/syscall-table/src/table.rs; do not edit by hand.
     Regenerate with:
       cargo run -q -p strata-syscall-table --bin gen-syscall-docs > docs/syscalls.md
     (a test in strata-syscall-table fails when this file and the table differ). -->

strata runs an unmodified program with every `syscall` instruction it executes
trapped in-process (Syscall User Dispatch) and handled by strata's no_std
runtime. This page lists every system call number x86-64 Linux has assigned,
including the ones the kernel no longer implements, and what strata does with
each. It is generated from the crate `strata-syscall-table`, the one table the
runtime itself consults.

## Dispositions

- **Passthrough**: re-issued unchanged by strata; the kernel's result goes
  back to the program as is.
- **Emulated**: strata carries the call out itself, because the kernel's
  version would break capture or strata's own state; the kernel sees a
  different call, or none.
- **Partial**: re-issued, but strata first checks or rewrites part of it (an
  argument, an option, a result); the note says exactly which part, and
  everything else passes through.
- **Unsupported**: refused by strata without asking the kernel. No call is
  refused at present. The numbers Linux itself does not implement on x86-64
  are passed through, so the program gets the kernel's own ENOSYS.

## Blocking

The *blocks* column (`may_block`) is yes when the call can sleep for an
unbounded time waiting for something outside the process: a peer or device,
another process or thread (pipes, FIFOs, locks, futexes, children, IPC
queues), a timer or timeout the caller chose, a signal, or a file-system
server on the data path (open, read and write, the fsync family). While
strata performs such a call on the program's behalf, signals must be able to
interrupt it, as they would natively. The column is conservative: yes when in
doubt.

Not counted: path lookups and metadata calls (`stat`, `mkdir`, `rename`, ...),
which can stall on a hung network or FUSE file system but wait on storage
rather than on an event, and the waits any call can meet under a seccomp
user-notification supervisor, a fanotify permission listener or a
userfaultfd-registered buffer.

## Classes

The *class* column follows strace's trace classes: **file** (takes a path,
including the `*at` calls), **desc** (works on a descriptor), **network**
(sockets), **process** (life cycle, identity, credentials, scheduling,
limits), **memory** (mappings, protections, NUMA), **signal**, **ipc** (System
V IPC, POSIX message queues, futexes), **time** (clocks, timers, sleeping) and
**other**.
";

/// Writes `docs/syscalls.md`: the explanation of dispositions, blocking and
/// classes, the summary counts, then one table row per system call.
pub fn render_markdown<W: Write + ?Sized>(out: &mut W) -> fmt::Result {
    out.write_str(HEADER)?;

    out.write_str("\n## Summary\n\n")?;
    writeln!(
        out,
        "{COUNT} system calls, numbered 0 to {MAX_NR} (numbers with no call are left out)."
    )?;
    out.write_str("\n| disposition | calls |\n|---|---:|\n")?;
    for d in Disposition::ALL {
        writeln!(out, "| {d} | {} |", count(d))?;
    }
    writeln!(out, "| **total** | **{COUNT}** |")?;
    writeln!(out, "\n{} of them may block; by class:\n", count_may_block())?;
    out.write_str("| class | calls | may block |\n|---|---:|---:|\n")?;
    for c in Class::ALL {
        let in_class = || TABLE.iter().filter(move |e| e.class == c);
        writeln!(
            out,
            "| {c} | {} | {} |",
            in_class().count(),
            in_class().filter(|e| e.may_block).count()
        )?;
    }

    out.write_str("\n## Table\n\n")?;
    out.write_str("| nr | name | class | disposition | blocks | note |\n")?;
    out.write_str("|---:|---|---|---|---|---|\n")?;
    for e in TABLE {
        row(out, e)?;
    }
    Ok(())
}

fn row<W: Write + ?Sized>(out: &mut W, e: &Entry) -> fmt::Result {
    let blocks = if e.may_block { "yes" } else { "no" };
    write!(
        out,
        "| {} | `{}` | {} | {} | {} | ",
        e.nr, e.name, e.class, e.disposition, blocks
    )?;
    // Notes are plain text; keep them from breaking the table or turning
    // into markup.
    for ch in e.note.chars() {
        match ch {
            '|' => out.write_str("\\|")?,
            '<' => out.write_str("&lt;")?,
            '>' => out.write_str("&gt;")?,
            '*' => out.write_str("\\*")?,
            _ => out.write_char(ch)?,
        }
    }
    out.write_str(" |\n")
}
