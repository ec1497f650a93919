// The mix slot's decisions, apart from the device calls they lead to (EvdevOutput makes those).
import HapticRendering

/// The one effect slot that carries the mix, as far as a change of level needs to know: whether an effect is
/// uploaded, the levels it holds, whether the kernel still plays it and whether the keeper (a silent endless
/// effect of ours, `EvdevOutput`) plays beside it. Pure, so its decisions are unit-tested.
struct MixSlotState: Sendable, Equatable {
    /// The levels of the uploaded effect; nil when nothing is uploaded, or when an update of it failed (the slot
    /// may then hold either level).
    var levels: MotorMagnitudes?
    /// Whether an effect was uploaded into the slot: one whose levels are unknown (`levels` nil after a failed
    /// update) is updated, not uploaded again nor played as it was.
    var uploaded = false
    /// Clock time until which the kernel plays the effect (0: not started, or stopped).
    var playingUntil = 0.0
    /// Whether the keeper was played on the device: then every ff-memless pass calls the driver.
    var keeperPlays = false

    /// The device calls that put the motors at a level.
    enum Change: Sendable, Equatable {
        /// Nothing to do: off asked, and nothing of ours plays.
        case none
        /// Off while the effect plays: one `EV_FF` stop. The effect keeps its levels for a later play.
        case stop
        /// The effect already holds the levels: one `EV_FF` play, no update.
        case play
        /// `EVIOCSFF` into the playing slot, alone: with the keeper playing, ff-memless gives the driver the new
        /// level on its next tick, restarts the replay window, and a stop before that tick still reaches the driver.
        case update
        /// `EVIOCSFF` into the existing slot, then a play.
        case updateThenPlay
        /// `EVIOCSFF` into a new slot, then a play.
        case uploadThenPlay
    }

    /// What staging `target` at clock time `now` takes (`MotorOutput.stage`): the slot made to hold it, stopped,
    /// so that a later change to `target` is one play. Only while nothing of ours plays (an update of a playing
    /// effect is heard), and never for off.
    func staging(_ target: MotorMagnitudes, at now: Double) -> Change {
        guard !target.isOff, playingUntil <= now, levels != target else { return .none }
        return levels == nil && !uploaded ? .uploadThenPlay : .updateThenPlay
    }

    /// What it takes to put the motors at `target` at clock time `now`. With `explicitly` (a device re-attached,
    /// whose state is unknown) off is played as a zero rumble rather than assumed. A new non-zero level for an
    /// effect that plays, with the keeper beside it, is an update alone, while the replay window has
    /// `OutputTiming.updateMarginSeconds` left: past it the kernel may have ended the effect, and an update of an
    /// ended effect plays nothing.
    func change(to target: MotorMagnitudes, explicitly: Bool, at now: Double) -> Change {
        if target.isOff && !explicitly { return levels != nil && playingUntil > now ? .stop : .none }
        guard let levels else { return uploaded ? .updateThenPlay : .uploadThenPlay }
        if levels == target { return .play }
        if !target.isOff, updatesAlone(at: now) { return .update }
        return .updateThenPlay
    }

    /// Whether a change between two non-zero levels at clock time `now` is an update alone: the keeper plays and
    /// the effect's replay window has more than `OutputTiming.updateMarginSeconds` left.
    func updatesAlone(at now: Double) -> Bool {
        keeperPlays && playingUntil - now > OutputTiming.updateMarginSeconds
    }
}
