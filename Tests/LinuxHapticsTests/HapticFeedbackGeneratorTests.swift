// The vocabulary's front door: the user's switch, the rate limits on an injected clock, and the service
// protocol, with what reaches the output checked call by call.
import AHAP
import Foundation
import LinuxHaptics
import AppHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@MainActor
final class RecordingFeedbackOutput: HapticFeedbackOutput {
    var played: [HapticPattern] = []
    var prepares = 0
    var prepared: [HapticPattern] = []
    func prepare() { prepares += 1 }
    func prepare(pattern: HapticPattern) { prepared.append(pattern) }
    func play(pattern: HapticPattern) { played.append(pattern) }
}

/// A clock that reads whatever the test sets, as an app's own clock might.
final class SetClock: HapticClock {
    let reading = Lock(0.0)
    private let timers = ManualClock()
    var now: Double { reading.withLock { $0 } }
    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        timers.makeTimer(work)
    }
}

@MainActor
@Suite struct HapticFeedbackGeneratorTests {
    static func generator(
        settings: FeedbackSettingsStore, time: ManualClock
    ) -> (HapticFeedbackGenerator, RecordingFeedbackOutput) {
        let output = RecordingFeedbackOutput()
        let generator = HapticFeedbackGenerator(
            output: output, settings: settings, clock: time, logger: RecordingLog().logger)
        return (generator, output)
    }

    static func settings(_ scratch: ScratchFolder) -> FeedbackSettingsStore {
        FeedbackSettingsStore(
            fileURL: scratch.url.appendingPathComponent("settings.json"), logger: RecordingLog().logger)
    }

    @Test func playsTheVocabularysPatterns() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = ManualClock()
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: time)
        let calls: [HapticFeedback] = [
            .impact(.light), .notification(.success), .selection, .impact(.heavy, intensity: 1),
        ]
        for (index, feedback) in calls.enumerated() {
            time.set(to: Double(index * 200) / 1000)
            #expect(generator.play(feedback) == .played)
        }
        #expect(output.played == calls.map(\.pattern))
    }

    @Test func dropsAreCountedAndNeverReachTheOutput() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = ManualClock()
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: time)
        for millisecond in stride(from: 0, through: 1000, by: 10) {
            time.set(to: Double(millisecond) / 1000)
            generator.play(.selection)
        }
        #expect(output.played.count == 11 && generator.playedCount == 11)
        #expect(generator.droppedCount == 90)
    }

    @Test func theSwitchSilencesEverythingAndPersists() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = ManualClock()
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: time)
        generator.hapticsEnabled = false
        #expect(generator.play(.impact(.heavy)) == .disabled)
        time.advance(by: 1)
        generator.playFeedback(.success)
        generator.prepare()
        #expect(output.played.isEmpty && output.prepares == 0)
        #expect(generator.droppedCount == 0, "switched-off calls within the limits are not rate-limit drops")
        // A new run reads the switch back.
        let (restarted, _) = Self.generator(settings: Self.settings(scratch), time: time)
        #expect(restarted.hapticsEnabled == false)
    }

    @Test func withHapticsOffTheRateLimitsStillDropACallWithoutCountingItPlayed() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = ManualClock()
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: time)
        generator.hapticsEnabled = false
        #expect(generator.play(.impact(.heavy)) == .disabled)
        #expect(generator.play(.impact(.heavy)) == .dropped(.tooSoon))
        #expect(output.played.isEmpty)
        #expect(generator.playedCount == 0 && generator.droppedCount == 1)
        // Switched back on, the haptic's own limits start afresh.
        generator.hapticsEnabled = true
        #expect(generator.play(.impact(.heavy)) == .played)
    }

    /// A clock of the app's own may read anything: a reading that is not a number, or past what the limiter's
    /// nanoseconds hold, is judged (as 0, or clamped) rather than trapping.
    @Test func aClockReadingThatIsNotANumberOrTooLargeIsJudgedWithoutTrapping() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = SetClock()
        let output = RecordingFeedbackOutput()
        let generator = HapticFeedbackGenerator(
            output: output, settings: Self.settings(scratch), clock: time, logger: RecordingLog().logger)
        time.reading.withLock { $0 = .nan }
        #expect(generator.play(.impact(.heavy)) == .played, "not a number: judged as 0")
        time.reading.withLock { $0 = 1e300 }
        #expect(generator.play(.impact(.heavy)) == .played, "past 292 years: clamped")
        time.reading.withLock { $0 = .infinity }
        #expect(generator.play(.impact(.heavy)) == .dropped(.tooSoon), "clamped to the same instant as the last")
        #expect(output.played.count == 2)
    }

    @Test func theServiceMapsOutcomesToTheVocabulary() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let time = ManualClock()
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: time)
        let service: any HapticFeedbackService = generator
        for (index, outcome) in [AppFeedback.success, .pass, .warning].enumerated() {
            time.set(to: Double(index * 200) / 1000)
            service.playFeedback(outcome)
        }
        #expect(
            output.played == [
                HapticFeedback.impact(.heavy).pattern, HapticFeedback.impact(.rigid).pattern,
                HapticFeedback.notification(.warning).pattern,
            ])
    }

    @Test func prepareReachesTheOutput() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let (generator, output) = Self.generator(settings: Self.settings(scratch), time: ManualClock())
        generator.prepare()
        generator.prepare(.impact(.rigid))
        #expect(output.prepares == 1)
        #expect(output.prepared == [HapticFeedback.impact(.rigid).pattern])
    }
}
