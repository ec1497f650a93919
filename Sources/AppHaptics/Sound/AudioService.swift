// AudioService: the feedback story with sound. `playFeedback(.success)` plays the outcome's sound with its
// haptic, both from one start time: the sound is an AudioCustom event of the haptic's own pattern, which the
// engine starts with the rumble once its sound output can be heard (docs/audio.md). The haptic goes through the
// feedback generator, so the user's haptics switch and the rate limits hold for both; without a gamepad, or with
// haptics switched off, the sound plays alone through AudioManager.
import AudioRendering
public import Observation

/// Feedback with sound: `success` (a positive ping), `pass` (a whoosh) and `warning` (an alert tick), from
/// `Haptics/success.wav`, `pass.wav` and `warning.wav`, each with its `AppFeedback` haptic. Sound can be switched
/// off (`isSoundEnabled`); the haptics still play. The sounds go to the default sound device, mixed with other
/// programs' sound.
@Observable
@MainActor
public final class AudioService: HapticFeedbackService {
    /// Whether feedback makes sound (on by default). Off, the haptics still play. Changed after `preloadSounds()`,
    /// the feedback patterns are readied again as they now play.
    public var isSoundEnabled = true {
        didSet { followSoundSetting() }
    }
    /// Whether the patterns `preloadSounds()` readied carry their sounds; nil before it was called.
    @ObservationIgnored private var preparedWithSound: Bool?

    @ObservationIgnored private let haptics: HapticFeedbackGenerator
    @ObservationIgnored private let audio: AudioManager

    /// A service playing the haptics through `haptics` (the user's switch, the rate limits, `HapticManager`) and
    /// the sounds alone, when there is no haptic to carry them, through `audio`.
    public init(haptics: HapticFeedbackGenerator, audio: AudioManager = .shared) {
        self.haptics = haptics
        self.audio = audio
    }

    /// Decodes the three sounds and readies their patterns, so that the first `playFeedback` has no load delay: the
    /// patterns it plays, with their sounds or, with sound off (or `AudioManager` muted), without (until 7
    /// December they were readied with their sounds whatever the setting, and with sound off no play found its
    /// pattern ready).
    public func preloadSounds() {
        audio.preloadAllAssets(FeedbackSound.allCases.map(\.fileName))
        preparePatterns()
    }

    /// Whether a feedback's haptic carries its sound now: not with sound off or `AudioManager` muted.
    private var carriesSound: Bool { isSoundEnabled && !audio.isMuted }

    private func preparePatterns() {
        let withSound = carriesSound
        preparedWithSound = withSound
        for feedback in AppFeedback.allCases {
            haptics.prepare(feedback.feedback, withSound: withSound ? feedback.sound : nil)
        }
    }

    /// The patterns readied again when the sound they carry changed since (`isSoundEnabled`, or `AudioManager`'s
    /// mute, which is its own to change: found at the next play).
    private func followSoundSetting() {
        if let preparedWithSound, preparedWithSound != carriesSound { preparePatterns() }
    }

    /// Plays `feedback`'s sound with its haptic, starting together (about the sound output's buffer after the
    /// call); with sound off (or `AudioManager` muted), the haptic alone; with no gamepad or haptics switched off,
    /// the sound alone. A call the rate limits drop plays neither. Failures are logged, never thrown.
    public func playFeedback(_ feedback: AppFeedback) {
        followSoundSetting()
        // The app's mute holds for the feedback's sound too, whichever output carries it.
        let sound = carriesSound ? feedback.sound : nil
        let carried = haptics.outputCanPlay
        switch haptics.play(feedback.feedback, withSound: carried ? sound : nil) {
        case .dropped: return
        case .played where carried: return
        case .played, .disabled:
            if let sound { audio.playEffect(sound.fileName) }
        }
    }
}
