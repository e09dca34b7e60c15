import subprocess, sys, os
# (xlat name, rust name, extra includes)
FCNTL = ['<fcntl.h>', '"kernel_fcntl.h"']
X = [
 ('open_access_modes', FCNTL), ('open_mode_flags', FCNTL), ('open_resolve_flags', ['<linux/openat2.h>']),
 ('access_modes', ['<unistd.h>']), ('at_flags', ['<fcntl.h>']), ('faccessat_flags', ['<fcntl.h>']),
 ('at_statx_sync_types', ['<fcntl.h>','<sys/stat.h>']), ('statx_masks', ['<linux/stat.h>']), ('statx_attrs', ['<linux/stat.h>']),
 ('whence_codes', ['<unistd.h>']), ('fcntlcmds', ['<linux/fcntl.h>', '"fl64.h"']), ('fdflags', FCNTL), ('rename_flags', ['<linux/fs.h>']),
 ('mmap_prot', ['<sys/mman.h>']), ('mmap_flags', ['<sys/mman.h>']), ('madvise_cmds', ['<sys/mman.h>']), ('mremap_flags', ['<sys/mman.h>']),
 ('mctl_sync', ['<sys/mman.h>']), ('mlockall_flags', ['<sys/mman.h>']), ('mlock_flags', ['<sys/mman.h>']),
 ('addrfams', ['<sys/socket.h>']), ('socktypes', ['<sys/socket.h>']), ('sock_type_flags', ['<sys/socket.h>']),
 ('inet_protocols', ['<netinet/in.h>']), ('msg_flags', ['<sys/socket.h>']), ('socketlayers', ['<sys/socket.h>','<netinet/in.h>']),
 ('sock_options', ['<sys/socket.h>']), ('shutdown_modes', ['<sys/socket.h>']),
 ('sock_ip_options', ['<netinet/in.h>']), ('sock_tcp_options', ['<netinet/in.h>', '<netinet/tcp.h>']),
 ('clone_flags', ['<sched.h>', '<linux/sched.h>']), ('clone3_flags', ['<sched.h>', '<linux/sched.h>']),
 ('wait4_options', ['<sys/wait.h>']), ('waitid_types', ['<sys/wait.h>']), ('resources', ['<sys/resource.h>']), ('usagewho', ['<sys/resource.h>']),
 ('prctl_options', ['<linux/prctl.h>']), ('pr_dumpable', ['<linux/prctl.h>']), ('archvals', ['<asm/prctl.h>']),
 ('getrandom_flags', ['<sys/random.h>']), ('futexops', ['<linux/futex.h>']), ('clocknames', ['<time.h>']), ('clockflags', ['<time.h>']),
 ('pollflags', ['<poll.h>']), ('sigprocmaskcmds', ['<signal.h>']), ('sigact_flags', ['<signal.h>']),
 ('sa_handler_values', ['<signal.h>']), ('schedulers', ['<sched.h>']), ('priorities', ['<sys/resource.h>']),
 ('advise', ['<fcntl.h>']), ('falloc_flags', ['<linux/falloc.h>']), ('efd_flags', ['<fcntl.h>', '<sys/eventfd.h>']),
 ('epollctls', ['<sys/epoll.h>']), ('epollevents', ['<sys/epoll.h>']), ('epollflags', ['<fcntl.h>', '<sys/epoll.h>']),
 ('sfd_flags', ['<fcntl.h>', '<sys/signalfd.h>']), ('inotify_flags', ['<sys/inotify.h>']), ('inotify_init_flags', ['<fcntl.h>', '<sys/inotify.h>']),
 ('memfd_create_flags', ['<sys/mman.h>']), ('flockcmds', ['<sys/file.h>']), ('close_range_flags', ['<linux/close_range.h>']),
 ('itimer_which', ['<sys/time.h>']), ('splice_flags', ['<fcntl.h>']), ('xattrflags', ['<sys/xattr.h>']),
 ('membarrier_cmds', ['<linux/membarrier.h>']), ('pidfd_open_flags', ['<linux/pidfd.h>']) , ('unshare_flags', ['<sched.h>', '<linux/sched.h>']),
 ('setns_types', ['<sched.h>', '<linux/sched.h>']), ('seccomp_ops', ['<linux/seccomp.h>']), ('seccomp_filter_flags', ['<linux/seccomp.h>']),
 ('personality_types', ['<sys/personality.h>']), ('personality_flags', ['<sys/personality.h>']), ('rwf_flags', ['<linux/fs.h>']),
 ('sigaltstack_flags', ['<signal.h>']), ('umount_flags', ['<sys/mount.h>']), ('mount_flags', ['<sys/mount.h>']), ('fsmagic', ['<linux/magic.h>']),
 ('ptrace_cmds', ['<sys/ptrace.h>']), ('syslog_action_type', ['<sys/klog.h>']), ('sync_file_range_flags', ['<fcntl.h>']),
 ('mpol_modes', ['<linux/mempolicy.h>']), ('kcmp_types', ['<linux/kcmp.h>']), ('ioprio_who', ['<linux/ioprio.h>']),
 ('siginfo_codes', ['<signal.h>']), ('dirent_types', ['<dirent.h>']), ('sock_shutdown_flags', ['<sys/socket.h>']),
 ('sigchld_codes', ['<signal.h>']), ('sigsegv_codes', ['<signal.h>']), ('pr_set_mm', ['<linux/prctl.h>']),
 ('fan_init_flags',['<sys/fanotify.h>']), ('name_to_handle_at_flags', ['<fcntl.h>']),
 ('term_iflags', ['<linux/termios.h>']), ('term_oflags', ['<linux/termios.h>']), ('term_oflags_nldly', ['<linux/termios.h>']),
 ('term_oflags_crdly', ['<linux/termios.h>']), ('term_oflags_tabdly', ['<linux/termios.h>']), ('term_oflags_bsdly', ['<linux/termios.h>']),
 ('term_oflags_vtdly', ['<linux/termios.h>']), ('term_oflags_ffdly', ['<linux/termios.h>']), ('term_cflags', ['<linux/termios.h>']),
 ('term_cflags_csize', ['<linux/termios.h>']), ('baud_options', ['<linux/termios.h>']), ('term_lflags', ['<linux/termios.h>']),
 ('tcflsh_options', ['<linux/termios.h>']), ('modem_flags', ['<linux/termios.h>']), ('ioctl_dirs', ['<linux/ioctl.h>']), ('tcxonc_options', ['<linux/termios.h>']),
 ('futexbitset', ['<linux/futex.h>']), ('futexwakeops', ['<linux/futex.h>']), ('futexwakecmps', ['<linux/futex.h>']),
 ('secbits', ['<linux/securebits.h>']), ('pr_tsc', ['<linux/prctl.h>']), ('pr_unalign_flags', ['<linux/prctl.h>']),
 ('seccomp_mode', ['<linux/seccomp.h>']), ('pr_cap_ambient', ['<linux/prctl.h>']), ('cap', ['<linux/capability.h>']),
 ('pr_mce_kill', ['<linux/prctl.h>']), ('pr_mce_kill_policy', ['<linux/prctl.h>']), ('pr_set_vma', ['<linux/prctl.h>']),
 ('pr_spec_cmds', ['<linux/prctl.h>']), ('pr_sud_cmds', ['<linux/prctl.h>']), ('pr_fp_mode', ['<linux/prctl.h>']),
 ('lockfcmds', ['<fcntl.h>']), ('notifyflags', ['<fcntl.h>']), ('f_seals', ['<fcntl.h>']), ('f_owner_types', ['<fcntl.h>']),
 ('uring_setup_flags', ['<linux/io_uring.h>']), ('uring_enter_flags', ['<linux/io_uring.h>']), ('uring_register_opcodes', ['<linux/io_uring.h>']),
 ('sched_flags', ['<sched.h>']), ('ipc_private', ['<sys/ipc.h>']), ('shm_flags', ['<sys/shm.h>']), ('shm_resource_flags', ['<sys/shm.h>']),
 ('shmctl_flags', ['<sys/shm.h>']), ('semctl_flags', ['<sys/sem.h>']), ('msgctl_flags', ['<sys/msg.h>']), ('ipc_msg_flags', ['<sys/msg.h>']),
 ('getsock_ip_options', ['<netinet/in.h>']), ('setsock_ip_options', ['<netinet/in.h>']), ('sock_ipv6_options', ['<netinet/in.h>']),
 ('sock_udp_options', ['<netinet/in.h>', '<netinet/udp.h>']), ('netlink_protocols', ['<linux/netlink.h>']),
 ('keyctl_commands', ['<linux/keyctl.h>']), ('key_spec', ['<linux/keyctl.h>']), ('mq_attr_flags', ['<mqueue.h>']),
 ('delete_module_flags', ['<fcntl.h>']), ('module_init_flags', ['<linux/module.h>']), ('timerfdflags', ['<fcntl.h>', '<sys/timerfd.h>']),
 ('fsopen_flags', ['<linux/mount.h>']), ('fsmount_flags', ['<linux/mount.h>']), ('fsmount_attr_flags', ['<linux/mount.h>']),
 ('open_tree_flags', ['<linux/mount.h>', '<fcntl.h>']), ('move_mount_flags', ['<linux/mount.h>']), ('fspick_flags', ['<linux/mount.h>']),
 ('fsconfig_cmds', ['<linux/mount.h>']), ('mount_setattr_flags', ['<linux/mount.h>', '<fcntl.h>']), ('swap_flags', ['<sys/swap.h>']),
 ('statfs_flags', ['<sys/statvfs.h>', '<linux/fs.h>']), ('membarrier_flags', ['<linux/membarrier.h>']), ('sigev_value', ['<signal.h>']), ('sock_netlink_options', ['<linux/netlink.h>']), ('sock_packet_options', ['<linux/if_packet.h>']), ('sock_raw_options', ['<linux/icmp.h>']), ('getsock_ipv6_options', ['<netinet/in.h>']), ('setsock_ipv6_options', ['<netinet/in.h>']), ('ip_cmsg_types', ['<netinet/in.h>']), ('sigtrap_codes', ['<signal.h>']), ('sigpoll_codes', ['<signal.h>']), ('sigprof_codes', ['<signal.h>']), ('sigill_codes', ['<signal.h>']), ('sigfpe_codes', ['<signal.h>']), ('sigbus_codes', ['<signal.h>']), ('sigsys_codes', ['<signal.h>']), ('ptrace_events', ['<linux/ptrace.h>']), ('x86_xfeatures', ['"xlat.h"', '"x86_xfeature_bits.h"']), ('x86_xfeature_bits', ['<stdint.h>']), ('pr_pac_enabled_keys', ['<linux/prctl.h>']), ('pr_spec_set_store_bypass_flags', ['<linux/prctl.h>']), ('pr_spec_get_store_bypass_flags', ['<linux/prctl.h>']), ('cap_version', ['<linux/capability.h>']), ('cap_mask0', ['<linux/capability.h>']), ('cap_mask1', ['"caps1_enum.h"']),
 ('resource_flags', ['<sys/ipc.h>']), ('syslog_console_levels', ['<sys/klog.h>']), ('ioprio_class', ['<linux/ioprio.h>']),
 ('bootflags1', ['<linux/reboot.h>']), ('bootflags2', ['<linux/reboot.h>']), ('bootflags3', ['<linux/reboot.h>']),
 ('fan_classes', ['<sys/fanotify.h>']), ('memfd_secret_flags', ['<fcntl.h>']), ('uffd_flags', ['<fcntl.h>', '<linux/userfaultfd.h>']),
 ('seccomp_ret_action', ['<linux/seccomp.h>']), ('modetypes', ['<sys/stat.h>']), ('scmvals', ['<sys/socket.h>']), ('mount_attr_attr', ['<linux/mount.h>']),
 ('getsock_options', ['<sys/socket.h>']), ('setsock_options', ['<sys/socket.h>']),
]
inc = '-iquote /tmp/xlatgen -iquote /tmp/strace61/src -I /tmp/xlatdump/stub -iquote /tmp/xlatdump/stub'
out = open('/tmp/xlatdump/out.rs', 'w')
fails = []
for name, incs in X:
    c = '#define _GNU_SOURCE\n#include <stdio.h>\n#include <stdint.h>\n#include <stddef.h>\n'
    c += '#define DIAG_PUSH_IGNORE_TAUTOLOGICAL_CONSTANT_COMPARE\n#define DIAG_POP_IGNORE_TAUTOLOGICAL_CONSTANT_COMPARE\n'
    c += '#define STRINGIFY(...) #__VA_ARGS__\n#define ARRAY_SIZE(a) (sizeof(a)/sizeof((a)[0]))\n#define static_assert _Static_assert\n#define HAVE_STRUCT_STATX 1\n'
    for i in incs: c += '#include %s\n' % i
    c += '#include "xlat.h"\n#include "%s.h"\n' % name
    c += 'int main(void){ printf("%%d ", (int)%s->type); for (size_t i=0;i<ARRAY_SIZE(%s_xdata);i++) if (%s_xdata[i].str) printf("(0x%%llx,%%s) ", (unsigned long long)%s_xdata[i].val, %s_xdata[i].str); printf("\\n"); return 0; }\n' % (name, name, name, name, name)
    open('/tmp/xlatdump/d.c', 'w').write(c)
    r = subprocess.run('gcc -w %s -o /tmp/xlatdump/d /tmp/xlatdump/d.c' % inc, shell=True, capture_output=True, text=True)
    if r.returncode != 0:
        fails.append((name, r.stderr.splitlines()[:3])); continue
    o = subprocess.run('/tmp/xlatdump/d', capture_output=True, text=True).stdout.split()
    typ = o[0]
    ents = []
    for e in o[1:]:
        v, s = e[1:-1].split(',')
        ents.append((int(v, 16), s))
    out.write('// %s (strace src/xlat/%s.in)%s\n' % (name, name, ' sorted' if typ=='1' else (' indexed' if typ=='2' else '')))
    out.write('pub(crate) static %s: Xlat = &[\n' % name.upper())
    for v, s in ents:
        out.write('    (%s, "%s"),\n' % (hex(v), s))
    out.write('];\n\n')
out.close()
for f in fails: print(f)

# report entries present in the .in file but absent in the output
import re as _re
for name, incs in X:
    if any(f[0] == name for f in fails): continue
    src = open('/tmp/strace61/src/xlat/%s.in' % name).read().splitlines()
    names = []
    for l in src:
        l = l.strip()
        if not l or l.startswith('#') or l.startswith('/*'): continue
        m = _re.match(r'([A-Za-z_][A-Za-z0-9_]*)', l)
        if m: names.append(m.group(1))
    body = open('/tmp/xlatdump/out.rs').read()
    parts = body.split('pub(crate) static %s: Xlat' % name.upper())
    sect = parts[1].split("];")[0] if len(parts) > 1 else ""
    missing = [n for n in names if '"%s"' % n not in sect]
    if missing: print(name, 'MISSING', missing)
