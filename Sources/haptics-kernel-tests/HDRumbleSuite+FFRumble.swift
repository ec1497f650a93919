// The Switch Pro Controller played through its FF_RUMBLE node (hid-nintendo's ff-memless driver), not its HD
// rumble: every ff-memless call of the driver queues a frame, and its worker resends the last frame sent before
// a new one when it starts from idle, each frame paced on the pad's input reports. A steady level renewed by the
// engine must not build a queue (each renewal's frame follows it by a bounded time, the same at the end as at the
// start) and never drop out, and a player killed or stopped must leave the pad at rest within 150 ms of the signal.
// The driver's delay is the engine's to make up for (`RenderProfile.switchOutputLatency`): changes scheduled ahead
// reach the pad on their time, not a frame or two after it.
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem
import Synchronization

extension HDRumbleSuite {
    static let ffRumbleTests = [
        KernelTest(name: "hd/switch-pro/ff-rumble-renewals-build-no-queue-sigkill-and-sigstop-rest-within-150ms") {
            try await switchFFRumble()
        },
        KernelTest(name: "hd/switch-pro/ff-rumble-changes-scheduled-ahead-reach-the-pad-on-their-time") {
            try await switchScheduledAhead()
        },
    ]

    /// Six levels 120 ms each, one after another, played three times through the rumble node: the engine writes
    /// each change on the frame that carries it, so the pad's level changes on its time (within 5 ms at the median,
    /// each within 10 ms; written at their times they would come the driver's delay, about 45 ms, late).
    static func switchScheduledAhead() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            var options = HapticEngineOptions()
            options.actuators = .rumble
            options.playsHapticsOnly = true
            let engine = HapticEngine(
                output: .device(.node(nodes.rumbleNode)), options: options, logger: EmulationSuite.logger())
            do { try engine.start() } catch { throw TestFailure(reason: "starting the engine: \(error)") }
            defer { engine.stop() }
            try require(
                engine.renderProfile.name == RenderProfile.switchProOnFrames.name,
                "the engine plans with \(engine.renderProfile.name), not on the pad's frames (switch-frames)")
            // From Linux 6.4 the driver sends each frame a few milliseconds after the report that decides it.
            let sendDelay =
                FramePacing.Rules.forKernel(
                    from64: Sys.kernelIsAtLeast(6, 4), tick: Sys.kernelTickSeconds(), overUSB: true)?
                .sendDelay ?? 0
            try require(
                engine.outputLatency == RenderProfile.switchProOnFrames(sendDelay: sendDelay).outputLatency,
                "the engine writes \(engine.outputLatency) s ahead on hid-nintendo (its frames leave \(sendDelay) s "
                    + "after their reports)")
            let step = 0.12
            let levels = [0.3, 0.6, 0.9, 0.4, 0.7, 1.0]
            let steps = levels.enumerated().map { index, level in
                MotorTimeline.Segment(
                    start: Double(index) * step, end: Double(index + 1) * step,
                    startLevels: MotorMagnitudes(strong: level, weak: level),
                    endLevels: MotorMagnitudes(strong: level, weak: level))
            }
            // Three rounds: the first on a pad at rest, the others 250 ms after the one before (the driver still
            // resending the last frame by itself), started 100 ms ahead as the driver benchmark starts its files.
            var firsts: [Double] = []
            var others: [Double] = []
            for round in 0..<3 {
                let player = try engine.makeAdvancedPlayer(timeline: MotorTimeline(segments: steps))
                let before = device.records().count
                let origin = engine.currentTime + (round == 0 ? 0.2 : 0.1)
                try player.start(atTime: origin)
                try await Task.sleep(for: .seconds(origin - engine.currentTime + Double(levels.count) * step + 0.25))
                let offsets = try centres(
                    of: device.records().dropFirst(before).filter { $0.event == .output }, origin: origin,
                    levels: levels, step: step)
                print(
                    "    round \(round + 1): changes' centres on the pad after their times, ms: "
                        + "\(offsets.map(AudioSuite.tenths))")
                firsts.append(offsets[0])
                others += offsets.dropFirst()
            }
            let median = others.sorted()[others.count / 2]
            print(
                "    the changes after the first: median \(AudioSuite.tenths(median)) ms (the engine writes "
                    + "\(engine.outputLatency * 1000) ms ahead)")
            try require(abs(median) <= 5, "the changes reached the pad \(median.rounded()) ms after their times")
            try require(
                others.allSatisfy { abs($0) <= 10 }, "a change reached the pad more than 10 ms off its time: \(others)")
            // A pattern that starts between two frames has what comes before the next frame folded into that frame.
            try require(
                firsts.allSatisfy { $0 >= -5 && $0 <= 35 }, "a pattern's opening reached the pad at \(firsts) ms")
        }
    }

    /// Where each change of `levels` (one every `step` seconds from `origin`, then rest) took place in `frames`:
    /// the instant of the one step with the same area as what the pad played within 60 ms of the change, from the
    /// level it held before to the level it held after (a frame that straddles the change at its mean moves this
    /// instant by nothing), in milliseconds after the change's time.
    static func centres(of frames: [PadRecord], origin: Double, levels: [Double], step: Double) throws -> [Double] {
        let played = frames.map { (time: $0.time.seconds - origin, level: max($0.strong ?? 0, $0.weak ?? 0)) }
        let level = { (time: Double) in played.last { $0.time <= time }?.level ?? 0 }
        let window = 0.06
        let slice = 0.0005
        var offsets: [Double] = []
        for index in 0...levels.count {
            let change = Double(index) * step
            let old = level(change - window + slice)
            let new = level(change + window - slice)
            guard abs(new - old) > 0.1 else {
                throw TestFailure(reason: "the pad held \(old) on both sides of the change at \(change) s")
            }
            var area = 0.0
            for instant in stride(from: change - window, to: change + window, by: slice) {
                area += (new - level(instant + slice / 2)) / (new - old) * slice
            }
            offsets.append((area - window) * 1000)
        }
        return offsets
    }

    /// A steady 2 s level played by an engine of this process on the rumble node (with its renewals observed),
    /// then `haptics play --actuators rumble` killed and stopped mid-tone.
    static func switchFFRumble() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let renewals = Mutex<[Double]>([])
            var options = HapticEngineOptions()
            options.actuators = .rumble
            options.playsHapticsOnly = true
            options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
            options.playbackObserver = { sample in
                if sample.kind == .keepAlive { renewals.withLock { $0.append(sample.sent) } }
            }
            let engine = HapticEngine(
                output: .device(.id(try AppSuite.stableID(of: nodes.rumbleNode))), options: options,
                logger: EmulationSuite.logger())
            do { try engine.start() } catch { throw TestFailure(reason: "starting the engine: \(error)") }
            defer { engine.stop() }
            let before = device.records().count
            try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 2, intensity: 0.8), on: engine)
            let ended = monotonicSeconds()
            try await Task.sleep(for: .milliseconds(400))
            let frames = device.records().dropFirst(before).filter { $0.event == .output }
            let driving = frames.filter { ($0.strong ?? 0) > 0 }
            guard let first = driving.first?.time.seconds, let last = driving.last?.time.seconds,
                let rest = frames.first(where: { $0.time.seconds > last })?.time.seconds
            else { throw TestFailure(reason: "the tone drove no frame, or none at rest followed: \(frames.count)") }
            // Each renewal to the first frame after it: a queue would make this grow over the tone.
            let times = renewals.withLock { $0 }
            let lags = times.compactMap { renewal in
                driving.first { $0.time.seconds >= renewal }.map { ($0.time.seconds - renewal) * 1000 }
            }
            try require(lags.count >= 10, "\(times.count) renewals seen in 2 s")
            let early = lags.prefix(5).max() ?? 0
            let late = lags.suffix(5).max() ?? 0
            try require(
                late <= early + 50,
                "renewal to frame: \(early.rounded()) ms at the start, \(late.rounded()) ms at the end")
            try require(
                rest - ended <= 0.150, "the frame at rest came \(Int((rest - ended) * 1000)) ms after the tone's end")
            // The window's margin must absorb a late renewal: no frame at rest while the tone lasts.
            let dropouts = frames.filter {
                $0.time.seconds > first && $0.time.seconds < last && ($0.strong ?? 0) == 0
            }
            try require(
                dropouts.isEmpty, "the motors dropped out mid-tone at \(dropouts.map { $0.time.seconds }) s")
            let steady = Double(driving.count) / (last - first)
            let figures = try await signalledPlayers(
                device, ["--actuators", "rumble", "--device", nodes.rumbleNode], signals: [SIGKILL, SIGSTOP],
                "the tone on FF_RUMBLE",
                started: { records in records.filter { $0.event == .output && ($0.strong ?? 0) > 0 } },
                restingFrom: { records in
                    let outputs = records.filter { $0.event == .output }
                    guard let lastDriven = outputs.lastIndex(where: { ($0.strong ?? 0) > 0 }) else { return .infinity }
                    return outputs[(lastDriven + 1)...].first?.time.seconds
                })
            print(
                "    steady 2 s: \(driving.count) frames driving, \(Int(steady.rounded())) a second, \(times.count) "
                    + "renewals, renewal to frame \(AudioSuite.tenths(lags.min() ?? 0))-"
                    + "\(AudioSuite.tenths(lags.max() ?? 0)) ms (first five \(AudioSuite.tenths(early)), last five "
                    + "\(AudioSuite.tenths(late))); end of tone to the frame at rest "
                    + "\(Int(((rest - ended) * 1000).rounded())) ms; " + figures.joined(separator: "; "))
        }
    }
}
