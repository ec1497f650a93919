// The app layer against the real kernel: the feedback vocabulary and the cue sheet replay, each played by the
// CLI on a virtual pad and checked in the pad's record; HapticManager through an unplug and a replug.
import HapticTestDevices
import AHAP
import Foundation
import Glibc
import HapticRendering
import LinuxHaptics
import AppHaptics
import LinuxInput
import Logging

enum AppSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "app", requires: [.uinput],
        tests: vocabularyCases + [
            KernelTest(name: "app/vocabulary/strength-order-across-calls", body: strengthOrderAcrossCalls),
            KernelTest(name: "app/replay/record-shows-every-cue-at-its-time") {
                try await StallWitness.againAfterAGuestStall(replayShowsEveryCue)
            },
            KernelTest(name: "app/manager/unplug-replug-flips-engine-available", body: managerSurvivesUnplug),
            KernelTest(name: "app/manager/pad-named-by-a-link-is-available-and-plays", body: managerFindsPadByLink),
            KernelTest(
                name: "app/manager/stop-lets-the-pad-go-and-start-takes-it-again-with-its-pulse",
                body: managerStopLetsThePadGo),
        ])

    /// How early a haptic may reach the pad before its scheduled time: the pad's timestamps are whole
    /// microseconds, and so are the times the CLI prints.
    static let earliness = 0.001
    /// Later than this after its scheduled time, a haptic is taken as lost: only a hang gets there. How late
    /// things are on time is a measurement (`make bench`), not a test: on a busy machine under qemu's software
    /// emulation tens of milliseconds are ordinary.
    static let hangLateness = 2.0

    /// The first change on the pad at or after each scheduled time, in order, or the reason one is missing:
    /// each scheduled haptic must have its own change (a change cannot serve two, which would mean one was
    /// lost or merged), none may come early, and none later than a hang would make it. Two merged because the
    /// first reached the pad only at or after the second's time is a `TimingFailure`: the whole guest standing
    /// still for the time between them, from the first's time to its change, explains it (the engine, woken
    /// past both, sends the level that holds then).
    static func firstChanges(at times: [Double], in changes: [Double], _ label: (Int) -> String) throws -> [Double] {
        var reached: [Double] = []
        for (index, due) in times.enumerated() {
            guard let change = changes.first(where: { $0 >= due - earliness }) else {
                throw TestFailure(reason: "nothing reached the pad for \(label(index))")
            }
            if let previous = reached.last, change <= previous {
                let previousDue = times[index - 1]
                throw TimingFailure(
                    reason: "\(label(index)) has no change of its own on the pad: its first change is the previous "
                        + "one's, \(String(format: "%.1f", (previous - previousDue) * 1000)) ms after that one's time",
                    explainingStall: (due - earliness - previousDue) * 1000,
                    window: min(previousDue, previous)...max(previousDue, previous))
            }
            try require(
                change - due <= hangLateness,
                "\(label(index)): first change on the pad \(String(format: "%.1f", (change - due) * 1000)) ms later")
            reached.append(change)
        }
        return reached
    }

    // MARK: The vocabulary, through `haptics feedback`

    /// What one `haptics feedback` run printed and what the pad recorded meanwhile.
    struct FeedbackRun {
        var start: Double
        var taps: [Double]
        var records: [PadRecord]
        var model: MotorModel
    }

    static let vocabularyCalls: [(label: String, arguments: [String])] = [
        ("error", ["error"]), ("success", ["success"]), ("warning", ["warning"]), ("selection", ["selection"]),
        ("impact-light", ["impact", "light"]), ("impact-heavy", ["impact", "heavy"]),
        ("impact-rigid-intensity-1", ["impact", "rigid", "--intensity", "1"]),
    ]

    static let vocabularyCases: [KernelTest] = vocabularyCalls.map { call in
        KernelTest(name: "app/vocabulary/\(call.label)-matches-its-definition") {
            try await StallWitness.againAfterAGuestStall { try await vocabularyMatches(call.arguments) }
        }
    }

    /// The JSON-lines events of a CLI run, each a flat string dictionary (`PlayReport`'s format).
    static func events(_ text: String) -> [[String: String]] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{"), let data = String(line).data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: String]
            else { return nil }
            return object
        }
    }

    static func runCLI(_ arguments: [String]) throws -> String {
        let process = try Subprocess([projectBinary("haptics")] + arguments)
        let status = process.finish(timeout: VirtualPadSuite.hangGuardSeconds * 4)
        try require(status == 0, "haptics \(arguments.joined(separator: " ")) exited \(status):\n\(process.text)")
        return process.text
    }

    static func feedbackRun(_ arguments: [String]) async throws -> FeedbackRun {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let output = try runCLI(["feedback"] + arguments + ["--device", pad.eventNode, "--json"])
        let all = events(output)
        guard let header = all.first(where: { $0["event"] == "feedback" }),
            let start = header["start"].flatMap(Double.init)
        else { throw TestFailure(reason: "no feedback event with a start time in:\n\(output)") }
        let taps = all.filter { $0["event"] == "tap" }.compactMap { $0["time"].flatMap(Double.init) }
        try require(all.last?["event"] == "finished", "the run did not finish:\n\(output)")
        let records = pad.records()
        return FeedbackRun(start: start, taps: taps, records: records, model: MotorModel(records: records))
    }

    /// A burst of drive on the pad: when the motors went from off to on, and the strongest total drive
    /// (strong + weak, 0...2 of full scale) before they were off again.
    struct Burst {
        var onset: Double
        var peak: Double
    }

    static func bursts(_ model: MotorModel, until end: Double) -> [Burst] {
        var bursts: [Burst] = []
        var on = false
        for change in model.timeline(until: PadTimestamp(seconds: end)) {
            let total = change.levels.strong + change.levels.weak
            if total > 0 && !on {
                bursts.append(Burst(onset: change.time.seconds, peak: total))
            } else if total > 0, let last = bursts.indices.last {
                bursts[last].peak = max(bursts[last].peak, total)
            }
            on = total > 0
        }
        return bursts
    }

    /// How far a burst's peak on the pad may be from its tap's rendered peak, both motors summed: a few of the
    /// planner's 16-bit steps and the motor model's rounding.
    static let peakTolerance = 0.02

    static func feedbackBursts(_ run: FeedbackRun) -> [Burst] {
        bursts(run.model, until: run.start + (run.taps.last ?? 0) + 1)
    }

    static func vocabularyMatches(_ arguments: [String]) async throws {
        let run = try await feedbackRun(arguments)
        let feedback = try feedbackValue(arguments)
        let expected = FeedbackVocabulary.sortedTapTimes(of: feedback)
        // The CLI prints microseconds.
        try require(
            run.taps.count == expected.count && zip(run.taps, expected).allSatisfy { abs($0 - $1) < 1e-6 },
            "tap times the CLI printed: \(run.taps), expected \(expected)")
        let found = feedbackBursts(run)
        if found.count < expected.count, expected.count > 1 {
            // The engine's thread woken past one tap's end and the next tap's time sends the level that holds then
            // (a tap it slept through is written late only when stronger than what the device held): a stall of
            // the whole guest as long as the shortest rest between two taps, during the taps, explains it.
            let pulse = RenderProfile.virtualPad.transientPulse.length
            let rest = (zip(expected, expected.dropFirst()).map { $1 - $0 }.min() ?? 0) - pulse
            throw TimingFailure(
                reason: "separate bursts on the pad (one per tap): expected \(expected.count), got \(found.count); "
                    + "the pad saw " + describe(run.records, from: run.start),
                explainingStall: rest * 1000,
                window: (run.start + expected[0])...(run.start + expected[expected.count - 1] + pulse))
        }
        try require(
            found.count == expected.count,
            "separate bursts on the pad (one per tap): expected \(expected.count), got \(found.count); the pad saw "
                + describe(run.records, from: run.start))
        // Onsets are found on the raw records: the motor model works in whole kernel ticks (4 ms).
        let changes = run.records.filter { $0.event == .upload || $0.event == .play }.map(\.time.seconds)
        let due = expected.map { run.start + $0 }
        let reached = try firstChanges(at: due, in: changes) { "the tap at \(expected[$0]) s" }
        let errors = zip(reached, due).map { String(format: "%+.1f ms", ($0 - $1) * 1000) }
        let peaks = found.map(\.peak)
        // Each burst's peak is its tap's as the renderer makes it (both motors summed, as the bursts are).
        let timeline = PatternRenderer(profile: .virtualPad).render(feedback.pattern)
        let wanted = expected.indices.map { index in
            let end = index + 1 < expected.count ? expected[index + 1] : .infinity
            return timeline.segments.filter { $0.end > expected[index] && $0.start < end }
                .map { max($0.startLevels.strong + $0.startLevels.weak, $0.endLevels.strong + $0.endLevels.weak) }
                .max() ?? 0
        }
        try require(
            zip(peaks, wanted).allSatisfy { abs($0 - $1) <= peakTolerance },
            "burst peaks \(peaks), rendered \(wanted) (within \(peakTolerance))")
        switch feedback {
        case .notification(.error):
            try require(zip(peaks, peaks.dropFirst()).allSatisfy { $0 > $1 }, "error taps must descend: \(peaks)")
        case .notification(.success):
            try require(peaks[1] > peaks[0], "success taps must rise: \(peaks)")
        case .notification(.warning):
            try require(peaks[1] > peaks[0], "warning's emphasis is on the second tap: \(peaks)")
        default:
            break
        }
        print(
            "    bursts \(found.count), onset errors \(errors.joined(separator: " ")), peaks \(peaks.map { String(format: "%.2f", $0) })"
        )
    }

    /// The records as `event@ms-after-start(strong/weak)`, for failure messages.
    static func describe(_ records: [PadRecord], from start: Double) -> String {
        records.map { record in
            var text = "\(record.event.rawValue)@\(String(format: "%.1f", (record.time.seconds - start) * 1000))"
            if case .rumble(let strong, let weak)? = record.effect?.kind { text += "(\(strong)/\(weak))" }
            return text
        }.joined(separator: " ")
    }

    static func feedbackValue(_ arguments: [String]) throws -> HapticFeedback {
        switch arguments[0] {
        case "impact":
            guard let style = ImpactStyle(rawValue: arguments[1]) else { throw TestFailure(reason: "bad style") }
            let intensity = arguments.firstIndex(of: "--intensity").flatMap { Double(arguments[$0 + 1]) }
            return .impact(style, intensity: intensity)
        case "selection": return .selection
        default:
            guard let type = NotificationFeedback(rawValue: arguments[0]) else { throw TestFailure(reason: "bad kind") }
            return .notification(type)
        }
    }

    /// Across calls: heavy drives harder than light, and the selection tick is the faintest of all.
    static func strengthOrderAcrossCalls() async throws {
        var peaks: [String: Double] = [:]
        for (label, arguments) in [
            ("light", ["impact", "light"]), ("heavy", ["impact", "heavy"]), ("selection", ["selection"]),
        ] {
            let run = try await feedbackRun(arguments)
            guard let burst = feedbackBursts(run).first else {
                throw TestFailure(reason: "\(label): nothing reached the pad")
            }
            peaks[label] = burst.peak
        }
        let light = peaks["light"] ?? 0, heavy = peaks["heavy"] ?? 0, selection = peaks["selection"] ?? 0
        try require(heavy > light && light > selection, "expected heavy > light > selection, got \(peaks)")
    }

    // MARK: Replay

    static func replayShowsEveryCue() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let output = try runCLI(["replay", "--all", "--device", pad.eventNode, "--json"])
        let all = events(output)
        try require(all.last?["event"] == "finished", "the replay did not finish:\n\(output)")
        let cues = all.filter { $0["event"] == "cue" }
        let sheet = try CueSheet(contentsOf: URL(fileURLWithPath: "Haptics/cues.json"))
        try requireEqual(cues.count, sheet.chapters.reduce(0) { $0 + $1.timeline.count }, "cues the replay printed")
        let changes = pad.records().filter { $0.event == .upload || $0.event == .play }.map(\.time.seconds)
        let times = try cues.map { cue in
            guard let at = cue["at"].flatMap(Double.init) else {
                throw TestFailure(reason: "a cue without a time: \(cue)")
            }
            return at
        }
        try require(
            zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "the replay printed its cues out of order: \(times)")
        let reached = try firstChanges(at: times, in: changes) { index in
            "chapter \(cues[index]["chapter"] ?? "?") \(cues[index]["pattern"] ?? "?") at +\(cues[index]["offset"] ?? "?") s"
        }
        let worst = zip(reached, times).map { $0 - $1 }.max() ?? 0
        print(
            "    \(cues.count) cues, each with its own first change on the pad, in order; worst lateness \(String(format: "%.1f", worst * 1000)) ms"
        )
    }

    // MARK: HapticManager through unplug and replug

    /// A pad named by a link to its node, as `/dev/input/by-id/...` names one: the manager's availability asks the
    /// same rule as the engine's open (`DeviceSelection`), so it finds the pad, and a play reaches it.
    static func managerFindsPadByLink() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics pad by link"))
        defer { pad.destroy() }
        let link = FileManager.default.temporaryDirectory.appendingPathComponent(
            "haptics-by-id-\(getpid())-event-joystick"
        ).path
        unlink(link)
        try require(symlink(pad.eventNode, link) == 0, "cannot link \(link) to \(pad.eventNode): errno \(errno)")
        defer { unlink(link) }
        var options = HapticEngineOptions()
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let provider = EngineOutputProvider(
            output: .device(.node(link)), options: options, logger: VirtualPadSuite.logger())
        try require(provider.hardwareSupportsHaptics(), "no haptics hardware found for the pad named by \(link)")
        let resolver = HapticResourceDirectory(directory: URL(fileURLWithPath: "Haptics"))
        let manager = await MainActor.run {
            HapticManager(resolver: resolver, engineProvider: provider, logger: VirtualPadSuite.logger())
        }
        try require(await MainActor.run { manager.engineAvailable }, "the manager did not take the pad at \(link)")
        await MainActor.run {
            manager.preloadPatterns()
            manager.play("thud")
        }
        _ = try await VirtualPadSuite.waitForRecords(pad, "thud on the pad named by a link") {
            EngineSuite.playsRumble($0)
        }
        withExtendedLifetime(manager) {}
    }

    static func managerSurvivesUnplug() async throws {
        let configuration = VirtualPadConfiguration(name: "Haptics manager pad")
        var pad: VirtualPad? = try VirtualPadSuite.makePad(configuration)
        guard let first = pad else { return }
        let id = try stableID(of: first.eventNode)
        var options = HapticEngineOptions()
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let provider = EngineOutputProvider(
            output: .device(.id(id)), options: options, logger: VirtualPadSuite.logger())
        let resolver = HapticResourceDirectory(directory: URL(fileURLWithPath: "Haptics"))
        let manager = await MainActor.run {
            HapticManager(resolver: resolver, engineProvider: provider, logger: VirtualPadSuite.logger())
        }
        try require(await MainActor.run { manager.engineAvailable }, "the manager did not find the pad \(id)")
        let cached = await MainActor.run {
            manager.preloadPatterns()
            manager.play("heartbeat")
            return manager.cachedPatternNames
        }
        try requireEqual(cached, ["capacitor_charge", "heartbeat", "thud"], "patterns cached")
        try await VirtualPadSuite.waitForRecords(first, "heartbeat's first drive") { EngineSuite.playsRumble($0) }

        // Unplug mid-heartbeat.
        await MainActor.run { manager.play("heartbeat") }
        first.destroy()
        pad = nil
        try await waitUntil("engineAvailable false after the unplug") {
            await MainActor.run { !manager.engineAvailable }
        }
        await MainActor.run {
            manager.play("thud")
            manager.playTransientEvent(intensity: 1, sharpness: 1)
        }

        // Replug the same identity: the engine's reset, then the manager's rebuild.
        let second = try VirtualPadSuite.makePad(configuration)
        defer { second.destroy() }
        try await waitUntil("engineAvailable true after the replug") { await MainActor.run { manager.engineAvailable } }
        await MainActor.run { manager.play("heartbeat") }
        try await VirtualPadSuite.waitForRecords(second, "a play after the replug") {
            EngineSuite.playsRumble($0)
        }
        try requireEqual(
            await MainActor.run { manager.cachedPatternNames }, cached, "patterns cached again after the reset")
    }

    /// `stop()` lets the pad go: no descriptor of this process stays on its node, the kernel erased every effect
    /// the engine had uploaded (the prepared pulse too) and the motors are off. `start()` opens the pad again, the
    /// pulse is uploaded again, and its play reaches the pad.
    static func managerStopLetsThePadGo() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics manager stopped"))
        defer { pad.destroy() }
        var options = HapticEngineOptions()
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let provider = EngineOutputProvider(
            output: .device(.id(try stableID(of: pad.eventNode))), options: options, logger: VirtualPadSuite.logger())
        let resolver = HapticResourceDirectory(directory: URL(fileURLWithPath: "Haptics"))
        let manager = await MainActor.run {
            HapticManager(resolver: resolver, engineProvider: provider, logger: VirtualPadSuite.logger())
        }
        try require(await MainActor.run { manager.engineAvailable }, "the manager did not take \(pad.eventNode)")
        let impact = HapticFeedback.impact(.rigid).pattern
        await MainActor.run {
            manager.prepare(pattern: impact)
            manager.preloadPatterns()
            manager.play("heartbeat")
        }
        try await VirtualPadSuite.waitForRecords(pad, "heartbeat before the stop") { EngineSuite.playsRumble($0) }
        func descriptorsOnThePad() -> Int { openDescriptors().values.count { $0 == pad.eventNode } }
        try require(descriptorsOnThePad() > 0, "no descriptor of this process on \(pad.eventNode) while it plays")

        await MainActor.run { manager.stop() }
        try requireEqual(descriptorsOnThePad(), 0, "descriptors on \(pad.eventNode) after stop()")
        try await waitUntil("every effect erased after stop()") { pad.uploadedEffects().isEmpty }
        let stopped = pad.records()
        guard let last = stopped.last else { throw TestFailure(reason: "the pad recorded nothing") }
        try requireEqual(pad.motorOutput(at: last.time), .off, "the motors after stop()")

        let available = await MainActor.run {
            manager.start()
            return manager.engineAvailable
        }
        try require(available, "the manager did not take \(pad.eventNode) again on start()")
        try await waitUntil("the prepared pulse uploaded again") { !pad.uploadedEffects().isEmpty }
        await MainActor.run { manager.play(pattern: impact) }
        try await VirtualPadSuite.waitForRecords(pad, "the prepared impact after start()") { records in
            records.dropFirst(stopped.count).contains { $0.event == .play }
        }
        withExtendedLifetime(manager) {}
    }

    static func stableID(of node: String) throws -> StableDeviceID {
        do {
            let device = try EventDevice(node: node, logger: VirtualPadSuite.logger())
            defer { device.close() }
            return device.id
        } catch {
            throw TestFailure(reason: "opening \(node): \(error)")
        }
    }

    /// Re-checks `condition` every few milliseconds until it holds; fails naming `what` when only a hang would
    /// keep it from holding.
    static func waitUntil(_ what: String, _ condition: @Sendable () async -> Bool) async throws {
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while !(await condition()) {
            try require(monotonicSeconds() < deadline, "timed out waiting for \(what)")
            try await Task.sleep(for: .milliseconds(pollMilliseconds))
        }
    }

    /// How often `waitUntil` looks: the manager changes state on the main actor, with no event to await.
    static let pollMilliseconds = 10
}

extension FeedbackVocabulary {
    /// The tap times of a feedback's pattern, in order.
    static func sortedTapTimes(of feedback: HapticFeedback) -> [Double] {
        feedback.pattern.events.map(\.relativeTime).sorted()
    }
}
