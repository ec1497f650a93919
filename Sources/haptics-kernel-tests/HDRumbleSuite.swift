// HD rumble on the Switch Pro Controller and the trigger motors of the Xbox Wireless Controller over Bluetooth,
// through the real hid-nintendo and hid-microsoft: patterns played with `actuators: .hd` reach the emulated Switch
// pad as report 0x10 on its hidraw node (each band's frequency following sharpness, its amplitude following
// intensity, at rest at the end), patterns at a trigger locality reach only that trigger's motor as report 3, a
// killed or stopped player leaves either pad at rest within 150 ms, and what a pad lacks is a clear error or a
// fallback that says why.
import AHAP
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem

enum HDRumbleSuite {
    static let tests = [
        KernelTest(name: "hd/switch-pro/a-sweep-raises-the-band-frequency-intensity-sets-its-amplitude-ends-at-rest") {
            try await StallWitness.againAfterAGuestStall(switchSweep)
        },
        KernelTest(name: "hd/switch-pro/a-pause-between-two-taps-spins-no-thread-and-the-second-comes-on-its-time") {
            try await StallWitness.againAfterAGuestStall(switchPauseBetweenTaps)
        },
        KernelTest(name: "hd/switch-pro/two-engines-one-per-handle-play-together-through-one-stream") {
            try await StallWitness.againAfterAGuestStall(switchTwoEngines)
        },
        KernelTest(name: "hd/switch-pro/a-pad-plugged-in-while-a-stream-holds-the-old-ones-node-gets-another-node") {
            try await replugAtTheSameNode()
        },
        KernelTest(name: "hd/switch-pro/sigkill-and-sigstop-leave-the-actuators-at-rest-within-150ms") {
            try await StallWitness.againAfterAGuestStall(switchKilledOrStopped)
        },
        KernelTest(name: "hd/switch-pro/without-a-silence-guard-plays-the-kernels-rumble-and-says-why") {
            try await switchFallsBackWithoutGuard()
        },
        KernelTest(name: "hd/switch-pro/without-hidraw-access-plays-rumble-and-names-the-fix") {
            try await switchFallsBackWithoutAccess()
        },
        KernelTest(name: "hd/xbox-one-bt/left-trigger-reaches-only-the-left-trigger-triggers-both-probe-lists-them") {
            try await xboxTriggers()
        },
        KernelTest(name: "hd/dualsense-bt-and-xbox-one-bt/the-first-pad-chosen-has-the-triggers-or-hd-asked-for") {
            try await firstPadHasWhatWasAskedFor()
        },
        KernelTest(name: "hd/dualsense-bt-and-switch-pro/hd-skips-a-first-pad-whose-hidraw-node-it-may-not-write") {
            try await firstPadWithWritableHD()
        },
        KernelTest(name: "hd/virtual-pad/automatic-on-a-pad-without-hd-actuators-names-no-fallback-hd-does") {
            try await fallbackOnlyWhereAsked()
        },
        KernelTest(name: "hd/xbox-one-bt/a-left-trigger-and-a-right-trigger-engine-play-together-in-one-report") {
            try await StallWitness.againAfterAGuestStall(twoTriggerEngines)
        },
        KernelTest(
            name: "hd/xbox-one-bt/while-a-trigger-engine-plays-the-rumble-engine-joins-its-report-then-goes-back"
        ) {
            try await StallWitness.againAfterAGuestStall(bodyAndTriggersOneWriter)
        },
        KernelTest(name: "hd/xbox-one-bt/sigkill-leaves-the-triggers-at-rest-within-150ms") {
            try await StallWitness.againAfterAGuestStall(xboxKilled)
        },
        KernelTest(name: "hd/switch-pro/a-trigger-locality-is-an-error-from-the-engine-and-the-cli") {
            try await triggerLocalityRefusedOnSwitch()
        },
    ]

