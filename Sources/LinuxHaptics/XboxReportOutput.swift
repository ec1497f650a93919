// An Xbox Wireless Controller over Bluetooth written through its hidraw node: output report 3 carries all four of
// its motors, the two in the body and the two in the triggers ("impulse triggers"). The input subsystem has no
// force feedback for the triggers (FF_RUMBLE has two magnitudes, and hid-microsoft enables only the body motors),
// so an engine made with a trigger locality (`left-trigger`, `right-trigger`, `triggers`) writes report 3 itself:
// the motor renderer's strong level on the left trigger, its weak level on the right (a trigger locality routes
// the pattern's whole level there).
//
// One writer per pad in a process (`XboxReportWriter`): every engine of this process that writes the pad's report
// is a member, and each report carries every member's levels. Trigger engines are members. An engine at `all`,
// `left` or `right` plays through the kernel's rumble, except while a trigger engine of this process writes the
// pad's report: then its levels join that report as the body motors (`ReportDiversion`), its kernel effect is left
// stopped (hid-microsoft's report would set the triggers to 0), and one writer sets all four motors. Without a
// body member the report enables only the trigger bits and says nothing about the body motors.
//
// Every report carries the pad's own duration, 120 ms, and no repeats, and the engine renews a playing level every
// 50 ms as it does for rumble: a process that is killed or stopped leaves the motors running at most 120 ms after
// its last report, with nothing left behind to stop them, and a renewal may come 70 ms late before a motor drops
// out. A report renews every motor it carries, so of the members that renew one does (`XboxReportWriter.renew`):
// two engines on one pad send one report per renewal interval, not two.
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Synchronization

/// The report-3 writer of one pad in this process: the engines that write the pad's report are its members, and
/// each report carries every member's levels (the louder on each motor).
final class XboxReportWriter: Sendable {
    /// Which motors a member drives.
    enum Role: Sendable {
        /// The trigger motors: a member's strong level on the left trigger, its weak level on the right.
        case triggers
        /// The body motors, strong and weak.
        case body
    }

    /// The writers by hidraw node, while they have members.
    private static let writers = Lock<[String: XboxReportWriter]>([:])
    /// Per hidraw node, how many trigger engines of this process write it: kept for the life of the process (one
    /// small counter per pad seen), so a kernel-rumble engine can check it with one atomic load.
    private static let presences = Lock<[String: TriggerPresence]>([:])

    /// The trigger presence of `node`.
    static func presence(of node: String) -> TriggerPresence {
        presences.withLock { presences in
            if let known = presences[node] { return known }
            let made = TriggerPresence()
            presences[node] = made
            return made
        }
    }

    let node: String
    private let hidraw: HidrawDevice
    /// `CLOCK_MONOTONIC` in nanoseconds outside tests: when each report was written.
    private let clock: @Sendable () -> UInt64
    private struct Member {
        var role: Role
        var levels: MotorMagnitudes
    }
    private struct State {
        var members: [Int: Member] = [:]
        var nextMember = 0
        /// When the last report was written, whoever wrote it.
        var lastWrite: UInt64?
    }
    private let state = Lock(State())

    /// The renewal interval every member's engine keeps (`OutputTiming.Renewal.standard`), in nanoseconds: a
    /// member other than the one that renews writes its renewal only when no report went out for that long (the
    /// one that renews is late).
    static let renewalNanoseconds = UInt64(OutputTiming.Renewal.standard.holdSeconds * 1e9)

    private init(hidraw: HidrawDevice, clock: @escaping @Sendable () -> UInt64) {
        self.hidraw = hidraw
        self.clock = clock
        node = hidraw.node
    }

