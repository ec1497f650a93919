// The engine against the real kernel: the AHAP fixtures' patterns (and the corpus's, when AHAP_CORPUS names it) on a
// virtual pad compared with the planner's commands, unplug and
// replug (stopped, reset, neutral first, no leaked descriptor or slot), repeated cycles, and pads that refuse
// uploads or hold a single effect.
import HapticTestDevices
import AHAPFiles
import Foundation
import HapticRendering
import Glibc
import LinuxHaptics
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

enum EngineSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "engine", requires: [.uinput],
        tests: [
            KernelTest(name: "engine/fixtures-on-virtual-pad-match-planner") {
                try await StallWitness.againAfterAGuestStall(fixturesMatchPlanner)
            },
            KernelTest(name: "engine/corpus-on-virtual-pad-matches-planner") {
                try await StallWitness.againAfterAGuestStall(corpusMatchesPlanner)
            },
            KernelTest(name: "engine/long-pattern-past-its-horizons-matches-planner") {
                try await StallWitness.againAfterAGuestStall(longPatternPastHorizonsMatchesPlanner)
            },
            KernelTest(name: "engine/unplug-mid-playback-stops-device-removed", body: unplugMidPlayback),
            KernelTest(name: "engine/replug-same-identity-resets-neutral-first", body: replugResets),
            KernelTest(
                name: "engine/of-two-identical-pads-the-engine-on-the-second-stops-for-its-unplug-not-the-firsts",
                body: identicalPadsUnplug),
            KernelTest(
                name: "engine/a-write-failing-with-eio-then-the-pads-unplug-and-return-resets-the-engine",
                body: deviceErrorThenReplug),
            KernelTest(name: "engine/unplug-replug-cycles", body: unplugReplugCycles),
            KernelTest(name: "engine/refused-uploads-degrade", body: refusedUploadsDegrade),
            KernelTest(name: "engine/single-slot-pad-degrades", body: singleSlotDegrades),
            KernelTest(name: "engine/prepared-tap-stops-before-the-mix-takes-over") {
                try await StallWitness.againAfterAGuestStall(preparedTapHandsOver)
            },
            KernelTest(name: "engine/starts-at-rest-are-one-play", body: startsAtRestAreOnePlay),
            KernelTest(name: "engine/all-gamepads-broadcast-and-lose-one", body: allGamepads),
        ])

    /// Engine events, delivered on engine threads, awaited by the test with a hang guard.
    final class Events: Sendable {
        enum Event: Sendable, Equatable {
            case stopped(HapticEngineStoppedReason)
            case reset
            case finished
        }

        let stream: AsyncStream<Event>
        let continuation: AsyncStream<Event>.Continuation
        private let seen = Lock<[Event]>([])

        init(_ engine: HapticEngine) {
            (stream, continuation) = AsyncStream.makeStream(of: Event.self)
            engine.stoppedHandler = { [self] in record(.stopped($0)) }
            engine.resetHandler = { [self] in record(.reset) }
        }

        func record(_ event: Event) {
            seen.withLock { $0.append(event) }
            continuation.yield(event)
        }

        var all: [Event] { seen.withLock { $0 } }

        /// Waits for `event`; fails naming it if only a hang would keep it from coming.
        func wait(for event: Event, _ what: String) async throws {
            let stream = self.stream
            let arrived = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await next in stream where next == event { return true }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(VirtualPadSuite.hangGuardSeconds))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            try require(arrived, "\(what): never saw \(event); saw \(all)")
        }
    }

    static func engine(
        for pad: VirtualPad, observer: (@Sendable (PlaybackSample) -> Void)? = nil,
        configure: (inout HapticEngineOptions) -> Void = { _ in }
    ) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.playbackObserver = observer
        // The pad records full 16-bit magnitudes at the kernel's tick: its own profile, chosen by the caller who
        // knows it (the automatic choice never depends on a test pad's identity).
        options.renderProfile = .virtualPad
        // No udev daemon in the bench: the kernel's uevents tell the engine about unplug and replug.
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        configure(&options)
        let engine = HapticEngine(
            output: .device(.node(pad.eventNode)), options: options, logger: VirtualPadSuite.logger())
        do { try engine.start() } catch {
            throw TestFailure(reason: "starting the engine on \(pad.eventNode): \(error)")
        }
        return engine
    }

    static func steady(_ strong: Double, _ weak: Double, seconds: Double) -> MotorTimeline {
        let levels = MotorMagnitudes(strong: strong, weak: weak)
        return MotorTimeline(segments: [
            MotorTimeline.Segment(start: 0, end: seconds, startLevels: levels, endLevels: levels)
        ])
    }

    static func isNonZeroUpload(_ record: PadRecord) -> Bool {
        guard record.event == .upload, record.retval == 0, case .rumble(let strong, let weak)? = record.effect?.kind
        else { return false }
        return strong > 0 || weak > 0
    }

    /// Descriptors of this process that point at `node`.
    static func descriptors(pointingAt node: String) -> Int {
        openDescriptors().values.filter { $0 == node }.count
    }

    /// Waits until no descriptor opened since `baseline` is left (a hot-plug monitor closes its own on its
    /// thread, shortly after it is cancelled), and fails naming those still open.
    static func waitForDescriptors(_ baseline: [Int32: String], _ what: String) async throws {
        var leaked = descriptorsOpened(since: baseline)
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while !leaked.isEmpty && monotonicSeconds() < deadline {
            try await Task.sleep(for: .milliseconds(20))
            leaked = descriptorsOpened(since: baseline)
        }
        try require(leaked.isEmpty, "descriptors left open \(what): \(leaked)")
    }

    // MARK: Corpus

    /// The corpus's files (`AHAPCorpus`); a guest without it skips.
    static func corpusFiles() throws -> [URL] {
        do { return try AHAPCorpus.files() } catch { throw TestSkip(.corpus, "\(error)") }
    }

    /// Seconds of each pattern played: enough for every kind of change, short enough for an emulated VM.
    static let corpusPlaySeconds = 1.5
    /// How far ahead each corpus pattern is started: long enough for the call to return before the start.
    static let corpusStartDelaySeconds = 0.05
    /// The kernel tick of Debian's kernels (CONFIG_HZ=250): the motor model's time resolution.
    static let tickRate = MotorModel.TickRate.hz250
    static let tickMicroseconds = tickRate.microsecondsPerTick
    /// Later than this, a change is taken as lost to a hang. How late changes are is a measurement
    /// (`make bench`), not a test: on a busy machine under software emulation tens of milliseconds are ordinary.
    static let hangGuardMilliseconds = 2_000.0
    /// One 8-bit motor step in rumble units, plus rounding.
    static let levelTolerance = 0x101

    /// Times of one command as the engine sent it and as the planner planned it agree to this (seconds):
    /// engine times are absolute `CLOCK_MONOTONIC` seconds, whose rounding is far below a microsecond.
    static let plannedTimeTolerance = 1e-6

    /// What the corpus test finds over all files, checked and printed once every file has played.
    struct CorpusFindings {
        /// Milliseconds from a change's deadline to the pad's record of its first and of its last request.
        var firstErrors: [Double] = []
        var lastErrors: [Double] = []
        /// The change whose first request came earliest against its deadline, and that error.
        var earliest: (change: String, error: Double)?
        /// Changes the pad's motors do not follow.
        var mismatches: [String] = []
        /// Commands sent that are not the planner's.
        var planMismatches: [String] = []
        /// Changes sent that the pad never recorded a request of.
        var unreached: [String] = []
        /// Rises from rest, right after a stop, that took more than one play (the level was not staged in the rest).
        var unstagedRises: [String] = []
        var stagedRiseCount = 0
        /// Rises right after a stop whose staged level the thread woke past (its command and a later one both
        /// due): the later level, which holds now, uploaded in the staged one's place, then played.
        var passedOverRiseCount = 0
        var commandCount = 0
        var skippedCount = 0
        /// Each run of planned commands a write passed over: from the first one's deadline to that write's time
        /// (engine seconds). The thread was away for as long, woken past them.
        var passOvers: [ClosedRange<Double>] = []
        /// Levels the thread slept through whole, written when it woke, the plan made again from each.
        var wokeLateCount = 0
        /// Changes to off that found the motors at rest already: the mix effect's replay window ran out while the
        /// thread could not renew it (the guest stood still), so there was nothing to stop.
        var offAtRestCount = 0
        /// Changes the engine sent where a plan made again from what the device held placed them: the mix changed
        /// within the minimum interval after a command written late.
        var replannedCount = 0
    }

    /// One corpus pattern played on a fresh virtual pad, and what the pad kept of it.
    struct CorpusPlayback {
        /// The plan's origin (engine seconds) and how long after it the stop was scheduled.
        let origin: Double
        let stopOffset: Double
        /// Started now: the first change is the start's own opening, written in the call.
        let startedNow: Bool
        /// When `engine.stop()` closed the device, in microseconds of the engine's clock.
        let stoppedAt: Int64
        /// The engine's samples, keep-alives included.
        let samples: [PlaybackSample]
        let records: [PadRecord]
        let model: MotorModel
        /// Engine times around the calls, for a failure to say when they were made: the player's stop (when
        /// scheduled ahead), its start's call and return, and its completion handler's call.
        var calls: [(String, Double)] = []

        /// `calls` in ms from the origin.
        var describeCalls: String {
            calls.map { "\($0.0) +\(AudioSuite.tenths(($0.1 - origin) * 1000)) ms" }.joined(separator: ", ")
        }
    }

    static func fixturesMatchPlanner() async throws {
        try await filesMatchPlanner(try AHAPFixtures.files())
    }

    static func corpusMatchesPlanner() async throws {
        try await filesMatchPlanner(try corpusFiles())
    }

    /// Every pattern of `files` played on its own virtual pad: what the engine sent is the planner's plan, and
    /// every planned change reached the pad.
    static func filesMatchPlanner(_ files: [URL]) async throws {
        try require(!files.isEmpty, "no AHAP files found")
        var findings = CorpusFindings()
        var unreadable: [String] = []
        var empty: [String] = []
        for file in files {
            let pattern: HapticPattern
            // Every corpus file is read as an app reads it (unknown keys are warnings); one that cannot be is
            // a failure here, not a file left out.
            do { pattern = try HapticPattern(contentsOf: file) } catch {
                unreadable.append("\(file.lastPathComponent): \(error)")
                continue
            }
            // A pattern without duration has nothing to play: named below, not compared.
            guard pattern.duration > 0 else {
                empty.append(file.lastPathComponent)
                continue
            }
            let playback = try await playOnVirtualPad(pattern)
            let timeline = PatternRenderer(profile: .virtualPad).render(pattern)
            let passedOver = comparePlanned(timeline, playback, file.lastPathComponent, &findings)
            compareMotors(playback, file.lastPathComponent, passedOver: passedOver, &findings)
        }
        try require(unreadable.isEmpty, "AHAP files the pattern reader refused: \(unreadable)")
        if !empty.isEmpty { print("  \(empty.count) files without duration, nothing to play: \(empty)") }
        try requireCorpusFindings(findings, fileCount: files.count - empty.count)
        try requirePassOversExplained(findings)
    }

    /// Nearly every planned command went out: a write that passes over planned commands (the engine's thread
    /// woken past their deadlines, sending the level that holds now) is what a thread kept from its processor
    /// does now and then, but one in ten commands passed over is a `TimingFailure` over the longest run passed
    /// over, which `againAfterAGuestStall` takes only with the whole guest seen standing still that long then.
    /// Without it an engine that woke too seldom would pass, each level it sent the planner's. (The long pattern's
    /// test holds its own plays to the same share.)
    static func requirePassOversExplained(_ findings: CorpusFindings) throws {
        let planned = findings.commandCount + findings.skippedCount
        guard findings.skippedCount * 10 > planned else { return }
        let longest = findings.passOvers.max { $0.upperBound - $0.lowerBound < $1.upperBound - $1.lowerBound }
        throw TimingFailure(
            reason:
                "\(findings.skippedCount) of \(planned) planned commands passed over by \(findings.passOvers.count) "
                + "writes woken past them",
            explainingStall: longest.map { ($0.upperBound - $0.lowerBound) * 1000 } ?? .infinity, window: longest)
    }

    /// A pattern of 4.6 s: a fading rumble, two taps after a rest, a swell across the 2 s and 4 s horizons of a
    /// long mix's plan, and a last tap after a rest.
    static func longPattern() -> HapticPattern {
        func event(_ type: HapticEvent.EventType, at time: Double, for duration: Double = 0, intensity: Double)
            -> HapticEvent
        {
            HapticEvent(
                type: type,
                parameters: [
                    HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                    HapticEventParameter(parameterID: .hapticSharpness, value: 0.4),
                ], relativeTime: time, duration: duration)
        }
        func curve(at time: Double, _ points: [(Double, Double)]) -> HapticParameterCurve {
            HapticParameterCurve(
                parameterID: .hapticIntensityControl,
                controlPoints: points.map { .init(relativeTime: $0.0, value: $0.1) }, relativeTime: time)
        }
        let events = [
            event(.hapticContinuous, at: 0, for: 1.2, intensity: 0.9),
            event(.hapticTransient, at: 1.5, intensity: 1),
            event(.hapticTransient, at: 1.7, intensity: 0.6),
            event(.hapticContinuous, at: 1.9, for: 2.4, intensity: 1),
            event(.hapticTransient, at: 4.55, intensity: 0.8),
        ]
        return HapticPattern(
            events: events,
            parameterCurves: [curve(at: 0, [(0, 1), (1.2, 0.2)]), curve(at: 1.9, [(0, 0.1), (2.4, 1)])])
    }

    /// The long pattern played whole, started ahead (the pass plans it, 2 s at a time) and started now (the start
    /// writes its staged opening and the engine takes the solo plan made with the player, up to its horizon): each
    /// time, what the engine sent is the planner's plan of the whole pattern, and every change reached the pad.
    static func longPatternPastHorizonsMatchesPlanner() async throws {
        let pattern = longPattern()
        let timeline = PatternRenderer(profile: .virtualPad).render(pattern)
        let planned = DeviceCommandPlanner(profile: .virtualPad).commands(for: timeline)
        try require(
            planned.filter { $0.time >= 2 }.count > 10 && planned.contains { $0.time >= 4 },
            "the pattern's plan does not run past two horizons: \(planned.count) commands, the last at "
                + "\(planned.last?.time ?? 0) s")
        var findings = CorpusFindings()
        for startsNow in [false, true] {
            let name = startsNow ? "long pattern started now" : "long pattern started ahead"
            let playback = try await playOnVirtualPad(pattern, seconds: pattern.duration, startsNow: startsNow)
            let passesBefore = findings.passOvers.count
            let passedOver = comparePlanned(timeline, playback, name, &findings)
            compareMotors(playback, name, passedOver: passedOver, &findings)
            // The walk above follows what was sent: a plan that ended at a horizon would send nothing more until the
            // pattern's end, whose off would pass over the rest as a thread woken late does. Nearly every command
            // must have gone out; fewer is a `TimingFailure` explained only by the whole guest standing still for
            // the longest run passed over, over it (a plan that stopped at 2 s would need 2.6 s).
            let sent = playback.samples.filter { $0.kind == .apply }.count
            if sent * 10 < planned.count * 9 {
                // Engine time is CLOCK_MONOTONIC's, the witness's clock.
                let longest = findings.passOvers[passesBefore...].max {
                    $0.upperBound - $0.lowerBound < $1.upperBound - $1.lowerBound
                }
                throw TimingFailure(
                    reason: "\(name): \(sent) commands sent of the \(planned.count) planned: the plan stopped short, "
                        + "or the thread was woken past them",
                    explainingStall: longest.map { ($0.upperBound - $0.lowerBound) * 1000 } ?? .infinity,
                    window: longest)
            }
        }
        try requireCorpusFindings(findings, fileCount: 2)
    }

    /// Plays `pattern` on a new virtual pad from a known instant until its end or `seconds`, recording the
    /// engine's samples, then stops the engine and removes the pad. `startsNow`: started at once rather than
    /// ahead, and left to play to its end whatever `seconds` says; the origin is then the first sample's, the
    /// start's own write (its opening, on the caller's thread), which must lie between the clock's readings around
    /// the call.
    static func playOnVirtualPad(
        _ pattern: HapticPattern, seconds: Double = corpusPlaySeconds, startsNow: Bool = false
    ) async throws -> CorpusPlayback {
        let pad = try VirtualPadSuite.makePad()
        let samples = Lock<[PlaybackSample]>([])
        // Haptics only: a pattern with sound would start when its sound can be heard, later than the plan's origin
        // by the sound output's latency (engine-audio/ tests that path).
        let engine = try engine(for: pad, observer: { sample in samples.withLock { $0.append(sample) } }) {
            $0.playsHapticsOnly = true
        }
        try require(
            engine.renderProfile == .virtualPad,
            "the engine ignored the profile it was given: \(engine.renderProfile.name)")
        let player = try engine.makeAdvancedPlayer(with: pattern)
        let (done, continuation) = AsyncStream.makeStream(of: Void.self)
        let calls = Lock<[(String, Double)]>([])
        player.completionHandler = { [weak engine] error in
            let name = error.map { "completion (\($0))" } ?? "completion"
            calls.withLock { $0.append((name, engine?.currentTime ?? .nan)) }
            continuation.yield()
        }
        // A start a little ahead is a known instant (the plan's origin), not "now" as the thread sees it.
        let chosenAt = engine.currentTime
        var origin = chosenAt + corpusStartDelaySeconds
        let stopOffset = min(pattern.duration, seconds)
        if startsNow {
            // Once the playback thread has settled after the player was made (staged its opening), the start's
            // pass on this thread finds the pass lock free and writes the opening: the path a start now takes on
            // a quiet device, which takes the solo plan made with the player.
            try await Task.sleep(for: .milliseconds(100))
            let before = engine.currentTime
            try player.start(atTime: 0)
            let after = engine.currentTime
            // No stop is scheduled: it would change the mix, and the pass would plan it again, as after any start.
            for await _ in done { break }
            // The opening, written on the caller's thread, is the first sample: its deadline is the origin (the
            // comparison with the plan checks its levels).
            guard let first = samples.withLock({ $0.first { $0.kind == .apply } }) else {
                throw TestFailure(reason: "started now, the pattern sent nothing")
            }
            origin = first.deadline
            try require(
                origin >= before && origin <= after,
                "started now between \(before) and \(after), the first write was at \(origin): not the start's")
        } else {
            // The stop is scheduled first: a change of the player after the pattern began (a call held that long
            // on a busy guest) would have the engine plan again from it, resuming from its last write, which is
            // not the whole plan this compares with. Commands apply in their time order.
            calls.withLock { $0.append(("stop called", engine.currentTime)) }
            try player.stop(atTime: origin + stopOffset)
            let called = engine.currentTime
            calls.withLock { $0.append(("start called", called)) }
            try player.start(atTime: origin)
            calls.withLock { $0.append(("start returned", engine.currentTime)) }
            for await _ in done { break }
            // Called after the instant it asked for, the start rightly began at the call (a time passed is now),
            // not at the origin the plan is compared from: this thread stood still from choosing the instant to
            // the call, longer than the time ahead it was chosen.
            if called > origin {
                engine.stop()
                pad.destroy()
                throw TimingFailure(
                    reason: "the start for +0 was called at +\(AudioSuite.tenths((called - origin) * 1000)) ms",
                    explainingStall: corpusStartDelaySeconds * 1000, window: chosenAt...called)
            }
        }
        // The completion comes at the pattern's end, and the plan's closing stop may be due a little after it (on
        // the profile's next command instant): the last change's window ends only once the engine has written it.
        try await AppSuite.waitUntil("the engine's closing stop") {
            samples.withLock { $0.last.map { $0.kind == .apply && $0.mix.isOff } ?? true }
        }
        let stoppedAt = Int64((engine.currentTime * 1e6).rounded(.down))
        engine.stop()
        let records = pad.records()
        let model = pad.motorModel()
        pad.destroy()
        return CorpusPlayback(
            origin: origin, stopOffset: stopOffset, startedNow: startsNow, stoppedAt: stoppedAt,
            samples: samples.withLock { $0 }, records: records, model: model, calls: calls.withLock { $0 })
    }

    /// What the engine sent must be the planner's commands for the virtual profile, up to the stop (whose own
    /// off is re-planned from the stop), at the planned times after the start. A level the playback thread slept
    /// through whole is written when it wakes, and the rest is planned again from that write, as the engine does.
    /// Returns, by position in `playback.samples`, the levels of the planned commands each change passed over (the
    /// thread woke past them and the change's own command).
    static func comparePlanned(
        _ timeline: MotorTimeline, _ playback: CorpusPlayback, _ fileName: String, _ findings: inout CorpusFindings
    ) -> [Int: [MotorMagnitudes]] {
        let planner = DeviceCommandPlanner(profile: .virtualPad)
        var planned = planner.commands(for: timeline)
        let origin = playback.origin
        let applied = playback.samples.filter { $0.kind == .apply }
        findings.commandCount += applied.count
        guard !applied.isEmpty else {
            if !planned.isEmpty {
                let requests = playback.records.filter { [.upload, .play, .stop].contains($0.event) }.count
                findings.planMismatches.append(
                    "\(fileName): nothing sent, \(planned.count) commands planned (\(playback.describeCalls); "
                        + "\(playback.samples.count) samples, \(requests) requests on the pad)")
            }
            return [:]
        }
        var passedOver: [Int: [MotorMagnitudes]] = [:]
        // What the device holds after each write, as the engine counts it: each at the time it went out.
        var holds = DeviceCommandPlanner.Resumption.deviceOff
        // Each command sent is the next planned one, or a later one when the thread woke past several
        // deadlines at once (then only the level that holds now is sent: the rate limit allows one write);
        // a planned command may only be skipped when it was already due at the write.
        var next = 0
        var index = -1
        for (position, sample) in playback.samples.enumerated() {
            guard sample.kind == .apply else {
                // A renewal that went out later than the engine counts at its time: counted when it went out.
                if sample.sent - sample.deadline > OutputTiming.lateRenewalTolerance(for: .virtualPad) {
                    holds = planner.resumption(
                        afterRenewalDueAt: sample.deadline - origin, madeAt: sample.sent - origin, from: holds)
                }
                continue
            }
            index += 1
            if index == applied.count - 1, sample.mix.isOff,
                sample.deadline - origin > playback.stopOffset - plannedTimeTolerance
            {
                // The stop's own off, planned from the stop (at it, or at the rate limit after it): it passes over
                // what was planned before it and not yet sent, as a write woken late does.
                if next < planned.count, planned[next].time < sample.deadline - origin - plannedTimeTolerance {
                    let from = origin + planned[next].time
                    findings.passOvers.append(from...max(from, sample.sent))
                }
                break
            }
            var found = planned[next...].firstIndex(where: {
                abs(sample.deadline - origin - $0.time) < plannedTimeTolerance
            })
            // When the mix changes (the pattern ends), the engine plans again from what the device holds, and the
            // minimum interval counts from the last command's write: one that went out late (not slept through)
            // moves a change planned within the interval after its planned time to the interval after its write.
            if found == nil, next < planned.count {
                let again = planner.commands(for: timeline, from: planned[next].time, resuming: holds)
                if let index = again.firstIndex(where: {
                    abs(sample.deadline - origin - $0.time) < plannedTimeTolerance
                }) {
                    planned = again
                    next = 0
                    found = index
                    findings.replannedCount += 1
                }
            }
            guard let match = found else {
                // Every sample before it, renewals and levels slept through named as such.
                let before = playback.samples[..<position].suffix(4).map {
                    ($0.kind == .keepAlive ? "renewal " : $0.wokeLate ? "slept-through " : "")
                        + "\($0.mix) at +\($0.deadline - origin) (+\($0.sent - origin))"
                }
                let ahead = planned[next...].prefix(4).map { "\($0.levels) at +\($0.time)" }
                findings.planMismatches.append(
                    "\(fileName) #\(index): sent \(sample.mix) at +\(sample.deadline - origin) (written at "
                        + "+\(sample.sent - origin)): no planned command then; sent before it: "
                        + before.joined(separator: ", ") + "; planned from there: " + ahead.joined(separator: ", "))
                break
            }
            if planned[match].levels != sample.mix {
                findings.planMismatches.append(
                    "\(fileName) #\(index): sent \(sample.mix), planned \(planned[match].levels) at +\(planned[match].time)"
                )
            }
            if let notDue = planned[next..<match].first(where: { $0.time > sample.sent - origin }) {
                findings.planMismatches.append(
                    "\(fileName): planned command at +\(notDue.time) skipped before it was due")
            }
            findings.skippedCount += match - next
            if match > next {
                passedOver[position] = planned[next..<match].map(\.levels)
                let from = origin + planned[next].time
                findings.passOvers.append(from...max(from, sample.sent))
            }
            if sample.wokeLate {
                findings.wokeLateCount += 1
                let sent = sample.sent - origin
                if planned[match].time > sent {
                    findings.planMismatches.append(
                        "\(fileName) #\(index): written as slept through before it was due (+\(planned[match].time))")
                }
                holds = planner.resumption(
                    after: RumbleCommand(time: sent, levels: sample.mix, holdDuration: nil), from: holds)
                planned = planner.commands(for: timeline, from: sent, resuming: holds)
                next = 0
                if planned.isEmpty { break }
                continue
            }
            // Counted when it went out (at its time when it went out early, within its lead), as the engine does.
            let time = max(sample.sent - origin, planned[match].time)
            holds = planner.resumption(
                after: RumbleCommand(time: time, levels: planned[match].levels, holdDuration: nil), from: holds)
            next = match + 1
            if next == planned.count { break }
        }
        return passedOver
    }

    /// Each change's requests as the pad recorded them: how late they came after the change's deadline, and
    /// whether the pad's motors settled at the change's levels.
    /// `passedOver`: `comparePlanned`'s planned levels each change passed over, by position in the samples.
    static func compareMotors(
        _ playback: CorpusPlayback, _ fileName: String, passedOver: [Int: [MotorMagnitudes]],
        _ findings: inout CorpusFindings
    ) {
        let taken = playback.samples
        let records = playback.records
        let writes = records.filter { [.upload, .play, .stop].contains($0.event) }
        // Keep-alives are samples too: they bound the windows, but only changes are measured.
        var previous: PlaybackSample?
        for (index, sample) in taken.enumerated() where sample.kind == .apply {
            defer { previous = sample }
            let sent = Int64((sample.sent * 1e6).rounded(.down))
            // The last change's window ends where engine.stop() closes the device (the kernel's own stop).
            let nextSent =
                index + 1 < taken.count ? Int64((taken[index + 1].sent * 1e6).rounded(.down)) : playback.stoppedAt
            // A change is one request (an update in place, a stop, a play of a staged level) or two (upload, then
            // play; a stop, then the next rise's level staged): the first says when the device was reached.
            let window = writes.filter { $0.time.microseconds >= sent && $0.time.microseconds < nextSent }
            // Every change the engine sent is a request the pad must have recorded before the next change.
            guard let first = window.first, let last = window.last else {
                // The engine sends no stop for an effect whose replay window has run out (`MixSlotState`): the
                // kernel stopped it at the window's end. Then the pad's motors were at rest when the change was
                // sent, as the model of the driver says.
                let before = playback.model.output(at: PadTimestamp(microseconds: sent))
                if sample.mix.isOff, ForceFeedbackEffect.magnitude(before.strong) == 0,
                    ForceFeedbackEffect.magnitude(before.weak) == 0
                {
                    findings.offAtRestCount += 1
                    continue
                }
                let origin = playback.origin
                let earlier = taken[..<index].suffix(3).map {
                    "\($0.kind) \($0.mix) at +\($0.deadline - origin) (+\($0.sent - origin))\($0.wokeLate ? " late" : "")"
                }
                let padAround = records.filter { $0.time.microseconds >= sent - 200_000 }.prefix(6).map {
                    "\($0.event) at +\(Double($0.time.microseconds) / 1e6 - origin)"
                }
                findings.unreached.append(
                    "\(fileName): change #\(index) to \(sample.mix) at +\(sample.deadline - origin) s, sent at "
                        + "+\(sample.sent - origin), window to +\(Double(nextSent) / 1e6 - origin); samples before it: "
                        + earlier.joined(separator: ", ") + "; the pad from 200 ms before: "
                        + padAround.joined(separator: ", "))
                continue
            }
            // A start now's opening is due when the call writes it: the engine takes the start's time (the
            // sample's deadline, the plan's origin) only after that write returns, so a thread kept from its clock
            // read meanwhile would put the pad's record of the opening before a deadline it never had.
            let opening = playback.startedNow && sample.deadline == playback.origin
            let due =
                (opening ? sample.sent : sample.deadline) * 1000 - tickRate.writeLeadMilliseconds(ofChange: window)
            // A rise right after a stop had its level staged in the rest (EngineState.finishPass): one play. When
            // the thread woke past the staged command and the one after it, the later level holds now: it is
            // uploaded in the staged one's place, then played, which is only right where the pad shows that
            // staged level uploaded in the rest and the plan has it as the first command this change passed over.
            if let stop = previous, stop.mix.isOff, !sample.mix.isOff {
                if window.count == 1 && first.event == .play {
                    findings.stagedRiseCount += 1
                } else if let staged = passedOver[index]?.first,
                    stagedInRest(staged, replacedBy: sample.mix, window: window, since: stop, in: writes)
                {
                    findings.passedOverRiseCount += 1
                } else {
                    // With the stop's own requests, where the level should have been staged.
                    let origin = playback.origin
                    let stopSent = Int64((stop.sent * 1e6).rounded(.down))
                    let since = writes.filter { $0.time.microseconds >= stopSent && $0.time.microseconds < nextSent }
                    findings.unstagedRises.append(
                        "\(fileName) #\(index) to \(sample.mix) at +\(sample.deadline - origin) (+\(sample.sent - origin)), "
                            + "after the stop at +\(stop.deadline - origin) (+\(stop.sent - origin)): "
                            + "\(window.map(recordSummary)); the pad from the stop: \(since.map(recordSummary))")
                }
            }
            let error = Double(first.time.microseconds) / 1000 - due
            findings.firstErrors.append(error)
            findings.lastErrors.append(Double(last.time.microseconds) / 1000 - due)
            if error < findings.earliest?.error ?? .infinity {
                findings.earliest = (
                    "\(fileName) #\(index) to \(sample.mix) at +\(sample.deadline - playback.origin) s"
                        + (opening ? " (the start's opening, due at its write)" : "") + ": "
                        + window.map(recordSummary).joined(separator: ", "),
                    error
                )
            }
            // The level the pad is driven at must be the sample's. A change ends with a play or a stop, which
            // ff-memless turns into a driver call at once, or (a new level while the mix effect plays beside the
            // keeper) with an update alone, which it applies on its next tick. The model resolves ticks, so a
            // change followed by another in the same tick cannot be told apart and is skipped.
            let settled =
                last.event == .upload
                ? PadTimestamp(microseconds: (last.time.microseconds / tickMicroseconds + 1) * tickMicroseconds)
                : last.time
            guard nextSent / tickMicroseconds > settled.microseconds / tickMicroseconds else { continue }
            let levels = playback.model.output(at: settled)
            let expected = (
                ForceFeedbackEffect.magnitude(sample.mix.strong), ForceFeedbackEffect.magnitude(sample.mix.weak)
            )
            let padUnits = (ForceFeedbackEffect.magnitude(levels.strong), ForceFeedbackEffect.magnitude(levels.weak))
            if abs(Int(padUnits.0) - Int(expected.0)) > levelTolerance
                || abs(Int(padUnits.1) - Int(expected.1)) > levelTolerance
            {
                let context = records.filter {
                    $0.time.microseconds >= sent - 20_000 && $0.time.microseconds <= settled.microseconds
                }
                findings.mismatches.append(
                    "\(fileName) at \(sample.deadline): pad \(levels), sent \(sample.mix); records \(context.map(recordSummary))"
                )
            }
        }
    }

    /// Whether a rise after `stop` that went out as `window` is the staged level `staged` passed over: the pad
    /// recorded `staged` uploaded into the slot between the stop and the rise, and the rise is that slot's upload
    /// of `rise` (another level), then its play.
    static func stagedInRest(
        _ staged: MotorMagnitudes, replacedBy rise: MotorMagnitudes, window: [PadRecord], since stop: PlaybackSample,
        in writes: [PadRecord]
    ) -> Bool {
        func isUpload(_ record: PadRecord, of levels: MotorMagnitudes) -> Bool {
            guard record.event == .upload, case .rumble(let strong, let weak)? = record.effect?.kind else {
                return false
            }
            return strong == ForceFeedbackEffect.magnitude(levels.strong)
                && weak == ForceFeedbackEffect.magnitude(levels.weak)
        }
        guard staged != rise, window.count == 2, isUpload(window[0], of: rise), window[1].event == .play,
            let slot = window[1].id, window[0].id == slot
        else { return false }
        let stopSent = Int64((stop.sent * 1e6).rounded(.down))
        let rest = writes.filter { $0.time.microseconds >= stopSent && $0.time < window[0].time }
        return rest.last.map { $0.id == slot && isUpload($0, of: staged) } ?? false
    }

    /// The keepers among the effects `records` uploaded: rumbles at 0 with no replay length, played beside the mix
    /// slot so that a change while the mix plays is an update alone (`EvdevOutput`).
    static func keeperIDs(_ records: some Sequence<PadRecord>) -> Set<Int16> {
        Set(
            records.compactMap { record in
                guard record.event == .upload, record.retval == 0, let effect = record.effect,
                    case .rumble(0, 0) = effect.kind, effect.replayLength == 0
                else { return nil }
                return record.id
            })
    }

    /// Whether `records` hold a play of an effect other than a keeper: the motors driven, not just kept ready.
    static func playsRumble(_ records: some Collection<PadRecord>) -> Bool {
        let keepers = keeperIDs(records)
        return records.contains { $0.event == .play && !keepers.contains($0.id ?? -1) }
    }

    /// A pad record as `event@time`, followed by `(strong,weak)` for a rumble effect.
    static func recordSummary(_ record: PadRecord) -> String {
        var rumble = ""
        if case .rumble(let strong, let weak)? = record.effect?.kind { rumble = "(\(strong),\(weak))" }
        return "\(record.event.rawValue)@\(record.time)" + rumble
    }

    /// Fails on any command or motor mismatch, prints the counts and the timing errors, and fails when a change
    /// reached the pad before it was due or only after a hang.
    static func requireCorpusFindings(_ findings: CorpusFindings, fileCount: Int) throws {
        try require(
            findings.planMismatches.isEmpty,
            "the engine's commands differ from the planner's: \(findings.planMismatches.prefix(5))")
        try require(
            findings.unreached.isEmpty,
            "\(findings.unreached.count) changes sent never reached the pad: \(findings.unreached.prefix(5))")
        try require(
            findings.mismatches.isEmpty,
            "the pad's motors differ from the commands sent: \(findings.mismatches.prefix(5))")
        try require(
            findings.unstagedRises.isEmpty,
            "rises from rest after a stop that were not one play: \(findings.unstagedRises.prefix(5))")
        try require(findings.stagedRiseCount > 0, "no rise from rest after a stop was played")
        print(
            "  \(findings.commandCount) commands over \(fileCount) files, each the planner's (virtual profile) at its planned time; \(findings.skippedCount) planned commands superseded by a later one because the thread woke past both; \(findings.wokeLateCount) levels it slept through written when it woke, planned again from there; \(findings.stagedRiseCount) rises after a stop, each one play; \(findings.passedOverRiseCount) more whose staged level the thread woke past, the later level uploaded then played; \(findings.offAtRestCount) changes to off that found the motors at rest (the effect's replay window ran out first); \(findings.replannedCount) changes where a plan made again from what the pad held placed them (the mix changed within the minimum interval after a command written late)"
        )
        try require(!findings.firstErrors.isEmpty, "no write was matched to a pad record")
        let first = Percentiles(findings.firstErrors)
        let last = Percentiles(findings.lastErrors)
        print(
            "  timing error, pad kernel timestamp - when due (an update alone half a tick before its deadline), over \(findings.firstErrors.count) changes of \(fileCount) files:"
        )
        print("    first request: \(first)")
        print("    last request:  \(last)")
        try require(
            last.maximum < hangGuardMilliseconds,
            "a change reached the pad \(last.maximum) ms after its deadline: a hang")
        try require(
            first.minimum > -1,
            "a change reached the pad before it was due: \(first.minimum) ms, \(findings.earliest?.change ?? "")")
    }

    struct Percentiles: CustomStringConvertible {
        let sorted: [Double]
        init(_ values: [Double]) { sorted = values.sorted() }
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(Int(p / 100 * Double(sorted.count - 1)), sorted.count - 1)]
        }
        var minimum: Double { sorted.first ?? .nan }
        var maximum: Double { sorted.last ?? .nan }
        var description: String {
            String(format: "p50 %.3f ms, p99 %.3f ms, max %.3f ms", percentile(50), percentile(99), sorted.last ?? .nan)
        }
    }

    // MARK: Unplug and replug

    /// The Swift runtime opens descriptors of its own the first time a task sleeps on each clock (Dispatch
    /// keeps one timerfd per clock, plus an epoll and an eventfd) and keeps them: run that once before taking
    /// a baseline, or it counts as a leak. Dispatch opens a clock's timerfd only when a sleep is still ahead as
    /// its timer is armed: a guest that stood still through a sleep leaves it unopened, to be opened inside the
    /// scenario measured. So the sleeps go on until both timerfds (`CLOCK_MONOTONIC` and `CLOCK_BOOTTIME`) are
    /// open.
    static func warmUpRuntime() async throws {
        let deadline = monotonicSeconds() + VirtualPadSuite.hangGuardSeconds
        while !RuntimeTimers.clocks.isSubset(of: RuntimeTimers.open()) {
            guard monotonicSeconds() < deadline else {
                throw TestFailure(
                    reason: "the Swift runtime's timerfds never opened: clocks \(RuntimeTimers.open().sorted()) of "
                        + "\(RuntimeTimers.clocks.sorted()) after sleeps on both for the hang guard")
            }
            try await Task.sleep(for: .milliseconds(20))
            try await Task.sleep(until: SuspendingClock.now + .milliseconds(20), clock: .suspending)
        }
        let events = AsyncStream<Int>.makeStream(of: Int.self)
        events.continuation.finish()
        for await _ in events.stream {}
    }

    /// Runs the unplug scenario twice: the first run lets the runtime and libraries open what they keep for
    /// the life of the process (Dispatch's timerfds), the second is measured against the count before its pad.
    static func unplugMidPlayback() async throws {
        try await warmUpRuntime()
        try await unplugOnce(measured: false)
        try await unplugOnce(measured: true)
    }

    /// An engine on `pad` playing a long steady rumble, unplugged mid-playback: returns once the engine said
    /// `gameControllerDisconnect` and holds no descriptor on the removed node.
    static func rumbleThenUnplug(_ pad: VirtualPad) async throws -> (
        HapticEngine, Events, any HapticAdvancedPatternPlayer
    ) {
        let engine = try engine(for: pad)
        let events = Events(engine)
        let player = try engine.makeAdvancedPlayer(timeline: steady(0.8, 0.4, seconds: 30))
        try player.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "the engine's first rumble") {
            $0.contains(where: isNonZeroUpload)
        }
        let node = pad.eventNode
        pad.destroy()
        try await events.wait(for: .stopped(.gameControllerDisconnect), "after the pad was destroyed")
        try requireEqual(descriptors(pointingAt: node), 0, "descriptors still open on the removed \(node)")
        return (engine, events, player)
    }

    static func unplugOnce(measured: Bool) async throws {
        let baseline = openDescriptors()
        let (engine, _, _) = try await rumbleThenUnplug(try VirtualPadSuite.makePad())
        engine.stop()
        guard measured else { return }
        // The destroyed pad's own descriptors (uinput, wake pipe) went with it; the engine's must be gone too.
        try await waitForDescriptors(baseline, "after unplug and stop")
    }

    static func replugResets() async throws {
        let configuration = VirtualPadConfiguration()
        let first = try VirtualPadSuite.makePad(configuration)
        let oldNode = first.eventNode
        let (engine, events, player) = try await rumbleThenUnplug(first)
        let second = try VirtualPadSuite.makePad(configuration)
        defer { second.destroy() }
        try await events.wait(for: .reset, "after the same pad came back")
        try requireEqual(
            descriptors(pointingAt: oldNode == second.eventNode ? "/nonexistent" : oldNode), 0,
            "descriptors on the old node")
        let neutral = second.records().filter { $0.event == .upload || $0.event == .play }.prefix(2)
        try require(
            neutral.count == 2
                && neutral.first.map { !isNonZeroUpload($0) && $0.event == .upload && $0.retval == 0 } == true
                && neutral.last?.event == .play,
            "the first thing on the new pad must be a neutral (zero rumble upload, then play): \(VirtualPadSuite.summary(second.records()))"
        )
        do {
            try player.start(atTime: 0)
            throw TestFailure(reason: "a player from before the reset still started")
        } catch let error as HapticEngineError {
            try requireEqual(error.kind, .playerInvalidated, "the old player's error")
        }
        let fresh = try engine.makeAdvancedPlayer(timeline: steady(0.5, 0.5, seconds: 0.2))
        try fresh.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(second, "a rumble after the reset") {
            $0.contains(where: isNonZeroUpload)
        }
        engine.stop()
    }

    /// Two identical pads (no `uniq`, no `phys`): a listing calls the second `X-2`. An engine on it, named by that
    /// id or by its node, is bound to `X-2`, the id hot-plug events carry for it: the first pad's unplug leaves it
    /// running, its own unplug stops it. (It was bound to `X`, so the first pad's unplug stopped it and its own went
    /// unheard until a write failed.)
    static func identicalPadsUnplug() async throws {
        let configuration = VirtualPadConfiguration(name: "Haptics identical pad")
        for naming in ["id", "node"] {
            let pads = [try VirtualPadSuite.makePad(configuration), try VirtualPadSuite.makePad(configuration)]
            var alive = [true, true]
            defer { for (pad, isAlive) in zip(pads, alive) where isAlive { pad.destroy() } }
            let devices = try DeviceDiscovery(logger: VirtualPadSuite.logger()).devices(probing: .noNode)
            let listed = pads.compactMap { pad in devices.first { $0.node == pad.eventNode } }
            try require(listed.count == 2, "the two pads are not both listed")
            // The listing numbers identical devices in its order: the engine takes the one it calls `-2`.
            guard let second = listed.firstIndex(where: { $0.id.rawValue.hasSuffix("-2") }) else {
                throw TestFailure(reason: "neither pad is listed with -2: \(listed.map(\.id))")
            }
            let first = 1 - second
            try require(
                listed[second].id.rawValue == listed[first].id.rawValue + "-2",
                "the pads are listed as \(listed[first].id) and \(listed[second].id)")
            var options = HapticEngineOptions()
            options.renderProfile = .virtualPad
            options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
            let engine = HapticEngine(
                output: .device(naming == "id" ? .id(listed[second].id) : .node(pads[second].eventNode)),
                options: options, logger: VirtualPadSuite.logger())
            let events = Events(engine)
            try engine.start()
            defer { engine.stop() }
            pads[first].destroy()
            alive[first] = false
            // The first pad's removal reaches the engine's watch well within this; a stop would follow it.
            try await Task.sleep(for: .milliseconds(500))
            try require(
                engine.isRunning && events.all.isEmpty,
                "named by \(naming): after the other pad's unplug the engine saw \(events.all)")
            let player = try engine.makeAdvancedPlayer(timeline: steady(0.6, 0.3, seconds: 0.1))
            try player.start(atTime: 0)
            try await VirtualPadSuite.waitForRecords(pads[second], "named by \(naming): a rumble on its pad") {
                $0.contains(where: isNonZeroUpload)
            }
            // By now the engine has played on its pad well after the other one went: still no stop.
            try require(
                engine.isRunning && events.all.isEmpty,
                "named by \(naming): before its own pad's unplug the engine saw \(events.all)")
            pads[second].destroy()
            alive[second] = false
            try await events.wait(for: .stopped(.gameControllerDisconnect), "named by \(naming): after its own unplug")
            try requireEqual(
                events.all, [.stopped(.gameControllerDisconnect)], "named by \(naming): what the engine saw in all")
        }
        print("    named by id and by node: the other pad's unplug left the engine running, its own stopped it")
    }

    /// A play write fails with EIO (as a Bluetooth link answers while it drops; injected through `SyscallFaults`):
    /// the engine stops with `deviceError`. The pad then goes and comes back: the hot-plug watch's removal makes
    /// the engine wait for it, and its return resets the engine onto it, which plays again. (The removal and the
    /// return were ignored after a device error: the engine stayed stopped until the app started it.)
    static func deviceErrorThenReplug() async throws {
        let configuration = VirtualPadConfiguration(name: "Haptics pad whose link drops")
        var pad = try VirtualPadSuite.makePad(configuration)
        var alive = true
        defer { if alive { pad.destroy() } }
        let engine = try engine(for: pad)
        defer { engine.stop() }
        let events = Events(engine)
        let player = try engine.makeAdvancedPlayer(timeline: steady(0.8, 0.4, seconds: 30))
        SyscallFaults.arm(SyscallFaults.Plan(site: "write", errno: .ioError, calls: .from(1)))
        do {
            defer { SyscallFaults.disarm() }
            try player.start(atTime: 0)
            try await events.wait(for: .stopped(.deviceError), "after the play write failed with EIO")
        }
        pad.destroy()
        alive = false
        // The removal reaches the engine's watch well within this.
        try await Task.sleep(for: .milliseconds(500))
        pad = try VirtualPadSuite.makePad(configuration)
        alive = true
        try await events.wait(for: .reset, "after the pad came back")
        let fresh = try engine.makeAdvancedPlayer(timeline: steady(0.5, 0.5, seconds: 0.2))
        try fresh.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "a rumble after the reset") {
            $0.contains(where: isNonZeroUpload)
        }
        try requireEqual(events.all, [.stopped(.deviceError), .reset], "the engine's handlers")
        print("    deviceError on EIO, then the pad's unplug and return reset the engine, which played again")
    }

    static func unplugReplugCycles() async throws {
        let cycles = Repetitions.virtualPadCycles
        try await warmUpRuntime()
        let baseline = openDescriptors()
        let configuration = VirtualPadConfiguration()
        var pad = try VirtualPadSuite.makePad(configuration)
        let engine = try engine(for: pad)
        let events = Events(engine)
        var maximumSlots = 0
        for cycle in 0..<cycles {
            if cycle > 0 {
                pad = try VirtualPadSuite.makePad(configuration)
                try await events.wait(for: .reset, "cycle \(cycle): replug")
            }
            let player = try engine.makeAdvancedPlayer(timeline: steady(1, 0.5, seconds: 0.05))
            try player.start(atTime: 0)
            try await VirtualPadSuite.waitForRecords(pad, "cycle \(cycle): a rumble") {
                $0.contains(where: isNonZeroUpload)
            }
            let records = pad.records()
            let slots = Set(records.filter { $0.event == .upload && $0.retval == 0 }.compactMap(\.id))
            maximumSlots = max(maximumSlots, slots.count)
            let before = events.all.filter { $0 == .stopped(.gameControllerDisconnect) }.count
            pad.destroy()
            if events.all.filter({ $0 == .stopped(.gameControllerDisconnect) }).count == before {
                try await events.wait(for: .stopped(.gameControllerDisconnect), "cycle \(cycle): unplug")
            }
        }
        engine.stop()
        try requireEqual(events.all.filter { $0 == .reset }.count, cycles - 1, "resets")
        try requireEqual(maximumSlots, 2, "effect slots used on one pad (the mix slot and its keeper only)")
        try await waitForDescriptors(baseline, "after \(cycles) cycles and stop")
        print(
            "  \(cycles) cycles: \(cycles - 1) resets, at most \(maximumSlots) slots per pad, no descriptor left open")
    }

    // MARK: Devices that refuse

    static func refusedUploadsDegrade() async throws {
        try await warmUpRuntime()
        let baseline = openDescriptors()
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(failUploadsAfter: 1))
        defer { pad.destroy() }
        let engine = try engine(for: pad)
        let events = Events(engine)
        let ramp = MotorTimeline(segments: [
            MotorTimeline.Segment(
                start: 0, end: 0.2, startLevels: MotorMagnitudes(strong: 0.2, weak: 0.2),
                endLevels: MotorMagnitudes(strong: 1, weak: 1))
        ])
        let player = try engine.makeAdvancedPlayer(timeline: ramp)
        try player.start(atTime: 0)
        try await events.wait(for: .stopped(.deviceError), "when the pad refused the second upload")
        try require(!engine.isRunning, "the engine should have released the refusing device")
        try requireEqual(descriptors(pointingAt: pad.eventNode), 0, "descriptors on the refusing pad")
        // Still usable: a new play opens the device again and fails the same graceful way, without a crash: the
        // start throws the device's refusal, or it is taken and the refused upload stops the engine again.
        let again = try engine.makeAdvancedPlayer(timeline: ramp)
        let refusals = events.all.filter { $0 == .stopped(.deviceError) }.count
        do {
            try again.start(atTime: 0)
            if events.all.filter({ $0 == .stopped(.deviceError) }).count == refusals {
                try await events.wait(for: .stopped(.deviceError), "when the pad refused the second play's upload")
            }
            print("  second play taken, then stopped by the pad's refusal (deviceError)")
        } catch let error as HapticEngineError {
            try requireEqual(error.kind, .deviceError, "the second play's refusal: \(error)")
            print("  second play refused: \(error)")
        }
        try require(!engine.isRunning, "the engine should have released the refusing device again")
        try requireEqual(
            descriptors(pointingAt: pad.eventNode), 0, "descriptors on the refusing pad after the second play")
        engine.stop()
        pad.destroy()
        try await waitForDescriptors(baseline, "after stop and the pad's removal")
    }

    static func singleSlotDegrades() async throws {
        let pad = try VirtualPadSuite.makePad(VirtualPadConfiguration(maxEffects: 1))
        defer { pad.destroy() }
        let engine = try engine(for: pad)
        let events = Events(engine)
        // The mix slot takes the only slot; preparing a pulse cannot get one and says so (false).
        let longer = try engine.makeAdvancedPlayer(timeline: steady(0.3, 0.3, seconds: 0.1))
        try longer.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "the mix slot") { $0.contains(where: isNonZeroUpload) }
        let tap = try engine.makeAdvancedPlayer(timeline: steady(1, 1, seconds: 0.05))
        try require(try !tap.prepare(), "prepare() on a one-slot pad whose slot is taken should report false")
        try tap.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "the tap through the mix") { records in
            records.contains { record in
                guard case .rumble(let strong, _)? = record.effect?.kind else { return false }
                return record.event == .upload && strong == UInt16.max
            }
        }
        try require(events.all.isEmpty, "a one-slot pad must not stop the engine: \(events.all)")
        let slots = Set(pad.records().filter { $0.event == .upload && $0.retval == 0 }.compactMap(\.id))
        try requireEqual(slots.count, 1, "slots used")
        engine.stop()
    }

    /// The tap the prepared hand-over tests play (here on the model, `FFMemlessSuite` on the kernel's
    /// ff-memless): a 30 ms flat top, then 60 ms of a tail at half its levels.
    static let preparedTap = (
        top: MotorMagnitudes(strong: 0.8, weak: 0.6), tail: MotorMagnitudes(strong: 0.4, weak: 0.3)
    )
    static let preparedTapTimeline = MotorTimeline(segments: [
        MotorTimeline.Segment(
            start: 0, end: 0.03, startLevels: preparedTap.top, endLevels: preparedTap.top),
        MotorTimeline.Segment(
            start: 0.03, end: 0.09, startLevels: preparedTap.tail, endLevels: preparedTap.tail),
    ])

    /// A prepared tap plays its flat top on its own slot and the rest through the mix. Its effect is stopped
    /// before the mix's first update: the kernel rounds the tap's replay up to a tick, and without the stop the
    /// pad would play the top and the next level summed until that tick.
    static func preparedTapHandsOver() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let engine = try engine(for: pad)
        let (top, tail) = preparedTap
        let tap = try engine.makeAdvancedPlayer(timeline: preparedTapTimeline)
        try require(try tap.prepare(), "prepare() on a pad with free slots should upload the top")
        try tap.start(atTime: 0)
        try await VirtualPadSuite.waitForRecords(pad, "the mix's off at the tail's end") { records in
            // The first effect played but the keeper is the prepared top; off stops the mix's effect, another.
            let keepers = keeperIDs(records)
            guard let pulse = records.first(where: { $0.event == .play && !keepers.contains($0.id ?? -1) })?.id
            else { return false }
            return records.contains { $0.event == .stop && $0.id != pulse && !keepers.contains($0.id ?? -1) }
        }
        engine.stop()
        let records = pad.records()
        let planner = DeviceCommandPlanner(profile: .virtualPad)
        let units = { (levels: MotorMagnitudes) in
            [ForceFeedbackEffect.magnitude(levels.strong), ForceFeedbackEffect.magnitude(levels.weak)]
        }
        // The pulse is the first effect played but the keeper (the mix slot may hold the top too: making the
        // player staged it).
        let keepers = keeperIDs(records)
        guard
            let pulse = records.first(where: { $0.event == .play && !keepers.contains($0.id ?? -1) })?.id,
            records.contains(where: { record in
                guard case .rumble(let strong, let weak)? = record.effect?.kind else { return false }
                return record.event == .upload && record.id == pulse && [strong, weak] == units(planner.quantized(top))
            }),
            let trigger = records.firstIndex(where: { $0.event == .play && $0.id == pulse }),
            // The mix takes over with its play: its effect may be updated earlier (the tail staged while the top
            // plays, which moves no motor), but it is started only then.
            let handover = records[trigger...].firstIndex(where: {
                $0.event == .play && $0.id != pulse && !keepers.contains($0.id ?? -1)
            })
        else { throw TestFailure(reason: "no prepared top, trigger and mix play in \(records.map(recordSummary))") }
        if !records[trigger..<handover].contains(where: { $0.event == .stop && $0.id == pulse }) {
            let reason =
                "the tap's effect \(pulse) should be stopped before the mix's play: \(records.map(recordSummary))"
            // The engine leaves a pulse alone once it is past its length and overrun, which the kernel has ended:
            // a mix's play that late is the whole guest's standing still at least that overrun past the top's end.
            let topEnd = records[trigger].time.seconds + 0.03
            guard records[handover].time.seconds > topEnd + OutputTiming.pulseOverrunSeconds else {
                throw TestFailure(reason: reason)
            }
            throw TimingFailure(
                reason: reason, explainingStall: OutputTiming.pulseOverrunSeconds * 1000,
                window: topEnd...records[handover].time.seconds)
        }
        // What the pad's motors did (ff-memless replayed at the kernel's tick): only planned levels, never a sum.
        let allowed = Set([top, tail, .off].map { units(planner.quantized($0)) })
        let end = PadTimestamp(microseconds: (records.last?.time.microseconds ?? 0) + 100_000)
        for change in pad.motorModel().timeline(until: end) {
            try require(
                allowed.contains(units(change.levels)), "the pad ran \(change.levels) at \(change.time)")
        }
    }

    /// A start while the pad rests reaches it as one play: an ordinary start because making the player staged its
    /// opening in the mix slot (an upload the pad hears then, not at the start), a prepared one because its pulse
    /// waits in its own slot. The keeper was played when the engine opened the pad, with nothing else. The ordinary
    /// start's pattern ends with a stop of the slot it played.
    static func startsAtRestAreOnePlay() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let engine = try engine(for: pad)
        defer { engine.stop() }
        let atOpen = try await VirtualPadSuite.waitForRecords(pad, "the keeper played at the open") { records in
            let keepers = keeperIDs(records)
            return records.contains { $0.event == .play && keepers.contains($0.id ?? -1) }
        }
        try require(
            !playsRumble(atOpen) && atOpen.filter({ $0.event == .upload }).count == 1,
            "opening the pad should upload and play the keeper alone: \(atOpen.map(recordSummary))")
        let levels = MotorMagnitudes(strong: 0.8, weak: 0.6)
        let flat = MotorTimeline(segments: [
            MotorTimeline.Segment(start: 0, end: 0.05, startLevels: levels, endLevels: levels)
        ])
        let uploads: @Sendable ([PadRecord]) -> Int = { records in
            records.filter { $0.event == .upload && $0.retval == 0 }.count
        }
        let opened = uploads(pad.records())
        let hum = try engine.makeAdvancedPlayer(timeline: flat)
        _ = try await VirtualPadSuite.waitForRecords(pad, "the staged opening") { uploads($0) > opened }
        for name in ["ordinary", "prepared"] {
            // Made in turn: a player made before the ordinary start would stage its own opening in hum's place.
            let player = name == "ordinary" ? hum : try engine.makeAdvancedPlayer(timeline: flat)
            // The prepared start is its armed trigger: the play of the slot `prepare()` uploaded, not of the mix
            // slot (which holds the same levels, so a start through the mix would be one play too).
            var pulse: Int16?
            if name == "prepared" {
                let beforePrepare = pad.records().count
                let ownSlot: @Sendable ([PadRecord]) -> Int16? = { records in
                    let keepers = keeperIDs(records)
                    let fresh = { (record: PadRecord) in
                        record.event == .upload && record.retval == 0 && !keepers.contains(record.id ?? -1)
                    }
                    let mix = records.first(where: fresh)?.id
                    return records.dropFirst(beforePrepare).first { fresh($0) && $0.id != mix }?.id
                }
                try require(try player.prepare(), "prepare() on a pad with free slots")
                pulse = ownSlot(
                    try await VirtualPadSuite.waitForRecords(pad, "prepare()'s upload") { ownSlot($0) != nil })
            }
            try await waitUntilAtRest(pad)
            let before = pad.records().count
            try player.start(atTime: 0)
            let records = try await VirtualPadSuite.waitForRecords(pad, "the \(name) start's play") { records in
                records.dropFirst(before).contains { $0.event == .play }
            }
            let sent = records.dropFirst(before)
            try require(
                sent.first?.event == .play,
                "the \(name) start should reach the pad as a play first: \(sent.map(recordSummary))")
            if let pulse {
                try require(
                    sent.first?.id == pulse,
                    "the prepared start should play its own slot \(pulse) first: "
                        + sent.map { "\($0.event.rawValue)#\($0.id ?? -1)" }.joined(separator: " "))
            } else {
                // The staged play noted the mix slot as playing: the pattern's end reaches the pad as our stop of
                // that slot, not as the kernel's self-expiry of a play the engine thought stopped.
                let played = sent.first?.id
                _ = try await VirtualPadSuite.waitForRecords(pad, "the ordinary start's stop at the pattern's end") {
                    $0.dropFirst(before).contains { $0.event == .stop && $0.id == played }
                }
            }
        }
    }

    /// Until the pad's motors rest and the engine has had a tick to see it.
    private static func waitUntilAtRest(_ pad: VirtualPad) async throws {
        let deadline = Sys.monotonicNanoseconds() + 5_000_000_000
        while pad.motorOutput(at: PadTimestamp(microseconds: Int64(Sys.monotonicNanoseconds() / 1000))) != .off {
            guard Sys.monotonicNanoseconds() < deadline else { throw TestFailure(reason: "the pad never came to rest") }
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(60))
    }

    // MARK: All gamepads

    static func allGamepads() async throws {
        let first = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics Test Pad A"))
        let second = try VirtualPadSuite.makePad(VirtualPadConfiguration(name: "Haptics Test Pad B"))
        defer {
            first.destroy()
            second.destroy()
        }
        var options = HapticEngineOptions()
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        let engine = HapticEngine(output: .device(.allGamepads), options: options, logger: VirtualPadSuite.logger())
        try engine.start()
        let events = Events(engine)
        let player = try engine.makeAdvancedPlayer(timeline: steady(0.6, 0.3, seconds: 30))
        try player.start(atTime: 0)
        for pad in [first, second] {
            try await VirtualPadSuite.waitForRecords(pad, "the broadcast rumble on \(pad.configuration.name)") {
                $0.contains(where: isNonZeroUpload)
            }
        }
        // Losing one pad is not losing the output: the other keeps being renewed.
        first.destroy()
        let renewals = second.records().filter { $0.event == .play }.count
        try await VirtualPadSuite.waitForRecords(second, "renewals after the first pad went") { records in
            records.filter { $0.event == .play }.count >= renewals + 2
        }
        try require(events.all.isEmpty, "losing one of two pads must not stop the engine: \(events.all)")
        second.destroy()
        try await events.wait(for: .stopped(.gameControllerDisconnect), "after the last pad went")
        engine.stop()
    }
}
