// A pattern's sound and rumble played by one engine through real drivers: the sound on snd-aloop's loopback
// card (its capture side hears what the engine plays), the rumble on a uinput virtual pad (its records carry
// the kernel's CLOCK_MONOTONIC time). The engine must schedule both for one instant, the sound must come back
// whole with no underrun, and the pad's motors must run. How far apart they arrive is measured by the benchmark group
// "A pattern's sound and rumble" (haptics-bench), not asserted here. A card that goes away interrupts the
// engine as an unplugged pad does, and its return resets it.
import AHAP
import AudioRendering
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxAudio
import LinuxHaptics
import LinuxHapticsTesting
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

enum EngineAudioSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "engine-audio", requires: [.sndAloop, .uinput],
        tests: [
            KernelTest(name: "engine-audio/sound-and-rumble-start-together") {
                try await AudioSuite.againAfterAGuestStall(soundAndRumble)
            },
            KernelTest(name: "engine-audio/a-registered-sound-is-heard-sample-for-sample-with-its-options") {
                try await AudioSuite.againAfterAGuestStall(registeredSound)
            },
            KernelTest(name: "engine-audio/muted-and-haptics-only-engines-stay-silent", body: mutedEngines),
            // Last: it unbinds the card and binds it again.
            KernelTest(name: "engine-audio/card-gone-interrupts-and-its-return-resets", body: cardGoneResets),
        ])

    /// The audio suite's tone (a 0.2 s tone at 50 ms, then silence) with a strong transient at the same 50 ms.
    static func pattern() -> HapticPattern {
        let audio = [
            HapticEvent(
                type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0.8)],
                relativeTime: 0.05, duration: 0.2),
            HapticEvent(
                type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0)],
                relativeTime: 0.25, duration: 0.15),
        ]
        let tap = HapticEvent(
            type: .hapticTransient,
            parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                HapticEventParameter(parameterID: .hapticSharpness, value: 0.5),
            ],
            relativeTime: 0.05)
        return HapticPattern(events: audio + [tap], parameters: [], parameterCurves: [])
    }

    /// An engine on the pad (`EngineSuite.engine`) whose sound goes to the loopback card.
    static func engine(
        for pad: VirtualPad, configure: (inout HapticEngineOptions) -> Void = { _ in }
    ) throws -> HapticEngine {
        try EngineSuite.engine(
            for: pad,
            configure: { options in
                options.audioDevice = AudioSuite.playbackDevice
                // The capture tests' buffer: snd-aloop repeats stale ring frames when its timer fires late under
                // emulation, which a longer buffer keeps out of the tone.
                options.audioBufferSeconds = AudioSuite.captureSafeBuffer
                configure(&options)
            })
    }

    /// Plays the pattern three times. Each round the engine must schedule the sound and the rumble for the same
    /// instant (`requireOneInstant`), the tone must come back sample for sample with no underrun on the ALSA
    /// output (heard whole, so started on time), and the pad's motors must run (`firstRumble`). How far the
    /// sound's onset was heard from the motors' start is printed; the benchmark gives its percentiles.
    static func soundAndRumble() async throws {
        try withObservedEngine { pad, engine, observed in try soundAndRumble(pad, engine, observed) }
    }

    private static func soundAndRumble(_ pad: VirtualPad, _ engine: HapticEngine, _ observed: Observed) throws {
        let rendered = AudioSuite.renderedTone()
        var offsets: [Double] = []
        for round in 0..<3 {
            let recordsBefore = pad.records().count
            observed.forget()
            let (captured, called) = try captureWhilePlaying(
                pattern(), on: engine, frames: rendered.count / 2 + AudioSuite.rate * 3 / 5)
            try requireEqual(engine.audioOutputName, AudioSuite.playbackDevice, "the engine's sound output")
            let planned = try observed.requireOneInstant(pattern(), "round \(round)")
            let onsetFrame = try observed.explainingUnderruns(since: called) {
                try AudioSuite.check(captured.samples, against: rendered, xruns: observed.xruns)
            }
            let heard = captured.seconds(ofFrame: onsetFrame)
            guard let play = firstRumble(on: pad, after: recordsBefore) else {
                throw TestFailure(reason: "round \(round): the pad's motors never ran")
            }
            let offset = (heard - play.seconds) * 1000
            offsets.append(offset)
            print(
                "  round \(round): sound and rumble scheduled from one instant (rumble at +\(planned * 1000) ms); rumble "
                    + "\(AudioSuite.tenths((play.seconds - Double(called) / 1e9) * 1000)) ms after the call, "
                    + "sound onset heard \(AudioSuite.tenths(offset)) ms after the rumble")
        }
        print("  sound onset heard after rumble, ms: \(offsets.map(AudioSuite.tenths))")
    }

    /// A file registered with the engine (`registerAudioResource`) and played by an event that names only its
    /// identifier, 0.5 s long, looping by the resource's option: the card must give back, sample for sample with
    /// no underrun, what the engine renders of the file (0.35 s) decoded at its rate, looped once and a half, with
    /// no volume envelope (the other option).
    static func registeredSound() async throws {
        try withObservedEngine { _, engine, observed in try registeredSound(engine, observed) }
    }

    private static func registeredSound(_ engine: HapticEngine, _ observed: Observed) throws {
        let file = URL(fileURLWithPath: "Haptics/success.wav")
        let id = try engine.registerAudioResource(
            file, options: AudioResourceOptions(usesVolumeEnvelope: false, loopEnabled: true))
        let pattern = HapticPattern(
            events: [HapticEvent(audioResourceID: id, relativeTime: 0.05, duration: 0.5)], parameters: [])
        // What the engine renders: the event with the resource's options, the file decoded at the card's rate.
        var resolved = pattern
        resolved.events[0].waveformUsesVolumeEnvelope = false
        resolved.events[0].waveformLoopEnabled = true
        let clip = try AudioFile.load(file.path, sampleRate: AudioSuite.rate)
        var mixer = AudioMixer(
            schedule: AudioSchedule(pattern: resolved, clipDurations: [.resource(id): clip.duration]),
            clips: [.resource(id): clip], sampleRate: Double(AudioSuite.rate))
        var rendered = [Float](repeating: 0, count: 2 * AudioSuite.rate * 65 / 100)
        mixer.render(into: &rendered)
        let (captured, called) = try captureWhilePlaying(
            pattern, on: engine, frames: rendered.count / 2 + AudioSuite.rate * 3 / 5)
        _ = try observed.explainingUnderruns(since: called) {
            try AudioSuite.check(captured.samples, against: rendered, xruns: observed.xruns)
        }
    }

    /// Runs `body` with a virtual pad and an engine on it (`engine(for:)`) whose sound goes to the loopback card,
    /// observed (`Observed`); the engine is stopped and the pad destroyed after.
    static func withObservedEngine(_ body: (VirtualPad, HapticEngine, Observed) throws -> Void) throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let observed = Observed()
        let engine = try engine(
            for: pad, configure: { observed.observe(&$0, bufferSeconds: AudioSuite.captureSafeBuffer) })
        defer { engine.stop() }
        try body(pad, engine, observed)
    }

    /// Plays `pattern` on `engine` once, to its end, while the loopback card is captured for `frames` frames;
    /// with when the start was called (`CLOCK_MONOTONIC` nanoseconds).
    static func captureWhilePlaying(
        _ pattern: HapticPattern, on engine: HapticEngine, frames: Int
    ) throws -> (recording: LoopbackCapture.Recording, called: UInt64) {
        var called: UInt64 = 0
        let captured = try AudioSuite.capture(frames: frames) {
            let player = try engine.makeAdvancedPlayer(with: pattern)
            let done = Lock(false)
            player.completionHandler = { _ in done.withLock { $0 = true } }
            called = MonotonicTime.nanoseconds()
            try player.start(atTime: 0)
            while !done.withLock({ $0 }) { Sys.sleep(nanoseconds: 10_000_000) }
            // Rendered, not yet heard: let the output's buffer play out.
            Sys.sleep(nanoseconds: UInt64((AudioSuite.captureSafeBuffer + 0.05) * 1e9))
        }
        return (captured, called)
    }

    /// Fails unless the engine scheduled `pattern`'s sound and rumble for one instant: the pattern's start as its
    /// sound stream was told it (the time the sound's first frame is to be heard at, less that frame's pattern
    /// time) and as its first motor change was due (the change's deadline, less its planned time: the planner's
    /// for the virtual pad's profile) must be the same engine time, up to the clock's nanosecond rounding. That
    /// change is the plan's first one that drives the motors, or a later one when the thread woke past the first
    /// (the rate limit then sends only the level that holds): every planned change before it must have been due
    /// when it was sent. Returns the planned time of the change matched, in seconds.
    static func requireOneInstant(
        _ pattern: HapticPattern, sounds: [ScheduledSound], samples: [PlaybackSample], _ what: String
    ) throws -> Double {
        guard sounds.count == 1, let sound = sounds.first else {
            throw TestFailure(reason: "\(what): \(sounds.count) sounds scheduled, not one")
        }
        guard let change = samples.first(where: { $0.kind == .apply && !$0.mix.isOff }) else {
            throw TestFailure(
                reason:
                    "\(what): the engine sent no motor change through its mix (samples \(samples); sounds \(sounds))")
        }
        let planned = DeviceCommandPlanner(profile: .virtualPad).commands(
            for: PatternRenderer(profile: .virtualPad).render(pattern)
        ).filter { !$0.levels.isOff }
        let soundStart = Double(sound.startNanoseconds) / 1e9 - sound.patternTime
        let due = change.deadline - soundStart
        guard let match = planned.first(where: { abs($0.time - due) <= oneInstant }) else {
            throw TestFailure(
                reason: "\(what): the first motor change is due \(due * 1000) ms after the start the sound was "
                    + "scheduled from, at no planned change (planned, ms: \(planned.prefix(6).map { $0.time * 1000 }))")
        }
        if let skipped = planned.first(where: { $0.time < match.time && $0.time > change.sent - soundStart }) {
            throw TestFailure(
                reason: "\(what): the planned change at \(skipped.time * 1000) ms was not sent, and was not yet due "
                    + "when the one at \(match.time * 1000) ms was")
        }
        return match.time
    }

    /// When the pad's motors first ran, as the motor model gives them from its records after the first `before`:
    /// the rumble felt (a play of silence, or an update of an effect still playing, counts only by what it does
    /// to the motors). The time is the kernel's stamp of the request that started them; nil if they never ran.
    static func firstRumble(on pad: VirtualPad, after before: Int) -> PadTimestamp? {
        let records = pad.records().dropFirst(before)
        guard let first = records.first, let last = records.last else { return nil }
        let timeline = pad.motorModel().timeline(until: last.time)
        guard let running = timeline.first(where: { $0.time >= first.time.tick && !$0.levels.isOff }) else {
            return nil
        }
        return records.first { $0.time.tick == running.time && [.upload, .play].contains($0.event) }?.time
            ?? running.time
    }

    /// Two engine times are one instant when they differ by less than this: the sound's start passes through
    /// whole nanoseconds, and engine times are seconds in a `Double`.
    static let oneInstant = 1e-6

    /// A sound the engine had its stream play (`HapticEngineOptions.soundScheduleObserver`).
    struct ScheduledSound: Sendable {
        var startNanoseconds: UInt64
        var patternTime: Double
    }

    /// What an engine scheduled and which outputs it opened, gathered from its package-level options.
    final class Observed: Sendable {
        let sounds = Lock<[ScheduledSound]>([])
        let samples = Lock<[PlaybackSample]>([])
        private let outputs = Lock<[StampedOutput]>([])
        /// What the outputs logged: ALSAOutput logs each stream error it recovered from, with the error.
        private let log = RecordingLog()

        /// Sets `options` to report here and to open ALSA's loopback playback device with `bufferSeconds`.
        func observe(_ options: inout HapticEngineOptions, bufferSeconds: Double) {
            options.soundScheduleObserver = { [self] start, time in
                sounds.withLock { $0.append(ScheduledSound(startNanoseconds: start, patternTime: time)) }
            }
            options.playbackObserver = { [self] sample in samples.withLock { $0.append(sample) } }
            options.audioOutputFactory = { [self] (_: Logger) throws(AudioDeviceError) -> any AudioOutput in
                let output = StampedOutput(
                    try ALSAOutput(
                        device: AudioSuite.playbackDevice, sampleRate: AudioSuite.rate, bufferSeconds: bufferSeconds,
                        logger: log.logger))
                outputs.withLock { $0.append(output) }
                return output
            }
        }

        /// Underruns, overruns and suspends the engine's ALSA outputs recovered from.
        var xruns: Int { outputs.withLock { $0.reduce(0) { $0 + $1.output.xrunCount } } }

        /// Runs `check`, and when it fails on an underrun adds what the engine's sound thread did around it (the
        /// writes of each output, timed from `since`, a `CLOCK_MONOTONIC` time): a thread away between two writes
        /// for longer than the buffer was late by itself; one whose write blocked across the underrun was waiting
        /// in the kernel for room (the guest standing still, or the card's timer late).
        func explainingUnderruns<T>(since: UInt64, _ check: () throws -> T) throws -> T {
            do {
                return try check()
            } catch let failure as TestFailure where failure.reason.hasPrefix(AudioSuite.underrunReason) {
                let recovered = log.entries.filter { $0.level >= .warning }.map(\.message)
                let writers = outputs.withLock { $0.map { $0.describeWrites(since: since) } }
                throw TestFailure(
                    reason: "\(failure.reason) (\(writers.joined(separator: "; ")); logged: \(recovered))")
            }
        }

        func forget() {
            sounds.withLock { $0 = [] }
            samples.withLock { $0 = [] }
        }

        func requireOneInstant(_ pattern: HapticPattern, _ what: String) throws -> Double {
            try EngineAudioSuite.requireOneInstant(
                pattern, sounds: sounds.withLock { $0 }, samples: samples.withLock { $0 }, what)
        }
    }

    /// Muted for audio, or made for haptics only, the engine plays the rumble and nothing reaches the card;
    /// unmuted again, the next pattern is heard. Muted for haptics, the sound plays and the pad stays at rest.
    static func mutedEngines() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        func playOnce(_ engine: HapticEngine) throws -> (samples: [Float], played: Bool) {
            let before = pad.records().count
            let captured = try AudioSuite.capture(frames: AudioSuite.rate * 3 / 4) {
                let player = try engine.makeAdvancedPlayer(with: pattern())
                let done = Lock(false)
                player.completionHandler = { _ in done.withLock { $0 = true } }
                try player.start(atTime: 0)
                while !done.withLock({ $0 }) { Sys.sleep(nanoseconds: 10_000_000) }
                Sys.sleep(nanoseconds: 150_000_000)
            }
            let played = pad.records().dropFirst(before).contains { EngineSuite.isNonZeroUpload($0) }
            return (captured.samples, played)
        }
        let engine = try engine(for: pad)
        engine.isMutedForAudio = true
        var heard = try playOnce(engine)
        try require(heard.played, "muted for audio, the rumble still plays")
        try require(AudioSuite.onset(heard.samples) == nil, "muted for audio, nothing reaches the card")
        engine.isMutedForAudio = false
        engine.isMutedForHaptics = true
        heard = try playOnce(engine)
        try require(AudioSuite.onset(heard.samples) != nil, "unmuted for audio, the tone is heard")
        try require(!heard.played, "muted for haptics, the pad gets no non-zero effect")
        engine.stop()

        let hapticsOnly = try self.engine(for: pad, configure: { $0.playsHapticsOnly = true })
        defer { hapticsOnly.stop() }
        heard = try playOnce(hapticsOnly)
        try require(heard.played, "haptics only, the rumble plays")
        try require(AudioSuite.onset(heard.samples) == nil, "haptics only, nothing reaches the card")
        try require(hapticsOnly.audioOutputName == nil, "haptics only, no sound output is opened")
    }

    /// A looping pattern with sound plays; the card is unbound (as a USB card unplugged): the engine stops
    /// with `audioSessionInterrupt`, its player told; bound again, the engine resets, and a new player is heard.
    static func cardGoneResets() async throws {
        try LoopbackCard.requireUnbindable()
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let engine = try engine(for: pad, configure: { $0.audioBufferSeconds = 0.04 })
        defer { engine.stop() }
        let reasons = Lock<[HapticEngineStoppedReason]>([])
        let resets = Lock(0)
        engine.stoppedHandler = { reason in reasons.withLock { $0.append(reason) } }
        engine.resetHandler = { resets.withLock { $0 += 1 } }
        let player = try engine.makeAdvancedPlayer(with: pattern())
        player.loopEnabled = true
        let ended = Lock<HapticEngineError??>(nil)
        player.completionHandler = { error in ended.withLock { $0 = .some(error) } }
        try player.start(atTime: 0)
        Sys.sleep(nanoseconds: 300_000_000)
        try LoopbackCard.unbind()
        do {
            try await AudioSuite.waitFor("the engine to stop") { !reasons.withLock({ $0 }).isEmpty }
            try requireEqual(reasons.withLock { $0 }, [.audioSessionInterrupt], "the stopped handler's reasons")
            try require(!engine.isRunning, "the engine is interrupted while the card is gone")
            try await AudioSuite.waitFor("the player to hear of it") { ended.withLock { $0 } != nil }
        } catch {
            try? LoopbackCard.bind()
            throw error
        }
        try LoopbackCard.bind()
        try await AudioSuite.waitFor("the engine to reset") { resets.withLock { $0 } == 1 }
        try require(engine.isRunning, "the engine runs again after its reset")
        let stale: HapticEngineError? = {
            do throws(HapticEngineError) {
                try player.start(atTime: 0)
                return nil
            } catch { return error }
        }()
        try requireEqual(stale?.kind, .playerInvalidated, "a player made before the reset, started")
        let captured = try AudioSuite.capture(frames: AudioSuite.rate * 3 / 4) {
            let fresh = try engine.makePlayer(with: pattern())
            try fresh.start(atTime: 0)
            Sys.sleep(nanoseconds: 600_000_000)
        }
        try require(AudioSuite.onset(captured.samples) != nil, "a new player is heard after the reset")
    }
}

