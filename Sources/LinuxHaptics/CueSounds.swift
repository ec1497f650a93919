// The sounds a stream plays for the engine's players: one per cue (PlayerState.cues), found again by its anchor.
// The engine's sound (EngineAudio) and the voice coils (VoiceCoilStream) keep their MixingStreams in line with the
// players through it, HD rumble (HDRumbleStream) its stream of bands, and a force device (PeriodicEffectStream) its
// periodic effects.
import LinuxAudio
@_spi(Internals) import LinuxSystem

/// A stream that plays sources from a `CLOCK_MONOTONIC` instant until stopped, now or at an instant.
protocol CueStream: AnyObject {
    associatedtype Source
    associatedtype ID: Hashable
    func play(_ source: Source, atNanoseconds startNanoseconds: UInt64) -> ID
    func stop(_ id: ID)
    func stop(_ id: ID, atNanoseconds nanoseconds: UInt64)
}

extension MixingStream: CueStream {
    func play(_ source: any SoundSource, atNanoseconds startNanoseconds: UInt64) -> SoundID {
        play(source, at: startNanoseconds)
    }
}

/// The sounds playing or waiting on a stream, by player, by cue anchor. Not thread-safe: its owner holds it in a
/// lock.
struct CueSounds<Stream: CueStream> {
    private struct Playing {
        var id: Stream.ID
        var end: Double?
    }

    private var sounds: [PlayerID: [SoundAnchor: Playing]] = [:]
    /// The anchors of the cues each player gave the last `reconcile(players:now:on:)`, muted or not: a cue given
    /// again without a sound (its player was muted, or the engine's haptics) began before, and is not a start.
    private var given: [PlayerID: Set<SoundAnchor>] = [:]
    /// Sounds played on their own, for no player (`startAlone`): only `stopAll` ends them early.
    private var alone: [Stream.ID] = []

    var isEmpty: Bool { sounds.isEmpty && alone.isEmpty }

    /// Makes `stream` play no more than `cues` ask for at engine time `now`: a sound whose cue is gone ends at
    /// `now` (a stream running behind still plays what came before: the end of a pattern whose player finished
    /// at its end, or what preceded a stop), a cue whose end moved has its sound end there. Returns the cues that
    /// have no sound yet, in no particular order.
    mutating func reconcile(_ cues: [PlayerID: [SoundCue]], now: Double, on stream: Stream) -> [(PlayerID, SoundCue)] {
        for (player, playing) in sounds {
            let wanted = cues[player] ?? []
            for (anchor, sound) in playing where !wanted.contains(where: { $0.anchor == anchor }) {
                stream.stop(sound.id, atNanoseconds: MonotonicClock.nanoseconds(now))
                sounds[player]?[anchor] = nil
            }
            if sounds[player]?.isEmpty == true { sounds[player] = nil }
        }
        var missing: [(PlayerID, SoundCue)] = []
        for (player, wanted) in cues {
            for cue in wanted {
                guard var playing = sounds[player]?[cue.anchor] else {
                    missing.append((player, cue))
                    continue
                }
                guard playing.end != cue.end, let end = cue.end else { continue }
                playing.end = end
                stream.stop(playing.id, atNanoseconds: MonotonicClock.nanoseconds(end))
                sounds[player]?[cue.anchor] = playing
            }
        }
        return missing
    }

    /// `reconcile(_:now:on:)` for players whose cues are given even while they are muted: a muted player's cues
    /// play nothing. Each missing cue comes with the cue its sound is to be made from (`heard`), from `start`: its
    /// anchor when that is still ahead, else `now`. That is the cue itself, unless its player gave it before,
    /// while muted: then it is anchored at `start`, where the player is, for a cue anchored at the pattern's
    /// beginning reads as the player's start, which the voice coils play whole from the top (they did so at every
    /// unmute, until 7 December).
    mutating func reconcile(players: [PlayerID: WaveformPlayer], now: Double, on stream: Stream)
        -> [(player: PlayerID, cue: SoundCue, heard: SoundCue, start: Double)]
    {
        let missing = reconcile(players.mapValues { $0.isMuted ? [] : $0.cues }, now: now, on: stream)
        let previous = given
        given = players.mapValues { Set($0.cues.map(\.anchor)) }
        return missing.map { player, cue in
            let start = max(cue.anchor.time, now)
            let resumed = previous[player]?.contains(cue.anchor) == true
            return (player, cue, resumed ? cue.resumed(at: start) : cue, start)
        }
    }

