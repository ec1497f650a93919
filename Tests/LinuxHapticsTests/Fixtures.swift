// Shared fixtures: an engine on a manual clock and a recording output, and timelines built by hand.
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import LinuxHapticsTesting
import Logging
import AHAP
import Foundation
import Testing
import Glibc
@_spi(Internals) import LinuxSystem

func quietLogger() -> Logger {
    var logger = Logger(label: "linux-haptics-tests")
    logger.logLevel = .critical
    return logger
}

/// Waits, yielding, until `condition` holds; fails the test after 20 s rather than hanging it.
func spin(until what: String, _ condition: () -> Bool) throws {
    let deadline = Sys.monotonicNanoseconds() + 20_000_000_000
    while !condition() {
        guard Sys.monotonicNanoseconds() < deadline else {
            throw SpinTimeout(description: "20 s went by before \(what)")
        }
        Sys.yield()
    }
}

struct SpinTimeout: Error, CustomStringConvertible {
    var description: String
}

/// An engine on a manual clock starting at 10 s (so "time 0 means now" is distinguishable from time 0).
struct Rig {
    let clock = ManualClock(startingAt: 10)
    let recorder: RecordingOutput
    let engine: HapticEngine

    init(
        options: HapticEngineOptions = .init(), effectSlots: Int? = nil, renderProfile: RenderProfile = .genericRumble,
        changeLead: Double = 0, start: Bool = true
    ) throws {
        recorder = RecordingOutput(effectSlots: effectSlots, renderProfile: renderProfile, changeLead: changeLead)
        engine = HapticEngine(output: .recording(recorder), options: options, clock: clock, logger: quietLogger())
        if start { try engine.start() }
    }

    /// Applied mixes from `time` on, as (seconds after `time`, strong, weak) rounded to microseconds.
    func applied(since time: Double = 10) -> [Change] {
        recorder.appliedMixes().filter { $0.time >= time }.map { Change(at: $0.time - time, $0.mix) }
    }

    func actions() -> [RecordingOutput.Record.Action] { recorder.records().map(\.action) }
}

/// A change of the output, compared at microsecond and 1/1000 level precision.
struct Change: Equatable, CustomStringConvertible {
    let time: Int
    let strong: Int
    let weak: Int

    init(at time: Double, _ mix: MotorMagnitudes) {
        self.time = Int((time * 1e6).rounded())
        strong = Int((mix.strong * 1000).rounded())
        weak = Int((mix.weak * 1000).rounded())
    }

    init(at time: Double, strong: Double, weak: Double) {
        self.init(at: time, MotorMagnitudes(strong: strong, weak: weak))
    }

    var description: String { "\(time)us:\(strong)/\(weak)" }

    /// The same change, its time within `microseconds`: a drift's instant is solved for numerically, and a plan
    /// made again from one of its commands (a long mix's horizon) finds it from another origin.
    func matches(_ other: Change, within microseconds: Int = 100) -> Bool {
        abs(time - other.time) <= microseconds && strong == other.strong && weak == other.weak
    }
}

/// Records an issue for every change of `sent` that is not the matching one of `expected` (`Change.matches`), and
/// when their counts differ.
func expectSameChanges(_ sent: [Change], _ expected: [Change], _ label: String) {
    #expect(sent.count == expected.count, "\(label): \(sent.count) changes, \(expected.count) expected")
    for (a, b) in zip(sent, expected) {
        #expect(a.matches(b), "\(label): \(a) \(b)")
    }
}

func pulse(_ strong: Double, _ weak: Double, from start: Double = 0, to end: Double) -> MotorTimeline.Segment {
    let levels = MotorMagnitudes(strong: strong, weak: weak)
    return MotorTimeline.Segment(start: start, end: end, startLevels: levels, endLevels: levels)
}

func timeline(_ segments: MotorTimeline.Segment...) -> MotorTimeline { MotorTimeline(segments: segments) }

/// A long ramp after a 13 ms step (0.5 / 0.4, which puts the renewals that carry the ramp's levels off the 2 s
/// horizons' instants): from `from` at 13 ms to `to` at `end` seconds.
func rampAfterAStep(to end: Double, from: MotorMagnitudes, to: MotorMagnitudes) -> MotorTimeline {
    timeline(
        pulse(0.5, 0.4, to: 0.013),
        MotorTimeline.Segment(start: 0.013, end: end, startLevels: from, endLevels: to))
}

extension RenderProfile {
    /// 8-bit motors, one write per 20 ms at the closest and 50 a second over any window (a burst of 3), the
    /// standard hold error: the generic profile until its changes were let 10 ms apart. The tests of the engine's
    /// interval and budget rules are written on it, so that their times stay ones a reader can check by hand
    /// whatever the built-in profiles become.
    static let everyTwentyMilliseconds = RenderProfile(
        name: "every-20-ms", strongSteps: 255, weakSteps: 255, minimumUpdateInterval: 0.020,
        budget: .reportPerCall(interval: 0.020))
}

/// A level as the generic profile (and `everyTwentyMilliseconds`) sends it: rounded to its 8-bit step.
func q(_ level: Double) -> Double { (level * 255).rounded() / 255 }

/// The changes the renderer's planner produces for `timeline` under `profile`, `start` seconds in.
func planned(_ timeline: MotorTimeline, profile: RenderProfile = .genericRumble, start: Double = 0) -> [Change] {
    DeviceCommandPlanner(profile: profile).commands(for: timeline).map { Change(at: start + $0.time, $0.levels) }
}

/// An intensity control of `value`, as `sendParameters` takes it.
func intensityControl(_ value: Double) -> [HapticDynamicParameter] {
    [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: value, relativeTime: 0)]
}

/// A continuous event of `seconds`, flat at `intensity` (sharpness 0.5 splits it over both motors).
func continuousPattern(intensity: Double, seconds: Double) -> HapticPattern {
    AHAPFixtures.tone(seconds: seconds, intensity: intensity)
}

/// Collects values handed to handlers on any thread.
final class Inbox<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])
    func put(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// A fresh empty file standing in for a hidraw node: what a writer sends there can be read back, report by report.
/// Removed when the test is done with it.
final class ReportFile {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString)").path

    init() { _ = FileManager.default.createFile(atPath: path, contents: nil) }
    deinit { unlink(path) }

    /// The file opened as a hidraw node is, for writing.
    func device() throws -> HidrawDevice { try HidrawDevice(node: path, logger: quietLogger()) }

    /// Everything written so far.
    func bytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// Empties the file: a device opened on it again writes from its start (a file is no node, which takes each
    /// report on its own), so what it writes is read apart from what came before.
    func empty() { truncate(path, 0) }

    /// Everything written so far, cut into reports of `length` bytes and parsed; nil for a cut that does not parse.
    func reports<Report>(length: Int, _ parse: ([UInt8]) -> Report?) throws -> [Report?] {
        let bytes = try bytes()
        return stride(from: 0, to: bytes.count, by: length).map {
            parse(Array(bytes[$0..<min($0 + length, bytes.count)]))
        }
    }
}
