// The lengths every output's effects are built from.
package import HapticRendering

/// The self-expiry design (docs/engine.md): every non-zero output is a timed effect of one fixed length,
/// renewed while it should last. A process that hangs (stopped, deadlocked, starved) leaves the pad rumbling for
/// at most that length; one that dies has its effects erased by the kernel when its descriptor closes.
package enum OutputTiming {
    /// Slack for a late playback thread (scheduling, emulation): the renewal can come this late without the
    /// motors dropping out. Hold plus margin, 150 ms, is the longest a hung process leaves a pad rumbling.
    static let expiryMarginSeconds = 0.1
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
        /// The effect's `replay.length`. One fixed value per device on purpose: ff-memless restarts an updated
        /// effect's replay with the *previous* effect's length, so varying lengths would apply one update late.
        package var replayLengthMilliseconds: UInt16 { UInt16((windowSeconds * 1000).rounded()) }

        /// The rhythm for a device rendered with `profile`. Renewed as often as its write budget counts renewals
        /// (`WriteBudget.renewalInterval`, `WriteBudget.standardRenewalInterval` where it counts none; nothing
        /// is renewed while nothing plays), with a 100 ms margin: 150 ms.
        /// Drivers that queue every call (`WriteBudget.queuesEveryCall`: hid-nintendo) differ: the driver queues a
        /// frame per call and sends frames paced on the pad's input reports (about 26 ms each on the emulated Pro
        /// Controller, two when its worker starts from idle, since it resends the last frame first), so the frame
        /// at rest follows the kernel's end of the effect by up to about 60 ms. A window of 80 ms keeps a hung
        /// player's pad at rest within 150 ms of the last renewal; renewals every 40 ms leave the playback thread
        /// 40 ms of slack.
        package static func forProfile(_ profile: RenderProfile) -> Renewal {
            let hold = profile.budget.renewalInterval ?? WriteBudget.standardRenewalInterval
            let margin = profile.budget.queuesEveryCall ? 0.04 : OutputTiming.expiryMarginSeconds
            return Renewal(holdSeconds: hold, expiryMarginSeconds: margin)
        }

        /// The generic profile's rhythm, for outputs that name no profile of their own.
        package static let standard = forProfile(.genericRumble)
    }

    /// How late a renewal may go out and still be counted at its time, as the planner counts renewals (one every
    /// renewal interval after a command): a quarter of the profile's minimum interval, 1 ms at least. The engine
    /// counts a later one when it went out (`DeviceCommandPlanner.resumption(afterRenewalDueAt:madeAt:from:)`).
    package static func lateRenewalTolerance(for profile: RenderProfile) -> Double {
        max(profile.minimumUpdateInterval / 4, 0.001)
    }

    /// How long after its length a triggered pulse may still play on a device: the kernel rounds the replay
    /// up to whole ticks (10 ms at the slowest tick rate, 100 Hz) and stops it on a timer tick after that.
    package static let pulseOverrunSeconds = 0.02
}