    /// Whether `player`'s cue with `anchor` has a sound.
    func contains(_ player: PlayerID, _ anchor: SoundAnchor) -> Bool { sounds[player]?[anchor] != nil }

    /// Plays `source` for `player`'s `cue` from `startNanoseconds`, ending where the cue ends, unless the cue has
    /// a sound already (made meanwhile by another sync); whether it started one.
    @discardableResult
    mutating func start(
        _ source: Stream.Source, atNanoseconds startNanoseconds: UInt64, for player: PlayerID, cue: SoundCue,
        on stream: Stream
    ) -> Bool {
        guard !contains(player, cue.anchor) else { return false }
        let id = stream.play(source, atNanoseconds: startNanoseconds)
        if let end = cue.end { stream.stop(id, atNanoseconds: MonotonicClock.nanoseconds(end)) }
        sounds[player, default: [:]][cue.anchor] = Playing(id: id, end: cue.end)
        return true
    }

    /// Plays `source` from `startNanoseconds` for no player (a pattern played on its own, as the kernel tests
    /// play one), to its end unless `stopAll` comes first.
    mutating func startAlone(_ source: Stream.Source, atNanoseconds startNanoseconds: UInt64, on stream: Stream) {
        alone.append(stream.play(source, atNanoseconds: startNanoseconds))
    }

    /// Stops every sound on `stream` at once, those played on their own too, and forgets them.
    mutating func stopAll(on stream: Stream?) {
        if let stream {
            for sound in sounds.values.flatMap(\.values) { stream.stop(sound.id) }
            for id in alone { stream.stop(id) }
        }
        sounds = [:]
        alone = []
        given = [:]
    }
}

extension Lock {
    /// Brings `stream` in line with `players`' cues, as every stream that plays the engine's patterns does (the
    /// voice coils', HD rumble's, a force device's periodic effects): a sound whose cue is gone (or muted) ends at
    /// `now`, and a cue without one gets the source `make` gives for it from `start` (its anchor when that is still
    /// ahead, else `now`: the source skips what has passed, so it stays on the engine's clock), made outside the
    /// lock and started at `start` while `isOpen` holds. A cue heard again after a mute is given to `make` anchored
    /// at `start`, where its player is then (`reconcile(players:now:on:)`).
    func follow<Stream: CueStream & Sendable>(
        _ players: [PlayerID: WaveformPlayer], now: Double, on stream: Stream, isOpen: () -> Bool = { true },
        _ make: (_ player: WaveformPlayer, _ cue: SoundCue, _ start: Double) -> Stream.Source
    ) where Value == CueSounds<Stream>, Stream.Source: Sendable {
        let missing = withLock { sounds in sounds.reconcile(players: players, now: now, on: stream) }
        guard !missing.isEmpty else { return }
        let sources = missing.compactMap { player, cue, heard, start -> (PlayerID, SoundCue, Stream.Source, Double)? in
            guard let waveform = players[player] else { return nil }
            return (player, cue, make(waveform, heard, start), start)
        }
        withLock { sounds in
            guard isOpen() else { return }
            for (player, cue, source, start) in sources {
                sounds.start(
                    source, atNanoseconds: MonotonicClock.nanoseconds(start), for: player, cue: cue, on: stream)
            }
        }
    }

    /// Plays `source` on `stream` on its own, for no player (`CueSounds.startAlone`), while `isOpen` holds.
    func startAlone<Stream: CueStream & Sendable>(
        _ source: Stream.Source, atNanoseconds startNanoseconds: UInt64, on stream: Stream, isOpen: () -> Bool
    ) where Value == CueSounds<Stream>, Stream.Source: Sendable {
        withLock { sounds in
            guard isOpen() else { return }
            sounds.startAlone(source, atNanoseconds: startNanoseconds, on: stream)
        }
    }
}
