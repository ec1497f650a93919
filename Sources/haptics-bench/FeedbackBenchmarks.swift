// Feedback service: trigger-to-output of `playFeedback(.success | .pass | .warning)` through
// HapticFeedbackGenerator -> HapticManager -> engine, to the first upload or play a virtual pad records (kernel
// CLOCK_MONOTONIC timestamps), cold and with the generator's prepare() / prepare(feedback) called ahead. The
// baseline, interleaved in the same run: a raw EventDevice upload-then-play of one rumble effect on the same pad.
import HapticTestDevices
import Foundation
import LinuxHaptics
import LinuxInput
import Logging

let feedbackKernelBenchmarks = BenchmarkGroup(name: "Feedback service on a virtual pad", needsKernel: true) {
    guard FileManager.default.fileExists(atPath: "/dev/uinput") else {
        return [
            BenchmarkResult(
                measurement: Measurement(name: "playFeedback trigger-to-output", unit: "", samples: []),
                note: "skipped: no /dev/uinput here (scripts/bench runs this group in the VM bench)")
        ]
    }
    return try await FeedbackBench.triggerToOutput()
}

@MainActor
enum FeedbackBench {
    /// The target: trigger-to-output under 50 ms.
    static let targetMilliseconds = 50.0
    /// Rounds per path; HAPTICS_BENCH_FEEDBACK_ROUNDS overrides.
    static var rounds: Int {
        ProcessInfo.processInfo.environment["HAPTICS_BENCH_FEEDBACK_ROUNDS"].flatMap(Int.init) ?? 50
    }
    static let warmUpRounds = 2
    /// After a trigger is seen: longer than the longest feedback (warning: taps 150 ms apart plus the stretched
    /// second tap), so its later writes never land in the next trigger's window, and far over the standard
    /// limits' spacing (50 ms, 5 per 500 ms, 10 per second), so the limiter admits every call.
    static let settleAfterTrigger = Duration.milliseconds(350)
    /// Between a prepare and the trigger it prepares for: the upload is done before the clock starts.
    static let prepareLead = Duration.milliseconds(20)
    static let baselinePulseMilliseconds: UInt16 = 20
    /// How long a trigger may take to reach the pad before the bench gives up.
    static let seenTimeoutMicroseconds: Int64 = 5_000_000

    enum Preparation: CaseIterable {
        case none, device, feedback
        var label: String {
            switch self {
            case .none: "cold"
            case .device: "prepare() ahead"
            case .feedback: "prepare(feedback) ahead"
            }
        }
    }

    struct Path: Hashable {
        let feedback: AppFeedback
        let preparation: Preparation
    }

    /// Waits for the pad's first upload or play at or after `start` (µs); its kernel timestamp.
    static func firstWrite(_ pad: VirtualPad, after start: Int64, from index: Int) async throws -> (
        time: Int64, next: Int
    ) {
        let deadline = EngineBench.microseconds() + seenTimeoutMicroseconds
        while EngineBench.microseconds() < deadline {
            let records = pad.records()
            if let found = records[min(index, records.count)...].firstIndex(where: {
                ($0.event == .play || $0.event == .upload) && $0.time.microseconds >= start
            }) {
                return (records[found].time.microseconds, found + 1)
            }
            try await Task.sleep(for: .microseconds(200))
        }
        throw EngineBench.BenchFailure(reason: "the pad never saw the feedback")
    }

