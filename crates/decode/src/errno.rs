//! Error numbers: strace's names (`src/linux/generic/errnoent.h`) and
//! glibc's `strerror` texts, for x86-64 Linux.

/// `ERRNOS[e - 1]` for e in 1..=133: (strace's name, glibc's text).
/// 41 and 58 have no name on x86-64 (glibc says "Unknown error 41").
static ERRNOS: [(Option<&str>, &str); 133] = [
    (Some("EPERM"), "Operation not permitted"),
    (Some("ENOENT"), "No such file or directory"),
    (Some("ESRCH"), "No such process"),
    (Some("EINTR"), "Interrupted system call"),
    (Some("EIO"), "Input/output error"),
    (Some("ENXIO"), "No such device or address"),
    (Some("E2BIG"), "Argument list too long"),
    (Some("ENOEXEC"), "Exec format error"),
    (Some("EBADF"), "Bad file descriptor"),
    (Some("ECHILD"), "No child processes"),
    (Some("EAGAIN"), "Resource temporarily unavailable"),
    (Some("ENOMEM"), "Cannot allocate memory"),
    (Some("EACCES"), "Permission denied"),
    (Some("EFAULT"), "Bad address"),
    (Some("ENOTBLK"), "Block device required"),
    (Some("EBUSY"), "Device or resource busy"),
    (Some("EEXIST"), "File exists"),
    (Some("EXDEV"), "Invalid cross-device link"),
    (Some("ENODEV"), "No such device"),
    (Some("ENOTDIR"), "Not a directory"),
    (Some("EISDIR"), "Is a directory"),
    (Some("EINVAL"), "Invalid argument"),
    (Some("ENFILE"), "Too many open files in system"),
    (Some("EMFILE"), "Too many open files"),
    (Some("ENOTTY"), "Inappropriate ioctl for device"),
    (Some("ETXTBSY"), "Text file busy"),
    (Some("EFBIG"), "File too large"),
    (Some("ENOSPC"), "No space left on device"),
    (Some("ESPIPE"), "Illegal seek"),
    (Some("EROFS"), "Read-only file system"),
    (Some("EMLINK"), "Too many links"),
    (Some("EPIPE"), "Broken pipe"),
    (Some("EDOM"), "Numerical argument out of domain"),
    (Some("ERANGE"), "Numerical result out of range"),
    (Some("EDEADLK"), "Resource deadlock avoided"),
    (Some("ENAMETOOLONG"), "File name too long"),
    (Some("ENOLCK"), "No locks available"),
    (Some("ENOSYS"), "Function not implemented"),
    (Some("ENOTEMPTY"), "Directory not empty"),
    (Some("ELOOP"), "Too many levels of symbolic links"),
    (None, "Unknown error 41"),
    (Some("ENOMSG"), "No message of desired type"),
    (Some("EIDRM"), "Identifier removed"),
    (Some("ECHRNG"), "Channel number out of range"),
    (Some("EL2NSYNC"), "Level 2 not synchronized"),
    (Some("EL3HLT"), "Level 3 halted"),
    (Some("EL3RST"), "Level 3 reset"),
    (Some("ELNRNG"), "Link number out of range"),
    (Some("EUNATCH"), "Protocol driver not attached"),
    (Some("ENOCSI"), "No CSI structure available"),
    (Some("EL2HLT"), "Level 2 halted"),
    (Some("EBADE"), "Invalid exchange"),
    (Some("EBADR"), "Invalid request descriptor"),
    (Some("EXFULL"), "Exchange full"),
    (Some("ENOANO"), "No anode"),
    (Some("EBADRQC"), "Invalid request code"),
    (Some("EBADSLT"), "Invalid slot"),
    (None, "Unknown error 58"),
    (Some("EBFONT"), "Bad font file format"),
    (Some("ENOSTR"), "Device not a stream"),
    (Some("ENODATA"), "No data available"),
    (Some("ETIME"), "Timer expired"),
    (Some("ENOSR"), "Out of streams resources"),
    (Some("ENONET"), "Machine is not on the network"),
    (Some("ENOPKG"), "Package not installed"),
    (Some("EREMOTE"), "Object is remote"),
    (Some("ENOLINK"), "Link has been severed"),
    (Some("EADV"), "Advertise error"),
    (Some("ESRMNT"), "Srmount error"),
    (Some("ECOMM"), "Communication error on send"),
    (Some("EPROTO"), "Protocol error"),
    (Some("EMULTIHOP"), "Multihop attempted"),
    (Some("EDOTDOT"), "RFS specific error"),
    (Some("EBADMSG"), "Bad message"),
    (Some("EOVERFLOW"), "Value too large for defined data type"),
    (Some("ENOTUNIQ"), "Name not unique on network"),
    (Some("EBADFD"), "File descriptor in bad state"),
    (Some("EREMCHG"), "Remote address changed"),
    (Some("ELIBACC"), "Can not access a needed shared library"),
    (Some("ELIBBAD"), "Accessing a corrupted shared library"),
    (Some("ELIBSCN"), ".lib section in a.out corrupted"),
    (Some("ELIBMAX"), "Attempting to link in too many shared libraries"),
    (Some("ELIBEXEC"), "Cannot exec a shared library directly"),
    (Some("EILSEQ"), "Invalid or incomplete multibyte or wide character"),
    (Some("ERESTART"), "Interrupted system call should be restarted"),
    (Some("ESTRPIPE"), "Streams pipe error"),
    (Some("EUSERS"), "Too many users"),
    (Some("ENOTSOCK"), "Socket operation on non-socket"),
    (Some("EDESTADDRREQ"), "Destination address required"),
    (Some("EMSGSIZE"), "Message too long"),
    (Some("EPROTOTYPE"), "Protocol wrong type for socket"),
    (Some("ENOPROTOOPT"), "Protocol not available"),
    (Some("EPROTONOSUPPORT"), "Protocol not supported"),
    (Some("ESOCKTNOSUPPORT"), "Socket type not supported"),
    (Some("EOPNOTSUPP"), "Operation not supported"),
    (Some("EPFNOSUPPORT"), "Protocol family not supported"),
    (Some("EAFNOSUPPORT"), "Address family not supported by protocol"),
    (Some("EADDRINUSE"), "Address already in use"),
    (Some("EADDRNOTAVAIL"), "Cannot assign requested address"),
    (Some("ENETDOWN"), "Network is down"),
    (Some("ENETUNREACH"), "Network is unreachable"),
    (Some("ENETRESET"), "Network dropped connection on reset"),
    (Some("ECONNABORTED"), "Software caused connection abort"),
    (Some("ECONNRESET"), "Connection reset by peer"),
    (Some("ENOBUFS"), "No buffer space available"),
    (Some("EISCONN"), "Transport endpoint is already connected"),
    (Some("ENOTCONN"), "Transport endpoint is not connected"),
    (Some("ESHUTDOWN"), "Cannot send after transport endpoint shutdown"),
    (Some("ETOOMANYREFS"), "Too many references: cannot splice"),
    (Some("ETIMEDOUT"), "Connection timed out"),
    (Some("ECONNREFUSED"), "Connection refused"),
    (Some("EHOSTDOWN"), "Host is down"),
    (Some("EHOSTUNREACH"), "No route to host"),
    (Some("EALREADY"), "Operation already in progress"),
    (Some("EINPROGRESS"), "Operation now in progress"),
    (Some("ESTALE"), "Stale file handle"),
    (Some("EUCLEAN"), "Structure needs cleaning"),
    (Some("ENOTNAM"), "Not a XENIX named type file"),
    (Some("ENAVAIL"), "No XENIX semaphores available"),
    (Some("EISNAM"), "Is a named type file"),
    (Some("EREMOTEIO"), "Remote I/O error"),
    (Some("EDQUOT"), "Disk quota exceeded"),
    (Some("ENOMEDIUM"), "No medium found"),
    (Some("EMEDIUMTYPE"), "Wrong medium type"),
    (Some("ECANCELED"), "Operation canceled"),
    (Some("ENOKEY"), "Required key not available"),
    (Some("EKEYEXPIRED"), "Key has expired"),
    (Some("EKEYREVOKED"), "Key has been revoked"),
    (Some("EKEYREJECTED"), "Key was rejected by service"),
    (Some("EOWNERDEAD"), "Owner died"),
    (Some("ENOTRECOVERABLE"), "State not recoverable"),
    (Some("ERFKILL"), "Operation not possible due to RF-kill"),
    (Some("EHWPOISON"), "Memory page has hardware error"),
];

