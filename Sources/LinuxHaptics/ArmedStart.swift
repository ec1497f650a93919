// A prepared player's start made ready ahead, so that `start(atTime: 0)` is its pulse's one write with nothing
// before it that can wait: no lock (the playback thread's or the output's), no clock read, no lookup, no
// allocation. Two atomic words stand in for the checks a start makes under the state lock: the engine's
// `StartGate` (running, on this output, haptics on, no reset since) and the player's own `ArmedStart` (its
// prepared pulse still usable: a plain start from its top, no sound to wait for). `EngineState` keeps both true:
// it publishes the gate whenever the engine's phase, output, mute or reset changes (to the engine's word and to a
// copy in every player's `ArmedStart`, which the armed start reads beside its slot), and arms or disarms a
// player's start whenever the player or its prepared pulse changes. A start that finds either closed takes the
// ordinary path, which decides under the lock as before.
@_spi(Internals) import LinuxSystem
import Synchronization

/// The engine-wide condition of an armed start, one word: 0 while the engine may not trigger a prepared pulse
/// (not running, no output, haptics muted); otherwise a token naming the output's opening and the reset
/// generation, so that a start armed for an earlier one never fires.
final class StartGate: Sendable {
    private let word = Atomic<UInt64>(0)

    var token: UInt64 { word.load(ordering: .acquiring) }

    func publish(_ token: UInt64) { word.store(token, ordering: .releasing) }

    /// The token for a running engine on output opening `output` after reset `reset`.
    static func token(output: OutputGeneration, reset: ResetGeneration) -> UInt64 {
        1 << 63 | UInt64(truncatingIfNeeded: output.value & 0x7FFF_FFFF) << 32
            | UInt64(truncatingIfNeeded: reset.value & 0xFFFF_FFFF)
    }
}

/// One player's armed start: its prepared pulse's trigger and the gate token it was armed under, in a slot the
/// firing thread claims without a lock (a second thread firing at the same moment takes the ordinary path).
final class ArmedStart: Sendable {
    struct Armed: Sendable {
        /// The pulse, with its trigger.
        let effect: PreparedEffect
        let gate: UInt64
        /// The trigger again when it is an evdev pulse's (every device's but the virtual output's and the test
        /// outputs'), called directly and inlined into the start: no witness table, no retain of the trigger.
        /// Unmanaged, since `effect` holds it for as long as this value lives.
        let evdev: Unmanaged<EvdevPulseTrigger>?

        init(effect: PreparedEffect, gate: UInt64) {
            self.effect = effect
            self.gate = gate
            evdev = (effect.trigger as? EvdevPulseTrigger).map { Unmanaged.passUnretained($0) }
        }
    }

    enum Outcome {
        /// The pulse went out.
        case fired(PreparedEffect)
        /// The write failed: the start must go the ordinary way.
        case failed(PreparedEffect, OutputFailure)
    }

    private let slot = ClaimSlots<Armed>(count: 1)
    /// The engine's `StartGate` token as last published, held here too (`EngineState` publishes to both, under its
    /// lock): the fire reads it beside the slot, in this object, not in the engine's gate object.
    private let gate = Atomic<UInt64>(0)

    /// The gate's token now (for the publishing thread, under the engine's state lock).
    func publish(_ token: UInt64) { gate.store(token, ordering: .releasing) }

    /// Fires the armed pulse when armed under the gate's token now; nil (nothing written) when not armed, armed
    /// under another token, the gate is closed, or another thread is firing it right now. Inlined into the start,
    /// as the evdev trigger is into it: under emulation every call into another page of code costs a cold start
    /// about 0.45 µs.
    @inline(__always)
    func fire() -> Outcome? {
        let gate = gate.load(ordering: .acquiring)
        return slot.withClaim { armed -> Outcome? in
            // Fields read in place, not the whole value copied: nothing before the write but the trigger's call.
            guard gate != 0, armed?.gate == gate else { return nil }
            do throws(OutputFailure) {
                if let evdev = armed.unsafelyUnwrapped.evdev {
                    let failure = evdev._withUnsafeGuaranteedRef { trigger -> OutputFailure? in
                        do throws(OutputFailure) { try trigger.fire() } catch { return error }
                        return nil
                    }
                    if let failure { throw failure }
                } else {
                    try armed.unsafelyUnwrapped.effect.trigger.fire()
                }
            } catch {
                return .failed(armed.unsafelyUnwrapped.effect, error)
            }
            return .fired(armed.unsafelyUnwrapped.effect)
        } ?? nil
    }

    /// What is armed (for the arming thread, under the engine's state lock).
    var current: Armed? { slot.withClaimWaiting { $0 } }

    /// Arms `wanted`, or disarms with nil. Only ever called under the engine's state lock; a fire in flight is
    /// one write, waited out. Dropping the trigger it held does no I/O: the output still holds its pulse until it
    /// releases or closes it.
    func arm(_ wanted: Armed?) { slot.withClaimWaiting { $0 = wanted } }
}

