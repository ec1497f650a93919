// Handlers let go and handlers waited for. A handler may hold the last reference to a player or an engine, whose
// release calls into an engine: the engine lets a replaced or forgotten handler go after its lock, never under it
// (that lock taken again on the same thread trapped). And a stop waits for every stopped handler under way on
// another thread, whatever started it (a players-finished handler's stop, the idle shutdown).
import AHAP
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct HandlerReleaseTests {
    static func engine(_ recorder: RecordingOutput = RecordingOutput()) throws -> HapticEngine {
        let engine = HapticEngine(output: .recording(recorder), clock: SteppedClock(), logger: quietLogger())
        try engine.start()
        return engine
    }

    static func player(of engine: HapticEngine) throws -> any HapticAdvancedPatternPlayer {
        try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.1)))
    }

    /// Each replaced or forgotten handler held the last reference to a player: its release (the player's handle
    /// going) trapped on the engine's lock, until 6 December. The handler and the player are let go, and the engine
    /// plays on.
    @Test(arguments: ["completion replaced", "stopped handler replaced", "destroyed", "reset"])
    func aHandlerHoldingAPlayersLastReferenceIsLetGoAfterTheLock(_ how: String) throws {
        let recorder = RecordingOutput()
        var engine: HapticEngine? = try Self.engine(recorder)
        let released = Lock(false)
        let kept = try Self.player(of: engine!)
        do {
            let player = try Self.player(of: engine!)
            let watch = ReleaseWatch { released.withLock { $0 = true } }
            switch how {
            case "completion replaced":
                kept.completionHandler = { _ in withExtendedLifetime((watch, player)) {} }
            case "stopped handler replaced":
                engine!.stoppedHandler = { _ in withExtendedLifetime(watch) { try? player.start(atTime: 0) } }
            default:
                player.completionHandler = { _ in withExtendedLifetime(watch) { try? player.start(atTime: 0) } }
            }
        }
        switch how {
        case "completion replaced": kept.completionHandler = nil
        case "stopped handler replaced": engine!.stoppedHandler = nil
        case "destroyed": engine = nil
        default:
            recorder.unplug()
            recorder.replug()
        }
        #expect(released.withLock { $0 }, "the handler, and the player it held, were let go")
        if let engine {
            try Self.player(of: engine).start(atTime: 0)
            engine.stop()
        }
    }

    /// Replacing one engine's stopped handler let go of the last reference to another engine under the first's
    /// lock: the second was destroyed there, and its own stopped handler, which reads the first, trapped on it
    /// (until 6 December).
    @Test func aHandlerHoldingAnotherEnginesLastReferenceIsLetGoAfterTheLock() throws {
        let first = try Self.engine()
        defer { first.stop() }
        var second: HapticEngine? = try Self.engine()
        let heard = Lock<[HapticEngineStoppedReason]>([])
        second!.stoppedHandler = { [weak first] reason in
            _ = first?.isRunning
            heard.withLock { $0.append(reason) }
        }
        first.stoppedHandler = { [second] _ in second?.stop() }
        second = nil
        first.stoppedHandler = nil
        #expect(heard.withLock { $0 } == [.engineDestroyed])
        #expect(first.isRunning)
    }

    /// A stop waits for the stopped handler a players-finished handler's `.stopEngine` started on the playback
    /// thread, and for the idle shutdown's, though another stop on another thread took the playback thread first:
    /// until 6 December neither handler was counted, and the second stop returned while it ran.
    @Test(arguments: ["players finished", "idle"])
    func aStopWaitsForAStoppedHandlerUnderWayOnThePlaybackThread(_ how: String) throws {
        var options = HapticEngineOptions()
        if how == "idle" { options.autoShutdownDelay = 0.05 }
        let engine = HapticEngine(
            output: .recording(RecordingOutput()), options: options, clock: MonotonicClock(), logger: quietLogger())
        let began = DeadlineWaiter()
        let progress = Lock((began: false, ended: false))
        engine.stoppedHandler = { _ in
            progress.withLock { $0.began = true }
            began.signal()
            Sys.sleep(nanoseconds: 200_000_000)
            progress.withLock { $0.ended = true }
        }
        try engine.start()
        if how == "idle" {
            let pattern = HapticPattern(
                events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 0.02)], parameters: [])
            try engine.makePlayer(with: pattern).start(atTime: 0)
        } else {
            engine.notifyWhenPlayersFinished { _ in .stopEngine }
        }
        began.wait(untilNanoseconds: MonotonicTime.nanoseconds() + 30_000_000_000)
        try #require(progress.withLock { $0.began }, "the stopped handler began")
        let other = try ServiceThread.start { engine.stop() }
        defer { other.join() }
        Sys.sleep(nanoseconds: 50_000_000)
        engine.stop()
        #expect(progress.withLock { $0.ended }, "stop() returned while the stopped handler ran")
    }
}

/// Runs `released` when the last reference to it goes.
private final class ReleaseWatch: Sendable {
    private let released: @Sendable () -> Void
    init(_ released: @escaping @Sendable () -> Void) { self.released = released }
    deinit { released() }
}
