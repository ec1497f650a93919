// Outputs without a device. The virtual output is a model of two rumble motors in this process, with the
// same self-expiry and pulse summing as a device, so the CLI can show what a pad would do where there is
// none (`make demo`). The recording output logs every primitive with its clock time for tests and the
// scheduler's own timing benchmark, and can pretend to be unplugged and plugged back.
public import HapticRendering
import LinuxInput
import Logging
import Synchronization

/// The built-in virtual output: what the motors would do, without any device.
public final class VirtualOutput: Sendable {
    private struct State {
        var clock: (any HapticClock)?
        var held = MotorMagnitudes.off
        var heldUntil = -Double.infinity
        var pulses: [Int: PreparedPulse] = [:]
        var running: [(end: Double, mix: MotorMagnitudes)] = []
        var nextPulse = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The motors now: the held mix until it expires, plus triggered pulses still running (summed).
    public func levels() -> MotorMagnitudes {
        state.withLock { state in
            guard let now = state.clock?.now else { return .off }
            let held = now < state.heldUntil ? state.held : .off
            return MotorMagnitudes.summed([held] + state.running.filter { $0.end > now }.map(\.mix))
        }
    }

    fileprivate func attach(_ clock: any HapticClock) { state.withLock { $0.clock = clock } }

    fileprivate func hold(_ mix: MotorMagnitudes) {
        state.withLock { state in
            let now = state.clock?.now ?? 0
            state.held = mix
            state.heldUntil = mix.isOff ? now : now + OutputTiming.holdSeconds + OutputTiming.expiryMarginSeconds
        }
    }

    fileprivate func renew() {
        state.withLock { state in
            if !state.held.isOff, let now = state.clock?.now {
                state.heldUntil = now + OutputTiming.holdSeconds + OutputTiming.expiryMarginSeconds
            }
        }
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
            state.running = state.running.filter { $0.end > now } + [(now + pulse.duration, pulse.mix)]
            return true
        }
        if !found { throw OutputFailure(.closed, "the prepared pulse \(id) was released") }
    }

    fileprivate func release(_ id: Int) { _ = state.withLock { $0.pulses.removeValue(forKey: id) } }

    fileprivate func reset() {
        state.withLock { state in
            state.held = .off
            state.heldUntil = -.infinity
            state.pulses = [:]
            state.running = []
        }
    }
}

struct VirtualOutputSource: OutputSource {
    let model: VirtualOutput

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
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
    func release(prepared id: Int) { model.release(id) }
    func close() { model.reset() }
    func currentLevels() -> MotorMagnitudes? { model.levels() }
}

// MARK: - Recording

/// An output that records every primitive the engine sends it, with the engine clock's time.
public final class RecordingOutput: Sendable {
    /// One primitive the engine sent.
    public struct Record: Sendable, Hashable {
        public enum Action: Sendable, Hashable {
            case open
            case neutral
            case apply(MotorMagnitudes)
            case keepAlive
            case prepare(id: Int)
            case trigger(id: Int)
            case release(id: Int)
            case close
        }

        public var time: Double
        public var action: Action
    }

    private struct State {
        var clock: (any HapticClock)?
        var records: [Record] = []
        var plugged = true
        var slots: Int?
        var preparedCount = 0
        var nextPrepared = 0
        var failures: [OutputFailure.Kind] = []
        var watchers: [Int: @Sendable (OutputPresence) -> Void] = [:]
        var nextWatcher = 0
    }

    private let state: Mutex<State>
    /// The profile it reports, as a device's output reports the one chosen from its driver.
    public let renderProfile: RenderProfile

    /// `effectSlots` limits prepared pulses like a device's slot count (the mix slot takes one);
    /// `renderProfile` is what the output reports as chosen for it (the engine option overrides it).
    public init(effectSlots: Int? = nil, renderProfile: RenderProfile = .genericRumble) {
        state = Mutex(State(slots: effectSlots))
        self.renderProfile = renderProfile
    }

    public func records() -> [Record] { state.withLock { $0.records } }

    /// The mixes applied, in order, with their times (neutral counts as off).
    public func appliedMixes() -> [(time: Double, mix: MotorMagnitudes)] {
        records().compactMap { record in
            switch record.action {
            case .apply(let mix): (record.time, mix)
            case .neutral: (record.time, .off)
            default: nil
            }
        }
    }

    public func clearRecords() { state.withLock { $0.records.removeAll() } }

