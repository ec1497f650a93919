// `KernelMadeFiles`: the files the kernel makes up as they are read, told by their file system's magic number, of
// a descriptor open (`fstatfs`) or of a path (`statfs`, its links followed).
import Foundation
import Glibc
import Testing

@_spi(Internals) @testable import LinuxSystem

struct KernelMadeFilesTests {
    private static let procRefusal = "it is made up by the kernel as it is read (a /proc file), not a regular file"
    private static let sysRefusal = "it is made up by the kernel as it is read (a /sys file), not a regular file"

    /// The refusal for the file open at `path`, asked of its descriptor.
    private static func refusalOfDescriptor(_ path: String, flags: Int32 = O_RDONLY) throws -> String? {
        let fd = try Sys.open(path, flags: flags)
        defer { Sys.close(fd) }
        return try KernelMadeFiles.refusal(ofDescriptor: fd)
    }

    @Test func aProcFileOpenIsRefusedAsOneByItsDescriptorAndItsPath() throws {
        try #require(Sys.exists("/proc/self/status"), "/proc is not mounted")
        #expect(try Self.refusalOfDescriptor("/proc/self/status") == Self.procRefusal)
        #expect(KernelMadeFiles.refusal(ofPath: "/proc/self/status") == Self.procRefusal)
    }

    @Test func aSysfsAttributeIsRefusedAsASysFile() throws {
        let online = "/sys/devices/system/cpu/online"
        try #require(Sys.exists(online), "sysfs is not mounted at /sys")
        #expect(try Self.refusalOfDescriptor(online) == Self.sysRefusal)
        #expect(KernelMadeFiles.refusal(ofPath: online) == Self.sysRefusal)
    }

    @Test func aRegularTemporaryFileIsNoneOfTheKernels() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kmf-\(UUID().uuidString)").path
        try Sys.writeNewFile(path, Array("{}".utf8))
        defer { unlink(path) }
        #expect(try Self.refusalOfDescriptor(path) == nil)
        #expect(KernelMadeFiles.refusal(ofPath: path) == nil)
    }

    /// A pipe is pipefs', none of the kernel's made-up files; and so is one named through `/proc/self/fd` (what
    /// `--output /dev/fd/1` names when the output goes to a pipe), which is a /proc link to a file of no path.
    @Test func aPipeIsAcceptedAsADescriptorAndThroughProcSelfFd() throws {
        let pipe = try Sys.pipe()
        defer {
            Sys.close(pipe.read)
            Sys.close(pipe.write)
        }
        #expect(try KernelMadeFiles.refusal(ofDescriptor: pipe.read) == nil)
        #expect(try Sys.fstatfs(pipe.write) == 0x5049_5045, "PIPEFS_MAGIC")
        try #require(Sys.exists("/proc/self/fd/\(pipe.write)"), "/proc is not mounted")
        #expect(KernelMadeFiles.refusal(ofPath: "/proc/self/fd/\(pipe.write)") == nil)
    }

    /// A namespace's file (`/proc/self/ns/net`, a link to a file of nsfs that reads as nothing but an error) is a
    /// kernel's file: until 7 December it was taken for a regular file, and a read of it failed with `EINVAL`.
    @Test func aNamespacesFileIsTheKernels() throws {
        try #require(Sys.exists("/proc/self/ns/net"), "/proc is not mounted")
        #expect(KernelMadeFiles.refusal(ofPath: "/proc/self/ns/net") == KernelMadeFiles.refusal("nsfs"))
    }

    @Test func aPathWithNoFileYetIsForItsWriterToCreate() {
        #expect(KernelMadeFiles.refusal(ofPath: "/nonexistent/folder/out.wav") == nil)
    }

    /// Every file system of the set, by its magic number, and the names the refusal gives two of them.
    @Test func theMagicNumbersNameTheFileSystemsWhoseFilesTheKernelMakesUp() {
        #expect(KernelMadeFiles.fileSystems.count == 19)
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x9fa0) == "proc")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0xf97c_ff8c) == "selinuxfs")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x1980_0202) == "mqueue")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x4341_5d53) == "smackfs")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x0765_5821) == "resctrl")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0xcafe_4a11) == "bpf")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x6165_676c) == "pstore")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x0a64_7361) == "functionfs")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0xef53) == nil, "ext4")
        #expect(KernelMadeFiles.fileSystem(ofMagic: 0x0102_1994) == nil, "tmpfs")
        #expect(
            KernelMadeFiles.refusal("cgroup2")
                == "it is made up by the kernel as it is read (a cgroup2 file), not a regular file")
    }

    /// `Sys.statfs` is made again after `EINTR`, and fails with the call named otherwise (the hook every `Sys` call
    /// passes, matched to a path of this test alone).
    @Test func statfsIsRetriedAfterAnInterruptAndFailsWithItsCallNamed() throws {
        let path = "/tmp/statfs-fault-\(UUID().uuidString)"
        let interrupted = SyscallFaults.Plan(site: "statfs", errno: .interrupted, calls: .nth(1), matching: path)
        let retried = try SyscallFaults.withPlan(interrupted) {
            Result { () throws(SystemCallError) in try Sys.statfs(path) }
        }
        #expect(throws: SystemCallError(.noSuchFileOrDirectory, call: "statfs(\(path))")) { try retried.result.get() }
        #expect(retried.tally.injected == 1)
        let denied = SyscallFaults.Plan(site: "statfs", errno: .permissionDenied, calls: .nth(1), matching: path)
        let failed = try SyscallFaults.withPlan(denied) {
            Result { () throws(SystemCallError) in try Sys.statfs(path) }
        }
        #expect(throws: SystemCallError(.permissionDenied, call: "statfs(\(path))")) { try failed.result.get() }
    }
}