/// Kernel-internal codes (512..=530) strace knows by name. glibc has no
/// text for them ("Unknown error 512").
static INTERNAL: [(i32, &str); 17] = [
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
    (517, "EPROBE_DEFER"),
    (518, "EOPENSTALE"),
    (521, "EBADHANDLE"),
    (522, "ENOTSYNC"),
    (523, "EBADCOOKIE"),
    (524, "ENOTSUPP"),
    (525, "ETOOSMALL"),
    (526, "ESERVERFAULT"),
    (527, "EBADTYPE"),
    (528, "EJUKEBOX"),
    (529, "EIOCBQUEUED"),
    (530, "ERECALLCONFLICT"),
];

/// strace's name for error number `e` (`ENOENT` for 2), if it has one.
pub fn errno_name(e: i32) -> Option<&'static str> {
    if (1..=133).contains(&e) {
        return ERRNOS[(e - 1) as usize].0;
    }
    INTERNAL.iter().find(|&&(n, _)| n == e).map(|&(_, s)| s)
}

/// glibc's `strerror` text for error number `e` ("No such file or
/// directory" for 2). Numbers glibc has no text for give "Unknown error";
/// glibc appends the number (`Unknown error 512`), and so do the results
/// this crate formats.
pub fn strerror(e: i32) -> &'static str {
    match e {
        0 => "Success",
        1..=133 => match ERRNOS[(e - 1) as usize] {
            (_, s) if s.starts_with("Unknown error") => "Unknown error",
            (_, s) => s,
        },
        _ => "Unknown error",
    }
}

/// Writes glibc's `strerror(e)`, including the number for unknown errors.
pub(crate) fn write_strerror(out: &mut dyn core::fmt::Write, e: i32) -> core::fmt::Result {
    let s = strerror(e);
    if s == "Unknown error" {
        write!(out, "Unknown error {e}")
    } else {
        out.write_str(s)
    }
}
