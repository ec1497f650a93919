import Foundation
import Testing
@testable import AHAPFiles
@_spi(Internals) import LinuxSystem

#if canImport(Glibc)
import Glibc
#endif

/// Paths that are not AHAP files, and files that are not what a document is: each is said to be what it is, in one
/// `unreadable-file` (or `limit-exceeded`) error, unread.
@Suite struct DocumentReadingTests {
    private static func document(event: String) -> String {
        #"{"Version":1.0,"Pattern":[{"Event":{\#(event)}}]}"#
    }

    private static let transient = #""Time":0,"EventType":"HapticTransient""#

    private static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-paths-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A URL that names no local file is refused, not read from the local disk as if its path were one: until
    /// 7 December `https://example.com/tmp/.../p.ahap` read the local `/tmp/.../p.ahap`.
    @Test func aURLOfAnotherSchemeIsNotReadFromTheLocalDisk() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Sys.writeNewFile(folder.path + "/p.ahap", Array(Self.document(event: Self.transient).utf8))
        #expect(AHAPValidator.validate(contentsOf: folder.appendingPathComponent("p.ahap")).pattern != nil)
        let remote = try #require(URL(string: "https://example.com" + folder.path + "/p.ahap"))
        let report = AHAPValidator.validate(contentsOf: remote)
        #expect(report.pattern == nil)
        #expect(
            report.errors.map(\.message) == [
                "cannot read the file: it names no local file (a URL of the scheme https): pass its bytes"
            ])
    }

    /// A URL naming a file of another host (`//host/path`, `file://host/path`) is refused, not read from the local
    /// disk: on 7 December, for a few hours, a URL with no scheme was read as its path, the host's name dropped.
    @Test(arguments: ["//example.com", "file://example.com"])
    func aFileOfAnotherHostIsNotReadFromTheLocalDisk(_ prefix: String) throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Sys.writeNewFile(folder.path + "/p.ahap", Array(Self.document(event: Self.transient).utf8))
        let remote = try #require(URL(string: prefix + folder.path + "/p.ahap"))
        let report = AHAPValidator.validate(contentsOf: remote)
        #expect(report.pattern == nil)
        #expect(
            report.errors.map(\.message) == [
                "cannot read the file: it names no local file (a file of the host example.com): pass its bytes"
            ])
        let local = try #require(URL(string: "file://localhost" + folder.path + "/p.ahap"))
        #expect(AHAPValidator.validate(contentsOf: local).pattern != nil, "file://localhost/ names a local file")
    }

    private static func unreadableMessage(_ path: String) -> String? {
        let report = AHAPValidator.validate(contentsOf: URL(fileURLWithPath: path))
        #expect(report.errors.count == 1)
        return report.errors.first.map { "\($0.code.rawValue): \($0.message)" }
    }

    /// A path that ends in `/` names a folder: a file named so is not read, as the system does not open it. Until
    /// 7 December the final `/` was dropped and the file read.
    @Test func aFileNamedWithAFinalSlashIsNotRead() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.path + "/p.ahap"
        try Sys.writeNewFile(path, Array(Self.document(event: Self.transient).utf8))
        #expect(throws: Never.self) { try HapticPattern(contentsOf: DocumentFile.url(ofPath: path)) }
        let found = Self.unreadableMessage(path + "/")
        #expect(found == "unreadable-file: cannot read the file: opening it failed (Not a directory)", "\(found ?? "")")
    }

    @Test func pathsSayWhatTheyAre() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("pipe.ahap").path
        #expect(mkfifo(pipe, 0o600) == 0)
        let dangling = folder.appendingPathComponent("dangling.ahap").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "/nonexistent/target")
        let loop = folder.appendingPathComponent("loop.ahap").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let linkToFolder = folder.appendingPathComponent("folder-link.ahap").path
        try FileManager.default.createSymbolicLink(atPath: linkToFolder, withDestinationPath: folder.path)
        let expected: [(String, String)] = [
            (folder.path, "unreadable-file: cannot read the file: it is a directory"),
            (linkToFolder, "unreadable-file: cannot read the file: it is a directory"),
            (pipe, "unreadable-file: cannot read the file: it is a pipe (a FIFO), not a regular file"),
            ("/dev/zero", "unreadable-file: cannot read the file: it is a device, not a regular file"),
            (dangling, "unreadable-file: cannot read the file: it is a symbolic link that leads to no file"),
            (loop, "unreadable-file: cannot read the file: it is a symbolic link that leads to no file"),
            (folder.appendingPathComponent("absent.ahap").path, "unreadable-file: cannot read the file: no such file"),
        ]
        for (path, message) in expected {
            let found = Self.unreadableMessage(path)
            #expect(found?.hasPrefix(message) == true, "\(path): \(found ?? "")")
        }
    }

    /// A file of the kernel's `/proc`, whose size is 0 whatever it holds, is said to be one, unread: it was taken for
    /// an empty file and reported as "the document is empty".
    @Test func aProcFileIsSaidToBeMadeUpByTheKernelNotEmpty() throws {
        try #require(FileManager.default.fileExists(atPath: "/proc/self/status"), "/proc is not mounted")
        let refusal = "it is made up by the kernel as it is read (a /proc file), not a regular file"
        #expect(Self.unreadableMessage("/proc/self/status") == "unreadable-file: cannot read the file: \(refusal)")
        #expect(
            DocumentFile.read("/proc/self/status", maximumBytes: 1 << 20)
                == .failure(.unreadable(refusal)))
    }

    /// A file of sysfs is made up by the kernel as it is read as a /proc file is, whatever size it gives (4,096 for
    /// an attribute, 0 for many others): it was read, and reported as broken JSON ("unexpected '-'" for the CPUs
    /// online, `0-1`), or as an empty document.
    @Test func aSysfsFileIsSaidToBeMadeUpByTheKernelNotReadAsADocument() throws {
        let online = "/sys/devices/system/cpu/online"
        try #require(FileManager.default.fileExists(atPath: online), "sysfs is not mounted at /sys")
        let refusal = "it is made up by the kernel as it is read (a /sys file), not a regular file"
        #expect(Self.unreadableMessage(online) == "unreadable-file: cannot read the file: \(refusal)")
        #expect(DocumentFile.notRegular(online) == refusal)
    }

    /// A file over the size limit is refused from its size, before a byte is read (the file here is sparse).
    @Test func oversizedFilesAreRefusedUnread() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("huge.ahap")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 100 * 1024 * 1024)
        try handle.close()
        let report = AHAPValidator.validate(contentsOf: file)
        #expect(report.errors.map(\.code) == [.limitExceeded])
        #expect(report.errors.first?.message == "the file is 104857600 bytes, more than the limit of 16777216")
    }

    /// An empty file is the empty document, and a short one is read whole (an empty one is not read at all).
    @Test func anEmptyFileIsTheEmptyDocumentAndAShortOneIsReadWhole() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.ahap")
        let short = folder.appendingPathComponent("short.ahap")
        #expect(FileManager.default.createFile(atPath: empty.path, contents: Data()))
        #expect(FileManager.default.createFile(atPath: short.path, contents: Data(#"{"Pattern": ["#.utf8)))
        #expect(AHAPValidator.validate(contentsOf: empty).errors.map(\.message) == ["the document is empty"])
        #expect(
            AHAPValidator.validate(contentsOf: short).errors.map(\.message) == [
                "the text ends where a value should start"
            ])
    }

    /// A file of mode 0 is denied to every user but root, and to root too once the read is made as `nobody`
    /// (`asNobodyWhenRoot`): the test runs the same as root, as CI does, and as anyone else.
    @Test func unreadableFilesSaySo() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("secret.ahap")
        try Data(Self.document(event: Self.transient).utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)
        let message = try Self.asNobodyWhenRoot { Self.unreadableMessage(file.path) }
        #expect(message == "unreadable-file: cannot read the file: permission denied")
    }

    /// Runs `body` with this thread's file-system user set to `nobody` when the process is root, whose reads
    /// ignore a file's mode, and restores it after. setfsuid(2) changes the calling thread alone (setuid(2) is
    /// applied by glibc to every thread, the other tests' too); Glibc's module does not import it, so it is
    /// looked up by name. `body` runs synchronously, so it stays on this thread.
    private static func asNobodyWhenRoot<Value>(_ body: () throws -> Value) throws -> Value {
        guard geteuid() == 0 else { return try body() }
        let process = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(process) }
        let symbol = try #require(dlsym(process, "setfsuid"))
        let setFileSystemUser = unsafeBitCast(symbol, to: (@convention(c) (UInt32) -> Int32).self)
        let nobody: UInt32 = 65534
        let previous = setFileSystemUser(nobody)
        defer { _ = setFileSystemUser(UInt32(bitPattern: previous)) }
        // setfsuid returns the user before the call: asked again, it says whether the first call took.
        try #require(setFileSystemUser(nobody) == Int32(bitPattern: nobody))
        return try body()
    }
}