    /// Makes the next `count` primitives (apply, keep-alive, prepare, trigger, neutral) fail with `kind`.
    public func failNext(_ kind: OutputFailure.Kind, count: Int = 1) {
        state.withLock { $0.failures += Array(repeating: kind, count: count) }
    }

    /// Pretends the device was unplugged: primitives fail with `deviceGone` and watchers hear of it.
    public func unplug() {
        let watchers = state.withLock { state in
            state.plugged = false
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher(.removed) }
    }

    /// Pretends the device came back: opening works again and watchers hear of it.
    public func replug() {
        let watchers = state.withLock { state in
            state.plugged = true
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher(.appeared) }
    }

    fileprivate func record(_ action: Record.Action) throws(OutputFailure) {
        let failure: OutputFailure? = state.withLock { state in
            if !state.plugged { return OutputFailure(.deviceGone, "the recording output is unplugged") }
            if !state.failures.isEmpty {
                let kind = state.failures.removeFirst()
                return OutputFailure(kind, "injected \(kind.rawValue) failure")
            }
            if case .prepare = action, let slots = state.slots, state.preparedCount + 1 >= slots {
                return OutputFailure(.noSlot, "no free effect slot (\(slots) slots)")
            }
            switch action {
            case .prepare: state.preparedCount += 1
            case .release: state.preparedCount -= 1
            case .close: state.preparedCount = 0
            default: break
            }
            state.records.append(Record(time: state.clock?.now ?? 0, action: action))
            return nil
        }
        if let failure { throw failure }
    }

    fileprivate func open(clock: any HapticClock) throws(OutputFailure) {
        let plugged = state.withLock { state in
            state.clock = clock
            return state.plugged
        }
        guard plugged else { throw OutputFailure(.notFound, "the recording output is unplugged") }
        try record(.open)
    }

    fileprivate func nextPreparedID() -> Int {
        state.withLock { state in
            defer { state.nextPrepared += 1 }
            return state.nextPrepared
        }
    }

    fileprivate func addWatcher(_ handler: @escaping @Sendable (OutputPresence) -> Void) -> Int {
        state.withLock { state in
            defer { state.nextWatcher += 1 }
            state.watchers[state.nextWatcher] = handler
            return state.nextWatcher
        }
    }

    fileprivate func removeWatcher(_ key: Int) { _ = state.withLock { $0.watchers.removeValue(forKey: key) } }

    /// Records without failing (close and release cannot fail).
    fileprivate func note(_ action: Record.Action) {
        state.withLock { state in
            if case .release = action { state.preparedCount -= 1 }
            if case .close = action { state.preparedCount = 0 }
            state.records.append(Record(time: state.clock?.now ?? 0, action: action))
        }
    }
}

struct RecordingOutputSource: OutputSource {
    let recorder: RecordingOutput

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput {
        try recorder.open(clock: clock)
        return RecordingMotorOutput(recorder: recorder)
    }

    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? {
        RecordingWatch(recorder: recorder, key: recorder.addWatcher(handler))
    }
}

private struct RecordingWatch: OutputWatch {
    let recorder: RecordingOutput
    let key: Int
    func cancel() { recorder.removeWatcher(key) }
}

private final class RecordingMotorOutput: MotorOutput {
    let recorder: RecordingOutput
    private let closed = Atomic<Bool>(false)
    init(recorder: RecordingOutput) { self.recorder = recorder }

    var capabilities: OutputCapabilities {
        OutputCapabilities(name: "recording output", isVirtual: true, renderProfile: recorder.renderProfile)
    }

    private func record(_ action: RecordingOutput.Record.Action) throws(OutputFailure) {
        if closed.load(ordering: .acquiring) { throw OutputFailure(.closed, "the recording output was closed") }
        try recorder.record(action)
    }

    func sendNeutral() throws(OutputFailure) { try record(.neutral) }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) { try record(.apply(mix)) }
    func keepAlive() throws(OutputFailure) { try record(.keepAlive) }
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        let id = recorder.nextPreparedID()
        try record(.prepare(id: id))
        return id
    }
    func trigger(prepared id: Int) throws(OutputFailure) { try record(.trigger(id: id)) }
    func release(prepared id: Int) {
        if !closed.load(ordering: .acquiring) { recorder.note(.release(id: id)) }
    }
    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { recorder.note(.close) }
    }
    func currentLevels() -> MotorMagnitudes? { nil }
}
