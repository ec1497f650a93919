// Files the kernel makes up as they are read (and hands what is written to them to the kernel): the one rule, for
// every path the package reads or writes for a user (documents, sounds, rendered output, records). Their size says
// nothing of what they hold: `/proc/self/status` is 0 bytes long and holds a page of text, `/proc/self/pagemap`
// reads on for the whole address space, `/proc/kmsg` waits for the kernel's next message, a sysfs attribute says
// 4,096 whatever it holds; and a write to one is an order to the kernel (`/proc/sys/vm/drop_caches`).
//
// Told by the file system the file is on, as the kernel's mount table names it, found by the file's device number:
// every mount of these file systems is on an anonymous device of its own, so a `/proc` mounted again elsewhere (a
// container's, or one with other options, which since Linux 5.8 is a superblock of its own) is found as a `/proc`,
// where a comparison with the device of `/proc` missed it. The mount table is read through Foundation, as this
// module reads its documents, so that the rule needs no system call of its own: a caller that has a descriptor
// open (`LinuxAudio`'s sounds) asks by the device its `fstat` gives, which is the file opened, not a path that
// may since lead elsewhere.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

package enum KernelMadeFiles {
    /// The file systems, by the names the mount table gives them, whose files the kernel makes up as they are read:
    /// process and kernel state (proc, sysfs), kernel debugging and tracing (debugfs, tracefs), objects made by
    /// writing (configfs), security modules' settings (securityfs, selinuxfs), control groups (cgroup, cgroup2),
    /// firmware variables (efivarfs), executable formats (binfmt_misc), the FUSE connections (fusectl) and POSIX
    /// message queues (mqueue).
    static let fileSystems: Set<String> = [
        "proc", "sysfs", "debugfs", "tracefs", "configfs", "securityfs", "selinuxfs", "cgroup", "cgroup2",
        "efivarfs", "binfmt_misc", "fusectl", "mqueue",
    ]

    /// Why a file of the file system `type` (one of `fileSystems`) is neither read nor written, in words.
    package static func refusal(_ type: String) -> String {
        let name =
            switch type {
            case "proc": "/proc"
            case "sysfs": "/sys"
            default: type
            }
        return "it is made up by the kernel as it is read (a \(name) file), not a regular file"
    }

    /// Why the file at `path` (its links followed) is not read or written, when the kernel makes it up (in words,
    /// as `refusal` gives them); nil for any other file, or when there is none (a file about to be created).
    package static func refusal(ofPath path: String) -> String? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved) else { return nil }
        return refusal(ofFileWith: attributes)
    }

    /// `refusal(ofPath:)` for a file whose attributes the file manager gave. A symbolic link whose target the file
    /// manager could not follow is none of these files: `/proc/self/fd/1` (or `/dev/fd/1`, `>(...)`) leading to a
    /// pipe or a socket is a link of /proc to a file of no path, which the open that follows reaches as it is.
    package static func refusal(ofFileWith attributes: [FileAttributeKey: Any]) -> String? {
        if attributes[.type] as? FileAttributeType == .typeSymbolicLink { return nil }
        guard let device = DocumentFile.byteCount(attributes[.systemNumber]) else { return nil }
        return refusal(ofDevice: UInt64(truncatingIfNeeded: device))
    }

    /// `refusal(ofPath:)` for the file on `device` (its `st_dev`, as `fstat` gives it for a descriptor open).
    package static func refusal(ofDevice device: UInt64) -> String? {
        fileSystem(ofDevice: device).map(refusal)
    }

    /// The file system of `fileSystems` that the file on `device` (its `st_dev`) is on; nil for any other, or when
    /// the mount table cannot be read (where `/proc` is not mounted).
    static func fileSystem(ofDevice device: UInt64) -> String? {
        // A file system on a block device is a disk's: the mount table need not be read.
        guard device.major == 0,
            let table = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
        else { return nil }
        return fileSystem(ofDevice: device, mountTable: table)
    }

    /// The file system of `fileSystems` mounted on `device` in `mountTable` (the text of `/proc/self/mountinfo`:
    /// a line per mount, its third field `major:minor`, and after a lone `-` the file system's type).
    static func fileSystem(ofDevice device: UInt64, mountTable: String) -> String? {
        let number = "\(device.major):\(device.minor)"
        for line in mountTable.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 2, fields[2] == number,
                let separator = fields.dropFirst(6).firstIndex(of: "-"), separator + 1 < fields.count
            else { continue }
            let type = String(fields[separator + 1])
            return fileSystems.contains(type) ? type : nil
        }
        return nil
    }
}

extension UInt64 {
    /// The major number of a device number as the C library packs it (`gnu_dev_major`).
    fileprivate var major: UInt64 { ((self >> 8) & 0xfff) | ((self >> 32) & 0xffff_f000) }
    /// The minor number of a device number as the C library packs it (`gnu_dev_minor`).
    fileprivate var minor: UInt64 { (self & 0xff) | ((self >> 12) & 0xffff_ff00) }
}
