// AudioService: feedback with sound. `playFeedback(.success)` plays the feedback sound with its haptic, both
// from one start time: on a gamepad, the sound is an AudioCustom event of the haptic's own pattern, which the
// engine starts with the rumble once its sound output can be heard (docs/audio.md); without one, the sound
// alone through AudioManager.
public import AHAP
public import AudioRendering
public import Observation

/// Feedback sounds with their haptics: `success` (a positive ping), `pass` (a whoosh) and `warning` (an alert
/// tick), from `Haptics/success.wav`, `pass.wav` and `warning.wav`. Sound can be switched off
/// (`isSoundEnabled`); the haptics still play. The sounds go to the default sound device, mixed with other
/// programs' sound.
@Observable
@MainActor
public final class AudioService {
    /// The instance an app uses, on the shared haptic and audio managers.
    public static let shared = AudioService()

    /// Whether feedback makes sound (on by default). Off, the haptics still play.
    public var isSoundEnabled = true

    @ObservationIgnored private let haptics: HapticManager
    @ObservationIgnored private let audio: AudioManager

    public init(haptics: HapticManager = .shared, audio: AudioManager = .shared) {
        self.haptics = haptics
        self.audio = audio
    }

    /// The haptic each sound plays with: success and warning are the notification feedbacks of the same names;
    /// pass, a whoosh of moving on, is a soft (dull, mid-weight) impact.
    public static func haptic(for sound: FeedbackSound) -> HapticFeedback {
        switch sound {
        case .success: .notification(.success)
        case .warning: .notification(.warning)
        case .pass: .impact(.soft)
        }
    }

    /// The feedback's pattern: its haptic's taps, and, `withSound`, the sound file as an `AudioCustom` event at
    /// the same time 0, so that the engine starts both together.
    public static func pattern(for sound: FeedbackSound, withSound: Bool) -> HapticPattern {
        var pattern = haptic(for: sound).pattern
        if withSound { pattern.events.append(HapticEvent(audioWaveformPath: sound.fileName, relativeTime: 0)) }
        return pattern
    }

    /// Decodes the three sounds and readies their patterns, so that the first `playFeedback` has no load delay.
    public func preloadSounds() {
        audio.preloadAllAssets(FeedbackSound.allCases.map(\.fileName))
        guard haptics.engineAvailable else { return }
        for sound in FeedbackSound.allCases { haptics.prepare(pattern: Self.pattern(for: sound, withSound: true)) }
    }

    /// Plays `sound` with its haptic, starting together: on a gamepad, one pattern carries both and the engine
    /// starts it once its sound output can be heard (about the output's buffer after the call); without a
    /// gamepad, the sound alone; with sound off, the haptic alone. Failures are logged, never thrown.
    public func playFeedback(_ sound: FeedbackSound) {
        if haptics.engineAvailable {
            haptics.play(pattern: Self.pattern(for: sound, withSound: isSoundEnabled))
        } else if isSoundEnabled {
            audio.playEffect(sound.fileName)
        }
    }
}
