// The real playback thread on the monotonic clock: the order of what it sends, never how fast (timing
// belongs to `make bench`).
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing

@Suite struct PlaybackThreadTests {
    /// Only a hang reaches this bound.
    static let hangGuardSeconds = 30.0

    @Test func theThreadPlaysAPatternToItsEndAndStops() async throws {
        let recorder = RecordingOutput()
        let engine = HapticEngine(output: .recording(recorder), logger: quietLogger())
        try engine.start()
        let player = try engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 0, to: 0.03), pulse(0, 1, from: 0.03, to: 0.06)))
        let (finished, continuation) = AsyncStream.makeStream(of: Bool.self)
        player.completionHandler = { continuation.yield($0 == nil) }
        try player.start(atTime: engine.currentTime + 0.01)
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
        let mixes = recorder.appliedMixes().map(\.mix)
        // A late wake-up (a loaded machine) may merge changes; what was sent is still in order and ends off.
        #expect(mixes.first == MotorMagnitudes(strong: 1, weak: 0))
        #expect(mixes.last == .off)
        #expect(
            mixes.allSatisfy {
                [MotorMagnitudes(strong: 1, weak: 0), MotorMagnitudes(strong: 0, weak: 1), .off].contains($0)
            })
        let times = recorder.appliedMixes().map(\.time)
        #expect(times == times.sorted())
        engine.stop()
        #expect(recorder.records().last?.action == .close)
    }
}
