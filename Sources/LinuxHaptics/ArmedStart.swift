// A prepared player's start made ready ahead, so that `start(atTime: 0)` is its pulse's one write with nothing
// before it that can wait: no lock (the playback thread's or the output's), no clock read, no lookup, no
// allocation. Two atomic words stand in for the checks a start makes under the state lock: the engine's
// `StartGate` (running, on this output, haptics on, no reset since) and the player's own `ArmedStart` (its
// prepared pulse still usable: a plain start from its top, no sound to wait for). `EngineState` keeps both true:
// it publishes the gate whenever the engine's phase, output, mute or reset changes, and arms or disarms a
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

    /// Fires the armed pulse when armed under `gate`; nil (nothing written) when not armed, armed under
    /// another gate, or another thread is firing it right now. Inlined into the start, as the evdev trigger is
    /// into it: under emulation every call into another page of code costs a cold start about 0.45 µs.
    @inline(__always)
    func fire(gate: UInt64) -> Outcome? {
        slot.withClaim { armed -> Outcome? in
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
