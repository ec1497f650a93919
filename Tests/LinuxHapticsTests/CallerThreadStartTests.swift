// A start due now is planned and written on the caller's thread: the first mix reaches the output before
// `start(atTime: 0)` returns, whatever the playback thread is doing. The engine runs on a clock whose timer
// never runs its work when woken, only when the test says (a playback thread the scheduler has not run yet),
// so what the caller's thread did is told apart from what the timer did.
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import LinuxInput
import Testing

@testable import LinuxHaptics
@_spi(Internals) import LinuxSystem

/// A manual clock's time with a timer that only counts its wake-ups; `runTimer()` runs its work, as the
/// playback thread would once scheduled.
private final class StalledTimerClock: HapticClock {
    let time = ManualClock(startingAt: 10)
    private let work = Lock<(@Sendable () -> Double?)?>(nil)
    private let wakes = Lock(0)

    var now: Double { time.now }
    var wakeCount: Int { wakes.withLock { $0 } }

    func makeTimer(_ work: @escaping @Sendable () -> Double?) -> any HapticTimer {
        timerHeld.withLock { $0.waiting = $0.held }
        while timerHeld.withLock({ $0.held }) { Sys.yield() }
        timerHeld.withLock { $0.waiting = false }
        self.work.withLock { $0 = work }
        return Timer(clock: self)
    }

    /// Whether the next timer is held (`holdTimers`), and whether an engine's start is waiting for it now.
    private let timerHeld = Lock((held: false, waiting: false))
    /// Makes the next timers wait, until `releaseTimers()`, as a start that made its engine run and has its timer
    /// still to make.
    func holdTimers() { timerHeld.withLock { $0.held = true } }
    func releaseTimers() { timerHeld.withLock { $0.held = false } }
    var aStartWaitsForItsTimer: Bool { timerHeld.withLock { $0.waiting } }

    func runTimer() { _ = work.withLock { $0 }?() }

    private struct Timer: HapticTimer {
        let clock: StalledTimerClock
        func wake() { clock.wakes.withLock { $0 += 1 } }
        func cancel() { clock.work.withLock { $0 = nil } }
    }
}

@Suite struct CallerThreadStartTests {
    private let clock = StalledTimerClock()
    private let recorder = RecordingOutput()
    private let engine: HapticEngine

    init() throws {
        engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        try engine.start()
        clock.runTimer()
    }

