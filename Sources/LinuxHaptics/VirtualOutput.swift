// The output without a device: a model of two rumble motors in this process, with the same self-expiry and
// pulse summing as a device, so the CLI can show what a pad would do where there is none (`make demo`).
public import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

/// The built-in virtual output: what the motors would do, without any device.
public final class VirtualOutput: Sendable {
    private struct State {
        var clock: (any HapticClock)?
        /// What the motors do over time; only the present is kept.
        var output = DeviceOutput()
        var pulses: [Int: PreparedPulse] = [:]
        var nextPulse = 0
    }

    private let state = Lock(State())

    public init() {}

    /// The motors now: the held mix until it expires, plus triggered pulses still running (summed).
    public func levels() -> MotorMagnitudes {
        state.withLock { state in
            guard let now = state.clock?.now else { return .off }
            return state.output.levels(at: now)
        }
    }

    fileprivate func attach(_ clock: any HapticClock) { state.withLock { $0.clock = clock } }

    /// The mix from now on, expiring like a device's effect unless renewed.
    fileprivate func hold(_ mix: MotorMagnitudes) {
        state.withLock { state in
            let now = state.clock?.now ?? 0
            state.output.forget(before: now)
            state.output.hold(mix, at: now, expiry: Self.expiry(from: now))
        }
    }

    /// Restarts the held mix's expiry window, as a play of the device's started effect does.
    fileprivate func renew() {
        state.withLock { state in
            guard let now = state.clock?.now, let held = state.output.hold(at: now), !held.levels.isOff else {
                return
            }
            state.output.forget(before: now)
            state.output.hold(held.levels, at: now, expiry: Self.expiry(from: now))
        }
    }

    private static func expiry(from now: Double) -> Double {
        now + OutputTiming.Renewal.standard.windowSeconds
    }

    fileprivate func prepare(_ pulse: PreparedPulse) -> Int {
        state.withLock { state in
            defer { state.nextPulse += 1 }
            state.pulses[state.nextPulse] = pulse
            return state.nextPulse
        }
    }

    fileprivate func trigger(_ id: Int) throws(OutputFailure) {
        let found = state.withLock { state -> Bool in
            guard let pulse = state.pulses[id], let now = state.clock?.now else { return false }
            state.output.forget(before: now)
            state.output.pulse(pulse.mix, at: now, duration: pulse.duration, slot: id)
            return true
        }
        if !found { throw OutputFailure(.closed, "the prepared pulse \(id) was released") }
    }

    fileprivate func stop(_ id: Int) {
        state.withLock { state in
            guard let now = state.clock?.now else { return }
            state.output.stopPulse(slot: id, at: now)
        }
    }

    fileprivate func release(_ id: Int) { _ = state.withLock { $0.pulses.removeValue(forKey: id) } }

    fileprivate func reset() {
        state.withLock { state in
            state.output = DeviceOutput()
            state.pulses = [:]
        }
    }
}

struct VirtualOutputSource: OutputSource {
    let model: VirtualOutput
    /// The engine's locality: the model has the two body motors, so a trigger locality has nothing to play on and
    /// fails the open, as it does on a pad without trigger motors (never a silent substitute).
    var locality: HapticLocality = .all

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        guard !locality.isTrigger else {
            throw OutputFailure(
                .unsupported,
                "the virtual output has no trigger motors, so locality \(locality.rawValue) cannot play on it: an "
                    + "Xbox Wireless Controller over Bluetooth has them")
        }
        model.attach(clock)
        return VirtualMotorOutput(model: model)
    }

    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? { nil }
}

private final class VirtualMotorOutput: MotorOutput {
    let model: VirtualOutput
    init(model: VirtualOutput) { self.model = model }

    var capabilities: OutputCapabilities { OutputCapabilities(name: "virtual output", isVirtual: true) }
    func sendNeutral() { model.hold(.off) }
    func apply(_ mix: MotorMagnitudes) { model.hold(mix) }
    func keepAlive() { model.renew() }
    func prepare(_ pulse: PreparedPulse) -> Int { model.prepare(pulse) }
    func trigger(prepared id: Int) throws(OutputFailure) { try model.trigger(id) }
    func stop(prepared id: Int) { model.stop(id) }
    func release(prepared id: Int) { model.release(id) }
    func close() { model.reset() }
    func currentLevels() -> MotorMagnitudes? { model.levels() }
}
