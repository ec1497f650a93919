// The lengths every output's effects are built from.

/// The self-expiry design (docs/engine.md): every non-zero output is a timed effect of one fixed length,
/// renewed while it should last. A process that hangs (stopped, deadlocked, starved) leaves the pad rumbling for
/// at most that length; one that dies has its effects erased by the kernel when its descriptor closes.
package enum OutputTiming {
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
    /// The renewal rhythm of an output: how often a steady non-zero mix is renewed, and how long past a renewal
    /// the device plays on if none comes (`holdSeconds + expiryMarginSeconds`, the effect's replay length).
    package struct Renewal: Sendable, Equatable {
        package var holdSeconds: Double
        package var expiryMarginSeconds: Double
        /// How long the device plays after a renewal if no other call comes.
        package var windowSeconds: Double { holdSeconds + expiryMarginSeconds }
        /// The effect's `replay.length`: one fixed value per device (see `replayLengthMilliseconds`).
        package var replayLengthMilliseconds: UInt16 { UInt16((windowSeconds * 1000).rounded()) }

        package static let standard = Renewal(
            holdSeconds: OutputTiming.holdSeconds, expiryMarginSeconds: OutputTiming.expiryMarginSeconds)
        /// hid-nintendo's FF_RUMBLE path: the driver queues a frame per call and sends frames paced on the pad's
        /// input reports (about 26 ms each on the emulated Pro Controller, two when its worker starts from idle,
        /// since it resends the last frame first), so the frame at rest follows the kernel's end of the effect
        /// by up to about 60 ms. A window of 80 ms keeps a hung player's pad at rest within 150 ms of the last
        /// renewal; renewals every 40 ms leave the playback thread 40 ms of slack, and at 25 a second stay below
        /// the frames the driver can send (about 35 a second), so no queue builds.
        package static let switchRumble = Renewal(holdSeconds: 0.04, expiryMarginSeconds: 0.04)

        /// The rhythm for a device rendered with the profile named `name` (`RenderProfile.name`).
        package static func forProfile(named name: String) -> Renewal { name == "switch" ? switchRumble : standard }
    }

    /// How long after its length a triggered pulse may still play on a device: the kernel rounds the replay
    /// up to whole ticks (10 ms at the slowest tick rate, 100 Hz) and stops it on a timer tick after that.
    static let pulseOverrunSeconds = 0.02
}