/// The staged opening's start made ready ahead (`EngineState.stagedOpening`): on a quiet device, a start now of the
/// player whose opening the mix slot holds is that slot's one write, with no lock taken and no state read before it
/// but the pass lock's try, which keeps every other write of the mix away until the start is recorded. The engine
/// arms it under its state lock whenever the staged opening is what a start now would write (the mix unchanged
/// since, no prepared pulse of the player's, the gate open), and disarms it whenever that stops being so
/// (`EngineState.refreshStagedStart`). A start that went out stays marked until its thread has recorded it, so
/// that nothing stages another level on the slot meanwhile.
final class StagedStart: Sendable {
    struct Armed: Sendable {
        /// The player, the gate and the time it is armed under; its fields are read in place before the write.
        let key: StagedStartKey
        let staged: StagedOpening
        /// The write: the mix slot's play on an evdev device, else the output's `apply` of the staged levels.
        let trigger: any PulseTrigger
        /// The trigger again when it is the evdev mix slot's, called directly (no witness, no retain), as an armed
        /// prepared start calls its pulse's. Unmanaged, since `trigger` holds it for as long as this value lives.
        let evdev: Unmanaged<EvdevStagedPlay>?

        init(key: StagedStartKey, staged: StagedOpening, trigger: any PulseTrigger) {
            self.key = key
            self.staged = staged
            self.trigger = trigger
            evdev = (trigger as? EvdevStagedPlay).map { Unmanaged.passUnretained($0) }
        }
    }

    private let slot = ClaimSlots<Armed>(count: 1)
    /// The armed player's id, or -1: a start of any other player pays this one load, not the pass lock's try.
    private let armedPlayer = Atomic<Int>(-1)
    /// Set when an armed start went out, cleared when its thread recorded it.
    private let firedUnrecorded = Atomic<Bool>(false)

    /// Whether a start of player `id` may find its staged opening armed.
    @inline(__always)
    func mayFire(for id: PlayerID) -> Bool { armedPlayer.load(ordering: .relaxed) == id.rawValue }

    /// Writes player `id`'s staged opening when it is armed under `gate` and its time has come (`now`, read only
    /// when the arm says so), and disarms it; nil (nothing written) when not armed for this player or gate, too
    /// early, or another thread is firing it right now. A write that failed is reported as the pass reports one,
    /// the start recorded all the same. The caller holds the pass lock.
    @inline(__always)
    func fire(of id: PlayerID, gate: UInt64, now: () -> Double) -> Outcome? {
        slot.withClaim { armed -> Outcome? in
            // Fields read in place: nothing before the write but the trigger's call.
            guard gate != 0, armed?.key.gate == gate, armed.unsafelyUnwrapped.key.player == id else { return nil }
            let notBefore = armed.unsafelyUnwrapped.key.notBefore
            if notBefore > -.infinity, !(now() >= notBefore) { return nil }
            var failure: OutputFailure?
            if let evdev = armed.unsafelyUnwrapped.evdev {
                failure = evdev._withUnsafeGuaranteedRef { play -> OutputFailure? in
                    do throws(OutputFailure) { try play.fire() } catch { return error }
                    return nil
                }
            } else {
                do throws(OutputFailure) { try armed.unsafelyUnwrapped.trigger.fire() } catch { failure = error }
            }
            let staged = armed.unsafelyUnwrapped.staged
            armed = nil
            armedPlayer.store(-1, ordering: .relaxed)
            firedUnrecorded.store(true, ordering: .relaxed)
            return Outcome(staged: staged, failure: failure)
        } ?? nil
    }

    /// A staged start fired: its opening, and the write's failure if it failed.
    struct Outcome {
        let staged: StagedOpening
        let failure: OutputFailure?
    }

    /// Arms `wanted`, or disarms with nil (under the engine's state lock; a fire in flight is one write, waited
    /// out); true when an armed start went out and its thread has not recorded it yet, and then nothing is armed.
    @discardableResult
    func arm(_ wanted: Armed?) -> Bool {
        slot.withClaimWaiting { armed -> Bool in
            if firedUnrecorded.load(ordering: .relaxed) { return true }
            armed = wanted
            armedPlayer.store(wanted?.key.player.rawValue ?? -1, ordering: .relaxed)
            return false
        }
    }

    /// The start that went out is recorded (under the engine's state lock): the staged opening may be armed again.
    func recorded() { firedUnrecorded.store(false, ordering: .relaxed) }
}

/// What a staged start is armed with (`EngineState.refreshStagedStart`): the same again needs no new arm.
struct StagedStartKey: Sendable, Equatable {
    var player: PlayerID
    var revision: MixRevision
    var gate: UInt64
    /// The engine time from which the start may go out (the device's rate limit over, every prepared pulse's
    /// length over); -infinity when it may at any time, so that the start reads no clock before its write.
    var notBefore: Double
    var trigger: ObjectIdentifier
}
