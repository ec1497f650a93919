// A recording output for tests and the scheduler's own timing benchmark: it logs every primitive the engine
// sends with the engine clock's time, can limit effect slots like a device, fail on demand, and pretend to be
// unplugged and plugged back.
public import HapticRendering
public import LinuxHaptics
import LinuxInput
import Logging
import Synchronization
@_spi(Internals) import LinuxSystem

extension HapticOutputSelection {
    /// A recording output.
    public static func recording(_ recorder: RecordingOutput) -> HapticOutputSelection {
        HapticOutputSelection(source: RecordingOutputSource(recorder: recorder))
    }
}

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
            case stop(id: Int)
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
        var failures: [Failure] = []
        var watchers: [Int: @Sendable (OutputPresence) -> Void] = [:]
        var nextWatcher = 0
        var staged: [(time: Double, mix: MotorMagnitudes)] = []
        var aroundNextTrigger: (before: (@Sendable () -> Void)?, after: (@Sendable () -> Void)?)?
    }

    private let state: Lock<State>
    /// The profile it reports, as a device's output reports the one chosen from its driver.
    public let renderProfile: RenderProfile

    /// How long before its time the output asks a change between two non-zero mixes to be written, as a device
    /// whose such changes land on the kernel's next tick does (`MotorOutput.changeLead`).
    public let changeLead: Double

    /// `effectSlots` limits prepared pulses like a device's slot count (the mix slot takes one);
    /// `renderProfile` is what the output reports as chosen for it (the engine option overrides it); `changeLead`
    /// what it reports as its change lead.
    public init(effectSlots: Int? = nil, renderProfile: RenderProfile = .genericRumble, changeLead: Double = 0) {
        state = Lock(State(slots: effectSlots))
        self.renderProfile = renderProfile
        self.changeLead = changeLead
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

    /// The mixes the engine staged (`MotorOutput.stage`: made ready while the motors rest, changing nothing they
    /// do), with their times; not among the records.
    public func stagedMixes() -> [(time: Double, mix: MotorMagnitudes)] { state.withLock { $0.staged } }

    func noteStaged(_ mix: MotorMagnitudes) {
        state.withLock { state in state.staged.append((state.clock?.now ?? 0, mix)) }
    }

    /// A failure a device's primitive can have, as the engine sorts them.
    public enum Failure: Sendable, CaseIterable {
        /// Unplugged (`ENODEV`).
        case deviceGone
        /// Every effect slot taken (`ENOSPC`).
        case noSlot
        /// Not allowed (`EACCES`, `EPERM`).
        case permissionDenied
        /// The effect was rejected (`EINVAL`).
        case unsupported
        /// Any other errno.
        case other

        var kind: OutputFailure.Kind {
            switch self {
            case .deviceGone: .deviceGone
            case .noSlot: .noSlot
            case .permissionDenied: .permissionDenied
            case .unsupported: .unsupported
            case .other: .other
            }
        }
    }

    /// Makes the next `count` primitives (apply, keep-alive, prepare, trigger, neutral) fail with `failure`.
    public func failNext(_ failure: Failure, count: Int = 1) {
        state.withLock { $0.failures += Array(repeating: failure, count: count) }
    }

    /// Runs `before` on the thread of the next prepared pulse's trigger before it is written (a closed output then
    /// fails it), and `after` once it went out: for a test to act in between, as another thread might.
    public func aroundNextTrigger(
        before: (@Sendable () -> Void)? = nil, after: (@Sendable () -> Void)? = nil
    ) {
        state.withLock { $0.aroundNextTrigger = (before, after) }
    }

    fileprivate func takeTriggerHooks() -> (before: (@Sendable () -> Void)?, after: (@Sendable () -> Void)?)? {
        state.withLock { state in
            defer { state.aroundNextTrigger = nil }
            return state.aroundNextTrigger
        }
    }

    /// Forgets the failures `failNext` queued that have not happened yet.
    public func clearFailures() { state.withLock { $0.failures.removeAll() } }

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
                let kind = state.failures.removeFirst().kind
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

    /// The rhythm a device rendered with the same profile renews at.
    var renewal: OutputTiming.Renewal { .forProfile(recorder.renderProfile) }
    var changeLead: Double { recorder.changeLead }

    private func record(_ action: RecordingOutput.Record.Action) throws(OutputFailure) {
        if closed.load(ordering: .acquiring) { throw OutputFailure(.closed, "the recording output was closed") }
        try recorder.record(action)
    }

    func sendNeutral() throws(OutputFailure) { try record(.neutral) }
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure) { try record(.apply(mix)) }
    func keepAlive() throws(OutputFailure) { try record(.keepAlive) }
    func stage(_ mix: MotorMagnitudes) {
        if !closed.load(ordering: .acquiring) { recorder.noteStaged(mix) }
    }
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        let id = recorder.nextPreparedID()
        try record(.prepare(id: id))
        return id
    }
    func trigger(prepared id: Int) throws(OutputFailure) {
        let hooks = recorder.takeTriggerHooks()
        hooks?.before?()
        try record(.trigger(id: id))
        hooks?.after?()
    }
    func stop(prepared id: Int) throws(OutputFailure) { try record(.stop(id: id)) }
    func release(prepared id: Int) {
        if !closed.load(ordering: .acquiring) { recorder.note(.release(id: id)) }
    }
    func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { recorder.note(.close) }
    }
    func currentLevels() -> MotorMagnitudes? { nil }
}
