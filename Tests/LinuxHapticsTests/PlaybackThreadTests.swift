// The real playback thread (the monotonic clock's timer thread) on a time the test moves: what it sends, in
// order and at which engine time, never how fast (timing belongs to `make bench`). The thread wakes at each
// change point the engine asks for and the time stands there while it works, so however late the machine
// wakes it, no change is merged into the next.
import AHAP
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct PlaybackThreadTests {
    /// Only a hang reaches this bound.
    static let hangGuardSeconds = 30.0

    @Test func theThreadPlaysAPatternToItsEndAndStops() async throws {
        let recorder = RecordingOutput()
        let clock = SteppedClock()
        let engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        try engine.start()
        let player = try engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 0, to: 0.03), pulse(0, 1, from: 0.03, to: 0.06)))
        let (finished, continuation) = AsyncStream.makeStream(of: Bool.self)
        player.completionHandler = { continuation.yield($0 == nil) }
        // A start ahead of now only wakes the thread: every write below is the thread's.
        try player.start(atTime: engine.currentTime + 0.01)
        clock.advance(by: 0.1)
        let outcome = await withTaskGroup(of: Bool?.self) { group in
            group.addTask { await finished.first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(Self.hangGuardSeconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(outcome == true)
        let applied = recorder.appliedMixes()
        #expect(applied.map(\.mix) == [MotorMagnitudes(strong: 1, weak: 0), MotorMagnitudes(strong: 0, weak: 1), .off])
        #expect(applied.map { Change(at: $0.time, $0.mix).time } == [10_000, 40_000, 70_000], "sent at 10, 40, 70 ms")
        engine.stop()
        #expect(recorder.records().last?.action == .close)
    }

    /// Two engines whose stopped handlers, each on its own engine's playback thread, stop the other engine at the
    /// same moment both stop and return: each stop waited for the other's playback thread to end, while that
    /// thread waited in its handler for this one's (a game stopping every pad when one fails, until 6 December).
    @Test func twoEnginesWhoseStoppedHandlersStopEachOtherBothReturn() throws {
        let recorders = [RecordingOutput(), RecordingOutput()]
        let engines = recorders.map {
            HapticEngine(output: .recording($0), clock: MonotonicClock(), logger: quietLogger())
        }
        let entered = Lock(0)
        let returned = Lock(0)
        let allReturned = DeadlineWaiter()
        let hangGuard = MonotonicTime.nanoseconds() + UInt64(Self.hangGuardSeconds * 1e9)
        for (index, engine) in engines.enumerated() {
            let other = engines[1 - index]
            engine.stoppedHandler = { _ in
                entered.withLock { $0 += 1 }
                // Both handlers under way before either stops the other engine.
                while entered.withLock({ $0 }) < 2 && MonotonicTime.nanoseconds() < hangGuard { Sys.yield() }
                other.stop()
                if returned.withLock({ count in
                    count += 1
                    return count
                }) == 2 {
                    allReturned.signal()
                }
            }
            try engine.start()
        }
        defer { engines.forEach { $0.stoppedHandler = nil } }
        for (engine, recorder) in zip(engines, recorders) {
            recorder.failNext(.noSlot, count: 100)
            // Ahead of now: the playback thread makes the write that fails, and runs the handler.
            let player = try engine.makePlayer(
                with: HapticPattern(
                    events: [
                        HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 0.1)
                    ], parameters: []))
            try player.start(atTime: engine.currentTime + 0.05)
        }
        allReturned.wait(untilNanoseconds: hangGuard)
        #expect(returned.withLock { $0 } == 2, "the handlers' stops returned")
        #expect(engines.allSatisfy { !$0.isRunning })
    }

    /// A cancelled player's completion handler runs on the playback thread, as every other completion does, not
    /// inside the caller's `cancel()`: a caller holding a lock the handler takes would otherwise deadlock.
    @Test func aCancelledPlayersCompletionRunsOnThePlaybackThreadNotTheCallers() throws {
        let recorder = RecordingOutput()
        let engine = HapticEngine(output: .recording(recorder), clock: SteppedClock(), logger: quietLogger())
        try engine.start()
        defer { engine.stop() }
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 5)))
        let ranOn = Inbox<UInt>()
        let done = DeadlineWaiter()
        player.completionHandler = { _ in
            ranOn.put(ServiceThread.currentID)
            done.signal()
        }
        try player.start(atTime: 0)
        try player.cancel()
        done.wait(untilNanoseconds: MonotonicTime.nanoseconds() + UInt64(Self.hangGuardSeconds * 1e9))
        #expect(ranOn.all.count == 1)
        #expect(ranOn.all.first != ServiceThread.currentID, "the handler ran inside cancel(), on the caller's thread")
    }
}
