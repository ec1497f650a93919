// The lengths every output's effects are built from.

/// The self-expiry design (docs/engine.md): every non-zero output is a timed effect of one fixed length,
/// renewed while it should last. A process that hangs (stopped, deadlocked, starved) leaves the pad rumbling for
/// at most that length; one that dies has its effects erased by the kernel when its descriptor closes.
enum OutputTiming {
    /// A steady non-zero mix is renewed this often while it plays (20 writes a second, a third of a game's
    /// per-frame rumble updates at 60 Hz); nothing is renewed while nothing plays.
    static let holdSeconds = 0.05
    /// Slack for a late playback thread (scheduling, emulation): the renewal can come this late without the
    /// motors dropping out. Hold plus margin, 150 ms, is the longest a hung process leaves a pad rumbling.
    static let expiryMarginSeconds = 0.1
    /// The effect's `replay.length`. One fixed value on purpose: ff-memless restarts an updated effect's
    /// replay with the *previous* effect's length, so varying lengths would apply one update late.
    static let replayLengthMilliseconds = UInt16((holdSeconds + expiryMarginSeconds) * 1000)
    /// An update alone (`MixSlotState.Change.update`) relies on the effect still playing in the kernel; it is
    /// used only while the replay window has more than this left (two ticks at the slowest tick rate, 100 Hz).
    static let updateMarginSeconds = 0.02
    /// How long after its length a triggered pulse may still play on a device: the kernel rounds the replay
    /// up to whole ticks (10 ms at the slowest tick rate, 100 Hz) and stops it on a timer tick after that.
    static let pulseOverrunSeconds = 0.02
}