    static func triggerToOutput() async throws -> [BenchmarkResult] {
        let logger = EngineBench.logger()
        let pad = try VirtualPad(VirtualPadConfiguration(), logger: logger)
        defer { pad.destroy() }
        let provider = EngineOutputProvider(
            output: .device(.node(pad.eventNode)), options: EngineBench.padOptions(), logger: logger)
        let manager = HapticManager(resolver: DefaultHapticResourceResolver(), engineProvider: provider, logger: logger)
        guard manager.engineAvailable else {
            throw EngineBench.BenchFailure(reason: "the manager found no engine on the virtual pad")
        }
        let settingsURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "haptics-bench-feedback-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: settingsURL) }
        // The standard limits: the spacing above keeps every call admitted, and the counts below prove it.
        let generator = HapticFeedbackGenerator(
            output: manager, settings: FeedbackSettingsStore(fileURL: settingsURL, logger: logger), logger: logger)
        let client = try EventDevice(node: pad.eventNode, logger: logger)
        defer { client.close() }

        let paths = AppFeedback.allCases.flatMap { feedback in
            Preparation.allCases.map { Path(feedback: feedback, preparation: $0) }
        }
        var samples: [Path: [Double]] = [:]
        var playSamples: [Path: [Double]] = [:]
        var baselineSamples: [Double] = []
        var index = 0
        // Every path once per round, with the baseline, so a slow stretch of the machine hits them alike.
        for round in 0..<(warmUpRounds + rounds) {
            let counted = round >= warmUpRounds
            for path in paths {
                switch path.preparation {
                case .none: break
                case .device: generator.prepare()
                case .feedback: generator.prepare(path.feedback.feedback)
                }
                if path.preparation != .none { try await Task.sleep(for: prepareLead) }
                let start = EngineBench.microseconds()
                generator.playFeedback(path.feedback)
                let seen = try await firstWrite(pad, after: start, from: index)
                // The output starts at the play; on a cold path an upload comes before it.
                let played = try await EngineBench.padPlay(pad, after: start, from: seen.next - 1)
                index = played.next
                if counted {
                    samples[path, default: []].append(Double(seen.time - start) / 1000)
                    playSamples[path, default: []].append(Double(played.time - start) / 1000)
                }
                try await Task.sleep(for: settleAfterTrigger)
            }
            let start = EngineBench.microseconds()
            let effect = try client.uploadEffect(
                .rumble(strong: 1, weak: 1, lengthMilliseconds: baselinePulseMilliseconds))
            try effect.play()
            let seen = try await firstWrite(pad, after: start, from: index)
            index = seen.next
            // Upload then play: the pad records the upload first; the output starts with the play.
            let played = try await EngineBench.padPlay(pad, after: start, from: index - 1)
            index = played.next
            if counted { baselineSamples.append(Double(played.time - start) / 1000) }
            try await Task.sleep(for: settleAfterTrigger)
            try effect.erase()
        }

        let expectedPlays = (warmUpRounds + rounds) * paths.count
        guard generator.droppedCount == 0, generator.playedCount == expectedPlays else {
            throw EngineBench.BenchFailure(
                reason:
                    "the rate limiter dropped \(generator.droppedCount) and admitted \(generator.playedCount) of \(expectedPlays)"
            )
        }
        let baseline = Measurement(
            name: "raw EventDevice upload then play, call -> pad sees play", unit: "ms", samples: baselineSamples)
        var results = [BenchmarkResult(measurement: baseline, note: "baseline, same pad, interleaved")]
        for path in paths {
            let ours = Measurement(
                name: "playFeedback(.\(path.feedback.rawValue)), \(path.preparation.label) -> pad's first upload/play",
                unit: "ms",
                samples: samples[path, default: []])
            let toPlay = Measurement(name: "", unit: "ms", samples: playSamples[path, default: []])
            let verdict =
                toPlay.maximum < targetMilliseconds
                ? "pass" : (toPlay.percentile(99) < targetMilliseconds ? "pass at p99, max over" : "FAIL")
            results.append(
                BenchmarkResult(
                    measurement: ours, baseline: "the baseline", ratio: ours.percentile(50) / baseline.percentile(50),
                    note: String(
                        format: "p99 ratio %.2f; to the play: p50 %.3f, p99 %.3f, max %.3f ms",
                        ours.percentile(99) / baseline.percentile(99),
                        toPlay.percentile(50), toPlay.percentile(99), toPlay.maximum)
                        + "; play under \(Int(targetMilliseconds)) ms: \(verdict)"))
        }
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "calls admitted / dropped by the standard rate limits", unit: "",
                    samples: [Double(generator.playedCount)]),
                note: "\(generator.droppedCount) dropped"))
        return results
    }
}
