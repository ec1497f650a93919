// A player's pattern, rendered: the renderer (HapticRendering) turns a pattern plus its run-time controls into
// a MotorTimeline; the engine renders again when a player receives parameters or a curve. A pattern with sound
// also carries its decoded clips, and its timeline lasts until its last sound ends, as a Core Haptics pattern's
// duration covers its audio events.
import AHAP
import AudioRendering
import HapticRendering

struct PatternSource: Sendable {
    let pattern: HapticPattern
    let renderer: PatternRenderer
    /// The pattern's sound, when it has audio events and the engine plays audio.
    let audio: PatternAudio?

    init(pattern: HapticPattern, renderer: PatternRenderer, audio: PatternAudio? = nil) {
        self.pattern = pattern
        self.renderer = renderer
        self.audio = audio
    }

    func render(_ controls: RuntimeControls) -> MotorTimeline {
        let timeline = renderer.render(pattern, controls: controls)
        guard let end = audio?.schedule(of: pattern, controls: controls).end, end > timeline.endTime else {
            return timeline
        }
        // Silence on the motors until the last sound ends, so the player plays (and loops) its whole length.
        let rest = MotorTimeline.Segment(start: timeline.endTime, end: end, startLevels: .off, endLevels: .off)
        return MotorTimeline(segments: timeline.segments + [rest])
    }

    func audioSchedule(_ controls: RuntimeControls) -> AudioSchedule? {
        audio?.schedule(of: pattern, controls: controls)
    }
}

/// A pattern's decoded clips, at the rate of the engine's sound output.
struct PatternAudio: Sendable {
    /// Clips by `EventWaveformPath`, converted to `sampleRate`.
    let clips: [String: AudioClip]
    let sampleRate: Int

    func schedule(of pattern: HapticPattern, controls: RuntimeControls) -> AudioSchedule {
        AudioSchedule(pattern: pattern, clipDurations: clips.mapValues(\.duration), controls: controls)
    }
}

/// What a player's sound is while it plays: it changes (and a new sound replaces the old) when the player is
/// started, resumed, sought, changes rate or loop, or receives audio controls; not while it simply plays on.
struct SoundAnchor: Sendable, Hashable {
    /// The engine time the player's offset was `offset` at.
    var time: Double
    var offset: Double
    var rate: Double
    var loopLength: Double?
    /// Bumped by every change to the player's audio controls.
    var revision: Int
}
