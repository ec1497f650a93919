// "The device" as the engine sees it: one primitive that sets both motors for a while (gilrs' set_ff_state),
// prepared pulses that start with a single write, and a source that (re)opens the output and says when its
// device leaves or comes back. Implementations: evdev (EvdevOutput.swift), the built-in virtual output
// (VirtualOutput.swift) and, in LinuxHapticsTesting, a recording output; hence `package` access.
public import HapticRendering
public import LinuxInput
package import Logging

/// Why an output operation failed, sorted by what the engine does about it.
package struct OutputFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, Equatable {
        /// The device was unplugged (`ENODEV`), or is not there.
        case deviceGone
        /// Every effect slot is taken (`ENOSPC`) and nothing could be evicted.
        case noSlot
        case permissionDenied
        /// The device cannot rumble (no `FF_RUMBLE`), or rejected the effect.
        case unsupported
        /// No device matches the selection.
        case notFound
        /// The output was closed under the call (the engine stopped meanwhile).
        case closed
        case other
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}

/// What an output can do, as the engine reports it.
public struct OutputCapabilities: Sendable, Hashable {
    /// A human-readable name: the device's, or "virtual output".
    public var name: String
    /// The device's stable id, for device outputs.
    public var deviceID: StableDeviceID?
    /// The event node, for device outputs.
    public var node: String?
    /// How many effects the device holds at once (`EVIOCGEFFECTS`); nil when unlimited or unknown.
    public var effectSlots: Int?
    /// Whether the output is a model in this process rather than a device.
    public var isVirtual: Bool
    /// The kernel driver behind the device (`xpad`, `playstation`...), when discovery could tell.
    public var driver: String?
    /// The render profile chosen for this output from its driver and identity (`RenderProfile.forDevice`);
    /// `HapticEngineOptions.renderProfile` overrides it.
    public var renderProfile: RenderProfile

    public init(
        name: String, deviceID: StableDeviceID? = nil, node: String? = nil, effectSlots: Int? = nil, isVirtual: Bool,
        driver: String? = nil, renderProfile: RenderProfile = .genericRumble
    ) {
        self.name = name
        self.deviceID = deviceID
        self.node = node
        self.effectSlots = effectSlots
        self.isVirtual = isVirtual
        self.driver = driver
        self.renderProfile = renderProfile
    }
}

/// A pulse uploaded ahead so that starting it is one `write()`: both motors at `mix` for `duration`.
package struct PreparedPulse: Sendable, Hashable {
    package var mix: MotorMagnitudes
    package var duration: Double
}

/// An open output. Calls come from the engine's playback thread (apply, keep-alive) and from callers'
/// threads (trigger): implementations are internally synchronised.
package protocol MotorOutput: AnyObject, Sendable {
    var capabilities: OutputCapabilities { get }
    /// Motors off, explicitly, so that a device that was re-attached starts from a known state.
    func sendNeutral() throws(OutputFailure)
    /// The device primitive: both motors at `mix` from now until the next call, and at most
    /// `OutputTiming.holdSeconds + OutputTiming.expiryMarginSeconds` if no call comes (self-expiry).
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure)
    /// Restarts the self-expiry window of a steady non-zero mix.
    func keepAlive() throws(OutputFailure)
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int
    func trigger(prepared id: Int) throws(OutputFailure)
    /// Stops a triggered pulse that may still be playing: the kernel rounds an effect's replay up to whole
    /// ticks, so a pulse can outlive its length by up to one tick and add to the level that follows it.
    func stop(prepared id: Int) throws(OutputFailure)
    func release(prepared id: Int)
    /// Releases the device and every slot. Idempotent.
    func close()
    /// What the motors do now, for outputs that can tell (the virtual output); nil for devices.
    func currentLevels() -> MotorMagnitudes?
}

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
    /// How long after its length a triggered pulse may still play on a device: the kernel rounds the replay
    /// up to whole ticks (10 ms at the slowest tick rate, 100 Hz) and stops it on a timer tick after that.
    static let pulseOverrunSeconds = 0.02
}

/// Device presence changes an output source reports.
package enum OutputPresence: Sendable {
    case removed
    case appeared
}

/// A running hot-plug watch; cancelling it releases its descriptors.
package protocol OutputWatch: Sendable {
    func cancel()
}

/// Opens the output an engine was created for and watches its device come and go.
package protocol OutputSource: Sendable {
    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput
    /// Starts watching; nil when the output cannot come and go (virtual) or watching is unavailable.
    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)?
}
