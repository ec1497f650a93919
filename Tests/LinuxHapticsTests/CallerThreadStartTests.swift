// A start due now is planned and written on the caller's thread: the first mix reaches the output before
// `start(atTime: 0)` returns, whatever the playback thread is doing. The engine runs on a clock whose timer
// never runs its work when woken, only when the test says (a playback thread the scheduler has not run yet),
// so what the caller's thread did is told apart from what the timer did.
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import LinuxInput
import Testing
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
        self.work.withLock { $0 = work }
        return Timer(clock: self)
    }

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