    @Test func theFirstMixIsWrittenBeforeStartReturns() throws {
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.05)))
        let wakesBefore = clock.wakeCount
        try player.start(atTime: 0)
        #expect(recorder.appliedMixes().map(\.time) == [10])
        #expect(recorder.appliedMixes().map(\.mix) == [MotorMagnitudes(strong: 1, weak: 0)])
        #expect(clock.wakeCount > wakesBefore, "the timer is woken for the deadlines after the first command")
        clock.time.advance(by: 0.05)
        clock.runTimer()
        #expect(recorder.appliedMixes().map(\.mix) == [MotorMagnitudes(strong: 1, weak: 0), .off])
    }

    @Test func aLaterStartIsLeftToTheTimer() throws {
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.05)))
        try player.start(atTime: clock.now + 0.01)
        #expect(recorder.appliedMixes().isEmpty)
        clock.time.advance(by: 0.01)
        clock.runTimer()
        #expect(recorder.appliedMixes().map(\.mix) == [MotorMagnitudes(strong: 1, weak: 0)])
    }

    @Test func aPlayerThatFinishedInACallersPassHearsOfItWhenTheEngineStopsFirst() throws {
        let first = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.01)))
        let firstFinished = Inbox<HapticEngineError?>()
        first.completionHandler = { firstFinished.put($0) }
        try first.start(atTime: 0)
        clock.time.advance(by: 0.02)
        // The second start's pass, on this thread, finds the first player at its end: its completion waits
        // for the timer, which the stop below ends before it runs.
        let second = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.05)))
        try second.start(atTime: 0)
        #expect(firstFinished.all.isEmpty)
        engine.stop()
        #expect(firstFinished.all.map { $0?.kind } == [nil], "finished, not stopped: nil, once")
    }

    /// A stop on another thread between a caller's pass and its hand-over to the timer (here while the pass writes,
    /// the stop let return before the pass goes on): a player that finished in that pass still hears of it, on the
    /// caller's thread, the timer being gone. Until 7 December its completion was left for the stopped engine's
    /// timer, and never called.
    @Test func aPlayerThatFinishedInACallersPassHearsOfItWhenAStopComesBeforeTheHandOver() throws {
        let (engine, clock, hook) = try Self.engineWithAWriteHook()
        let first = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.01)))
        let firstFinished = Inbox<HapticEngineError?>()
        first.completionHandler = { firstFinished.put($0) }
        try first.start(atTime: 0)
        clock.time.advance(by: 0.02)
        let stopper = Lock<ServiceThread?>(nil)
        hook.set {
            let thread = try? ServiceThread.start { engine.stop() }
            stopper.withLock { $0 = thread }
            while engine.core.state.withLock({ $0.timer != nil }) { Sys.yield() }
        }
        // The second start's pass, on this thread, finds the first player at its end, then writes the second's mix.
        let second = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.05)))
        try second.start(atTime: 0)
        stopper.withLock { $0 }?.join()
        #expect(stopper.withLock { $0 != nil }, "the pass wrote nothing: the test checks nothing")
        #expect(firstFinished.all.map { $0?.kind } == [nil], "finished, not stopped: nil, once")
    }

    /// A players-finished handler whose players finished in a caller's pass, an app's `stop()` and `start()` coming
    /// between that pass and its hand-over to the timer (here while the pass writes the last player's end): the
    /// handler is told, and its `.stopEngine` does not stop the engine started since. Until 7 December it did.
    @Test func aFinishedHandlerOfAStoppedRunDoesNotStopTheEngineStartedSince() throws {
        let (engine, clock, hook) = try Self.engineWithAWriteHook(atRestOnly: true)
        let first = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.01)))
        try first.start(atTime: 0)
        let told = Lock(0)
        engine.notifyWhenPlayersFinished { _ in
            told.withLock { $0 += 1 }
            return .stopEngine
        }
        clock.time.advance(by: 0.02)
        hook.set {
            let stopper = try? ServiceThread.start { engine.stop() }
            stopper?.join()
            try? engine.start()
        }
        // Nothing to play: the start's pass, on this thread, writes the first player's end (the hook runs there)
        // and finds every player finished.
        let empty = try engine.makeAdvancedPlayer(timeline: timeline())
        try? empty.start(atTime: 0)
        #expect(hook.isSpent, "the pass wrote no rest: the test checks nothing")
        clock.runTimer()
        #expect(told.withLock { $0 } == 1)
        #expect(engine.isRunning, "the stopped run's players-finished handler stopped the engine started since")
    }

    /// A started engine on a stalled timer whose next write (`atRestOnly`: the next write of a rest) runs the action
    /// the test sets on the hook, once, on the writing thread, as the pass writes.
    private static func engineWithAWriteHook(atRestOnly: Bool = false) throws -> (
        HapticEngine, StalledTimerClock, WriteHook
    ) {
        let hook = WriteHook()
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in if !atRestOnly || sample.mix.isOff { hook.run() } }
        let clock = StalledTimerClock()
        let engine = HapticEngine(
            output: .recording(RecordingOutput()), options: options, clock: clock, logger: quietLogger())
        try engine.start()
        clock.runTimer()
        return (engine, clock, hook)
    }

    /// An action to run once, at the next write.
    private final class WriteHook: Sendable {
        private let action = Lock<(@Sendable () -> Void)?>(nil)
        func set(_ action: @escaping @Sendable () -> Void) { self.action.withLock { $0 = action } }
        /// Runs the action set, if any, and forgets it.
        func run() {
            action.withLock { taken in
                defer { taken = nil }
                return taken
            }?()
        }
        /// Whether the action set has run.
        var isSpent: Bool { action.withLock { $0 == nil } }
    }

    /// A start on an engine due to idle (the timer asleep past the idle's time) leaves the idle to the timer: the
    /// start's pass on the caller's thread neither closes the device nor calls the stopped handler, and the timer's
    /// next pass does both. Until 7 December the caller's pass idled the engine, its stopped handler was left for the
    /// timer, and a `stop()` in between waited for that handler for ever.
    @Test func aStartOnAnEngineDueToIdleLeavesTheIdleToTheTimer() throws {
        var options = HapticEngineOptions()
        options.autoShutdownDelay = 1
        let clock = StalledTimerClock()
        let engine = HapticEngine(output: .recording(recorder), options: options, clock: clock, logger: quietLogger())
        let told = Inbox<HapticEngineStoppedReason>()
        engine.stoppedHandler = { told.put($0) }
        try engine.start()
        clock.runTimer()
        // Nothing to play: the start leaves nothing active.
        let player = try engine.makeAdvancedPlayer(timeline: timeline())
        clock.time.advance(by: 2)
        let wakesBefore = clock.wakeCount
        try player.start(atTime: 0)
        #expect(engine.isRunning, "the start's pass idled the engine")
        #expect(recorder.records().last?.action != .close)
        #expect(told.all.isEmpty)
        #expect(clock.wakeCount > wakesBefore, "the timer is woken for the idle")
        clock.runTimer()
        #expect(!engine.isRunning)
        #expect(told.all == [.idleTimeout])
    }

    /// A write that fails on a caller's thread while the engine's start, on another thread, has made it run and is
    /// making its timer: the stopped handler is called by that timer, not inside the caller's `start(atTime:)`.
    @Test func aWriteThatFailsWhileTheStartMakesItsTimerStopsTheEngineFromThatTimer() throws {
        let clock = StalledTimerClock()
        let engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        let reasons = Inbox<HapticEngineStoppedReason>()
        engine.stoppedHandler = { reasons.put($0) }
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.05)))
        clock.holdTimers()
        let starter = try ServiceThread.start { try? engine.start() }
        while !clock.aStartWaitsForItsTimer { Sys.yield() }
        recorder.failNext(.other)
        try player.start(atTime: 0)
        #expect(reasons.all.isEmpty, "handlers run on an engine thread, not inside start")
        clock.releaseTimers()
        starter.join()
        clock.runTimer()
        #expect(reasons.all == [.deviceError])
    }

    @Test func aWriteThatFailsOnTheCallersThreadStopsTheEngineFromTheTimer() throws {
        let reasons = Inbox<HapticEngineStoppedReason>()
        engine.stoppedHandler = { reasons.put($0) }
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.05)))
        let finished = Inbox<HapticEngineError?>()
        player.completionHandler = { finished.put($0) }
        recorder.failNext(.other)
        try player.start(atTime: 0)
        #expect(reasons.all.isEmpty, "handlers run on an engine thread, not inside start")
        #expect(finished.all.isEmpty)
        clock.runTimer()
        #expect(reasons.all == [.deviceError])
        #expect(finished.all.map { $0?.kind } == [.deviceError])
        #expect(!engine.isRunning)
        #expect(recorder.records().last?.action == .close)
    }
}
