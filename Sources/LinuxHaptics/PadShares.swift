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

    /// One member of `shared` fewer: whether that was the last (the caller then ends it; it is never joined
    /// again).
    func leave(_ shared: Shared) -> Bool {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.shared === shared }) else { return false }
            entries[index].members -= 1
            guard entries[index].members == 0 else { return false }
            entries.remove(at: index)
            return true
        }
    }
}
