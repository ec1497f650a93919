// AudioManager: the app's sound, beside HapticManager. Background music on two players that cross-fade,
// one-shot effects independent of it, preloading, mute, and interruptions (the sound device going away), all
// on one LinuxAudio MixingStream fed by its own thread. Nothing here throws, and nothing waits for the device's
// writes: a failure is logged and the app goes on without that sound. Two things do run on the calling actor:
// the first call opens the sound device, and an effect not preloaded is decoded when first played (preload
// both, with `preloadAllAssets`, where a frame must not be late).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AudioRendering
@_spi(Internals) import LinuxSystem
public import LinuxAudio
public import Logging
public import Observation

/// The app's sound: music that cross-fades from one track to the next, sound effects, preloading and mute.
/// One instance for the whole app (`shared`), observed from the UI: `isPlaying`, `isMuted`, `isInterrupted`.
///
/// It plays on the default sound device ("default": the sound server, mixed with other programs, never taken
/// exclusively), or on the null output when there is none. When the device goes away (a USB headset
/// unplugged, a driver unbound) the manager is interrupted: music and effects pause where they are, and play
/// on when the same device is back, rather than on another one. Effects asked for while it is away are not
/// played.
@Observable
@MainActor
public final class AudioManager {
    /// The instance an app uses; its sounds come from the default `Haptics/` folder.
    public static let shared = AudioManager()

    /// Seconds a new track takes to replace the playing one: the old falls along cos, the new rises along sin,
    /// overlapping, so the music keeps its power with no gap (`EqualPower.crossFade`).
    nonisolated public static let crossFadeSeconds = 0.5
    /// How quickly mute and unmute take effect, in seconds: short, but a glide, so that nothing clicks.
    nonisolated public static let muteSeconds = 0.02
    /// The file types looked for, in order, when a sound is named without one.
    nonisolated public static let soundExtensions = ["wav", "flac", "ogg", "opus", "mp3", "aiff"]

    /// Whether music plays (a track started and neither stopped nor, when it does not loop, ended).
    public private(set) var isPlaying = false
    /// Whether sound is muted: music plays on silently, effects are not started.
    public private(set) var isMuted = false
    /// Whether the sound device went away: everything is paused until it is back.
    public private(set) var isInterrupted = false
    /// The name of the music track playing (what `playMusic` was given), nil when none.
    public private(set) var currentTrack: String?

    @ObservationIgnored private let resolver: any HapticResourceResolving
    @ObservationIgnored private let openOutput: @Sendable () throws(AudioDeviceError) -> any AudioOutput
    @ObservationIgnored private let logger: Logger
    @ObservationIgnored private var stream: MixingStream?
    /// Whether opening the output failed and was said: its warning is logged once (every call that wants sound
    /// tries again).
    @ObservationIgnored private var openFailureLogged = false
    /// When (`CLOCK_MONOTONIC` nanoseconds) the next call may try to open the output again after a failure: not
    /// on every call, each of which would wait for the attempt.
    @ObservationIgnored private var nextOpenAttempt: UInt64 = 0
    /// How long after a failed open the next one is tried.
    nonisolated static let reopenDelayNanoseconds: UInt64 = 1_000_000_000
    /// Decoded effects by the id they were asked for with, the order they were cached in, and their samples in
    /// all (`effect(_:on:)`).
    @ObservationIgnored private var effects: [String: AudioClip] = [:]
    @ObservationIgnored private var effectOrder: [String] = []
    @ObservationIgnored private var effectSamples = 0
    /// The effects played and not yet over (by when they end, on `now`'s clock), first started first.
    @ObservationIgnored private var playingEffects: [(sound: MixingStream.SoundID, ends: UInt64)] = []
    /// When the sound device went away, while it is away (on `now`'s clock).
    @ObservationIgnored private var interruptedAt: UInt64?
    /// The most effects sounding at once: a new one past them lets the one started first fade out.
    nonisolated public static let maximumEffects = 32
    /// The most samples the effect cache keeps: 64 MB of `Float`s, a little under three minutes of 48 kHz
    /// stereo. A larger effect plays without being cached.
    nonisolated public static let effectCacheSampleLimit = 16 * 1024 * 1024
    /// This manager's limit: `effectCacheSampleLimit`, smaller in tests.
    @ObservationIgnored private let effectCacheSamples: Int
    @ObservationIgnored private let now: @Sendable () -> UInt64
    /// The music player fading in or playing, and the one fading out (the two players).
    @ObservationIgnored private var incoming: MixingStream.SoundID?
    @ObservationIgnored private var outgoing: MixingStream.SoundID?
    /// Watches a track that does not loop, to say when it ended.
    @ObservationIgnored private var endWatch: Task<Void, Never>?

