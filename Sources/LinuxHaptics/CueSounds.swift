// The sounds a MixingStream plays for the engine's players: one per cue (PlayerState.cues), found again by its
// anchor. The engine's sound (EngineAudio) and the voice coils (VoiceCoilStream) keep their streams in line with
// the players through it.
import LinuxAudio
import LinuxSystem

/// The sounds playing or waiting on a stream, by player, by cue anchor. Not thread-safe: its owner holds it in a
/// lock.
struct CueSounds {
    private struct Playing {
        var id: MixingStream.SoundID
        var end: Double?
    }

    private var sounds: [PlayerID: [SoundAnchor: Playing]] = [:]

    var isEmpty: Bool { sounds.isEmpty }

    /// Makes `stream` play no more than `cues` ask for: a sound whose cue is gone is stopped, a cue whose end
    /// moved has its sound end there. Returns the cues that have no sound yet, in no particular order.
    mutating func reconcile(_ cues: [PlayerID: [SoundCue]], on stream: MixingStream) -> [(PlayerID, SoundCue)] {
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
        _ source: some SoundSource, atNanoseconds startNanoseconds: UInt64, for player: PlayerID, cue: SoundCue,
        on stream: MixingStream
    ) -> Bool {
        guard !contains(player, cue.anchor) else { return false }
        let id = stream.play(source, at: startNanoseconds)
        if let end = cue.end { stream.stop(id, atNanoseconds: MonotonicClock.nanoseconds(end)) }
        sounds[player, default: [:]][cue.anchor] = Playing(id: id, end: cue.end)
        return true
    }

    /// Stops every sound on `stream` at once and forgets them.
    mutating func stopAll(on stream: MixingStream?) {
        if let stream { for sound in sounds.values.flatMap(\.values) { stream.stop(sound.id) } }
        sounds = [:]
    }
}
