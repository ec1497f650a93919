// The silence guard against a pipe standing in for a hidraw node: what it writes there, when, and what it holds.
// A pipe opened through /proc/self/fd is an ordinary `HidrawDevice`; the guard's writes arrive at the pipe's
// read end whole (a report is shorter than PIPE_BUF), and once the device and the guard are both closed the read
// end reaches its end, so "nothing else was written" is read, not timed.
import Glibc
import Testing
@testable import LinuxInput
@_spi(Internals) import LinuxSystem

@Suite struct HidrawSilenceGuardTests {
    /// Only a hang reaches this bound.
    static let hangGuardNanoseconds: UInt64 = 30_000_000_000
    /// Long enough never to pass during a test: only the channel's end makes such a guard write.
    static let neverMilliseconds = 600_000
    /// Short, so that the tests that wait for the timeout do not wait long.
    static let shortMilliseconds = 5

    static let silenceA: [UInt8] = [0x10, 0x01, 0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]
    static let silenceB: [UInt8] = [0x10, 0x02, 0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]
    static let silenceC: [UInt8] = [0x10, 0x03, 0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]

    /// A pipe as a hidraw node: the device writes into it, the test reads what arrived. The pipe's own write end
    /// stays open only for `handOver`, which gives it to a child process.
    final class PipeDevice {
        let device: HidrawDevice
        let readEnd: Int32
        private var writeEnd: Int32

        init() throws {
            let pipe = try Sys.pipe()
            (readEnd, writeEnd) = pipe
            device = try HidrawDevice(node: "/proc/self/fd/\(pipe.write)", logger: .init(label: "test"))
        }

        deinit {
            device.close()
            closeWriteEnd()
            Sys.close(readEnd)
        }

        /// Runs `body` with the pipe's write end, then closes it here: afterwards only what `body` gave it to (a
        /// child process) and the device hold it.
        func handOver<T>(_ body: (Int32) throws -> T) rethrows -> T {
            defer { closeWriteEnd() }
            return try body(writeEnd)
        }

        private func closeWriteEnd() {
            if writeEnd >= 0 { Sys.close(writeEnd) }
            writeEnd = -1
        }

        /// The next `count` bytes, waiting for them up to the hang guard; fewer only at the end or on a hang.
        func read(_ count: Int) -> [UInt8] {
            var bytes: [UInt8] = []
            let deadline = Sys.monotonicNanoseconds() + HidrawSilenceGuardTests.hangGuardNanoseconds
            while bytes.count < count, let more = next(upTo: count - bytes.count, deadline: deadline), !more.isEmpty {
                bytes += more
            }
            return bytes
        }