    /// The writer of `node`, opened by the first member (with `clock`, `CLOCK_MONOTONIC` unless a test moves it);
    /// a new member of it in `role`, at rest.
    static func join(
        _ node: String, as role: Role, logger: Logger,
        clock: @escaping @Sendable () -> UInt64 = { MonotonicTime.nanoseconds() }
    ) throws(OutputFailure) -> (writer: XboxReportWriter, member: Int) {
        try writers.withLock { (writers) throws(OutputFailure) -> (XboxReportWriter, Int) in
            let writer: XboxReportWriter
            if let existing = writers[node] {
                writer = existing
            } else {
                writer = XboxReportWriter(
                    hidraw: try EvdevOutputSource.openHidraw(node, logger: logger), clock: clock)
                writers[node] = writer
            }
            let member = writer.state.withLock { state in
                defer { state.nextMember += 1 }
                state.members[state.nextMember] = Member(role: role, levels: .off)
                return state.nextMember
            }
            if role == .triggers { presence(of: node).count.add(1, ordering: .releasing) }
            return (writer, member)
        }
    }

    /// Sets `member`'s levels and writes the merged report.
    func set(_ member: Int, _ levels: MotorMagnitudes) throws(OutputFailure) {
        try state.withLock { (state) throws(OutputFailure) in
            guard state.members[member] != nil else { throw OutputFailure(.closed, "the output is closed") }
            state.members[member]?.levels = levels
            try write(&state)
        }
    }

    /// `member`'s renewal before the pad's duration runs out: the merged report written again, by one member of
    /// those that renew (each member's engine renews while its levels are not off). The first member with levels
    /// writes its renewals; the others' are left out unless no report went out for a renewal interval (the first is
    /// late): any report renews every motor it carries, and two engines renewing on their own sent two reports per
    /// interval. A motor's report is then renewed at most two intervals apart when the first member's engine falls
    /// behind, as the pad's 120 ms allows.
    func renew(_ member: Int) throws(OutputFailure) {
        try state.withLock { (state) throws(OutputFailure) in
            let renewer = state.members.filter { !$0.value.levels.isOff }.keys.min()
            if renewer != member, let last = state.lastWrite, clock() &- last < Self.renewalNanoseconds { return }
            try write(&state)
        }
    }

    /// Takes `member` out: the report after it leaves its motors to the others (at rest when none is left), and
    /// the last member closes the node.
    func leave(_ member: Int) {
        Self.writers.withLock { writers in
            let empty = state.withLock { state -> Bool in
                guard let left = state.members.removeValue(forKey: member) else { return false }
                if left.role == .triggers { Self.presence(of: node).count.subtract(1, ordering: .releasing) }
                try? write(&state)
                return state.members.isEmpty
            }
            guard empty else { return }
            writers[node] = nil
            hidraw.close()
        }
    }

    /// The report of every member's levels merged: the trigger bits always enabled (this writer owns the trigger
    /// motors), the body bits only while a member drives the body motors (else they stay the kernel's).
    static func report(_ members: some Collection<(role: Role, levels: MotorMagnitudes)>) -> XboxRumbleReport {
        func percent(_ level: Double) -> UInt8 { UInt8((PureMath.unitClamped(level) * 100).rounded()) }
        let triggers = members.filter { $0.role == .triggers }.map(\.levels)
        let body = members.filter { $0.role == .body }.map(\.levels)
        var enable = XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger
        if !body.isEmpty { enable |= XboxRumbleReport.enableStrong | XboxRumbleReport.enableWeak }
        return XboxRumbleReport(
            enable: enable, leftTrigger: percent(triggers.map(\.strong).max() ?? 0),
            rightTrigger: percent(triggers.map(\.weak).max() ?? 0), strong: percent(body.map(\.strong).max() ?? 0),
            weak: percent(body.map(\.weak).max() ?? 0), duration: XboxReportOutput.durationUnits, startDelay: 0,
            loopCount: 0)
    }

    private func write(_ state: inout State) throws(OutputFailure) {
        do throws(EventDeviceError) {
            try hidraw.write(Self.report(state.members.values.map { ($0.role, $0.levels) }).bytes)
            state.lastWrite = clock()
        } catch {
            throw EvdevOutput.failure(from: error)
        }
    }
}

