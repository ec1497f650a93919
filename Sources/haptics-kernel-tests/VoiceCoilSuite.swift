// The DualSense's voice coils over Bluetooth, through the real hid-playstation: patterns played with
// `actuators: .hd` reach the emulated pad as report 0x32 on its hidraw node (CRC, counter, the render's samples
// one for one), the rumble motors stay unused, player commands shape the stream, a killed or stopped player
// leaves the actuators silent within 150 ms, a user without the hidraw node falls back to rumble with a message,
// and an unplug mid-pattern recovers as it does on rumble.
import AHAPFiles
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Logging

enum VoiceCoilSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "hd", requires: [.uhid],
        tests: [
            KernelTest(name: "hd/dualsense-bt/assets-arrive-as-their-render-sample-for-sample-motors-unused") {
                try await StallWitness.againAfterAGuestStall(assetsArriveAsRendered)
            },
            KernelTest(name: "hd/dualsense-bt/a-sharpness-sweep-raises-the-received-frequency") {
                try await sharpnessSweep()
            },
            KernelTest(name: "hd/dualsense-bt/stop-loop-rate-and-two-players-shape-the-stream-timelines-refused") {
                try await StallWitness.againAfterAGuestStall(playerCommands)
            },
            KernelTest(name: "hd/dualsense-bt/a-tap-started-now-while-the-stream-runs-arrives-whole") {
                try await tapMidStream()
            },
            KernelTest(name: "hd/dualsense-bt/a-start-half-a-second-ahead-wakes-the-idle-stream-four-reports-before-it")
            {
                try await startAheadOnAnIdleStream()
            },
            KernelTest(name: "hd/dualsense-bt/parameters-sent-mid-pattern-go-on-from-where-it-is-not-from-its-top") {
                try await StallWitness.againAfterAGuestStall(parametersMidPattern)
            },
            KernelTest(name: "hd/dualsense-bt/a-player-unmuted-mid-pattern-goes-on-from-where-it-is-not-from-its-top") {
                try await StallWitness.againAfterAGuestStall(unmutedMidPattern)
            },
            KernelTest(name: "hd/dualsense-bt/a-parameter-sent-for-later-reaches-the-pad-at-its-time-not-a-lead-late") {
                try await StallWitness.againAfterAGuestStall(parameterSentForLater)
            },
            KernelTest(name: "hd/dualsense-bt/sigkill-and-sigstop-leave-the-actuators-silent-within-150ms") {
                try await StallWitness.againAfterAGuestStall(killedOrStoppedFallsSilent)
            },
            KernelTest(name: "hd/dualsense-bt/without-hidraw-access-plays-rumble-and-names-the-fix") {
                try await fallsBackWithoutAccess()
            },
            KernelTest(name: "hd/dualsense-bt/unplug-and-replug-mid-pattern-recover-on-the-voice-coils") {
                try await unplugMidPattern()
            },
            KernelTest(name: "hd/dualsense-usb/the-audio-haptics-report-takes-the-pad-out-of-rumble-emulation") {
                try await usbLeavesRumbleEmulation()
            },
            KernelTest(name: "hd/dualsense-bt/two-engines-one-per-handle-play-together-through-one-stream") {
                try await StallWitness.againAfterAGuestStall(twoEnginesOnePad)
            },
            KernelTest(name: "hd/dualsense-bt/feedback-prints-each-tap-at-the-level-the-coils-play-it") {
                try await feedbackPrintsTheCoilsLevels()
            },
            KernelTest(name: "hd/dualsense-bt/a-pad-named-by-a-link-to-its-node-plays-on-the-voice-coils") {
                try await namedByLink()
            },
            KernelTest(name: "hd/dualsense-bt-and-switch-pro/the-engines-gain-halves-the-voice-coils-and-hd-rumble") {
                try await gainScalesHDActuators()
            },
            KernelTest(
                name: "hd/dualsense-bt-and-switch-pro/an-engine-stopped-and-started-again-carries-the-counter-on",
                body: counterCarriesOnAcrossStreams),
        ] + HDRumbleSuite.tests + HDRumbleSuite.ffRumbleTests + HDRumbleSuite.motionFaultTests)

    static let rate = Double(DualSenseHapticsReport.sampleRate)

    /// An engine on the emulated pad's HD actuators (the DualSense's voice coils, a Switch pad's HD rumble).
    static func engine(on node: String, gain: Double = 1, locality: HapticLocality = .all) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.actuators = .hd
        options.gain = gain
        options.locality = locality
        options.playsHapticsOnly = true
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let engine = HapticEngine(
            output: .device(.id(try AppSuite.stableID(of: node))), options: options, logger: EmulationSuite.logger())
        do { try engine.start() } catch { throw TestFailure(reason: "starting the engine on \(node): \(error)") }
        try require(engine.capabilities?.hdNode != nil, "the engine plays on \(engine.capabilities as Any)")
        return engine
    }

    /// Plays `pattern` once and waits for its completion: started now, or `ahead` seconds after the player is made
    /// (which compiles the pattern). Returns the instant it was started for: the clock just before the call of a
    /// start now, else the engine time it was started at (the engine's clock is the monotonic clock).
    @discardableResult
    static func play(_ pattern: HapticPattern, on engine: HapticEngine, ahead: Double = 0) async throws -> Double {
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let done = AsyncStream<Void>.makeStream()
        player.completionHandler = { _ in done.continuation.yield() }
        let origin = ahead > 0 ? engine.currentTime + ahead : monotonicSeconds()
        try player.start(atTime: ahead > 0 ? origin : 0)
        var iterator = done.stream.makeAsyncIterator()
        _ = await iterator.next()
        return origin
    }

    // MARK: What the pad received

    /// The waveform reports recorded after record `before`, as the emulated pad decoded them.
    static func hapticsReports(_ device: any EmulatedDevice, after before: Int) -> [PadRecord] {
        device.records().dropFirst(before).filter { $0.waveform != nil }
    }

    /// The reports other than waveform reports the driver sent after record `before` (its rumble).
    static func otherReports(_ device: any EmulatedDevice, after before: Int) -> [PadRecord] {
        device.records().dropFirst(before).filter { $0.event == .output && $0.waveform == nil }
    }

    /// Checks the reports were taken (CRC and layout), with counters one apart, and returns the left and right
    /// samples in order.
    static func checkedSamples(_ reports: [PadRecord], _ what: String) throws -> (left: [Int8], right: [Int8]) {
        try require(!reports.isEmpty, "\(what): no haptics report arrived")
        let packets = reports.compactMap(\.waveform)
        try requireEqual(packets.filter(\.isPlayed).count, reports.count, "\(what): reports the pad took")
        for (previous, next) in zip(packets, packets.dropFirst()) where next.counter != (previous.counter + 1) % 256 {
            throw TestFailure(reason: "\(what): counter \(previous.counter) followed by \(next.counter)")
        }
        return (packets.flatMap { $0.left ?? [] }, packets.flatMap { $0.right ?? [] })
    }

    /// The samples the stream sends for `pattern` played alone from its start: the render, limited as the stream
    /// limits a mix, in the pad's signed bytes.
    static func expectedSamples(_ pattern: HapticPattern) -> (left: [Int8], right: [Int8]) {
        let renderer = WaveformRenderer(pattern: pattern, sampleRate: rate)
        let frames = renderer.render(from: 0, count: renderer.endFrame)
        func bytes(_ channel: [Double]) -> [Int8] {
            channel.map { DualSenseHapticsReport.sample(Float(SoftLimiter.standard(Double(Float($0))))) }
        }
        return (bytes(frames.left), bytes(frames.right))
    }

    /// The shift that lines `received` up with `expected` (received[i] is expected[i + shift]) and the samples
    /// that differ at it, over every sample where either is not silent.
    static func alignment(_ received: [Int8], _ expected: [Int8]) -> (shift: Int, mismatches: Int, compared: Int) {
        var best = (shift: 0, mismatches: Int.max, compared: 0)
        for shift in -DualSenseHapticsReport.framesPerReport * 4...DualSenseHapticsReport.framesPerReport * 4 {
            var mismatches = 0
            var compared = 0
            for index in 0..<max(received.count, expected.count - shift) {
                let got = index < received.count ? received[index] : 0
                let wanted = index + shift >= 0 && index + shift < expected.count ? expected[index + shift] : 0
                guard got != 0 || wanted != 0 else { continue }
                compared += 1
                if got != wanted { mismatches += 1 }
            }
            if mismatches < best.mismatches { best = (shift, mismatches, compared) }
        }
        return best
    }

    // MARK: Assets, sample for sample

    static func assetsArriveAsRendered() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let assets = try FileManager.default.contentsOfDirectory(atPath: "Haptics").filter { $0.hasSuffix(".ahap") }
                .sorted()
            try require(!assets.isEmpty, "no asset in Haptics/")
            for asset in assets {
                let pattern = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/\(asset)"))
                let before = device.records().count
                try await play(pattern, on: engine)
                try await Task.sleep(for: .milliseconds(120))
                let reports = hapticsReports(device, after: before)
                let received = try checkedSamples(reports, asset)
                let expected = expectedSamples(pattern)
                // Where the coils ran dry mid-pattern (a report that found the pad's FIFO empty, after the first),
                // the stream, which keeps to the clock, went on from where the pattern then was: the samples meant
                // for the silence never come. The whole guest standing still as long as the silence, over it,
                // explains that; nothing else does.
                let played = VoiceCoilPlayback(records: reports).played
                let silences = zip(played, played.dropFirst()).map { (silence: $1.start - $0.end, arrival: $1.arrival) }
                    .filter { $0.silence > 0 }
                for (channel, got, wanted) in [
                    ("left", received.left, expected.left), ("right", received.right, expected.right),
                ] {
                    let lined = alignment(got, wanted)
                    let reason =
                        "\(asset) \(channel): \(lined.mismatches) of \(lined.compared) samples differ from the render "
                        + "(best shift \(lined.shift) frames)"
                    if lined.mismatches > 0, let longest = silences.max(by: { $0.silence < $1.silence }) {
                        throw TimingFailure(
                            reason: reason + ", the coils silent \(AudioSuite.tenths(longest.silence * 1000)) ms "
                                + "mid-pattern",
                            explainingStall: longest.silence * 1000,
                            window: (longest.arrival - longest.silence)...longest.arrival)
                    }
                    try require(lined.mismatches == 0, reason)
                    try require(lined.shift >= 0, "\(asset): the stream plays ahead of the render (\(lined.shift))")
                }
                try require(
                    received.left.suffix(DualSenseHapticsReport.framesPerReport).allSatisfy { $0 == 0 },
                    "\(asset): the last report is not silent")
                let rumble = otherReports(device, after: before).filter { ($0.strong ?? 0) > 0 || ($0.weak ?? 0) > 0 }
                try require(rumble.isEmpty, "\(asset): the driver drove the rumble motors: \(rumble.first!)")
                print("    \(asset): \(received.left.count) frames, the render's samples one for one")
            }
        }
    }

    // MARK: Sharpness as frequency

    /// Five steps of sharpness, 0.3 s each.
    static let sweep = HapticPattern(
        events: (0..<5).map { step in
            HapticEvent(
                type: .hapticContinuous,
                parameters: [
                    HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                    HapticEventParameter(parameterID: .hapticSharpness, value: Double(step) / 4),
                ], relativeTime: 0.3 * Double(step), duration: 0.3)
        }, parameters: [])

    static func sharpnessSweep() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let before = device.records().count
            try await play(sweep, on: engine)
            try await Task.sleep(for: .milliseconds(120))
            let received = try checkedSamples(hapticsReports(device, after: before), "sweep").left
            guard let first = received.firstIndex(where: { $0 != 0 }) else {
                throw TestFailure(reason: "the sweep arrived silent")
            }
            var frequencies: [Double] = []
            for step in 0..<5 {
                // The middle 0.2 s of each step.
                let start = first + Int((0.3 * Double(step) + 0.05) * rate)
                let window = received[start..<min(start + Int(0.2 * rate), received.count)].map(PlayedWaveform.level)
                let measured = WaveformAnalysis.dominantFrequency(window, sampleRate: rate) ?? 0
                let wanted = SharpnessFrequencyMap.voiceCoil.frequency(sharpness: Double(step) / 4)
                try require(
                    abs(measured - wanted) <= max(0.06 * wanted, 5),
                    "step \(step): \(measured) Hz received, \(wanted) Hz rendered (bound 6 % or 5 Hz)")
                frequencies.append(measured)
            }
            try require(zip(frequencies, frequencies.dropFirst()).allSatisfy { $0 < $1 }, "not rising: \(frequencies)")
            print("    received \(frequencies.map { Int($0.rounded()) }) Hz for sharpness 0, 0.25, 0.5, 0.75, 1")
        }
    }

    // MARK: Player commands

    /// One continuous event of `duration` at `intensity`, sharpness 0.5 (a 122 Hz carrier).
    static func tone(_ duration: Double, intensity: Double = 1) -> HapticPattern {
        AHAPFixtures.tone(seconds: duration, intensity: intensity)
    }

    /// `condition`, or a `TimingFailure` saying `reason` that only the whole guest standing still for `stall`
    /// seconds, and never less than `leastStallMilliseconds` (during `window`, engine seconds, when given),
    /// explains: `againAfterAGuestStall` runs the test again when its witness saw one, and fails it otherwise.
    static func requireOrStall(
        _ condition: Bool, _ reason: @autoclosure () -> String, stall: Double, during window: ClosedRange<Double>? = nil
    ) throws {
        guard !condition else { return }
        throw TimingFailure(
            reason: reason(), explainingStall: max(stall * 1000, leastStallMilliseconds), window: window)
    }

    /// The shortest standstill that excuses a bound missed by a hair: ten of the witness's 2 ms wakes.
    static let leastStallMilliseconds = 20.0

    /// Two engines on one pad's voice coils, one per handle, as a Core Haptics app makes one per locality: their
    /// tones started at one instant reach the pad as one stream (its counters one after the other), the left
    /// handle's on the left actuator and the right's on the right, together and without a gap. (Each engine wrote
    /// reports of its own: the pad played the two streams interleaved.)
    static func twoEnginesOnePad() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let (before, _) = try await playOnEachHandle(
                of: device, node: nodes.rumbleNode, { try engine(on: $0, locality: $1) }, left: tone(0.3),
                right: tone(0.3), wait: .milliseconds(550))
            let samples = try checkedSamples(hapticsReports(device, after: before), "two engines on one pad")
            guard let firstLeft = samples.left.firstIndex(where: { $0 != 0 }),
                let firstRight = samples.right.firstIndex(where: { $0 != 0 })
            else {
                throw TestFailure(
                    reason: "a handle's tone is missing: \(sounding(samples.left).seconds) s on the left, "
                        + "\(sounding(samples.right).seconds) s on the right")
            }
            try require(
                abs(firstLeft - firstRight) <= DualSenseHapticsReport.framesPerReport,
                "the tones began \(abs(firstLeft - firstRight)) frames apart, not together")
            for (side, channel) in [("left", samples.left), ("right", samples.right)] {
                _ = try requireSoundsWhole(channel, atLeast: 0.25, "the \(side) handle, of 0.3 s,")
            }
            print(
                "    one stream, its counters in order; left and right tones "
                    + "\(Int(sounding(samples.left).seconds * 1000)) and \(Int(sounding(samples.right).seconds * 1000)) ms, "
                    + "begun \(abs(firstLeft - firstRight)) frames apart")
        }
    }

    /// The sound in `samples`: at least `seconds` long and without a gap as long as a report, or a `TimingFailure`
    /// that only a standstill as long as what is missing explains (the stream skips what it falls behind by).
    static func requireSoundsWhole(_ samples: [Int8], atLeast seconds: Double, _ what: String) throws -> (
        seconds: Double, samples: [Double]
    ) {
        let sound = sounding(samples)
        try requireOrStall(
            sound.seconds > seconds, "\(what) played \(sound.seconds) s", stall: seconds - sound.seconds)
        let gap = longestSilence(sound.samples)
        try requireOrStall(
            gap < DualSenseHapticsReport.framesPerReport, "\(what) has a gap of \(gap) frames",
            stall: Double(gap - DualSenseHapticsReport.framesPerReport) / rate)
        return sound
    }

    /// Plays `left` on an engine at the left handle of the pad at `node` and `right` on one at its right handle
    /// (both made by `make`), started at one instant 0.1 s ahead, as a Core Haptics app makes an engine per
    /// locality; waits `wait`, then stops both. Returns how many records the pad had before, and the instant (engine
    /// time, `CLOCK_MONOTONIC` seconds).
    static func playOnEachHandle(
        of device: any EmulatedDevice, node: String, _ make: (String, HapticLocality) throws -> HapticEngine,
        left: HapticPattern, right: HapticPattern, wait: Duration
    ) async throws -> (before: Int, at: Double) {
        let leftEngine = try make(node, .leftHandle)
        defer { leftEngine.stop() }
        let rightEngine = try make(node, .rightHandle)
        defer { rightEngine.stop() }
        let before = device.records().count
        let at = leftEngine.currentTime + 0.1
        try leftEngine.makeAdvancedPlayer(with: left).start(atTime: at)
        try rightEngine.makeAdvancedPlayer(with: right).start(atTime: at)
        try await Task.sleep(for: wait)
        return (before, at)
    }

    /// The seconds from the first sample that is not silent to the last, and the samples between.
    static func sounding(_ samples: [Int8]) -> (seconds: Double, samples: [Double]) {
        guard let first = samples.firstIndex(where: { $0 != 0 }), let last = samples.lastIndex(where: { $0 != 0 })
        else { return (0, []) }
        return (Double(last + 1 - first) / rate, samples[first...last].map { Double($0) / 127 })
    }

    /// A motor timeline is refused; a stop cuts the waveform where it is made; a loop plays on without a gap;
    /// twice the rate plays half as long at the same carrier frequency; two players started together sum.
    static func playerCommands() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            // A motor timeline has no waveform: refused, not played as nothing.
            do {
                _ = try engine.makeAdvancedPlayer(timeline: PatternRenderer().render(tone(0.1)))
                throw TestFailure(reason: "a motor timeline was taken by an engine on voice coils")
            } catch let error as HapticEngineError {
                try requireEqual(error.kind, .invalidArgument, "the refusal of a motor timeline")
            }
            // Stopped after about 0.3 s of a 2 s tone: the waveform lasts as long as the player played, within
            // a report and the lead (the samples queued before the stop are played).
            var before = device.records().count
            let long = try engine.makeAdvancedPlayer(with: tone(2))
            let started = monotonicSeconds()
            try long.start(atTime: 0)
            try await Task.sleep(for: .milliseconds(300))
            let stopped = monotonicSeconds()
            try long.stop(atTime: 0)
            try await Task.sleep(for: .milliseconds(150))
            let played = sounding(try checkedSamples(hapticsReports(device, after: before), "stop").left).seconds
            // The stream skips what it falls behind by when the guest stands still: a shorter sound, which only
            // such a standstill explains (as for every bound on the stream's sound below).
            try requireOrStall(
                abs(played - (stopped - started)) <= 0.06,
                "stopped after \(stopped - started) s, the pad played \(played) s (bound 60 ms)",
                stall: abs(played - (stopped - started)) - 0.06, during: started...(stopped + 0.15))
            // Looped three times and a half: one sound, no gap longer than a report.
            before = device.records().count
            let looping = try engine.makeAdvancedPlayer(with: tone(0.2))
            looping.loopEnabled = true
            try looping.start(atTime: 0)
            try await Task.sleep(for: .milliseconds(700))
            try looping.stop(atTime: 0)
            try await Task.sleep(for: .milliseconds(150))
            let loop = try checkedSamples(hapticsReports(device, after: before), "loop").left
            let loopSound = try requireSoundsWhole(loop, atLeast: 0.55, "the loop, of about 0.7 s,")
            // Twice the rate: a 0.6 s tone in 0.3 s, at the same frequency.
            before = device.records().count
            let fast = try engine.makeAdvancedPlayer(with: tone(0.6))
            fast.playbackRate = 2
            let done = AsyncStream<Void>.makeStream()
            fast.completionHandler = { _ in done.continuation.yield() }
            try fast.start(atTime: 0)
            var iterator = done.stream.makeAsyncIterator()
            _ = await iterator.next()
            try await Task.sleep(for: .milliseconds(120))
            let quick = sounding(try checkedSamples(hapticsReports(device, after: before), "rate 2").left)
            try requireOrStall(
                abs(quick.seconds - 0.3) <= 0.02, "at rate 2 a 0.6 s tone played \(quick.seconds) s",
                stall: abs(quick.seconds - 0.3) - 0.02)
            let frequency =
                WaveformAnalysis.dominantFrequency(quick.samples.prefix(600).map { Float($0) }, sampleRate: rate) ?? 0
            let wanted = SharpnessFrequencyMap.voiceCoil.frequency(sharpness: 0.5)
            try require(abs(frequency - wanted) <= 0.06 * wanted, "rate 2 plays \(frequency) Hz, not \(wanted) Hz")
            // Two players started at the same engine time sum: twice one's level (below the limiter's knee).
            let single = try await levelOfPlayers(1, engine: engine, device: device)
            let pair = try await levelOfPlayers(2, engine: engine, device: device)
            // Started 100 ms ahead: only a standstill as long keeps one from its start.
            try requireOrStall(
                (1.9...2.05).contains(pair / single), "two players at \(pair), one at \(single): not their sum",
                stall: 0.1)
            print(
                "    stop after \(Int((stopped - started) * 1000)) ms played \(Int(played * 1000)) ms; a looped tone "
                    + "\(Int(loopSound.seconds * 1000)) ms without a gap; rate 2: \(Int(quick.seconds * 1000)) ms at "
                    + "\(Int(frequency.rounded())) Hz; two players \(String(format: "%.2f", pair / single))× one")
        }
    }

    /// A tap started now while another player keeps the stream running (a silent continuous event: the stream
    /// writes while a source plays, whatever its level) arrives whole, every sample of its render: the engine
    /// starts it after what the pad has queued (`PatternStream.startLead`) rather than skipping into it. Its
    /// burst is shorter than that queue, so a start placed now would leave nothing of it.
    static func tapMidStream() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let carrier = try engine.makeAdvancedPlayer(with: tone(1.5, intensity: 0))
            try carrier.start(atTime: 0)
            try await Task.sleep(for: .milliseconds(300))
            let tap = AHAPFixtures.tap(sharpness: 1)
            let expected = expectedSamples(tap)
            let burst = sounding(expected.left).seconds
            let before = device.records().count
            try engine.makeAdvancedPlayer(with: tap).start(atTime: 0)
            try await Task.sleep(for: .milliseconds(250))
            try carrier.stop(atTime: 0)
            try await Task.sleep(for: .milliseconds(120))
            let received = try checkedSamples(hapticsReports(device, after: before), "the tap")
            let lined = alignment(received.left, expected.left)
            let got = sounding(received.left).seconds
            try require(
                lined.mismatches == 0 && got == burst,
                "the tap arrived as \(Int((got * rate).rounded())) of its \(Int((burst * rate).rounded())) sounding "
                    + "frames, \(lined.mismatches) of \(lined.compared) samples off its render")
            print(
                "    a \(String(format: "%.1f", burst * 1000)) ms burst started mid-stream: every sample of its render")
        }
    }

    /// A tap started half a second ahead on an idle stream: the stream sleeps until the lead and a report (about
    /// 43 ms) before it, as far ahead as a running stream keeps a start, so at most four silent reports reach the
    /// pad before the tap, not a silent report every 10.67 ms from the start call (about 47). A thread woken late
    /// sends fewer.
    static func startAheadOnAnIdleStream() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let tap = AHAPFixtures.tap(sharpness: 1)
            let before = device.records().count
            try await play(tap, on: engine, ahead: 0.5)
            try await Task.sleep(for: .milliseconds(120))
            let reports = hapticsReports(device, after: before)
            let received = try checkedSamples(reports, "the tap")
            guard let first = received.left.firstIndex(where: { $0 != 0 }) else {
                throw TestFailure(reason: "the tap arrived silent")
            }
            let silent = first / DualSenseHapticsReport.framesPerReport
            try require(silent <= 4, "\(silent) silent reports before a tap started 0.5 s ahead (at most 4)")
            print("    \(silent) silent reports before the tap, \(reports.count) reports in all")
        }
    }

    /// A full tap at 0 and a full tone from 0.25 s to `end`.
    static func tapThenTone(until end: Double) -> HapticPattern {
        let intensity = HapticEventParameter(parameterID: .hapticIntensity, value: 1)
        return HapticPattern(
            events: [
                HapticEvent(type: .hapticTransient, parameters: [intensity], relativeTime: 0),
                HapticEvent(type: .hapticContinuous, parameters: [intensity], relativeTime: 0.25, duration: end - 0.25),
            ], parameters: [])
    }

    /// Parameters sent while a pattern plays (an intensity control, as `sendParameters` gives) change the rest of
    /// it from where the player is: a pattern of a tap at 0 and a tone from 0.25 s to 0.6 s, sent an intensity of
    /// 0.5 at about 0.1 s, reaches the pad as the one tap and the tone 0.25 s after it, at half its level. Played
    /// again from its top at the change, the pad would get a second tap and the tone 0.1 s late.
    static func parametersMidPattern() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let before = device.records().count
            let player = try engine.makeAdvancedPlayer(with: tapThenTone(until: 0.6))
            // Started ahead, so that the stream plays the tap at its time: a start now, in a guest process's first
            // test, reached the stream late and was played whole as late, the tone after it on the clock (215 ms
            // after the tap in every run alone).
            try player.start(atTime: engine.currentTime + 0.2)
            try await Task.sleep(for: .milliseconds(300))
            try player.sendParameters(
                [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)], atTime: 0)
            try await Task.sleep(for: .milliseconds(750))
            let left = try checkedSamples(hapticsReports(device, after: before), "the pattern").left
            // Sounding stretches apart by 50 ms of silence or more.
            var runs: [(first: Int, last: Int)] = []
            for (index, sample) in left.enumerated() where sample != 0 {
                if let last = runs.last?.last, index - last <= Int(0.05 * rate) {
                    runs[runs.count - 1].last = index
                } else {
                    runs.append((index, index))
                }
            }
            let described = runs.map { "\(Int(Double($0.first - runs[0].first) / rate * 1000)) ms" }
            try require(
                runs.count == 2,
                "the pad got \(runs.count) stretches of sound, at \(described) from the first: not the tap and "
                    + "the tone")
            let toneAt = Double(runs[1].first - runs[0].first) / rate
            // Picked up part-way after the send, the pattern follows the engine's clock: a standstill skips it ahead.
            try requireOrStall(
                abs(toneAt - 0.25) <= 0.02, "the tone began \(Int(toneAt * 1000)) ms after the tap, not 250 ms",
                stall: abs(toneAt - 0.25))
            // Its level: the tone's at intensity 0.5, which the control makes of its 1.
            func level(_ samples: [Int8]) -> Double { WaveformAnalysis.rms(sounding(samples).samples.map(Float.init)) }
            let played = level(Array(left[runs[1].first...runs[1].last]))
            let half = level(expectedSamples(tone(0.35, intensity: 0.5)).left)
            let full = level(expectedSamples(tone(0.35)).left)
            try require(
                abs(played / half - 1) <= 0.1,
                "the tone played at \(played), at intensity 0.5 it is \(half) and at 1 \(full): the control was lost")
            print(
                "    a tap, then the tone \(Int(toneAt * 1000)) ms later at \(String(format: "%.2f", played / half))× "
                    + "its level at intensity 0.5 (\(String(format: "%.2f", played / full))× at 1)")
        }
    }

    /// A player muted mid-pattern and unmuted goes on from where it is: a tap at 0 and a tone from 0.25 s to 1 s,
    /// muted about 0.3 s in and unmuted 0.15 s later, is played by the pad as the tap, the tone, and after the
    /// mute's silence the rest of the tone, on to its end 1 s after the start (within 40 ms). Played again from its
    /// top at the unmute (as until 7 December), the tap came again after the silence, then the tone 0.25 s later.
    static func unmutedMidPattern() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let before = device.records().count
            let player = try engine.makeAdvancedPlayer(with: tapThenTone(until: 1))
            // Started ahead, so that the stream plays it from its time, not late and whole.
            let start = engine.currentTime + 0.2
            try player.start(atTime: start)
            try await Task.sleep(for: .milliseconds(500))
            player.isMuted = true
            try await Task.sleep(for: .milliseconds(150))
            player.isMuted = false
            try await Task.sleep(for: .milliseconds(1300))
            let reports = hapticsReports(device, after: before)
            _ = try checkedSamples(reports, "the tone")
            // When the pad played each report with sound (each from its arrival or the end of the one before): the
            // stream writes none while nothing plays, so the mute's silence is a gap in time, not silent samples.
            // Stretches of sound: a report heard 50 ms or more after the last one with sound begins a new one.
            var runs: [(first: Double, last: Double)] = []
            for report in VoiceCoilPlayback(records: reports).played {
                let samples = report.left.indices.filter { report.left[$0] != 0 || report.right[$0] != 0 }
                guard let first = samples.first, let last = samples.last else { continue }
                let from = report.start + Double(first) / rate
                let to = report.start + Double(last + 1) / rate
                if let end = runs.last?.last, from - end < 0.05 {
                    runs[runs.count - 1].last = to
                } else {
                    runs.append((from, to))
                }
            }
            // The pad's times and the engine's are both CLOCK_MONOTONIC.
            func milliseconds(_ time: Double) -> Int { Int(((time - start) * 1000).rounded()) }
            let described = runs.map { run -> String in "\(milliseconds(run.first))-\(milliseconds(run.last)) ms" }
            try require(
                runs.count == 3 && runs[2].last - runs[2].first > 0.4,
                "the pad played \(runs.count) stretches of sound (\(described) from the start): not the tap, the tone, "
                    + "and the rest of the tone after the mute")
            let end = runs[2].last - start
            try requireOrStall(
                abs(end - 1) <= 0.04, "the tone ended \(milliseconds(runs[2].last)) ms after the start, not 1000 ms",
                stall: abs(end - 1))
            print(
                "    sound played at \(described.joined(separator: ", ")) from the start: the tone went on "
                    + "where it was")
        }
    }

    /// A parameter sent for a later time reaches the pad at that time: a 0.6 s tone started 0.2 s ahead, sent at
    /// once an intensity of 0.5 for 0.3 s into it, steps down 0.3 s after its first sample, within 10 ms. The
    /// stream keeps about 43 ms queued in the pad: told of the change only at its time, it would play it that
    /// much later. The player holds the control until then and the stream is given the stretch after it ahead.
    static func parameterSentForLater() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let before = device.records().count
            let player = try engine.makeAdvancedPlayer(with: tone(0.6))
            let start = engine.currentTime + 0.2
            try player.start(atTime: start)
            try player.sendParameters(
                [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)],
                atTime: start + 0.3)
            try await Task.sleep(for: .milliseconds(1100))
            let left = try checkedSamples(hapticsReports(device, after: before), "the tone").left
            guard let first = left.firstIndex(where: { $0 != 0 }) else {
                throw TestFailure(reason: "the pad got no tone")
            }
            let samples = left[first...].map { Float($0) }
            // Levels over one carrier period (122 Hz: 24.6 samples at 3 kHz), so that a window's level is steady.
            let period = 25
            func level(_ from: Double, _ to: Double) -> Double {
                WaveformAnalysis.rms(samples[Int(from * rate)..<min(Int(to * rate), samples.count)])
            }
            let full = level(0.05, 0.25)
            let lowered = level(0.35, 0.55)
            let expected =
                WaveformAnalysis.rms(expectedSamples(tone(0.35, intensity: 0.5)).left.map(Float.init))
                / WaveformAnalysis.rms(expectedSamples(tone(0.35)).left.map(Float.init))
            try require(
                full > 0 && abs(lowered / full / expected - 1) <= 0.1,
                "after the change the tone played at \(lowered / full) of its level before, at intensity 0.5 it is "
                    + "\(expected): the control was lost")
            // The step: the first period-long window from 0.1 s on whose level is below the middle of the two,
            // which it reaches with about half of it past the step.
            let middle = (full + lowered) / 2
            let from = Int(0.1 * rate)
            guard
                let window = (from..<(samples.count - period)).first(where: {
                    WaveformAnalysis.rms(samples[$0..<($0 + period)]) < middle
                })
            else { throw TestFailure(reason: "the tone never stepped down") }
            let stepAt = (Double(window) + Double(period) / 2) / rate
            try requireOrStall(
                abs(stepAt - 0.3) <= 0.01, "the tone stepped down \(Int(stepAt * 1000)) ms in, not at 300 ms",
                stall: abs(stepAt - 0.3))
            print(
                "    the tone stepped down \(String(format: "%.1f", stepAt * 1000)) ms in (sent for 300 ms), to "
                    + "\(String(format: "%.2f", lowered / full))× its level (\(String(format: "%.2f", expected)) "
                    + "at intensity 0.5)")
        }
    }

    /// The longest run of silent samples.
    static func longestSilence(_ samples: [Double]) -> Int {
        var longest = 0
        var run = 0
        for sample in samples {
            run = sample == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    /// The RMS of `count` quiet tones started at the same engine time, over their middle.
    static func levelOfPlayers(_ count: Int, engine: HapticEngine, device: any EmulatedDevice) async throws
        -> Double
    {
        let before = device.records().count
        let at = engine.currentTime + 0.1
        for _ in 0..<count { try engine.makeAdvancedPlayer(with: tone(0.3, intensity: 0.3)).start(atTime: at) }
        try await Task.sleep(for: .milliseconds(550))
        let sound = sounding(try checkedSamples(hapticsReports(device, after: before), "\(count) players").left)
        return WaveformAnalysis.rms(sound.samples.dropFirst(150).dropLast(150).map { Float($0) })
    }

    // MARK: Killed or stopped

    /// A 10 s tone played by `haptics play` as a user runs it; killed (SIGKILL) or stopped (SIGSTOP) while it
    /// plays, the pad, playing what it received in order, falls silent within 150 ms of the signal.
    static func killedOrStoppedFallsSilent() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let figures = try await HDRumbleSuite.signalledPlayers(
                device, ["--actuators", "hd", "--device", nodes.rumbleNode], signals: [SIGKILL, SIGSTOP],
                "the tone on the voice coils", started: { $0.filter { $0.report?.hasPrefix("32") ?? false } },
                // The pad plays its reports in order, each from its arrival or the end of the one before.
                restingFrom: { VoiceCoilPlayback(records: $0).lastMotion() })
            print("    " + figures.joined(separator: "; "))
        }
    }

    // MARK: Without access

    /// As a user who may write the event node but not the hidraw node: `--actuators hd` plays on the rumble
    /// motors, and says why, naming the fix for this system (the udev rule with a udev daemon, root or the node's
    /// group without one: `AccessAdvice`).
    static func fallsBackWithoutAccess() async throws {
        guard onPath("su") else { throw TestSkip(.su, "no su to run the CLI as another user") }
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            // A udev daemon sets the new node's mode when it processes its events: after that, not before.
            if access("/run/udev/control", F_OK) == 0 { try AppUdevSuite.udevadm(["settle", "--timeout=30"]) }
            chmod(nodes.rumbleNode, 0o666)
            let before = device.records().count
            let output = try DeviceSuite.haptics(
                ["play", "--actuators", "hd", "--device", nodes.rumbleNode, "Haptics/thud.ahap"], asNobody: true)
            guard let hidraw = HidrawDevice.node(besideEventNode: nodes.rumbleNode) else {
                throw TestFailure(reason: "the DualSense has no hidraw node")
            }
            let advice = AccessAdvice.hidrawNode(hidraw)
            try require(output.contains(advice), "no message naming the fix (\(advice)):\n\(output)")
            try require(hapticsReports(device, after: before).isEmpty, "a haptics report reached the pad")
            let rumble = otherReports(device, after: before).filter { ($0.strong ?? 0) > 0 }
            try require(!rumble.isEmpty, "the thud did not play on the rumble motors")
            print("    \(output.split(separator: "\n").first { $0.contains(advice) } ?? "")")
        }
    }

    // MARK: Unplugged mid-pattern

    /// Unplugged while a looped tone plays on the voice coils, the engine stops (game controller disconnected);
    /// plugged back in, it resets onto the voice coils again, and a new tone arrives.
    static func unplugMidPattern() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let engine = try engine(on: nodes.rumbleNode)
            defer { engine.stop() }
            let events = EngineSuite.Events(engine)
            let player = try engine.makeAdvancedPlayer(with: tone(0.5))
            player.loopEnabled = true
            var before = device.records().count
            try player.start(atTime: 0)
            try await EmulationSuite.waitForOutputs(device, after: before, "the tone") {
                $0.filter { $0.report?.hasPrefix("32") ?? false }.count > 5
            }
            try device.unplug()
            try await events.wait(for: .stopped(.gameControllerDisconnect), "stopped when unplugged")
            try device.replug()
            try await events.wait(for: .reset, "reset when plugged back in")
            try require(engine.capabilities?.hdNode != nil, "back on \(engine.capabilities as Any)")
            before = device.records().count
            try await play(tone(0.2), on: engine)
            try await Task.sleep(for: .milliseconds(120))
            let again = sounding(try checkedSamples(hapticsReports(device, after: before), "after the replug").left)
            try require(abs(again.seconds - 0.2) <= 0.02, "after the replug a 0.2 s tone played \(again.seconds) s")
            print("    stopped on unplug, reset on replug, \(Int(again.seconds * 1000)) ms tone on the voice coils")
        }
    }

    // MARK: What the CLI prints

    /// `haptics feedback impact heavy --actuators hd --json`: the tap's `hd` levels are what the coils play at its
    /// time (the impact's 0.9 intensity, a good share of full scale), not the silence the stream had written a
    /// queue's length past it (`left 0.000 right 0.000` until 6 December), nor what played when the command woke to
    /// print it (silence after a wake-up 30 ms late, on a loaded machine, until 7 December).
    static func feedbackPrintsTheCoilsLevels() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let before = device.records().count
            let output = try DeviceSuite.haptics([
                "feedback", "impact", "heavy", "--actuators", "hd", "--device", nodes.rumbleNode, "--json",
            ])
            let reports = hapticsReports(device, after: before)
            try require(!reports.isEmpty, "no haptics report reached the pad:\n\(output)")
            let tap = output.split(separator: "\n").first { $0.contains("\"event\":\"tap\"") }
            let fields = tap.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }
            let levels = fields?["hd"].flatMap { hd -> [Double]? in
                // "left 0.874 right 0.874 125 Hz"
                let words = hd.split(separator: " ")
                return words.count >= 4 ? [Double(words[1]), Double(words[3])].compactMap { $0 } : nil
            }
            // When the tap's first sounding report reached the pad, against the tap's time (both CLOCK_MONOTONIC):
            // on time, a queue's length (32 ms) or more before it; after it, the stream was late and the pad played
            // the tap late.
            let sounding = reports.first { record -> Bool in
                let samples: [Int8] = (record.waveform?.left ?? []) + (record.waveform?.right ?? [])
                return samples.contains { $0 != 0 }
            }
            var arrival = "no sounding report, or no time, for it"
            if let report = sounding?.time.seconds, let at = fields?["at"].flatMap(Double.init) {
                arrival = String(
                    format: "its first sounding report reached the pad %.1f ms before its time", (at - report) * 1000)
            }
            try require(
                levels.map { $0.count == 2 && $0.allSatisfy { $0 > 0.4 } } ?? false,
                "the tap's voice-coil levels (\(arrival)): \(tap.map(String.init) ?? "no tap line")\n\(output)")
            print("    \(tap ?? ""); \(arrival)")
        }
    }

    // MARK: Named by a link

    /// `haptics play --actuators hd --device LINK`, LINK a link to the pad's event node as `/dev/input/by-id/...`
    /// names one: the voice coils play (the pad's sysfs directory was looked for under the link's name, so its
    /// hidraw node was not found and the motors played instead).
    static func namedByLink() async throws {
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let link = FileManager.default.temporaryDirectory.appendingPathComponent(
                "haptics-dualsense-\(getpid())-event-joystick"
            ).path
            unlink(link)
            try require(symlink(nodes.rumbleNode, link) == 0, "cannot link \(link) to \(nodes.rumbleNode)")
            defer { unlink(link) }
            let before = device.records().count
            let output = try DeviceSuite.haptics(["play", "--actuators", "hd", "--device", link, "Haptics/thud.ahap"])
            try require(!hapticsReports(device, after: before).isEmpty, "no haptics report reached the pad:\n\(output)")
            try require(
                otherReports(device, after: before).allSatisfy { ($0.strong ?? 0) == 0 && ($0.weak ?? 0) == 0 },
                "the motors played")
            print("    \(hapticsReports(device, after: before).count) haptics reports through \(link)")
        }
    }

    // MARK: The engine's gain

    /// A full-level tone played at gain 1, then at gain 0.5: on the voice coils the second's samples peak at half
    /// the first's, and on a Switch Pro controller's HD rumble its amplitude is half (the gain was left out of both:
    /// `haptics play --gain 0.2` played them at full strength).
    static func gainScalesHDActuators() async throws {
        let pattern = tone(0.2)
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            var peaks: [Double] = []
            for gain in [1.0, 0.5] {
                let engine = try engine(on: nodes.rumbleNode, gain: gain)
                let before = device.records().count
                try await play(pattern, on: engine)
                try await Task.sleep(for: .milliseconds(120))
                engine.stop()
                let samples = try checkedSamples(hapticsReports(device, after: before), "at gain \(gain)").left
                peaks.append(Double(samples.map { abs(Int($0)) }.max() ?? 0))
            }
            try require(peaks[0] > 100, "at gain 1 the samples peak at \(peaks[0]) of 127")
            try require(
                abs(peaks[1] / peaks[0] - 0.5) <= 0.03, "voice coils: peaks \(peaks[1]) at gain 0.5, \(peaks[0]) at 1")
            print("    voice coils: peak \(Int(peaks[0])) at gain 1, \(Int(peaks[1])) at gain 0.5")
        }
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            var peaks: [Double] = []
            for gain in [1.0, 0.5] {
                let engine = try engine(on: nodes.rumbleNode, gain: gain)
                let before = device.records().count
                try await play(pattern, on: engine)
                try await Task.sleep(for: .milliseconds(150))
                engine.stop()
                let amplitudes = HDRumbleSuite.rumbleReports(device, after: before).map {
                    max($0.packet.left.lowAmplitude, $0.packet.left.highAmplitude)
                }
                peaks.append(amplitudes.max() ?? 0)
            }
            try require(peaks[0] > 0.5, "at gain 1 HD rumble peaks at amplitude \(peaks[0])")
            try require(
                abs(peaks[1] / peaks[0] - 0.5) <= 0.05, "HD rumble: amplitude \(peaks[1]) at gain 0.5, \(peaks[0]) at 1"
            )
            print("    HD rumble: amplitude \(peaks[0]) at gain 1, \(peaks[1]) at gain 0.5")
        }
    }

    /// An engine that plays a tone, is stopped and started again, and plays it again: the pad gets one run of
    /// counters across both streams (each one past the last; on the Switch pad two when the silence guard may have
    /// taken one), not a second run from 0 (until 6 December each new stream began at 0, so a stream whose report
    /// at rest carried 0 was followed by another 0).
    static func counterCarriesOnAcrossStreams() async throws {
        let pattern = tone(0.1)
        func twice(_ device: any EmulatedDevice, _ node: String) async throws -> [PadRecord] {
            let engine = try engine(on: node)
            let before = device.records().count
            for round in 0..<2 {
                if round > 0 {
                    do { try engine.start() } catch { throw TestFailure(reason: "starting again on \(node): \(error)") }
                }
                try await play(pattern, on: engine)
                try await Task.sleep(for: .milliseconds(150))
                engine.stop()
            }
            return Array(device.records().dropFirst(before))
        }
        try await EmulationSuite.withController(.dualsenseBluetooth) { device, nodes in
            let reports = try await twice(device, nodes.rumbleNode).filter { $0.waveform != nil }
            _ = try checkedSamples(reports, "voice coils, two streams one after the other")
            print("    voice coils: counters \(reports.compactMap(\.waveform).map(\.counter)) over two streams")
        }
        try await EmulationSuite.withController(.switchPro) { device, nodes in
            let counters = HDRumbleSuite.rumbleReports(try await twice(device, nodes.rumbleNode)).map(\.packet.counter)
            let steps = zip(counters, counters.dropFirst()).map { ($1 &- $0) & 0x0f }
            try require(
                counters.count >= 8 && steps.allSatisfy { $0 == 1 || $0 == 2 },
                "HD rumble: the counters over two streams are not one run: \(counters)")
            print("    HD rumble: counters \(counters) over two streams")
        }
    }

    // MARK: USB: back from rumble emulation

    /// Over USB the voice coils play the sound card only while the pad is not in the rumble emulation that
    /// hid-playstation's rumble reports select. After a rumble through evdev, the report the USB path writes
    /// through hidraw (every valid flag clear) reaches the pad through the bound driver and leaves it.
    static func usbLeavesRumbleEmulation() async throws {
        try await EmulationSuite.withController(.dualsense) { device, nodes in
            _ = try DeviceSuite.haptics(["play", "--device", nodes.rumbleNode, "Haptics/thud.ahap"])
            let rumbled = device.records().last {
                $0.event == .output && $0.mode != nil && $0.mode != DualSense.rumbleOffMode
            }
            try require(rumbled != nil, "the thud did not select rumble emulation")
            guard let node = HidrawDevice.node(besideEventNode: nodes.rumbleNode)
            else { throw TestFailure(reason: "the USB DualSense has no hidraw node") }
            let before = device.records().count
            let hidraw = try HidrawDevice(node: node, logger: EmulationSuite.logger())
            try hidraw.write(DualSenseUSBReport.audioHaptics)
            hidraw.close()
            try await EmulationSuite.waitForOutputs(device, after: before, "the report") { !$0.isEmpty }
            let received = device.records().dropFirst(before).first { $0.event == .output }
            try requireEqual(received?.mode, DualSense.rumbleOffMode, "the mode the report leaves the pad in")
            print("    after \(rumbled?.mode ?? "") rumble, the report through \(node) leaves the pad in mode off")
        }
    }
}
