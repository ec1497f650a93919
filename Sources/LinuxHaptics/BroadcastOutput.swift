// One output over several pads (`DeviceSelection.allGamepads`).
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

/// Several pads driven as one output (`DeviceSelection.allGamepads`): every primitive goes to each; a pad
/// that is gone is closed and dropped, and only when none is left does the output report the device gone.
final class BroadcastOutput: MotorOutput {
    private struct State {
        var members: [EvdevOutput]
        /// A prepared pulse's id on each member, by member.
        var prepared: [Int: [ObjectIdentifier: Int]] = [:]
        var nextPrepared = 0
    }

    private let state: Lock<State>
    let capabilities: OutputCapabilities
    /// Whether a member with one motor plays the mix folded onto it (`RenderProfile.onItsMotors`): for the engine's
    /// `all` locality, where a mix made for two motors carries each event's whole level on one of them. A handle's
    /// locality keeps its side: the Joy-Con of the other side plays nothing.
    private let foldsOntoOneMotor: Bool
    /// The most frequent renewal any member wants (members only leave, so it stays enough); a member renewed
    /// more often than it needs plays the same.
    let renewal: OutputTiming.Renewal

    init(members: [EvdevOutput], locality: HapticLocality) {
        state = Lock(State(members: members))
        foldsOntoOneMotor = locality == .all
        renewal = members.map(\.renewal).min { $0.holdSeconds < $1.holdSeconds } ?? .standard
        capabilities = OutputCapabilities(
            name: "all gamepads (" + members.map(\.capabilities.name).joined(separator: ", ") + ")",
            effectSlots: members.compactMap(\.capabilities.effectSlots).min(), isVirtual: false,
            renderProfile: Self.sharedProfile(of: members.map(\.capabilities.renderProfile)))
    }

    /// The profile of the one mix that drives every member: the members' profile when they share one; when they
    /// differ only in the motors they have (a left and a right Joy-Con, a Joy-Con beside a Pro Controller), that
    /// profile with both motors, each member playing the mix on the motors it has (`levels(_:for:folding:)`);
    /// else the generic profile.
    static func sharedProfile(of profiles: [RenderProfile]) -> RenderProfile {
        let distinct = Set(profiles)
        if distinct.count == 1, let shared = distinct.first { return shared }
        let withBothMotors = Set(profiles.map { $0.withMotors(strong: true, weak: true) })
        if withBothMotors.count == 1, let shared = withBothMotors.first { return shared }
        return .genericRumble
    }

    /// What a member of `profile` is sent of `mix`: folded onto its one motor when `folding` (the `all` locality), else
    /// the mix as it is (a pad plays the motors it has).
    static func levels(_ mix: MotorMagnitudes, for profile: RenderProfile, folding: Bool) -> MotorMagnitudes {
        folding ? profile.onItsMotors(mix) : mix
    }

    private func levels(_ mix: MotorMagnitudes, for member: EvdevOutput) -> MotorMagnitudes {
        Self.levels(mix, for: member.capabilities.renderProfile, folding: foldsOntoOneMotor)
    }

    /// Runs `body` on every member; drops the gone ones; fails if none is left or every member failed.
    private func each(_ body: (EvdevOutput) throws(OutputFailure) -> Void) throws(OutputFailure) {
        let members = state.withLock { $0.members }
        var failure: OutputFailure?
        var gone: [ObjectIdentifier] = []
        var succeeded = 0
        for member in members {
            do throws(OutputFailure) {
                try body(member)
                succeeded += 1
            } catch {
                if error.kind == .deviceGone {
                    member.close()
                    gone.append(ObjectIdentifier(member))
                } else {
                    failure = error
                }
            }
        }
        let left = state.withLock { state in
            state.members.removeAll { gone.contains(ObjectIdentifier($0)) }
            return state.members.count
        }
        if left == 0 { throw OutputFailure(.deviceGone, "every gamepad is gone") }
        // One pad refusing while another plays is that pad's problem; all of them refusing is the output's.
        if let failure, succeeded == 0 { throw failure }
    }

    func sendNeutral() throws(OutputFailure) { try each { (member) throws(OutputFailure) in try member.sendNeutral() } }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) {
        try each { (member) throws(OutputFailure) in try member.apply(levels(mix, for: member)) }
    }
    func keepAlive() throws(OutputFailure) { try each { (member) throws(OutputFailure) in try member.keepAlive() } }
    func prepareForChanges() {
        for member in state.withLock({ $0.members }) { member.prepareForChanges() }
    }

    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        var ids: [ObjectIdentifier: Int] = [:]
        let members = state.withLock { $0.members }
        do throws(OutputFailure) {
            for member in members {
                let own = PreparedPulse(mix: levels(pulse.mix, for: member), duration: pulse.duration)
                ids[ObjectIdentifier(member)] = try member.prepare(own)
            }
        } catch {
            for member in members { if let id = ids[ObjectIdentifier(member)] { member.release(prepared: id) } }
            throw error
        }
        return state.withLock { state in
            defer { state.nextPrepared += 1 }
            state.prepared[state.nextPrepared] = ids
            return state.nextPrepared
        }
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        guard let ids = state.withLock({ $0.prepared[id] }) else {
            throw OutputFailure(.closed, "the prepared effect \(id) was released")
        }
        try each { (member) throws(OutputFailure) in
            if let memberID = ids[ObjectIdentifier(member)] { try member.trigger(prepared: memberID) }
        }
    }

    func stop(prepared id: Int) throws(OutputFailure) {
        guard let ids = state.withLock({ $0.prepared[id] }) else { return }
        try each { (member) throws(OutputFailure) in
            if let memberID = ids[ObjectIdentifier(member)] { try member.stop(prepared: memberID) }
        }
    }

    func release(prepared id: Int) {
        let (ids, members) = state.withLock { state in (state.prepared.removeValue(forKey: id), state.members) }
        guard let ids else { return }
        for member in members { if let memberID = ids[ObjectIdentifier(member)] { member.release(prepared: memberID) } }
    }

    func close() {
        let members = state.withLock { state in
            defer { state.members = [] }
            return state.members
        }
        for member in members { member.close() }
    }

    func currentLevels() -> MotorMagnitudes? { nil }
}
