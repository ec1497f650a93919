// The native periodic path on a device that plays FF_PERIODIC itself: the emulated USB PID joystick, driven by the
// kernel's hid-pidff (Debian's 6.1.192, with part of the 2025 PID driver work backported). Each `Haptics/` asset
// played by an engine with `allowsForceDevices` reaches the device as one effect per event (in a block created for
// it, or one an ended effect left), whose decoded period and magnitude are the compiled program's; the device's
// magnitude over time follows the program (bound stated), and every block ends stopped and freed. Without the
// opt-in the stick is never chosen and naming it says why; on a device whose pool is full an effect waits for one
// of our slots or is left out, and playback goes on; the engine survives the joystick unplugged mid-pattern and
// plugged back in.
import AHAPFiles
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput

enum PIDSuite {
    // The joystick is a USB gadget, not a uhid device: its tests say so when the gadget stack is missing.
    static let suite: KernelTestSuite = KernelTestSuite(name: "pid", tests: tests)

    static let tests = [
        KernelTest(name: "pid/engine/haptics-assets-play-as-the-programs-effects-magnitude-follows-all-freed") {
            try await StallWitness.againAfterAGuestStall { try await assetsPlayNatively() }
        },
        KernelTest(name: "pid/engine/without-the-opt-in-never-chosen-and-naming-it-says-why-cli-too") {
            try await optInRequired()
        },
        KernelTest(name: "pid/engine/a-full-device-waits-for-our-slot-else-leaves-the-effect-out-frees-every-block") {
            try await StallWitness.againAfterAGuestStall { try await fullDevice() }
        },
        KernelTest(name: "pid/engine/unplug-replug-cycles-mid-pattern-no-block-left") {
            try await unplugCycles()
        },
    ]

