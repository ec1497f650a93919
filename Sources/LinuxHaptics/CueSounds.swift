// The sounds a stream plays for the engine's players: one per cue (PlayerState.cues), found again by its anchor.
// The engine's sound (EngineAudio) and the voice coils (VoiceCoilStream) keep their MixingStreams in line with the
// players through it, and HD rumble (HDRumbleStream) its stream of bands.
import LinuxAudio
import LinuxSystem

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

    var isEmpty: Bool { sounds.isEmpty }

    /// Makes `stream` play no more than `cues` ask for: a sound whose cue is gone is stopped, a cue whose end
    /// moved has its sound end there. Returns the cues that have no sound yet, in no particular order.
    mutating func reconcile(_ cues: [PlayerID: [SoundCue]], on stream: Stream) -> [(PlayerID, SoundCue)] {
        for (player, playing) in sounds {
            let wanted = cues[player] ?? []
            for (anchor, sound) in playing where !wanted.contains(where: { $0.anchor == anchor }) {
                stream.stop(sound.id)
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

    /// Stops every sound on `stream` at once and forgets them.
    mutating func stopAll(on stream: Stream?) {
        if let stream { for sound in sounds.values.flatMap(\.values) { stream.stop(sound.id) } }
        sounds = [:]
    }
}
