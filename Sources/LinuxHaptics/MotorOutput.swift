// "The device" as the engine sees it: one primitive that sets both motors for a while (gilrs' set_ff_state),
// and prepared pulses that start with a single write; OutputSource.swift (re)opens it and says when its device
// leaves or comes back. Implementations: evdev (EvdevOutput.swift), the built-in virtual output
// (VirtualOutput.swift) and, in LinuxHapticsTesting, a recording output; hence `package` access.
package import HapticRendering

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
    /// How often the engine renews a steady non-zero mix (`renewal.holdSeconds`), and how long the device plays
    /// on without a renewal.
    var renewal: OutputTiming.Renewal { get }
    /// How long before its time a change from one non-zero mix to another is best written (`apply`): where such a
    /// change reaches the motors on the kernel's next tick rather than at once (on evdev beside the keeper, an
    /// update alone), written half a tick early it lands on its time on average. 0 where a change lands at once.
    var changeLead: Double { get }
    /// When the device's own frames go out for calls made from `time` on (engine time), where its driver paces
    /// them and the output can tell (`RenderProfile.followsDeviceFrames`): the engine then plans on them. Asked as
    /// each plan is made.
    func frameGrid(callingFrom time: Double) -> FrameGrid?
    /// The device primitive: both motors at `mix` from now until the next call, and at most
    /// `renewal.windowSeconds` if no call comes (self-expiry).
    func apply(_ mix: MotorMagnitudes) throws(OutputFailure)
    /// Restarts the self-expiry window of a steady non-zero mix.
    func keepAlive() throws(OutputFailure)
    /// Gets ready for an `apply(mix)` that may come next, while the motors rest: a device's mix slot takes the
    /// levels now, stopped and silent, so that the apply is a single play. Does nothing while anything of ours
    /// plays, and nothing on outputs that apply in one step anyway.
    func stage(_ mix: MotorMagnitudes)
    /// What writes `apply(mix)` just after `stage(mix)`, bound ahead for a start that fires it with nothing
    /// before it (the engine's armed staged start): on evdev the mix slot's one play, with the slot's state noted
    /// after the write; elsewhere `apply(mix)` itself. Fired while anything else has changed the slot since, it
    /// writes that `apply` would not (the engine disarms it first).
    func stagedTrigger(for mix: MotorMagnitudes) -> any PulseTrigger
    /// Readies, at rest and changing nothing the motors do, what every change will need (on evdev the keeper
    /// effect), so that the first change after the output opens costs only its own writes. The engine calls it
    /// once, when it opens the output at its start.
    func prepareForChanges()
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int
    func trigger(prepared id: Int) throws(OutputFailure)
    /// The trigger of prepared pulse `id`, bound ahead (nil when `id` is not prepared): what the engine's armed
    /// start fires with nothing before it. Fired after `release(prepared:)` or `close()` it fails and writes
    /// nothing (never to a slot or descriptor given to something else since).
    func pulseTrigger(prepared id: Int) -> (any PulseTrigger)?
    /// Stops a triggered pulse that may still be playing: the kernel rounds an effect's replay up to whole
    /// ticks, so a pulse can outlive its length by up to one tick and add to the level that follows it.
    func stop(prepared id: Int) throws(OutputFailure)
    func release(prepared id: Int)
    /// Releases the device and every slot. Idempotent.
    func close()
    /// What the motors do now, for outputs that can tell (the virtual output); nil for devices.
    func currentLevels() -> MotorMagnitudes?
}

/// One prepared pulse's trigger, bound to its slot ahead: firing it is the output's write alone, with none of the
/// output's locks, so that nothing a playback thread holds can delay it.
package protocol PulseTrigger: AnyObject, Sendable {
    func fire() throws(OutputFailure)
}

extension MotorOutput {
    /// Outputs know nothing of their device's frames unless they say otherwise.
    package func frameGrid(callingFrom time: Double) -> FrameGrid? { nil }

    /// The standard rhythm, unless an output says otherwise.
    package var renewal: OutputTiming.Renewal { .standard }

    /// Outputs whose changes land at once write them on time.
    package var changeLead: Double { 0 }

    /// Outputs that apply in one step have nothing to stage.
    package func stage(_ mix: MotorMagnitudes) {}

    /// Outputs without a cheaper way bind `apply(mix)`.
    package func stagedTrigger(for mix: MotorMagnitudes) -> any PulseTrigger { BoundApply(output: self, mix: mix) }

    /// Outputs whose changes need nothing beside them have nothing to ready.
    package func prepareForChanges() {}

    /// Outputs without a cheaper way bind `trigger(prepared:)` (the virtual output, test outputs).
    package func pulseTrigger(prepared id: Int) -> (any PulseTrigger)? { BoundPulseTrigger(output: self, id: id) }
}

/// `MotorOutput.trigger(prepared:)` of one id.
private final class BoundPulseTrigger: PulseTrigger {
    let output: any MotorOutput
    let id: Int

    init(output: any MotorOutput, id: Int) {
        self.output = output
        self.id = id
    }

    func fire() throws(OutputFailure) { try output.trigger(prepared: id) }
}

/// `MotorOutput.apply` of one mix.
final class BoundApply: PulseTrigger {
    let output: any MotorOutput
    let mix: MotorMagnitudes

    init(output: any MotorOutput, mix: MotorMagnitudes) {
        self.output = output
        self.mix = mix
    }

    func fire() throws(OutputFailure) { try output.apply(mix) }
}

/// An output that plays no prepared pulses: its actuators are driven by a stream or by reports of their own (voice
/// coils, HD rumble, trigger motors), so every start goes through the mix, and it has no model of its levels.
protocol OutputWithoutPulses: MotorOutput {
    /// What the actuators are, for the refusal of a pulse ("voice coils").
    var actuatorsName: String { get }
}

extension OutputWithoutPulses {
    func prepare(_ pulse: PreparedPulse) throws(OutputFailure) -> Int {
        throw OutputFailure(.unsupported, "\(actuatorsName) play patterns, not prepared pulses")
    }

    func trigger(prepared id: Int) throws(OutputFailure) {
        throw OutputFailure(.unsupported, "\(actuatorsName) have no prepared pulses")
    }

    func pulseTrigger(prepared id: Int) -> (any PulseTrigger)? { nil }
    func stop(prepared id: Int) throws(OutputFailure) {}
    func release(prepared id: Int) {}
    func currentLevels() -> MotorMagnitudes? { nil }
}
