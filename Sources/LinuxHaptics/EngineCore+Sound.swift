// The engine's sound: the sound stream brought in line with the players, and the sound device's failures.
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

extension EngineCore {
    // MARK: Sound

    /// Brings the sound stream, and the HD actuators' stream when they play (voice coils, HD rumble), in line with
    /// the players: called after anything that may change what a player
    /// plays (a command queued or applied, a seek, controls) and after each pass. Every such change bumps the
    /// scheduler's revision, so a pass that changed nothing costs one comparison; `force` makes the sounds again
    /// whatever the revision (the mute changed).
    func syncSounds(force: Bool = false) {
        // An engine that plays no sound and whose output can be no stream has neither: nothing to take.
        guard audio != nil || mayStreamPatterns else { return }
        soundSync.withLock { synced in
            let now = clock.now
            let taken = state.withLock { state -> Taken? in
                let streamed = state.output as? any PatternStreamOutput
                guard audio != nil || streamed != nil else { return nil }
                let revision = state.scheduler.revision
                if !force, synced == revision { return nil }
                synced = revision
                var taken = Taken(streamed: streamed)
                guard state.phase == .running else { return taken }
                for (id, player) in state.scheduler.players {
                    guard let source = player.source else { continue }
                    if audio != nil, source.audio != nil {
                        taken.sounds[id] = EngineAudio.PlayerSound(
                            cues: player.soundCues(), source: source)
                    }
                    if streamed != nil {
                        taken.waveforms[id] = WaveformPlayer(
                            cues: player.cues(evenMuted: true), pattern: source.pattern,
                            isMuted: player.isMuted || state.hapticsMuted)
                    }
                }
                return taken
            }
            guard let taken else { return }
            audio?.sync(taken.sounds, now: now)
            taken.streamed?.sync(taken.waveforms, now: now)
        }
    }

    /// Whether the engine's output may be a stream that plays its patterns (`PatternStreamOutput`): it was asked
    /// for HD actuators, or it may drive a force device, whose periodic effects a stream plays.
    var mayStreamPatterns: Bool { options.actuators != .rumble || options.allowsForceDevices }

    /// What the sound stream and the HD actuators' stream are to play, taken from the state in one go.
    private struct Taken {
        var streamed: (any PatternStreamOutput)?
        var sounds: [PlayerID: EngineAudio.PlayerSound] = [:]
        var waveforms: [PlayerID: WaveformPlayer] = [:]
    }

    /// The sound device went away (true) or came back (false). Going away interrupts the engine as an unplugged
    /// pad does (`audioSessionInterrupt`); its return resets it.
    func audioInterrupted(_ interrupted: Bool) {
        if interrupted {
            let generation = state.withLock { $0.outputGeneration }
            outputFailed(
                OutputFailure(.deviceGone, "the sound device went away"), generation: generation,
                reason: .audioSessionInterrupt)
        } else {
            reattach(after: .audioSessionInterrupt)
        }
    }

    /// The sound stream ended on an error other than its device going away: the haptics play on; the sounds
    /// playing are lost, and the next sound opens the output again.
    func audioFailed(_ error: AudioDeviceError) {
        logger.warning(
            "the engine's sound output failed; its sounds stop, the haptics play on", metadata: ["error": "\(error)"])
        audio?.close()
    }
}
