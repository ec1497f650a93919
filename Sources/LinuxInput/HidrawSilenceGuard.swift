// A child process that brings a hidraw stream's actuators to rest when the stream stops while they move. A pad
// that holds the last rumble frame it got keeps playing it after its writer is killed or stopped, and the kernel
// sends nothing when the node closes. The guard, forked with its own copy of the node's descriptor, writes one
// silence report when the heartbeats stop arriving while armed (the writer stopped, or hung) or when its channel
// ends while armed (the writer died, or closed the guard). It sits in a process group of its own with every signal
// blocked, so job control that stops the writer's group leaves it running (docs/hd-haptics.md, "Safe when we die").
internal import Glibc
package import Logging
@_spi(Internals) import LinuxSystem
import Synchronization

/// The silence guard of one hidraw node, fed a heartbeat with each report the stream writes.
package final class HidrawSilenceGuard: Sendable {
    /// What became of one heartbeat.
    package enum Heartbeat: Equatable, Sendable {
        /// The guard has it.
        case sent
        /// The channel was full (the guard has not read for a while): dropped rather than waited for; the next one
        /// carries the same news.
        case dropped
        /// The guard has ended (killed, or this guard closed): nothing stands behind the stream any more.
        case guardGone
        /// The silence report's length differs from the one the guard was made for: not sent.
        case wrongLength
    }

    /// The guard's process id.
    package let processID: Int32
    /// The length of every silence report this guard takes.
    package let reportLength: Int
    /// How long heartbeats may pause while armed before the guard writes the silence.
    package let timeoutNanoseconds: UInt64
    private let node: String
    private let channel: SharedDescriptor
    private let logger: Logger
    /// Whether a heartbeat that did not reach the guard has been logged (once per guard, as they come 30 a second).
    private let loggedTrouble = Atomic<Bool>(false)
    private let gone = Atomic<Bool>(false)

    /// Whether a heartbeat found the guard gone (killed, or its channel broken): nothing stands behind the stream
    /// any more, and nothing will again.
    package var isGone: Bool { gone.load(ordering: .acquiring) }

    /// How long `close` waits for the guard to write and exit before it kills it: more than a report write ever
    /// takes on a device that answers.
    private static let exitWaitNanoseconds: UInt64 = 1_000_000_000
    private static let exitPollNanoseconds: UInt64 = 1_000_000

    /// Forks the guard of `device`, disarmed. `silence` is the report that stops the device (its length is every
    /// later report's); `timeoutMilliseconds` is how long heartbeats may pause while armed before the guard writes
    /// it. Fails with `.closed` for a closed device, `.invalidRequest` for an empty report or one longer than the
    /// guard keeps, and with the fork's errno otherwise.
    package init(
        device: HidrawDevice, silence: [UInt8], timeoutMilliseconds: Int, logger: Logger
    ) throws(EventDeviceError) {
        let operation = "start silence guard"
        guard !silence.isEmpty, silence.count <= Sys.silenceGuardMaximumReport, timeoutMilliseconds >= 0 else {
            throw EventDeviceError(
                kind: .invalidRequest, operation: operation, node: device.node,
                underlying: SystemCallError(.invalidArgument, call: "fork"))
        }
        let started: (pid: Int32, channel: Int32)?
        do throws(SystemCallError) {
            started = try device.withDescriptor { (fd) throws(SystemCallError) in
                try Sys.startSilenceGuard(
                    device: fd, reportLength: silence.count, timeoutMilliseconds: timeoutMilliseconds)
            }
        } catch {
            throw EventDeviceError(error, operation: operation, node: device.node)
        }
        guard let started else {
            throw EventDeviceError(kind: .closed, operation: operation, node: device.node, underlying: nil)
        }
        processID = started.pid
        channel = SharedDescriptor(started.channel)
        reportLength = silence.count
        timeoutNanoseconds = UInt64(timeoutMilliseconds) * 1_000_000
        node = device.node
        self.logger = logger
        logger.debug(
            "started silence guard",
            metadata: ["node": "\(node)", "pid": "\(processID)", "timeout-ms": "\(timeoutMilliseconds)"])
    }

    deinit { close() }

    /// Tells the guard whether the device is moving (`armed`) and what would stop it now (`silence`, the report
    /// with the stream's current counters). Never blocks. The first time the guard is found gone, or a report of
    /// the wrong length is given, it is logged; `send` says what became of each heartbeat.
    package func heartbeat(armed: Bool, silence: [UInt8]) {
        let outcome = send(armed: armed, silence: silence)
        guard outcome == .guardGone || outcome == .wrongLength, !loggedTrouble.exchange(true, ordering: .relaxed)
        else { return }
        logger.info(
            "a heartbeat did not reach the silence guard (later ones are not logged)",
            metadata: ["node": "\(node)", "pid": "\(processID)", "outcome": "\(outcome)"])
    }

    /// `heartbeat`, saying what became of it.
    package func send(armed: Bool, silence: [UInt8]) -> Heartbeat {
        guard silence.count == reportLength else { return .wrongLength }
        let message = [armed ? 1 : 0] + silence
        let outcome =
            channel.withDescriptor { fd -> Heartbeat in
                let sent = message.withUnsafeBytes { bytes in
                    Result { () throws(SystemCallError) -> Int in try Sys.sendNonBlocking(fd, bytes) }
                }
                switch sent {
                case .success: return .sent
                case .failure(let error) where error.errno == .wouldBlock: return .dropped
                case .failure: return .guardGone
                }
            } ?? .guardGone
        if outcome == .guardGone { gone.store(true, ordering: .releasing) }
        return outcome
    }

    /// Ends the channel, which makes the guard write the silence if armed and exit; waits for that (at most a
    /// second, then kills it) and reaps it. Closing twice is harmless.
    package func close() {
        guard channel.close() else { return }
        let deadline = Sys.monotonicNanoseconds() + Self.exitWaitNanoseconds
        var state = Sys.childState(processID)
        while state == .running && Sys.monotonicNanoseconds() < deadline {
            Sys.sleep(nanoseconds: Self.exitPollNanoseconds)
            state = Sys.childState(processID)
        }
        if state == .running {
            logger.info("silence guard did not exit, killed", metadata: ["node": "\(node)", "pid": "\(processID)"])
            Sys.kill(processID, SIGKILL)
            _ = Sys.waitForExit(processID)
        }
        logger.debug("closed silence guard", metadata: ["node": "\(node)", "pid": "\(processID)"])
    }
}
