// The outcomes an app reports (`HapticFeedbackService.playFeedback`), each with its haptic and its sound.
public import AudioRendering

/// The app-level outcomes the reference app's design names.
public enum AppFeedback: String, Sendable, Hashable, CaseIterable {
    /// Something succeeded: a heavy impact.
    case success
    /// A check passed: a rigid impact.
    case pass
    /// Something needs attention: the warning notification.
    case warning

    /// The vocabulary call each outcome maps to.
    public var feedback: HapticFeedback {
        switch self {
        case .success: .impact(.heavy)
        case .pass: .impact(.rigid)
        case .warning: .notification(.warning)
        }
    }

    /// The sound each outcome plays with (`AudioService`): a ping, a whoosh, an alert tick.
    public var sound: FeedbackSound {
        switch self {
        case .success: .success
        case .pass: .pass
        case .warning: .warning
        }
    }
}