    /// A manager reading its sounds through `resolver`, on the default sound device.
    public convenience init(resolver: any HapticResourceResolving = DefaultHapticResourceResolver()) {
        let logger = Logger(label: "haptics.audio")
        self.init(
            resolver: resolver,
            openOutput: { () throws(AudioDeviceError) -> any AudioOutput in
                try ALSAOutput(
                    device: "default", sampleRate: AudioOutputs.defaultSampleRate, bufferSeconds: 0.04, logger: logger)
            }, logger: logger)
    }

    /// A manager on the output `openOutput` opens (again after the device went away, until it succeeds). When
    /// it cannot be opened at all the first time, sound goes to the null output, keeping the same time.
    public convenience init(
        resolver: any HapticResourceResolving,
        openOutput: @escaping @Sendable () throws(AudioDeviceError) -> any AudioOutput, logger: Logger
    ) {
        self.init(
            resolver: resolver, openOutput: openOutput, logger: logger, effectCacheSamples: Self.effectCacheSampleLimit)
    }

    /// `now`: the clock a device that would not open is tried again a second later by, and the effects' ends are
    /// kept on (`CLOCK_MONOTONIC`'s).
    init(
        resolver: any HapticResourceResolving,
        openOutput: @escaping @Sendable () throws(AudioDeviceError) -> any AudioOutput, logger: Logger,
        effectCacheSamples: Int, now: @escaping @Sendable () -> UInt64 = { MonotonicTime.nanoseconds() }
    ) {
        self.resolver = resolver
        self.openOutput = openOutput
        self.logger = logger
        self.effectCacheSamples = effectCacheSamples
        self.now = now
    }

    isolated deinit {
        endWatch?.cancel()
        stream?.close(closingOutput: true)
    }

    // MARK: Public calls: none throws, none blocks on the device

    /// Decodes the sounds named `ids` (names in the `Haptics/` folder, or paths) ahead, so that their first
    /// `playEffect` has no load delay. A sound that cannot be found or read is logged and skipped.
    public func preloadAllAssets(_ ids: [String]) {
        guard let stream = openStream() else { return }
        for id in ids { _ = effect(id, on: stream) }
    }

    /// Plays the effect `id` once, now, over whatever else plays (music included). Muted, or while the sound
    /// device is away (`isInterrupted`), it is not played: an effect belongs to its moment, and those asked for
    /// meanwhile would otherwise all sound at once when the device is back.
    public func playEffect(_ id: String) {
        guard !isMuted, let stream = openStream(), !stream.isInterrupted else { return }
        guard let clip = effect(id, on: stream, played: true) else { return }
        started(stream.play(ClipSource(clip)), clip, at: nil, on: stream)
    }

    /// Plays the effect `id` so that its first frame is heard at `nanoseconds` on `CLOCK_MONOTONIC` (the
    /// engine's clock), for a sound that must start with something else; false when it cannot be played (muted,
    /// the device away, the sound not found).
    @discardableResult
    public func playEffect(_ id: String, atNanoseconds nanoseconds: UInt64) -> Bool {
        guard !isMuted, let stream = openStream(), !stream.isInterrupted else { return false }
        guard let clip = effect(id, on: stream, played: true) else { return false }
        started(stream.play(ClipSource(clip), at: nanoseconds), clip, at: nanoseconds, on: stream)
        return true
    }

    /// Notes an effect just played, and keeps at most `maximumEffects` sounding: past them the one started
    /// first fades out over a few milliseconds (no click), so that a burst of calls (a game firing an effect
    /// every frame) cannot pile up mixing work and loudness without end.
    private func started(_ sound: MixingStream.SoundID, _ clip: AudioClip, at start: UInt64?, on stream: MixingStream) {
        let now = self.now()
        let begins = max(start ?? now, now) + stream.leadNanoseconds
        let length = UInt64(Double(clip.frameCount) / clip.sampleRate * 1e9)
        playingEffects.removeAll { $0.ends <= now }
        playingEffects.append((sound, begins + length))
        while playingEffects.count > Self.maximumEffects {
            stream.fade(playingEffects.removeFirst().sound, to: 0, over: Self.muteSeconds, thenStop: true)
        }
    }