    /// An engine on the emulated pad at `node`, with `actuators` at `locality`, started.
    static func engine(
        on node: String, actuators: HapticActuators = .hd, locality: HapticLocality = .all, expectHD: Bool = true
    ) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.actuators = actuators
        options.locality = locality
        options.playsHapticsOnly = true
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let engine = HapticEngine(
            output: .device(.id(try AppSuite.stableID(of: node))), options: options, logger: EmulationSuite.logger())
        do { try engine.start() } catch { throw TestFailure(reason: "starting the engine on \(node): \(error)") }
        try require(
            (engine.capabilities?.hdNode != nil) == expectHD, "the engine plays on \(engine.capabilities as Any)")
        return engine
    }

    /// The rumble of the 0x10 reports among `records` (rumble only: the driver's 0x01 subcommand reports carry
    /// rumble too), as the emulated pad decoded it, with their arrival time.
    static func rumbleReports(_ records: some Sequence<PadRecord>) -> [(time: Double, packet: SwitchRumblePacket)] {
        records.compactMap { record in
            guard record.report?.hasPrefix("10") == true, let packet = record.hdRumble else { return nil }
            return (record.time.seconds, packet)
        }
    }

    static func rumbleReports(_ device: any EmulatedDevice, after before: Int) -> [(
        time: Double, packet: SwitchRumblePacket
    )] {
        rumbleReports(device.records().dropFirst(before))
    }

    /// `reports` as `counter@ms` (from `origin`), each marked `rest` or with its left actuator's dominant band.
    static func describe(
        _ reports: some Collection<(time: Double, packet: SwitchRumblePacket)>, from origin: Double
    ) -> String {
        reports.map { report in
            let band = report.packet.left.dominantBand ?? (0, 0)
            let played = report.packet.isAtRest ? "rest" : "\(Int(band.frequency.rounded())) Hz \(band.amplitude)"
            return "\(report.packet.counter)@\(String(format: "%.1f", (report.time - origin) * 1000)) ms (\(played))"
        }.joined(separator: ", ")
    }

    // MARK: Switch Pro: two engines, one per handle

    /// Two engines on one Switch pad, one per handle, as a Core Haptics app makes one per locality: their tones,
    /// started at one instant, reach the pad as one stream (each counter one past the last, or two when the
    /// guard may have taken one), every report over the middle of the tones carrying the left handle's tone on
    /// the left actuator in the low band and the right's on the right in the high band. (Each engine wrote reports
    /// of its own: the pad got two streams interleaved, each sending the other's actuator at rest.)
    static func switchTwoEngines() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let (before, at) = try await VoiceCoilSuite.playOnEachHandle(
                of: device, node: nodes.rumbleNode, { try engine(on: $0, locality: $1) },
                left: AHAPFixtures.tone(seconds: 0.5, sharpness: 0.25),
                right: AHAPFixtures.tone(seconds: 0.5, sharpness: 0.9), wait: .milliseconds(900))
            let reports = rumbleReports(device, after: before)
            let steps = zip(reports, reports.dropFirst()).map { ($1.packet.counter - $0.packet.counter + 16) % 16 }
            try require(
                steps.allSatisfy { $0 == 1 || $0 == 2 },
                "the counters are not one stream's: \(reports.map(\.packet.counter))")
            let crossover = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.5)
            let middle = reports.filter { $0.time >= at + 0.1 && $0.time <= at + 0.4 }
            for report in middle {
                let (l, r) = (report.packet.left, report.packet.right)
                try require(
                    l.lowAmplitude > 0 && l.highAmplitude == 0 && l.lowFrequency < crossover
                        && r.highAmplitude > 0 && r.lowAmplitude == 0 && r.highFrequency >= crossover,
                    "a report in the middle of both tones does not carry both handles: "
                        + describe([report], from: at) + " (left \(l), right \(r))")
            }
            // An update every 30 ms: ten over the 0.3 s looked at, fewer only when the guest stood still.
            try VoiceCoilSuite.requireOrStall(
                middle.count >= 8, "\(middle.count) reports over the 0.3 s in the middle of the tones",
                stall: 0.3 - Double(middle.count) * HDRumbleStream.updateSeconds, during: (at + 0.1)...(at + 0.4))
            try require(reports.last?.packet.isAtRest == true, "the actuators did not come to rest")
            print(
                "    one stream of \(reports.count) reports (counters \(reports.first?.packet.counter ?? 0) to "
                    + "\(reports.last?.packet.counter ?? 0)); \(middle.count) in the middle, each with the left tone "
                    + "low and the right tone high; at rest after")
        }
    }

    /// A member of the HD rumble stream this process has on hidraw `node`, or of a new one (no silence guard: the
    /// test's tones are short and the pad emulated).
    static func member(of node: String) throws -> HDRumbleMember {
        let logger = EmulationSuite.logger()
        return try HDRumbleMember.joining(node, locality: .all) { () throws(OutputFailure) -> HDRumbleStream in
            let hidraw: HidrawDevice
            do throws(EventDeviceError) {
                hidraw = try HidrawDevice(node: node, logger: logger)
            } catch {
                throw OutputFailure(.other, "\(error)")
            }
            do throws(HapticEngineError) {
                return try HDRumbleStream(device: hidraw, keeper: nil, logger: logger)
            } catch {
                hidraw.close()
                throw OutputFailure(.other, error.message)
            }
        }
    }

    /// The streams engines share are found by their hidraw node's path (`PadShares`), and a stream whose pad was
    /// unplugged while it wrote nothing has not failed, so it would be joined by an engine on a pad plugged in
    /// at the same path. That cannot happen: hidraw keeps a gone device's node number while a descriptor of it is
    /// open, so the pad plugged in again while the idle stream holds its old node gets another node, and its own
    /// stream, whose tone reaches it.
    static func replugAtTheSameNode() async throws {
        let (first, firstNode) = try await EmulationSuite.withController(.switchPro) { _, nodes in
            guard let node = HidrawDevice.node(besideEventNode: nodes.rumbleNode) else {
                throw TestFailure(reason: "the Switch pad has no hidraw node beside \(nodes.rumbleNode)")
            }
            return (try member(of: node), node)
        }
        defer { first.close() }
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            guard let node = HidrawDevice.node(besideEventNode: nodes.rumbleNode) else {
                throw TestFailure(reason: "the Switch pad plugged in again has no hidraw node")
            }
            try require(first.failure == nil, "the idle stream failed: \(first.failure as Any)")
            try require(node != firstNode, "the pad plugged in again got \(node), the node the idle stream holds")
            let second = try member(of: node)
            defer { second.close() }
            try require(second.stream !== first.stream, "the stream of the pad that went was joined")
            let before = device.records().count
            second.play(
                AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25),
                atNanoseconds: MonotonicTime.nanoseconds() + 20_000_000)
            try await Task.sleep(for: .milliseconds(300))
            let reports = rumbleReports(device, after: before)
            try require(
                reports.contains { !$0.packet.left.isAtRest },
                "the new stream's tone did not reach the pad: \(reports.count) reports")
            print(
                "    \(firstNode) held by the idle stream, the pad came back at \(node): a stream of its own, "
                    + "\(reports.count) reports of its tone")
        }
    }

    // MARK: Switch Pro: the sweep

    /// Five steps of sharpness 0...1 at intensity 1, then three steps of intensity 0.25, 0.5, 1 at sharpness 0.25,
    /// 0.3 s each.
    static let sweep: HapticPattern = {
        let steps: [(intensity: Double, sharpness: Double)] =
            (0..<5).map { (1.0, Double($0) / 4) } + [(0.25, 0.25), (0.5, 0.25), (1.0, 0.25)]
        var events: [HapticEvent] = []
        for (index, step) in steps.enumerated() {
            let parameters = [
                HapticEventParameter(parameterID: .hapticIntensity, value: step.intensity),
                HapticEventParameter(parameterID: .hapticSharpness, value: step.sharpness),
            ]
            events.append(
                HapticEvent(
                    type: .hapticContinuous, parameters: parameters, relativeTime: 0.3 * Double(index), duration: 0.3))
        }
        return HapticPattern(events: events, parameters: [])
    }()

    static func switchSweep() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let before = device.records().count
            let witness = try StallWitness()
            // Each report's bands follow the clock from the player's start, however late the stream wrote it.
            let origin: Double
            do {
                origin = try await VoiceCoilSuite.play(sweep, on: engine)
                try await Task.sleep(for: .milliseconds(200))
            } catch {
                // The witness's real-time thread ends with the test, not with the run.
                _ = witness.finish()
                throw error
            }
            let stalled = witness.finish()
            let reports = rumbleReports(device, after: before)
            guard reports.contains(where: { !$0.packet.left.isAtRest }) else {
                throw TestFailure(reason: "no 0x10 report carried rumble")
            }
            // The silence guard writes a report at rest when the stream has not written for its timeout while the
            // actuators played: the guest stood still, the stream's thread with it. That report takes the next
            // counter, and the stream's next report skips it. A report at rest that follows one playing by the
            // timeout, less 20 ms for the emulator reading the one before late, is the guard's.
            let guardGap = Double(HDRumbleStream.silenceTimeoutMilliseconds - 20) / 1000
            let inTurn = reports.indices.dropFirst().filter { index in
                reports[index].packet.isAtRest && !reports[index - 1].packet.isAtRest
                    && reports[index].time - reports[index - 1].time >= guardGap
            }
            // The guard can also be held up between its timeout and its write, long enough for the stream to go on
            // first: its report at rest then follows the stream's first report after the pause, with the counter
            // that report skipped (one or two below it, "Safe when we die" in docs/hd-haptics.md).
            let late = reports.indices.dropFirst(2).filter { index in
                let below = (reports[index - 1].packet.counter &- reports[index].packet.counter) & 0x0f
                return reports[index].packet.isAtRest && !reports[index - 1].packet.isAtRest && (1...2).contains(below)
                    && reports[index - 1].time - reports[index - 2].time >= guardGap
            }
            let byGuard = (inTurn + late).sorted()
            if !byGuard.isEmpty {
                try require(
                    stalled.provesStall(ofAtLeast: 50),
                    "the silence guard wrote mid-pattern (reports "
                        + byGuard.map {
                            describe(reports[max(0, $0 - 3)...min(reports.count - 1, $0 + 2)], from: origin)
                        }.joined(separator: "; ")
                        + ") though the guest stood still at most \(AudioSuite.tenths(stalled.longestStall())) ms: "
                        + "the stream stood still by itself; while it played, "
                        + (stalled.pressure.map { "\($0)" } ?? "no pressure totals kept") + "; "
                        + (stalled.threads.map { "\($0)" } ?? ""))
            }
            // Counters one apart, the guard's report among them; or more where the stream went two updates without
            // a report (it skips a counter when the guard may have written one, and did not):
            // - two apart after a pause before this report: the stream found the pause when it took the counter, or
            //   once the heartbeat had gone out;
            // - three apart after a pause before this report: it stood still after reading the clock for the
            //   heartbeat, so the guard may have had that heartbeat before the pause and written its silence too;
            // - two apart after a pause before the report before: it stood still between the heartbeat and the
            //   write, and this report's counter skipped the silence the guard may have written meanwhile.
            // A report of the guard's that came late is out of its turn: the counters run on around it.
            let inOrder = reports.indices.filter { !late.contains($0) }.map { reports[$0] }
            for index in inOrder.indices.dropFirst() {
                let step = (inOrder[index].packet.counter &- inOrder[index - 1].packet.counter) & 0x0f
                let pause = { (report: Int) in
                    report >= 1 && inOrder[report].time - inOrder[report - 1].time >= 2 * HDRumbleStream.updateSeconds
                }
                let skippedAfterAPause =
                    ((step == 2 || step == 3) && pause(index)) || (step == 2 && pause(index - 1))
                guard step != 1, !skippedAfterAPause else { continue }
                throw TestFailure(
                    reason: "counter \(inOrder[index - 1].packet.counter) followed by \(inOrder[index].packet.counter) "
                        + "in reports \(index - 1) and \(index) (the guard's late ones left out): "
                        + describe(inOrder[max(0, index - 3)...min(inOrder.count - 1, index + 2)], from: origin))
            }
            let written = reports.indices.filter { !byGuard.contains($0) }.map { reports[$0] }
            // The writer counts its spacing from the return of its last write, so the kernel queues the reports at
            // least `minimumSpacingSeconds` apart; the emulator stamps each when its thread reads it, which may be
            // late when the thread was answering the driver. A report read late by d shortens the gap after it by
            // d and lengthens the one before it by as much: a gap short of the spacing is the writer's only when
            // the two gaps around that report together are short too. The first report has no report before it,
            // but the stream wrote it after the player's start: that report read late by d leaves the time from the
            // start to it and the gap after it together a spacing at least.
            let gaps = zip(written, written.dropFirst()).map { $1.time - $0.time }
            let spacing = gaps.min() ?? 1
            let slack = 0.002
            var readLate = 0
            for (index, gap) in gaps.enumerated() where gap < HDRumbleStream.minimumSpacingSeconds - slack {
                let before = index > 0 ? gaps[index - 1] : written[0].time - origin
                let bound = (index > 0 ? 2 : 1) * HDRumbleStream.minimumSpacingSeconds - slack
                try require(
                    before + gap >= bound,
                    "reports \(index) and \(index + 1) \(gap) s apart, and \(before + gap) s span the two gaps around "
                        + "report \(index) (bound \(bound) s)")
                readLate += 1
            }
            /// What the left actuator played in the middle of step `step`: the stream's last report before it, which
            /// it writes at most an update apart while the actuators play (two, for a report the emulator read
            /// late). One older than that means the stream stood still with the whole guest (the guard's report at
            /// rest may have come meanwhile): a `TimingFailure`, explained by a stall of the gap less an update.
            func middle(_ step: Int) throws -> (frequency: Double, amplitude: Double, time: Double) {
                let time = origin + 0.3 * Double(step) + 0.15
                // None before it: the stream's first report, due at the player's start, came only after the whole
                // guest stood still.
                guard let report = written.last(where: { $0.time <= time }) else {
                    throw TimingFailure(
                        reason: "step \(step): no report came before its middle, \(Int((time - origin) * 1000)) ms "
                            + "after the player's start: "
                            + describe(written.filter { $0.time - time < 0.3 }, from: origin),
                        explainingStall: (time - origin - HDRumbleStream.updateSeconds) * 1000, window: origin...time)
                }
                let age = time - report.time
                if age > 2 * HDRumbleStream.updateSeconds {
                    throw TimingFailure(
                        reason: "step \(step): the stream's last report before its middle came \(Int(age * 1000)) ms "
                            + "before it: " + describe(written.filter { abs($0.time - time) < 0.3 }, from: origin),
                        explainingStall: (age - HDRumbleStream.updateSeconds) * 1000, window: report.time...time)
                }
                let band = report.packet.left.dominantBand ?? (0, 0)
                return (band.frequency, band.amplitude, report.time)
            }
            var frequencies: [Double] = []
            for step in 0..<5 {
                let played = try middle(step)
                let wanted = SharpnessFrequencyMap.hdRumble.frequency(sharpness: Double(step) / 4)
                let within = { (hertz: Double) in max(played.frequency / hertz, hertz / played.frequency) <= 1.03 }
                // The step before's band: a report the stream wrote before this step began (its content follows
                // the clock) and the emulator read only after the whole guest stood still.
                if step > 0, !within(wanted),
                    within(SharpnessFrequencyMap.hdRumble.frequency(sharpness: Double(step - 1) / 4))
                {
                    let began = origin + 0.3 * Double(step)
                    throw TimingFailure(
                        reason:
                            "step \(step): \(played.frequency) Hz played, \(wanted) Hz rendered: the step before's, "
                            + "in a report read \(Int((played.time - began) * 1000)) ms after this step began",
                        explainingStall: (played.time - began - HDRumbleStream.updateSeconds) * 1000,
                        window: began...played.time)
                }
                try require(
                    max(played.frequency / wanted, wanted / played.frequency) <= 1.03,
                    "step \(step): \(played.frequency) Hz played, \(wanted) Hz rendered (bound one code, 3 %)")
                frequencies.append(played.frequency)
            }
            try require(zip(frequencies, frequencies.dropFirst()).allSatisfy { $0 < $1 }, "not rising: \(frequencies)")
            let amplitudes = try (5..<8).map { try middle($0).amplitude }
            let frequency = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.25)
            for (amplitude, intensity) in zip(amplitudes, [0.25, 0.5, 1.0]) {
                let wanted = VibrationAmplitude.amplitude(level: intensity, frequency: frequency)
                try require(
                    abs(amplitude - wanted) <= 0.03,
                    "intensity \(intensity): amplitude \(amplitude) played, \(wanted) rendered (bound 0.03)")
            }
            guard let last = reports.last, last.packet.isAtRest else {
                throw TestFailure(reason: "the last report was not at rest: \(reports.last as Any)")
            }
            print(
                "    \(reports.count) reports, \(Int((spacing * 1000).rounded())) ms apart at least (\(readLate) gaps "
                    + "short by a report the emulator read late"
                    + (byGuard.isEmpty
                        ? ""
                        : "; \(byGuard.count) written by the guard while the guest stood still "
                            + "\(AudioSuite.tenths(stalled.longestStall())) ms")
                    + "); received "
                    + "\(frequencies.map { Int($0.rounded()) }) Hz for sharpness 0...1, amplitudes "
                    + "\(amplitudes.map { ($0 * 100).rounded() / 100 }) for intensity 0.25, 0.5, 1; last at rest")
        }
    }

    // MARK: Switch Pro: a pause between two taps

    /// Two taps 0.8 s apart, started 0.1 s ahead at a known instant of the engine's clock: after the first tap's
    /// reports at rest the stream writes nothing until the second, and looks once an update meanwhile. No thread
    /// runs more than 120 ms over the pattern, and the second tap's first report comes no earlier than its time.
    static func switchPauseBetweenTaps() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let second = 0.8
            let taps = HapticPattern(
                events: [0, second].map { time in
                    HapticEvent(
                        type: .hapticTransient,
                        parameters: [
                            HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                            HapticEventParameter(parameterID: .hapticSharpness, value: 0.5),
                        ],
                        relativeTime: time)
                }, parameters: [])
            let before = device.records().count
            let threadsBefore = ThreadTimes.now()
            let origin = try await VoiceCoilSuite.play(taps, on: engine, ahead: PIDSuite.startAheadSeconds)
            // Woken in the pause, a silent look once asked to run again at once: the stream's thread spun until the
            // second tap, and wrote it as soon as its update reached it, up to 30 ms early.
            let use = ThreadTimes.now().since(threadsBefore)
            let busiest = use.threads.map(\.ranMilliseconds).max() ?? 0
            try ThreadTimes.requireNoSpin(since: threadsBefore, over: "the 0.9 s of the pattern")
            try await Task.sleep(for: .milliseconds(200))
            let reports = rumbleReports(device, after: before)
            let playing = reports.filter { !$0.packet.left.isAtRest }
            guard let first = playing.first,
                let secondTap = playing.first(where: { $0.time >= first.time + second / 2 })
            else {
                throw TestFailure(reason: "not two taps: " + describe(reports, from: origin))
            }
            let inPause = reports.filter { $0.time > first.time + 0.2 && $0.time < secondTap.time }
            try require(inPause.isEmpty, "reports in the pause: " + describe(reports, from: origin))
            let wanted = origin + second
            try require(
                secondTap.time >= wanted - 0.001,
                "the second tap came \(AudioSuite.tenths((wanted - secondTap.time) * 1000)) ms before its time: "
                    + describe(reports, from: origin))
            if secondTap.time - wanted > PIDSuite.maximumLag {
                throw TimingFailure(
                    reason: "the second tap came \(AudioSuite.tenths((secondTap.time - wanted) * 1000)) ms after its "
                        + "time (bound \(Int(PIDSuite.maximumLag * 1000)) ms): " + describe(reports, from: origin),
                    explainingStall: (secondTap.time - wanted - PIDSuite.maximumLag) * 1000,
                    window: wanted...secondTap.time)
            }
            print(
                "    \(reports.count) reports, none in the pause; the second tap "
                    + "\(AudioSuite.tenths((secondTap.time - wanted) * 1000)) ms after its time; the busiest thread "
                    + "ran \(AudioSuite.tenths(busiest)) ms")
        }
    }

    // MARK: Switch Pro: killed or stopped

    /// A tone looped on HD rumble by `haptics play`, then SIGKILL (and, in a second run, SIGSTOP): the pad holds
    /// each report's bands, so it is at rest from the first report at rest that follows the last one playing.
    static func switchKilledOrStopped() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let figures = try await signalledPlayers(
                device, ["--actuators", "hd", "--device", nodes.rumbleNode], signals: [SIGKILL, SIGSTOP],
                "the tone on HD rumble",
                started: { rumbleReports($0).filter { !$0.packet.left.isAtRest } },
                // The pad holds each frame until the next one.
                restingFrom: { SwitchRumblePlayback(records: $0).restingFrom })
            print("    " + figures.joined(separator: "; "))
        }
    }

    /// For each of `signals`: `haptics play ARGUMENTS` plays a 10 s tone on the emulated `device` until `started`
    /// finds more than five of its reports, is sent the signal (a stopped player is killed after), and the pad
    /// must be at rest, by `restingFrom` over the records since, within 150 ms of the signal (later only by as long
    /// as the whole guest stood still after it: a `TimingFailure`). Returns a figure per signal.
    static func signalledPlayers<Report>(
        _ device: any EmulatedDevice, _ arguments: [String], signals: [Int32], _ what: String,
        started: @escaping ([PadRecord]) -> [Report], restingFrom: (ArraySlice<PadRecord>) -> Double?
    ) async throws -> [String] {
        let file = "/tmp/hd-tone-\(getpid()).ahap"
        try AHAPFixtures.tone(seconds: 10).ahapData().write(to: URL(fileURLWithPath: file))
        defer { unlink(file) }
        var figures: [String] = []
        for signal in signals {
            let before = device.records().count
            let process = try Subprocess([projectBinary("haptics"), "play"] + arguments + [file])
            defer { _ = process.finish(timeout: 0) }
            try await EmulationSuite.waitForOutputs(device, after: before, what) { started($0).count > 5 }
            let sent = monotonicSeconds()
            process.signal(signal)
            try await Task.sleep(for: .milliseconds(400))
            if signal == SIGSTOP { process.signal(SIGKILL) }
            _ = process.finish(timeout: VirtualPadSuite.hangGuardSeconds)
            let name = signal == SIGKILL ? "SIGKILL" : "SIGSTOP"
            guard let rest = restingFrom(device.records().dropFirst(before)) else {
                throw TestFailure(reason: "after \(name) nothing put the actuators at rest")
            }
            try require(rest.isFinite, "no report moved an actuator")
            // Later than the bound by as long as the whole guest stood still after the signal explains: the guard,
            // the driver and the pad's emulator stood still with it.
            if rest - sent > 0.150 {
                throw TimingFailure(
                    reason: "after \(name) the pad played on for \(Int((rest - sent) * 1000)) ms (bound 150 ms)",
                    explainingStall: (rest - sent - 0.150) * 1000, window: sent...rest)
            }
            figures.append("\(name): at rest \(Int(((rest - sent) * 1000).rounded())) ms after the signal")
        }
        return figures
    }

    // MARK: Switch Pro: no access

    static func switchFallsBackWithoutAccess() async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            if access("/run/udev/control", F_OK) == 0 { try AppUdevSuite.udevadm(["settle", "--timeout=30"]) }
            chmod(nodes.rumbleNode, 0o666)
            guard let hidraw = HidrawDevice.node(besideEventNode: nodes.rumbleNode) else {
                throw TestFailure(reason: "the Switch pad has no hidraw node")
            }
            chmod(hidraw, 0o600)
            let before = device.records().count
            let output = try DeviceSuite.haptics(
                ["play", "--actuators", "hd", "--device", nodes.rumbleNode, "Haptics/thud.ahap"], asNobody: true)
            let advice = AccessAdvice.hidrawNode(hidraw)
            try require(output.contains(advice), "no message naming the fix (\(advice)):\n\(output)")
            // hid-nintendo's own rumble: both bands at its fixed 160 and 320 Hz.
            let driver = rumbleReports(device, after: before).filter { !$0.packet.left.isAtRest }
            try require(!driver.isEmpty, "the thud did not play on the kernel's rumble")
            try require(
                driver.allSatisfy { abs($0.packet.left.lowFrequency - 160) <= 2 },
                "a report at another frequency than the driver's 160 Hz reached the pad")
            print("    \(output.split(separator: "\n").first { $0.contains(advice) } ?? "")")
        }
    }

    /// The guard's fork fails (EAGAIN, as at a process limit): HD rumble does not play, since a killed process
    /// would leave the pad vibrating; the kernel's rumble plays instead, and the engine says why. (It played HD
    /// rumble without a guard, logging a notice.)
    static func switchFallsBackWithoutGuard() async throws {
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            var options = HapticEngineOptions()
            options.actuators = .hd
            options.playsHapticsOnly = true
            options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
            let engine = HapticEngine(
                output: .device(.node(nodes.rumbleNode)), options: options, logger: EmulationSuite.logger())
            SyscallFaults.arm(SyscallFaults.Plan(site: "fork", errno: .wouldBlock, calls: .from(1)))
            do {
                defer { SyscallFaults.disarm() }
                try engine.start()
            }
            defer { engine.stop() }
            let capabilities = engine.capabilities
            try require(capabilities?.hdNode == nil, "HD rumble plays without a guard: \(capabilities as Any)")
            let reason = capabilities?.actuatorFallback ?? ""
            try require(reason.contains("silence guard"), "the fallback does not name the guard: \(reason)")
            let before = device.records().count
            try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.2, intensity: 0.8), on: engine)
            let driver = rumbleReports(device, after: before).filter { !$0.packet.left.isAtRest }
            try require(
                !driver.isEmpty && driver.allSatisfy { abs($0.packet.left.lowFrequency - 160) <= 2 },
                "the tone did not play on the kernel's rumble alone")
            print("    \(reason)")
        }
    }

    // MARK: Xbox: the trigger motors

    /// The report-3 commands among `records`, as the emulated pad decoded them, with their arrival time.
    static func xboxReports(_ records: some Sequence<PadRecord>) -> [(time: Double, report: XboxRumblePacket)] {
        records.compactMap { record in record.xboxRumble.map { (record.time.seconds, $0) } }
    }

    static func xboxReports(_ device: any EmulatedDevice, after before: Int) -> [(
        time: Double, report: XboxRumblePacket
    )] {
        xboxReports(device.records().dropFirst(before))
    }

    /// Our reports' duration, in the record's units.
    static let ourDuration = Int(XboxReportTiming.durationUnits)

    static func xboxTriggers() async throws {
        try await EmulationSuite.withController(.xboxOneBluetooth) { device, nodes in
            let probe = try DeviceSuite.probe(nodes.rumbleNode)
            let localities = probe.localities
            try requireEqual(probe.hdActuators?.kind, "trigger-motors", "probe's HD actuators")
            try require(
                localities == ["all", "left", "right", "left-trigger", "right-trigger", "triggers"],
                "probe lists localities \(localities)")
            var figures: [String] = []
            for locality in [HapticLocality.leftTrigger, .triggers] {
                let engine = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: locality)
                try requireEqual(engine.capabilities?.hdKind, .triggerMotors, "the engine's actuators")
                let before = device.records().count
                try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.4), on: engine)
                try await Task.sleep(for: .milliseconds(100))
                engine.stop()
                let reports = xboxReports(device, after: before)
                let playing = reports.filter { $0.report.leftTrigger > 0 || $0.report.rightTrigger > 0 }
                try require(!playing.isEmpty, "\(locality.rawValue): no report drove a trigger")
                let triggerBits = Int(XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger)
                try require(
                    reports.allSatisfy {
                        $0.report.enable == triggerBits && $0.report.strong == 0 && $0.report.weak == 0
                    },
                    "\(locality.rawValue): a report enabled or drove the body motors: \(reports.map(\.report))")
                let right = playing.map(\.report.rightTrigger).max() ?? 0
                let left = playing.map(\.report.leftTrigger).max() ?? 0
                if locality == .leftTrigger {
                    try require(left >= 0.9 && right == 0, "left-trigger: left \(left), right \(right)")
                } else {
                    try require(left >= 0.9 && right == left, "triggers: left \(left), right \(right)")
                }
                try require(
                    reports.allSatisfy { $0.report.duration == ourDuration && $0.report.loopCount == 0 },
                    "a report not bounded by the pad's own duration (120 ms, no repeats)")
                guard let last = reports.last, last.report.leftTrigger == 0, last.report.rightTrigger == 0 else {
                    throw TestFailure(reason: "\(locality.rawValue): the last report left a trigger running")
                }
                figures.append("\(locality.rawValue): left \(left) right \(right) in \(reports.count) reports")
            }
            print("    " + figures.joined(separator: "; ") + "; probe: \(localities.joined(separator: ","))")
        }
    }

    /// An engine on the first gamepad (as `HapticManager` makes them) takes the first pad that has what it was asked
    /// for: at a trigger locality the Xbox Wireless Controller though a DualSense is listed before it, and with `hd`
    /// the DualSense's voice coils though the Xbox pad is listed first. Until 6 December it took the first listed: the
    /// trigger engine failed ("has no trigger motors") and the `hd` one played the Xbox pad's motors.
    static func firstPadHasWhatWasAskedFor() async throws {
        func firstPadEngine(actuators: HapticActuators, locality: HapticLocality) throws -> HapticEngine {
            var options = HapticEngineOptions()
            options.actuators = actuators
            options.locality = locality
            options.playsHapticsOnly = true
            let engine = HapticEngine(
                output: .device(.firstRumbleDevice), options: options, logger: EmulationSuite.logger())
            do { try engine.start() } catch {
                throw TestFailure(reason: "starting an engine (\(actuators), \(locality.rawValue)): \(error)")
            }
            return engine
        }
        var figures: [String] = []
        try await EmulationSuite.withController(.dualsenseBluetooth) { _, dualSense in
            try await EmulationSuite.withController(.xboxOneBluetooth) { _, xbox in
                let triggers = try firstPadEngine(actuators: .rumble, locality: .leftTrigger)
                defer { triggers.stop() }
                try require(
                    triggers.capabilities?.node == xbox.rumbleNode && triggers.capabilities?.hdKind == .triggerMotors,
                    "left-trigger with the DualSense (\(dualSense.rumbleNode)) listed first: \(triggers.capabilities as Any)"
                )
                figures.append("left-trigger: \(xbox.rumbleNode), past \(dualSense.rumbleNode)")
            }
        }
        try await EmulationSuite.withController(.xboxOneBluetooth) { _, xbox in
            try await EmulationSuite.withController(.dualsenseBluetooth) { _, dualSense in
                let coils = try firstPadEngine(actuators: .hd, locality: .all)
                defer { coils.stop() }
                try require(
                    coils.capabilities?.node == dualSense.rumbleNode && coils.capabilities?.hdKind == .voiceCoils,
                    "hd with the Xbox pad (\(xbox.rumbleNode)) listed first: \(coils.capabilities as Any)")
                figures.append("hd: \(dualSense.rumbleNode), past \(xbox.rumbleNode)")
            }
        }
        print("    " + figures.joined(separator: "; "))
    }

    /// Two pads with HD actuators, the first a DualSense whose hidraw node this user may not write: `play --actuators
    /// hd` (no device named), run as another user, plays HD rumble on the Switch Pro listed after it. Before 6
    /// December it took the DualSense, as the first pad with HD actuators, and played its motors.
    static func firstPadWithWritableHD() async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        try await EmulationSuite.withController(.dualsenseBluetooth) { _, dualSense in
            try await EmulationSuite.withController(.switchPro) { device, switchPro in
                if access("/run/udev/control", F_OK) == 0 { try AppUdevSuite.udevadm(["settle", "--timeout=30"]) }
                guard let closed = HidrawDevice.node(besideEventNode: dualSense.rumbleNode),
                    let open = HidrawDevice.node(besideEventNode: switchPro.rumbleNode)
                else { throw TestFailure(reason: "a pad has no hidraw node") }
                for node in [dualSense.rumbleNode, switchPro.rumbleNode, open] { chmod(node, 0o666) }
                chmod(closed, 0o600)
                let before = device.records().count
                let output = try DeviceSuite.haptics(
                    ["play", "--actuators", "hd", "Haptics/thud.ahap"], asNobody: true)
                let started = output.split(separator: "\n").first { $0.contains("started") } ?? ""
                try require(
                    started.contains(open) && started.contains("hd-stream"),
                    "not HD rumble on the Switch Pro (\(open)), past the DualSense (\(closed)):\n\(output)")
                try require(
                    rumbleReports(device, after: before).contains { !$0.packet.left.isAtRest },
                    "nothing reached the Switch Pro")
                print("    \(started)")
            }
        }
    }

    /// On a pad without HD actuators (the virtual pad), `automatic` plays its motors with no fallback to report (it
    /// asked for HD actuators only where the pad has them: until 6 December it reported "has no HD actuators" as a
    /// fallback), while `hd` says why it plays the motors.
    static func fallbackOnlyWhereAsked() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics pad without HD actuators"))
        defer { pad.destroy() }
        var reasons: [HapticActuators: String?] = [:]
        for actuators in [HapticActuators.automatic, .hd] {
            var options = HapticEngineOptions()
            options.actuators = actuators
            options.playsHapticsOnly = true
            let engine = HapticEngine(
                output: .device(.node(pad.eventNode)), options: options, logger: EmulationSuite.logger())
            do { try engine.start() } catch { throw TestFailure(reason: "starting an engine (\(actuators)): \(error)") }
            try requireEqual(engine.capabilities?.actuators, .rumble, "\(actuators): the actuators")
            reasons[actuators] = engine.capabilities?.actuatorFallback
            engine.stop()
        }
        try require(reasons[.automatic] == .some(nil), "automatic reported a fallback: \(reasons)")
        try require(
            reasons[.hd]??.contains("has no HD actuators") == true, "hd did not say why it plays motors: \(reasons)")
    }

    /// Two engines of one process, at `left-trigger` and `right-trigger`, play together: each report carries both
    /// (the pad's one writer merges them), so neither stops the other's motor, and one of them renews the report
    /// (each renewed it: two reports every 50 ms).
    static func twoTriggerEngines() async throws {
        try await EmulationSuite.withController(.xboxOneBluetooth) { device, nodes in
            let left = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: .leftTrigger)
            defer { left.stop() }
            let right = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: .rightTrigger)
            defer { right.stop() }
            let before = device.records().count
            let start = monotonicSeconds()
            try left.makePlayer(with: AHAPFixtures.tone(seconds: 0.5, intensity: 1)).start(atTime: 0)
            try right.makePlayer(with: AHAPFixtures.tone(seconds: 0.5, intensity: 0.6)).start(atTime: 0)
            try await Task.sleep(for: .milliseconds(800))
            let playback = XboxRumblePlayback(records: device.records().dropFirst(before))
            // The middle 0.3 s, sampled every 10 ms: both triggers run throughout.
            let times = (0..<30).map { start + 0.1 + 0.01 * Double($0) }
            let levels = times.map { playback.levels(at: $0) }
            try requireNoDropout(
                times, levels.map { $0.leftTrigger >= 0.9 && $0.rightTrigger >= 0.5 },
                atRest: levels.map { $0.leftTrigger == 0 && $0.rightTrigger == 0 },
                "the triggers dropped out: \(levels.map { ($0.leftTrigger, $0.rightTrigger) })")
            try require(playback.restingFrom.isFinite, "the triggers did not come to rest")
            // Over the middle the levels hold: only renewals go out, one a renewal interval for the pad (six in
            // 0.3 s, a few more when the engine that renews falls behind), not one per engine (twelve).
            let renewals = playback.commands.count { $0.arrival >= times[0] && $0.arrival < times[0] + 0.3 }
            try require(renewals <= 9, "\(renewals) reports over the 0.3 s in the middle: each engine renews alone")
            print(
                "    left \(levels[15].leftTrigger), right \(levels[15].rightTrigger) together for 0.3 s, "
                    + "\(renewals) reports over it; at rest after")
        }
    }

    /// Fails with `reason` unless every sample at `times` is `running`. Our reports last 120 ms and are renewed
    /// every 50 ms: the motors drop out, all at rest, only when a renewal comes 70 ms late, so samples that are
    /// all `atRest` are a `TimingFailure` explained by the whole guest standing still that long, from a report's
    /// length before the first of them to the last. Any other sample short of its level fails.
    static func requireNoDropout(_ times: [Double], _ running: [Bool], atRest: [Bool], _ reason: String) throws {
        let short = times.indices.filter { !running[$0] }
        guard let first = short.first.map({ times[$0] }), let last = short.last.map({ times[$0] }) else { return }
        guard short.allSatisfy({ atRest[$0] }) else { throw TestFailure(reason: reason) }
        let duration = Double(XboxReportTiming.durationUnits) / 100
        throw TimingFailure(
            reason: reason, explainingStall: (duration - WriteBudget.standardRenewalInterval) * 1000,
            window: (first - duration)...last)
    }

    /// How long after the body joins the trigger's report the kernel's report for the rumble effect it stopped may
    /// still arrive: hid-microsoft sends it from a work item, a few milliseconds later, more on a loaded guest;
    /// allowed up to one renewal interval.
    static let kernelReportTrail = 0.05

    /// An engine at `all` (the kernel's rumble, the default) plays a 2 s tone; 0.3 s in, an engine at
    /// `left-trigger` plays 0.4 s and stops. From the rumble engine's first write after the trigger started, the
    /// body motors join the trigger's report: every report after the kernel's last (the one for the effect the
    /// rumble engine stopped) is ours and carries the body motors beside the trigger (hid-microsoft's report, with
    /// the triggers at 0, is not sent); once the trigger engine is gone, the body motors go back to the kernel's
    /// rumble. The body's tone outlasts the trigger's by far: making the trigger engine alone took up to 0.35 s
    /// on a slow emulated guest.
    static func bodyAndTriggersOneWriter() async throws {
        try await EmulationSuite.withController(.xboxOneBluetooth) { device, nodes in
            let body = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: .all, expectHD: false)
            defer { body.stop() }
            let before = device.records().count
            let start = monotonicSeconds()
            let toneSeconds = 2.0
            try body.makePlayer(with: AHAPFixtures.tone(seconds: toneSeconds, intensity: 0.8, sharpness: 0.2))
                .start(atTime: 0)
            try await Task.sleep(for: .milliseconds(300))
            let trigger = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: .leftTrigger)
            let joined = monotonicSeconds()
            try await VoiceCoilSuite.play(AHAPFixtures.tone(seconds: 0.4, intensity: 1), on: trigger)
            // Taken before the trigger engine stops: the body goes back to the kernel's rumble as soon as the
            // trigger engine has left, which may be before `stop` returns.
            let left = monotonicSeconds()
            trigger.stop()
            try await Task.sleep(for: .seconds(max(0.3, start + toneSeconds + 0.1 - monotonicSeconds())))
            let reports = xboxReports(device, after: before)
            let kernel = { (report: XboxRumblePacket) in report.duration != ourDuration }
            try require(reports.contains { $0.time < joined && kernel($0.report) }, "the kernel's rumble before")
            // The body joins the trigger's report at the rumble engine's next write after the trigger starts (a
            // renewal, 50 ms apart; later on a loaded guest), and the kernel's own report for the effect it then
            // stops may trail that by the driver's work item: from then on, one writer.
            guard let engaged = reports.first(where: { $0.time > joined && $0.report.enable == 0x0f })?.time else {
                throw TestFailure(reason: "the body motors never joined the trigger's report")
            }
            let during = reports.filter { $0.time > engaged + Self.kernelReportTrail && $0.time < left }
            try require(
                !during.isEmpty && during.allSatisfy { !kernel($0.report) }, "a kernel report while the trigger played")
            try require(
                during.allSatisfy { $0.report.enable == 0x0f }, "a report during without all four motors enabled")
            try require(reports.contains { $0.time > left && kernel($0.report) }, "the kernel's rumble after")
            let playback = XboxRumblePlayback(records: device.records().dropFirst(before))
            let times = (0..<20).map { engaged + 0.1 + 0.01 * Double($0) }
            let together = times.map { playback.levels(at: $0) }
            try requireNoDropout(
                times, together.map { $0.leftTrigger >= 0.9 && $0.strong >= 0.3 },
                atRest: together.map { $0.leftTrigger == 0 && $0.strong == 0 },
                "the motors dropped out: \(together.map { ($0.strong, $0.weak, $0.leftTrigger) })")
            let after = playback.levels(at: left + 0.2)
            try require(after.strong >= 0.3 && after.leftTrigger == 0, "after the trigger engine: \(after)")
            let middle = together[10]
            print(
                "    \(during.count) reports ours while the trigger played: strong \(middle.strong), weak \(middle.weak), "
                    + "left trigger \(middle.leftTrigger); kernel before and after; "
                    + String(format: "tone ran %.1f s", monotonicSeconds() - start))
        }
    }

    /// A looped tone on the left trigger by `haptics play`, then SIGKILL: the last report's own duration stops the
    /// motor, with nothing written after it.
    static func xboxKilled() async throws {
        try await EmulationSuite.withController(.xboxOneBluetooth) { device, nodes in
            let figures = try await signalledPlayers(
                device, ["--locality", "left-trigger", "--device", nodes.rumbleNode], signals: [SIGKILL],
                "the tone on the left trigger",
                started: { xboxReports($0).filter { $0.report.leftTrigger > 0 } },
                // The pad stops a report's motors by itself when its duration has passed.
                restingFrom: { XboxRumblePlayback(records: $0).restingFrom })
            print("    " + figures.joined(separator: "; ") + " (the last report's duration)")
        }
    }

    // MARK: A locality the pad lacks

    static func triggerLocalityRefusedOnSwitch() async throws {
        try await EmulationSuite.withController(.switchPro) { _, nodes in
            do {
                let engine = try engine(on: nodes.rumbleNode, actuators: .rumble, locality: .rightTrigger)
                engine.stop()
                throw TestFailure(reason: "an engine at right-trigger started on the Switch pad")
            } catch let failure as TestFailure where failure.reason.contains("starting the engine") {
                try require(failure.reason.contains("no trigger motors"), "the engine's error: \(failure.reason)")
            }
            let process = try Subprocess([
                projectBinary("haptics"), "play", "--locality", "rightTrigger", "--device", nodes.rumbleNode,
                "Haptics/thud.ahap",
            ])
            let status = process.finish(timeout: VirtualPadSuite.hangGuardSeconds)
            try require(status != 0, "haptics play at rightTrigger on the Switch pad exited 0:\n\(process.text)")
            try require(process.text.contains("no trigger motors"), "the CLI's error:\n\(process.text)")
            // The advice is another locality or a pad with trigger motors: the virtual output has none either.
            try require(
                process.text.contains("Play on the body motors") && !process.text.contains("--device virtual"),
                "the CLI's advice:\n\(process.text)")
            print("    \(process.text.split(separator: "\n").first { $0.contains("no trigger motors") } ?? "")")
        }
    }
}