        /// Reads and forgets what has arrived so far.
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ (try? Sys.read(readEnd, into: $0)) ?? -1 }) > 0 {}
        }

        /// Everything written until every writer has closed the pipe (the device and the write end are closed first).
        func readToEnd() -> [UInt8] {
            device.close()
            closeWriteEnd()
            var bytes: [UInt8] = []
            let deadline = Sys.monotonicNanoseconds() + HidrawSilenceGuardTests.hangGuardNanoseconds
            while let more = next(upTo: 4096, deadline: deadline), !more.isEmpty { bytes += more }
            return bytes
        }

        /// Empty at the end of the pipe, nil on a hang.
        private func next(upTo count: Int, deadline: UInt64) -> [UInt8]? {
            let now = Sys.monotonicNanoseconds()
            guard now < deadline else { return nil }
            var fds = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
            guard let ready = try? Sys.poll(&fds, timeout: Int32((deadline - now) / 1_000_000) + 1), ready > 0 else {
                return nil
            }
            var buffer = [UInt8](repeating: 0, count: count)
            let got = buffer.withUnsafeMutableBytes { (try? Sys.read(readEnd, into: $0)) ?? -1 }
            return got < 0 ? nil : Array(buffer.prefix(got))
        }
    }

    static func makeGuard(_ pipe: PipeDevice, timeoutMilliseconds: Int) throws -> HidrawSilenceGuard {
        try HidrawSilenceGuard(
            device: pipe.device, silence: silenceA, timeoutMilliseconds: timeoutMilliseconds,
            logger: .init(label: "test"))
    }

    @Test func heartbeatsStoppingWhileArmedWriteTheSilenceOnce() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.shortMilliseconds)
        #expect(guardian.send(armed: true, silence: Self.silenceB) == .sent)
        #expect(pipe.read(Self.silenceB.count) == Self.silenceB)
        guardian.close()
        #expect(pipe.readToEnd().isEmpty, "written once: the timeout disarms, and closing disarmed writes nothing")
    }

    /// A stream's heartbeats, far more often than the timeout and for several timeouts in all: each one restarts
    /// the wait, so the guard never writes. A run in which this thread was itself held up for half the timeout
    /// between two heartbeats proves nothing (the guard may rightly have written), so it is made again, 5 runs at
    /// most; the last is judged whatever its gaps.
    @Test func heartbeatsFasterThanTheTimeoutWriteNothing() throws {
        let timeoutMilliseconds = 300
        for run in 1...5 {
            let pipe = try PipeDevice()
            let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: timeoutMilliseconds)
            let end = Sys.monotonicNanoseconds() + UInt64(timeoutMilliseconds) * 3_000_000
            var previous = Sys.monotonicNanoseconds()
            var longestGap: UInt64 = 0
            while true {
                let now = Sys.monotonicNanoseconds()
                longestGap = max(longestGap, now - previous)
                previous = now
                if now >= end { break }
                #expect(guardian.send(armed: true, silence: Self.silenceB) != .guardGone)
                Sys.sleep(nanoseconds: 2_000_000)
            }
            guardian.heartbeat(armed: false, silence: Self.silenceB)
            guardian.close()
            let written = pipe.readToEnd()
            if longestGap >= UInt64(timeoutMilliseconds) * 500_000, run < 5 { continue }
            #expect(written.isEmpty, "\(written.count / Self.silenceB.count) silence reports written among heartbeats")
            return
        }
    }

    /// What the guard process waits in, read from `/proc/PID/syscall`: nil while it runs (or the file says
    /// nothing readable), else whether it sits in `ppoll` and whether that wait has a timeout (its third argument,
    /// the timeout's address, not NULL).
    static func wait(of pid: Int32) -> (inPoll: Bool, timed: Bool)? {
        guard let line = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { return nil }
        let fields = line.split(separator: " ")
        guard fields.count > 3, let number = Int(fields[0]) else { return nil }
        return (number == ppollNumber, fields[3] != "0x0")
    }

    /// `ppoll`'s system call number on this architecture (Glibc's `SYS_ppoll` does not reach Swift).
    #if arch(x86_64)
    static let ppollNumber = 271
    #elseif arch(arm64)
    static let ppollNumber = 73
    #endif

    /// Waits until the guard sits in `ppoll` with a timeout (`timed`) or without; false on a hang.
    static func waitUntilGuardPolls(_ pid: Int32, timed: Bool) -> Bool {
        let deadline = Sys.monotonicNanoseconds() + hangGuardNanoseconds
        while Sys.monotonicNanoseconds() < deadline {
            if let wait = wait(of: pid), wait.inPoll, wait.timed == timed { return true }
            Sys.sleep(nanoseconds: 1_000_000)
        }
        return false
    }

    /// Disarmed, the guard waits with no timeout at all, so no time that passes can make it write; closed then, it
    /// writes nothing either. Read from what it waits in: armed, it waits with a timeout; once the disarming
    /// heartbeat is read, without one. (This test slept 20 timeouts and found nothing written, which a guard kept
    /// from the processor that long would have passed as well.)
    @Test func aDisarmedGuardWaitsWithoutATimeoutAndWritesNothingThroughClose() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        let pid = guardian.processID
        try #require(
            (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8)) != nil,
            "what the guard waits in is read from /proc/\(pid)/syscall, which this process may not read")
        #expect(guardian.send(armed: true, silence: Self.silenceB) == .sent)
        #expect(Self.waitUntilGuardPolls(pid, timed: true), "armed, the guard should wait with a timeout")
        #expect(guardian.send(armed: false, silence: Self.silenceC) == .sent)
        #expect(Self.waitUntilGuardPolls(pid, timed: false), "disarmed, the guard should wait without one")
        guardian.close()
        #expect(pipe.readToEnd().isEmpty, "written: a disarmed guard wrote")
    }

    @Test func aGuardNeverHeardFromWritesNothing() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.shortMilliseconds)
        guardian.close()
        #expect(pipe.readToEnd().isEmpty)
    }

    @Test func closingAnArmedGuardWritesTheLatestSilence() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        for silence in [Self.silenceA, Self.silenceB, Self.silenceC] {
            #expect(guardian.send(armed: true, silence: silence) == .sent)
        }
        guardian.close()
        #expect(pipe.readToEnd() == Self.silenceC)
    }

    @Test func theTimeoutWritesTheLatestSilence() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.shortMilliseconds)
        #expect(guardian.send(armed: true, silence: Self.silenceA) == .sent)
        #expect(guardian.send(armed: true, silence: Self.silenceB) == .sent)
        // A timeout may fall between the two heartbeats, writing A; B, armed too, is written after it either way.
        var written = pipe.read(Self.silenceA.count)
        if written == Self.silenceA { written = pipe.read(Self.silenceB.count) }
        #expect(written == Self.silenceB)
        guardian.close()
        #expect(pipe.readToEnd().isEmpty)
    }

    @Test func closingADisarmedGuardWritesNothing() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        #expect(guardian.send(armed: true, silence: Self.silenceA) == .sent)
        #expect(guardian.send(armed: false, silence: Self.silenceB) == .sent)
        guardian.close()
        #expect(pipe.readToEnd().isEmpty)
    }

    @Test func aHeartbeatOfAnotherLengthIsNotSent() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        #expect(guardian.send(armed: true, silence: [0x10]) == .wrongLength)
        guardian.close()
        #expect(pipe.readToEnd().isEmpty)
    }

    @Test func aClosedGuardTakesNoHeartbeat() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        #expect(!guardian.isGone)
        guardian.close()
        #expect(guardian.send(armed: true, silence: Self.silenceA) == .guardGone && guardian.isGone)
    }

    @Test func aKilledGuardIsGoneNotARaisedSIGPIPE() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        Sys.kill(guardian.processID, SIGKILL)
        let deadline = Sys.monotonicNanoseconds() + Self.hangGuardNanoseconds
        var outcome = HidrawSilenceGuard.Heartbeat.sent
        while outcome == .sent && Sys.monotonicNanoseconds() < deadline {
            outcome = guardian.send(armed: true, silence: Self.silenceA)
            Sys.sleep(nanoseconds: 1_000_000)
        }
        #expect(outcome == .guardGone)
        #expect(guardian.isGone, "the stream asks this after each report")
        guardian.close()
    }

    @Test func theGuardIsReapedOnClose() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.neverMilliseconds)
        let pid = guardian.processID
        #expect(Sys.exists("/proc/\(pid)"))
        guardian.close()
        #expect(Sys.childState(pid) == .notAChild, "reaped, so no longer a child to wait for")
        #expect(!Sys.exists("/proc/\(pid)"), "no zombie left")
    }

    @Test func aClosedDeviceStartsNoGuard() throws {
        let pipe = try PipeDevice()
        pipe.device.close()
        #expect(throws: EventDeviceError.self) { try Self.makeGuard(pipe, timeoutMilliseconds: Self.shortMilliseconds) }
    }

    @Test func anEmptyOrOverlongSilenceStartsNoGuard() throws {
        let pipe = try PipeDevice()
        for silence in [[], [UInt8](repeating: 0, count: Sys.silenceGuardMaximumReport + 1)] {
            let error = #expect(throws: EventDeviceError.self) {
                try HidrawSilenceGuard(
                    device: pipe.device, silence: silence, timeoutMilliseconds: 1, logger: .init(label: "test"))
            }
            #expect(error?.kind == .invalidRequest)
        }
    }

    /// The guard, once it has written (so past its setup), as /proc shows it: its own process group, its name, its
    /// two descriptors (the channel, a socket, as 0; the device's pipe as 1), and the signals of job control and
    /// the terminal blocked.
    @Test func theGuardHasItsOwnGroupAndHoldsOnlyItsTwoDescriptors() throws {
        let pipe = try PipeDevice()
        let guardian = try Self.makeGuard(pipe, timeoutMilliseconds: Self.shortMilliseconds)
        defer { guardian.close() }
        #expect(guardian.send(armed: true, silence: Self.silenceA) == .sent)
        #expect(pipe.read(Self.silenceA.count) == Self.silenceA)
        let pid = guardian.processID

        let stat = try Sys.readSmallFile("/proc/\(pid)/stat")
        // Fields after the name (which ends at the last ')'): state, parent, process group, ...
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        #expect(fields.count > 2 && fields[2] == "\(pid)", "its own process group: \(stat)")
        #expect(fields.count > 1 && fields[1] == "\(getpid())", "a child of this process")
        #expect(try Sys.readSmallFile("/proc/\(pid)/comm") == "haptics-guard\n")

        #expect(try Sys.directoryEntries("/proc/\(pid)/fd").sorted() == ["0", "1"])
        #expect(try Sys.readLink("/proc/\(pid)/fd/0").hasPrefix("socket:"))
        #expect(try Sys.readLink("/proc/\(pid)/fd/1") == Sys.readLink("/proc/self/fd/\(pipe.readEnd)"))

        let status = try Sys.readSmallFile("/proc/\(pid)/status", limit: 8192)
        let blockedLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
        let blocked = try #require(UInt64(blockedLine.split(separator: "\t").last ?? "", radix: 16))
        for signal in [SIGINT, SIGHUP, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGCHLD, SIGUSR1] {
            #expect(blocked & (UInt64(1) << UInt64(signal - 1)) != 0, "signal \(signal) blocked")
        }
    }
}
