// `DocumentFile`: a document read from the path a user named, judged by the descriptor it opened.
import Foundation
import Glibc
import Testing

@_spi(Internals) @testable import LinuxSystem

struct DocumentFileTests {
    /// A folder of its own for a test, removed after `body`.
    private static func inScratchFolder<T>(_ body: (String) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("document-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder.path)
    }

    @Test func aRegularFileIsReadWholeAndAnEmptyOneIsEmpty() throws {
        try Self.inScratchFolder { folder in
            let bytes = Array(repeating: UInt8(ascii: "x"), count: 70_000)
            try Sys.writeNewFile(folder + "/long.ahap", bytes)
            try Sys.writeNewFile(folder + "/empty.ahap", [])
            #expect(DocumentFile.read(folder + "/long.ahap", maximumBytes: 1 << 20) == .success(bytes))
            #expect(DocumentFile.read(folder + "/empty.ahap", maximumBytes: 1 << 20) == .success([]))
        }
    }

    /// A FIFO is opened without waiting for a writer, and refused by what the descriptor is: an open for reading
    /// alone waits until something opens it for writing, which nothing here does.
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        try Self.inScratchFolder { folder in
            let fifo = folder + "/pipe.ahap"
            try #require(mkfifo(fifo, 0o600) == 0)
            #expect(
                DocumentFile.read(fifo, maximumBytes: 1 << 20)
                    == .failure(.unreadable("it is a pipe (a FIFO), not a regular file")))
        }
    }

    @Test func theLimitIsHeldBeforeReading() throws {
        try Self.inScratchFolder { folder in
            let path = folder + "/ten.ahap"
            try Sys.writeNewFile(path, Array(repeating: 0x20, count: 10))
            #expect(DocumentFile.read(path, maximumBytes: 10) == .success(Array(repeating: 0x20, count: 10)))
            #expect(DocumentFile.read(path, maximumBytes: 9) == .failure(.tooLarge(size: 10, limit: 9)))
        }
    }

    /// A thread with a descriptor table of its own (`unshare(CLONE_FILES)`) reads the file it named: the file judged
    /// is opened again through the thread's own table (`/proc/thread-self/fd`), not the first thread's, which holds
    /// another file under the same number. Until 7 December it was opened through `/proc/self/fd`, and the other
    /// file was read (or, had its number held a device, the device opened).
    @Test func aThreadWithADescriptorTableOfItsOwnReadsTheFileItNamed() throws {
        try Self.inScratchFolder { folder in
            try Sys.writeNewFile(folder + "/a.ahap", Array("AAAA".utf8))
            try Sys.writeNewFile(folder + "/b.ahap", Array("BBBB".utf8))
            let unshared = Lock<Bool?>(nil)
            let othersOpened = Lock(false)
            let result = Lock<Result<[UInt8], DocumentFile.Refusal>?>(nil)
            let reader = try ServiceThread.start {
                // CLONE_FILES: from now on this thread's descriptors are its own (a copy of the table as it was).
                // Glibc's module does not declare `unshare`.
                let unshare = dlsym(nil, "unshare").map {
                    unsafeBitCast($0, to: (@convention(c) (Int32) -> Int32).self)
                }
                let done = unshare?(0x400) == 0
                unshared.withLock { $0 = done }
                guard done else { return }
                while !othersOpened.withLock({ $0 }) { Sys.yield() }
                let read = DocumentFile.read(folder + "/a.ahap", maximumBytes: 64)
                result.withLock { $0 = read }
            }
            while unshared.withLock({ $0 }) == nil { Sys.yield() }
            // The shared table's lowest free number, which the reader's `O_PATH` open takes in its copy, now holds b.
            let other = open(folder + "/b.ahap", O_RDONLY | O_CLOEXEC)
            defer { close(other) }
            othersOpened.withLock { $0 = true }
            reader.join()
            try #require(unshared.withLock { $0 } == true, "unshare(CLONE_FILES) failed")
            #expect(result.withLock { $0 } == .success(Array("AAAA".utf8)))
        }
    }

    /// A file found longer than its size said (it grew between the `fstat` and the read) is read on up to the limit,
    /// whatever the limit: under the largest one, the buffer's growth overflowed and trapped until 7 December.
    @Test func aFileThatGrewIsReadOnUnderTheLargestLimit() throws {
        try Self.inScratchFolder { folder in
            let path = folder + "/grown.ahap"
            let bytes = Array(repeating: UInt8(ascii: "x"), count: 100)
            try Sys.writeNewFile(path, bytes)
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            defer { close(fd) }
            #expect(try DocumentFile.readAll(fd, size: 0, maximumBytes: .max) == .success(bytes))
            #expect(DocumentFile.read(path, maximumBytes: .max) == .success(bytes))
        }
    }

    /// A device, or a FIFO, is refused without being opened: opening a device may act (`/dev/watchdog` arms the
    /// watchdog, a tape rewinds when closed). Each is named through a link of its own, so that a fault planned for
    /// the opens of that path (not its `O_PATH` descriptor, which opens nothing) finds this read's alone among the
    /// tests running beside it; a regular file named the same way is opened, once.
    @Test func aDeviceOrAFIFOIsRefusedWithoutBeingOpened() throws {
        try Self.inScratchFolder { folder in
            let fifo = folder + "/pipe"
            try #require(mkfifo(fifo, 0o600) == 0)
            try Sys.writeNewFile(folder + "/file", Array("{}".utf8))
            for (target, expected) in [
                ("/dev/null", DocumentFile.Refusal.unreadable("it is a device, not a regular file")),
                (fifo, .unreadable("it is a pipe (a FIFO), not a regular file")),
            ] {
                let link = folder + "/link-\(UUID().uuidString).ahap"
                try #require(symlink(target, link) == 0)
                let plan = SyscallFaults.Plan(site: "open", errno: .ioError, calls: .from(1), matching: "open(\(link)")
                let (result, tally) = try SyscallFaults.withPlan(plan) { DocumentFile.read(link, maximumBytes: 64) }
                #expect(result == .failure(expected))
                #expect(tally.injected == 0, "\(target) was opened")
            }
            let link = folder + "/link-\(UUID().uuidString).ahap"
            try #require(symlink(folder + "/file", link) == 0)
            let plan = SyscallFaults.Plan(site: "open", errno: .ioError, calls: .from(1), matching: "open(\(link)")
            let (result, tally) = try SyscallFaults.withPlan(plan) { DocumentFile.read(link, maximumBytes: 64) }
            #expect(result == .failure(.unreadable("opening it failed (Input/output error)")))
            #expect(tally.injected == 1, "the regular file was not opened, once")
        }
    }

    /// "No such file" from the open through `/proc/self/fd` (a file system may answer it for its own file) is told as
    /// it is, and the path is not opened again: by then it may lead elsewhere, a device swapped in whose open acts.
    /// The path is opened again only where the descriptor has no link in `/proc/self/fd` at all (no `/proc`).
    @Test func aNoSuchFileFromTheOpenThroughProcSelfFdIsToldWithoutOpeningThePathAgain() throws {
        try Self.inScratchFolder { folder in
            let path = folder + "/\(UUID().uuidString).ahap"
            try Sys.writeNewFile(path, Array("{}".utf8))
            let plan = SyscallFaults.Plan(
                site: "open", errno: .noSuchFileOrDirectory, calls: .from(1), matching: "open(\(path)")
            let (result, tally) = try SyscallFaults.withPlan(plan) { DocumentFile.read(path, maximumBytes: 64) }
            #expect(result == .failure(.unreadable("no such file")))
            #expect(tally.injected == 1, "the path was opened again")
        }
    }

    /// A socket does not open (`ENXIO`), and a device is not opened; both are said to be what they are.
    @Test func aDeviceAndASocketAreSaidToBeWhatTheyAre() throws {
        #expect(
            DocumentFile.read("/dev/null", maximumBytes: 1 << 20)
                == .failure(.unreadable("it is a device, not a regular file")))
        try Self.inScratchFolder { folder in
            let path = folder + "/socket.ahap"
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            try #require(fd >= 0)
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0)
            #expect(
                DocumentFile.read(path, maximumBytes: 1 << 20)
                    == .failure(.unreadable("it is a socket, not a regular file")))
        }
    }

    /// A path to be written is judged by what is there, its links followed: a pipe named through /proc/self/fd is
    /// a pipe, nothing there is for its writer to create, and a link to nowhere is said to be one.
    @Test func aPathToBeWrittenIsJudgedByWhatIsThere() throws {
        try Self.inScratchFolder { folder in
            #expect(DocumentFile.notRegular(folder + "/absent.wav") == nil)
            try Sys.writeNewFile(folder + "/file.wav", [])
            #expect(DocumentFile.notRegular(folder + "/file.wav") == nil)
            #expect(DocumentFile.notRegular(folder) == "it is a directory, not a regular file")
            try #require(symlink("/nonexistent/target", folder + "/dangling.wav") == 0)
            #expect(
                DocumentFile.notRegular(folder + "/dangling.wav")?.hasPrefix(
                    "it is a symbolic link that leads to no file") == true)
            let pipe = try Sys.pipe()
            defer {
                Sys.close(pipe.read)
                Sys.close(pipe.write)
            }
            #expect(
                DocumentFile.notRegular("/proc/self/fd/\(pipe.write)") == "it is a pipe (a FIFO), not a regular file")
        }
    }
}
