// What the engines of one process share on one pad: a stream that writes the pad's actuators (its voice coils,
// its HD rumble). Two writers of one pad's reports would interleave them, and the pad would play the two streams
// in turns; one stream per pad, joined by every engine that plays there, plays them together.
@_spi(Internals) import LinuxSystem

/// The streams of one kind this process has, one per pad (by the node or sound card it writes) while it has
/// members: every engine on the pad joins it, and the last one to leave ends it.
final class PadShares<Shared: AnyObject & Sendable>: Sendable {
    private struct Entry {
        let key: String
        let shared: Shared
        var members: Int
    }

    /// Newest last: a stream that can no longer be joined (`isUsable` said no) stays here until its members have
    /// left, after the one that took its key.
    private let entries = Lock<[Entry]>([])

    init() {}

    /// The stream under `key` with one member more: the newest this process has there, while `isUsable` says
    /// it plays on (its pad has not gone away); otherwise the one `make` starts, with its maker as its member.
    /// `make` runs under the lock, so two engines joining at once never start two streams.
    func joined(
        _ key: String, isUsable: (Shared) -> Bool, make: () throws(OutputFailure) -> Shared
    ) throws(OutputFailure) -> Shared {
        try entries.withLock { (entries) throws(OutputFailure) -> Shared in
            if let index = entries.lastIndex(where: { $0.key == key }), isUsable(entries[index].shared) {
                entries[index].members += 1
                return entries[index].shared
            }
            let made = try make()
            entries.append(Entry(key: key, shared: made, members: 1))
            return made
        }
    }

    /// One member of `shared` fewer; the last one's leaving ends it (`end`), and it is never joined again. `end`
    /// runs under the lock, as `make` does: a stream an engine starts on the pad meanwhile starts once this one has
    /// ended, so the pad never has two writers of ours, and the new one begins where this one left the pad
    /// (`PadCounters`).
    func leave(_ shared: Shared, end: (Shared) -> Void) {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.shared === shared }) else { return }
            entries[index].members -= 1
            guard entries[index].members == 0 else { return }
            entries.remove(at: index)
            end(shared)
        }
    }
}

/// The counter each pad's next report of ours carries, by hidraw node, as the last stream of this process there left
/// it (a Switch controller's report 0x10, a DualSense's report 0x32: the pad expects the counter to grow by one a
/// report). A stream that begins on the node (an engine stopped and started again, another engine after the last
/// one left) carries on from it, so the pad never gets two reports in a row with the same counter from us. A stream
/// reads it as it starts and writes it as it ends, both under its `PadShares` lock.
enum PadCounters {
    private static let counters = Lock<[String: UInt8]>([:])

    /// The counter a stream beginning on `node` starts at: 0 on a node no stream of ours has written.
    static func next(for node: String) -> UInt8 { counters.withLock { $0[node] ?? 0 } }

    /// A stream on `node` ended, its next report's counter being `counter`.
    static func record(_ counter: UInt8, for node: String) { counters.withLock { $0[node] = counter } }
}

/// When this process last wrote a report to each pad's hidraw node (nanoseconds on `CLOCK_MONOTONIC`, the streams'
/// clock), as the last stream there left it: a stream that begins on the node (an engine stopped and started again)
/// keeps the pad's least spacing from that report, as one stream keeps it between its own (a Switch controller's
/// 25 ms, which faster sends can break a Bluetooth link at). Read and written as `PadCounters` is.
enum PadLastWrites {
    private static let times = Lock<[String: UInt64]>([:])

    /// When the last stream of ours on `node` wrote its last report; nil when none has.
    static func last(for node: String) -> UInt64? { times.withLock { $0[node] } }

    /// A stream on `node` ended, its last report written at `time` (nil: it wrote none, and the one before it
    /// stands).
    static func record(_ time: UInt64?, for node: String) {
        guard let time else { return }
        times.withLock { $0[node] = max(time, $0[node] ?? 0) }
    }
}
