// When the device monitor makes a comparison with sysfs it owes if no device event brings a read first: a schedule
// over the monotonic clock, apart from the monitor's thread, so that its cadence is tested without waiting.

/// The retries of an owed comparison with sysfs (one that could not list sysfs, or a netlink drain a failure ended
/// before the socket's queue was empty): without them, a change lost while sysfs could not be listed went untold until
/// the next device event. The first retry comes a second after the comparison was owed; each time the comparison is
/// owed again (an attempt that failed, brought by the retry or by a device event) or a retry's drain could not
/// compare, the next waits twice as long as the one before, up to a minute; a comparison made starts again at a
/// second. Times are monotonic nanoseconds.
struct ComparisonRetry: Equatable, Sendable {
    static let first: UInt64 = 1_000_000_000
    static let last: UInt64 = 60_000_000_000

    /// When the owed comparison is made if no event brings a read first; nil when none is owed.
    private(set) var deadline: UInt64?
    /// The wait the next retry is scheduled with.
    private var delay = first

    /// The comparison is owed, or owed again after an attempt that failed: the next retry is scheduled.
    mutating func owed(now: UInt64) {
        deadline = now + delay
        delay = min(delay * 2, Self.last)
    }

    /// A comparison was made: none is owed.
    mutating func made() {
        deadline = nil
        delay = Self.first
    }

    /// Whether the retry is due at `now`.
    func isDue(now: UInt64) -> Bool { deadline.map { now >= $0 } ?? false }

    /// After the drain a due retry started, whose deadline was `due`: one that could not compare (it ended on a
    /// failed receive) left that deadline past, and the monitor's poll, whose timeout it sets, would return at once for
    /// as long as every receive fails; the next retry is scheduled. One the drain scheduled (a comparison that failed,
    /// owed again) is kept, however long the drain went on after it.
    mutating func drained(now: UInt64, due: UInt64?) {
        if deadline == due, isDue(now: now) { owed(now: now) }
    }
}