extension PadTimestamp {
    /// The start of the kernel tick (4 ms, the motor model's) this time falls in.
    fileprivate var tick: PadTimestamp {
        PadTimestamp(microseconds: microseconds - microseconds % EngineSuite.tickMicroseconds)
    }
}

/// An ALSA output whose writes are stamped: when each began and returned, and how many stream errors the output
/// had recovered from by then, so that an underrun can be placed against what the writing thread did.
final class StampedOutput: AudioOutput {
    let output: ALSAOutput
    private let writes = Lock<[Write]>([])

    struct Write {
        var began: UInt64
        var returned: UInt64
        var xruns: Int
    }

    init(_ output: ALSAOutput) { self.output = output }

    var deviceName: String { output.deviceName }
    var sampleRate: Int { output.sampleRate }
    var latency: AudioLatency { output.latency }

    @discardableResult
    func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        let began = MonotonicTime.nanoseconds()
        let heard = try output.write(samples)
        let write = Write(began: began, returned: MonotonicTime.nanoseconds(), xruns: output.xrunCount)
        writes.withLock { $0.append(write) }
        return heard
    }

    func delay() throws(AudioDeviceError) -> Double { try output.delay() }
    func drain() throws(AudioDeviceError) { try output.drain() }
    func close() { output.close() }

    /// The writes since the output opened: how many, the longest time between one write's return and the next
    /// one's start (the thread away: mixing, or not running) and when it began, and the writes after which the
    /// recovered-error count rose, in ms from `since` (negative: before it).
    func describeWrites(since: UInt64) -> String {
        let recent = writes.withLock { $0 }
        func ms(_ time: UInt64) -> Double { AudioSuite.tenths((Double(time) - Double(since)) / 1e6) }
        var away = (gap: 0.0, from: 0.0)
        var rises: [String] = []
        for (previous, next) in zip(recent, recent.dropFirst()) {
            let gap = Double(next.began - min(previous.returned, next.began)) / 1e6
            if gap > away.gap { away = (AudioSuite.tenths(gap), ms(previous.returned)) }
            if next.xruns > previous.xruns {
                rises.append(
                    "write at +\(ms(next.began)) ms (returned +\(ms(next.returned)) ms) after the one at "
                        + "+\(ms(previous.began)) ms")
            }
        }
        return
            "\(output.latency); \(recent.count) writes since the output opened, the writer away at most \(away.gap) ms "
            + "(from +\(away.from) ms); recovered errors rose at \(rises.isEmpty ? "no write" : rises.joined(separator: ", "))"
    }
}
