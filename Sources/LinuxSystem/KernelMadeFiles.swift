// Files the kernel makes up as they are read (and hands what is written to them to the kernel): the one rule, for
// every path the package reads or writes for a user (documents, sounds, rendered output, records). Their size says
// nothing of what they hold: `/proc/self/status` is 0 bytes long and holds a page of text, `/proc/self/pagemap`
// reads on for the whole address space, `/proc/kmsg` waits for the kernel's next message, a sysfs attribute says
// 4,096 whatever it holds; and a write to one is an order to the kernel (`/proc/sys/vm/drop_caches`).
//
// Told by the file system the file is on, as the kernel names it to `statfs`: its magic number. Every mount of one
// of these file systems gives the same number, so a `/proc` mounted again elsewhere (a container's, or one with
// other options, a superblock of its own since Linux 5.8) is a `/proc` too; one system call, with nothing to parse,
// that needs no `/proc` mounted. A reader asks of the descriptor it opened (`fstatfs`), which is the file it reads,
// not a path that may since lead elsewhere; a writer about to create its file asks of the path.

package enum KernelMadeFiles {
    /// The file systems, by their magic numbers (`statfs`'s `f_type`, linux/magic.h and the kernel's sources for
    /// the three it does not list), whose files the kernel makes up as they are read, with the names the mount
    /// table gives them: process and kernel state (proc, sysfs), kernel debugging and tracing (debugfs, tracefs),
    /// objects made by writing (configfs), security modules' settings (securityfs, selinuxfs, smackfs), control
    /// groups (cgroup, cgroup2), firmware variables (efivarfs), executable formats (binfmt_misc), the FUSE
    /// connections (fusectl), POSIX message queues (mqueue), the CPU's resource control groups (resctrl), pinned
    /// BPF objects (bpf: a map pinned there reads as a dump of its entries), the kernel's crash records (pstore),
    /// a USB gadget's endpoints (functionfs: a read waits for the host) and namespaces (nsfs).
    static let fileSystems: [UInt32: String] = [
        0x9fa0: "proc",
        0x6265_6572: "sysfs",
        0x6462_6720: "debugfs",
        0x7472_6163: "tracefs",
        0x6265_6570: "configfs",
        0x7363_6673: "securityfs",
        0xf97c_ff8c: "selinuxfs",
        0x0027_e0eb: "cgroup",
        0x6367_7270: "cgroup2",
        0xde5e_81e4: "efivarfs",
        0x4249_4e4d: "binfmt_misc",
        0x6573_5543: "fusectl",
        0x1980_0202: "mqueue",
        0x4341_5d53: "smackfs",
        0x0765_5821: "resctrl",
        0xcafe_4a11: "bpf",
        0x6165_676c: "pstore",
        0x0a64_7361: "functionfs",
        0x6e73_6673: "nsfs",
    ]

    /// Why a file of the file system `name` (one of `fileSystems`) is neither read nor written, in words.
    static func refusal(_ name: String) -> String {
        let shown =
            switch name {
            case "proc": "/proc"
            case "sysfs": "/sys"
            default: name
            }
        return "it is made up by the kernel as it is read (a \(shown) file), not a regular file"
    }

    /// The file system of `fileSystems` whose magic number is `magic`; nil for any other.
    static func fileSystem(ofMagic magic: UInt32) -> String? { fileSystems[magic] }

    /// Why the file open at `fd` is not read, when the kernel makes it up (in words, as `refusal` gives them); nil
    /// for any other file.
    package static func refusal(ofDescriptor fd: Int32) throws(SystemCallError) -> String? {
        fileSystem(ofMagic: try Sys.fstatfs(fd)).map(refusal)
    }

    /// Why the file at `path` (its links followed) is not read or written, when the kernel makes it up; nil for any
    /// other file, or when there is none (a file about to be created). A link that leads out of the kernel's
    /// files is judged by where it leads: `/dev/fd/1` (or `/proc/self/fd/1`, bash's `>(...)`) leading to a pipe is
    /// a pipe's, and passes.
    package static func refusal(ofPath path: String) -> String? {
        guard let magic = try? Sys.statfs(path) else { return nil }
        return fileSystem(ofMagic: magic).map(refusal)
    }
}
