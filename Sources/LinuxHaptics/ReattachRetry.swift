// How long the engine keeps trying a device that appeared but refused its first upload as if gone (a node the
// kernel announced before its creator finished making it).

/// The waits between tries of a device that appeared and answered `deviceGone`: doubling from 5 ms, 635 ms in
/// all. uinput makes such a device ready within microseconds of the announcement, a busy machine within a few
/// milliseconds; a device still refusing after the last wait is taken as gone, and its next announcement tries
/// again.
enum ReattachRetry {
    static let delays: [UInt64] = (0..<7).map { 5_000_000 << UInt64($0) }
}