    /// How far ahead of now a sound must be placed to be heard from its first frame, in nanoseconds; nil when
    /// there is no output.
    public var leadNanoseconds: UInt64? { openStream()?.leadNanoseconds }

    /// Plays the music track `id` (a name in the `Haptics/` folder, or a path), streamed from its file, looping
    /// unless told otherwise. A track already playing cross-fades into it over `crossFadeSeconds`; a cross-fade
    /// in progress is cut short: the track fading out stops, the one fading in fades out from where it is.
    public func playMusic(_ id: String, loops: Bool = true) {
        guard let stream = openStream() else { return }
        guard let path = resolve(id) else {
            logger.warning("music not found; nothing changes", metadata: ["track": "\(id)"])
            return
        }
        let source: FileSource
        do {
            source = try FileSource(path: path, sampleRate: stream.sampleRate, loops: loops)
        } catch {
            logger.warning("music cannot be read; nothing changes", metadata: ["track": "\(id)", "error": "\(error)"])
            return
        }
        // One change of the stream: the old track's fade-out and the new one's fade-in begin on the same frame.
        let sound = stream.together { changes in
            if let outgoing { changes.fade(outgoing, to: 0, over: Self.muteSeconds, thenStop: true) }
            if let incoming { changes.fade(incoming, to: 0, over: Self.crossFadeSeconds, thenStop: true) }
            let sound = changes.play(source, gain: 0)
            if !isMuted {
                changes.fade(sound, to: 1, over: incoming == nil ? Self.muteSeconds : Self.crossFadeSeconds)
            }
            return sound
        }
        outgoing = incoming
        incoming = sound
        currentTrack = id
        isPlaying = true
        watchEnd(of: sound, loops: loops)
    }

    /// Stops the music, fading it out over `fadeOut` seconds (0: at once).
    public func stopMusic(fadeOut: Double = crossFadeSeconds) {
        endWatch?.cancel()
        stream?.together { changes in
            for id in [incoming, outgoing].compactMap({ $0 }) {
                if fadeOut > 0 { changes.fade(id, to: 0, over: fadeOut, thenStop: true) } else { changes.stop(id) }
            }
        }
        incoming = nil
        outgoing = nil
        currentTrack = nil
        isPlaying = false
    }

    /// Silences music and effects; the music plays on, silently, and is heard again on `unmute()`.
    public func mute() {
        guard !isMuted else { return }
        isMuted = true
        guard let stream else { return }
        stream.together { changes in
            if let incoming { changes.fade(incoming, to: 0, over: Self.muteSeconds) }
            // A track fading out has nothing left to give: it ends now rather than play on silently.
            if let outgoing { changes.fade(outgoing, to: 0, over: Self.muteSeconds, thenStop: true) }
        }
        outgoing = nil
    }

    /// Undoes `mute()`: the music comes back at its level.
    public func unmute() {
        guard isMuted else { return }
        isMuted = false
        guard let stream, let incoming else { return }
        stream.fade(incoming, to: 1, over: Self.muteSeconds)
    }

    // MARK: The stream

    /// The stream, opened on first use; nil (logged) when neither the device nor a null output can be had.
    private func openStream() -> MixingStream? {
        if let stream { return stream }
        guard now() >= nextOpenAttempt else { return nil }
        let logger = self.logger
        let open = openOutput
        let output: any AudioOutput
        do {
            output = try AudioOutputs.open(logger: logger, open)
        } catch {
            if !openFailureLogged {
                logger.warning("the sound device cannot be opened; no sound", metadata: ["error": "\(error)"])
            }
            openFailureLogged = true
            nextOpenAttempt = now() + Self.reopenDelayNanoseconds
            return nil
        }
        do {
            let opened = try MixingStream(
                output: output, reopen: open, logger: logger,
                onInterruption: { [weak self] interrupted in
                    Task { @MainActor in self?.interruptionChanged(interrupted) }
                },
                onFailure: { [weak self] error in
                    Task { @MainActor in self?.streamFailed(error) }
                })
            stream = opened
            openFailureLogged = false
            logger.info("sound output opened", metadata: ["output": "\(output.deviceName)"])
            return opened
        } catch {
            output.close()
            logger.warning("the sound thread cannot start; no sound", metadata: ["error": "\(error)"])
            nextOpenAttempt = now() + Self.reopenDelayNanoseconds
            return nil
        }
    }

