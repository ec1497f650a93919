// The vocabulary's rate limits: haptics that arrive too often are dropped and counted, never
// queued. Time comes from the caller (an injected clock), so the limits are exact and testable.

/// Limits on how often feedback may play.
public struct FeedbackRateLimits: Sendable, Hashable {
    /// At most this many admitted in any `sustainedWindow`.
    public var sustainedCount: Int
    public var sustainedWindow: Duration
    /// At most this many admitted in any `burstWindow`.
    public var burstCount: Int
    public var burstWindow: Duration
    /// Two admitted haptics are at least this far apart.
    public var minimumSpacing: Duration

    public init(
        sustainedCount: Int = 10, sustainedWindow: Duration = .seconds(1), burstCount: Int = 5,
        burstWindow: Duration = .milliseconds(500), minimumSpacing: Duration = .milliseconds(50)
    ) {
        self.sustainedCount = sustainedCount
        self.sustainedWindow = sustainedWindow
        self.burstCount = burstCount
        self.burstWindow = burstWindow
        self.minimumSpacing = minimumSpacing
    }

    /// The guidance's numbers: 10 per second sustained, 5 per 500 ms burst, 50 ms apart.
    public static let standard = FeedbackRateLimits()

    /// The same limits with another minimum spacing (clamped to >= 0).
    public func withMinimumSpacing(_ spacing: Duration) -> Self {
        var limits = self
        limits.minimumSpacing = Swift.max(spacing, .zero)
        return limits
    }
}

/// Decides, call by call, whether a haptic may play now. Memory is bounded by the larger window count, and by the
/// admissions within the longer window: only the most recent admissions that a limit can still count are kept
/// (and the last, for the spacing). With counts as large as `Int.max` every admission was kept, until 6 December.
public struct FeedbackRateLimiter: Sendable {
    /// Which limit dropped a call.
    public enum DropReason: Sendable, Hashable {
        /// Within `minimumSpacing` of the last admitted call.
        case tooSoon
        /// `burstCount` admitted within the last `burstWindow`.
        case burstLimit
        /// `sustainedCount` admitted within the last `sustainedWindow`.
        case sustainedLimit
    }

    /// What became of one call.
    public enum Verdict: Sendable, Hashable {
        case admitted
        case dropped(DropReason)
    }

    public let limits: FeedbackRateLimits
    /// Admission times, oldest first; never longer than the larger of the two counts.
    private var recent: [Duration] = []
    /// How many admission times it keeps: what its memory holds.
    var keptAdmissions: Int { recent.count }
    public private(set) var admittedCount = 0
    public private(set) var droppedCount = 0

    public init(limits: FeedbackRateLimits = .standard) {
        self.limits = limits
    }

    /// Judges a call at `now` (time on one monotonic clock, from any origin) and records it.
    ///
    /// A call is admitted when it is at least `minimumSpacing` after the last admitted one, and admitting it
    /// keeps at most `burstCount` admissions within any `burstWindow` (the `burstCount`-th most recent one is
    /// `burstWindow` or longer ago) and at most `sustainedCount` within any `sustainedWindow`.
    public mutating func admit(at now: Duration) -> Verdict {
        let verdict = judge(now)
        if verdict == .admitted {
            admittedCount += 1
            recent.append(now)
            let keep = Swift.max(limits.burstCount, limits.sustainedCount, 1)
            if recent.count > keep { recent.removeFirst(recent.count - keep) }
            // One at least a window ago counts toward no limit: the older ones go, in one move.
            let window = Swift.max(limits.burstWindow, limits.sustainedWindow)
            let counted = recent.firstIndex { now - $0 < window } ?? recent.count - 1
            if counted > 0 { recent.removeFirst(Swift.min(counted, recent.count - 1)) }
        } else {
            droppedCount += 1
        }
        return verdict
    }

    private func judge(_ now: Duration) -> Verdict {
        if let last = recent.last, now - last < limits.minimumSpacing { return .dropped(.tooSoon) }
        if !hasRoom(count: limits.burstCount, window: limits.burstWindow, now: now) { return .dropped(.burstLimit) }
        if !hasRoom(count: limits.sustainedCount, window: limits.sustainedWindow, now: now) {
            return .dropped(.sustainedLimit)
        }
        return .admitted
    }

    /// Whether one more admission at `now` keeps at most `count` within any `window`.
    private func hasRoom(count: Int, window: Duration, now: Duration) -> Bool {
        guard count > 0 else { return false }
        guard recent.count >= count else { return true }
        return now - recent[recent.count - count] >= window
    }
}
