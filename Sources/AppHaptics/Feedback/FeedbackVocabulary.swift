// The feedback vocabulary of the reference app's "haptic optimizer" guidance: impacts,
// notifications and the selection tick, each defined as an AHAP pattern so it plays through the same engine,
// renderer and rate limits as any file. The numbers are the guidance's; docs/app-haptics.md lists them.
public import AHAP

/// The weight and texture of an impact, as `UIImpactFeedbackGenerator.FeedbackStyle`.
public enum ImpactStyle: String, Sendable, Hashable, CaseIterable {
    case light, medium, heavy, soft, rigid

    /// The `HapticIntensity` range of the style (the guidance's numbers).
    public var intensityRange: ClosedRange<Double> {
        switch self {
        case .light: 0.3...0.5
        case .medium, .soft, .rigid: 0.5...0.7
        case .heavy: 0.8...1.0
        }
    }

    /// The `HapticSharpness` range of the style: soft is dull, rigid is crisp, the weights sit in the middle.
    public var sharpnessRange: ClosedRange<Double> {
        switch self {
        case .light, .medium, .heavy: 0.4...0.6
        case .soft: 0.1...0.3
        case .rigid: 0.7...0.9
        }
    }
}

/// The outcome a notification reports, as `UINotificationFeedbackGenerator.FeedbackType`.
public enum NotificationFeedback: String, Sendable, Hashable, CaseIterable {
    case success, warning, error
}

/// One call of the vocabulary.
public enum HapticFeedback: Sendable, Hashable, CustomStringConvertible {
    /// An impact; `intensity` (0...1, clamped) places it within its style's intensity range: 0 is the range's
    /// lower bound, 1 its upper bound, `nil` the middle. Impacts never leave their style's range, so a
    /// "light" stays light whatever the caller passes.
    case impact(ImpactStyle, intensity: Double? = nil)
    case notification(NotificationFeedback)
    /// A very light tick for pickers and sliders.
    case selection

    public var description: String {
        switch self {
        case .impact(let style, let intensity):
            "impact \(style.rawValue)" + (intensity.map { " (intensity \($0))" } ?? "")
        case .notification(let type): "notification \(type.rawValue)"
        case .selection: "selection"
        }
    }

    /// The pattern that renders this feedback.
    public var pattern: HapticPattern {
        switch self {
        case .impact(let style, let intensity):
            let position = FeedbackVocabulary.clampUnit(intensity ?? FeedbackVocabulary.rangeMiddle)
            return FeedbackVocabulary.taps([
                FeedbackVocabulary.Tap(
                    time: 0, intensity: FeedbackVocabulary.point(in: style.intensityRange, at: position),
                    sharpness: FeedbackVocabulary.point(in: style.sharpnessRange, at: FeedbackVocabulary.rangeMiddle))
            ])
        case .notification(let type):
            return FeedbackVocabulary.taps(FeedbackVocabulary.notificationTaps(type))
        case .selection:
            return FeedbackVocabulary.taps([FeedbackVocabulary.selectionTap])
        }
    }
}

/// The definitions behind `HapticFeedback.pattern`, public so tests and docs can name the exact taps.
public enum FeedbackVocabulary {
    /// One transient of a feedback pattern.
    public struct Tap: Sendable, Hashable {
        /// Seconds from the start of the feedback.
        public var time: Double
        public var intensity: Double
        public var sharpness: Double

        public init(time: Double, intensity: Double, sharpness: Double) {
            self.time = time
            self.intensity = intensity
            self.sharpness = sharpness
        }
    }

    /// Where in its range an impact plays when the caller gives no intensity.
    public static let rangeMiddle = 0.5

    /// Taps of a two-tap notification are 100 ms apart: far enough for rumble motors to spin down between
    /// them (they need ~50 ms to spin up), close enough to read as one gesture.
    public static let pairSpacing = 0.1
    /// Error taps are "rapid": 80 ms apart, the shortest spacing at which ff-memless's 50 ms envelope steps and
    /// the motors' spin-up still keep three taps distinct.
    public static let rapidSpacing = 0.08

    /// success: two taps, rising (the second stronger and crisper).
    public static let successTaps = [
        Tap(time: 0, intensity: 0.6, sharpness: 0.5),
        Tap(time: pairSpacing, intensity: 0.9, sharpness: 0.7),
    ]
    /// warning: two taps, the emphasis on the second (a soft lead-in, then a heavy dull hit).
    public static let warningTaps = [
        Tap(time: 0, intensity: 0.4, sharpness: 0.4),
        Tap(time: pairSpacing * 1.5, intensity: 1.0, sharpness: 0.3),
    ]
    /// error: three rapid taps, descending.
    public static let errorTaps = [
        Tap(time: 0, intensity: 1.0, sharpness: 0.8),
        Tap(time: rapidSpacing, intensity: 0.8, sharpness: 0.8),
        Tap(time: rapidSpacing * 2, intensity: 0.6, sharpness: 0.8),
    ]
    /// selection: the lightest tap that still reads as a tick, crisp so it does not feel like a buzz.
    public static let selectionTap = Tap(time: 0, intensity: 0.2, sharpness: 0.8)

    public static func notificationTaps(_ type: NotificationFeedback) -> [Tap] {
        switch type {
        case .success: successTaps
        case .warning: warningTaps
        case .error: errorTaps
        }
    }

    /// A pattern of transients, one per tap.
    public static func taps(_ taps: [Tap]) -> HapticPattern {
        HapticPattern(
            events: taps.map { tap in
                HapticEvent(
                    type: .hapticTransient,
                    parameters: [
                        HapticEventParameter(parameterID: .hapticIntensity, value: tap.intensity),
                        HapticEventParameter(parameterID: .hapticSharpness, value: tap.sharpness),
                    ],
                    relativeTime: tap.time)
            },
            parameters: [])
    }

    /// `value` within 0...1: an infinity is clamped as any value past an end; NaN, which says nothing, is the
    /// middle.
    static func clampUnit(_ value: Double) -> Double {
        guard !value.isNaN else { return rangeMiddle }
        return Swift.min(Swift.max(value, 0), 1)
    }

    static func point(in range: ClosedRange<Double>, at position: Double) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * position
    }
}