/// A motor output for an engine at a trigger locality: a member of its pad's `XboxReportWriter`.
final class XboxReportOutput: OutputWithoutPulses {
    let capabilities: OutputCapabilities
    /// Held open for the pad's identity; never written.
    private let device: EventDevice
    private let writer: XboxReportWriter
    private let member: Int
    let actuatorsName = "the trigger motors"
    private let closed = Atomic<Bool>(false)

    /// The report's duration: `XboxReportTiming.durationUnits`.
    static let durationUnits = XboxReportTiming.durationUnits

    init(device: EventDevice, node: String, driver: String?, logger: Logger) throws(OutputFailure) {
        self.device = device
        (writer, member) = try XboxReportWriter.join(node, as: .triggers, logger: logger)
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
        try writer.renew(member)
    }

    /// Leaves the pad's writer (its motors stop unless another engine drives them), then closes the event node.
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        writer.leave(member)
        device.close()
    }
}

/// How long each of our reports 3 plays on the pad.
package enum XboxReportTiming {
    /// The report's duration in its 10 ms units: 120 ms, so that a motor stops within the 150 ms a killed process
    /// may leave a pad running even when the report arrives a little after it was written.
    package static let durationUnits: UInt8 = 12
}

/// How many trigger engines of this process write one pad's report 3: while any does, the pad's body motors go
/// through the same report too (`ReportDiversion`), so that one writer sets all four motors.
final class TriggerPresence: Sendable {
    let count = Atomic<Int>(0)
    var isActive: Bool { count.load(ordering: .acquiring) > 0 }
}

/// A kernel-rumble output's way into its pad's report 3 (an Xbox Wireless Controller over Bluetooth whose hidraw
/// node we may write): while a trigger engine of this process writes the report, the output's levels join it as
/// the body motors and the kernel's rumble is left stopped, since hid-microsoft's report would set the triggers
/// to 0; when no trigger engine is left, the output leaves the report and plays through the kernel again.
final class ReportDiversion: Sendable {
    let node: String
    let presence: TriggerPresence
    private let logger: Logger
    private struct Membership {
        var writer: XboxReportWriter
        var member: Int
        var levels: MotorMagnitudes
    }
    private let joined = Lock<Membership?>(nil)
    /// Whether `joined` holds a membership: read without the lock on every update of a rumble engine.
    private let member = Atomic<Bool>(false)

    init(node: String, logger: Logger) {
        self.node = node
        presence = XboxReportWriter.presence(of: node)
        self.logger = logger
    }

    /// Whether the output's levels go into the report now.
    var isActive: Bool { presence.isActive }
    /// Whether the output is a member of the report's writer (it joined, and has not left yet).
    var isJoined: Bool { member.load(ordering: .acquiring) }

    /// Sets the body motors in the report; joins the writer first when the output is not a member yet.
    func route(_ levels: MotorMagnitudes) throws(OutputFailure) {
        let membership = try joined.withLock { (held) throws(OutputFailure) -> Membership in
            if held == nil {
                let made = try XboxReportWriter.join(node, as: .body, logger: logger)
                held = Membership(writer: made.writer, member: made.member, levels: levels)
                member.store(true, ordering: .releasing)
                logger.info("the body motors join the trigger motors' report", metadata: ["node": "\(node)"])
            }
            held?.levels = levels
            return held.unsafelyUnwrapped
        }
        try membership.writer.set(membership.member, levels)
    }

    /// The body's renewal of the report (`XboxReportWriter.renew`).
    func renew() throws(OutputFailure) {
        guard let membership = joined.withLock({ $0 }) else { return }
        try membership.writer.renew(membership.member)
    }

    /// Leaves the writer, so the output plays through the kernel again; the body levels it last routed, nil when
    /// it was no member.
    @discardableResult
    func leave() -> MotorMagnitudes? {
        guard isJoined else { return nil }
        let taken = joined.withLock { held in
            defer {
                held = nil
                member.store(false, ordering: .releasing)
            }
            return held
        }
        guard let held = taken else { return nil }
        held.writer.leave(held.member)
        logger.info("the body motors go back to the kernel's rumble", metadata: ["node": "\(node)"])
        return held.levels
    }
}
