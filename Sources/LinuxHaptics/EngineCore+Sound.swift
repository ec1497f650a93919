// The engine's sound: the sound stream brought in line with the players, and the sound device's failures.
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging

extension EngineCore {
    // MARK: Sound

    /// Brings the sound stream in line with the players: called after anything that may change what a player
    /// plays (a command queued or applied, a seek, controls) and after each pass. Every such change bumps the
    /// scheduler's revision, so a pass that changed nothing costs one comparison; `force` makes the sounds again
    /// whatever the revision (the mute changed).
    func syncSounds(force: Bool = false) {
        guard let audio else { return }
        soundSync.withLock { synced in
            let now = clock.now
            let taken = state.withLock { state -> [PlayerID: EngineAudio.PlayerSound]? in
                let revision = state.scheduler.revision
                if !force, synced == revision { return nil }
                synced = revision
                guard state.phase == .running else { return [:] }
                var players: [PlayerID: EngineAudio.PlayerSound] = [:]
                for (id, player) in state.scheduler.players {
                    guard let source = player.source, source.audio != nil else { continue }
                    players[id] = EngineAudio.PlayerSound(
                        cues: player.soundCues(), source: source, controls: player.controls)
                }
                return players
            }
            if let taken { audio.sync(taken, now: now) }
        }
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
