// The feedback vocabulary as an app calls it: a generator that honours the user's on/off setting and the rate
// limits, then hands the pattern to an output (HapticManager), and the service protocol for apps that inject
// their haptics instead of using a singleton.
public import AHAP
public import AudioRendering
public import Logging

/// Where the generator sends what it admits. `HapticManager` is one.
@MainActor
public protocol HapticFeedbackOutput: AnyObject {
    /// Get ready for an imminent haptic.
    func prepare()
    /// Get ready to play `pattern` next (upload it ahead where the device allows).
    func prepare(pattern: HapticPattern)
    /// Play `pattern` now, fire-and-forget.
    func play(pattern: HapticPattern)
    /// Whether what is played reaches a device now (`HapticManager`: its engine is available). True unless
    /// said otherwise.
    var canPlayHaptics: Bool { get }
}

extension HapticFeedbackOutput {
    public var canPlayHaptics: Bool { true }
}

extension HapticManager: HapticFeedbackOutput {
    public var canPlayHaptics: Bool { engineAvailable }
}

extension HapticFeedback {
    /// The feedback's pattern, with `sound` (`Haptics/<sound>.wav`) as an `AudioCustom` event at its time 0, so
    /// that the engine starts the sound and the first tap together; without, the haptic alone.
    public func pattern(withSound sound: FeedbackSound?) -> HapticPattern {
        var pattern = self.pattern
        if let sound { pattern.events.append(HapticEvent(audioWaveformPath: sound.fileName, relativeTime: 0)) }
        return pattern
    }
}

/// Haptics for apps that use dependency injection: one call per outcome, nothing thrown, nothing returned.
@MainActor
public protocol HapticFeedbackService: AnyObject {
    func playFeedback(_ feedback: AppFeedback)
}

/// Plays the feedback vocabulary: checks the user's setting, then the rate limits, then plays. Dropped calls
/// are counted; nothing is ever queued.
@MainActor
public final class HapticFeedbackGenerator: HapticFeedbackService {
    /// What happened to one call.
    public enum Outcome: Sendable, Hashable {
        /// Admitted and handed to the output: played, unless the output has no device (`outputCanPlay`).
        case played
        /// The user turned haptics off.
        case disabled
        /// Over a rate limit; the reason says which.
        case dropped(FeedbackRateLimiter.DropReason)
    }

    private let output: any HapticFeedbackOutput
    private let settings: FeedbackSettingsStore
    private let clock: any HapticClock
    private let logger: Logger
    private var limiter: FeedbackRateLimiter
    /// The same limits for calls made while haptics are off, so that what plays instead of the haptic (a
    /// feedback's sound alone) keeps them too, without those calls counting as played haptics.
    private var switchedOffLimiter: FeedbackRateLimiter

    /// - Parameters:
    ///   - output: what plays the admitted feedback (`HapticManager.shared` in an app).
    ///   - settings: the user's on/off setting, read on every call.
    ///   - limits: the rate limits; `.standard` is the guidance's.
    ///   - clock: the clock the rate limits count on (a manual clock in tests).
    ///   - logger: where dropped calls are logged (debug).
    public init(
        output: any HapticFeedbackOutput, settings: FeedbackSettingsStore, limits: FeedbackRateLimits = .standard,
        clock: any HapticClock = MonotonicClock(), logger: Logger
    ) {
        self.output = output
        self.settings = settings
        self.limiter = FeedbackRateLimiter(limits: limits)
        self.switchedOffLimiter = FeedbackRateLimiter(limits: limits)
        self.clock = clock
        self.logger = logger
    }

    /// Calls dropped by the rate limits since the generator was made, with haptics on or off.
    public var droppedCount: Int { limiter.droppedCount + switchedOffLimiter.droppedCount }
    /// Calls admitted since the generator was made (`Outcome.played`): handed to the output, which plays them
    /// when it can (`outputCanPlay`) and drops them quietly while it cannot (no gamepad).
    public var playedCount: Int { limiter.admittedCount }
    public var limits: FeedbackRateLimits { limiter.limits }

    /// Whether haptics play at all; persisted across runs.
    public var hapticsEnabled: Bool {
        get { settings.hapticsEnabled }
        set { settings.hapticsEnabled = newValue }
    }

    /// Gets the device ready so the next feedback starts without extra latency.
    public func prepare() {
        guard settings.hapticsEnabled else { return }
        output.prepare()
    }

    /// Whether what the generator plays reaches a device now (the output's engine is available).
    public var outputCanPlay: Bool { output.canPlayHaptics }

    /// Gets ready for `feedback` in particular (with `sound`, as `play(_:withSound:)` will play it): single-tap
    /// feedback (impacts, the selection tick) is uploaded ahead and stays so, so each time it is played it reaches
    /// the device with one `write()`; its sound is decoded ahead.
    public func prepare(_ feedback: HapticFeedback, withSound sound: FeedbackSound? = nil) {
        guard settings.hapticsEnabled else { return }
        output.prepare(pattern: feedback.pattern(withSound: sound))
    }

    /// Plays `feedback` unless haptics are off or a rate limit says no; with `sound`, the sound in the same
    /// pattern, starting with it. With haptics off the limits still hold: a call over them is `.dropped`, the
    /// others `.disabled` (where the caller plays something instead, a sound alone, it keeps the limits).
    @discardableResult
    public func play(_ feedback: HapticFeedback, withSound sound: FeedbackSound? = nil) -> Outcome {
        let now = Self.limiterTime(clock.now)
        let enabled = settings.hapticsEnabled
        let verdict = enabled ? limiter.admit(at: now) : switchedOffLimiter.admit(at: now)
        if case .dropped(let reason) = verdict {
            logger.debug("feedback dropped", metadata: ["feedback": "\(feedback)", "reason": "\(reason)"])
            return .dropped(reason)
        }
        guard enabled else { return .disabled }
        output.play(pattern: feedback.pattern(withSound: sound))
        return .played
    }

    /// `seconds` on the rate limiter's time line: a clock's reading past what nanoseconds in an `Int64` hold
    /// (292 years) is clamped, and one that is not a number counts as 0.
    private static func limiterTime(_ seconds: Double) -> Duration {
        let nanoseconds = (seconds * 1e9).rounded()
        guard !nanoseconds.isNaN else { return .zero }
        return .nanoseconds(nanoseconds >= 0x1p63 ? .max : nanoseconds < -0x1p63 ? .min : Int64(nanoseconds))
    }

    public func playFeedback(_ feedback: AppFeedback) {
        play(feedback.feedback)
    }
}
