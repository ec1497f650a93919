// The engine's sound: a pattern's audio events played on one MixingStream, on the same CLOCK_MONOTONIC
// timeline as its haptics. Each player's sounds follow its state (PlayerState.soundCues): a sound is made
// when a start or resume is queued (placed to the frame at its engine time), ended at the player's next
// command, and replaced when the player is sought, changes rate or loop, or receives controls. The stream is
// opened on the first sound and closed with the engine, so an engine that plays no sound wakes nothing.
import AHAP
import AudioRendering
import HapticRendering
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Synchronization

/// Where an engine's sound goes, when it plays sound at all.
struct EngineAudioConfiguration: Sendable {
    /// The ALSA device ("default": the sound server, never exclusive).
    var device: String
    var sampleRate: Int
    var bufferSeconds: Double
    /// Folders a relative `EventWaveformPath` is looked for in, in order.
    var resourceDirectories: [String]
    /// Opens the output; nil: the ALSA device, or the null output when there is no sound device.
    var openOutput: (@Sendable (Logger) throws(AudioDeviceError) -> any AudioOutput)?
    /// `HapticEngineOptions.soundScheduleObserver`.
    var onSoundScheduled: (@Sendable (_ startNanoseconds: UInt64, _ patternTime: Double) -> Void)?
}

final class EngineAudio: Sendable {
    let configuration: EngineAudioConfiguration
    private let logger: Logger
    private let state = Lock(State())
    private let rateWarned = Atomic<Bool>(false)
    /// Who hears of the sound device going, coming back and failing (the engine, set once it exists): the
    /// engine calls this type, and this type only calls these back.
    private let listener = Lock<Listener?>(nil)

    /// What the sound device did, for the engine.
    struct Listener: Sendable {
        /// The device went away (true) or came back (false).
        var interrupted: @Sendable (Bool) -> Void
        /// The stream ended on another error.
        var failed: @Sendable (AudioDeviceError) -> Void
    }

    private struct State {
        var stream: MixingStream?
        /// The stream an idle engine let go, until it is closed (`closeSetAside`) or the next sound takes it up.
        var setAside: MixingStream?
        /// What the stream plays on (an ALSA name or "null"), once opened.
        var outputName: String?
        /// The sounds playing or waiting, by player, by anchor.
        var sounds = CueSounds<MixingStream>()
        var muted = false
        /// The engine stopped (`close(untilStarted: true)`): no stream opens until `permitOpening()`. A start that
        /// asks for its sound's lead while a `stop()` on another thread closes the stream would otherwise open it
        /// again, and a stopped engine would hold the sound device and a thread writing silence.
        var closedUntilStarted = false
        /// Decoded clips by the files and folders they were looked for in.
        var clips: [ClipKey: [AudioWaveform: AudioClip]] = [:]
    }

    /// What a player's sound needs, taken from the engine's state.
    struct PlayerSound: Sendable {
        var cues: [SoundCue]
        var source: PatternSource
    }

