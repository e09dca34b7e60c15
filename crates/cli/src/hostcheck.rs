//! strata's services for built-in extensions that the launcher builds to
//! check their arguments (see [`crate::layers`]): the same constructors the
//! runtime runs, with the launcher's process standing in for the program.

use std::sync::Once;

use strata_abi as abi;

extern "C" fn read_mem(_: u64, _: *mut u8, _: usize) -> i64 {
    -14
}

extern "C" fn write_mem(_: u64, _: *const u8, _: usize) -> i64 {
    -14
}

extern "C" fn emit(_: u32, buf: *const u8, len: usize) {
    if buf.is_null() {
        return;
    }
    // SAFETY: the extension passes its own buffer of `len` bytes.
    let b = unsafe { std::slice::from_raw_parts(buf, len) };
    eprint!("{}", String::from_utf8_lossy(b));
}

extern "C" fn raw_syscall(nr: u64, args: *const u64) -> i64 {
    if args.is_null() {
        return -14;
    }
    // SAFETY: the extension passes six argument words.
    let a = unsafe { std::slice::from_raw_parts(args, 6) };
    // SAFETY: a system call the extension makes while it checks its
    // arguments (e.g. map's stat of a host path); the kernel validates it.
    let r = unsafe { libc::syscall(nr as libc::c_long, a[0], a[1], a[2], a[3], a[4], a[5]) };
    if r == -1 {
        -(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL) as i64)
    } else {
        r
    }
}

extern "C" fn multi_task() -> u32 {
    0
}

extern "C" fn fail(msg: *const u8, len: usize) -> ! {
    let m = if msg.is_null() {
        "failed".to_string()
    } else {
        // SAFETY: the extension passes its own message of `len` bytes.
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(msg, len) }).into_owned()
    };
    eprintln!("strata: an extension failed while checking its arguments: {m}");
    std::process::exit(2)
}

static HOST: abi::Host = abi::Host {
    abi_version: abi::VERSION,
    size: std::mem::size_of::<abi::Host>() as u32,
    read_mem,
    write_mem,
    emit,
    raw_syscall,
    multi_task,
    fail,
};

/// Connects the extension SDK in this process to the launcher's services.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| strata_ext::set_host(&HOST));
}
