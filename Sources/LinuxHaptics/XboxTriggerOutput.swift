// An Xbox Wireless Controller's trigger motors over Bluetooth, for an engine made with a trigger locality
// (`left-trigger`, `right-trigger`, `triggers`). The input subsystem has no force feedback for them (FF_RUMBLE
// has two magnitudes, and hid-microsoft enables only the body motors), so the engine writes output report 3 to
// the pad's hidraw node itself: the motor renderer's strong level on the left trigger, its weak level on the right
// (a trigger locality routes the pattern's whole level there), with only the trigger bits enabled, so the report
// says nothing about the body motors the kernel drives.
//
// Every engine of this process at a trigger locality on one pad writes through that pad's one `XboxTriggerWriter`,
// which merges them into each report: a left-trigger engine's report does not stop a right-trigger engine's motor.
//
// Every report carries the pad's own duration, 120 ms, and no repeats, and the engine renews a playing level every
// 50 ms as it does for rumble: a process that is killed or stopped leaves the triggers running at most 120 ms
// after its last report, with nothing left behind to stop them, and a renewal may come 70 ms late before the
// motor drops out.
import HapticRendering
import LinuxInput
import LinuxSystem
import Logging
import Synchronization

/// The report-3 writer of one pad's trigger motors in this process: the engines at trigger localities on the pad
/// are its members, and each report carries every member's levels (the louder on each trigger).
final class XboxTriggerWriter: Sendable {
    /// The writers by hidraw node, while they have members.
    private static let writers = Lock<[String: XboxTriggerWriter]>([:])

    let node: String
    private let hidraw: HidrawDevice
    private struct State {
        var members: [Int: MotorMagnitudes] = [:]
        var nextMember = 0
    }
    private let state = Lock(State())

    private init(hidraw: HidrawDevice) {
        self.hidraw = hidraw
        node = hidraw.node
    }

    /// The writer of `node`, opened by the first member; a new member of it, at rest.
    static func join(_ node: String, logger: Logger) throws(OutputFailure) -> (writer: XboxTriggerWriter, member: Int) {
        try writers.withLock { (writers) throws(OutputFailure) -> (XboxTriggerWriter, Int) in
            let writer: XboxTriggerWriter
            if let existing = writers[node] {
                writer = existing
            } else {
                writer = XboxTriggerWriter(hidraw: try EvdevOutputSource.openHidraw(node, logger: logger))
                writers[node] = writer
            }
            let member = writer.state.withLock { state in
                defer { state.nextMember += 1 }
                state.members[state.nextMember] = .off
                return state.nextMember
            }
            return (writer, member)
        }
    }

    /// Sets `member`'s levels (strong on the left trigger, weak on the right) and writes the merged report.
    func set(_ member: Int, _ levels: MotorMagnitudes) throws(OutputFailure) {
        try state.withLock { (state) throws(OutputFailure) in
            guard state.members[member] != nil else { throw OutputFailure(.closed, "the output is closed") }
            state.members[member] = levels
            try write(state)
        }
    }

    /// Writes the merged report again (a renewal before the pad's duration runs out).
    func renew() throws(OutputFailure) {
        try state.withLock { (state) throws(OutputFailure) in try write(state) }
    }

    /// Takes `member` out: the report after it leaves its motors to the others (at rest when none is left), and
    /// the last member closes the node.
    func leave(_ member: Int) {
        Self.writers.withLock { writers in
            let empty = state.withLock { state -> Bool in
                guard state.members.removeValue(forKey: member) != nil else { return false }
                try? write(state)
                return state.members.isEmpty
            }
            guard empty else { return }
            writers[node] = nil
            hidraw.close()
        }
    }

    /// The report of every member's levels merged.
    static func report(_ members: some Collection<MotorMagnitudes>) -> XboxRumbleReport {
        func percent(_ level: Double) -> UInt8 { UInt8((min(max(level, 0), 1) * 100).rounded()) }
        return XboxRumbleReport(
            enable: XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger,
            leftTrigger: percent(members.map(\.strong).max() ?? 0),
            rightTrigger: percent(members.map(\.weak).max() ?? 0), strong: 0, weak: 0,
            duration: XboxTriggerOutput.durationUnits, startDelay: 0, loopCount: 0)
    }

    private func write(_ state: State) throws(OutputFailure) {
        do throws(EventDeviceError) {
            try hidraw.write(Self.report(state.members.values).bytes)
        } catch {
            throw EvdevOutput.failure(from: error)
        }
    }
}

/// A motor output for an engine at a trigger locality: a member of its pad's `XboxTriggerWriter`.
final class XboxTriggerOutput: OutputWithoutPulses {
    let capabilities: OutputCapabilities
    /// Held open for the pad's identity; never written (the kernel drives its body motors for other engines).
    private let device: EventDevice
    private let writer: XboxTriggerWriter
    private let member: Int
    private let closed = Atomic<Bool>(false)

    /// The report's duration in its 10 ms units: 120 ms, so that the motor stops within the 150 ms a killed
    /// process may leave a pad running even when the report arrives a little after it was written.
    static let durationUnits: UInt8 = 12

    init(device: EventDevice, node: String, driver: String?, logger: Logger) throws(OutputFailure) {
        self.device = device
        (writer, member) = try XboxTriggerWriter.join(node, logger: logger)
        var capabilities = OutputCapabilities(device: device, driver: driver)
        capabilities.hdNode = node
        capabilities.hdKind = .triggerMotors
        self.capabilities = capabilities
    }

    private func check() throws(OutputFailure) {
        if closed.load(ordering: .relaxed) { throw OutputFailure(.closed, "the output is closed") }
    }

    func sendNeutral() throws(OutputFailure) {
        try check()
        try writer.set(member, .off)
    }

    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {
        try check()
        try writer.set(member, mix)
    }

    func keepAlive() throws(OutputFailure) {
        try check()
        try writer.renew()
    }

    let actuatorsName = "trigger motors"

    /// Leaves the pad's writer (its motors stop unless another engine drives them), then closes the event node.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        writer.leave(member)
        device.close()
    }
}
