// The silence guard when its writer dies or is stopped, which a test cannot do to itself: the test starts this test
// executable again, running only `SilenceGuardHost`, in a process group of its own. The host opens the test's pipe
// as its device, starts a guard, arms it and says so; the test then kills or stops the host's whole group, as a
// terminal's job control would, and reads what the guard, in its own group, wrote.
import Glibc
import Testing
@testable import LinuxInput
@_spi(Internals) import LinuxSystem

@Suite struct HidrawSilenceGuardDeathTests {
    typealias PipeDevice = HidrawSilenceGuardTests.PipeDevice

    /// A host started in a process group of its own, its stdin the device pipe's write end, with the line it
    /// writes once its guard is armed already read.
    struct Host {
        let pid: Int32

        init(_ role: SilenceGuardHostRole, device: PipeDevice) throws {
            let executable = try Sys.readLink("/proc/self/exe")
            let output = try Sys.pipe()
            defer { Sys.close(output.read) }
            do {
                defer { Sys.close(output.write) }
                pid = try device.handOver { writeEnd in
                    try Sys.spawn(
                        [executable, "--testing-library", "swift-testing", "--filter", "SilenceGuardHost"],
                        input: writeEnd, output: output.write,
                        environment: ["\(SilenceGuardHostRole.variable)=\(role.rawValue)"], newProcessGroup: true)
                }
            }
            guard Self.readUntilArmed(output.read) else {
                killGroup()
                Issue.record("the host never said its guard was armed")
                throw SubprocessHang()
            }
        }

        struct SubprocessHang: Error {}

        private static func readUntilArmed(_ fd: Int32) -> Bool {
            var text = ""
            let deadline = Sys.monotonicNanoseconds() + HidrawSilenceGuardTests.hangGuardNanoseconds
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !text.contains(SilenceGuardHostRole.armedLine) {
                let now = Sys.monotonicNanoseconds()
                guard now < deadline else { return false }
                var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
                guard let ready = try? Sys.poll(&fds, timeout: Int32((deadline - now) / 1_000_000) + 1), ready > 0
                else { return false }
                let got = buffer.withUnsafeMutableBytes { (try? Sys.read(fd, into: $0)) ?? -1 }
                if got <= 0 { return false }
                text += String(decoding: buffer.prefix(got), as: UTF8.self)
            }
            return true
        }

        /// SIGSTOP to the host's whole process group, as a terminal's Ctrl-Z stops a job.
        func stopGroup() { Sys.kill(-pid, SIGSTOP) }

        /// SIGKILL to the host's whole process group, then the host reaped.
        func killGroup() {
            Sys.kill(-pid, SIGKILL)
            _ = Sys.waitForExit(pid)
        }
    }

    @Test func aWriterKilledWhileArmedLeavesTheSilenceWritten() throws {
        let pipe = try PipeDevice()
        let host = try Host(.armedOnce, device: pipe)
        host.killGroup()
        #expect(pipe.readToEnd() == SilenceGuardHostRole.silence)
    }

    @Test func aWriterWhoseGroupIsStoppedLeavesTheSilenceWritten() throws {
        let pipe = try PipeDevice()
        let host = try Host(.streaming, device: pipe)
        // A silence the guard wrote before the stop (a heartbeat late under load) is not the one this test waits for.
        pipe.drain()
        host.stopGroup()
        let afterStop = pipe.read(SilenceGuardHostRole.silence.count)
        host.killGroup()
        #expect(afterStop == SilenceGuardHostRole.silence)
        // The guard disarmed when it wrote; the host's death finds nothing to silence.
        #expect(pipe.readToEnd().isEmpty)
    }
}

/// The host's role and what it and the test agree on; `variable` names the role in the host's environment.
enum SilenceGuardHostRole: String {
    /// Arms its guard once (a timeout that never passes) and waits to be killed.
    case armedOnce = "armed-once"
    /// Sends armed heartbeats as a stream does, until stopped or killed.
    case streaming

    static let variable = "HAPTICS_SILENCE_GUARD_HOST"
    static let armedLine = "silence-guard-host: armed"
    static let silence: [UInt8] = [0x10, 0x0b, 0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]
    /// This process's role, nil but in a host.
    static var current: Self? { Sys.environment(variable).flatMap(Self.init(rawValue:)) }
}

/// Not a test of its own: the writer that `HidrawSilenceGuardDeathTests` starts and kills or stops, enabled only in
/// the process it starts. Its stdin is the device pipe's write end.
@Suite(
    .enabled(
        if: SilenceGuardHostRole.current != nil,
        "not a test: the process HidrawSilenceGuardDeathTests start and kill, run only by them"))
struct SilenceGuardHost {
    /// Between a stream's heartbeats, and how long the streaming host's guard waits past the last one: far apart,
    /// so that a host late under load rarely looks stopped.
    static let heartbeatNanoseconds: UInt64 = 2_000_000
    static let streamingTimeoutMilliseconds = 100

    @Test func hostAnArmedGuardUntilKilledOrStopped() throws {
        let role = try #require(SilenceGuardHostRole.current)
        let silence = SilenceGuardHostRole.silence
        let device = try HidrawDevice(node: "/proc/self/fd/0", logger: .init(label: "host"))
        let guardian = try HidrawSilenceGuard(
            device: device, silence: silence,
            timeoutMilliseconds: role == .streaming
                ? Self.streamingTimeoutMilliseconds : HidrawSilenceGuardTests.neverMilliseconds,
            logger: .init(label: "host"))
        #expect(guardian.send(armed: true, silence: silence) == .sent)
        let line = Array((SilenceGuardHostRole.armedLine + "\n").utf8)
        _ = try line.withUnsafeBytes { try Sys.write(STDOUT_FILENO, $0) }
        // The test kills this process long before the hang guard ends it.
        let deadline = Sys.monotonicNanoseconds() + HidrawSilenceGuardTests.hangGuardNanoseconds
        while Sys.monotonicNanoseconds() < deadline {
            if role == .streaming { guardian.heartbeat(armed: true, silence: silence) }
            Sys.sleep(nanoseconds: Self.heartbeatNanoseconds)
        }
        guardian.heartbeat(armed: false, silence: silence)
    }
}
