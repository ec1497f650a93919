// AudioManager: the app's sound, beside HapticManager. Background music on two players that cross-fade,
// one-shot effects independent of it, preloading, mute, and interruptions (the sound device going away), all
// on one LinuxAudio MixingStream fed by its own thread. Nothing here throws, and nothing waits for the device:
// the sound device is opened on a thread of its own (a sound server slow to answer holds up no frame of the
// app), the calls made meanwhile wait for it in order, and a failure is logged and the app goes on without that
// sound. Effects are decoded on threads of their own too, the first play of one not preloaded waiting for it
// (preload them, with `preloadAllAssets`, where the first play must not be late).
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
    /// Whether the output is being opened, on a thread of its own.
    @ObservationIgnored private var isOpening = false
    /// Where that thread leaves what it opened, for the manager to take on its actor.
    @ObservationIgnored let openedSlot = Handover<OutputOpening.Result>()
    /// The effects being decoded on a thread of their own, with the plays that wait for each (`now`: a play asked
    /// for now, not for a time of its own).
    @ObservationIgnored private var decoding:
        [String: [(now: Bool, play: @MainActor (AudioManager, AudioClip) -> Void)]] = [:]
    /// Where those threads leave what they decoded, for the manager to take on its actor.
    @ObservationIgnored private let decodedSlot = Handover<DecodedEffect>()
    /// Decodes a file at a rate: `AudioFile.load`, or a test's.
    @ObservationIgnored private let decodeFile: @Sendable (String, Int) throws(AudioFileError) -> AudioClip
    /// What the calls made while the output opens asked for, in call order, with the effect each plays now (nil
    /// for the others): done once it is open, dropped if it cannot be opened.
    @ObservationIgnored private var waiting:
        [(effect: String?, body: @MainActor (AudioManager, MixingStream) -> Void)] =
            []
    /// Whether opening the output failed and was said: its warning is logged once (every call that wants sound
    /// tries again).
    @ObservationIgnored private var openFailureLogged = false
    /// When (`CLOCK_MONOTONIC` nanoseconds) the next call may try to open the output again after a failure: not
    /// on every call, each of which would wait for the attempt.
    @ObservationIgnored private var nextOpenAttempt: UInt64 = 0
    /// How long after a failed open the next one is tried.
    nonisolated static let reopenDelayNanoseconds: UInt64 = 1_000_000_000
    /// Decoded effects by the id they were asked for with, the order they were cached in, and their samples in
    /// all (`cache(_:as:)`).
    @ObservationIgnored private var effects: [String: AudioClip] = [:]
    @ObservationIgnored private var effectOrder: [String] = []
    @ObservationIgnored private var effectSamples = 0
    /// The effects played and not yet over (by when they end, on `now`'s clock), first started first.
    @ObservationIgnored private var playingEffects: [(sound: MixingStream.SoundID, ends: UInt64)] = []
    /// When the sound device went away, while it is away (on `now`'s clock).
    @ObservationIgnored private var interruptedAt: UInt64?
    /// The most effects sounding at once: a new one past them lets the one started first fade out.
    nonisolated public static let maximumEffects = 32
    /// How long an effect asked for while the output opens may wait for it, in nanoseconds: one that waited
    /// longer is not played, its moment gone.
    nonisolated static let longestEffectWaitNanoseconds: UInt64 = 1_000_000_000
    /// The most samples the effect cache keeps: 64 MB of `Float`s, a little under three minutes of 48 kHz
    /// stereo. A larger effect plays without being cached.
    nonisolated public static let effectCacheSampleLimit = 16 * 1024 * 1024
    /// This manager's limit: `effectCacheSampleLimit`, smaller in tests.
    @ObservationIgnored private let effectCacheSamples: Int
    @ObservationIgnored private let now: @Sendable () -> UInt64
    /// The music player fading in or playing, and the one fading out (the two players).
    @ObservationIgnored private var incoming: MixingStream.SoundID?
    @ObservationIgnored private var outgoing: MixingStream.SoundID?
    /// Tracks `stopMusic` left fading out, each with the time its fade ends (`now`'s clock): a later stop, a
    /// shorter fade or none, reaches them too.
    @ObservationIgnored private var fadingOut: [(sound: MixingStream.SoundID, ends: UInt64)] = []
    /// Effects too large for the cache, each kept while a play of it sounds (until `ends`, on `now`'s clock): a
    /// play meanwhile takes it rather than decoding a copy of its own (32 plays of a long effect held 32 copies,
    /// until 6 December).
    @ObservationIgnored private var sounding: [String: (clip: AudioClip, ends: UInt64)] = [:]
    /// The longest fade `stopMusic` takes, in seconds: a longer one (an infinite one too) takes this long.
    nonisolated public static let longestFadeOutSeconds = 60.0

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
        effectCacheSamples: Int, now: @escaping @Sendable () -> UInt64 = { MonotonicTime.nanoseconds() },
        decodeFile: @escaping @Sendable (String, Int) throws(AudioFileError) -> AudioClip = {
            (path: String, rate: Int) throws(AudioFileError) -> AudioClip in
            try AudioFile.load(path, sampleRate: rate)
        }
    ) {
        self.resolver = resolver
        self.openOutput = openOutput
        self.logger = logger
        self.effectCacheSamples = effectCacheSamples
        self.now = now
        self.decodeFile = decodeFile
    }

    isolated deinit {
        stream?.close(closingOutput: true)
    }

    /// Returns once no open of the output and no decode of an effect is under way, and what waited for them is
    /// done.
    func settled() async {
        takeFinishedWork()
        while isOpening || !decoding.isEmpty {
            try? await Task.sleep(for: .milliseconds(1))
            takeFinishedWork()
        }
    }

    // MARK: Public calls: none throws, none blocks on the device

    /// Decodes the sounds named `ids` (names in the `Haptics/` folder, or paths) ahead, at the output's rate, on
    /// a thread of its own, so that their first `playEffect` has no load delay: from now when the output is open,
    /// else once it is. A sound that cannot be found or read is logged and skipped.
    public func preloadAllAssets(_ ids: [String]) {
        takeFinishedWork()
        withStream { manager, stream in manager.decode(ids, for: stream) }
    }

    /// Plays the effect `id` once, now, over whatever else plays (music included); while the output opens, or the
    /// effect is decoded (not preloaded), once it is: one play of each effect asked for meanwhile, the last, and
    /// none that waited over a second (a game firing an effect every frame while a slow sound server answers, or a
    /// large file decodes, would otherwise hear them all at once; until 6 December it did, for a decode).
    /// Muted, or while the sound device is away (`isInterrupted`), it is not played: an effect belongs to its
    /// moment, and those asked for meanwhile would otherwise all sound at once when the device is back.
    public func playEffect(_ id: String) {
        takeFinishedWork()
        guard !isMuted else { return }
        let asked = now()
        withStream(effect: id) { manager, stream in
            guard !manager.isMuted, !stream.isInterrupted, manager.isOfItsMoment(asked, id) else { return }
            manager.withEffect(id, for: stream, now: true) { manager, clip in
                guard !manager.isMuted, !stream.isInterrupted, manager.isOfItsMoment(asked, id) else { return }
                manager.started(stream.play(ClipSource(clip)), id, clip, at: nil, on: stream)
            }
        }
    }

    /// Plays the effect `id` so that its first frame is heard at `nanoseconds` on `CLOCK_MONOTONIC` (the
    /// engine's clock), for a sound that must start with something else; false when it cannot be played (muted,
    /// the device away, the sound not found). While the output opens, or the sound is decoded, it is played once
    /// they are (as soon as it can be, when that is later), and true says only that the sound exists.
    @discardableResult
    public func playEffect(_ id: String, atNanoseconds nanoseconds: UInt64) -> Bool {
        takeFinishedWork()
        guard !isMuted, stream?.isInterrupted != true else { return false }
        // Looked for once: a decode it needs reads the file found here.
        let path = effects[id] != nil || decoding[id] != nil ? nil : resolve(id)
        guard effects[id] != nil || decoding[id] != nil || path != nil else {
            logger.warning("sound not found; skipped", metadata: ["sound": "\(id)"])
            return false
        }
        let moment = max(now(), nanoseconds)
        return withStream { manager, stream in
            guard !manager.isMuted, !stream.isInterrupted, manager.isOfItsMoment(moment, id) else { return }
            manager.withEffect(id, for: stream, foundAt: path) { manager, clip in
                guard !manager.isMuted, !stream.isInterrupted else { return }
                manager.started(
                    stream.play(ClipSource(clip), at: nanoseconds), id, clip, at: nanoseconds, on: stream)
            }
        }
    }

    /// Whether an effect that waited for the output is still of its moment (on `now`'s clock: when it was asked
    /// for, or the later time it was asked for at): at most `longestEffectWaitNanoseconds` have passed since.
    /// A scheduled effect is played even when more of it waited: each was asked for a time of its own.
    private func isOfItsMoment(_ moment: UInt64, _ id: String) -> Bool {
        let now = self.now()
        let late = now > moment ? now - moment : 0
        guard late > Self.longestEffectWaitNanoseconds else { return true }
        logger.debug(
            "effect not played: the sound output took too long to open",
            metadata: ["effect": "\(id)", "lateMs": "\(late / 1_000_000)"])
        return false
    }

    /// Notes an effect just played, and keeps at most `maximumEffects` sounding: past them the one started
    /// first fades out over a few milliseconds (no click), so that a burst of calls (a game firing an effect
    /// every frame) cannot pile up mixing work and loudness without end.
    private func started(
        _ sound: MixingStream.SoundID, _ id: String, _ clip: AudioClip, at start: UInt64?, on stream: MixingStream
    ) {
        let now = self.now()
        // Held at the last time 64 bits hold: an effect asked for centuries ahead (`UInt64.max`) ends then.
        let begins = MonotonicTime.later(max(start ?? now, now), by: stream.leadNanoseconds)
        // A clip at a rate so low that its length passes what 64 bits of nanoseconds hold (or is infinite) ends at
        // the last time they hold too: the conversion traps on such a value.
        let length = MonotonicTime.nanoseconds(seconds: clip.duration)
        playingEffects.removeAll { $0.ends <= now }
        let ends = MonotonicTime.later(begins, by: length)
        playingEffects.append((sound, ends))
        if !sounding.isEmpty { sounding = sounding.filter { $0.value.ends > now } }
        if effects[id] == nil { sounding[id] = (clip, max(sounding[id]?.ends ?? 0, ends)) }
        while playingEffects.count > Self.maximumEffects {
            stream.fade(playingEffects.removeFirst().sound, to: 0, over: Self.muteSeconds, thenStop: true)
        }
    }

    /// How far ahead of now a sound must be placed to be heard from its first frame, in nanoseconds; nil when
    /// there is no output, or while it opens (asking opens it).
    public var leadNanoseconds: UInt64? {
        takeFinishedWork()
        if let stream { return stream.leadNanoseconds }
        _ = beginOpening()
        return nil
    }

    /// Plays the music track `id` (a name in the `Haptics/` folder, or a path), streamed from its file, looping
    /// unless told otherwise. A track already playing cross-fades into it over `crossFadeSeconds`; a cross-fade
    /// in progress is cut short: the track fading out stops, the one fading in fades out from where it is. While
    /// the output opens, the track starts once it is (`isPlaying` and `currentTrack` say so then).
    public func playMusic(_ id: String, loops: Bool = true) {
        takeFinishedWork()
        guard let path = resolve(id) else {
            logger.warning("music not found; nothing changes", metadata: ["track": "\(id)"])
            return
        }
        withStream { manager, stream in manager.playMusic(id, from: path, loops: loops, on: stream) }
    }

    private func playMusic(_ id: String, from path: String, loops: Bool, on stream: MixingStream) {
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

    /// Stops the music, fading it out over `fadeOut` seconds (0, a negative time or NaN: at once; at most
    /// `longestFadeOutSeconds`); while the output opens, a track asked for meanwhile does not start. A track still
    /// fading out from an earlier stop fades from where it is over this one's time, or stops at once with it.
    /// (Until 6 December a later stop did not reach it, and an infinite fade played on for ever.)
    public func stopMusic(fadeOut: Double = crossFadeSeconds) {
        takeFinishedWork()
        if stream == nil, isOpening {
            withStream { manager, _ in manager.stopMusic(fadeOut: fadeOut) }
            return
        }
        let fade = fadeOut > 0 ? min(fadeOut, Self.longestFadeOutSeconds) : 0
        let now = self.now()
        fadingOut.removeAll { $0.ends <= now }
        let tracks = [incoming, outgoing].compactMap { $0 } + fadingOut.map(\.sound)
        stream?.together { changes in
            for id in tracks {
                if fade > 0 { changes.fade(id, to: 0, over: fade, thenStop: true) } else { changes.stop(id) }
            }
        }
        let ends = MonotonicTime.later(
            MonotonicTime.later(now, by: stream?.leadNanoseconds ?? 0), by: MonotonicTime.nanoseconds(seconds: fade))
        fadingOut = fade > 0 && stream != nil ? tracks.map { ($0, ends) } : []
        incoming = nil
        outgoing = nil
        currentTrack = nil
        isPlaying = false
    }

    /// Silences music and effects: the music plays on, silently, and is heard again on `unmute()`; effects that
    /// sound end (until 7 December they played on to their end) and none starts until then.
    public func mute() {
        takeFinishedWork()
        guard !isMuted else { return }
        isMuted = true
        guard let stream else { return }
        let effects = playingEffects
        stream.together { changes in
            if let incoming { changes.fade(incoming, to: 0, over: Self.muteSeconds) }
            // A track fading out has nothing left to give: it ends now rather than play on silently.
            if let outgoing { changes.fade(outgoing, to: 0, over: Self.muteSeconds, thenStop: true) }
            for effect in effects { changes.fade(effect.sound, to: 0, over: Self.muteSeconds, thenStop: true) }
        }
        outgoing = nil
        playingEffects = []
    }

    /// Undoes `mute()`: the music comes back at its level.
    public func unmute() {
        takeFinishedWork()
        guard isMuted else { return }
        isMuted = false
        guard let stream, let incoming else { return }
        stream.fade(incoming, to: 1, over: Self.muteSeconds)
    }

    // MARK: The stream

    /// Runs `body` on the stream: now when it is open; else once the open begun for it is done, after what was
    /// asked for before (not at all when it cannot be opened, or may not be tried again yet), unless it plays
    /// `effect` and a later call that waited plays it too. True when `body` ran or waits.
    @discardableResult
    private func withStream(
        effect: String? = nil, _ body: @escaping @MainActor (AudioManager, MixingStream) -> Void
    ) -> Bool {
        if let stream {
            body(self, stream)
            return true
        }
        guard beginOpening() else { return false }
        waiting.append((effect, body))
        return true
    }

    /// Begins opening the output on a thread of its own, unless it is under way; false when it may not be tried
    /// yet (a second after it last failed). What the thread opens is taken on this actor, by the next call or,
    /// when the main actor runs meanwhile, as soon as it is open: a program whose main thread never lets the main
    /// actor run gets its sound on its next call.
    private func beginOpening() -> Bool {
        if isOpening { return true }
        guard now() >= nextOpenAttempt else { return false }
        let opening = OutputOpening(
            openOutput: openOutput, logger: logger,
            onInterruption: { [weak self] interrupted in
                Task { @MainActor in self?.interruptionChanged(interrupted) }
            },
            onFailure: { [weak self] error in
                Task { @MainActor in self?.streamFailed(error) }
            })
        let slot = openedSlot
        let taken: @Sendable () -> Void = { [weak self] in
            Task { @MainActor in self?.takeFinishedWork() }
        }
        do throws(SystemCallError) {
            try Sys.startThread {
                slot.put(opening.openNow())
                taken()
            }
        } catch {
            logger.warning("the sound thread cannot start; no sound", metadata: ["error": "\(error)"])
            nextOpenAttempt = now() + Self.reopenDelayNanoseconds
            return false
        }
        isOpening = true
        return true
    }

    /// Takes what the threads left: the output opened, if it is, then the effects decoded.
    private func takeFinishedWork() {
        if isOpening, let result = openedSlot.take().first { opened(result) }
        guard !decoding.isEmpty else { return }
        for decoded in decodedSlot.take() { took(decoded) }
    }

    /// The open is done: what waited for it runs on the stream, or is dropped (logged) when there is none.
    private func opened(_ result: OutputOpening.Result) {
        isOpening = false
        let waited = waiting
        waiting = []
        switch result {
        case .opened(let opened, let deviceName):
            stream = opened
            openFailureLogged = false
            logger.info("sound output opened", metadata: ["output": "\(deviceName)"])
            var last: [String: Int] = [:]
            for (index, call) in waited.enumerated() { if let effect = call.effect { last[effect] = index } }
            for (index, call) in waited.enumerated() where call.effect.map({ last[$0] == index }) ?? true {
                call.body(self, opened)
            }
        case .deviceFailed(let error):
            if !openFailureLogged {
                logger.warning("the sound device cannot be opened; no sound", metadata: ["error": "\(error)"])
            }
            openFailureLogged = true
            nextOpenAttempt = now() + Self.reopenDelayNanoseconds
        case .threadFailed(let error):
            logger.warning("the sound thread cannot start; no sound", metadata: ["error": "\(error)"])
            nextOpenAttempt = now() + Self.reopenDelayNanoseconds
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
                playingEffects[index].ends = MonotonicTime.later(playingEffects[index].ends, by: paused)
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

    /// For a track that does not loop: `isPlaying` turns false when it has played out, as the stream says when it
    /// ends (nothing polls).
    private func watchEnd(of id: MixingStream.SoundID, loops: Bool) {
        guard !loops, let stream else { return }
        watch(id, on: stream)
    }

    private func watch(_ id: MixingStream.SoundID, on stream: MixingStream) {
        stream.whenEnded(id) { [weak self] in
            Task { @MainActor in self?.trackEnded(id, on: stream) }
        }
    }

    /// A track ended on its own: the one playing (which did not loop) or, after it, the one still fading out.
    /// Music plays while either does.
    private func trackEnded(_ id: MixingStream.SoundID, on stream: MixingStream) {
        guard stream === self.stream else { return }
        if incoming == id {
            incoming = nil
            currentTrack = nil
            // The track fading out, if any, says when it has too.
            if let outgoing { watch(outgoing, on: stream) }
        } else if outgoing == id, incoming == nil {
            outgoing = nil
        } else {
            return
        }
        isPlaying = [incoming, outgoing].contains { $0.map(stream.isActive) ?? false }
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

    /// Runs `body` with the effect `id` at `stream`'s rate: now from the cache, else once a thread of its own has
    /// decoded it (then cached). A clip cached for another stream's rate (the device reopened as another, or the
    /// null output) is decoded again, rather than played too fast or too slow. Not found, it is logged and
    /// nothing runs; not readable, the same once the thread says so. `path`: its file, when the caller found it.
    private func withEffect(
        _ id: String, for stream: MixingStream, foundAt path: String? = nil, now: Bool = false,
        _ body: @escaping @MainActor (AudioManager, AudioClip) -> Void
    ) {
        if let clip = effects[id] ?? sounding[id].flatMap({ $0.ends > self.now() ? $0.clip : nil }),
            clip.sampleRate == Double(stream.sampleRate)
        {
            return body(self, clip)
        }
        logger.debug("effect played before it was preloaded", metadata: ["effect": "\(id)"])
        if decoding[id] == nil { decode([id], for: stream, found: path.map { [id: $0] } ?? [:]) }
        // Of the plays asked for now while it decodes, the last alone waits; each scheduled one keeps its time.
        if now { decoding[id]?.removeAll(where: \.now) }
        decoding[id]?.append((now, body))
    }

    /// Decodes the effects `ids` at `stream`'s rate on one thread of their own, one after the other, but those
    /// cached at that rate and those under way; each is cached as it is taken. One not found is logged. `found`:
    /// files already looked for, by id.
    private func decode(_ ids: [String], for stream: MixingStream, found: [String: String] = [:]) {
        let rate = stream.sampleRate
        var files: [(id: String, path: String)] = []
        for id in ids where decoding[id] == nil && effects[id]?.sampleRate != Double(rate) {
            guard let path = found[id] ?? resolve(id) else {
                logger.warning("sound not found; skipped", metadata: ["sound": "\(id)"])
                continue
            }
            files.append((id, path))
            decoding[id] = []
        }
        guard !files.isEmpty else { return }
        let (slot, decodeFile, requested) = (decodedSlot, self.decodeFile, files)
        let taken: @Sendable () -> Void = { [weak self] in
            Task { @MainActor in self?.takeFinishedWork() }
        }
        let work: @Sendable () -> Void = {
            for file in requested {
                do throws(AudioFileError) {
                    slot.put(DecodedEffect(id: file.id, result: .success(try decodeFile(file.path, rate))))
                } catch {
                    slot.put(DecodedEffect(id: file.id, result: .failure(error)))
                }
                taken()
            }
        }
        do throws(SystemCallError) {
            try Sys.startThread(work)
        } catch {
            // No thread to be had: the files are decoded here, on the caller's actor.
            logger.notice("no thread to decode sounds on; decoded on the caller's", metadata: ["error": "\(error)"])
            work()
            takeFinishedWork()
        }
    }

    /// An effect decoded: cached at the stream's rate (within the cache's limit), and played by what waited.
    private func took(_ decoded: DecodedEffect) {
        let waiters = decoding.removeValue(forKey: decoded.id) ?? []
        switch decoded.result {
        case .failure(let error):
            logger.warning(
                "sound cannot be read; skipped", metadata: ["sound": "\(decoded.id)", "error": "\(error)"])
        case .success(let clip):
            if let stream, clip.sampleRate == Double(stream.sampleRate) { cache(clip, as: decoded.id) }
            for waiter in waiters { waiter.play(self, clip) }
        }
    }

    /// Keeps `clip` as the effect `id`: the cache keeps at most `effectCacheSamples` samples, a new effect past
    /// them letting the ones cached first go; a larger one is not kept.
    private func cache(_ clip: AudioClip, as id: String) {
        forgetEffect(id)
        guard clip.samples.count <= effectCacheSamples else { return }
        while effectSamples + clip.samples.count > effectCacheSamples, let oldest = effectOrder.first {
            forgetEffect(oldest)
        }
        effects[id] = clip
        effectOrder.append(id)
        effectSamples += clip.samples.count
    }

    private func forgetEffect(_ id: String) {
        guard let clip = effects.removeValue(forKey: id) else { return }
        effectOrder.removeAll { $0 == id }
        effectSamples -= clip.samples.count
    }
}

/// An effect decoded on a thread of its own, or why it could not be.
private struct DecodedEffect: Sendable {
    let id: String
    let result: Result<AudioClip, AudioFileError>
}

/// Opening the sound output and its stream, on a thread of its own: ALSA's open of "default" talks to the sound
/// server, which may be slow to answer, and the manager's callers are the app's main actor.
struct OutputOpening: Sendable {
    enum Result: Sendable {
        case opened(MixingStream, deviceName: String)
        case deviceFailed(AudioDeviceError)
        case threadFailed(SystemCallError)
    }

    let openOutput: @Sendable () throws(AudioDeviceError) -> any AudioOutput
    let logger: Logger
    let onInterruption: @Sendable (Bool) -> Void
    let onFailure: @Sendable (AudioDeviceError) -> Void

    /// The output (the null output when there is no sound device), and the stream on it.
    func openNow() -> Result {
        let output: any AudioOutput
        do throws(AudioDeviceError) {
            output = try AudioOutputs.open(logger: logger, openOutput)
        } catch {
            return .deviceFailed(error)
        }
        do throws(SystemCallError) {
            let stream = try MixingStream(
                output: output, reopen: openOutput, logger: logger, onInterruption: onInterruption,
                onFailure: onFailure)
            return .opened(stream, deviceName: output.deviceName)
        } catch {
            output.close()
            return .threadFailed(error)
        }
    }
}

/// Where the manager's threads leave what they made (the output opened, effects decoded), until the manager takes
/// it on its actor. A manager gone meanwhile leaves it to the thread, which lets it go when it ends: a stream let go
/// closes itself.
final class Handover<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])

    func put(_ value: Value) { values.withLock { $0.append(value) } }

    /// Whether anything was left and not taken yet.
    var holdsAny: Bool { values.withLock { !$0.isEmpty } }

    /// What was left, in the order it was, taken.
    func take() -> [Value] {
        values.withLock { values in
            defer { values = [] }
            return values
        }
    }
}