    init(configuration: EngineAudioConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Tells `listener` what the sound device does from now on.
    func listen(_ listener: Listener) { self.listener.withLock { $0 = listener } }

    /// The name of the output the stream plays on; nil before the first sound.
    var outputName: String? { state.withLock { $0.outputName } }

    var isMuted: Bool {
        get { state.withLock { $0.muted } }
        set { state.withLock { $0.muted = newValue } }
    }

    /// A pattern's clips, decoded and converted to the stream's rate; nil when it has nothing to be heard (no
    /// audio event, or only `AudioCustom` events whose files cannot be played). Files that cannot be found or
    /// read are logged; their events stay silent. `folder`, when given, is searched before the configured ones
    /// (the AHAP file's own folder). What was decoded is kept for the patterns that name the same files.
    /// `registered`: the clips of the registered resources the pattern plays (`AudioResources.resolve`).
    func audio(
        for pattern: HapticPattern, nextTo folder: String? = nil, registered: [AudioWaveform: AudioClip] = [:]
    ) -> PatternAudio? {
        guard pattern.events.contains(where: { $0.type == .audioCustom || $0.type == .audioContinuous }) else {
            return nil
        }
        let directories = (folder.map { [$0] } ?? []) + configuration.resourceDirectories
        let paths = Set(PatternSounds.paths(in: pattern))
        let key = ClipKey(directories: directories, paths: paths)
        var clips: [AudioWaveform: AudioClip]
        if paths.isEmpty {
            clips = [:]
        } else if let cached = state.withLock({ $0.clips[key] }) {
            clips = cached
        } else {
            let sounds = PatternSounds(
                pattern: pattern, directories: directories, sampleRate: configuration.sampleRate)
            for (path, failure) in sounds.failures.sorted(by: { $0.key < $1.key }) {
                logger.warning(
                    "an audio event's file cannot be played", metadata: ["path": "\(path)", "error": "\(failure)"])
            }
            clips = sounds.clips
            state.withLock { state in
                if state.clips.count >= Self.cachedClipSets { state.clips.removeAll() }
                state.clips[key] = clips
            }
        }
        clips.merge(registered) { file, _ in file }
        let audio = PatternAudio(clips: clips, sampleRate: configuration.sampleRate)
        return audio.schedule(of: pattern, controls: .none).voices.isEmpty ? nil : audio
    }

    /// How many sets of decoded clips are kept (a set per distinct list of files and folders).
    static let cachedClipSets = 32

    private struct ClipKey: Hashable {
        var directories: [String]
        var paths: Set<String>
    }

    /// How far ahead of now, in seconds, a sound must start to be heard whole: what the stream says, opening it
    /// if needed; nil when the engine's sound is muted or no stream can be had.
    func lead() -> Double? {
        guard !isMuted, let stream = openStream() else { return nil }
        return Double(stream.leadNanoseconds) / MonotonicClock.nanosecondsPerSecond
    }

    /// Makes the stream play what `players` ask for from `now`: new cues placed at their anchors, old ones
    /// ended, changed ends passed on.
    func sync(_ players: [PlayerID: PlayerSound], now: Double) {
        let wanted = !isMuted && players.contains { !$0.value.cues.isEmpty }
        guard wanted || state.withLock({ !$0.sounds.isEmpty }) else { return }
        guard let stream = wanted ? openStream() : state.withLock({ $0.stream }) else { return }
        let missing = state.withLock { state -> [(PlayerID, SoundCue, PlayerSound)] in
            // Muted, no cue is wanted: every sound ends and none starts.
            let cues = state.muted ? [:] : players.mapValues(\.cues)
            return state.sounds.reconcile(cues, now: now, on: stream).compactMap { player, cue in
                players[player].map { (player, cue, $0) }
            }
        }
        // The new sounds' sources are rendered outside the lock; they start under it, unless the stream was
        // closed, the sound muted, or the sound started meanwhile.
        let sources = missing.compactMap { player, cue, sound in
            source(for: cue, of: sound, on: stream, now: now).map { (player, cue, $0) }
        }
        guard !sources.isEmpty else { return }
        state.withLock { state in
            guard state.stream === stream, !state.muted else { return }
            for (player, cue, source) in sources {
                let started = state.sounds.start(
                    source.sound, atNanoseconds: source.startNanoseconds, for: player, cue: cue, on: stream)
                if started { configuration.onSoundScheduled?(source.startNanoseconds, source.offset) }
            }
        }
    }

    /// A cue's sound, rendered: from its anchor when that is still ahead, else from where the player is now
    /// (the stream then skips what the output's queue has passed, so the sound stays in step with the motors).
    private func source(
        for cue: SoundCue, of sound: PlayerSound, on stream: MixingStream, now: Double
    ) -> (sound: PatternSoundSource, startNanoseconds: UInt64, offset: Double)? {
        guard let audio = sound.source.audio, let schedule = sound.source.audioSchedule(cue.controls),
            !schedule.voices.isEmpty
        else { return nil }
        guard audio.sampleRate == stream.sampleRate else {
            // Said once: every pass would otherwise say it again while the player plays.
            if !rateWarned.exchange(true, ordering: .relaxed) {
                logger.warning(
                    "the sound output runs at another rate than patterns are decoded for; their sound is not played",
                    metadata: ["pattern": "\(audio.sampleRate)", "stream": "\(stream.sampleRate)"])
            }
            return nil
        }
        let start = max(cue.anchor.time, now)
        let offset = cue.anchor.offset(at: start)
        let source = PatternSoundSource(
            schedule: schedule, clips: audio.clips, sampleRate: stream.sampleRate, offset: offset,
            rate: cue.anchor.rate, loopLength: cue.anchor.loopLength)
        return (source, MonotonicClock.nanoseconds(start), offset)
    }

    /// Ends every sound at once (the engine stopped or lost its output); the stream stays open.
    func stopAll() {
        state.withLock { state in
            state.sounds.stopAll(on: state.stream)
        }
    }

    /// Ends every sound and closes the stream and its output: nothing plays or wakes until the next sound, or,
    /// `untilStarted` (the engine stopped), until `permitOpening()`.
    func close(untilStarted: Bool = false) {
        let streams = state.withLock { state -> [MixingStream] in
            if untilStarted { state.closedUntilStarted = true }
            defer {
                state.stream = nil
                state.setAside = nil
                state.sounds = CueSounds<MixingStream>()
            }
            return [state.stream, state.setAside].compactMap { $0 }
        }
        for stream in streams { stream.close(closingOutput: true) }
    }

    /// Ends every sound and sets the stream aside (an idle engine lets it go): the next sound takes it up again
    /// while it is, so that a play right after the idle keeps the sound device (an `hw:` device takes one stream
    /// at a time, and a second open is refused busy); `closeSetAside()` closes it otherwise.
    func setStreamAside() {
        let older = state.withLock { state -> MixingStream? in
            state.sounds.stopAll(on: state.stream)
            defer {
                state.setAside = state.stream ?? state.setAside
                state.stream = nil
                state.sounds = CueSounds<MixingStream>()
            }
            return state.stream == nil ? nil : state.setAside
        }
        older?.close(closingOutput: true)
    }

    /// Closes the stream set aside, unless a sound took it up again. The close waits for the stream's thread, which
    /// may be running a reset handler (the sound device came back) that waits for the app.
    func closeSetAside() {
        let stream = state.withLock { state -> MixingStream? in
            defer { state.setAside = nil }
            return state.setAside
        }
        stream?.close(closingOutput: true)
    }

    /// Lets the stream open again after `close(untilStarted: true)`: the engine started.
    func permitOpening() { state.withLock { $0.closedUntilStarted = false } }

    /// The stream, opened on first use: the configured output (or the null output when there is no sound
    /// device), fed by its own thread; a device that goes away later interrupts the engine as an unplugged pad
    /// does, and its return resets it.
    private func openStream() -> MixingStream? {
        let (open, closed) = state.withLock { state -> (MixingStream?, Bool) in
            // The idle engine's stream, not closed yet, plays on for the engine started again.
            if state.stream == nil, !state.closedUntilStarted, let aside = state.setAside {
                state.stream = aside
                state.setAside = nil
            }
            return (state.stream, state.closedUntilStarted)
        }
        if let open { return open }
        guard !closed else { return nil }
        let configuration = self.configuration
        let logger = self.logger
        let reopen: MixingStream.Reopen = { () throws(AudioDeviceError) -> any AudioOutput in
            if let open = configuration.openOutput { return try open(logger) }
            return try ALSAOutput(
                device: configuration.device, sampleRate: configuration.sampleRate,
                bufferSeconds: configuration.bufferSeconds, logger: logger)
        }
        let output: any AudioOutput
        do throws(AudioDeviceError) {
            output = try AudioOutputs.open(
                sampleRate: configuration.sampleRate, bufferSeconds: configuration.bufferSeconds, logger: logger,
                reopen)
        } catch {
            logger.warning(
                "the engine's sound output cannot be opened; patterns play without sound",
                metadata: ["error": "\(error)"])
            return nil
        }
        let stream: MixingStream
        do throws(SystemCallError) {
            stream = try MixingStream(
                output: output, reopen: reopen, logger: logger,
                onInterruption: { [weak self] interrupted in self?.listener.withLock { $0 }?.interrupted(interrupted) },
                onFailure: { [weak self] error in self?.listener.withLock { $0 }?.failed(error) })
        } catch {
            output.close()
            logger.warning(
                "the engine's sound thread cannot start; patterns play without sound",
                metadata: ["error": "\(error)"])
            return nil
        }
        // Kept unless another thread opened one meanwhile (that one is kept), or the engine stopped meanwhile.
        let kept = state.withLock { state -> MixingStream?? in
            if let existing = state.stream { return existing }
            if state.closedUntilStarted { return .some(nil) }
            state.stream = stream
            state.outputName = output.deviceName
            return nil
        }
        if let kept {
            stream.close(closingOutput: true)
            return kept
        }
        logger.info(
            "engine sound output opened", metadata: ["output": "\(output.deviceName)", "latency": "\(output.latency)"])
        return stream
    }
}