    private func interruptionChanged(_ interrupted: Bool) {
        isInterrupted = interrupted
        logger.notice(interrupted ? "sound interrupted: device gone" : "sound resumed: device back")
        let now = self.now()
        if interrupted {
            interruptedAt = now
        } else if let since = interruptedAt {
            // The effects not over when the device went away paused where they were (one placed at an instant
            // still ahead keeps it, and is counted a little longer than it sounds): the cap counts them on.
            let paused = now > since ? now - since : 0
            for index in playingEffects.indices where playingEffects[index].ends > since {
                playingEffects[index].ends += paused
            }
            interruptedAt = nil
        }
    }

    /// The stream ended on an error other than its device going away: forget it; the next call opens anew.
    private func streamFailed(_ error: AudioDeviceError) {
        logger.warning("sound stopped by its output", metadata: ["error": "\(error)"])
        stream?.close(closingOutput: true)
        stream = nil
        incoming = nil
        outgoing = nil
        playingEffects = []
        interruptedAt = nil
        currentTrack = nil
        isPlaying = false
        isInterrupted = false
    }

    /// For a track that does not loop: `isPlaying` turns false when it has played out.
    private func watchEnd(of id: MixingStream.SoundID, loops: Bool) {
        endWatch?.cancel()
        guard !loops, let stream else { return }
        endWatch = Task { [weak self] in
            while !Task.isCancelled, stream.isActive(id) {
                try? await Task.sleep(for: .milliseconds(100))
            }
            guard !Task.isCancelled, let self, self.incoming == id else { return }
            self.incoming = nil
            self.currentTrack = nil
            self.isPlaying = self.outgoing.map { stream.isActive($0) } ?? false
        }
    }

    // MARK: Files

    /// The file a sound id names: a path as it is when it exists, else a name in the resource folder with or
    /// without its extension.
    private func resolve(_ id: String) -> String? {
        if id.contains("/"), FileManager.default.fileExists(atPath: id) { return id }
        let url = URL(fileURLWithPath: id)
        let fileExtension = url.pathExtension
        if !fileExtension.isEmpty,
            let found = resolver.url(
                forResource: url.deletingPathExtension().lastPathComponent, withExtension: fileExtension)
        {
            return found.path
        }
        for candidate in Self.soundExtensions {
            if let found = resolver.url(forResource: id, withExtension: candidate) { return found.path }
        }
        return nil
    }

    /// The effect `id` decoded at `stream`'s rate: from the cache, or decoded now and cached. A clip cached for
    /// another stream's rate (the device reopened as another, or the null output) is decoded again, rather than
    /// played too fast or too slow. The cache keeps at most `effectCacheSamples` samples: a new effect past
    /// them lets the ones cached first go.
    private func effect(_ id: String, on stream: MixingStream, played: Bool = false) -> AudioClip? {
        if let clip = effects[id], clip.sampleRate == Double(stream.sampleRate) { return clip }
        if played { logger.debug("effect played before it was preloaded", metadata: ["effect": "\(id)"]) }
        forgetEffect(id)
        guard let clip = decode(id, sampleRate: stream.sampleRate) else { return nil }
        guard clip.samples.count <= effectCacheSamples else { return clip }
        while effectSamples + clip.samples.count > effectCacheSamples, let oldest = effectOrder.first {
            forgetEffect(oldest)
        }
        effects[id] = clip
        effectOrder.append(id)
        effectSamples += clip.samples.count
        return clip
    }

    private func forgetEffect(_ id: String) {
        guard let clip = effects.removeValue(forKey: id) else { return }
        effectOrder.removeAll { $0 == id }
        effectSamples -= clip.samples.count
    }

    private func decode(_ id: String, sampleRate: Int) -> AudioClip? {
        guard let path = resolve(id) else {
            logger.warning("sound not found; skipped", metadata: ["sound": "\(id)"])
            return nil
        }
        do {
            return try AudioFile.load(path, sampleRate: sampleRate)
        } catch {
            logger.warning("sound cannot be read; skipped", metadata: ["sound": "\(id)", "error": "\(error)"])
            return nil
        }
    }
}