    /// An engine allowed to drive force devices, on the joystick at `node`, started.
    static func engine(on node: String) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.allowsForceDevices = true
        options.playsHapticsOnly = true
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let engine = HapticEngine(
            output: .device(.id(try AppSuite.stableID(of: node))), options: options, logger: EmulationSuite.logger())
        do { try engine.start() } catch { throw TestFailure(reason: "starting the engine on \(node): \(error)") }
        try require(
            engine.capabilities?.playsPeriodicEffects == true && engine.renderProfile == .periodicForce,
            "the engine plays \(engine.capabilities as Any) with \(engine.renderProfile.name)")
        return engine
    }

    /// The device's magnitude may stray from the program's level by this much at the 99th percentile of its
    /// milliseconds, away from the edges: the thread plays each effect at its start (a play report that reaches
    /// the device within a few milliseconds under TCG) and a followed event holds each planned level a while.
    static let magnitudeBound = 0.12
    /// And on average over the pattern.
    static let meanBound = 0.025
    /// Milliseconds around each effect's start and end left out of the bound: a play or erase reaching the device
    /// that much early or late.
    static let edgeMilliseconds = 8.0
    /// The longest time a play may come after its time: its upload, a round trip to the device (about 12 ms under
    /// TCG, 33 ms seen in CI with the other guest busy).
    static let maximumLag = 0.030
    /// How far ahead of the call a test starts a pattern whose times it checks against the pattern's start: more
    /// than the stream's upload lead, so that its first effects are uploaded ahead and played at their time.
    static let startAheadSeconds = 0.1
    /// The lateness a started effect is matched at, in the milliseconds of an effect's times: any a stall of the
    /// guest can make. How late plays come is the bench's measure; here an effect played late must be whole (a
    /// little late: the stream stops it at its end) or its rest.
    static let lateMilliseconds = 150

    static func assetsPlayNatively() async throws {
        try await EmulationSuite.withController(.pidJoystick) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            // One tone first, unmeasured: under emulation the first run of any code in a process is slow (the same
            // pattern compiled twice in a row in the guest took 53 ms, then 4.4 ms), and the first start, with a
            // second guest busy beside this one, played thud's first effect up to 40 ms late; the next ones came
            // within 15 ms. The bounds below are the path's, not the emulator's first translation of it.
            try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.05, intensity: 0.5), on: engine)
            try await Task.sleep(for: .milliseconds(200))
            var lines: [String] = []
            var swingsChecked = 0
            for name in ["thud", "detent", "error", "heartbeat", "capacitor_charge"] {
                let pattern = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/\(name).ahap"))
                let program = NativePeriodicProgram(pattern: pattern, profile: .periodicForce)
                let before = device.records().count
                let called = try await VoiceCoilSuite.play(pattern, on: engine)
                try await Task.sleep(for: .milliseconds(300))
                let records = Array(device.records().dropFirst(before))
                let reports = records.compactMap { record in record.pid.map { (record.time.seconds, $0) } }
                let creates = reports.filter { $0.1.kind == .createNewEffect && $0.1.status == .success }
                // From the device's first record: the stream's ready blocks were made before the pattern.
                let playback = PIDPlayback(records: device.records())
                // What the device holds for each effect as it starts it: a block is created for the first effects,
                // and an effect that ended leaves its block to a later one, which is uploaded into it.
                let starts = reports.filter { $0.1.kind == .effectOperation && $0.1.operation == .start }
                let started = starts.compactMap { time, report -> (time: Double, held: [Int], block: Int)? in
                    guard let index = report.blockIndex, let block = playback.state(at: time).blocks[index] else {
                        return nil
                    }
                    return (
                        time, [block.period, block.magnitude, block.attackTime, block.fadeTime, block.duration], index
                    )
                }
                // Each effect as the device starts it is one of the program's as the engine plays it that late: the
                // lateness is what its length lost (an effect played more than `PeriodicEffectStream`'s 10 ms late
                // plays its rest, to end on time; one less late plays whole and is stopped at its end), and the
                // rest, cut from the compiled effect there, has the period and magnitude of the update made by then
                // and the attack and fade left. Each is matched at the whole milliseconds either side of that.
                var unmatched = program.effects
                var updatesLeft = (least: 0, most: 0)
                var firstLate: Int?
                // Each effect's time in the pattern and when the device started it; and, in the same order, its end
                // in the pattern and when the device ended it (at the length it was started with, or at a stop
                // before that).
                var startedAt: [(due: Double, time: Double)] = []
                var effectEnds: [Double] = []
                var deviceEnds: [Double] = []
                for (time, held, block) in started {
                    var rests: [NativePeriodicEffect] = []
                    var late = 0
                    let match = unmatched.firstIndex { effect in
                        late = Int(effect.lengthMilliseconds) - held[4]
                        guard late >= 0, late <= lateMilliseconds else { return false }
                        rests = (max(late - 1, 0)...(late + 1)).compactMap {
                            effect.section(from: Double($0) / 1000, to: effect.length)
                        }
                        let expected = rests.map { rest in
                            [
                                Int(rest.periodMilliseconds), Int(rest.magnitudeUnits),
                                Int(rest.attackLengthMilliseconds), Int(rest.fadeLengthMilliseconds),
                                Int(rest.lengthMilliseconds),
                            ]
                        }
                        return !expected.isEmpty
                            && held.indices.allSatisfy { index in
                                let values = expected.map { $0[index] }
                                return held[index] >= values.min()! - 1 && held[index] <= values.max()! + 1
                            }
                    }
                    guard let match else {
                        throw TestFailure(
                            reason: "\(name): the device started [period, magnitude, attack, fade, length] \(held), "
                                + "which no compiled effect is, whole or played late: \(program.effects)")
                    }
                    let counts = rests.map(\.updates.count)
                    // The rest of an effect played late is cut when it is uploaded; an update due between that and
                    // its play goes out before the play, so the device holds it as the effect starts.
                    updatesLeft.least += max((counts.min() ?? 0) - (late > 1 ? 1 : 0), 0)
                    updatesLeft.most += counts.max() ?? 0
                    firstLate = firstLate ?? late
                    startedAt.append((unmatched[match].delay, time))
                    effectEnds.append(unmatched[match].delay + unmatched[match].length)
                    let stopped = reports.first {
                        $0.0 > time && $0.1.blockIndex == block && $0.1.kind == .effectOperation
                            && $0.1.operation == .stop
                    }
                    deviceEnds.append(min(time + Double(held[4]) / 1000, stopped?.0 ?? .infinity))
                    unmatched.remove(at: match)
                }
                // An effect whose whole time passed while the stream's thread could not run is left out (it has
                // no rest to play): what the whole guest standing still for its length, from its time on, makes.
                if let missed = unmatched.first {
                    throw TimingFailure(
                        reason: "\(name): effects never started: \(unmatched)", explainingStall: missed.length * 1000,
                        window: (called + missed.delay - maximumLag)...(called + missed.delay + missed.length))
                }
                // An update: a Set Periodic that reaches a block while it plays.
                let updates = reports.filter { time, report in
                    guard report.kind == .setPeriodic, let index = report.blockIndex,
                        let block = playback.state(at: time - 1e-6).blocks[index], let began = block.startedAt
                    else { return false }
                    return time > began && time < (block.endsAt ?? .infinity)
                }.count
                let updatesSeen =
                    "\(name): \(updates) updates of followed events reached playing effects, not the "
                    + "\(updatesLeft.least)-\(updatesLeft.most) of the effects as started; "
                    + periodicReports(reports, playback: playback, origin: called)
                try require(updates <= updatesLeft.most, updatesSeen)
                // Too few is what a stall of the whole guest makes: the stream's thread, woken after two updates
                // of an effect fell due, sends the later alone, and one due before an effect's end and woken
                // after it sends none.
                if updates < updatesLeft.least {
                    throw TimingFailure(reason: updatesSeen, explainingStall: shortestUpdateSpacing(program) * 1000)
                }

                // The device's magnitude against the program's level, from the first effect's start on.
                guard let firstStart = starts.first?.0, let firstDelay = program.effects.map(\.delay).min() else {
                    throw TestFailure(reason: "\(name): no effect was started")
                }
                let edges = program.effects.flatMap { [$0.delay, $0.delay + $0.length] }
                let end = program.effects.map { $0.delay + $0.length }.max() ?? 0
                let times = (0..<Int(end * 1000)).map { Double($0) / 1000 }.filter { time in
                    !edges.contains { abs($0 - time) * 1000 < edgeMilliseconds }
                }
                /// Each error, with its pattern time, with the pattern's start `lag` before the first play (its
                /// upload delayed the play), from that play on, at `times` but for those `leftOut` (pattern
                /// seconds): the start's latency is the path's, stated apart (docs/engine.md).
                func timedErrors(lag: Double, leftOut: [ClosedRange<Double>] = []) -> [(time: Double, error: Double)] {
                    times.filter { time in time >= firstDelay + lag && !leftOut.contains { $0.contains(time) } }.map {
                        let output = playback.output(at: firstStart - firstDelay - lag + $0).magnitude
                        return ($0, abs(output - program.level(at: $0)))
                    }
                }
                /// The errors alone.
                func errors(lag: Double, leftOut: [ClosedRange<Double>] = []) -> [Double] {
                    timedErrors(lag: lag, leftOut: leftOut).map(\.error)
                }
                /// The five largest errors with the pattern's start `lag` before the first play, with their times.
                func largestErrors(lag: Double) -> String {
                    timedErrors(lag: lag).sorted { $0.error > $1.error }.prefix(5).map {
                        String(format: "%.0f: %.3f", $0.time * 1000, $0.error)
                    }.joined(separator: ", ")
                }
                /// Whether `found` keeps both bounds, and what it shows.
                func bounded(_ found: [Double]) -> (holds: Bool, p99: Double, worst: Double, mean: Double) {
                    let sorted = found.sorted()
                    let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
                    let mean = found.reduce(0, +) / Double(max(found.count, 1))
                    return (p99 <= magnitudeBound && mean <= meanBound, p99, sorted.last ?? 0, mean)
                }
                // The lag is searched up to the first play's lateness, as its length shows, and a little more.
                let lagSpan = max(maximumLag, Double(firstLate ?? 0) / 1000 + 0.005)
                let lag =
                    stride(from: 0.0, through: lagSpan, by: 0.001).min { a, b in
                        let (x, y) = (errors(lag: a), errors(lag: b))
                        return x.reduce(0, +) / Double(max(x.count, 1)) < y.reduce(0, +) / Double(max(y.count, 1))
                    } ?? 0
                // A stall of the guest can hold one update back: the bound is on the 99th percentile.
                let (holds, p99, worst, mean) = bounded(errors(lag: lag))
                let origin = firstStart - firstDelay - lag
                let strays =
                    "\(name): the device's magnitude strays \(p99) at p99 (\(worst) at worst), \(mean) on average "
                    + "from the program (bounds \(magnitudeBound), \(meanBound)); each effect started on the "
                    + "device this many ms after its time in the pattern placed at that lag: "
                    + latenesses(startedAt, origin: origin) + "; and ended this many ms after its end there: "
                    + latenesses(Array(zip(effectEnds, deviceEnds)), origin: origin)
                    + "; the largest errors (pattern ms: error): " + largestErrors(lag: lag)
                if !holds {
                    // One effect started later than the edges leave out, and the rest of the pattern within both
                    // bounds without its start, nor its end where the device played it whole from that late start
                    // (the stream stops only an effect it saw played late, and a play delayed after its write ends
                    // by its length, as late): what a stall of the whole guest from its time makes, for as long as
                    // its start came past the edge.
                    let late = startedAt.indices.filter { lateness(startedAt[$0], origin: origin) > edgeMilliseconds }
                    if late.count == 1, let index = late.first {
                        let effect = startedAt[index]
                        let lateBy = lateness(effect, origin: origin)
                        let edge = edgeMilliseconds / 1000
                        let startLeftOut = (effect.due - edge)...(effect.due + lateBy / 1000 + edge)
                        let deviceEnd = deviceEnds[index] - origin
                        let endLeftOut = (effectEnds[index] - edge)...(max(effectEnds[index], deviceEnd) + edge)
                        if bounded(errors(lag: lag, leftOut: [startLeftOut, endLeftOut])).holds {
                            throw TimingFailure(
                                reason: strays + " (within both bounds without the late start and its end)",
                                explainingStall: lateBy - edgeMilliseconds,
                                window: (origin + effect.due)...effect.time)
                        }
                    }
                    throw TestFailure(reason: strays)
                }

                // The signed force: each effect played alone and unchanged swings through zero twice a period.
                var checkedSwings = 0
                for (index, (time, report)) in starts.enumerated() {
                    guard let block = report.blockIndex, let held = playback.state(at: time).blocks[block],
                        let length = held.endsAt, held.period > 0
                    else { continue }
                    // Where it stopped playing: at its length, or at the stream's stop when its play came late
                    // and the stream ended it on the engine's clock, short of its length.
                    let stop = reports.first {
                        $0.0 > time && $0.1.blockIndex == block && $0.1.kind == .effectOperation
                            && $0.1.operation == .stop
                    }
                    let end = min(length, stop?.0 ?? .infinity)
                    let others = starts.indices.contains { other in
                        guard other != index, let block = starts[other].1.blockIndex,
                            let end = playback.state(at: starts[other].0).blocks[block]?.endsAt
                        else { return false }
                        return starts[other].0 < end && time < end
                    }
                    let changed = reports.contains {
                        $0.1.kind == .setPeriodic && $0.1.blockIndex == block && $0.0 > time && $0.0 < end
                    }
                    let span = end - time - 0.002
                    guard !others, !changed, span * 1000 >= Double(held.period) * 3 else { continue }
                    let samples = (0...Int(span * 10_000)).map {
                        playback.output(at: time + 0.001 + Double($0) / 10_000).force
                    }
                    let swings = zip(samples, samples.dropFirst()).filter { $0 * $1 < 0 }.count
                    let expected = 2 * span * 1000 / Double(held.period)
                    try require(
                        abs(Double(swings) - expected) <= 1.5,
                        "\(name): the force swings through zero \(swings) times in \(span) s, not \(expected) (period "
                            + "\(held.period) ms)")
                    checkedSwings += 1
                    swingsChecked += 1
                }

                // A start now plays its opening before it uploads what is not due yet: before the first play, the
                // device got only the uploads of the effects that may have been due then (those starting within a
                // play's longest lag) into kept slots: a stop of the slot's last effect and the parameter reports
                // (Set Effect, Set Envelope, Set Periodic).
                let opening = program.effects.filter { $0.delay < maximumLag }.count
                let beforeFirstPlay = reports.filter { $0.0 < firstStart }.map(\.1)
                let listed = beforeFirstPlay.map {
                    [$0.kind.rawValue, $0.operation?.rawValue ?? ""].joined(separator: " ")
                }
                try require(
                    beforeFirstPlay.count <= 4 * opening,
                    "\(name): \(beforeFirstPlay.count) reports reached the device before the first play, more than "
                        + "the uploads of the \(opening) effects starting within \(maximumLag) s: \(listed)")
                // The first play asked the device for no block: it went into one the stream holds ready.
                try require(
                    creates.first.map { $0.0 > firstStart } ?? true,
                    "\(name): a block was asked for before the first play, at \(creates[0].0 - firstStart) s")
                // Once the pattern is over, the device holds the stream's ready blocks and no more, none playing.
                let last = playback.state(at: .infinity)
                let now = monotonicSeconds()
                try require(
                    last.blocks.count <= PeriodicEffectStream.readySlots
                        && last.blocks.values.allSatisfy { $0.startedAt == nil || ($0.endsAt ?? .infinity) <= now },
                    "\(name): blocks left on the device: \(last.blocks)")
                lines.append(
                    String(
                        format:
                            "%@ %d effects, first play %.1f ms after the start call, %d reports before it, %d blocks "
                            + "asked for, %d updates, pattern %.0f ms before its first play fits best, p99 %.3f worst "
                            + "%.3f mean %.4f, %d effects swing at their period", name, program.effects.count,
                        (firstStart - called) * 1000, beforeFirstPlay.count, creates.count, updates, lag * 1000, p99,
                        worst, mean, checkedSwings))
            }
            // The swing check holds only where an effect plays alone and unchanged: some of the assets have one.
            try require(swingsChecked > 0, "no effect played alone and unchanged long enough to count its swings")
            engine.stop()
            try await waitForEveryBlockFree(device)
            print("    " + lines.joined(separator: "; ") + "; every block free after stop")
        }
    }

    /// The shortest time from an update of `program` to the next update or end of its effect, capped at
    /// `maximumLag`: a stall of the guest that long can cost the device an update.
    static func shortestUpdateSpacing(_ program: NativePeriodicProgram) -> Double {
        program.effects.reduce(maximumLag) { shortest, effect in
            let times = effect.updates.map(\.time) + [effect.delay + effect.length]
            return zip(times, times.dropFirst()).reduce(shortest) { min($0, $1.1 - $1.0) }
        }
    }

    /// Each Set Periodic report of a play, for a failure's message: when it reached the device (ms from the
    /// play's origin), and the block it went to with when that block played, if it did.
    static func periodicReports(
        _ reports: [(Double, PIDReport)], playback: PIDPlayback, origin: Double
    ) -> String {
        let milliseconds = { (time: Double) in String(format: "%.1f", (time - origin) * 1000) }
        return "Set Periodic at (ms from the play's start): "
            + reports.filter { $0.1.kind == .setPeriodic }.map { time, report in
                guard let index = report.blockIndex else { return "\(milliseconds(time)) (no block)" }
                let block = playback.state(at: time - 1e-6).blocks[index]
                let played = block?.startedAt.map { "playing from \(milliseconds($0))" } ?? "not playing"
                let end = block?.endsAt.map { " to \(milliseconds($0))" } ?? ""
                return "\(milliseconds(time)) to block \(index) (\(played)\(end))"
            }.joined(separator: ", ")
    }

    /// Each effect's start (or end) on the device after its time in the pattern, whose time 0 the device's clock
    /// puts at `origin`, in milliseconds, in the order they started: what a failure of the magnitude bound shows, so
    /// that one effect started late (a stall of the guest) tells itself apart from every effect off its time, and
    /// an end the device played late from one cut short.
    static func latenesses(_ events: [(due: Double, time: Double)], origin: Double) -> String {
        events.map { String(format: "%.1f", lateness($0, origin: origin)) }.joined(separator: ", ")
    }

    /// How long after its time in the pattern (time 0 at `origin` on the device's clock) an effect started (or
    /// ended) on the device, in milliseconds.
    static func lateness(_ event: (due: Double, time: Double), origin: Double) -> Double {
        (event.time - origin - event.due) * 1000
    }

    static func optInRequired() async throws {
        try await EmulationSuite.withController(.pidJoystick) { _, nodes in
            var options = HapticEngineOptions()
            options.playsHapticsOnly = true
            let first = HapticEngine(
                output: .device(.firstRumbleDevice), options: options, logger: EmulationSuite.logger())
            var chosen: String?
            var firstFailure: String?
            do {
                try first.start()
                chosen = first.capabilities?.node
                first.stop()
            } catch {
                firstFailure = "\(error)"
            }
            try require(chosen != nodes.rumbleNode, "the first rumble device is the joystick without the opt-in")
            // With nothing else to play on, the failure names the joystick and the opt-in (it said only "no
            // rumble-capable input device found" until 6 December), and so does the CLI's fall-back note.
            if let firstFailure {
                try require(
                    firstFailure.contains(nodes.rumbleNode) && firstFailure.contains("allowsForceDevices"),
                    "the first device's failure without the opt-in: \(firstFailure)")
                let fellBack = try AppSuite.runCLI(["play", "Haptics/thud.ahap"])
                try require(
                    fellBack.contains("built-in virtual output") && fellBack.contains("--allow-force-devices"),
                    "haptics play with no device named, without the flag:\n\(fellBack)")
                print("    " + (fellBack.split(separator: "\n").first { $0.contains("virtual output") } ?? ""))
            }
            let named = HapticEngine(
                output: .device(.node(nodes.rumbleNode)), options: options, logger: EmulationSuite.logger())
            var refusal: String?
            do {
                try named.start()
                named.stop()
            } catch {
                refusal = "\(error)"
            }
            try require(
                refusal?.contains("allowsForceDevices") == true,
                "the named joystick without the opt-in: \(refusal ?? "opened")")
            let refused = try Subprocess([
                projectBinary("haptics"), "play", "--device", nodes.rumbleNode, "Haptics/thud.ahap",
            ])
            let status = refused.finish(timeout: VirtualPadSuite.hangGuardSeconds * 4)
            try require(
                status != 0 && refused.text.contains("--allow-force-devices"),
                "haptics play without the flag exited \(status):\n\(refused.text)")
            let played = try AppSuite.runCLI([
                "play", "--allow-force-devices", "--json", "--device", nodes.rumbleNode, "Haptics/thud.ahap",
            ])
            try require(
                played.contains("\"path\":\"periodic-effects\"") && played.contains("\"profile\":\"pid\""),
                "haptics play --allow-force-devices did not report the periodic path:\n\(played)")
            print(
                "    refused without the opt-in (engine and CLI, naming it); with it: path periodic-effects, profile pid"
            )
        }
    }

    /// Tones started ahead on a joystick whose pool holds two blocks, both the stream's ready blocks from the
    /// engine's start: A (0-0.6 s) and B (0.05-0.6 s) play in them, A at its time; C (0.1-0.3 s) is answered "full"
    /// (the engine's `ENOSPC`) and, with no slot of ours coming free before its end, is left out; D (0.2-0.9 s)
    /// waits for A's or B's slot and plays the rest of itself from there, ending on time (by its length, or by a
    /// stop when its upload made its play late). A and B both end at 0.6 s: D takes whichever slot the stream freed
    /// first (B's at once when its play came late and the stream stopped it at its end, A's a margin after an end by
    /// its length). The engine plays on, the next pattern plays, and every block is free after the engine stops.
    /// No thread spins while D waits.
    static func fullDevice() async throws {
        let device: any EmulatedDevice
        do { device = try EmulatedModel.startPIDJoystick(capacity: 2, logger: EmulationSuite.logger()) } catch {
            throw TestFailure(reason: "\(error)")
        }
        defer { device.destroy() }
        let nodes: EmulatedDeviceNodes
        do { nodes = try device.waitUntilBound(timeout: EmulationSuite.bindTimeout) } catch {
            throw TestFailure(reason: "\(error)")
        }
        let engine = try engine(on: nodes.rumbleNode)
        defer { engine.stop() }
        let tones = HapticPattern(
            events: [(0.0, 0.6), (0.05, 0.55), (0.1, 0.2), (0.2, 0.7)].map { start, length in
                HapticEvent(
                    type: .hapticContinuous,
                    parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 0.25)],
                    relativeTime: start, duration: length)
            }, parameters: [])
        let before = device.records().count
        let threadsBefore = ThreadTimes.now()
        // Started a little ahead, at a known instant of the engine's clock (the monotonic clock the device's
        // records are on): the times below are the pattern's, not the start call's.
        let origin = try await VoiceCoilSuite.play(tones, on: engine, ahead: startAheadSeconds)
        // While D waits for a slot (0.2 s to 0.6 s) the stream's thread sleeps until one comes free or D ends: no
        // thread runs for long. Woken for D's start, which has passed, it spun the whole wait: 236 and 251 ms of
        // processor in two runs, against 33 to 40 ms for the busiest thread (the emulated device's) without.
        try ThreadTimes.requireNoSpin(since: threadsBefore, over: "the 0.9 s of the pattern")
        try await Task.sleep(for: .milliseconds(300))
        try require(engine.isRunning, "the engine stopped on a full device")
        let records = Array(device.records().dropFirst(before))
        let reports = records.compactMap { record in record.pid.map { (record.time.seconds, $0) } }
        let answers = reports.filter { $0.1.kind == .createNewEffect }.map(\.1.status)
        let starts = reports.filter { $0.1.kind == .effectOperation && $0.1.operation == .start }
        let ready = PIDPlayback(records: Array(device.records().prefix(before))).state(at: .infinity).blocks.count
        try requireEqual(ready, 2, "blocks the engine's start took")
        try require(
            !answers.contains(.success) && answers.contains(.full), "the device's answers: \(answers)")
        try requireEqual(starts.count, 3, "effects started (A, B and D; C left out)")
        let playback = PIDPlayback(records: device.records())
        /// When the effect started at `index` of `starts` ended: by its length, or by a stop before that.
        func end(ofStart index: Int) -> (block: Int, time: Double)? {
            let (time, report) = starts[index]
            guard let block = report.blockIndex, let length = playback.state(at: time).blocks[block]?.endsAt else {
                return nil
            }
            let stop = reports.first {
                $0.0 > time && $0.1.blockIndex == block && $0.1.kind == .effectOperation && $0.1.operation == .stop
            }
            return (block, min(length, stop?.0 ?? .infinity))
        }
        guard let (blockA, endA) = end(ofStart: 0), let (blockB, endB) = end(ofStart: 1),
            let (blockD, endD) = end(ofStart: 2)
        else {
            throw TestFailure(reason: "the started blocks are not on the device")
        }
        let timeline = reports.map { String(format: "%@ %.1f ms", "\($0.1.kind)", ($0.0 - origin) * 1000) }
        try require(starts[0].0 >= origin - 0.001, "A started before its time: \(timeline)")
        if starts[0].0 - origin > maximumLag {
            // Later than a report's longest way to the device: what the guest standing still for the rest makes.
            throw TimingFailure(
                reason: "A started \(starts[0].0 - origin) s after its time (bound \(maximumLag) s): \(timeline)",
                explainingStall: (starts[0].0 - origin - maximumLag) * 1000)
        }
        let heldBefore = blockD == blockA ? ("A", endA) : blockD == blockB ? ("B", endB) : nil
        try require(
            heldBefore.map { starts[2].0 >= $0.1 } ?? false,
            "D did not take A's or B's block after its effect ended (D in block \(blockD), A in \(blockA), B in "
                + "\(blockB)): \(timeline)")
        try require(
            endD >= origin + 0.9 - maximumLag,
            "D ends \(endD - origin) s after the pattern's start, before 0.9 s (bound \(maximumLag) s): \(timeline)")
        if endD > origin + 0.9 + maximumLag {
            // Ended late: its update or stop reached the device late, which the guest standing still explains.
            throw TimingFailure(
                reason: "D ends \(endD - origin) s after the pattern's start, not 0.9 s (bound \(maximumLag) s): "
                    + "\(timeline)",
                explainingStall: (endD - origin - 0.9 - maximumLag) * 1000, window: (origin + 0.9)...endD)
        }
        let thud = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/thud.ahap"))
        let next = device.records().count
        try await VoiceCoilSuite.play(thud, on: engine)
        try await Task.sleep(for: .milliseconds(300))
        let after = device.records().dropFirst(next).compactMap(\.pid)
        try require(
            after.contains { $0.kind == .effectOperation && $0.operation == .start }, "the next pattern did not play")
        engine.stop()
        try await waitForEveryBlockFree(device)
        print(
            String(
                format:
                    "    2 blocks, both ready from the engine's start: A started %.1f ms after its time, C answered "
                    + "full and left out, D played in \(heldBefore?.0 ?? "?")'s block from %.0f ms, ending %.1f ms "
                    + "from its time; then thud; all free",
                (starts[0].0 - origin) * 1000, (starts[2].0 - origin) * 1000, (endD - origin - 0.9) * 1000))
    }

    /// Waits until the device holds no block (the engine stopped: the stream erases its effects, and hid-pidff's
    /// Block Free reports reach the device from its queue).
    static func waitForEveryBlockFree(_ device: any EmulatedDevice) async throws {
        let deadline = monotonicSeconds() + 2
        while true {
            let blocks = PIDPlayback(records: device.records()).state(at: .infinity).blocks
            if blocks.isEmpty { return }
            try require(monotonicSeconds() < deadline, "blocks left on the device after stop: \(blocks.keys.sorted())")
            try await Task.sleep(for: .milliseconds(AppSuite.pollMilliseconds))
        }
    }

    static func unplugCycles() async throws {
        try await EngineSuite.warmUpRuntime()
        _ = try await EmulationSuite.cycles(.pidJoystick, count: 1, checkingDescriptors: false)
        // The device, not the kernel, decides how many effects it holds: every block of its pool is free again.
        let count = Repetitions.controllerCycles
        let (free, slots) = try await EmulationSuite.cycles(.pidJoystick, count: count)
        try requireEqual(
            free, PIDJoystick.defaultCapacity, "effect blocks free once the engine stopped on the re-plugged joystick")
        print(
            "    \(count) cycles: each stopped and reset, no descriptor left open; then played on and stopped with it "
                + "plugged in: all \(free) blocks of the device's pool free (the kernel offers \(slots) slots)")
    }
}
