// The Switch Pro Controller played through its FF_RUMBLE node (hid-nintendo's ff-memless driver), not its HD
// rumble: every ff-memless call of the driver queues a frame, and its worker resends the last frame sent before
// a new one when it starts from idle, each frame paced on the pad's input reports. A steady level renewed by the
// engine must not build a queue (each renewal's frame follows it by a bounded time, the same at the end as at the
// start) and never drop out, and a player killed or stopped must leave the pad at rest within 150 ms of the signal.
// The driver's delay is the engine's to make up for (`RenderProfile.switchOutputLatency`): changes scheduled ahead
// reach the pad on their time, not a frame or two after it.
import Foundation
import AHAP
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
            try await StallWitness.againAfterAGuestStall { try await switchFFRumble() }
        },
        KernelTest(name: "hd/switch-pro/ff-rumble-changes-scheduled-ahead-reach-the-pad-on-their-time") {
            try await StallWitness.againAfterAGuestStall { try await switchScheduledAhead() }
        },
        KernelTest(name: "hd/joy-con/alone-and-in-the-grip-a-pattern-plays-whole-on-the-joy-cons-own-side") {
            try await joyConsPlayOnTheirOwnSide()
        },
        KernelTest(
            name:
                "hd/joy-con/a-left-and-a-right-one-as-all-gamepads-play-each-tone-whole-and-the-left-handle-on-the-left-one"
        ) {
            try await joyConPairAsAllGamepads()
        },
    ]

    /// A right Joy-Con alone over Bluetooth (057e:2007) and a left one in the charging grip over USB (057e:200e),
    /// played through their FF_RUMBLE nodes: hid-nintendo puts an effect's strong level on the left side of its
    /// frame and the weak level on the right, and each Joy-Con plays its own side. The engine takes each as one
    /// motor on its side (the grip's Joy-Con by the name the driver gives it), and a tone that a Pro Controller
    /// plays on its other actuator (dull on the right Joy-Con, sharp on the left) reaches the Joy-Con's own side at
    /// its whole level, the other side never driven. On their HD rumble, a tone at the other side's handle plays on
    /// the Joy-Con's own side.
    static func joyConsPlayOnTheirOwnSide() async throws {
        for (side, inGrip) in [(HDActuators.JoyConSide.right, false), (.left, true)] {
            let label = "\(side) Joy-Con\(inGrip ? " in the grip" : "")"
            let device: any EmulatedDevice
            do { device = try EmulatedModel.startJoyCon(side, inGrip: inGrip, logger: EmulationSuite.logger()) } catch {
                if case .transportMissing = error { throw TestSkip(.uhid, "\(error)") }
                throw TestFailure(reason: "\(label): \(error)")
            }
            defer { device.destroy() }
            let nodes: EmulatedDeviceNodes
            do { nodes = try device.waitUntilBound(timeout: EmulationSuite.bindTimeout) } catch {
                throw TestFailure(reason: "\(label): \(error)")
            }
            let name = try DeviceSuite.probe(nodes.rumbleNode).name
            try require(
                name.contains(side == .left ? "Left Joy-Con" : "Right Joy-Con"), "\(label): the driver named it \(name)"
            )
            var options = HapticEngineOptions()
            options.actuators = .rumble
            options.playsHapticsOnly = true
            let engine = HapticEngine(
                output: .device(.id(try AppSuite.stableID(of: nodes.rumbleNode))), options: options,
                logger: EmulationSuite.logger())
            do { try engine.start() } catch { throw TestFailure(reason: "\(label): starting the engine: \(error)") }
            defer { engine.stop() }
            let profile = engine.renderProfile
            try require(
                profile.hasStrongMotor == (side == .left) && profile.hasWeakMotor == (side == .right),
                "\(label): profile \(profile.name) with strong \(profile.hasStrongMotor), weak \(profile.hasWeakMotor)")
            let before = device.records().count
            let tone = HapticPattern(
                events: [
                    HapticEvent(
                        type: .hapticContinuous,
                        parameters: [
                            .init(parameterID: .hapticIntensity, value: 0.8),
                            .init(parameterID: .hapticSharpness, value: side == .left ? 1 : 0),
                        ],
                        relativeTime: 0, duration: 0.4)
                ], parameters: [])
            try await VoiceCoilSuite.play(tone, on: engine)
            try await Task.sleep(for: .milliseconds(200))
            let frames = device.records().dropFirst(before).filter { $0.event == .output }
            let own = frames.map { (side == .left ? $0.strong : $0.weak) ?? 0 }.max() ?? 0
            let other = frames.map { (side == .left ? $0.weak : $0.strong) ?? 0 }.max() ?? 0
            try require(
                abs(own - 0.8) <= EmulatedModel.switchPro.motorStep,
                "\(label): its own side played \(own) at most, for the tone's 0.8 (\(frames.count) frames)")
            try requireEqual(other, 0, "\(label): the other side's level")
            engine.stop()
            let mirrored = try await oppositeHandleOnHDRumble(of: device, node: nodes.rumbleNode, side: side, label)
            print(
                "    \(label) (\(name)): \(profile.name), own side at \(own), \(frames.count) frames; HD rumble at the "
                    + "other handle: \(mirrored) reports with its own side playing")
        }
    }

    /// A left Joy-Con in the grip and a right one alone, driven as one (`DeviceSelection.allGamepads`): they share
    /// the Pro Controller's profile with both motors, and each plays the shared mix on its own side, so a dull tone
    /// and a sharp one each reach both Joy-Cons at their whole level; at the left handle, the left Joy-Con alone
    /// plays. Until 7 December the pair shared the generic profile: a dull tone played on the left Joy-Con alone, a
    /// sharp one on the right one alone.
    static func joyConPairAsAllGamepads() async throws {
        var devices: [(side: HDActuators.JoyConSide, device: any EmulatedDevice)] = []
        defer { for (_, device) in devices { device.destroy() } }
        for (side, inGrip) in [(HDActuators.JoyConSide.left, true), (.right, false)] {
            do {
                devices.append(
                    (side, try EmulatedModel.startJoyCon(side, inGrip: inGrip, logger: EmulationSuite.logger())))
            } catch {
                if case .transportMissing = error { throw TestSkip(.uhid, "\(error)") }
                throw TestFailure(reason: "\(side) Joy-Con: \(error)")
            }
            do { _ = try devices[devices.count - 1].device.waitUntilBound(timeout: EmulationSuite.bindTimeout) } catch {
                throw TestFailure(reason: "\(side) Joy-Con: \(error)")
            }
        }
        // The whole pattern on both, dull or sharp; then at the left handle, on the left Joy-Con alone.
        let plays: [(HapticLocality, sharpness: Double, playing: Set<HDActuators.JoyConSide>)] = [
            (.all, 0, [.left, .right]), (.all, 1, [.left, .right]), (.leftHandle, 0.5, [.left]),
        ]
        for (locality, sharpness, playing) in plays {
            var options = HapticEngineOptions()
            options.actuators = .rumble
            options.playsHapticsOnly = true
            options.locality = locality
            let engine = HapticEngine(output: .device(.allGamepads), options: options, logger: EmulationSuite.logger())
            do { try engine.start() } catch { throw TestFailure(reason: "starting the engine: \(error)") }
            defer { engine.stop() }
            try requireEqual(engine.renderProfile, .switchPro, "the pair's shared profile")
            let before = devices.map { $0.device.records().count }
            try await VoiceCoilSuite.play(
                AHAPFixtures.tone(seconds: 0.4, intensity: 0.8, sharpness: sharpness), on: engine)
            try await Task.sleep(for: .milliseconds(200))
            for ((side, device), first) in zip(devices, before) {
                let frames = device.records().dropFirst(first).filter { $0.event == .output }
                let own = frames.map { (side == .left ? $0.strong : $0.weak) ?? 0 }.max() ?? 0
                let due = playing.contains(side) ? 0.8 : 0
                try require(
                    abs(own - due) <= EmulatedModel.switchPro.motorStep,
                    "\(side) Joy-Con, \(locality.rawValue), tone of sharpness \(sharpness): its own side played "
                        + "\(own) at most, for \(due) (\(frames.count) frames)")
            }
            engine.stop()
        }
    }

    /// The HD rumble stream at the handle of the other side (`right` on a left Joy-Con): a Pro Controller plays it
    /// on the other actuator alone, a Joy-Con on its one actuator (its side of each report carries the tone). The
    /// number of reports over the middle of the tone that do.
    private static func oppositeHandleOnHDRumble(
        of device: any EmulatedDevice, node: String, side: HDActuators.JoyConSide, _ label: String
    ) async throws -> Int {
        let engine = try VoiceCoilSuite.engine(on: node, locality: side == .left ? .rightHandle : .leftHandle)
        defer { engine.stop() }
        let before = device.records().count
        let at = monotonicSeconds()
        try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.5, intensity: 0.8), on: engine)
        let middle = HDRumbleSuite.rumbleReports(device, after: before).filter {
            $0.time >= at + 0.1 && $0.time <= at + 0.4
        }
        let playing = middle.filter { report in
            let own = side == .left ? report.packet.left : report.packet.right
            return own.lowAmplitude + own.highAmplitude > 0
        }
        try VoiceCoilSuite.requireOrStall(
            playing.count >= 8,
            "\(label): \(playing.count) of \(middle.count) reports over the middle 0.3 s of the tone "
                + "on the other handle carry it on the Joy-Con's own side",
            stall: 0.3 - Double(playing.count) * HDRumbleStream.updateSeconds, during: (at + 0.1)...(at + 0.4))
        return playing.count
    }

    /// Six levels 120 ms each, one after another, played three times through the rumble node: the engine writes
    /// each change on the frame that carries it, so the pad's level changes on its time (within 5 ms at the median,
    /// each within 10 ms; written at their times they would come the driver's delay, about 45 ms, late).
    ///
    /// Two things the engine cannot see are told apart by what the pad recorded. The driver's frames can flip onto
    /// the other report when a send comes a few milliseconds late (the guest runs the engine, the driver's worker
    /// and the emulated pad on one CPU), and stay there until the pad rests: a round whose frames came mostly a
    /// report from the instants the engine wrote for is not on the engine's grid, and is held only to the engine
    /// writing ahead (its changes within 35 ms at the median); when no round of the three is on the grid, up to
    /// three more are played from rest. Within a round a flip holds a change a report late, whose frame came off
    /// every instant the engine wrote for, to 35 ms, until the engine's grid follows the frames; the round is on
    /// the grid when most of its changes are judged there. A change late on the engine's own instants (a frame
    /// carrying the level written for the frame before: a queue of the driver's) is never excused so. And
    /// ff-memless can hand the driver the level before an update, when the kernel's tick falls inside its handling
    /// of the update: the frame the update was for repeats the level before it (`outsideTheEngine`), and that
    /// change alone comes up to a frame late. Each is printed with what the record shows.
    ///
    /// A change off its time is a timing failure that the whole guest standing still explains
    /// (`frameSkipStall`), within the round or since the round before it ended: the test is then run again
    /// (`StallWitness.againAfterAGuestStall`), and fails when no such stall was seen.
    static func switchScheduledAhead() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            var options = HapticEngineOptions()
            options.actuators = .rumble
            options.playsHapticsOnly = true
            let writes = Mutex<[PlaybackSample]>([])
            options.playbackObserver = { sample in writes.withLock { $0.append(sample) } }
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
            // resending the last frame by itself), started 100 ms ahead as the driver benchmark starts its files;
            // then, while none was on the engine's grid, more from rest (the driver's resends over).
            var onGrid = 0
            var offTime: [String] = []
            // The windows (`window` below) of every round, and of the rounds with a change off its time.
            var testWindow: ClosedRange<Double>?
            var offTimeWindow: ClosedRange<Double>?
            var from = engine.currentTime - engine.outputLatency
            for round in 0..<6 where round < 3 || onGrid == 0 {
                if round >= 3 { try await Task.sleep(for: .milliseconds(500)) }
                let player = try engine.makeAdvancedPlayer(timeline: MotorTimeline(segments: steps))
                let before = device.records().count
                let origin = engine.currentTime + (round == 0 ? 0.2 : 0.1)
                try player.start(atTime: origin)
                try await Task.sleep(for: .seconds(origin - engine.currentTime + Double(levels.count) * step + 0.25))
                let frames = device.records().dropFirst(before).filter { $0.event == .output }
                // From the end of the round before (the driver's frames carry over from it) to this one's end.
                let window = from...(origin + Double(levels.count) * step + changeWindow)
                testWindow = testWindow.map { $0.lowerBound...window.upperBound } ?? window
                let offsets: [Double]
                do {
                    offsets = try centres(of: frames, origin: origin, levels: levels, step: step)
                } catch let failure as TestFailure {
                    throw TimingFailure(
                        reason: "round \(round + 1): \(failure.reason)", explainingStall: frameSkipStall,
                        window: window)
                }
                let others = Array(offsets.dropFirst())
                let written = writes.withLock { $0 }
                let outside = outsideTheEngine(
                    reports: device.inputReports(), frames: device.records().filter { $0.event == .output },
                    writes: written.map { ($0.sent - engine.outputLatency, $0) }, sendDelay: sendDelay, from: from)
                from = origin + Double(levels.count) * step - changeWindow
                let grid = onEnginesGrid(
                    frames: frames, deadlines: written.map(\.deadline), from: origin,
                    to: origin + Double(levels.count) * step)
                print(
                    "    round \(round + 1): changes' centres on the pad after their times, ms: "
                        + "\(offsets.map(AudioSuite.tenths))"
                        + (grid ? "" : " (the driver's frames on the other report)"))
                if others.contains(where: { abs($0) > 10 }) || !grid, !outside.isEmpty {
                    print(
                        "      outside the engine, ms from this round's origin: "
                            + outside.map { "\($0.what) at \(AudioSuite.tenths(($0.time - origin) * 1000))" }
                            .joined(separator: ", "))
                }
                guard grid else {
                    let median = others.sorted()[others.count / 2]
                    guard median <= 35 else {
                        throw TimingFailure(
                            reason: "round \(round + 1) reached the pad \(median.rounded()) ms after its times",
                            explainingStall: frameSkipStall, window: window)
                    }
                    continue
                }
                // The frames can also flip onto the other report within a round, until the engine's grid follows
                // them: a change a report late whose frame came off every instant the engine wrote for (more than
                // 5 ms, as `onEnginesGrid` counts) was the driver's, sent on the other report, and is held to the
                // engine writing ahead (35 ms), as a round on the other report is. A change late on the engine's own
                // instants (a frame carrying the level written for the frame before: a queue) is not.
                let deadlines = written.map(\.deadline)
                var flipped: [Int] = []
                var judged: [Double] = []
                for (index, offset) in offsets.enumerated().dropFirst() {
                    let change = origin + Double(index) * step
                    let frame = frames.first { $0.time.seconds >= change - 0.005 }?.time.seconds
                    let offInstants = frame.map { frame in !deadlines.contains { abs($0 - frame) <= 0.005 } } ?? false
                    if offset > 10, offset <= 35, offInstants { flipped.append(index) } else { judged.append(offset) }
                }
                // A round counts as on the engine's grid when most of its changes were judged there.
                if judged.count * 2 > others.count { onGrid += 1 }
                if !flipped.isEmpty {
                    print(
                        "      changes \(flipped) a report late, their frames off the engine's instants (the driver's "
                            + "frames on the other report until the engine's grid followed)")
                }
                for (index, offset) in offsets.enumerated().dropFirst() where abs(offset) > 10 {
                    if flipped.contains(index) { continue }
                    let change = origin + Double(index) * step
                    let repeated = outside.first { $0.lost && abs($0.time - change) <= changeWindow }
                    let alone = offsets.indices.contains(index + 1) ? abs(offsets[index + 1]) <= 10 : true
                    guard let repeated, offset > 10, offset <= 35, alone else {
                        offTime.append("round \(round + 1) change \(index) \(AudioSuite.tenths(offset)) ms")
                        offTimeWindow = offTimeWindow.map { $0.lowerBound...window.upperBound } ?? window
                        continue
                    }
                    print("      change \(index) \(AudioSuite.tenths(offset)) ms late, \(repeated.what)")
                }
                let median = judged.isEmpty ? 0 : judged.sorted()[judged.count / 2]
                guard abs(median) <= 5 else {
                    throw TimingFailure(
                        reason: "round \(round + 1): the changes reached the pad \(median.rounded()) ms after their "
                            + "times", explainingStall: frameSkipStall, window: window)
                }
                // A pattern that starts between two frames has what comes before the next frame folded into it.
                guard offsets[0] >= -5 && offsets[0] <= 35 else {
                    throw TimingFailure(
                        reason: "round \(round + 1): the pattern's opening reached the pad at \(offsets[0]) ms",
                        explainingStall: frameSkipStall, window: window)
                }
            }
            print(
                "    \(onGrid) rounds on the engine's grid (the engine writes \(engine.outputLatency * 1000) ms ahead)")
            guard offTime.isEmpty else {
                throw TimingFailure(
                    reason: "changes reached the pad off their times: \(offTime)", explainingStall: frameSkipStall,
                    window: offTimeWindow)
            }
            guard onGrid > 0 else {
                throw TimingFailure(
                    reason: "no round's frames came on the engine's grid, in six", explainingStall: frameSkipStall,
                    window: testWindow)
            }
        }
    }

    /// Whether most of the driver's frames from `start` to `end` came within 5 ms of an instant the engine wrote
    /// for (`deadlines`, a frame's instant on these frames), not a report (15 ms) from them.
    static func onEnginesGrid(frames: [PadRecord], deadlines: [Double], from start: Double, to end: Double) -> Bool {
        let times = frames.map(\.time.seconds).filter { (start...end).contains($0) }
        let near = times.filter { time in deadlines.contains { abs($0 - time) <= 0.005 } }
        return near.count * 2 > times.count
    }

    /// How far on either side of a change its centre is measured (`centres`), in seconds.
    static let changeWindow = 0.06

    /// The shortest stand-still of the whole guest, in milliseconds, that can leave hid-nintendo's frames a
    /// report or a frame off the engine's instants for the rest of a round: the worker sends every other report,
    /// 30 ms apart, against its 25 ms spacing, so a report or the worker held back 5 ms is sent a report later.
    /// From there the frames take the other report (which the engine's grid follows), or, where the worker's
    /// queue gained a frame, each frame carries the level written for the one before it: one call a frame,
    /// renewals included, never lets that frame drain. Seen with the host's cores kept busy beside the guest
    /// (docs/bench.md, "A frame of backlog, reproduced").
    static let frameSkipStall = 5.0

    /// What went wrong outside the engine from `start` on, each at its instant on the pad's clock (seconds):
    /// - a report of the pad's stream written more than 2 ms after it was due (the emulated pad's thread);
    /// - a frame that reached the pad more than `sendDelay` + 2 ms after the report before it (the driver's worker,
    ///   which sends on a report, or the pad's thread reading it). Not judged: a frame with a write of the engine
    ///   between its report and itself, or one before the engine's first write (the keeper it plays as it opens
    ///   the pad), which the driver may have sent at the call, from rest;
    /// - a level the engine's thread slept through whole (`PlaybackSample.wokeLate`);
    /// - a frame that repeated the level before it, where the engine wrote another for it (an update, its
    ///   `deadline` the frame's instant) 34 ms or more ahead, in time for the frame before it to take it with the
    ///   kernel's tick to spare: ff-memless hands the driver an update on its timer's next tick, and when that
    ///   tick falls between ff-memless' handling of the update and the kernel's copy of the new effect into its
    ///   slot, the driver is handed the level before it (docs/engine.md, "A rare race is left").
    ///
    /// `writes` are at their instants on the pad's clock. On time the reports come within 1.3 ms and the frames
    /// within 0.5 ms here. A write merely later than its deadline is not counted: the engine holding a change back
    /// (its write budget) looks the same, and that is the engine's to get right.
    static func outsideTheEngine(
        reports: [StreamedInputReport], frames: [PadRecord], writes: [(time: Double, sample: PlaybackSample)],
        sendDelay: Double, from start: Double
    ) -> [(time: Double, what: String, lost: Bool)] {
        let slack = 0.002
        var found: [(time: Double, what: String, lost: Bool)] = []
        for report in reports where report.sent.seconds >= start {
            let delay = report.sent.seconds - report.due.seconds
            if delay > slack {
                found.append((report.sent.seconds, "a report of the pad \(milliseconds(delay)) late", false))
            }
        }
        let opened = writes.first?.time ?? .infinity
        for frame in frames where frame.time.seconds >= max(start, opened) {
            guard let report = reports.last(where: { $0.sent <= frame.time }),
                !writes.contains(where: { $0.time > report.sent.seconds && $0.time <= frame.time.seconds })
            else { continue }
            let delay = frame.time.seconds - report.sent.seconds
            if delay > sendDelay + slack {
                found.append((frame.time.seconds, "a frame \(milliseconds(delay)) after its report", false))
            }
        }
        for (time, sample) in writes where time >= start && sample.wokeLate {
            let delay = sample.sent - sample.deadline
            found.append(
                (time, "a level the engine's thread slept through, written \(milliseconds(delay)) late", false))
        }
        // A change's deadline on these frames is the instant of the frame it is for; the frame's content is taken
        // as the frame before it leaves, 30 ms earlier, and an update reaches the driver on the next tick.
        let played = frames.map { (time: $0.time.seconds, level: max($0.strong ?? 0, $0.weak ?? 0)) }
        for (time, sample) in writes where time >= start && sample.kind == .apply {
            let level = max(sample.mix.strong, sample.mix.weak)
            guard time <= sample.deadline - 0.034,
                let index = played.firstIndex(where: { abs($0.time - sample.deadline) <= 0.005 }), index > 0,
                abs(played[index].level - level) > 0.03, abs(played[index].level - played[index - 1].level) < 0.005
            else { continue }
            let ahead = milliseconds(sample.deadline - time)
            found.append(
                (
                    played[index].time,
                    "the frame repeated the level before it, \((level * 100).rounded() / 100) written \(ahead) ahead for it",
                    true
                ))
        }
        return found.sorted { $0.time < $1.time }
    }

    private static func milliseconds(_ seconds: Double) -> String { "\(AudioSuite.tenths(seconds * 1000)) ms" }

    /// Where each change of `levels` (one every `step` seconds from `origin`, then rest) took place in `frames`:
    /// the instant of the one step with the same area as what the pad played within 60 ms of the change, from the
    /// level it held before to the level it held after (a frame that straddles the change at its mean moves this
    /// instant by nothing), in milliseconds after the change's time.
    static func centres(of frames: [PadRecord], origin: Double, levels: [Double], step: Double) throws -> [Double] {
        let played = frames.map { (time: $0.time.seconds - origin, level: max($0.strong ?? 0, $0.weak ?? 0)) }
        let level = { (time: Double) in played.last { $0.time <= time }?.level ?? 0 }
        let window = changeWindow
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
    /// then `haptics play --actuators rumble` killed and stopped mid-tone. A drop-out mid-tone, and renewals that
    /// reach the pad later at the end than at the start, are `TimingFailure`s: a guest that stood still for the
    /// renewal window's margin kept the renewal from the kernel before the effect ended, and one that stood still
    /// over the last renewals held them back.
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
            if late > early + 50 {
                // A queue would hold every renewal back; a guest that stood still holds back the renewals it fell
                // on, by as long as it stood still, less the frame they would have waited for anyway.
                let lastFive = (times.suffix(5).first ?? ended)...ended
                throw TimingFailure(
                    reason: "renewal to frame: \(early.rounded()) ms at the start, \(late.rounded()) ms at the end",
                    explainingStall: late - early - 30, window: lastFive)
            }
            if rest - ended > 0.150 {
                // Later than the bound by as long as the whole guest stood still after the tone's end explains.
                throw TimingFailure(
                    reason: "the frame at rest came \(Int((rest - ended) * 1000)) ms after the tone's end",
                    explainingStall: (rest - ended - 0.150) * 1000, window: ended...rest)
            }
            // The window's margin must absorb a late renewal: no frame at rest while the tone lasts.
            let dropouts = frames.filter {
                $0.time.seconds > first && $0.time.seconds < last && ($0.strong ?? 0) == 0
            }
            if let dropout = dropouts.first?.time.seconds {
                // The renewal that would have kept the motors on was due up to a window (and the driver's frame,
                // 30 ms) before the frame at rest.
                let renewal = OutputTiming.Renewal.forProfile(engine.renderProfile)
                throw TimingFailure(
                    reason: "the motors dropped out mid-tone at \(dropouts.map { $0.time.seconds }) s",
                    explainingStall: renewal.expiryMarginSeconds * 1000,
                    window: (dropout - renewal.windowSeconds - 0.030)...dropout)
            }
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
