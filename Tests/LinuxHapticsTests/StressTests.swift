// Many callers at once, on a real engine (its own playback thread) over the recording output: 16 tasks calling
// the manager and the feedback generator together a thousand times a second. Nothing may crash (the sanitizer
// runs of `make test-sanitize` include this), the rate limits must hold over the time the storm took, and what
// reaches the device stays within what the planner can send. The time is a clock the test steps after each
// round of 16 calls (16 ms: a thousand calls a second), the playback thread woken at every change point on the
// way: the counts are checked against that time, which the machine's speed cannot stretch or shrink.
import AHAP
import Foundation
import HapticRendering
import LinuxHaptics
import AppHaptics
import LinuxHapticsTesting
import Testing

@MainActor
@Suite struct StressTests {
    nonisolated static let tasks = 16
    nonisolated static let callsPerTask = 300
    /// The clock's step after each round of calls, one call per task.
    static let round = 0.016

    @Test func sixteenCallersMakingAThousandCallsASecondKeepTheLimitsAndTheDeviceTrafficBounded() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let recorder = RecordingOutput()
        let clock = SteppedClock()
        let provider = EngineOutputProvider(output: .recording(recorder), clock: clock, logger: quietLogger())
        let manager = HapticManager(
            resolver: HapticResourceDirectory(directory: AppAssets.folder), engineProvider: provider,
            logger: quietLogger())
        manager.preloadPatterns()
        let generator = HapticFeedbackGenerator(
            output: manager,
            settings: FeedbackSettingsStore(
                fileURL: scratch.url.appendingPathComponent("settings.json"), logger: quietLogger()),
            clock: clock, logger: quietLogger())
        let started = clock.now
        for call in 0..<Self.callsPerTask {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<Self.tasks {
                    group.addTask {
                        await MainActor.run {
                            switch (task + call) % 4 {
                            case 0: manager.playTransientEvent(intensity: Double(call % 10) / 10, sharpness: 0.5)
                            case 1: generator.play(.selection)
                            case 2: manager.play("thud")
                            default: generator.playFeedback(.success)
                            }
                        }
                    }
                }
            }
            clock.advance(by: Self.round)
        }
        let elapsed = clock.now - started
        #expect(manager.engineAvailable)
        // The limits, counted over the storm's own length: 50 ms apart and 10 per second at most.
        let limits = generator.limits
        let spacing = Double(limits.minimumSpacing.components.attoseconds) / 1e18
        let played = "\(generator.playedCount) played in \(elapsed) s"
        #expect(generator.playedCount <= Int(elapsed / spacing) + 1, "\(played)")
        #expect(generator.playedCount <= limits.sustainedCount * (Int(elapsed) + 1), "\(played)")
        #expect(generator.playedCount + generator.droppedCount == Self.tasks * Self.callsPerTask / 2)
        // The device gets no more than the planner's budget (the generic profile's: 50 a second after a burst of
        // 8), plus the prepared pulses' triggers and stops and the renewals in between.
        let applied = recorder.appliedMixes().count
        let budget = RenderProfile.genericRumble.budget
        #expect(applied <= Int(budget.burst + elapsed * budget.writesPerSecond) + 2, "\(applied) writes")
    }
}
